"""The fuzz target (issue #23 item 7): no input or option makes any command exit 3.

Each base command line (every ``gold_samples/<command>/cases.json`` case, and the commands those do
not cover; see ``tests/fuzzgen.py``) is run unchanged and then with one hostile change to one input
file or one option, in process, through ``rageval_min.cli.main``.  Every run must keep the contract
of the README:

* the exit code is 0, 1 or 2 (3 is a bug; no traceback is printed);
* on exit 2, stderr is exactly one line, ``rageval-min: error: ...``, naming the changed input
  file when the change was in a file, and no output file is left behind;
* on exit 2, the message says where the change is: ``file:LINE`` of a changed line (and the field
  of a replaced JSON value), the option of a changed option, with the narrow, counted exemptions of
  tests/fuzzoracle.py; no stderr line holds a raw control character, echoes a number of more than
  100 digits or runs over 2,000 characters;
* every JSON report or record written (files and stdout) is strict JSON (no ``NaN``/``Infinity``;
  MT-RAG records keep the reference's own bytes, see docs/security.md), every JUnit report parses
  as XML.

CI runs a bounded, seeded number of cases (``RAGEVAL_MIN_FUZZ_CASES``, default 1200, spread over the
base command lines; about 40 s on two cores).  For a long local run::

    RAGEVAL_MIN_FUZZ_CASES=20000 python -m pytest -q tests/test_fuzz.py

``RAGEVAL_MIN_FUZZ_SEED`` (default 0) draws another set of cases; ``RAGEVAL_MIN_FUZZ_COUNTS=FILE``
appends how many exit-2 cases each location rule decided (one JSON line per run);
``RAGEVAL_MIN_FUZZ_DUMP=FILE`` appends every exit-2 case (change, location, message).  A failure prints the seed, the
change, the command line and a one-case reproducer::

    RAGEVAL_MIN_FUZZ_REPLAY=<base>:<seed> python -m pytest -q tests/test_fuzz.py -k replay
"""

import io
import json
import os
import xml.etree.ElementTree as ET
from typing import Dict, List, Optional

import pytest
from fuzzgen import Base, Case, bases, make_case, make_sources
from fuzzoracle import RULE_COUNTS, location_problems, message_problems, normalized

from rageval_min.cli import main

BASES = bases()
CASES = int(os.environ.get("RAGEVAL_MIN_FUZZ_CASES", "1200"))
SEED = int(os.environ.get("RAGEVAL_MIN_FUZZ_SEED", "0"))
PER_BASE = max(1, -(-CASES // len(BASES)))


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    yield make_sources(str(tmp_path_factory.mktemp("fuzz-sources")), main)
    counts = os.environ.get("RAGEVAL_MIN_FUZZ_COUNTS")
    if counts:  # the long-run report: how many exit-2 cases each location rule decided
        with open(counts, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"seed": SEED, "cases": CASES, "rules": dict(sorted(RULE_COUNTS.items()))}) + "\n")


def _refuse(name: str) -> None:
    raise ValueError(f"non-strict JSON constant {name}")


