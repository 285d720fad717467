"""Mirrors google-research/google-research@61ce9f0:rouge/rouge_scorer.py: ROUGE as ``rouge-score`` 0.1.2 scores it.

Reference: ``rouge_score.rouge_scorer.RougeScorer(rouge_types, use_stemmer)
.score(target, prediction)``, i.e.
``google-research/google-research@61ce9f0:rouge/rouge_scorer.py`` (the source
of rouge-score 0.1.2), with NLTK 3.10.4's ``PorterStemmer`` in its default mode
as the stemmer.  Every number is the same
IEEE double, and the same ``int``/``float`` type, as the reference's.

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

The rest of the family: the tokens come from ``tokenizers.py`` (upstream ``tokenize.py`` and
``tokenizers.py``), the LCS kernel is ``lcs.py``, :class:`Score` is ``scoring.py``, the
``--backend`` choice ``backends.py``, and the ``rouge`` command's records, item rows,
accumulator and :func:`~rageval_min.rouge.accumulator.score_file` are ``accumulator.py``.

>>> s = score("The cat sat on the mat.", "the cat was on the mat", rouge_types=["rouge1", "rougeL"])
>>> s["rouge1"]
Score(precision=0.8333333333333334, recall=0.8333333333333334, fmeasure=0.8333333333333334)
>>> score("", "anything", rouge_types=["rougeL", "rouge2"])
{'rougeL': Score(precision=0, recall=0, fmeasure=0), 'rouge2': Score(precision=0.0, recall=0.0, fmeasure=0.0)}
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from itertools import chain, compress, repeat

from .._signature import make_signature
from .._speedups_loader import kernels
from ..errors import ScoringError
from ..porter import STEMMER_ID
from .lcs import _lcs_on_masks, _lcs_walk, _position_masks, lcs_length, lcs_lengths
from .scoring import _ZERO, Score, _fmeasure, _new_score
from .tokenizers import UNICODE_VARIANT, _check_tokenizer, _sentences, _tokens, tokenize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Hashable, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

__all__ = [
    "FAMILY",
    "REFERENCE",
    "ROUGE_REF",
    "VARIANTS",
    "check_variants",
    "rouge_l_counts",
    "rouge_l_many",
    "rouge_l_texts",
    "rouge_variants",
    "score",
    "score_multi",
    "score_tokens",
    "signature",
    "signature_params",
    "validate_rouge_types",
]

#: The reference implementation (``rouge-score`` 0.1.2 = this commit's ``rouge/``).
ROUGE_REF = "google-research/google-research@61ce9f0"


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


if TYPE_CHECKING:
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


# Bit reversal of one byte, for _reverser.
_REV_BYTE = bytes(int(format(b, "08b")[::-1], 2) for b in range(256))
# "0"/"1" -> 0/1, to turn a binary numeral into an iterable of bits for compress().
_BIT01 = bytes.maketrans(b"01", b"\x00\x01")

#: Bits of the DP columns one packed union-LCS run may hold (W * L, see
#: :func:`_union_tokens`); larger inputs are cut into several runs.
_PACK_BITS = 1 << 24


def rouge_l_texts(
    targets: Sequence[str], prediction: str, *, tokenizer: str = "reference", lcs: Optional[LcsFn] = None
) -> List[Score]:
    """:func:`rouge_l_many` of the texts: ``rouge_l_many([tokenize(t) for t in targets], tokenize(prediction))``.

    With the reference tokenizer and the built-in LCS the C kernels (when built) tokenize and
    compute the LCS lengths without making the tokens.

    >>> [s.fmeasure for s in rouge_l_texts(["A b.", "", "b, c a"], "b a")]
    [0.5, 0, 0.8]
    """
    c = kernels() if lcs is None and tokenizer == "reference" else None
    found = c.lcs_texts(prediction, list(targets)) if c is not None else None
    if found is None:
        toks = [tokenize(t, tokenizer=tokenizer) for t in targets]
        return rouge_l_many(toks, tokenize(prediction, tokenizer=tokenizer), lcs=lcs)
    n, lengths = found
    return rouge_l_counts(n, lengths)


def rouge_l_counts(n_prediction: int, lengths: Sequence[Tuple[int, int]]) -> List[Score]:
    """rougeL from counts: ``lengths`` holds ``(lcs, n_target)`` per target, ``n_prediction`` the
    prediction's token count (a side without tokens scores 0, as :func:`rouge_l_many`).

    >>> [s.fmeasure for s in rouge_l_counts(2, [(1, 2), (0, 0), (2, 3)])]
    [0.5, 0, 0.8]
    """
    return [_lcs_score(k, nt, n_prediction) if nt and n_prediction else _ZERO for k, nt in lengths]


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
    block_lanes = ((1 << width) - 1) ^ guards
    n_blocks, starts, ends, joined = _fill_blocks(width, masks, block_lanes, cans)
    nbytes = (width >> 3) * n_blocks
    frm = int.from_bytes
    col_m = [frm(j, "little") for j in joined]
    m_flipped = b"".join(joined).translate(_REV_BYTE)  # bit-reversed, read like `flipped` below
    copies = 0
    for b in range(n_blocks):
        copies |= 1 << (b * width)
    flipped = _forward_stops(col_m, starts, block_lanes * copies, nbytes)
    rev = _reverser(nbytes)
    gr = rev((guards & (block_lanes >> 1)) * copies)  # the guard below each lane, reversed: above it
    lb = rev(((guards >> 1) & block_lanes) * copies)  # each lane's top row, reversed: its lowest bit
    found = _backward_hits(ends, col_m, flipped, m_flipped, rev, gr, lb, nbytes)
    out = 0
    if found:
        found = rev(found)
        block = (1 << width) - 1
        while found:
            out |= found & block
            found >>= width
    return out


def _fill_blocks(
    width: int, masks: Dict[Hashable, int], block_lanes: int, cans: List[List[Hashable]]
) -> Tuple[int, List[int], List[int], List[bytes]]:
    """The blocks of :func:`_packed_union`: ``(blocks, starts, ends, joined)``.

    ``starts[s]`` are the lanes set to all ones before forward step ``s``, ``ends[s]`` the
    lanes set whole before backward step ``s``; ``joined[s]`` the match rows of every block at
    step ``s`` (little-endian bytes).
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
    row_bytes = width >> 3
    zero = bytes(row_bytes)
    as_bytes = {tok: m.to_bytes(row_bytes, "little") for tok, m in masks.items()}.get
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
    joined = list(map(b"".join, zip(*seqs)))  # per step, the match rows of every block
    return n_blocks, starts, ends, joined


