"""ROUGE exactly as Google's ``rouge-score`` 0.1.2 computes it, stdlib only.

Reference: ``rouge_score.rouge_scorer.RougeScorer(rouge_types, use_stemmer)
.score(target, prediction)``, i.e.
``google-research/google-research@61ce9f0:rouge/rouge_scorer.py`` (the source
of rouge-score 0.1.2), with NLTK 3.10.4's ``PorterStemmer`` in its default mode
as the stemmer.  Every number is the same
IEEE double, and the same ``int``/``float`` type, as the reference's.

Tokens (``tokenizer="reference"``)
    ``text.lower()`` (full Unicode lower-casing), then the maximal runs of
    ``[a-z0-9]``.  Everything else separates tokens: punctuation, ``_``,
    apostrophes, and *every non-ASCII character* (``"Café"`` -> ``caf``;
    ``"北京 is 首都"`` -> ``is``).  A few characters lower-case into ASCII
    (Kelvin sign -> ``k``; ``"İ"`` -> ``i`` + U+0307).  With ``use_stemmer``
    each token of more than 3 characters is Porter-stemmed
    (:func:`rageval_min.porter.porter_stem`, memoised per token type).

rougeN (``rouge1`` .. ``rouge9``)
    Counts of n-grams; ``overlap = sum(min(count_target, count_prediction))``,
    ``precision = overlap / max(#prediction n-grams, 1)``,
    ``recall = overlap / max(#target n-grams, 1)``.  Always floats, so an empty
    side gives ``Score(0.0, 0.0, 0.0)``.  Only one digit: ``rouge0`` and
    ``rouge10`` are errors, and (a reference quirk, since ``$`` matches before
    a final newline) ``"rouge1\\n"`` is accepted as ``rouge1``.

rougeL
    ``lcs`` = length of the longest common subsequence of the two token lists;
    ``precision = lcs / len(prediction)``, ``recall = lcs / len(target)``.
    **Int zeros**: ``Score(0, 0, 0)`` when either side has no tokens.  The
    length is computed bit-parallel (:func:`lcs_length`), not with the
    reference's O(m*n) table.

rougeLsum
    Both texts are split on ``"\\n"`` only (``"\\r"`` stays and acts as a token
    separator), empty strings are dropped and each sentence is tokenized.  For
    each reference sentence, the union of the index sets of *one* LCS with each
    candidate sentence (the one chosen by the reference's backtrack, see
    :func:`lcs_indices`) gives tokens; each token counts as a hit only while
    both whole-text token counts are still positive, and the hit decrements
    both (ROUGE-1.5.5's rule).  ``recall = hits / m``, ``precision = hits / n``
    with ``m``, ``n`` the total token counts.  Int zeros when either side has
    no sentence or no token.  The unions of all sentence pairs are computed
    at once on packed, bit-reversed columns (:func:`_packed_union`), and a
    token's hits are ``min(candidate count, union count)`` (:func:`_score_lsum`).

F-measure
    ``F(p, r) = 2 * p * r / (p + r)`` evaluated left to right, ``0.0`` when
    ``p + r == 0``.

Variant ``unicode_tokens`` (``tokenizer="unicode"``, opt-in, not comparable
with reference scores): NFKC, ``str.casefold()``, then tokens are maximal runs
of Unicode letters and digits (``[^\\W_]+``), except that each CJK ideograph
and each Japanese kana is a token on its own.  Stemming then applies only to
ASCII ``[a-z0-9]`` tokens of more than 3 characters.

The ``rouge`` command (the family contract, ``docs/adding-a-family.md``)
    Records hold ``prediction`` and ``reference`` (a string) or ``references``
    (a list: the best target per type by F-measure, :func:`score_multi`).
    :func:`score_item` turns one record into a flat item row (``id``, or
    ``line`` when the record has no id, then ``TYPE.precision``,
    ``TYPE.recall``, ``TYPE.fmeasure``); :class:`RougeAccumulator` averages
    the rows (sequential float sums in input order, divided by the count);
    :func:`score_file` does both for a file.  Every metric is
    higher-is-better.

>>> s = score("The cat sat on the mat.", "the cat was on the mat", rouge_types=["rouge1", "rougeL"])
>>> s["rouge1"]
Score(precision=0.8333333333333334, recall=0.8333333333333334, fmeasure=0.8333333333333334)
>>> score("", "anything", rouge_types=["rougeL", "rouge2"])
{'rougeL': Score(precision=0, recall=0, fmeasure=0), 'rouge2': Score(precision=0.0, recall=0.0, fmeasure=0.0)}
"""

