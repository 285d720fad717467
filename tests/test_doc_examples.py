"""Every fenced block of README.md and docs/*.md: run, checked, or marked as not runnable with a reason.

Blocks are found with CommonMark's fence rules (a fence may be indented, as inside a list item) and
classified by their fence language, which every block must have:

* ``sh``, ``bash``, ``shell``, ``console`` -- commands.  Each command line (backslash continuations
  joined) is ``rageval-min ...`` or ``python -m rageval_min ...`` (run in-process with this
  checkout's package) or ``NAME=value`` (a shell variable for the later lines); in a ``console``
  block only the ``$ `` lines are commands and the lines under one are its expected output
  (stdout then stderr; a ``...`` line matches any lines).  A command's trailing comment may say
  ``exit N``: the documented exit code, 0 otherwise.
* ``python``, ``pycon`` -- a block starting with ``>>>`` is a doctest (ELLIPSIS), any other is
  executed.  The Python blocks of one page share one namespace, in page order, as in a doctest file.
* ``json`` parses; ``yaml`` parses and, for a workflow, every ``with:`` of a step that uses this
  action names an input of ``action.yml`` and its ``args`` start with a rageval-min command;
  ``toml`` parses; ``text`` (output listings, signatures) is prose.

A page's blocks run in document order in one temporary folder holding ``gold_samples`` and the
file names the docs use for the user's own files (:data:`FILES`, copied from the gold samples).

A block that cannot run there is preceded by ``<!-- not run: REASON -->``.  The reason must be
given; one that names a ``tests/...py`` file is checked to name a test that reads the page.  A
marked Python block must still compile, and every name it takes from ``rageval_min``
(``from rageval_min import rouge`` then ``rouge.score``) must exist; a marked command (a usage
synopsis) must name a real command and only options its ``--help`` lists.
"""

import ast
import contextlib
import doctest
import glob
import io
import json
import os
import re
import shlex
import shutil
import tempfile
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import pytest
from conftest import ROOT, need, run_cli

SHELL = ("sh", "bash", "shell", "console")
PYTHON = ("python", "pycon")
DATA = ("json", "yaml", "toml", "text")

#: The names the docs give the user's own files, and the gold sample each stands for.
FILES = {
    "gold.jsonl": "grounding/gold.jsonl",
    "trace.jsonl": "grounding/trace.jsonl",
    "main.jsonl": "grounding/trace.jsonl",
    "pr.jsonl": "grounding/trace.jsonl",
    "pairs.jsonl": "rouge/pairs.jsonl",
    "tasks.jsonl": "mtrag/tasks.jsonl",
}
#: Shards of a sample: name -> (sample, first line, end line).
SHARDS = {"part-1.jsonl": ("rouge/pairs.jsonl", 0, 3), "part-2.jsonl": ("rouge/pairs.jsonl", 3, None)}

MARKER = re.compile(r"^\s*<!--\s*not run:(.*?)-->\s*$")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


class Block(NamedTuple):
    doc: str  # relative to the repository
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    not_run: Optional[str]  # the reason, or None when the block must run

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}:{self.lang or 'no-language'}"


