"""The front door: README size, links that resolve, and doctested examples in docs/api.md."""

import doctest
import os
import re

import pytest
from conftest import ROOT

DOCS = [os.path.join(ROOT, "README.md")] + sorted(
    os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md")
)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_readme_is_at_most_12_kb():
    assert os.path.getsize(os.path.join(ROOT, "README.md")) <= 12 * 1024


@pytest.mark.parametrize("path", DOCS, ids=lambda p: os.path.relpath(p, ROOT))
def test_every_link_resolves_inside_the_repository(path):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    for target in LINK.findall(text):
        assert not re.match(r"^[a-z]+://", target), f"{path}: external link {target}"
        file_part = target.split("#", 1)[0]
        if not file_part:
            continue
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
        assert resolved.startswith(ROOT + os.sep), f"{path}: {target} leaves the repository"
        assert os.path.exists(resolved), f"{path}: {target} does not exist"


def test_readme_test_command_is_what_ci_runs():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as fh:
        ci = fh.read()
    assert "python -m pytest\n" in readme and "\npython -m pytest\n" in ci
    assert "rageval-min demo" in readme and "rageval-min demo" in ci


def test_api_doc_examples_run():
    path = os.path.join(ROOT, "docs", "api.md")
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        result = doctest.testfile(path, module_relative=False, optionflags=doctest.ELLIPSIS)
    finally:
        os.chdir(cwd)
    assert result.attempted > 0 and result.failed == 0