import functools
import re
import unicodedata
from array import array
from collections import Counter
from functools import lru_cache
from itertools import chain, compress, count, repeat
from operator import add
from typing import (
    Any,
    Callable,
    Dict,
    Hashable,
    Iterable,
    Iterator,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from .._contract import Accumulator, ItemRow, finish, partial_requested, register_accumulator
from .._io import Problems, iter_records
from .._parallel import accumulate_items
from .._signature import make_signature
from ..errors import ScoringError
from ..porter import STEMMER_ID, porter_stem
from ..report import Report

__all__ = [
    "BACKENDS",
    "FAMILY",
    "LINE_KEY",
    "REFERENCE",
    "ROUGE_REF",
    "RougeAccumulator",
    "Score",
    "TOKENIZERS",
    "UNICODE_VARIANT",
    "VARIANTS",
    "check_record",
    "check_variants",
    "lcs_backend",
    "lcs_indices",
    "lcs_length",
    "lcs_lengths",
    "make_scorer",
    "metric_names",
    "porter_stem",
    "rapidfuzz_lcs",
    "reference_json",
    "rouge_l_many",
    "rouge_variants",
    "score",
    "score_file",
    "score_item",
    "score_multi",
    "score_tokens",
    "signature",
    "signature_params",
    "tokenize",
    "validate_rouge_types",
]

#: The reference implementation (``rouge-score`` 0.1.2 = this commit's ``rouge/``).
ROUGE_REF = "google-research/google-research@61ce9f0"

#: Tokenizer names accepted by :func:`tokenize` and :func:`score`.
TOKENIZERS = ("reference", "unicode")

#: Variant name of the Unicode tokenizer (as it appears in signatures).
UNICODE_VARIANT = "unicode_tokens"

Number = Union[int, float]


class Score(NamedTuple):
    """One ROUGE result.  ``int`` zeros where the reference returns them."""

    precision: Number
    recall: Number
    fmeasure: Number


# ----------------------------------------------------------------- tokenizing

_REF_TOKEN = re.compile(r"[a-z0-9]+")
# Byte table mapping everything but [a-z0-9] to a space: with non-ASCII code
# points first encoded as "?", ``split()`` then yields exactly the maximal
# [a-z0-9] runs, i.e. ``_REF_TOKEN.findall`` -- about 3x faster.
_KEEP = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789")
_TO_SPACE = bytes(c if c in _KEEP else 0x20 for c in range(256))
# The same for ASCII text that was not lower-cased yet (A-Z -> a-z, as str.lower() does).
_LOWER_TO_SPACE = bytes(c + 32 if 65 <= c <= 90 else (c if c in _KEEP else 0x20) for c in range(256))


def _ref_bytes(text: str) -> bytes:
    """``text`` lower-cased, with every character outside [a-z0-9] as one space."""
    if text.isascii():
        return text.encode("ascii").translate(_LOWER_TO_SPACE)
    return text.lower().encode("ascii", "replace").translate(_TO_SPACE)


# The same two tables keeping "\n" (rougeLsum's sentence break) as it is.
_TO_SPACE_NL = _TO_SPACE[:10] + b"\n" + _TO_SPACE[11:]
_LOWER_TO_SPACE_NL = _LOWER_TO_SPACE[:10] + b"\n" + _LOWER_TO_SPACE[11:]


def _ref_bytes_nl(text: str) -> bytes:
    """:func:`_ref_bytes` with each ``"\n"`` kept."""
    if text.isascii():
        return text.encode("ascii").translate(_LOWER_TO_SPACE_NL)
    return text.lower().encode("ascii", "replace").translate(_TO_SPACE_NL)


_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")  # `$` also matches before a final "\n"

# CJK Unified Ideographs (+ Extension A, B..G, compatibility), Hiragana, Katakana.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f\U00030000-\U0003134f"


@lru_cache(maxsize=1)
def _uni_token() -> "re.Pattern[str]":
    """The unicode tokenizer's pattern, compiled on first use (about 3 ms: not at every start)."""
    return re.compile("[" + _CJK + "]|[^\\W_" + _CJK + "]+")


_STEM_CACHE_MAX = 1 << 17


class _StemMap(Dict[str, str]):
    """Memoised reference stemming of one token: ``_STEMS[token]``.

    Tokens of at most 3 characters map to themselves (the reference stems only
    longer ones); a stem that is not a valid ``[a-z0-9]+`` token maps to ``""``
    (the reference drops it).  Lookups of known tokens run in C through
    ``map(_STEMS.__getitem__, tokens)``; the cache is emptied when it holds
    2**17 tokens, so memory stays bounded.
    """

    def __missing__(self, tok: str) -> str:
        if len(tok) > 3:
            out = porter_stem(tok)
            if not _VALID_TOKEN.match(out):
                out = ""
        else:
            out = tok
        if len(self) >= _STEM_CACHE_MAX:
            self.clear()
        self[tok] = out
        return out


_STEMS = _StemMap()


def _check_tokenizer(tokenizer: str) -> None:
    if tokenizer not in TOKENIZERS:
        raise ScoringError(
            f"unknown tokenizer {tokenizer!r} (expected one of: {', '.join(TOKENIZERS)})",
            field="tokenizer",
        )


def _tokens(text: str, stem: bool, tokenizer: str) -> List[str]:
    """Tokens for :func:`score` (built-in stemmer only).

    Without a stemmer the reference tokens are returned as ASCII ``bytes``
    (equal exactly when the ``str`` tokens are equal, and a little cheaper to
    make); :func:`tokenize` decodes them.
    """
    if tokenizer == "reference":
        if not stem:
            return _ref_bytes(text).split()  # type: ignore[return-value]
        out = list(map(_STEMS.__getitem__, _ref_bytes(text).decode("ascii").split()))
        if "" in out:
            out = [t for t in out if t]
        return out
    toks = _uni_token().findall(unicodedata.normalize("NFKC", text).casefold())
    if not stem:
        return toks
    return [(_STEMS[t] or t) if t.isascii() and _VALID_TOKEN.match(t) else t for t in toks]


def tokenize(
    text: str,
    *,
    stemmer: Optional[Callable[[str], str]] = None,
    tokenizer: str = "reference",
) -> List[str]:
    """Tokenize like ``rouge_score.tokenize.tokenize(text, stemmer)``.

    ``stemmer`` is any ``str -> str`` function (pass :func:`porter_stem` for
    the reference's); it is applied to tokens longer than 3 characters and the
    results are then filtered like the reference (kept when
    ``re.match(r"^[a-z0-9]+$", token)``).  With ``tokenizer="unicode"`` see the
    module docstring (the stemmer only sees ASCII tokens).

    >>> tokenize("don't U.S.A. e-mail 3.14")
    ['don', 't', 'u', 's', 'a', 'e', 'mail', '3', '14']
    >>> tokenize("Café naïve 北京 is 首都")
    ['caf', 'na', 've', 'is']
    >>> tokenize("Café naïve 北京 is 首都", tokenizer="unicode")
    ['café', 'naïve', '北', '京', 'is', '首', '都']
    >>> tokenize("running dying skies", stemmer=porter_stem)
    ['run', 'die', 'sky']
    """
    if not isinstance(text, str):
        raise ScoringError(f"expected a string, got {type(text).__name__}")
    _check_tokenizer(tokenizer)
    if stemmer is None:
        if tokenizer == "reference":
            return _ref_bytes(text).decode("ascii").split()
        return _tokens(text, False, tokenizer)
    if stemmer is porter_stem:
        return _tokens(text, True, tokenizer)
    if tokenizer == "reference":
        toks = _REF_TOKEN.findall(text.lower())
        stemmed = [stemmer(t) if len(t) > 3 else t for t in toks]
        return [t for t in stemmed if _VALID_TOKEN.match(t)]
    toks = _uni_token().findall(unicodedata.normalize("NFKC", text).casefold())
    return [stemmer(t) if len(t) > 3 and t.isascii() and _VALID_TOKEN.match(t) else t for t in toks]


# ------------------------------------------------------------------------ LCS


def _popcount_py39(x: int) -> int:
    return bin(x).count("1")


# int.bit_count exists from Python 3.10 on; looked up by name so the core stays 3.9-clean.
_popcount: Callable[[int], int] = getattr(int, "bit_count", _popcount_py39)


_POW2: List[int] = [1]  # _POW2[i] == 1 << i, grown on demand (see _pow2)
_POW2_MAX = 4096


def _pow2(n: int) -> Iterable[int]:
    """``1 << i`` for ``i`` in ``range(n)``: the cached list (grown up to 4096 items),
    or, beyond that, a generator (a list of n powers would take O(n**2) bits)."""
    if n <= len(_POW2):
        return _POW2
    if n > _POW2_MAX:
        return (1 << i for i in range(n))
    _POW2.extend(1 << i for i in range(len(_POW2), n))
    return _POW2


def _position_masks(seq: Sequence[Hashable]) -> Dict[Hashable, int]:
    """``{symbol: bitmask of its positions in seq}`` (bit i = position i)."""
    masks: Dict[Hashable, int] = {}
    for sym, bit in zip(seq, _pow2(len(seq))):
        if sym in masks:
            masks[sym] |= bit
        else:
            masks[sym] = bit
    return masks


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of a longest common subsequence of ``a`` and ``b``.

    Bit-parallel (Allison-Dix / Hyyrö): the DP column over the longer sequence
    is held as one Python integer ``v`` whose bit ``i`` is 0 exactly where the
    LCS length grows from row ``i`` to row ``i+1``; each symbol of the shorter
    sequence updates it with ``u = v & mask[symbol]; v = (v + u) | (v - u)``.
    Symbols absent from the longer sequence leave ``v`` unchanged and are
    skipped.  Cost: O(n) big-integer operations of m/64 words each, with O(m)
    memory, instead of the reference's O(m*n) table.  (Bits carried above bit
    m-1 never flow back down, so ``v`` is only masked at the end.)

    >>> lcs_length("ABCBDAB", "BDCABA")
    4
    >>> lcs_length([], ["x"])
    0
    """
    if len(a) < len(b):
        a, b = b, a
    n = len(a)
    if not len(b):
        return 0
    return _lcs_on_masks(_position_masks(a), n, b)


def _lcs_on_masks(masks: Dict[Hashable, int], rows: int, seq: Iterable[Hashable]) -> int:
    """:func:`lcs_length` of ``seq`` and the sequence of ``rows`` whose position masks are ``masks``.

    Rows that no symbol of ``seq`` matches (rougeLsum's guard rows, see
    :func:`_layout`) only ever get a carry through them and stay 1, so they
    add nothing to the count of 0 bits, which is the LCS length.
    """
    full = (1 << rows) - 1
    v = full
    get = masks.get
    for sym in seq:
        m = get(sym)
        if m is not None:
            u = v & m
            v = (v + u) | (v - u)
    return rows - _popcount(v & full)


def lcs_lengths(seq: Sequence[Hashable], others: Iterable[Sequence[Hashable]]) -> List[int]:
    """``[lcs_length(seq, other) for other in others]``, building the masks of ``seq`` once.

    The LCS length is symmetric, so ``seq`` can hold the masks whatever the
    lengths: scoring one text against several (MT-RAG's response against each
    passage) then costs one pass over each other sequence.

    >>> lcs_lengths("ABCBDAB", ["BDCABA", "", "BB"])
    [4, 0, 2]
    """
    n = len(seq)
    if not n:
        return [0 for _ in others]
    masks = _position_masks(seq)
    return [_lcs_on_masks(masks, n, other) for other in others]


def _lcs_walk(masks: Dict[Hashable, int], n_ref: int, can: Sequence[Hashable]) -> List[int]:
    """Indices into the reference sequence of the LCS the reference's backtrack picks.

    ``masks`` are the position masks of the reference sequence (length
    ``n_ref``).  The reference (``_backtrack_norec``) walks its DP table ``t``
    from ``(len(ref), len(can))``: on equal tokens it takes the diagonal and
    records ``i-1``; otherwise it moves left when ``t[i][j-1] > t[i-1][j]`` and
    up otherwise (ties go up).  Neighbouring cells differ by at most 1 and
    ``t[i][j]`` is their maximum there, so "left" happens exactly when
    ``t[i-1][j] < t[i][j]``, i.e. when bit ``i-1`` of the bit-parallel column
    ``j`` is 0.  Within one column the walk therefore goes up to the first row
    index ``k`` (from ``i-1`` down) where either the tokens are equal
    (diagonal: record ``k``) or the column has a 0 bit (move left from row
    ``k+1``); that ``k`` is the highest set bit of
    ``(match_mask | ~column) & (2**i - 1)``, the match taking precedence.
    A column whose token does not occur in the reference equals the previous
    column and has no match, so a run of them is crossed in one step.  Only
    the columns of shared tokens are computed and stored.
    """
    get = masks.get
    # masks (never 0) of the shared tokens of `can`, and their 1-based columns
    col_m: List[int] = list(filter(None, map(get, can)))
    out: List[int] = []
    if not col_m:
        return out
    col_j: List[int] = list(compress(count(1), map(get, can)))
    v = (1 << n_ref) - 1
    cols: List[int] = []
    append = cols.append
    for m in col_m:
        u = v & m
        v = (v + u) | (v - u)
        append(v)
    i = n_ref
    j = len(can)
    idx = len(cols) - 1
    while i > 0 and j > 0:
        below = (1 << i) - 1
        if idx >= 0 and col_j[idx] == j:
            hit = col_m[idx] & below
            zero = ~cols[idx] & below
            idx -= 1
            k_hit = hit.bit_length() - 1
            k_zero = zero.bit_length() - 1
            if k_hit >= 0 and k_hit >= k_zero:
                out.append(k_hit)
                i = k_hit
            elif k_zero >= 0:
                i = k_zero + 1
            else:
                break
            j -= 1
        else:
            # a column without a match: the vector of the last shared column before it
            if idx < 0:
                break  # all ones: the walk goes up to row 0
            k_zero = (~cols[idx] & below).bit_length() - 1
            if k_zero < 0:
                break
            i = k_zero + 1
            j = col_j[idx]  # the following unmatched columns only move left
    out.reverse()
    return out


def lcs_indices(ref: Sequence[Hashable], can: Sequence[Hashable]) -> List[int]:
    """Sorted indices into ``ref`` of one LCS, chosen as the reference does.

    Identical to ``rouge_score.rouge_scorer.lcs_ind(ref, can)`` (see
    :func:`_lcs_walk` for why the bit-parallel walk takes the same path).

    >>> lcs_indices(["a", "b", "c", "b"], ["b", "a", "b"])
    [0, 3]
    """
    if not ref or not can:
        return []
    return _lcs_walk(_position_masks(ref), len(ref), can)


# ---------------------------------------------------------------- the scores


def _fmeasure(precision: Number, recall: Number) -> float:
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def _ngram_counts(tokens: Sequence[Hashable], n: int) -> "Counter[Hashable]":
    if n == 1:
        return Counter(tokens)
    return Counter(zip(*[tokens[k:] for k in range(n)]))


def _overlap(a: Mapping[Hashable, int], b: Mapping[Hashable, int]) -> int:
    """``sum(min(a[g], b[g]))`` over the keys the two counts share."""
    if len(a) > len(b):
        a, b = b, a
    overlap = 0
    get = b.get
    for gram, cnt in a.items():
        other = get(gram)
        if other is not None:
            overlap += cnt if cnt < other else other
    return overlap


def _score_ngrams(
    target: Sequence[Hashable],
    prediction: Sequence[Hashable],
    n: int,
    counts: Optional[Tuple[Mapping[Hashable, int], Mapping[Hashable, int]]] = None,
) -> Score:
    """rougeN; ``counts`` are the two n-gram counts when the caller has them already."""
    tc, pc = counts if counts is not None else (_ngram_counts(target, n), _ngram_counts(prediction, n))
    overlap = _overlap(tc, pc)
    precision = overlap / max(len(prediction) - n + 1, 1)
    recall = overlap / max(len(target) - n + 1, 1)
    return Score(precision, recall, _fmeasure(precision, recall))


_ZERO = Score(0, 0, 0)
_new_score = tuple.__new__  # Score(p, r, f) without the Python-level __new__


LcsFn = Callable[[Sequence[Hashable], Sequence[Hashable]], int]


def _check_lcs(lcs: Optional[LcsFn]) -> LcsFn:
    if lcs is None:
        return lcs_length
    if not callable(lcs):
        raise ScoringError(f"lcs must be a function (a, b) -> int, got {type(lcs).__name__}", field="lcs")
    return lcs


def _score_lcs(target: Sequence[Hashable], prediction: Sequence[Hashable], lcs_fn: LcsFn) -> Score:
    if not target or not prediction:
        return _ZERO
    return _lcs_score(lcs_fn(target, prediction), len(target), len(prediction))


def _lcs_score(lcs: int, n_target: int, n_prediction: int) -> Score:
    """rougeL of an LCS length (both sides non-empty)."""
    precision = lcs / n_prediction
    recall = lcs / n_target
    if precision + recall > 0:
        return _new_score(Score, (precision, recall, 2 * precision * recall / (precision + recall)))
    return _new_score(Score, (precision, recall, 0.0))


def rouge_l_many(
    targets: Sequence[Sequence[Hashable]], prediction: Sequence[Hashable], *, lcs: Optional[LcsFn] = None
) -> List[Score]:
    """rougeL of ``prediction`` against each of ``targets`` (all already tokenized by :func:`tokenize`).

    The same Scores as ``score_tokens(t, prediction, rouge_types=["rougeL"], lcs=lcs)["rougeL"]``
    for each ``t``; with the built-in LCS the prediction's masks are built once
    (:func:`lcs_lengths`).

    >>> [s.fmeasure for s in rouge_l_many([["a", "b"], [], ["b", "c", "a"]], ["b", "a"])]
    [0.5, 0, 0.8]
    """
    if lcs is not None:
        lcs_fn = _check_lcs(lcs)
        return [_score_lcs(t, prediction, lcs_fn) for t in targets]
    if not prediction:
        return [_ZERO for _ in targets]
    n = len(prediction)
    return [_lcs_score(k, len(t), n) if t else _ZERO for t, k in zip(targets, lcs_lengths(prediction, targets))]


# --------------------------------------------------------- rougeLsum, packed

# Bit reversal of one byte, for _reverser.
_REV_BYTE = bytes(int(format(b, "08b")[::-1], 2) for b in range(256))
# "0"/"1" -> 0/1, to turn a binary numeral into an iterable of bits for compress().
_BIT01 = bytes.maketrans(b"01", b"\x00\x01")

#: Bits of the DP columns one packed union-LCS run may hold (W * L, see
#: :func:`_union_tokens`); larger inputs are cut into several runs.
_PACK_BITS = 1 << 24


def _reverser(nbytes: int) -> Callable[[int], int]:
    """``x -> x`` with its lowest ``8 * nbytes`` bits in reverse order."""
    frm = int.from_bytes

    def rev(x: int) -> int:
        return frm(x.to_bytes(nbytes, "little").translate(_REV_BYTE), "big")

    return rev


def _packed_union(
    layout: List[Optional[Hashable]],
    width: int,
    masks: Dict[Hashable, int],
    guards: int,
    cans: List[List[Hashable]],
) -> int:
    """The union LCS bits of every reference sentence with the candidate sentences ``cans``.

    ``layout`` is the reference text as one row per token with a ``None`` guard
    row below and above each sentence, ``width`` (a multiple of 8) rows long;
    ``masks`` maps each token to its rows, ``guards`` has the guard rows.  Each
    sentence is a *lane*; a *block* is a copy of all lanes; each candidate
    sentence goes into one block, several into one block one after the other
    (longest first, onto the block filled least), right-aligned so that every
    block ends at the last step ``L - 1`` (leading idle steps have no tokens).

    Forward (the same columns as :func:`lcs_length`, for every lane and block
    at once): column ``s`` is ``v`` after step ``s``, masked to the lane rows
    so that a carry out of a lane's top row dies in the guard above it; a
    block's lanes are set to all ones where a candidate sentence starts.

    Backward: the walk of :func:`_lcs_walk` in every lane of every block at
    once, with each lane's row index ``i`` held as the mask ``a`` of its rows
    ``< i``.  In one column it looks for the *highest* row below ``i`` that is
    a match or a 0 bit; the columns are therefore bit-reversed (:func:`_reverser`:
    row 0 of a lane becomes its top bit) so that the lowest set bit of every
    lane at once is ``h = z & ~(z - lb)``, where ``z`` has the lane's search
    bits plus the guard bit above the lane (``gr``: the borrow from the lane's
    lowest bit ``lb`` stops at the first set bit, the guard at the latest, so
    lanes never interfere) -- ``h`` has exactly one bit per lane, the guard
    when the lane has nothing left (the walk ends).  A match bit is recorded
    and leaves the rows above it (``i = k``); a 0 bit leaves the rows from it up
    (``i = k + 1``): ``a = (gr - h) ^ hit``, ``gr - h`` being each lane's bits
    from ``h`` up to its top.  Where a block's candidate sentence ends (the
    first step of its walk) its lanes are set whole again.

    Returns the recorded bits of all blocks OR-ed into the ``width`` rows of
    ``layout`` (bit ``p`` set: token ``layout[p]`` is in the union LCS of its
    sentence with some candidate sentence).
    """
    lens = list(map(len, cans))
    longest = max(lens)
    # enough blocks that each can be filled to about the longest sentence: the steps (the
    # longest fill) cost more than the wider integers (2026-11: 5% less than sum // longest)
    n_blocks = max(1, -(-sum(lens) // longest))
    fill = [0] * n_blocks
    blocks: List[List[List[Hashable]]] = [[] for _ in range(n_blocks)]
    for k in sorted(range(len(cans)), key=lens.__getitem__, reverse=True):
        b = fill.index(min(fill))
        blocks[b].append(cans[k])
        fill[b] += lens[k]
    steps = max(fill)
    nbytes = (width >> 3) * n_blocks
    row_bytes = width >> 3
    zero = bytes(row_bytes)
    as_bytes = {tok: m.to_bytes(row_bytes, "little") for tok, m in masks.items()}.get
    block_lanes = ((1 << width) - 1) ^ guards
    starts = [0] * steps  # forward: lanes set to all ones before step s
    ends = [0] * steps  # backward: lanes set whole before step s
    seqs: List[List[bytes]] = []
    shift = 0
    for bl, f in zip(blocks, fill):
        s = steps - f
        seq = [zero] * s
        lanes_b = block_lanes << shift
        for can in bl:
            starts[s] |= lanes_b
            seq.extend(map(as_bytes, can, repeat(zero)))
            s += len(can)
            ends[s - 1] |= lanes_b
        seqs.append(seq)
        shift += width
    frm = int.from_bytes
    joined = list(map(b"".join, zip(*seqs)))  # per step, the match rows of every block
    col_m = [frm(j, "little") for j in joined]
    m_flipped = b"".join(joined).translate(_REV_BYTE)  # bit-reversed, read like `flipped` below
    copies = 0
    for b in range(n_blocks):
        copies |= 1 << (b * width)
    lanes = block_lanes * copies
    v = lanes
    # per step, the bytes of the rows that stop the walk going up: matches and 0 bits of the column
    stops: List[bytes] = []
    append = stops.append
    for m, start in zip(col_m, starts):
        if start:
            v |= start
        if m:
            u = v & m
            v = ((v + u) | (v ^ u)) & lanes
            append(((lanes ^ v) | m).to_bytes(nbytes, "little"))
        else:
            append((lanes ^ v).to_bytes(nbytes, "little"))
    # all steps bit-reversed at once: step s is bytes [s * nbytes, (s + 1) * nbytes) of `flipped`
    flipped = b"".join(stops).translate(_REV_BYTE)
    rev = _reverser(nbytes)
    gr = rev((guards & (block_lanes >> 1)) * copies)  # the guard below each lane, reversed: above it
    lb = rev(((guards >> 1) & block_lanes) * copies)  # each lane's top row, reversed: its lowest bit
    a = 0
    found = 0
    hi = steps * nbytes
    for end, m in zip(reversed(ends), reversed(col_m)):
        lo = hi - nbytes
        if end:
            a |= rev(end)
        if a:
            z = (frm(flipped[lo:hi], "big") & a) | gr
            h = z & ~(z - lb)
            if m:
                hit = h & frm(m_flipped[lo:hi], "big")
                found |= hit
                a = (gr - h) ^ hit
            else:
                a = gr - h
        hi = lo
    out = 0
    if found:
        found = rev(found)
        block = (1 << width) - 1
        while found:
            out |= found & block
            found >>= width
    return out


#: A reference text as packed rows: ``(rows, width, masks, guards)``, see :func:`_layout`.
_Layout = Tuple[List[Optional[Hashable]], int, Dict[Hashable, int], int]


def _layout(ref_sents: List[List[Hashable]]) -> _Layout:
    """The rows of :func:`_packed_union`: ``None`` (a guard), the first sentence, ``None``, the
    next ..., padded with guards to a multiple of 8 rows; each token's rows; the guard rows."""
    rows: List[Optional[Hashable]] = [None]
    for ref in ref_sents:
        rows.extend(ref)
        rows.append(None)
    width = (len(rows) + 7) & ~7
    rows.extend(repeat(None, width - len(rows)))
    masks = _position_masks(rows)
    guards = masks.pop(None)
    return rows, width, masks, guards


