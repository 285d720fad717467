"""ROUGE exactly as Google's ``rouge-score`` 0.1.2 computes it, stdlib only.

Reference: ``rouge_score.rouge_scorer.RougeScorer(rouge_types, use_stemmer)
.score(target, prediction)`` (google-research/google-research, folder
``rouge/``, ``rouge_scorer.py`` at 61ce9f0), with NLTK 3.10.4's
``PorterStemmer`` in its default mode as the stemmer.  Every number is the same
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
    no sentence or no token.

F-measure
    ``F(p, r) = 2 * p * r / (p + r)`` evaluated left to right, ``0.0`` when
    ``p + r == 0``.

Variant ``unicode_tokens`` (``tokenizer="unicode"``, opt-in, not comparable
with reference scores): NFKC, ``str.casefold()``, then tokens are maximal runs
of Unicode letters and digits (``[^\\W_]+``), except that each CJK ideograph
and each Japanese kana is a token on its own.  Stemming then applies only to
ASCII ``[a-z0-9]`` tokens of more than 3 characters.

>>> s = score("The cat sat on the mat.", "the cat was on the mat", rouge_types=["rouge1", "rougeL"])
>>> s["rouge1"]
Score(precision=0.8333333333333334, recall=0.8333333333333334, fmeasure=0.8333333333333334)
>>> score("", "anything", rouge_types=["rougeL", "rouge2"])
{'rougeL': Score(precision=0, recall=0, fmeasure=0), 'rouge2': Score(precision=0.0, recall=0.0, fmeasure=0.0)}
"""

import re
import unicodedata
from collections import Counter
from functools import lru_cache
from typing import (
    Callable,
    Dict,
    Hashable,
    Iterable,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from ._signature import make_signature
from .errors import ScoringError
from .porter import STEMMER_ID, porter_stem

__all__ = [
    "Score",
    "ROUGE_REF",
    "TOKENIZERS",
    "tokenize",
    "porter_stem",
    "lcs_length",
    "lcs_indices",
    "score",
    "score_multi",
    "score_tokens",
    "validate_rouge_types",
    "rouge_signature",
    "rouge_variants",
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
_LOWER_TO_SPACE = bytes(
    c + 32 if 65 <= c <= 90 else (c if c in _KEEP else 0x20) for c in range(256)
)


def _ref_bytes(text: str) -> bytes:
    """``text`` lower-cased, with every character outside [a-z0-9] as one space."""
    if text.isascii():
        return text.encode("ascii").translate(_LOWER_TO_SPACE)
    return text.lower().encode("ascii", "replace").translate(_TO_SPACE)
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")  # `$` also matches before a final "\n"

# CJK Unified Ideographs (+ Extension A, B..G, compatibility), Hiragana, Katakana.
_CJK = (
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0002fa1f\U00030000-\U0003134f"
)
_UNI_TOKEN = re.compile("[" + _CJK + "]|[^\\W_" + _CJK + "]+")

_MISS = object()
_STEM_CACHE: Dict[str, Optional[str]] = {}
_STEM_CACHE_MAX = 1 << 17


def _stem_token(tok: str) -> Optional[str]:
    """Memoised ``porter_stem`` for a reference token (``None`` if invalid after)."""
    hit = _STEM_CACHE.get(tok, _MISS)
    if hit is not _MISS:
        return hit  # type: ignore[return-value]
    out = porter_stem(tok)
    res = out if _VALID_TOKEN.match(out) else None
    if len(_STEM_CACHE) >= _STEM_CACHE_MAX:
        _STEM_CACHE.clear()
    _STEM_CACHE[tok] = res
    return res


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
        toks = _ref_bytes(text).decode("ascii").split()
        out = []
        for t in toks:
            if len(t) > 3:
                s = _stem_token(t)
                if s is not None:
                    out.append(s)
            else:
                out.append(t)
        return out
    toks = _UNI_TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())
    if not stem:
        return toks
    return [
        (_stem_token(t) or t) if len(t) > 3 and t.isascii() and _VALID_TOKEN.match(t) else t
        for t in toks
    ]


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
    toks = _UNI_TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())
    return [
        stemmer(t) if len(t) > 3 and t.isascii() and _VALID_TOKEN.match(t) else t for t in toks
    ]


# ------------------------------------------------------------------------ LCS

def _popcount_py39(x: int) -> int:
    return bin(x).count("1")


# int.bit_count exists from Python 3.10 on; looked up by name so the core stays 3.9-clean.
_popcount: Callable[[int], int] = getattr(int, "bit_count", _popcount_py39)


_POW2: List[int] = [1]  # _POW2[i] == 1 << i, grown on demand (see _pow2)
_POW2_MAX = 4096


def _pow2(n: int) -> List[int]:
    """A list whose first ``n`` items are ``1 << i`` (cached up to 4096)."""
    if n <= len(_POW2):
        return _POW2
    if n > _POW2_MAX:
        return [1 << i for i in range(n)]
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
    if not b:
        return 0
    masks = _position_masks(a)
    full = (1 << len(a)) - 1
    v = full
    get = masks.get
    for sym in b:
        m = get(sym)
        if m is not None:
            u = v & m
            v = (v + u) | (v - u)
    return len(a) - _popcount(v & full)


