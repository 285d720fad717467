"""Valid JSON that no reference handles well must never become an internal error (issue 14, item 6).

For every scoring command (the contract cases), the first record of its JSON Lines input is
rewritten to carry one hostile value: an integer of 5,000 digits, a number beyond the float range
(1e400, which Python reads as infinity), NaN, a lone UTF-16 surrogate, or nesting 100,000 deep.
Every run must end with exit 0, 1 or 2 (never 3), print no traceback, and, when it exits 2, leave
no output file behind.  Reports written are strict JSON.
"""

import json
import os

import pytest
from conftest import ROOT, contract_cases

from rageval_min.cli import main

G = "gold_samples/"
CASES = contract_cases()
INPUT_OPTIONS = ("--input", "--record", "--trace", "--gold")


def _numbers_to(value, text):
    """``value`` with every number written as ``text`` (JSON text)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return text
    if isinstance(value, list):
        return "[" + ", ".join(_numbers_to(v, text) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + _numbers_to(v, text) for k, v in value.items()) + "}"
    return json.dumps(value)


def _with_extra(record, key, raw):
    body = json.dumps(record)
    return body[:-1] + (", " if len(record) else "") + json.dumps(key) + ": " + raw + "}"


HOSTILE = {
    "huge-int": lambda rec: _numbers_to(rec, "9" * 5000) if _has_number(rec) else _with_extra(rec, "n", "9" * 5000),
    "float-overflow": lambda rec: _numbers_to(rec, "1e400"),
    "nan": lambda rec: _numbers_to(rec, "NaN"),
    "lone-surrogate": lambda rec: _with_extra(rec, "note", '"\\ud800"'),
    "string-surrogate": lambda rec: json.dumps(rec).replace('": "', '": "\\udfff', 1),
    "deep-nesting": lambda rec: _with_extra(rec, "deep", "[" * 100000 + "]" * 100000),
}


def _has_number(value):
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, list):
        return any(_has_number(v) for v in value)
    if isinstance(value, dict):
        return any(_has_number(v) for v in value.values())
    return False


def _jsonl_inputs(argv):
    for i, word in enumerate(argv[:-1]):
        if word in INPUT_OPTIONS and argv[i + 1].endswith((".jsonl", ".json")) and G in argv[i + 1]:
            path = os.path.join(ROOT, argv[i + 1])
            with open(path, encoding="utf-8") as fh:
                first = fh.readline()
            try:
                json.loads(first)
            except ValueError:
                continue  # a whole-file JSON document, not JSON Lines
            yield i + 1, path


PARAMS = [(c, kind) for c in CASES for kind in sorted(HOSTILE)]


@pytest.mark.parametrize("case,kind", PARAMS, ids=[f"{c['id']}-{k}" for c, k in PARAMS])
def test_hostile_value_is_never_an_internal_error(case, kind, tmp_path):
    argv = [a.replace(G, os.path.join(ROOT, G)) if G in a and not a.startswith(G) else a for a in case["argv"]]
    found = list(_jsonl_inputs(argv))
    if not found:
        pytest.skip("no JSON Lines input")
    i, path = found[0]
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines(keepends=True)
    first = json.loads(lines[0])
    hostile = tmp_path / os.path.basename(path)
    hostile.write_text(HOSTILE[kind](first) + "\n" + "".join(lines[1:]), encoding="utf-8")
    argv = [a if not a.startswith(G) else os.path.join(ROOT, a) for a in argv]
    argv[i] = str(hostile)
    out = tmp_path / "report.json"
    import io

    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(argv + ["--output", f"json:{out}"], stdout=stdout, stderr=stderr)
    err = stderr.getvalue()
    assert code in (0, 1, 2), f"exit {code}: {err}"
    assert "Traceback" not in err and "internal error" not in err
    if code == 2:
        assert err.startswith("rageval-min: error: ") and len(err.splitlines()) == 1, err
        assert not out.exists()
    else:
        json.loads(out.read_text(encoding="utf-8"), parse_constant=_refuse)  # strict JSON


def _refuse(name):
    raise AssertionError(f"non-strict JSON constant {name} in the report")