def _layout_lcs(lay: _Layout, seq: Sequence[Hashable]) -> int:
    """:func:`lcs_length` of the layout's reference tokens and ``seq``, on the layout's masks
    (the guard rows match nothing, see :func:`_lcs_on_masks`)."""
    return _lcs_on_masks(lay[2], lay[1], seq)


def _walk_pairs(n_refs: int, can_lens: List[int]) -> bool:
    """True when walking each sentence pair (:func:`_lcs_walk`) is cheaper than packing them.

    A walk costs about 0.4 us per candidate token and reference sentence, a
    packed run about 1.6 us per step (the longest candidate sentence) plus
    100 us (CPython 3.11): a few long sentences are walked.  One reference
    sentence is always walked: packing then gains nothing across lanes, and a
    packed step does more big-integer operations than a walk's step.
    """
    return n_refs == 1 or n_refs * sum(can_lens) < 4 * max(can_lens) + 100


def _union_tokens(
    ref_sents: List[List[Hashable]], can_sents: List[List[Hashable]], lay: Optional[_Layout] = None
) -> List[Hashable]:
    """The tokens of each reference sentence's union LCS with all candidate sentences, in text order.

    The same multiset as ``[ref[i] for ref in ref_sents for i in sorted(union)]``
    with the unions of :func:`_lcs_walk` (the reference's ``_union_lcs``); the
    sentences are non-empty.  A few sentence pairs are walked one by one;
    otherwise :func:`_packed_union` does all sentence pairs at once, in runs of
    at most :data:`_PACK_BITS` column bits (a candidate sentence too long for
    one run is walked against each reference sentence).  ``lay`` is
    ``_layout(ref_sents)`` when the caller has it.
    """
    if _walk_pairs(len(ref_sents), list(map(len, can_sents))):
        out: List[Hashable] = []
        for ref in ref_sents:
            masks = _position_masks(ref)
            keys = masks.keys()
            picked: Set[int] = set()
            for can in can_sents:
                if not keys.isdisjoint(can):
                    picked.update(_lcs_walk(masks, len(ref), can))
            out.extend(ref[i] for i in sorted(picked))
        return out
    layout, width, masks, guards = lay if lay is not None else _layout(ref_sents)
    budget = max(1, _PACK_BITS // width)
    union = 0
    run: List[List[Hashable]] = []
    run_len = 0
    alone: List[List[Hashable]] = []
    for can in can_sents:
        if len(can) > budget:
            alone.append(can)
            continue
        if run_len + len(can) > budget:
            union |= _packed_union(layout, width, masks, guards, run)
            run, run_len = [], 0
        run.append(can)
        run_len += len(can)
    if run:
        union |= _packed_union(layout, width, masks, guards, run)
    if alone:
        base = 1
        for ref in ref_sents:
            ref_masks = _position_masks(ref)
            for can in alone:
                for i in _lcs_walk(ref_masks, len(ref), can):
                    union |= 1 << (base + i)
            base += len(ref) + 1
    if not union:
        return []
    bits = format(union, "b").encode("ascii").translate(_BIT01)[::-1]
    return list(compress(layout, bits))  # type: ignore[arg-type]


def _score_lsum(
    ref_sents: List[List[Hashable]],
    can_sents: List[List[Hashable]],
    m: int,
    n: int,
    can_count: Mapping[Hashable, int],
    lay: Optional[_Layout] = None,
) -> Score:
    """rougeLsum of non-empty token sentences; ``m``, ``n`` token totals, ``can_count`` the candidate's counts.

    The reference visits the union tokens sentence by sentence and counts a
    hit while both whole-text counts of the token are positive, decrementing
    both.  The reference count is always positive there (a token's union
    positions are distinct positions of the reference, at most its count, and
    each visit decrements at most once), so a token ``t`` gives
    ``min(can_count[t], union_count[t])`` hits, in any order.
    """
    if not m or not n:
        return Score(0, 0, 0)
    hits = _overlap(Counter(_union_tokens(ref_sents, can_sents, lay)), can_count)
    recall = hits / m
    precision = hits / n
    return Score(precision, recall, _fmeasure(precision, recall))


_NGRAM_TYPE = re.compile(r"rouge[0-9]$")


@lru_cache(maxsize=256)
def _parse_types(rouge_types: Tuple[str, ...]) -> Tuple[Tuple[str, int], ...]:
    parsed = []
    for name in rouge_types:
        if not isinstance(name, str):
            raise ScoringError(f"invalid rouge type: {name!r}", field="rouge_types")
        if name == "rougeL":
            parsed.append((name, -1))
        elif name == "rougeLsum":
            parsed.append((name, -2))
        elif _NGRAM_TYPE.match(name):
            n = int(name[5:])
            if n <= 0:
                raise ScoringError(f"rougen requires positive n: {name}", field="rouge_types")
            parsed.append((name, n))
        else:
            raise ScoringError(
                f"invalid rouge type: {name!r} (expected rouge1..rouge9, rougeL or rougeLsum)",
                field="rouge_types",
            )
    return tuple(parsed)


@lru_cache(maxsize=256)
def _kinds(parsed: Tuple[Tuple[str, int], ...]) -> Tuple[bool, bool, bool]:
    """``(rougeLsum asked, another type asked, rougeL asked)``."""
    kinds = {n for _, n in parsed}
    return -2 in kinds, bool(kinds - {-2}), -1 in kinds


def _parsed(rouge_types: Iterable[str]) -> Tuple[Tuple[str, int], ...]:
    names = tuple(rouge_types)
    try:
        return _parse_types(names)
    except TypeError:  # an unhashable item: not a valid name anyway
        bad = next(n for n in names if not isinstance(n, str))
        raise ScoringError(f"invalid rouge type: {bad!r}", field="rouge_types") from None


def validate_rouge_types(rouge_types: Iterable[str]) -> List[str]:
    """Check rouge type names, raising :class:`ScoringError` on the first bad one.

    The reference raises ``ValueError`` lazily, in the middle of scoring; here
    every name is checked before any work.

    >>> validate_rouge_types(["rouge1", "rougeLsum"])
    ['rouge1', 'rougeLsum']
    >>> validate_rouge_types(["rouge10"])
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: rouge_types: invalid rouge type: 'rouge10' (expected rouge1..rouge9, ...
    """
    if isinstance(rouge_types, str):
        raise ScoringError("rouge_types must be a list of names, not a string", field="rouge_types")
    names = tuple(rouge_types)
    _parsed(names)
    return list(names)


def _sentences(text: str, stem: bool, tokenizer: str) -> List[List[Any]]:
    """rougeLsum's sentences: the tokens of each line of ``text.split("\\n")``, token-less ones dropped.

    (A sentence without tokens adds nothing to a rougeLsum score.)  With the
    reference tokenizer the whole text is mapped at once: lower-casing and the
    byte tables act on each character alone and ``"\\n"`` separates tokens,
    so each line gets the tokens it gets when tokenized alone.
    """
    if tokenizer != "reference":
        return [toks for toks in (_tokens(line, stem, tokenizer) for line in text.split("\n") if line) if toks]
    lines = _ref_bytes_nl(text).split(b"\n")
    if not stem:
        return [toks for toks in map(bytes.split, lines) if toks]
    get = _STEMS.__getitem__
    out: List[List[Any]] = []
    for line in lines:
        toks = list(map(get, line.decode("ascii").split()))
        if "" in toks:
            toks = [t for t in toks if t]
        if toks:
            out.append(toks)
    return out


def score(
    target: str,
    prediction: str,
    *,
    rouge_types: Sequence[str],
    use_stemmer: bool = False,
    tokenizer: str = "reference",
    lcs: Optional[LcsFn] = None,
) -> Dict[str, Score]:
    """Score ``prediction`` against ``target`` (reference text first).

    Same as ``RougeScorer(rouge_types, use_stemmer).score(target, prediction)``
    of rouge-score 0.1.2: a dict in the order of ``rouge_types`` (a repeated
    name keeps its first position).  The positional order ``(target,
    prediction)`` is rouge-score's, on purpose: this is a drop-in replacement
    for it, so code written for rouge-score keeps its meaning.  (Elsewhere in
    rageval-min the prediction comes first; pass ``target=`` and
    ``prediction=`` by keyword to make a call unambiguous.)  Raises :class:`ScoringError` for unknown
    types, an unknown tokenizer or non-string texts.

    ``lcs`` replaces :func:`lcs_length` for rougeL: any exact function
    ``(a, b) -> int`` over the token lists (opaque hashable tokens, ``bytes``
    or ``str``), such as ``rageval_min_extras.rapidfuzz_lcs.lcs_length``.
    rougeLsum always uses the built-in walk (it needs the reference's choice
    of LCS, not only its length).

    >>> score("a b c d", "a c d e", rouge_types=["rouge2", "rougeL"])["rougeL"]
    Score(precision=0.75, recall=0.75, fmeasure=0.75)
    >>> score(prediction="a b", target="a b c d", rouge_types=["rouge1"])["rouge1"]
    Score(precision=1.0, recall=0.5, fmeasure=0.6666666666666666)
    """
    if isinstance(rouge_types, str):
        raise ScoringError("rouge_types must be a list of names, not a string", field="rouge_types")
    parsed = _parsed(rouge_types)
    if tokenizer != "reference":
        _check_tokenizer(tokenizer)
    if not isinstance(target, str):
        raise ScoringError(f"expected a string, got {type(target).__name__}", field="target")
    if not isinstance(prediction, str):
        raise ScoringError(f"expected a string, got {type(prediction).__name__}", field="prediction")
    lcs_fn = _check_lcs(lcs)
    stem = bool(use_stemmer)
    t_tok: Optional[List[Any]] = None
    p_tok: Optional[List[Any]] = None
    t_sents: Optional[List[List[Any]]] = None
    p_sents: Optional[List[List[Any]]] = None
    p_count: Optional["Counter[Hashable]"] = None
    unigrams: Optional[Tuple["Counter[Hashable]", "Counter[Hashable]"]] = None
    lay: Optional[_Layout] = None
    want_lsum, want_other, want_l = _kinds(parsed)
    if want_lsum:
        t_sents = _sentences(target, stem, tokenizer)
        p_sents = _sentences(prediction, stem, tokenizer)
        if tokenizer == "reference" and want_other:
            # the whole-text tokens are the lines' tokens one after the other
            t_tok = list(chain.from_iterable(t_sents))
            p_tok = list(chain.from_iterable(p_sents))
            if lcs is None and t_sents and p_sents and want_l:
                # rougeL on rougeLsum's masks of the target (the same rows, with guards)
                lay = _layout(t_sents)
                lay_lcs = lay
                lcs_fn = lambda a, b: _layout_lcs(lay_lcs, b)  # noqa: E731
    result: Dict[str, Score] = {}
    for name, n in parsed:
        if n == -2:
            assert t_sents is not None and p_sents is not None
            if p_tok is None:  # no whole-text tokens (yet): count the lines' tokens
                lines_count = Counter(chain.from_iterable(p_sents))
            else:  # the whole-text tokens are the lines' tokens
                if p_count is None:
                    p_count = Counter(p_tok)
                lines_count = p_count
            m = sum(map(len, t_sents))
            result[name] = _score_lsum(t_sents, p_sents, m, sum(lines_count.values()), lines_count, lay)
            continue
        if t_tok is None or p_tok is None:
            t_tok = _tokens(target, stem, tokenizer)
            p_tok = _tokens(prediction, stem, tokenizer)
        if n == -1:
            result[name] = _score_lcs(t_tok, p_tok, lcs_fn)
        elif n == 1:
            if unigrams is None:
                if p_count is None:
                    p_count = Counter(p_tok)
                unigrams = (Counter(t_tok), p_count)
            result[name] = _score_ngrams(t_tok, p_tok, 1, unigrams)
        else:
            result[name] = _score_ngrams(t_tok, p_tok, n)
    return result


def score_tokens(
    target_tokens: Sequence[str],
    prediction_tokens: Sequence[str],
    *,
    rouge_types: Sequence[str],
    lcs: Optional[LcsFn] = None,
) -> Dict[str, Score]:
    """Like :func:`score` on texts already tokenized by :func:`tokenize`.

    Only rouge1..rouge9 and rougeL (rougeLsum needs the sentence split of the
    raw text).  Useful to tokenize a long passage once and score many
    predictions against it.

    >>> score_tokens(["a", "b"], ["b"], rouge_types=["rougeL"])
    {'rougeL': Score(precision=1.0, recall=0.5, fmeasure=0.6666666666666666)}
    """
    if isinstance(rouge_types, str):
        raise ScoringError("rouge_types must be a list of names, not a string", field="rouge_types")
    lcs_fn = _check_lcs(lcs)
    result: Dict[str, Score] = {}
    for name, n in _parsed(rouge_types):
        if n == -2:
            raise ScoringError("rougeLsum needs the raw text; use score()", field="rouge_types")
        if n == -1:
            result[name] = _score_lcs(target_tokens, prediction_tokens, lcs_fn)
        else:
            result[name] = _score_ngrams(target_tokens, prediction_tokens, n)
    return result


def score_multi(
    targets: Sequence[str],
    prediction: str,
    *,
    rouge_types: Sequence[str],
    use_stemmer: bool = False,
    tokenizer: str = "reference",
    lcs: Optional[LcsFn] = None,
) -> Dict[str, Score]:
    """Best score over several references, per rouge type.

    Same as ``RougeScorer.score_multi(targets, prediction)``: for each type the
    whole :class:`Score` of the target with the largest F-measure, the *first*
    one on ties (``np.argmax``).  The reference crashes on an empty
    ``targets``; this raises :class:`ScoringError`.

    >>> score_multi(["a b", "a c"], "a c", rouge_types=["rouge1"])["rouge1"].fmeasure
    1.0
    """
    if isinstance(targets, str):
        raise ScoringError("targets must be a list of strings, not a string", field="targets")
    targets = list(targets)
    if not targets:
        raise ScoringError("score_multi needs at least one target", field="targets")
    per_target = [
        score(t, prediction, rouge_types=rouge_types, use_stemmer=use_stemmer, tokenizer=tokenizer, lcs=lcs)
        for t in targets
    ]
    best: Dict[str, Score] = {}
    for name in per_target[0]:
        top = per_target[0][name]
        for scores in per_target[1:]:
            cand = scores[name]
            if cand.fmeasure > top.fmeasure:
                top = cand
        best[name] = top
    return best


# ----------------------------------------------------------------- signature

#: The family name (as on the command line).
FAMILY = "rouge"

#: The upstream this family mirrors (rouge-score 0.1.2 = this commit's ``rouge/`` folder).
REFERENCE = ROUGE_REF

#: Opt-in variants (each changes numbers and is recorded in the signature).
VARIANTS = (UNICODE_VARIANT,)


def check_variants(variants: Iterable[str]) -> Tuple[str, ...]:
    """The sorted, de-duplicated variant names; an unknown one is a ScoringError.

    >>> check_variants(["unicode_tokens", "unicode_tokens"])
    ('unicode_tokens',)
    """
    names = tuple(sorted(set(variants)))
    bad = [v for v in names if v not in VARIANTS]
    if bad:
        raise ScoringError(f"unknown rouge variant(s): {', '.join(bad)}; known: {', '.join(VARIANTS)}")
    return names


def rouge_variants(*, tokenizer: str = "reference") -> List[str]:
    """Variant names implied by the options (empty = reference parity)."""
    _check_tokenizer(tokenizer)
    return [UNICODE_VARIANT] if tokenizer == "unicode" else []


def signature_params(
    *,
    rouge_types: Optional[Sequence[str]] = None,
    use_stemmer: bool = False,
    tokenizer: str = "reference",
    backend: str = "stdlib",
) -> List[Tuple[str, object]]:
    """The signature parameters of a ROUGE computation, in the family's fixed order.

    ``backend`` is the backend's label (``stdlib``, ``rouge-score``,
    ``rapidfuzz-<version>``); ``stdlib`` is not written.

    >>> signature_params(rouge_types=["rougeL"], use_stemmer=True)
    [('rouge_score', '0.1.2'), ('types', 'rougeL'), ('stem', True), ('stemmer', 'nltk-porter-3.10.4'), \
('tokenizer', 'reference')]
    """
    _check_tokenizer(tokenizer)
    params: List[Tuple[str, object]] = [("rouge_score", "0.1.2")]
    if rouge_types is not None:
        names = validate_rouge_types(rouge_types)
        params.append(("types", ",".join(n.rstrip("\n") for n in names)))
    params.append(("stem", bool(use_stemmer)))
    if use_stemmer:
        params.append(("stemmer", STEMMER_ID))
    params.append(("tokenizer", tokenizer))
    if backend != "stdlib":
        params.append(("backend", backend))
    return params


def signature(*, variants: Sequence[str] = (), params: Sequence[Tuple[str, object]] = ()) -> str:
    """The result signature: ``variants`` and ``params`` (see :func:`signature_params`) composed.

    >>> signature(params=signature_params(rouge_types=["rougeL"], use_stemmer=True))  # doctest: +ELLIPSIS
    'rageval_min:...|family=rouge|ref=google-research/google-research@61ce9f0|variants=none|rouge_score=0.1.2|\
types=rougeL|stem=true|stemmer=nltk-porter-3.10.4|tokenizer=reference'
    >>> signature(variants=rouge_variants(tokenizer="unicode"), params=signature_params(tokenizer="unicode"))
    ... # doctest: +ELLIPSIS
    '...|variants=unicode_tokens|rouge_score=0.1.2|stem=false|tokenizer=unicode'
    """
    return make_signature(FAMILY, REFERENCE, check_variants(variants), params)


# ------------------------------------------------------------------ backends


#: ``--backend`` names: the built-in engine, rapidfuzz's LCS (``fast`` extra), the official package.
BACKENDS = ("stdlib", "rapidfuzz", "rouge-score")

#: ``(targets, prediction) -> {type: Score}``: one record's scores (best over several targets).
ScoreFn = Callable[[List[str], str], Dict[str, Score]]


def rapidfuzz_lcs() -> Tuple[LcsFn, str]:
    """The ``fast`` extra's exact LCS function and its signature name (``rapidfuzz-<version>``).

    Raises :class:`ScoringError` with the pip command when rapidfuzz is missing.
    """
    from .._extras import load_extra

    mod = load_extra("fast")
    mod.check_backend()
    return mod.lcs_length, "rapidfuzz-" + mod.rapidfuzz_version()


def lcs_backend(backend: str) -> Tuple[Optional[LcsFn], str]:
    """The LCS function of ``--backend`` (None: the built-in one) and its signature label.

    The label is the backend's name, except ``rapidfuzz-<version>`` for rapidfuzz.
    """
    if backend == "rapidfuzz":
        return rapidfuzz_lcs()
    return None, backend


def make_scorer(
    rouge_types: Sequence[str],
    *,
    use_stemmer: bool = False,
    tokenizer: str = "reference",
    backend: str = "stdlib",
) -> Tuple[ScoreFn, str]:
    """The scoring function of one backend (see :data:`BACKENDS`) and its signature label.

    ``rouge-score`` runs the official package through the ``rouge`` extra
    (reference tokenizer only); ``rapidfuzz`` is the built-in engine with the
    ``fast`` extra's LCS length for rougeL.  One target is scored with
    :func:`score`, several with :func:`score_multi`.
    """
    names = validate_rouge_types(rouge_types)
    _check_tokenizer(tokenizer)
    if backend not in BACKENDS:
        raise ScoringError(f"unknown backend {backend!r} (expected one of: {', '.join(BACKENDS)})", field="backend")
    if backend == "rouge-score":
        if tokenizer != "reference":
            raise ScoringError("the rouge-score backend has no unicode tokenizer", field="backend")
        from .._extras import load_extra

        official: ScoreFn = load_extra("rouge").make_scorer(names, use_stemmer=use_stemmer)
        return official, backend
    lcs, label = lcs_backend(backend)

    def builtin(targets: List[str], prediction: str) -> Dict[str, Score]:
        if len(targets) == 1:
            return score(
                targets[0], prediction, rouge_types=names, use_stemmer=use_stemmer, tokenizer=tokenizer, lcs=lcs
            )
        return score_multi(
            targets, prediction, rouge_types=names, use_stemmer=use_stemmer, tokenizer=tokenizer, lcs=lcs
        )

    return builtin, label


# ------------------------------------------------------- records and item rows

#: Key of the 1-based line number (position in a JSON array) in an item row
#: whose record has no ``id``.
LINE_KEY = "line"

_PARTS = ("precision", "recall", "fmeasure")


def check_record(record: Mapping[str, Any]) -> Tuple[List[str], str]:
    """``(targets, prediction)`` of one input record; a bad record is a ScoringError naming the field.

    A record has ``prediction`` (a string) and either ``reference`` (a string)
    or ``references`` (a non-empty list of strings), not both.

    >>> check_record({"prediction": "a", "references": ["b", "c"]})
    (['b', 'c'], 'a')
    >>> check_record({"prediction": "a"})
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: reference: missing (give reference, a string, or references, a list)
    """
    pred = record.get("prediction")
    if not isinstance(pred, str):
        what = "missing" if "prediction" not in record else f"expected a string, got {type(pred).__name__}"
        raise ScoringError(what, field="prediction")
    if "references" in record and "reference" in record:
        raise ScoringError("give either reference or references, not both", field="references")
    if "references" in record:
        refs = record["references"]
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) for r in refs):
            raise ScoringError("references must be a non-empty list of strings", field="references")
        return list(refs), pred
    ref = record.get("reference")
    if not isinstance(ref, str):
        what = (
            "missing (give reference, a string, or references, a list)"
            if "reference" not in record
            else f"expected a string, got {type(ref).__name__}"
        )
        raise ScoringError(what, field="reference")
    return [ref], pred