def _columns(
    masks: Dict[Hashable, int], full: int, can: Sequence[Hashable]
) -> Optional[List[int]]:
    """Bit-parallel DP columns 0..len(can) over the sequence behind ``masks``.

    ``None`` when ``can`` shares no symbol with it (the LCS is then empty).
    """
    v = full
    cols = [v]
    append = cols.append
    get = masks.get
    shared = False
    for sym in can:
        m = get(sym)
        if m is not None:
            shared = True
            u = v & m
            v = (v + u) | (v - u)
        append(v)
    return cols if shared else None


def _backtrack(ref: Sequence[Hashable], can: Sequence[Hashable], cols: List[int]) -> List[int]:
    """Indices into ``ref`` of the LCS that the reference's backtrack picks.

    The reference (``_backtrack_norec``) walks its table ``t`` from
    ``(len(ref), len(can))``: on equal tokens it takes the diagonal and records
    ``i-1``; otherwise it moves left when ``t[i][j-1] > t[i-1][j]`` and up
    otherwise (ties go up).  Because neighbouring cells differ by at most 1
    and ``t[i][j]`` is their maximum there, "left" happens exactly when
    ``t[i-1][j] < t[i][j]``, i.e. when bit ``i-1`` of column ``j`` is 0.  The
    same path is therefore walked from the bit-parallel columns.
    """
    i = len(ref)
    j = len(can)
    out: List[int] = []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            i -= 1
            j -= 1
            out.append(i)
        elif (cols[j] >> (i - 1)) & 1:
            i -= 1
        else:
            j -= 1
    out.reverse()
    return out


def lcs_indices(ref: Sequence[Hashable], can: Sequence[Hashable]) -> List[int]:
    """Sorted indices into ``ref`` of one LCS, chosen as the reference does.

    Identical to ``rouge_score.rouge_scorer.lcs_ind(ref, can)`` (see
    :func:`_backtrack` for why the bit-parallel walk takes the same path).

    >>> lcs_indices(["a", "b", "c", "b"], ["b", "a", "b"])
    [0, 3]
    """
    if not ref or not can:
        return []
    masks = _position_masks(ref)
    cols = _columns(masks, (1 << len(ref)) - 1, can)
    return [] if cols is None else _backtrack(ref, can, cols)


# ---------------------------------------------------------------- the scores


def _fmeasure(precision: Number, recall: Number) -> float:
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def _ngram_counts(tokens: Sequence[str], n: int) -> "Counter[Hashable]":
    if n == 1:
        return Counter(tokens)
    return Counter(zip(*[tokens[k:] for k in range(n)]))


def _score_ngrams(target: Sequence[str], prediction: Sequence[str], n: int) -> Score:
    tc = _ngram_counts(target, n)
    pc = _ngram_counts(prediction, n)
    small, big = (tc, pc) if len(tc) <= len(pc) else (pc, tc)
    overlap = 0
    for gram, cnt in small.items():
        other = big.get(gram)
        if other is not None:
            overlap += cnt if cnt < other else other
    precision = overlap / max(len(prediction) - n + 1, 1)
    recall = overlap / max(len(target) - n + 1, 1)
    return Score(precision, recall, _fmeasure(precision, recall))


_ZERO = Score(0, 0, 0)
_new_score = tuple.__new__  # Score(p, r, f) without the Python-level __new__


def _score_lcs(target: Sequence[Hashable], prediction: Sequence[Hashable]) -> Score:
    if not target or not prediction:
        return _ZERO
    lcs = lcs_length(target, prediction)
    precision = lcs / len(prediction)
    recall = lcs / len(target)
    if precision + recall > 0:
        return _new_score(Score, (precision, recall, 2 * precision * recall / (precision + recall)))
    return _new_score(Score, (precision, recall, 0.0))


def _score_lsum(ref_sents: List[List[str]], can_sents: List[List[str]]) -> Score:
    if not ref_sents or not can_sents:
        return Score(0, 0, 0)
    m = sum(map(len, ref_sents))
    n = sum(map(len, can_sents))
    if not n or not m:
        return Score(0, 0, 0)
    ref_count: Counter[str] = Counter()
    can_count: Counter[str] = Counter()
    for s in ref_sents:
        ref_count.update(s)
    for s in can_sents:
        can_count.update(s)
    hits = 0
    for ref in ref_sents:
        if not ref:
            continue
        masks = _position_masks(ref)
        full = (1 << len(ref)) - 1
        union: Set[int] = set()
        for can in can_sents:
            cols = _columns(masks, full, can)
            if cols is not None:
                union.update(_backtrack(ref, can, cols))
        for idx in sorted(union):
            tok = ref[idx]
            if can_count[tok] > 0 and ref_count[tok] > 0:
                hits += 1
                can_count[tok] -= 1
                ref_count[tok] -= 1
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