def docs() -> List[str]:
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def parse_blocks(path: str) -> List[Block]:
    """The fenced blocks of a Markdown file (CommonMark: a backtick fence's info has no backtick;
    the closing fence is the same character, at least as long, with nothing after it)."""
    rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or (m.group("fence")[0] == "`" and "`" in m.group("info")):
            i += 1
            continue
        fence, indent = m.group("fence"), len(m.group("indent"))
        close = re.compile(rf"^ *{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body = [ln[indent:] if ln[:indent].strip() == "" else ln.lstrip() for ln in lines[i + 1 : j]]
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = MARKER.match(lines[k]) if k >= 0 else None
        lang = m.group("info").strip().split(" ")[0]
        blocks.append(Block(rel, i + 1, lang, "\n".join(body) + "\n", marker.group(1).strip() if marker else None))
        i = j + 1
    return blocks


BLOCKS = [b for path in docs() for b in parse_blocks(path)]


# ---------------------------------------------------------------------------
# the shape of the docs


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_every_block_says_what_it_is(block):
    assert block.lang in SHELL + PYTHON + DATA, (
        f"{block.doc}:{block.line}: give the fence a language: one of {', '.join(SHELL + PYTHON + DATA)}"
    )
    if block.not_run is not None:
        assert block.lang in SHELL + PYTHON, f"{block.doc}:{block.line}: only commands and code are 'not run'"
        assert len(block.not_run.split()) >= 3, f"{block.doc}:{block.line}: a not-run block needs its reason"
        for test in re.findall(r"tests/\w+\.py", block.not_run):
            with open(os.path.join(ROOT, test), encoding="utf-8") as fh:
                assert os.path.basename(block.doc) in fh.read(), f"{block.doc}: {test} does not read this page"


@pytest.mark.parametrize("path", docs(), ids=lambda p: os.path.relpath(p, ROOT))
def test_every_not_run_marker_is_on_a_block(path):
    with open(path, encoding="utf-8") as fh:
        markers = sum(1 for line in fh if MARKER.match(line))
    assert markers == sum(1 for b in parse_blocks(path) if b.not_run is not None), f"{path}: a stray marker"


def test_the_docs_have_examples_that_run():
    """The collection itself: finding no block, or running none, would be a check that cannot fail."""
    runs = [b for b in BLOCKS if b.not_run is None and b.lang in SHELL + PYTHON]
    assert len(runs) >= 15 and {b.doc for b in runs} >= {"README.md", "docs/api.md", "docs/ir.md"}


def test_the_parser_follows_the_fence_rules():
    text = (
        "a\n```` ```json x``` ````\n- item\n\n   ```sh\n   rageval-min demo\n   ```\n"
        "<!-- not run: a b c -->\n~~~python\nx = 1\n~~~\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.md")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        got = [(b.line, b.lang, b.text, b.not_run) for b in parse_blocks(path)]
    assert got == [(5, "sh", "rageval-min demo\n", None), (9, "python", "x = 1\n", "a b c")]


# ---------------------------------------------------------------------------
# running a page


class Outcome(NamedTuple):
    ok: bool
    detail: str


def _workdir(tmp: str) -> None:
    g = os.path.join(ROOT, "gold_samples")
    os.symlink(g, os.path.join(tmp, "gold_samples"), target_is_directory=True)
    for name, sample in FILES.items():
        shutil.copy(os.path.join(g, sample), os.path.join(tmp, name))
    for name, (sample, start, end) in SHARDS.items():
        with open(os.path.join(g, sample), encoding="utf-8") as fh:
            lines = fh.readlines()[start:end]
        with open(os.path.join(tmp, name), "w", encoding="utf-8") as fh:
            fh.writelines(lines)


def _logical_lines(text: str) -> List[str]:
    return text.replace("\\\n", " ").splitlines()


def _console_commands(text: str) -> List[Tuple[str, List[str]]]:
    """``console``: each ``$ `` command (continuations joined) with the output lines under it."""
    out: List[Tuple[str, List[str]]] = []
    for line in _logical_lines(text):
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def _expand(line: str, env: Dict[str, str]) -> str:
    return re.sub(r"\$\{?(\w+)\}?", lambda m: env.get(m.group(1), m.group(0)), line)


def _matches(want: List[str], got: List[str]) -> bool:
    """Doctest-like: a ``...`` line matches any number of lines."""
    pattern = "\n".join(".*?" if w.strip() == "..." else re.escape(w) for w in want)
    return re.fullmatch(pattern, "\n".join(got), re.S) is not None


def _run_command(line: str, want_out: Optional[List[str]], env: Dict[str, str]) -> Optional[str]:
    """Run one command line; None when it did what the doc says, else why not."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    assign = re.fullmatch(r"(\w+)=(\S+)", line)
    if assign:
        env[assign.group(1)] = _expand(assign.group(2), env)
        return None
    head, _, comment = line.partition(" #")
    words = shlex.split(_expand(head, env))
    code = re.search(r"\bexit (\d+)\b", comment)
    want = int(code.group(1)) if code else 0
    if words[:1] == ["rageval-min"]:
        argv = words[1:]
    elif words[:3] == ["python", "-m", "rageval_min"]:
        argv = words[3:]
    else:
        return f"not a rageval-min command (mark the block not run, with the reason): {line}"
    r = run_cli(argv)
    if r.code != want:
        return f"{line}\nexit {r.code}, the doc says {want}\n{r.err[-2000:]}"
    if want_out is not None and not _matches(want_out, (r.out + r.err).splitlines()):
        return f"{line}\nthe output differs from the doc's:\n{r.out}{r.err}"
    return None


def _run_shell(block: Block, env: Dict[str, str]) -> Optional[str]:
    if block.lang == "console":
        commands = _console_commands(block.text)
        if not commands:
            return "a console block without a $ command"
        for line, want in commands:
            why = _run_command(line, want, env)
            if why:
                return why
        return None
    for line in _logical_lines(block.text):
        why = _run_command(line, None, env)
        if why:
            return why
    return None


def _run_python(block: Block, globs: Dict[str, Any]) -> Optional[str]:
    if block.text.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(block.text, globs, block.id, block.doc, block.line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        report = io.StringIO()
        runner.run(test, out=report.write, clear_globs=False)
        globs.update(test.globs)  # a DocTest runs in a copy of the namespace it is given
        if not runner.tries:
            return "a >>> block without an example"
        return report.getvalue() or "failed" if runner.failures else None
    exec(compile("\n" * block.line + block.text, block.doc, "exec"), globs)
    return None


def _run_page(doc: str) -> Dict[int, Outcome]:
    blocks = [b for b in BLOCKS if b.doc == doc and b.not_run is None and b.lang in SHELL + PYTHON]
    results: Dict[int, Outcome] = {}
    env: Dict[str, str] = {}
    globs: Dict[str, Any] = {"__name__": "__doc_example__"}
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        _workdir(tmp)
        os.chdir(tmp)
        try:
            for b in blocks:
                try:
                    why = _run_shell(b, env) if b.lang in SHELL else _run_python(b, globs)
                except Exception as exc:  # a failing example is reported on its own block
                    why = f"{type(exc).__name__}: {exc}"
                results[b.line] = Outcome(why is None, why or "")
        finally:
            os.chdir(cwd)
    return results


_PAGES: Dict[str, Dict[int, Outcome]] = {}

RUN = [b for b in BLOCKS if b.not_run is None and b.lang in SHELL + PYTHON]


@pytest.mark.parametrize("block", RUN, ids=lambda b: b.id)
def test_example_runs_as_documented(block):
    if block.doc not in _PAGES:
        with contextlib.redirect_stdout(io.StringIO()):
            _PAGES[block.doc] = _run_page(block.doc)
    outcome = _PAGES[block.doc][block.line]
    assert outcome.ok, f"{block.doc}:{block.line}: {outcome.detail}"


# ---------------------------------------------------------------------------
# blocks that are not run, and data


def _rageval_names(tree: ast.AST) -> Dict[str, Any]:
    import importlib

    names: Dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "rageval_min":
            module = importlib.import_module(node.module or "")
            for a in node.names:
                assert hasattr(module, a.name) or importlib.util.find_spec(f"{node.module}.{a.name}"), a.name
                names[a.asname or a.name] = getattr(module, a.name, None) or importlib.import_module(
                    f"{node.module}.{a.name}"
                )
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "rageval_min":
                    names[a.asname or a.name] = importlib.import_module(a.name)
    return names


NOT_RUN_PYTHON = [b for b in BLOCKS if b.not_run is not None and b.lang in PYTHON]


@pytest.mark.parametrize("block", NOT_RUN_PYTHON, ids=lambda b: b.id)
def test_a_listing_names_what_exists(block):
    """A Python block that is not run compiles, and every ``module.name`` it uses from rageval_min exists."""
    tree = ast.parse(block.text, f"{block.doc}:{block.line}")
    names = _rageval_names(tree)
    missing = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names:
            if not hasattr(names[node.value.id], node.attr):
                missing.append(f"{node.value.id}.{node.attr} (line {block.line + node.lineno})")
    assert not missing, f"{block.doc}: names that do not exist: {missing}"


DATA_BLOCKS = [b for b in BLOCKS if b.lang in ("json", "yaml", "toml")]


def _action_inputs() -> Dict[str, Any]:
    yaml = need("yaml", "dev")
    with open(os.path.join(ROOT, "action.yml"), encoding="utf-8") as fh:
        return yaml.safe_load(fh)["inputs"]


@pytest.mark.parametrize("block", DATA_BLOCKS, ids=lambda b: b.id)
def test_data_blocks_parse(block):
    if block.lang == "json":
        json.loads(block.text)
    elif block.lang == "toml":
        tomllib = need("tomllib", "dev", "Python 3.11 or later")
        tomllib.loads(block.text)
    else:
        yaml = need("yaml", "dev")
        doc = yaml.safe_load(block.text)
        _check_workflow(block, doc)


def _check_workflow(block: Block, doc: Any) -> None:
    from rageval_min.registry import COMMANDS

    if not isinstance(doc, dict) or "jobs" not in doc:
        return
    inputs = _action_inputs()
    commands = {c.name for c in COMMANDS}
    used = 0
    for job in doc["jobs"].values():
        for step in job.get("steps", []):
            uses = str(step.get("uses", ""))
            if not (uses == "./" or uses.startswith("OWNER/REPO@")):
                continue
            used += 1
            given = step.get("with", {})
            assert set(given) <= set(inputs), f"{block.doc}:{block.line}: unknown inputs {set(given) - set(inputs)}"
            assert "args" in given and shlex.split(given["args"])[0] in commands, given
    assert used, f"{block.doc}:{block.line}: a workflow that does not use the action"


def test_the_runner_checks_exit_codes_and_output(tmp_path, monkeypatch):
    """The runner itself fails a wrong exit code, a wrong output and a command that is not ours."""
    _workdir(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    ir = "rageval-min ir --run gold_samples/ir/run.txt --qrels gold_samples/ir/qrels.txt"

    def shell(lang: str, text: str) -> Optional[str]:
        return _run_shell(Block("t.md", 1, lang, text, None), {})

    assert shell("sh", f'{ir} --gate "AP>=0.9"  # exit 1 on the sample\n') is None
    assert "exit 1, the doc says 0" in (shell("sh", f'{ir} --gate "AP>=0.9"\n') or "")
    assert shell("sh", 'S=gold_samples/ir\nrageval-min ir --run $S/run.txt \\\n  --qrels "$S/qrels.txt"\n') is None
    assert "not a rageval-min command" in (shell("sh", "ls gold_samples\n") or "")
    one = run_cli(shlex.split(ir)[1:] + ["--format", "text"]).out.splitlines()
    assert len(one) > 3
    ok = f"$ {ir} --format text\n{one[0]}\n...\n{one[-1]}\n"
    assert shell("console", ok) is None
    assert "differs" in (shell("console", f"$ {ir} --format text\n{one[0]}x\n...\n") or "")


def _synopsis_commands(text: str) -> List[str]:
    """The ``rageval-min ...`` commands of a block, each with its indented continuation lines."""
    out: List[str] = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("rageval-min "):
            out.append(line)
        elif out and line[:1].isspace():
            out[-1] += " " + line.strip()
    return out


NOT_RUN_SHELL = [b for b in BLOCKS if b.not_run is not None and b.lang in SHELL and _synopsis_commands(b.text)]


@pytest.mark.parametrize("block", NOT_RUN_SHELL, ids=lambda b: b.id)
def test_a_synopsis_names_options_that_exist(block):
    """A command that is not run still names a real command and only options its ``--help`` lists."""
    wrong = []
    for command in _synopsis_commands(block.text):
        words = command.split()[1:]
        path = []
        for w in words:
            if not re.fullmatch(r"[a-z][a-z-]*", w) or len(path) == 2:
                break
            path.append(w)
        r = run_cli(path + ["--help"])
        assert r.code == 0, f"{block.doc}:{block.line}: rageval-min {' '.join(path)}: {r.err}"
        known = set(re.findall(r"--[a-z][a-z0-9-]*", r.out))
        for option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]\b(?!-)", command):
            if option not in known:
                wrong.append(f"rageval-min {' '.join(path)} {option}")
    assert not wrong, f"{block.doc}:{block.line}: options not in --help: {wrong}"
