"""The layout (issue #22): one folder per family, one registry, a family-blind report layer.

* each family's public face keeps every name it had before the move (``tests/data/layout/``);
* no import cycle between the package's modules;
* no shared module but the registry names a family;
* ``docs/adding-a-family.md`` followed literally on a throwaway family gives a family that the
  CLI lists, ``demo`` runs, ``merge`` merges and ``--format html`` draws.
"""

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from typing import Dict, List, Set

import pytest
from conftest import ROOT

from rageval_min import registry

PKG = os.path.join(ROOT, "rageval_min")


def _modules() -> Dict[str, str]:
    """module name -> path, for every module of the package."""
    out = {}
    for folder, _, files in os.walk(PKG):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, ROOT)[: -len(".py")].replace(os.sep, ".")
                out[rel[: -len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return out


def _imports(module: str, path: str, known: Set[str]) -> Set[str]:
    """The package's modules that ``module`` imports at module level (what makes a cycle at import)."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    base = module if path.endswith("__init__.py") else module.rsplit(".", 1)[0]
    found = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            parts = base.split(".")
            root = ".".join(parts[: len(parts) - (node.level - 1)]) if node.level else ""
            target = (root + "." + node.module if root and node.module else node.module or root) or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if full in known else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m in known and m != module}


def test_every_family_keeps_its_public_names():
    with open(os.path.join(ROOT, "tests", "data", "layout", "public_names.json"), encoding="utf-8") as fh:
        before = json.load(fh)
    import importlib

    for name, names in before.items():
        face = importlib.import_module(f"rageval_min.{name}")
        missing = [n for n in names if not hasattr(face, n)]
        assert not missing, f"rageval_min.{name} lost {missing}"
        assert set(names) <= set(face.__all__), name


def test_no_import_cycle():
    mods = _modules()
    graph = {m: _imports(m, p, set(mods)) for m, p in mods.items()}
    # a module importing its own package's face is the package importing itself: not an edge
    graph = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph.items()}
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                pytest.fail("import cycle: " + " -> ".join(stack[stack.index(t) :] + [t]))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


#: string constants in shared modules that are not family names: (module, text, why)
_NOT_A_FAMILY = {
    ("_demo.py", "compare"): "the 'compare' key of a gold-sample case (how outputs are compared)",
    ("_extras.py", "rouge"): "the pip extra named after the rouge-score package",
}


def test_no_shared_module_but_the_registry_names_a_family():
    names = {c.name for c in registry.COMMANDS} | {c.package for c in registry.COMMANDS if c.package}
    names -= {"demo", "merge"}
    shared = [os.path.join(PKG, f) for f in os.listdir(PKG) if f.endswith(".py") and f != "registry.py"]
    shared += [os.path.join(PKG, "report", f) for f in os.listdir(os.path.join(PKG, "report")) if f.endswith(".py")]
    found = []
    for path in shared:
        tree = ast.parse(open(path, encoding="utf-8").read())
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
        }
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and n.value in names and id(n) not in docstrings:
                if (os.path.basename(path), n.value) not in _NOT_A_FAMILY:
                    found.append(f"{os.path.relpath(path, ROOT)}:{n.lineno}: {n.value!r}")
            if isinstance(n, ast.ImportFrom) and any(p in names for p in (n.module or "").split(".")):
                found.append(f"{os.path.relpath(path, ROOT)}:{n.lineno}: imports {n.module}")
            if isinstance(n, ast.ImportFrom) and not n.module and any(a.name in names for a in n.names):
                found.append(f"{os.path.relpath(path, ROOT)}:{n.lineno}: imports a family")
    assert not found, found


def _doc_blocks(lang: str) -> List[str]:
    with open(os.path.join(ROOT, "docs", "adding-a-family.md"), encoding="utf-8") as fh:
        text = fh.read()
    steps = text[: text.index("## The folder")]
    return [textwrap.dedent(b) for b in re.findall(rf"```{lang}\n(.*?)```", steps, flags=re.S)]


def _run(argv: List[str], cwd: str) -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ, PYTHONPATH=cwd)
    return subprocess.run(
        [sys.executable, "-m", "rageval_min", *argv], cwd=cwd, env=env, capture_output=True, text=True
    )


@pytest.mark.skipif(shutil.which("sed") is None or shutil.which("bash") is None, reason="needs bash and sed")
def test_a_family_added_as_the_doc_says_works_everywhere(tmp_path):
    """Follow docs/adding-a-family.md literally in a copy: copy grounding, one registry row, samples."""
    work = tmp_path / "repo"
    shutil.copytree(PKG, work / "rageval_min", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copytree(os.path.join(ROOT, "gold_samples"), work / "gold_samples")
    (shell,) = _doc_blocks("sh")
    subprocess.run(["bash", "-euo", "pipefail", "-c", shell], cwd=work, check=True)
    (row,) = _doc_blocks("python")
    reg = work / "rageval_min" / "registry.py"
    text = reg.read_text(encoding="utf-8")
    anchor = "COMMANDS: Tuple[Command, ...] = (\n"
    reg.write_text(text.replace(anchor, anchor + "    " + row.strip() + ",\n", 1), encoding="utf-8")
    # step 3, the gold samples: the grounding ones, renamed, stand in for the new family's own
    samples = work / "gold_samples" / "myfam"
    shutil.copytree(work / "gold_samples" / "grounding", samples)
    for path in samples.iterdir():
        path.write_text(path.read_text(encoding="utf-8").replace("grounding", "myfam"), encoding="utf-8")
    cwd = str(work)
    r = _run(["--help"], cwd)
    assert r.returncode == 0 and re.search(
        r"\n\s+myfam\s+one line for --help", r.out if hasattr(r, "out") else r.stdout
    )
    r = _run(["demo", "--samples", str(work / "gold_samples")], cwd)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"== myfam \(\d+ cases?\) ==\nok  ", r.stdout), r.stdout
    g, t = str(samples / "gold.jsonl"), str(samples / "trace.jsonl")
    r = _run(["myfam", "--gold", g, "--trace", t, "--emit-partial", str(tmp_path / "p1.json")], cwd)
    assert r.returncode in (0, 1), r.stderr
    state = json.loads((tmp_path / "p1.json").read_text(encoding="utf-8"))
    assert state["family"] == "myfam"
    r = _run(["merge", str(tmp_path / "p1.json"), "--format", "json"], cwd)
    one = _run(["myfam", "--gold", g, "--trace", t, "--format", "json"], cwd)
    assert r.returncode == one.returncode and r.stdout == one.stdout
    r = _run(["myfam", "--gold", g, "--trace", t, "--format", "html"], cwd)
    assert r.returncode in (0, 1) and 'data-family="myfam"' in r.stdout and "<svg" in r.stdout


def _functions():
    for module, path in sorted(_modules().items()):
        tree = ast.parse(open(path, encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield module, path, node


def test_no_module_over_1000_lines():
    big = {m: n for m, p in _modules().items() if (n := open(p, encoding="utf-8").read().count("\n")) > 1000}
    assert not big, big


def test_no_function_over_80_lines_unless_it_mirrors_upstream_line_by_line():
    long = []
    for module, _, f in _functions():
        n = (f.end_lineno or f.lineno) - f.lineno + 1
        if n > 80 and "line by line" not in (ast.get_docstring(f) or ""):
            long.append(f"{module}.{f.name} ({n} lines)")
    assert not long, long


def test_no_command_handler_over_60_lines():
    long = []
    for module, _, f in _functions():
        n = (f.end_lineno or f.lineno) - f.lineno + 1
        if module.endswith(".cli") and not f.name.startswith(("register", "_register", "_add_")) and n > 60:
            long.append(f"{module}.{f.name} ({n} lines)")
    assert not long, long
