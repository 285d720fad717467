"""The core's own promises: stdlib only, no import-time side effects, Python 3.9, vendorable."""

import os
import shutil
import subprocess
import sys

from conftest import DATA, ROOT, need, need_program

CORE = os.path.join(ROOT, "rageval_min")


def _core_modules():
    return sorted(
        "rageval_min" + ("" if f == "__init__.py" else "." + f[:-3])
        for f in os.listdir(CORE)
        if f.endswith(".py") and f != "__main__.py"
    )


def test_importing_the_core_loads_only_stdlib_modules(tmp_path):
    code = (
        "import sys, os\n"
        "before = set(os.listdir('.'))\n"
        f"mods = {_core_modules()!r}\n"
        "import importlib\n"
        "for m in mods: importlib.import_module(m)\n"
        "from rageval_min.cli import build_parser; build_parser()\n"
        "std = set(sys.stdlib_module_names)\n"
        "bad = sorted(n for n in sys.modules\n"
        "             if n.split('.')[0] not in std and n.split('.')[0] not in ('rageval_min', '__main__'))\n"
        "print('BAD', bad)\n"
        "print('WROTE', sorted(set(os.listdir('.')) - before))\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], cwd=str(tmp_path), env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "BAD []" in out, out
    assert "WROTE []" in out, out


def test_vendored_core_folder_works_alone(tmp_path):
    shutil.copytree(CORE, tmp_path / "rageval_min", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(DATA, "wfgy", "sample_gold.jsonl"), tmp_path)
    shutil.copy(os.path.join(DATA, "wfgy", "sample_trace.jsonl"), tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [
            sys.executable,
            "-S",
            "-m",
            "rageval_min",
            "grounding",
            "--gold",
            "sample_gold.jsonl",
            "--trace",
            "sample_trace.jsonl",
            "--format",
            "wfgy",
        ],
        cwd=str(tmp_path),
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    with open(os.path.join(DATA, "wfgy", "sample_expected_output.json"), encoding="utf-8") as fh:
        assert proc.stdout == fh.read()


def test_core_runs_on_python_39_per_vermin():
    vermin = need_program("vermin", "dev", "pip install vermin, or the test extra")
    proc = subprocess.run(
        [vermin, "-t=3.9-", "--no-tips", "--violations", "--eval-annotations", "--backport", "typing", CORE],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_py_typed_marker_present():
    assert os.path.isfile(os.path.join(CORE, "py.typed"))


def test_core_is_fully_type_hinted():
    need("mypy", "dev", "pip install mypy, or the test extra")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--disallow-untyped-defs",
            "--disallow-incomplete-defs",
            "--no-incremental",
            "--cache-dir",
            os.devnull,
            CORE,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_code_is_formatted_and_lint_clean():
    ruff = need_program("ruff", "dev", "pip install ruff, or the test extra")
    for argv in ([ruff, "format", "--check", "."], [ruff, "check", "."]):
        proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