def _type_keys(rouge_types: Sequence[str]) -> List[Tuple[str, str]]:
    """``(type as given, canonical name)`` per distinct type, in first-seen order.

    The canonical name is the type without surrounding whitespace (the
    reference accepts ``"rouge1\\n"`` as ``rouge1``); a repeated type counts once.
    """
    out: Dict[str, str] = {}
    for name in rouge_types:
        out.setdefault(name.strip(), name)
    return [(raw, key) for key, raw in out.items()]


def metric_names(rouge_types: Sequence[str]) -> List[str]:
    """The gateable names of a ``rouge`` report: ``records``, then ``TYPE.precision|recall|fmeasure``.

    The per-type names are also the metric keys of an item row.

    >>> metric_names(["rougeL"])
    ['records', 'rougeL.precision', 'rougeL.recall', 'rougeL.fmeasure']
    """
    names = validate_rouge_types(rouge_types)
    return ["records"] + [f"{key}.{part}" for _, key in _type_keys(names) for part in _PARTS]


@lru_cache(maxsize=64)
def _row_spec(rouge_types: Tuple[str, ...]) -> Tuple[Tuple[str, str, str, str], ...]:
    """``(type as given, "KEY.precision", "KEY.recall", "KEY.fmeasure")`` per :func:`_type_keys` entry."""
    return tuple((raw, key + ".precision", key + ".recall", key + ".fmeasure") for raw, key in _type_keys(rouge_types))


