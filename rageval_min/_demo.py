"""``rageval-min demo``: the gold-sample cases of every family, as data.

Each family folder of the gold samples holds ``cases.json``: a list of cases,
each a command line and the file its output must reproduce::

    {"name": "wfgy output",
     "argv": ["grounding", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--format", "wfgy"],
     "output": "stdout",              # or the name of a file the argv writes under {tmp}
     "expected": "expected_wfgy.json",
     "compare": "exact",               # see COMPARISONS
     "select": "result.abilities",    # optional: a dotted path into the JSON output
     "rel_tol": 1e-12,                 # json_close only
     "exit": 1,                         # optional: the expected exit code (default 0)
     "show": true}                      # optional: demo prints the command's stdout

The command runs in-process with the family's sample folder as the working
directory, so relative paths name sample files; ``{tmp}`` in an argument is a
fresh temporary folder for outputs.  The test suite runs the same cases.
"""

import argparse
import io
import json
import math
import os
import tempfile
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence

from ._numbers import integer_fault, number_fault
from .errors import ScoringError

__all__ = ["COMPARISONS", "CaseResult", "load_cases", "register", "run", "run_case", "samples_root"]


class CaseResult(NamedTuple):
    family: str
    name: str
    ok: bool
    detail: str
    shown: str = ""


def samples_root(override: Optional[str] = None) -> str:
    """The gold-samples folder: ``override``, the installed copy, or a checkout's ``gold_samples/``."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = (
        [override]
        if override
        else [
            os.path.join(here, "_gold_samples"),
            os.path.join(os.path.dirname(here), "gold_samples"),
        ]
    )
    for base in candidates:
        if base and os.path.isdir(base):
            return base
    raise ScoringError(
        f"cannot find the gold samples (looked in {', '.join(c for c in candidates if c)}); pass demo --samples DIR"
    )


def load_cases(root: str, family: str) -> List[Dict[str, Any]]:
    """The cases of ``family`` (an empty list when it has no ``cases.json``)."""
    path = os.path.join(root, family, "cases.json")
    if not os.path.isfile(path):
        return []
    try:
        with open(path, encoding="utf-8") as fh:
            cases = json.load(fh)
    except json.JSONDecodeError as exc:  # name the line where the JSON breaks
        msg = f"cannot read the cases: {exc.msg} at column {exc.colno}"
        raise ScoringError(msg, path=path, line=exc.lineno) from None
    except (OSError, ValueError) as exc:
        raise ScoringError(f"cannot read the cases: {exc}", path=path) from None

    def well_formed(c: Dict[str, Any]) -> bool:
        argv = c.get("argv")
        return isinstance(argv, list) and all(isinstance(a, str) for a in argv) and isinstance(c.get("expected"), str)

    if not isinstance(cases, list) or not all(isinstance(c, dict) and well_formed(c) for c in cases):
        raise ScoringError("expected a list of cases, each with argv (a list of strings) and expected", path=path)
    for i, case in enumerate(cases):
        if "rel_tol" in case and number_fault(case["rel_tol"], 0.0) is not None:
            raise ScoringError("must be a finite number >= 0", path=path, field=f"[{i}].rel_tol")
        if "exit" in case and integer_fault(case["exit"], 0, 255) is not None:
            raise ScoringError("must be an exit code (an integer from 0 to 255)", path=path, field=f"[{i}].exit")
    return cases


def _select(value: Any, path: Optional[str]) -> Any:
    for part in (path or "").split(".") if path else ():
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def _close(got: Any, exp: Any, rel_tol: float) -> bool:
    if isinstance(exp, float) or isinstance(got, float):
        if not isinstance(got, (int, float)) or not isinstance(exp, (int, float)):
            return False
        return got == exp or math.isclose(got, exp, rel_tol=rel_tol, abs_tol=rel_tol)
    if isinstance(exp, dict):
        return isinstance(got, dict) and got.keys() == exp.keys() and all(_close(got[k], exp[k], rel_tol) for k in exp)
    if isinstance(exp, list):
        return isinstance(got, list) and len(got) == len(exp) and all(_close(g, e, rel_tol) for g, e in zip(got, exp))
    return bool(got == exp)


def _hex_subset(got: Any, exp: Any) -> bool:
    """Every leaf of ``exp`` equals ``got``'s; a string leaf that is a float in hex is compared as that float."""
    if isinstance(exp, dict):
        return isinstance(got, dict) and all(k in got and _hex_subset(got[k], v) for k, v in exp.items())
    if isinstance(exp, str) and isinstance(got, float):
        try:
            return got == float.fromhex(exp)
        except ValueError:
            return False
    return bool(got == exp)


def _jsonl(text: str) -> List[Any]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