def _strict_problem(text: str, what: str) -> Optional[str]:
    """Why ``text`` (JSON or JSON Lines, if it is JSON at all) is not strict JSON, or None."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    docs = [stripped]
    try:
        json.loads(stripped)
    except ValueError:
        docs = [line for line in stripped.splitlines() if line.strip()]
    for doc in docs:
        try:
            json.loads(doc)
        except ValueError:
            return None if docs == [stripped] else f"{what}: a line that is not JSON: {doc[:80]!r}"
        try:
            json.loads(doc, parse_constant=_refuse)
        except ValueError as exc:
            return f"{what}: {exc}"
    return None


def _reference_bytes(case: Case, name: str) -> bool:
    """Whether output ``name`` reproduces a reference's own ``json.dump`` text, ``NaN`` and
    ``Infinity`` included (the exceptions docs/security.md lists): the MT-RAG records, and the
    report of ``factuality safe`` in its default format (run_eval's output file, byte for byte)."""
    if case.records_raw and name != "report.json":
        return True
    default_format = "--format" not in case.argv and not any(w.endswith(":" + name) for w in case.argv)
    return case.argv[:2] == ["factuality", "safe"] and name == "report.json" and default_format


def _output_problems(case: Case, stdout: str) -> List[str]:
    problems = []
    raw = case.records_raw
    if not raw:
        problems.append(_strict_problem(stdout, "stdout"))
    for name in sorted(os.listdir(case.outdir)):
        path = os.path.join(case.outdir, name)
        if name.endswith(".xml"):
            try:
                ET.parse(path)
            except ET.ParseError as exc:
                problems.append(f"{name}: not well-formed XML: {exc}")
        elif name.endswith((".json", ".jsonl")) and not _reference_bytes(case, name):
            with open(path, encoding="utf-8", errors="replace") as fh:
                problems.append(_strict_problem(fh.read(), name))
    return [p for p in problems if p]


def contract_problems(case: Case, code: int, stdout: str, stderr: str, base_error: Optional[str] = None) -> List[str]:
    """How one run broke the contract (empty when it kept it); ``base_error``: the normalized
    message of the unchanged command line when that is an input error."""
    problems = []
    if code not in (0, 1, 2):
        problems.append(f"exit {code}")
    if "Traceback" in stderr:
        problems.append("a traceback on stderr")
    if code == 2:
        lines = stderr.splitlines()
        if len(lines) != 1 or not lines[0].startswith("rageval-min: error: "):
            problems.append(f"{len(lines)} stderr lines on exit 2")
        if case.mutated and not any(os.path.basename(p) in stderr for p in case.inputs):
            problems.append("the exit-2 message names no input file")
        else:
            problems += location_problems(case, stderr, base_error)
        problems += message_problems(stderr)
        left = os.listdir(case.outdir)
        if left:
            problems.append(f"output left behind on exit 2: {left}")
    elif code in (0, 1):
        problems += _output_problems(case, stdout)
    return problems


def _dump_case(case: Case, stderr: str) -> None:
    path = os.environ.get("RAGEVAL_MIN_FUZZ_DUMP")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            where = case.where._asdict() if case.where else None
            if where:
                where["text"] = where["text"][:80]
            row = {"base": case.base, "change": case.change[:200], "where": where, "err": stderr[:600]}
            fh.write(json.dumps(row) + "\n")


class _Hang(BaseException):
    """A case ran longer than ``CASE_SECONDS`` (a BaseException: the CLI does not catch it)."""


CASE_SECONDS = 30


def _alarm(signum, frame):
    raise _Hang()


def run_case(case: Case):
    """Run ``case`` in process: (exit code, stdout, stderr); exit -1 when it hangs."""
    import signal

    out, err = io.StringIO(), io.StringIO()
    timer = hasattr(signal, "setitimer")
    if timer:
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    try:
        code = main(case.argv, stdout=out, stderr=err)
    except _Hang:
        code = -1
        err.write(f"(the case ran longer than {CASE_SECONDS} s and was stopped)\n")
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue()


def _report(index: int, seed: int, case: Case, code: int, stderr: str, problems: List[str]) -> str:
    words = " ".join(json.dumps(w) if not w or any(c in w for c in " \"'$<>|&;") else w for w in case.argv)
    return (
        f"fuzz case base {index} ({case.base}), seed {seed}: {'; '.join(problems)}\n"
        f"  change: {case.change}\n  exit {code}, stderr: {stderr.strip()[:400]!r}\n"
        f"  command line (files kept in the pytest tmp folder): python -m rageval_min {words}\n"
        f"  reproduce: RAGEVAL_MIN_FUZZ_REPLAY={index}:{seed} python -m pytest -q tests/test_fuzz.py -k replay"
    )


_BASE_ERRORS: Dict[int, Optional[str]] = {}


def _base_error(index: int, base: Base, sources, folder) -> Optional[str]:
    """The normalized exit-2 message of the unchanged command line (None when it is not exit 2)."""
    if index not in _BASE_ERRORS:
        _BASE_ERRORS[index] = None
        if 2 in base.exits:
            code, _, err = run_case(make_case(base, sources, str(folder), 0, change=False))
            _BASE_ERRORS[index] = normalized(err) if code == 2 else None
    return _BASE_ERRORS[index]


def _run_one(index: int, base: Base, seed: int, sources, folder) -> Optional[str]:
    """The failure report of one case (None when it kept the contract)."""
    base_error = _base_error(index, base, sources, folder.parent / f"base{index}")
    case = make_case(base, sources, str(folder), seed)
    code, out, err = run_case(case)
    problems = contract_problems(case, code, out, err, base_error)
    if code == 2:
        _dump_case(case, err)
    if not problems:
        return None
    return _report(index, seed, case, code, err, problems)


@pytest.mark.parametrize("index", range(len(BASES)), ids=[f"{i}-{b.argv[0]}" for i, b in enumerate(BASES)])
def test_base_command_line_keeps_the_contract(index, sources, tmp_path):
    """The unchanged command line exits as it should (0 or 1; 2 for the few bases that are input
    errors as they stand: an empty judge cache, rows of no family, a one-family samples folder) and
    keeps the contract."""
    case = make_case(BASES[index], sources, str(tmp_path), 0, change=False)
    code, out, err = run_case(case)
    assert code in BASES[index].exits and not contract_problems(case, code, out, err), (code, err)


@pytest.mark.parametrize("index", range(len(BASES)), ids=[f"{i}-{b.argv[0]}" for i, b in enumerate(BASES)])
def test_fuzz(index, sources, tmp_path):
    base = BASES[index]
    failures = []
    for k in range(PER_BASE):
        seed = SEED * 1_000_003 + index * 100_003 + k
        report = _run_one(index, base, seed, sources, tmp_path / f"case{k}")
        if report:
            failures.append(report)
    assert not failures, f"{len(failures)} of {PER_BASE} cases broke the contract:\n" + "\n".join(failures[:10])


def test_replay(sources, tmp_path):
    """One case, named by ``RAGEVAL_MIN_FUZZ_REPLAY=<base>:<seed>`` (printed by a failure)."""
    spec = os.environ.get("RAGEVAL_MIN_FUZZ_REPLAY")
    if not spec:
        pytest.skip("set RAGEVAL_MIN_FUZZ_REPLAY=<base>:<seed> to replay one fuzz case")
    index, seed = (int(x) for x in spec.split(":"))
    report = _run_one(index, BASES[index], seed, sources, tmp_path / "case")
    assert report is None, report


def test_the_location_oracle_can_fail(tmp_path):
    """The oracle refuses a message that does not point at the changed line or field, or that
    holds a raw control character or a huge number (so the fuzz cases above can fail)."""
    from fuzzgen import Where

    counts = RULE_COUNTS.copy()  # these made-up cases are not part of the long-run report
    path = tmp_path / "gold.jsonl"
    path.write_text('{"k": 1}\n{"k": 2}\n', encoding="utf-8")
    where = Where("value", line=2, keys=("k",), text="-1")
    case = Case("b", [], "c", str(path), [str(path)], str(tmp_path), False, where)
    assert location_problems(case, f"rageval-min: error: {path}:2: k: must not be negative\n") == []
    assert location_problems(case, f"rageval-min: error: {path}: k: must not be negative\n")
    assert location_problems(case, f"rageval-min: error: {path}:2: must not be negative\n")
    option = case._replace(where=Where("option", option="--k", text="-1"))
    assert location_problems(option, "rageval-min: error: --k: must be >= 1\n") == []
    assert location_problems(option, "rageval-min: error: must be >= 1\n")
    assert message_problems("rageval-min: error: a\x1bb\n") and message_problems("x " + "9" * 101 + "\n")
    assert message_problems("rageval-min: error: 99999999...9999 (5000 digits)\n") == []
    RULE_COUNTS.clear()
    RULE_COUNTS.update(counts)
