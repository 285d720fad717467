"""``_speedups.dumps_form`` / ``dumps_canonical`` / ``dumps_splice`` and ``_io.dumps_extended``
against ``json`` itself.

``dumps_form(text)`` claims that ``text`` is exactly ``json.dumps(json.loads(text))`` for a JSON
object (default arguments), and ``dumps_canonical(text)`` makes that string from any other object
text; the writers then splice new keys into it instead of encoding the record again.  A wrong
claim would change an output byte, so the oracle here is ``json`` itself, on seeded random JSON
written in many ways and mutated one character at a time, every code point and random number
texts: both must agree with it on every text (the limits the C source lists are kept out of the
random texts and tested on their own: there the answer is False or None).
"""

import json
import math
import random
import struct
from typing import Any, Dict, List, Optional

import pytest
from conftest import need

from rageval_min import _io, _speedups_loader

C: Any = None


@pytest.fixture(autouse=True, scope="module")
def _kernels_built() -> None:
    global C
    C = need("rageval_min._speedups", "speedups", "build it in place: python setup.py build_ext --inplace")


CHARS = (
    [chr(c) for c in range(0x20, 0x7F)] * 3
    + [chr(c) for c in range(0x20)]
    + ["\x7f", "\u00e9", "\u00ff", "\u0100", "\u2019", "\uffff", "\U0001f600", "\U0010ffff", "\ud800", "\udc00"]
    + ['"', "\\", "/", "\n"] * 4
)
KEYS = ["a", "b", "id", "text", "metrics", "", "\u00e9", "a\nb", 'q"', "\\"]


def _float(rng: random.Random) -> float:
    kind = rng.random()
    if kind < 0.3:
        return struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]  # any bit pattern: NaN too
    if kind < 0.5:
        return rng.choice([0.0, -0.0, 1.0, 0.1, 1e16, 1e-5, 1e-7, 123456789012345680.0, 5e-324, 1.7976931348623157e308])
    if kind < 0.6:
        return rng.choice([math.inf, -math.inf, math.nan])
    return round(rng.uniform(-1e3, 1e3), rng.randint(0, 17))


def _value(rng: random.Random, depth: int) -> Any:
    kind = rng.random() if depth < 5 else rng.random() * 0.7
    if kind < 0.12:
        return rng.choice([True, False, None])
    if kind < 0.25:
        return rng.choice([0, 1, -1, 7, 10 ** rng.randint(0, 40) * rng.choice([1, -1]), rng.randint(-(2**70), 2**70)])
    if kind < 0.4:
        return _float(rng)
    if kind < 0.7:
        return "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 12)))
    if kind < 0.85:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return _object(rng, depth + 1)


def _object(rng: random.Random, depth: int = 0) -> Dict[str, Any]:
    return {rng.choice(KEYS) + str(rng.randint(0, 3)): _value(rng, depth) for _ in range(rng.randint(0, 5))}


MUTATIONS = list(' ,:"\\ueE+-.01Aa{}[]\t') + ["\\u00E9", "\\/", ".0", "e+1", "-0", '"a": 1, ']


def _texts(rng: random.Random, value: Dict[str, Any]) -> List[str]:
    canonical = json.dumps(value)
    out = [
        canonical,
        json.dumps(value, ensure_ascii=False),
        json.dumps(value, separators=(",", ":")),
        json.dumps(value, indent=1),
        " " + canonical,
        canonical + " ",
    ]
    for _ in range(6):
        i = rng.randrange(len(canonical) + 1)
        op = rng.random()
        if op < 0.4:
            out.append(canonical[:i] + rng.choice(MUTATIONS) + canonical[i:])
        elif op < 0.7:
            out.append(canonical[:i] + canonical[i + 1 :])
        else:
            out.append(canonical[:i] + rng.choice(MUTATIONS) + canonical[i + 1 :])
    return out


def _oracle(text: str) -> bool:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and json.dumps(value) == text


@pytest.mark.parametrize("seed", range(4))
def test_dumps_form_agrees_with_json_on_random_texts(seed: int) -> None:
    rng = random.Random(seed)
    seen = {True: 0, False: 0}
    for _ in range(1500):
        for text in _texts(rng, _object(rng)):
            want = _oracle(text)
            assert C.dumps_form(text) is want, repr(text)
            seen[want] += 1
    assert seen[True] > 1500 and seen[False] > 5000  # both answers are exercised