#: compare kind -> (got text, expected text, case) -> ok
COMPARISONS: Dict[str, Callable[[str, str, Dict[str, Any]], bool]] = {
    "exact": lambda got, exp, case: got == exp,
    "json": lambda got, exp, case: _select(json.loads(got), case.get("select")) == json.loads(exp),
    "jsonl": lambda got, exp, case: _jsonl(got) == _jsonl(exp),
    "json_close": lambda got, exp, case: _close(
        _select(json.loads(got), case.get("select")), json.loads(exp), float(case.get("rel_tol", 1e-12))
    ),
    "jsonl_close": lambda got, exp, case: _close(_jsonl(got), _jsonl(exp), float(case.get("rel_tol", 1e-12))),
    "json_hex": lambda got, exp, case: _hex_subset(_select(json.loads(got), case.get("select")), json.loads(exp)),
}


def run_case(root: str, family: str, case: Dict[str, Any], main: Callable[..., int]) -> CaseResult:
    """Run one case with ``main`` (the CLI's) and compare its output with the expected file."""
    name = str(case.get("name") or " ".join(case["argv"]))
    folder = os.path.join(root, family)
    kind = case.get("compare", "exact")
    if kind not in COMPARISONS:
        return CaseResult(family, name, False, f"unknown comparison {kind!r}")
    with tempfile.TemporaryDirectory(prefix="rageval-demo-") as tmp:
        argv = [str(a).replace("{tmp}", tmp) for a in case["argv"]]
        out, err = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        try:
            os.chdir(folder)
            code = main(argv, stdout=out, stderr=err)
        finally:
            os.chdir(cwd)
        want = int(case.get("exit", 0))
        if code != want:
            return CaseResult(family, name, False, f"exit {code}, expected {want}: {err.getvalue().strip()}")
        target = case.get("output", "stdout")
        if target == "stdout":
            got = out.getvalue()
        else:
            with open(os.path.join(tmp, target), encoding="utf-8", newline="") as fh:
                got = fh.read()
    with open(os.path.join(folder, case["expected"]), encoding="utf-8", newline="") as fh:
        expected = fh.read()
    try:
        ok = COMPARISONS[kind](got, expected, case)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return CaseResult(family, name, False, f"cannot compare: {exc}")
    detail = f"matches {case['expected']} ({kind})" if ok else f"differs from {case['expected']} ({kind})"
    return CaseResult(family, name, ok, detail, out.getvalue() if case.get("show") else "")


def run_family(root: str, family: str, main: Callable[..., int]) -> Sequence[CaseResult]:
    """Every case of ``family``."""
    return [run_case(root, family, case, main) for case in load_cases(root, family)]


def register(sub: Any) -> None:
    """Add the ``demo`` command."""
    demo = sub.add_parser("demo", help="run every family on the bundled gold samples")
    demo.add_argument("--samples", metavar="DIR", help="the gold_samples folder (default: the checkout's)")
    demo.set_defaults(func=run)


def run(args: argparse.Namespace, io: Any) -> int:
    """Run every command's gold-sample cases (``gold_samples/<command>/cases.json``) and report."""
    from . import registry
    from ._version import __version__
    from .cli import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, main

    root = samples_root(args.samples)
    bad = EXIT_USAGE if args.samples else EXIT_INTERNAL  # the bundled samples incomplete: a bug in us
    failed: List[str] = []
    ran: Dict[str, int] = {}
    io.stdout.write(f"rageval-min {__version__} demo: every family on its gold samples ({root})\n")
    for row in registry.COMMANDS:
        cases = load_cases(root, row.name)
        if not cases:  # a command with no gold samples of its own (merge, demo)
            continue
        io.stdout.write(f"\n== {row.name} ({len(cases)} case{'s' if len(cases) != 1 else ''}) ==\n")
        for case in cases:
            res = run_case(root, row.name, case, main)
            io.stdout.write(f"{'ok  ' if res.ok else 'FAIL'}  {res.name}: {res.detail}\n")
            if res.shown:
                io.stdout.write(res.shown if res.shown.endswith("\n") else res.shown + "\n")
            if not res.ok:
                failed.append(f"{row.name}: {res.name}")
        ran[row.name] = len(cases)
    missing = [c.name for c in registry.COMMANDS if (c.family or c.package) and c.name not in ran]
    if missing:
        what = "no gold-sample case at all" if not ran else f"no gold-sample case for {', '.join(missing)}"
        io.stderr.write(f"rageval-min: error: demo: {what} in {root} (each family's cases are <family>/cases.json)\n")
        return bad
    if failed:
        io.stdout.write("\nFAILED: " + "; ".join(failed) + "\n")
        io.stderr.write(f"rageval-min: error: demo: {len(failed)} case(s) did not reproduce their expected output\n")
        return bad
    io.stdout.write(
        f"\nall families reproduce their expected outputs ({sum(ran.values())} cases in {len(ran)} commands)\n"
    )
    return EXIT_OK