def _item_row(
    record: Mapping[str, Any], line: Optional[int], scores: Mapping[str, Score], keys: Sequence[Tuple[str, str]]
) -> ItemRow:
    row: ItemRow = {"id": record["id"]} if "id" in record else {LINE_KEY: line}
    for raw, key in keys:
        s = scores[raw]
        row[key + ".precision"] = s.precision
        row[key + ".recall"] = s.recall
        row[key + ".fmeasure"] = s.fmeasure
    return row


def _fast_row(
    record: Mapping[str, Any],
    line: Optional[int],
    scores: Mapping[str, Score],
    spec: Tuple[Tuple[str, str, str, str], ...],
) -> ItemRow:
    """:func:`_item_row` with the key names made once (:func:`_row_spec`)."""
    row: ItemRow = {"id": record["id"]} if "id" in record else {LINE_KEY: line}
    for raw, kp, kr, kf in spec:
        row[kp], row[kr], row[kf] = scores[raw]
    return row


@lru_cache(maxsize=8)
def _scorer(rouge_types: Tuple[str, ...], use_stemmer: bool, tokenizer: str, backend: str) -> ScoreFn:
    """The backend's scoring function, built once per process (worker processes build their own)."""
    return make_scorer(rouge_types, use_stemmer=use_stemmer, tokenizer=tokenizer, backend=backend)[0]


