"""Shared test helpers."""

import io
import os
import subprocess
import sys
from typing import List, NamedTuple, Optional

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


#: Extras whose tests must run (not skip): a comma-separated list set by .ci/run, e.g. "fast,tokens,bertscore";
#: "all" requires every one.  CI=true alone does not make anything required.
REQUIRED_EXTRAS = {x.strip() for x in os.environ.get("RAGEVAL_MIN_REQUIRE_EXTRAS", "").split(",") if x.strip()}


def need(module: str, extra: str, hint: str = ""):
    """Import ``module`` for a test, or skip it with a clear reason (fail instead when ``extra`` is required).

    ``extra`` names what provides the module: a pip extra of the project (``fast``, ``tokens``, ``rouge``,
    ``openai``, ``bertscore``, ``dask``), ``dev`` for the developer tools, or ``browser`` for Chromium.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        why = f"{module} is not installed ({hint or 'pip install ' + repr('rageval-min[' + extra + ']')})"
        if extra in REQUIRED_EXTRAS or "all" in REQUIRED_EXTRAS:
            pytest.fail(f"required by RAGEVAL_MIN_REQUIRE_EXTRAS: {why}")
        pytest.skip(why)


def need_program(name: str, extra: str, hint: str) -> str:
    """The path of program ``name``, or skip (fail when ``extra`` is required), like :func:`need`."""
    import shutil

    path = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if path is None:
        why = f"{name} is not on PATH ({hint})"
        if extra in REQUIRED_EXTRAS or "all" in REQUIRED_EXTRAS:
            pytest.fail(f"required by RAGEVAL_MIN_REQUIRE_EXTRAS: {why}")
        pytest.skip(why)
    return path


def contract_cases() -> List[dict]:
    """Every scoring command's case, from tests/contract_cases/<family>.json (family, command, the
    accumulator's params, and the CLI argv on a gold sample, with ``gold_samples/`` paths relative)."""
    import json

    folder = os.path.join(ROOT, "tests", "contract_cases")
    cases: List[dict] = []
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), encoding="utf-8") as fh:
            cases.extend(json.load(fh))
    return cases


def absolute_argv(argv: List[str]) -> List[str]:
    """``argv`` with every ``gold_samples/`` path (also inside ``replay:...``) made absolute."""
    g = "gold_samples/"
    return [a.replace(g, os.path.join(ROOT, g)) if g in a else a for a in argv]


#: The key order of an ``rgb score`` result on a fact-checking dataset (``en_fact``, ``zh_fact``).
RGB_FACT_KEYS = ["all_rate", "noise_rate", "tt", "nums", "fact_check_rate", "correct_rate", "fact_tt", "correct_tt"]


def consecutive_parts(items: list, n: int) -> list:
    """``items`` cut into ``n`` consecutive parts, the first ``len(items) % n`` one item longer
    (some empty when there are fewer items than parts)."""
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(items[start:end])
        start = end
    return out


def shards(items: list, n: int) -> list:
    """The non-empty :func:`consecutive_parts` of ``items``: what at most ``n`` shard runs read."""
    return [part for part in consecutive_parts(items, n) if part]


def nonblank_lines(path: str) -> List[str]:
    """The lines of a JSON Lines file that are not blank, each with its line break."""
    with open(path, encoding="utf-8") as fh:
        return [line for line in fh if line.strip()]


def merge_of_shards(tmp_path, argv: List[str], lines: List[str], n: int, codes=(0,)) -> str:
    """Run ``argv`` (``{input}`` standing for the shard's file, ``tmp_path/shard{n}-{k}.jsonl``) with
    ``--emit-partial`` on each of the :func:`shards` of ``lines`` in ``n``, ``merge`` the states into
    JSON and return its text.  Every run must exit with one of ``codes``."""
    states = []
    for k, shard in enumerate(shards(lines, n)):
        path = tmp_path / f"shard{n}-{k}.jsonl"
        path.write_text("".join(shard), encoding="utf-8")
        state = tmp_path / f"state{n}-{k}.json"
        shard_argv = [str(path) if a == "{input}" else a for a in argv]
        r = run_cli(shard_argv + ["--emit-partial", str(state), "--output", str(tmp_path / "x.json")])
        assert r.code in codes, r.err
        states.append(str(state))
    merged = tmp_path / f"merged{n}.json"
    r = run_cli(["merge"] + states + ["--output", f"json:{merged}"])
    assert r.code in codes, r.err
    return merged.read_text(encoding="utf-8")


class Run(NamedTuple):
    code: int
    out: str
    err: str


def run_cli(argv: List[str]) -> Run:
    """Run the CLI in-process with captured writers."""
    from rageval_min.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdout=out, stderr=err)
    return Run(code, out.getvalue(), err.getvalue())


def run_subprocess(argv: List[str], cwd: Optional[str] = None, env: Optional[dict] = None) -> Run:
    """Run ``python -m rageval_min`` as a real process (real exit codes)."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = ROOT + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.pop("RAGEVAL_MIN_TRACEBACK", None)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "rageval_min"] + argv,
        cwd=cwd or ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def run_without_package(package: str, argv: List[str], tmp_path) -> Run:
    """Run the CLI as a subprocess in which importing ``package`` fails (shadowed by a stub)."""
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("raise ImportError('hidden for the test')\n")
    return run_subprocess(argv, env={"PYTHONPATH": str(tmp_path) + os.pathsep + ROOT})


@pytest.fixture
def server():
    """A loopback chat-completions server with the default scripted answers."""
    from judge_server import ChatServer

    with ChatServer() as s:
        yield s


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def cli_proc():
    return run_subprocess


@pytest.fixture
def engines(monkeypatch):
    """Every engine the CLI builds (``_parallel.make_engine`` spied on), so a test can see whether the
    work went through it (``engines[-1].name``, ``engines[-1].chunks_run``)."""
    from rageval_min import _parallel

    made = []
    real = _parallel.make_engine

    def spy(jobs):
        engine = real(jobs)
        made.append(engine)
        return engine

    monkeypatch.setattr(_parallel, "make_engine", spy)
    return made


def item_rows(text: str) -> List[dict]:
    """The item rows of a ``--per-item`` file's text: each line must end with the writer field
    (``_rageval_min``: family, command, parameter digest), which is checked and taken off."""
    import json

    rows = []
    for line in text.splitlines():
        row = json.loads(line)
        assert list(row)[-1] == "_rageval_min", row
        writer = row.pop("_rageval_min")
        assert isinstance(writer, str) and len(writer.split(" ")) == 3, writer
        rows.append(row)
    return rows