def _forward_stops(col_m: List[int], starts: List[int], lanes: int, nbytes: int) -> bytes:
    """The forward pass of :func:`_packed_union`: per step, the rows that stop the walk going up
    (matches and 0 bits of the column), all steps bit-reversed at once: step ``s`` is bytes
    ``[s * nbytes, (s + 1) * nbytes)``."""
    v = lanes
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
    return b"".join(stops).translate(_REV_BYTE)


def _backward_hits(
    ends: List[int],
    col_m: List[int],
    flipped: bytes,
    m_flipped: bytes,
    rev: Callable[[int], int],
    gr: int,
    lb: int,
    nbytes: int,
) -> int:
    """The backward walk of :func:`_packed_union` in every lane at once: the recorded match bits
    (bit-reversed)."""
    frm = int.from_bytes
    a = 0
    found = 0
    hi = len(col_m) * nbytes
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
    return found


if TYPE_CHECKING:
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


def _checked_args(
    target: Any, prediction: Any, rouge_types: Sequence[str], tokenizer: str
) -> Tuple[Tuple[str, int], ...]:
    """The parsed rouge types of a :func:`score` call, after its checks (in this order)."""
    if isinstance(rouge_types, str):
        raise ScoringError("rouge_types must be a list of names, not a string", field="rouge_types")
    parsed = _parsed(rouge_types)
    if tokenizer != "reference":
        _check_tokenizer(tokenizer)
    if not isinstance(target, str):
        raise ScoringError(f"expected a string, got {type(target).__name__}", field="target")
    if not isinstance(prediction, str):
        raise ScoringError(f"expected a string, got {type(prediction).__name__}", field="prediction")
    return parsed


def _lines_count(
    p_sents: List[List[Any]], p_tok: Optional[List[Any]], p_count: Optional["Counter[Hashable]"]
) -> Tuple["Counter[Hashable]", Optional["Counter[Hashable]"]]:
    """rougeLsum's candidate token counts, and ``p_count`` (the whole-text counts, made here if needed)."""
    if p_tok is None:  # no whole-text tokens (yet): count the lines' tokens
        return Counter(chain.from_iterable(p_sents)), p_count
    # the whole-text tokens are the lines' tokens
    if p_count is None:
        p_count = Counter(p_tok)
    return p_count, p_count


def _c_values(parsed: Tuple[Tuple[str, int], ...], target: str, prediction: str) -> Optional[Tuple[Any, ...]]:
    """The C kernel's scores of ``parsed`` (reference tokenizer, no stemmer, built-in LCS):
    precision, recall and fmeasure of each type in turn, with the pure path's operations (and
    its int zeros); None when the kernels are not built or decline."""
    c = kernels()
    return c.rouge_scores(target, prediction, parsed) if c is not None else None  # type: ignore[no-any-return]


def _c_scores(
    parsed: Tuple[Tuple[str, int], ...], target: str, prediction: str, eligible: bool
) -> Optional[Dict[str, Score]]:
    """:func:`score` by the C kernels when they are built and ``eligible`` (reference tokenizer,
    no stemmer, built-in LCS), else None (see :func:`_c_values`)."""
    values = _c_values(parsed, target, prediction) if eligible else None
    if values is None:
        return None
    return {name: _new_score(Score, values[3 * i : 3 * i + 3]) for i, (name, _) in enumerate(parsed)}


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
    parsed = _checked_args(target, prediction, rouge_types, tokenizer)
    lcs_fn = _check_lcs(lcs)
    stem = bool(use_stemmer)
    fast = _c_scores(parsed, target, prediction, lcs is None and not stem and tokenizer == "reference")
    if fast is not None:  # the C kernels' scores, made like the pure path's below
        return fast
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
            lines_count, p_count = _lines_count(p_sents, p_tok, p_count)
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