def _record_item(
    task: Tuple[Any, ...], *, rouge_types: Tuple[str, ...], use_stemmer: bool, tokenizer: str, backend: str
) -> Tuple[Optional[ItemRow], Optional[Tuple[Any, ...]]]:
    """One step of :func:`score_file` (picklable): ``(row, None)``, or ``(None, problem)`` in input order."""
    if task[0] == "reader":
        return None, task
    _, line, rec = task
    try:
        targets, prediction = check_record(rec)
    except ScoringError as exc:
        return None, ("check", exc.msg, line, exc.field)
    try:
        scores = _scorer(rouge_types, use_stemmer, tokenizer, backend)(targets, prediction)
    except ScoringError as exc:
        return None, ("score", exc.msg, line, exc.field)
    return _fast_row(rec, line, scores, _row_spec(rouge_types)), None


class _NoAdd:
    """An accumulator stand-in for :func:`accumulate_items`: score_file adds the rows itself."""

    def add(self, row: ItemRow) -> None:
        pass


def score_item(
    record: Mapping[str, Any],
    *,
    rouge_types: Sequence[str],
    use_stemmer: bool = False,
    tokenizer: str = "reference",
    lcs: Optional[LcsFn] = None,
    line: Optional[int] = None,
) -> ItemRow:
    """The item row of one record (see :func:`check_record`), scored by the built-in engine.

    A flat dict: the record's ``id`` when it has one, else its 1-based
    ``line`` number (``line=``; :data:`LINE_KEY`), then ``TYPE.precision``,
    ``TYPE.recall`` and ``TYPE.fmeasure`` for each distinct type, with the
    reference's values and types (int zeros for rougeL/rougeLsum on an empty
    side).  Several references give the best one per type (:func:`score_multi`).

    >>> score_item({"id": "a", "prediction": "a b c", "reference": "a b d"}, rouge_types=["rouge1"])
    {'id': 'a', 'rouge1.precision': 0.6666666666666666, 'rouge1.recall': 0.6666666666666666, \
'rouge1.fmeasure': 0.6666666666666666}
    >>> score_item({"prediction": "", "reference": "x"}, rouge_types=["rougeL"], line=3)
    {'line': 3, 'rougeL.precision': 0, 'rougeL.recall': 0, 'rougeL.fmeasure': 0}
    """
    names = validate_rouge_types(rouge_types)
    targets, prediction = check_record(record)
    if len(targets) == 1:
        scores = score(targets[0], prediction, rouge_types=names, use_stemmer=use_stemmer, tokenizer=tokenizer, lcs=lcs)
    else:
        scores = score_multi(
            targets, prediction, rouge_types=names, use_stemmer=use_stemmer, tokenizer=tokenizer, lcs=lcs
        )
    return _item_row(record, line, scores, _type_keys(names))


