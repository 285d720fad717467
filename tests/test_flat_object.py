"""``_speedups.flat_object`` against ``json.loads``.

``flat_object(text)`` claims to make the dict ``json.loads(text)`` makes for an object of scalar
values (``compare`` reads per-item rows with it), and to return None for anything else.  A wrong
claim would change a compared value, so the oracle is ``json`` itself, on seeded random records
written with varied spacing, every number spelling, Latin-1 and wider characters, escapes,
control characters, repeated keys and nested values, and on every text made by deleting,
doubling or replacing one character of them: wherever ``flat_object`` answers, ``json.loads``
gives the same keys in the same order with values of the same types and the same values, and
where ``json.loads`` fails, ``flat_object`` gives None.
"""

import json
import math
import random
from typing import Any, List

import pytest
from conftest import need

C: Any = None


@pytest.fixture(autouse=True, scope="module")
def _kernels_built() -> None:
    global C
    C = need("rageval_min._speedups", "speedups", "build it in place: python setup.py build_ext --inplace")


NUMBERS = [
    "0",
    "-0",
    "7",
    "-12",
    "123456789012345678",
    "-123456789012345678",
    "1234567890123456789",
    "0.5",
    "-0.0",
    "1e5",
    "1E+5",
    "2.5e-3",
    "1e400",
    "-1e400",
    "4.9e-324",
    "0.1",
    "3.141592653589793",
    "1.0000000000000002",
    "12345678901234567890.5",
    "1" * 70 + ".5",
    "NaN",
    "Infinity",
    "-Infinity",
    "01",
    "1.",
    ".5",
    "1e",
    "-",
    "+1",
]
STRINGS = [
    "",
    "a",
    "q0001",
    "caf\u00e9",
    "\u00ff\u00a0",
    "\u0100x",
    "\u2019",
    "\U0001f600",
    "a\\nb",
    "\\u00e9",
    'q\\"',
    "tab\there",
    "\x01",
    "\x7f",
    " spaced  out ",
]
SCALARS = ["true", "false", "null", "tru", "nul"] + ["[1]", "{}", '{"a": 1}', "[]"]


def _text(rnd: random.Random) -> str:
    n = rnd.randint(0, 8)
    parts = []
    for _ in range(n):
        key = rnd.choice(["id", "a", "b", "AP", "P@10", "_rageval_min", "\u00e9", "k\\u0041", "x"])
        kind = rnd.random()
        if kind < 0.4:
            value = rnd.choice(NUMBERS)
        elif kind < 0.75:
            value = '"' + rnd.choice(STRINGS) + '"'
        else:
            value = rnd.choice(SCALARS)
        ws = [rnd.choice(["", " ", "  ", "\t", "\n", "\r\n"]) for _ in range(3)]
        parts.append(f'"{key}"{ws[0]}:{ws[1]}{value}{ws[2]}')
    sep = rnd.choice([", ", ",", " , "])
    return "{" + rnd.choice(["", " "]) + sep.join(parts) + rnd.choice(["", " "]) + "}"


def _same(text: str) -> bool:
    got = C.flat_object(text)
    try:
        want = json.loads(text)
    except ValueError:
        return got is None
    if got is None:
        return True
    if not isinstance(want, dict) or list(got) != list(want):
        return False
    for a, b in zip(got.values(), want.values()):
        if type(a) is not type(b):
            return False
        if isinstance(a, float) and math.isnan(a):
            if not math.isnan(b):
                return False
        elif a != b or (isinstance(a, float) and math.copysign(1, a) != math.copysign(1, b)):
            return False
    return True


def _mutations(text: str, rnd: random.Random) -> List[str]:
    out = []
    for _ in range(6):
        k = rnd.randrange(len(text))
        out.append(text[:k] + text[k + 1 :])
        out.append(text[:k] + text[k] + text[k:])
        out.append(text[:k] + rnd.choice('{}[]",:0-e. \\ntx\u00e9') + text[k + 1 :])
    return out


def test_random_records_and_their_mutations() -> None:
    rnd = random.Random(2027)
    texts = [_text(rnd) for _ in range(20_000)]
    answered = sum(C.flat_object(t) is not None for t in texts)
    assert answered > 2_000  # the plain ones are read here, not left to json
    bad = [t for t in texts if not _same(t)]
    bad += [m for t in texts[:5_000] if len(t) > 2 for m in _mutations(t, rnd) if not _same(m)]
    assert bad[:5] == []


def test_per_item_rows_as_the_commands_write_them() -> None:
    rows = [
        {
            "qid": "q0000001",
            "in_run": 1,
            "NumRet": 100,
            "AP": 0.5961198167572608,
            "RR": 0.0625,
            "P@10": 0.9,
            "runid": "bench",
            "_rageval_min": "ir score e8c5ca5e2121",
            "x": None,
            "ok": True,
            "no": False,
        },
        {"id": "caf\u00e9", "recall": 1e-7, "f": -0.0, "n": -5, "big": 1e300},
        {},
    ]
    for row in rows:
        for text in (json.dumps(row), json.dumps(row, ensure_ascii=False), json.dumps(row, separators=(",", ":"))):
            got = C.flat_object(text)
            if "\\" not in text and max(map(ord, text)) < 256:  # no escape, one-byte characters
                assert got is not None, text
            assert _same(text)


def test_what_it_leaves_to_json() -> None:
    for text in (
        '{"a": "\\n"}',
        '{"a": [1]}',
        '{"a": NaN}',
        '{"a": 1}x',
        '{"a": 1,}',
        '{"a" 1}',
        "[1]",
        "",
        '{"a": 12345678901234567890}',
        '{"a": "\u0100"}',
        '{"a": "\x01"}',
        '{"\\u0041": 1}',
        " ",
    ):
        assert C.flat_object(text) is None, text
    assert C.flat_object('{"a": 1, "a": 2, "b": 3}') == {"a": 2, "b": 3}  # json's: first place, last value
    assert list(C.flat_object('{"b": 1, "a": 2, "b": 3}')) == ["b", "a"]
    assert C.flat_object(b"{}") is None and C.flat_object(type("S", (str,), {})("{}")) is None