def test_dumps_form_edge_cases() -> None:
    cases = {
        "{}": True,
        '{"a": 1}': True,
        '{"a":1}': False,
        '{ "a": 1}': False,
        '{"a": 1, "a": 2}': False,  # json.loads keeps one member
        '{"a": {"b": 1, "b": 1}}': False,
        '{"a": 1, "b": {"a": 1}}': True,  # the same key in two objects
        '{"a": -0}': False,  # prints 0
        '{"a": -0.0}': True,
        '{"a": 1.0}': True,
        '{"a": 1.00}': False,
        '{"a": 1e+16}': True,
        '{"a": 1E+16}': False,
        '{"a": 1e16}': False,
        '{"a": 1e400}': False,  # prints Infinity
        '{"a": Infinity, "b": -Infinity, "c": NaN}': True,
        '{"a": "\\u00e9"}': True,
        '{"a": "\\u00E9"}': False,
        '{"a": "\\u0041"}': False,  # printed as A
        '{"a": "\\u000a"}': False,  # printed as \\n
        '{"a": "\\u001f\\u007f"}': True,
        '{"a": "\\/"}': False,
        '{"a": "\\ud83d\\ude00"}': True,
        '{"a": "\\ud800"}': True,  # a lone surrogate prints the same (the readers refuse it, not this)
        '{"a": "\u00e9"}': False,  # not ASCII
        '{"a": "x\ty"}': False,  # a raw control character: not JSON
        '["a"]': False,  # not an object
        '{"a": [1, [2, {}], []]}': True,
        '{"a": true, "b": false, "c": null}': True,
        '{"a": tru}': False,
        "": False,
        "{": False,
    }
    for text, want in cases.items():
        assert _oracle(text) is want, text
        assert C.dumps_form(text) is want, text


def test_dumps_form_declines_beyond_its_limits() -> None:
    deep = '{"a": ' + "[" * 200 + "]" * 200 + "}"
    assert _oracle(deep) and C.dumps_form(deep) is False  # 201 levels
    assert C.dumps_form('{"a": ' + "[" * 199 + "]" * 199 + "}") is True
    wide = json.dumps({str(i): i for i in range(4097)})
    assert _oracle(wide) and C.dumps_form(wide) is False
    assert C.dumps_form(json.dumps({str(i): i for i in range(4096)})) is True
    assert C.dumps_form(json.dumps({"a": 10**4299})) is True and C.dumps_form('{"a": 1' + "0" * 4300 + "}") is False
    long_float = '{"a": 0.' + "0" * 400 + "1}"
    assert C.dumps_form(long_float) is False
    assert C.dumps_form(type("S", (str,), {})("{}")) is None


def test_dumps_splice() -> None:
    assert C.dumps_splice('{"a": 1}', '{"m": [2]}') == '{"a": 1, "m": [2]}'
    assert C.dumps_splice("{}", '{"m": 2}') == '{"m": 2}'
    assert C.dumps_splice('{"a":1}', '{"m": 2}') == '{"a": 1, "m": 2}'  # not in the form: made so
    assert C.dumps_splice('{"a": 1, "a": 2}', '{"m": 2}') is None  # json.loads would drop a member
    assert C.dumps_splice('{"a": 1}', '{"m": "\u00e9"}') is None  # a tail that is not ASCII
    assert C.dumps_splice('{"a": 1}', "[1]") is None


def _extended(text: Optional[str], record: Dict[str, Any], out: Dict[str, Any], module: Any, end: str = "") -> str:
    saved = _speedups_loader._kernels
    _speedups_loader._kernels = module
    try:
        return _io.dumps_extended(text, record, out, end)
    finally:
        _speedups_loader._kernels = saved


@pytest.mark.parametrize("seed", range(2))
def test_dumps_extended_is_json_dumps(seed: int) -> None:
    """Whatever the text and the changes, the result is ``json.dumps(out)``, with and without the kernels."""
    rng = random.Random(100 + seed)
    spliced = 0
    for _ in range(2000):
        record = _object(rng)
        text = rng.choice(_texts(rng, record)[:4])  # texts of this very record, in several forms
        out = dict(record)
        change = rng.random()
        if change < 0.15 and out:
            out[rng.choice(list(out))] = "changed"  # a value replaced in place
        elif change < 0.25 and out:
            key = rng.choice(list(out))
            out[key] = json.loads(json.dumps(out[key]))  # equal, but another object
        for _ in range(rng.randint(0, 2)):
            out["metrics" + str(rng.randint(0, 2))] = _value(rng, 3)
        want = json.dumps(out)
        assert _extended(text, record, out, C) == want
        assert _extended(text, record, out, None) == want
        assert _extended(None, record, out, C) == want
        assert _extended(text, record, out, C, "\n") == want + "\n"
        spliced += len(out) > len(record) and text == json.dumps(record)
    assert spliced > 500


