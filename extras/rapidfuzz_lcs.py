"""Exact LCS length through rapidfuzz's compiled code (``--backend rapidfuzz``).

The stdlib engine (:func:`rageval_min.rouge.lcs_length`) is bit-parallel over
Python integers; on CPython its per-token cost is a few big-integer operations
of about 300 machine instructions each, which is as far as pure Python goes.
``rapidfuzz.distance.LCSseq.similarity`` runs the same kind of bit-parallel
algorithm in C++.  Pass :func:`lcs_length` of this module as the ``lcs``
option of :func:`rageval_min.rouge.score` (the CLI does this for
``rouge --backend rapidfuzz``).  Needs ``pip install 'rageval-min[fast]'``.

Exactness.  rapidfuzz does not compare list elements with ``==``: it maps each
element to a 64-bit key, the code point for a one-character ``str`` and
``hash(element)`` for anything else (``bytes`` and longer ``str`` tokens), and
compares keys.  Two different tokens with the same key would count as a match.
Such a collision is astronomically unlikely, but "unlikely" is not parity, so
this adapter keeps a vocabulary of tokens whose keys are known to be pairwise
distinct.  A pair is handed to rapidfuzz only when all of its tokens are in it;
new tokens are admitted after a key check, and a pair with a colliding token is
scored by the stdlib engine instead.  The vocabulary holds at most
``VOCAB_MAX`` tokens and is started afresh beyond that, so memory stays
bounded.  :func:`check_backend` verifies on first use that the installed
rapidfuzz maps elements as described, and refuses to run otherwise.

The result is the same integer as the stdlib engine's for every input, so the
scores are bit-identical; the ``backend`` entry of the signature says which
engine computed them.
"""

from typing import Any, Callable, Dict, Hashable, Optional, Sequence, Set, Tuple

from rageval_min.errors import ScoringError
from rageval_min.rouge import lcs_length as _stdlib_lcs_length

from ._common import missing_extra, package_version

__all__ = ["INSTALL_HINT", "VOCAB_MAX", "check_backend", "lcs_length", "rapidfuzz_version"]

INSTALL_HINT = "pip install 'rageval-min[fast]'"

#: Tokens the vocabulary may hold before it is started afresh.
VOCAB_MAX = 1 << 18

# (admitted tokens, key -> the one admitted token with that key).  Replaced as a
# whole, never cleared, so a call that read the old pair keeps a consistent one.
_State = Tuple[Set[Hashable], Dict[int, Hashable]]
_STATE: _State = (set(), {})
_SIMILARITY: Optional[Callable[..., int]] = None


def _import() -> Any:
    try:
        from rapidfuzz.distance import LCSseq  # type: ignore
    except ImportError:
        raise missing_extra("rapidfuzz", INSTALL_HINT) from None
    return LCSseq


def rapidfuzz_version() -> str:
    """The installed rapidfuzz version (``"unknown"`` if it cannot be told)."""
    return package_version("rapidfuzz")


def _key(token: Hashable) -> int:
    """The key rapidfuzz compares ``token`` by (see the module docstring)."""
    if isinstance(token, str) and len(token) == 1:
        return ord(token)
    return hash(token)


class _Hashed:
    """An object whose only property is its hash (for the self-check)."""

    __slots__ = ("h",)

    def __init__(self, h: int) -> None:
        self.h = h

    def __hash__(self) -> int:
        return self.h

    def __eq__(self, other: object) -> bool:
        return self is other


def check_backend() -> Callable[..., int]:
    """rapidfuzz's ``LCSseq.similarity``, after checking how it compares elements.

    Raises :class:`ScoringError` naming the pip command when rapidfuzz is
    missing, and when the installed version does not compare elements by the
    keys of :func:`_key` (the exactness argument would not hold).
    """
    global _SIMILARITY
    if _SIMILARITY is not None:
        return _SIMILARITY
    sim = _import().similarity
    probes = [
        # (first, second, expected LCS length)
        ([b"token"], [_Hashed(hash(b"token"))], 1),  # bytes: by hash
        ([b"t"], [_Hashed(hash(b"t"))], 1),  # one-byte bytes too
        (["word"], [_Hashed(hash("word"))], 1),  # longer str: by hash
        (["a"], [_Hashed(97)], 1),  # one-character str: by code point
        ([_Hashed(1)], [_Hashed(1 + (1 << 32))], 0),  # all 64 bits count
        ([_Hashed(5)], [_Hashed(5 + (1 << 62))], 0),
        ([_Hashed(-7)], [_Hashed(-7 & ((1 << 63) - 1))], 0),
        ([b"x", b"y", b"z"], [b"y", b"q", b"z"], 2),
    ]
    for first, second, want in probes:
        got = sim(first, second)
        if got != want:
            raise ScoringError(
                f"rapidfuzz {rapidfuzz_version()} compares sequence elements differently than "
                f"this adapter assumes (LCS of {first!r} and {second!r} is {got}, expected {want}); "
                "use --backend stdlib"
            )
    _SIMILARITY = sim
    return sim


def _admit(a: Sequence[Hashable], b: Sequence[Hashable]) -> bool:
    """Add the new tokens of ``a`` and ``b`` to the vocabulary; False on a key collision."""
    global _STATE
    state = _STATE
    if len(state[0]) >= VOCAB_MAX:
        state = _STATE = (set(), {})
    vocab, by_key = state
    new = set(a)
    new.update(b)
    new.difference_update(vocab)
    ok = True
    for token in new:
        # setdefault is atomic: of two threads admitting tokens with one key, one loses.
        holder = by_key.setdefault(_key(token), token)
        if holder is token or holder == token:
            vocab.add(token)
        else:
            ok = False
    return ok


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of a longest common subsequence of ``a`` and ``b`` (exact).

    Same contract and result as :func:`rageval_min.rouge.lcs_length`; uses
    rapidfuzz when every token is in the collision-checked vocabulary, and the
    stdlib engine otherwise.

    >>> lcs_length([b"a", b"b", b"c", b"b"], [b"b", b"d", b"c", b"a", b"b"])
    3
    """
    sim = _SIMILARITY if _SIMILARITY is not None else check_backend()
    if not a or not b:
        return 0
    vocab = _STATE[0]
    if (vocab.issuperset(a) and vocab.issuperset(b)) or _admit(a, b):
        return sim(a, b)
    return _stdlib_lcs_length(a, b)


def _reset_for_tests(state: Optional[_State] = None) -> None:
    """Replace the vocabulary (tests only)."""
    global _STATE
    _STATE = state if state is not None else (set(), {})


def _vocab_size() -> int:
    return len(_STATE[0])
