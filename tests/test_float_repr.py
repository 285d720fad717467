"""``_speedups.join_reprs`` against ``"%r"`` formatting, that is against ``repr`` itself.

``join_reprs(parts, values)`` writes what ``template % values`` writes for a template of
``%r`` placeholders between ``parts``; for floats in [2**-13, 1) it makes repr's digits itself
(the shortest decimal that reads back, the nearest of those, a tie to the even digit), which
``rouge``'s output lines use.  A wrong digit would change an output byte, so the oracle is
``repr`` on every ratio k / d up to d = 1,500, random doubles of every exponent the fast path
takes and of every other exponent, the ties (odd multiples of 2**-j), the neighbours of the
range's ends and of the powers of ten, and the values it must refuse.
"""

import math
import random
import struct
from typing import Any, List

import pytest
from conftest import need

C: Any = None


@pytest.fixture(autouse=True, scope="module")
def _kernels_built() -> None:
    global C
    C = need("rageval_min._speedups", "speedups", "build it in place: python setup.py build_ext --inplace")


def _mismatches(values: List[float]) -> List[str]:
    """The values whose text differs from repr, eight at a time through one call (the
    parts ", " between them, as in an output line)."""
    bad = []
    for i in range(0, len(values), 8):
        chunk = tuple(values[i : i + 8])
        parts = ("{",) + (", ",) * (len(chunk) - 1) + ("}",)
        want = "{" + ", ".join(map(repr, chunk)) + "}"
        if C.join_reprs(parts, chunk) != want:
            bad += [v.hex() for v in chunk if C.join_reprs(("", ""), (v,)) != repr(v)]
    return bad


def _double(exponent: int, mantissa: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", (exponent << 52) | mantissa))[0])


def test_every_ratio_of_small_counts() -> None:
    assert _mismatches([k / d for d in range(1, 1501) for k in range(d + 1)]) == []


def test_random_doubles_in_and_around_the_fast_range() -> None:
    rnd = random.Random(27)
    values = [_double(rnd.randint(1023 - 15, 1023), rnd.getrandbits(52)) for _ in range(400_000)]
    assert _mismatches(values) == []


def test_random_doubles_of_every_kind() -> None:
    rnd = random.Random(2727)
    values = [struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(64)))[0] for _ in range(100_000)]
    values += [0.0, -0.0, 1.0, -1.0, 2.0, 1e-300, 5e-324, 1e16, 1e17, 123456789.0, math.inf, -math.inf, math.nan]
    assert _mismatches(values) == []


def test_ties_and_short_dyadic_values() -> None:
    # y / 2**j has j decimals: from j = 17 on, the shortest decimals that read back can be two,
    # at the same distance (x = 65537 / 2**17 is 0.50000762939453125): the even digit wins
    rnd = random.Random(7)
    values = [y / (1 << j) for j in range(1, 13) for y in range(1, 1 << j, 2)]
    values += [y / (1 << j) for j in range(13, 60) for y in rnd.sample(range(1, 1 << min(j, 40), 2), 3000)]
    values += [65537 / (1 << 17)]
    assert repr(values[-1]) == "0.5000076293945312" and C.join_reprs(("", ""), (values[-1],)) == repr(values[-1])
    assert _mismatches([v for v in values if v < 1]) == []


def test_neighbours_of_the_ends_and_of_powers_of_ten() -> None:
    values = []
    for base in (2.0**-13, 2.0**-12, 1e-4, 1e-3, 1e-2, 0.1, 0.25, 0.5, 1.0):
        for toward in (0.0, 2.0):
            x = base
            for _ in range(3000):
                x = math.nextafter(x, toward)
                values.append(x)
    assert _mismatches(values) == []


def test_ints_and_what_it_refuses() -> None:
    assert C.join_reprs(("a", "b", "c"), (0, 12345678901234567890)) == "a0b12345678901234567890c"
    assert C.join_reprs(("", ""), (10**40,)) is None  # a repr longer than a float's
    assert C.join_reprs(("", ""), (True,)) is None  # not exactly an int
    assert C.join_reprs(("", ""), ("0.5",)) is None
    assert C.join_reprs(("", ""), (type("F", (float,), {})(0.5),)) is None
    assert C.join_reprs(("\u00e9", ""), (0.5,)) is None  # parts must be ASCII
    assert C.join_reprs(("", "", ""), (0.5,)) is None  # one part more than values
    assert C.join_reprs(("x",), ()) == "x"
    with pytest.raises(TypeError):
        C.join_reprs(["", ""], (0.5,))