def reference_json(item: Mapping[str, Any], rouge_types: Sequence[str]) -> Dict[str, Dict[str, Any]]:
    """One item row in rouge-score's nested shape, ``{TYPE: {"precision", "recall", "fmeasure"}}``.

    This is the line ``rageval-min rouge`` writes per record without ``--summary``.

    >>> reference_json({"id": 1, "rougeL.precision": 0, "rougeL.recall": 0, "rougeL.fmeasure": 0}, ["rougeL"])
    {'rougeL': {'precision': 0, 'recall': 0, 'fmeasure': 0}}
    """
    return {
        raw: {"precision": item[kp], "recall": item[kr], "fmeasure": item[kf]}
        for raw, kp, kr, kf in _row_spec(tuple(rouge_types))
    }


# ---------------------------------------------------------------- accumulator

_ALL_TYPES = [f"rouge{n}" for n in range(1, 10)] + ["rougeL", "rougeLsum"]


@register_accumulator
class RougeAccumulator(Accumulator):
    """The means of the item rows: ``{"records": n, "mean": {TYPE: {precision, recall, fmeasure}}}``.

    Each mean is a sequential float sum in input order (``0.0 + v1 + v2 ...``)
    divided by the count, as the CLI has always computed it.  A sequential
    sum cannot be merged from partial sums exactly, so the state keeps every
    value (in input order) and merging continues the left part's running sums
    over the right part's values: the state grows with the input (8 bytes per
    value in memory).  :func:`score_file`, which never merges, builds its
    accumulator with ``keep_values=False`` and runs in constant memory; such a
    state can only be the *first* part of a merge.

    ``backend`` is the backend's signature label (``stdlib``, ``rouge-score``,
    ``rapidfuzz-<version>``).
    """

    FAMILY = FAMILY
    COMMAND = "score"
    DIRECTIONS = {f"{t}.{part}": "higher" for t in _ALL_TYPES for part in _PARTS}

    def __init__(
        self,
        *,
        rouge_types: Sequence[str],
        use_stemmer: bool = False,
        tokenizer: str = "reference",
        backend: str = "stdlib",
        keep_values: bool = True,
    ) -> None:
        names = validate_rouge_types(rouge_types)
        _check_tokenizer(tokenizer)
        if not isinstance(backend, str):
            raise ScoringError(f"backend must be a string, got {type(backend).__name__}", field="backend")
        super().__init__(rouge_types=names, use_stemmer=bool(use_stemmer), tokenizer=tokenizer, backend=backend)
        self._keys = _type_keys(names)
        self._metrics = [f"{key}.{part}" for _, key in self._keys for part in _PARTS]
        self.count = 0
        self.sums: List[float] = [0.0] * len(self._metrics)
        self.values: Optional[List["array[float]"]] = [array("d") for _ in self._metrics] if keep_values else None

    @classmethod
    def metric_names(cls, *, rouge_types: Sequence[str], **options: Any) -> List[str]:
        """The gateable names (they depend only on ``rouge_types``)."""
        return metric_names(rouge_types)

    def add(self, item: ItemRow) -> None:
        self.count += 1
        sums = self.sums
        values = self.values
        if values is None:  # the same additions, in C
            self.sums = list(map(add, sums, map(item.__getitem__, self._metrics)))
            return
        for i, name in enumerate(self._metrics):
            v = item[name]
            sums[i] += v
            if values is not None:
                values[i].append(v)

    def _data(self) -> Dict[str, Any]:
        return {
            "count": self.count,
            "sums": list(self.sums),
            "values": None if self.values is None else [list(v) for v in self.values],
        }

    def _load(self, data: Mapping[str, Any]) -> None:
        sums = [float(s) for s in data["sums"]]
        values = data["values"]
        if len(sums) != len(self._metrics) or (values is not None and len(values) != len(self._metrics)):
            raise ValueError("the state does not match the rouge types")
        self.count = int(data["count"])
        self.sums = sums
        self.values = None if values is None else [array("d", map(float, v)) for v in values]

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, RougeAccumulator)
        if other.values is None:
            raise ScoringError("a rouge state that kept no values (keep_values=False) can only be the first part")
        for i, vals in enumerate(other.values):
            total = self.sums[i]
            for v in vals:
                total += v
            self.sums[i] = total
            if self.values is not None:
                self.values[i].extend(vals)
        self.count += other.count

    def finalize(self) -> Report:
        n = self.count
        if not n:
            raise ScoringError("no records to average")
        p = self.params
        means: Dict[str, Any] = {}
        metrics: Dict[str, Any] = {"records": n}
        for j, (raw, key) in enumerate(self._keys):
            sums = self.sums[3 * j : 3 * j + 3]
            means[raw] = {part: s / n for part, s in zip(_PARTS, sums)}
            for part, s in zip(_PARTS, sums):
                metrics[f"{key}.{part}"] = s / n
        sig = signature(
            variants=rouge_variants(tokenizer=p["tokenizer"]),
            params=signature_params(
                rouge_types=p["rouge_types"],
                use_stemmer=p["use_stemmer"],
                tokenizer=p["tokenizer"],
                backend=p["backend"],
            ),
        )
        return Report(
            family=FAMILY,
            signature=sig,
            result={"records": n, "mean": means},
            metrics=metrics,
            diagnostics=self.notes(),
        )