def validate_rouge_types(rouge_types: Iterable[str]) -> List[str]:
    """Check rouge type names, raising :class:`ScoringError` on the first bad one.

    The reference raises ``ValueError`` lazily, in the middle of scoring; here
    every name is checked before any work.

    >>> validate_rouge_types(["rouge1", "rougeLsum"])
    ['rouge1', 'rougeLsum']
    >>> validate_rouge_types(["rouge10"])
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: rouge_types: invalid rouge type: 'rouge10' (expected rouge1..rouge9, rougeL or rougeLsum)
    """
    if isinstance(rouge_types, str):
        raise ScoringError("rouge_types must be a list of names, not a string", field="rouge_types")
    names = tuple(rouge_types)
    _parse_types(names)
    return list(names)


def _sentences(text: str, stem: bool, tokenizer: str) -> List[List[str]]:
    return [_tokens(s, stem, tokenizer) for s in text.split("\n") if s]


def score(
    target: str,
    prediction: str,
    *,
    rouge_types: Sequence[str],
    use_stemmer: bool = False,
    tokenizer: str = "reference",
) -> Dict[str, Score]:
    """Score ``prediction`` against ``target`` (reference text first).

    Same as ``RougeScorer(rouge_types, use_stemmer).score(target, prediction)``
    of rouge-score 0.1.2: a dict in the order of ``rouge_types`` (a repeated
    name keeps its first position).  Raises :class:`ScoringError` for unknown
    types, an unknown tokenizer or non-string texts.

    >>> score("a b c d", "a c d e", rouge_types=["rouge2", "rougeL"])["rougeL"]
    Score(precision=0.75, recall=0.75, fmeasure=0.75)
    """
    if isinstance(rouge_types, str):
        raise ScoringError("rouge_types must be a list of names, not a string", field="rouge_types")
    parsed = _parse_types(tuple(rouge_types))
    _check_tokenizer(tokenizer)
    if not isinstance(target, str):
        raise ScoringError(f"expected a string, got {type(target).__name__}", field="target")
    if not isinstance(prediction, str):
        raise ScoringError(
            f"expected a string, got {type(prediction).__name__}", field="prediction"
        )
    stem = bool(use_stemmer)
    t_tok: Optional[List[str]] = None
    p_tok: Optional[List[str]] = None
    result: Dict[str, Score] = {}
    for name, n in parsed:
        if n == -2:
            result[name] = _score_lsum(
                _sentences(target, stem, tokenizer), _sentences(prediction, stem, tokenizer)
            )
            continue
        if t_tok is None or p_tok is None:
            t_tok = _tokens(target, stem, tokenizer)
            p_tok = _tokens(prediction, stem, tokenizer)
        if n == -1:
            result[name] = _score_lcs(t_tok, p_tok)
        else:
            result[name] = _score_ngrams(t_tok, p_tok, n)
    return result


def score_tokens(
    target_tokens: Sequence[str],
    prediction_tokens: Sequence[str],
    *,
    rouge_types: Sequence[str],
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
    result: Dict[str, Score] = {}
    for name, n in _parse_types(tuple(rouge_types)):
        if n == -2:
            raise ScoringError("rougeLsum needs the raw text; use score()", field="rouge_types")
        if n == -1:
            result[name] = _score_lcs(target_tokens, prediction_tokens)
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
        score(t, prediction, rouge_types=rouge_types, use_stemmer=use_stemmer, tokenizer=tokenizer)
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


def rouge_variants(*, tokenizer: str = "reference") -> List[str]:
    """Variant names implied by the options (empty = reference parity)."""
    _check_tokenizer(tokenizer)
    return [UNICODE_VARIANT] if tokenizer == "unicode" else []


def rouge_signature(
    *,
    rouge_types: Optional[Sequence[str]] = None,
    use_stemmer: bool = False,
    tokenizer: str = "reference",
    extra_params: Sequence[Tuple[str, object]] = (),
) -> str:
    """The result signature of a ROUGE computation.

    >>> rouge_signature(rouge_types=["rougeL"], use_stemmer=True)  # doctest: +ELLIPSIS
    'rageval_min:...|family=rouge|ref=google-research/google-research@61ce9f0|variants=none|rouge_score=0.1.2|types=rougeL|stem=true|stemmer=nltk-porter-3.10.4|tokenizer=reference'
    >>> rouge_signature(tokenizer="unicode")  # doctest: +ELLIPSIS
    '...|variants=unicode_tokens|rouge_score=0.1.2|stem=false|tokenizer=unicode'
    """
    variants = rouge_variants(tokenizer=tokenizer)
    params: List[Tuple[str, object]] = [("rouge_score", "0.1.2")]
    if rouge_types is not None:
        names = validate_rouge_types(rouge_types)
        params.append(("types", ",".join(n.rstrip("\n") for n in names)))
    params.append(("stem", bool(use_stemmer)))
    if use_stemmer:
        params.append(("stemmer", STEMMER_ID))
    params.append(("tokenizer", tokenizer))
    params.extend(extra_params)
    return make_signature("rouge", ROUGE_REF, variants, params)