def test_fixed_notation_floats_against_repr() -> None:
    """Floats written without an exponent are decided without converting them when they have at
    most 15 significant digits: every such text is checked against repr itself."""
    rng = random.Random(7)
    digits = "0000123456789"
    texts = ["0.0", "-0.0", "0.00", "1.0", "10.0", "1.10", "0.0001", "0.00001", "0.001", "-0.00012"]
    texts += ["1" + "0" * n + ".0" for n in range(20)] + ["0." + "0" * n + "1" for n in range(8)]
    for _ in range(20000):
        whole = rng.choice(
            ["0", str(rng.randint(1, 9)) + "".join(rng.choice(digits) for _ in range(rng.randint(0, 18)))]
        )
        frac = "".join(rng.choice(digits) for _ in range(rng.randint(1, 18)))
        texts.append(rng.choice(["", "-"]) + whole + "." + frac)
    for number in texts:
        text = '{"a": ' + number + "}"
        assert C.dumps_form(text) is (repr(float(number)) == number), number


def _canonical_oracle(text: str) -> Optional[str]:
    """``json.dumps(json.loads(text))`` for an object text, or None where ``dumps_canonical`` must
    give none: json.loads fails, the value is not an object, or a key repeats (also two keys
    that json.dumps spells alike, which only lone surrogates can make)."""
    repeated = []

    def pairs(items: List[Any]) -> Dict[str, Any]:
        spelled = [json.dumps(k) for k, _ in items]
        if len(set(spelled)) != len(spelled):
            repeated.append(True)
        return dict(items)

    try:
        value = json.loads(text)
        json.loads(text, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or repeated:
        return None
    return json.dumps(value)


@pytest.mark.parametrize("seed", range(4))
def test_dumps_canonical_agrees_with_json_on_random_texts(seed: int) -> None:
    rng = random.Random(200 + seed)
    made = 0
    for _ in range(1500):
        value = _object(rng)
        texts = _texts(rng, value) + [
            json.dumps(value, ensure_ascii=False, separators=(" ,", " :")),
            json.dumps(value, indent="\t").replace("\n", "\r\n"),
        ]
        for text in texts:
            want = _canonical_oracle(text)
            assert C.dumps_canonical(text) == want, repr(text)
            made += want is not None
    assert made > 10000


def test_dumps_canonical_strings_and_numbers() -> None:
    for start in range(0, 0x110000, 0x400):
        chars = "".join(chr(c) for c in range(start, min(start + 0x400, 0x110000)) if not 0xD800 <= c < 0xE000)
        raw = '{"s": "' + chars.replace("\\", "\\\\").replace('"', '\\"') + '"}'
        for text in (raw, raw.replace("\n", "\\n").replace("\t", "\\t"), json.dumps({"s": chars}).upper()):
            assert C.dumps_canonical(text) == _canonical_oracle(text), hex(start)
    escapes = [
        "\\ud83d\\ude00",
        "\\uD83D\\uDE00",
        "\\ud83d",
        "\\ude00\\ud83d",
        "\\ud83d\\u0041",
        "\\ud83dx",
        "\\u00e9",
        "\\/",
        "\\b\\f\\n\\r\\t",
        "\\u0000\\u001F\\u007f",
        "\\ud83d\\uZZZZ",
        "\\x",
        "\\u12",
    ]
    for e in escapes:
        text = '{"s": "' + e + '", "' + e + '": 1}'
        assert C.dumps_canonical(text) == _canonical_oracle(text), e
    rng = random.Random(9)
    alphabet = "0123456789" * 3 + "-+.eE"
    numbers = ["0", "-0", "-0.0", "1e400", "-1e400", "1E5", "0e5", "1.", ".5", "01", "1e", "1e+", "-", "--1", "1.5e-7"]
    numbers += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 25))) for _ in range(20000)]
    numbers += [str(rng.randint(-(10**30), 10**30)) for _ in range(200)] + [repr(_float(rng)) for _ in range(2000)]
    for number in numbers:
        text = '{"n": ' + number + ', "m": [' + number + "]}"
        assert C.dumps_canonical(text) == _canonical_oracle(text), number
    assert C.dumps_canonical('{"a": ' + "[" * 201 + "]" * 201 + "}") is None
    deep = '{"a": [' + "[" * 198 + "]" * 198 + "]}"  # 200 levels: the limit
    assert C.dumps_canonical(deep.replace(" ", "")) == deep
    assert C.dumps_canonical(type("S", (str,), {})("{}")) is None