# ------------------------------------------------------------------ the file


def score_file(
    path: str,
    *,
    rouge_types: Sequence[str],
    use_stemmer: bool = False,
    tokenizer: str = "reference",
    backend: str = "stdlib",
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """The ``rouge`` command: score every record of ``path`` (JSONL, JSON, CSV or TSV) into a Report.

    ``on_item`` receives each item row (see :func:`score_item`) in input order.
    Bad records are reported together (file, line and field) after the file
    is read; after the first bad record nothing more is scored.  A file
    without a valid record is an input error.  ``backend`` is one of
    :data:`BACKENDS` (see :func:`make_scorer`); its label is in the signature.
    """
    if isinstance(rouge_types, str):
        raise ScoringError("rouge_types must be a list of names, not a string", field="rouge_types")
    names = validate_rouge_types(rouge_types)
    _, label = make_scorer(names, use_stemmer=use_stemmer, tokenizer=tokenizer, backend=backend)
    # A state --emit-partial writes must keep its values to merge exactly as a later shard.
    acc = RougeAccumulator(
        rouge_types=names,
        use_stemmer=use_stemmer,
        tokenizer=tokenizer,
        backend=label,
        keep_values=partial_requested(),
    )
    problems = Problems()
    item = functools.partial(
        _record_item, rouge_types=tuple(names), use_stemmer=use_stemmer, tokenizer=tokenizer, backend=backend
    )

    def records() -> Iterator[Tuple[Any, ...]]:
        try:
            for line, rec in iter_records(path):
                yield ("record", line, rec)
        except ScoringError as exc:  # the reader's own problems (bad JSON, not an object, ...)
            yield ("reader", exc)

    def outcome(extra: Tuple[Any, ...]) -> None:
        # Problems are handled here, in input order, exactly as one pass does: after the first
        # problem, records are still checked but no longer scored, and reading stops at the limit.
        kind = extra[0]
        if kind == "reader":
            if not problems:
                raise extra[1]
            problems.add_error(extra[1])
        elif kind == "check" or (kind == "score" and not problems):
            problems.add(extra[1], path=path, line=extra[2], field=extra[3])
        if problems.full:
            problems.raise_if_any()

    def collect(row: ItemRow) -> None:
        if not problems:
            if on_item is not None:
                on_item(row)
            acc.add(row)

    accumulate_items(_NoAdd(), item, records(), on_item=collect, on_result=outcome)
    problems.raise_if_any()
    if not acc.count:
        raise ScoringError("holds no records to score", path=path)
    return finish(acc)


#: rouge has no reference-specific report format (the per-pair lines are not a report).
REPORT_FORMATS: Dict[str, Any] = {}
