"""MT-RAG generation metrics (IBM ``mt-rag-benchmark``, ``scripts/evaluation``).

Reference: ``IBM/mt-rag-benchmark@cc5b1d4:scripts/evaluation/run_algorithmic.py`` (the
algorithmic metrics and RB_agg), ``...:scripts/evaluation/judge_wrapper.py`` (the judges'
parsers, the column-wise pandas pipeline and IDK conditioning), ``...:judge_utils.py`` and
``...:run_generation_eval.py`` (the pipeline order).  The library code is here (and the
judge prompts in ``mtrag/judge.py``); the CLI (``rageval-min mtrag ...``) is ``mtrag/cli.py``.

Canonical metric names (identical in the API, the CLI and the output records)::

    Recall  RougeL_stemFalse  BertscoreP  BertscoreR  BertKPrec  Extractiveness_RougeL
    Length  RB_agg  idk_eval  underspecified_eval  RB_llm  RL_F
    RL_F_idk_underspecified  RB_llm_idk_underspecified  RB_agg_idk_underspecified   (default)
    RL_F_idk  RB_llm_idk  RB_agg_idk                                              (paper_idk)

Every output value is a list: one entry per target for ``Recall``, ``RougeL_stemFalse``,
``BertscoreP``, ``BertscoreR`` and ``Length``; one per passage for ``BertKPrec`` and
``Extractiveness_RougeL``; ``[x]`` for the rest.  The reference creates a metric's list inside
its loop over targets (passages), so with ``targets == []`` no per-target key and no ``RB_agg``
is written, and with no passages no per-passage key.

Int-versus-float rules of the reference are kept, because they reach the JSON output:

* per value, in the algorithmic step (plain ``json.dump`` of Python values): ``Recall`` is
  int ``0`` when nothing overlaps, ``RougeL_stemFalse`` int ``0`` when a side has no tokens,
  ``Extractiveness_RougeL`` int ``1`` on the containment shortcut, ``RB_agg`` int ``0`` under
  the zero guard, ``Length`` always int;
* per **column**, for ``idk_eval``, ``underspecified_eval`` and the conditioned metrics: the
  reference builds each as a pandas column before writing the file, so one float (0.5) or
  missing value anywhere in the file turns every ``1``/``0`` of that metric into
  ``1.0``/``0.0``; only an all-integer column keeps integers, and a column holding a string
  (``"unknown"``) keeps each value's own type (:class:`ColumnTypes`).  ``condition_file``
  streams: it reads the input twice, the first pass filling the small, mergeable type
  summary (and validating every record, so a bad input writes nothing), the second writing;
  no record is held in memory.  ``mtrag judge`` holds its records anyway (the judge calls
  are batched) and types its columns from them.

The scoring commands follow the family contract (``docs/adding-a-family.md``): per command an
item scorer (``algorithmic_item``, ``condition_item``, ``judge_item``; ``summarize`` rows come
from ``summarize_files``), a registered accumulator with exact merges (means are exactly
rounded sums, :class:`ExactMean`, so any partition gives the same bytes) and a file-level
function with an ``on_item`` callback.

Variants (opt-in, named in the signature): ``rb_agg_unguarded``, ``paper_idk``,
``answerability_alias``, ``unicode_tokens``.

BERTScore is not computed here (it needs model weights).  ``RB_agg`` uses ``BertscoreR`` and
``BertKPrec`` values already present in the input record's ``metrics``, or values produced
by an optional scorer callable (see :data:`BertScorer`) passed to :func:`score_record`.
"""

import functools
import json
import math
import os
import re
import string
from collections import Counter
from contextlib import contextmanager
from typing import (
    Any,
    Callable,
    ClassVar,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from .. import rouge as _rouge
from .._contract import Accumulator, ItemRow, finish, register_accumulator
from .._io import DeferredProblems, Numbered, atomic_writer, deferred_jsonl, parse_item, read_json
from .._parallel import Engine, accumulate_items
from .._signature import make_signature
from ..errors import ScoringError
from ..report import Report, render

__all__ = [
    "FAMILY",
    "REFERENCE",
    "REPORT_FORMATS",
    "format_summary_text",
    "VARIANTS",
    "STEP_VARIANTS",
    "check_variants",
    "AlgorithmicAccumulator",
    "ConditionAccumulator",
    "JudgeAccumulator",
    "SummarizeAccumulator",
    "ColumnTypes",
    "algorithmic_item",
    "algorithmic_file",
    "condition_item",
    "condition_file",
    "judge_item",
    "summarize_files",
    "summarize_item",
    "summarize_row",
    "is_number",
    "record_id",
    "record_texts",
    "ALGORITHMIC_METRICS",
    "CONDITIONED_METRICS",
    "BertScorer",
    "RBAgg",
    "RecordResult",
    "GroupMean",
    "normalize_answer",
    "recall",
    "k_prec",
    "rouge_l_stem_false",
    "clean_for_extractiveness",
    "extractiveness_rouge_l",
    "length",
    "rb_agg",
    "rb_agg_from_metrics",
    "first_token_idk",
    "parse_underspecified",
    "extract_rating",
    "rating_text",
    "underspecified_json",
    "median_rating",
    "condition_idk",
    "conditioned_key",
    "score_record",
    "condition_record",
    "round_floats",
    "answerability_of",
    "answerability_group",
    "ExactMean",
    "SummaryAccumulator",
    "summary_values",
    "signature",
]

FAMILY = "mtrag"
REFERENCE = "IBM/mt-rag-benchmark@cc5b1d4"
VARIANTS = ("rb_agg_unguarded", "paper_idk", "answerability_alias", "unicode_tokens")

#: The variants that apply to each command.
STEP_VARIANTS = {
    "algorithmic": ("rb_agg_unguarded", "unicode_tokens"),
    "condition": ("paper_idk", "answerability_alias"),
    "summarize": ("answerability_alias",),
    "judge": (),
}

Number = Union[int, float]

#: ``scorer(prediction, reference) -> (precision, recall)``, the rescaled BERTScore of the
#: prediction (candidate) against one reference string.  The reference makes one call per
#: target (P and R) and one per passage (P only).  The bertscore extra will provide one.
BertScorer = Callable[[str, str], Tuple[float, float]]

#: Metrics written by the algorithmic step, in the reference's ``config.yaml`` order.
ALGORITHMIC_METRICS = (
    "Recall",
    "RougeL_stemFalse",
    "BertscoreP",
    "BertscoreR",
    "BertKPrec",
    "Extractiveness_RougeL",
    "Length",
    "RB_agg",
)

#: Metrics that IDK conditioning applies to, in the reference's order.
CONDITIONED_METRICS = ("RL_F", "RB_llm", "RB_agg")

_PUNCT_BYTES = string.punctuation.encode("ascii")
_ARTICLE_WORDS = frozenset(("a", "an", "the"))
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NON_WORD = re.compile(r"[^\w\s]")


def check_variants(variants: Iterable[str]) -> Tuple[str, ...]:
    """The sorted, de-duplicated variant names; an unknown one is a :class:`ScoringError`.

    >>> check_variants(["paper_idk", "paper_idk"])
    ('paper_idk',)
    """
    names = tuple(sorted(set(variants)))
    for name in names:
        if name not in VARIANTS:
            raise ScoringError(f"unknown mtrag variant {name!r} (known: {', '.join(VARIANTS)})", field="variant")
    return names


_check_variants = check_variants


def _tokenizer(variants: Sequence[str]) -> str:
    return "unicode" if "unicode_tokens" in variants else "reference"


# ---------------------------------------------------------------------------
# Algorithmic metrics
# ---------------------------------------------------------------------------


def normalize_answer(text: str) -> str:
    """SQuAD-style normalisation used by ``Recall``.

    Order: ``lower()``; delete every ASCII ``string.punctuation`` character without
    inserting a space (curly quotes and dashes stay); replace the words a/an/the
    (Unicode ``\\b``) by a space; collapse Unicode whitespace.

    >>> normalize_answer("The U.S. didn't win -- a 3.5% gain")
    'us didnt win 35 gain'
    >>> normalize_answer("don\\u2019t")
    'don\\u2019t'
    """
    return " ".join(_answer_tokens(text))


def _answer_tokens(text: str) -> List[str]:
    """``normalize_answer(text).split()``, fast.

    Deleting ASCII bytes from UTF-8 never touches a multi-byte character, so the
    punctuation goes in one C pass (``surrogatepass`` keeps lone surrogates as they are).
    When every character left is a word character or whitespace, ``\\b(a|an|the)\\b``
    matches exactly the whitespace-separated tokens ``a``, ``an`` and ``the``, so they are
    dropped from the split; any other character takes the regex.
    """
    data = text.lower().encode("utf-8", "surrogatepass").translate(None, _PUNCT_BYTES)
    out = data.decode("utf-8", "surrogatepass")
    rest = data.translate(None, _WORD_OR_SPACE)
    if rest and (rest.isascii() or _NON_WORD.search(rest.decode("utf-8", "surrogatepass"))):
        return _ARTICLES.sub(" ", out).split()
    return [w for w in out.split() if w not in _ARTICLE_WORDS]


def _overlap(prediction: str, target: str) -> Tuple[int, int, int]:
    pred_tokens = _answer_tokens(prediction)
    target_tokens = _answer_tokens(target)
    common = Counter(pred_tokens) & Counter(target_tokens)
    return sum(common.values()), len(pred_tokens), len(target_tokens)


def recall(prediction: str, target: str) -> Number:
    """``Recall``: token recall of the normalised prediction against one target.

    ``common / len(target_tokens)`` as a float, or **int** ``0`` when nothing overlaps
    (which also covers an empty target, so there is never a division by zero).

    >>> recall("The cat sat.", "the cat sat on the mat")
    0.5
    >>> recall("dog", "the cat")
    0
    """
    common, _, n_target = _overlap(prediction, target)
    if common == 0:
        return 0
    return 1.0 * common / n_target


def k_prec(prediction: str, target: str) -> Number:
    """Token precision (``common / len(pred_tokens)``), present in the reference file but not
    configured there.  Same normalisation and int ``0`` rule as :func:`recall`.

    >>> k_prec("the cat cat dog", "cat")
    0.3333333333333333
    """
    common, n_pred, _ = _overlap(prediction, target)
    if common == 0:
        return 0
    return 1.0 * common / n_pred


def rouge_l_stem_false(
    prediction: str, target: str, *, tokenizer: str = "reference", lcs: Optional[_rouge.LcsFn] = None
) -> Number:
    """``RougeL_stemFalse``: rouge-score 0.1.2 ROUGE-L **F-measure**, no stemmer, scored as
    ``score(target, prediction)`` (reference first).  Int ``0`` when a side has no tokens.

    ``tokenizer="unicode"`` is the ``unicode_tokens`` variant; ``lcs`` is an exact LCS-length
    function used instead of the built-in one (see :func:`rageval_min.rouge.score`).
    """
    return _rouge.score(target, prediction, rouge_types=("rougeL",), tokenizer=tokenizer, lcs=lcs)["rougeL"].fmeasure


def clean_for_extractiveness(text: str) -> str:
    """The text cleaning of ``Extractiveness_RougeL``.

    1. ``"\\n"`` becomes ``" "``; every character that is neither ``\\w`` nor ``\\s``
       (Unicode-aware) is deleted without inserting a space; then ``lower()``.  Underscores
       and non-ASCII letters are kept.
    2. The reference then runs BeautifulSoup(``html.unescape(s)``, "lxml").get_text().  After
       step 1 no ``& < >`` remain, so this reduces exactly to: every ``\\r`` becomes ``\\n``,
       and leading ``' ' \\t \\n \\r \\f`` are stripped (not ``\\v``, NBSP, other spaces).

    >>> clean_for_extractiveness("  Hello, <b>World</b>!\\r\\nBye")
    'hello bworldb\\n bye'
    """
    return _clean(text).lstrip(" \t\n\r\x0c")


def _clean(text: str) -> str:
    """Step 1 and the ``\\r`` of step 2 of :func:`clean_for_extractiveness`.

    Every step works character by character (``str.lower`` too, except for the
    context-dependent final sigma), so the ASCII characters are done in one C pass over
    the UTF-8 bytes (which leaves every multi-byte character intact) and then each
    distinct non-ASCII character is deleted or lower-cased as the regex and ``lower()`` do.
    """
    data = text.encode("utf-8", "surrogatepass").translate(_CLEAN_ASCII, _CLEAN_ASCII_DELETE)
    out = data.decode("utf-8", "surrogatepass")
    if len(data) == len(out):  # ASCII only
        return out
    if "\u03a3" in out:  # capital sigma: lower() depends on its neighbours, take the literal path
        return _NON_WORD.sub("", text.replace("\n", " ")).lower().replace("\r", "\n")
    others = set(data.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass"))
    keep = []
    for ch in others:  # deletions first: a lower-cased letter may bring a mark the regex deletes
        if _NON_WORD.match(ch):
            out = out.replace(ch, "")
        else:
            keep.append(ch)
    for ch in keep:
        low = ch.lower()
        if low != ch:
            out = out.replace(ch, low)
    return out


def _clean_tables() -> Tuple[bytes, bytes]:
    # Built from the regex itself, so the ASCII path deletes exactly what _NON_WORD deletes;
    # "\n" -> " " (step 1), upper -> lower, "\r" -> "\n" (step 2) are per-character too.
    table = bytearray(range(256))
    delete = bytearray()
    for c in range(128):
        ch = chr(c)
        if ch == "\n":
            table[c] = ord(" ")
        elif ch == "\r":
            table[c] = ord("\n")
        elif _NON_WORD.match(ch):
            delete.append(c)
        else:
            table[c] = ord(ch.lower())
    return bytes(table), bytes(delete)


_CLEAN_ASCII, _CLEAN_ASCII_DELETE = _clean_tables()
_ASCII_BYTES = bytes(range(128))
#: The ASCII bytes that are word characters or whitespace for ``re`` (str patterns).
_WORD_OR_SPACE = bytes(c for c in range(128) if not _NON_WORD.match(chr(c)))


def extractiveness_rouge_l(
    prediction: str, passage: str, *, tokenizer: str = "reference", lcs: Optional[_rouge.LcsFn] = None
) -> Number:
    """``Extractiveness_RougeL`` of the prediction against one passage.

    Both strings go through :func:`clean_for_extractiveness`.  If the cleaned **passage**,
    with spaces removed, is a substring of the cleaned prediction with spaces removed, the
    result is **int** ``1`` (so an empty or whitespace-only passage always gives ``1``).
    Otherwise it is the ROUGE-L F-measure with the cleaned passage as reference.

    >>> extractiveness_rouge_l("Intro. The Cardinals play in Glendale.", "the cardinals play")
    1
    """
    text = clean_for_extractiveness(prediction)
    target = clean_for_extractiveness(passage)
    if target.replace(" ", "") in text.replace(" ", ""):
        return 1
    return _rouge.score(target, text, rouge_types=("rougeL",), tokenizer=tokenizer, lcs=lcs)["rougeL"].fmeasure


def length(prediction: str) -> int:
    """``Length``: ``len(prediction)`` in code points (leading spaces count).

    >>> length(" caf\\u00e9")
    5
    """
    return len(prediction)


# ---------------------------------------------------------------------------
# RB_agg
# ---------------------------------------------------------------------------


class RBAgg(NamedTuple):
    """Result of :func:`rb_agg`: the value (``None`` when undefined) and, when the reference
    would have crashed, a note explaining the defined value."""

    value: Optional[Number]
    note: Optional[str]


def is_number(v: Any) -> bool:
    """An int or float that is not a bool (NaN included)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_is_number = is_number


def rb_agg(
    bertscore_r: Number,
    rouge_l: Number,
    bert_kprec: Optional[Sequence[Optional[Number]]],
    *,
    unguarded: bool = False,
) -> RBAgg:
    """``RB_agg`` (the paper's RB_alg): harmonic mean of three components.

    ``R = (bertscore_r + 1) / 2``, ``L = rouge_l``,
    ``K = (max(0 if v is None else v for v in bert_kprec) + 1) / 2``, and ``K = 0`` when
    ``bert_kprec`` is ``None`` (no passages).  An empty list is treated like ``None``
    (the reference would raise on ``max([])``) and noted.

    Default (zero guard, reference HEAD): int ``0`` if any of L, R, K equals 0, else
    ``3*R*L*K / ((R*L) + (R*K) + (L*K))`` in exactly this order, unrounded.  Negative
    components (rescaled BERTScore below -1) are not guarded, as in the reference; if the
    denominator is then exactly 0 the value is ``None`` with a note (reference:
    ZeroDivisionError).

    ``unguarded=True`` is the ``rb_agg_unguarded`` variant (before upstream ``62b4f0b``):
    the formula is always evaluated, so one zero component gives float ``0.0``; two or
    more zeros (reference: ZeroDivisionError) give ``0.0`` with a note.

    >>> rb_agg(0.3, 0.25, [0.1, 0.4])
    RBAgg(value=0.4305993690851735, note=None)
    >>> rb_agg(0.3, 0.25, None)
    RBAgg(value=0, note=None)
    >>> rb_agg(0.3, 0.0, [0.4], unguarded=True)
    RBAgg(value=0.0, note=None)
    """
    return _rb_agg_core((bertscore_r + 1) / 2, rouge_l, bert_kprec, unguarded=unguarded, note=None)


def _rb_agg_core(
    R: Number,
    L: Number,
    bert_kprec: Optional[Sequence[Optional[Number]]],
    *,
    unguarded: bool,
    note: Optional[str],
) -> RBAgg:
    notes = [note] if note else []
    if not bert_kprec:
        if bert_kprec is not None:
            notes.append("BertKPrec is an empty list (reference: ValueError); K = 0 as without passages")
        K: Number = 0
    else:
        K = (max(0 if v is None else v for v in bert_kprec) + 1) / 2
    if not unguarded and (L == 0 or R == 0 or K == 0):
        return RBAgg(0, "; ".join(notes) or None)
    denominator = (R * L) + (R * K) + (L * K)
    if denominator == 0:
        zeros = (L == 0) + (R == 0) + (K == 0)
        if zeros >= 2:
            notes.append("two or more components are 0 (reference: ZeroDivisionError); 0.0")
            return RBAgg(0.0, "; ".join(notes))
        notes.append("denominator is 0 (reference: ZeroDivisionError); null")
        return RBAgg(None, "; ".join(notes))
    return RBAgg(3 * R * L * K / denominator, "; ".join(notes) or None)


def rb_agg_from_metrics(metrics: Dict[str, Any], *, unguarded: bool = False) -> RBAgg:
    """``RB_agg`` from a record's ``metrics`` dict, reading ``[0]`` entries as the reference.

    ``R = (BertscoreR[0] + 1) / 2``; when that fails (missing, empty, not a number) the
    reference's bare ``except`` falls back to ``R = Recall[0]`` (without ``(x+1)/2``);
    this is reproduced and noted.  ``L = RougeL_stemFalse[0]``; ``K`` from ``BertKPrec``
    (absent key = no passages).  The caller guarantees ``RougeL_stemFalse`` is non-empty.
    """
    rouge_l = metrics["RougeL_stemFalse"][0]
    if not _is_number(rouge_l):
        raise ScoringError("must be a number", field="metrics.RougeL_stemFalse[0]")
    kprec = metrics.get("BertKPrec")
    if kprec is not None and (not isinstance(kprec, list) or not all(v is None or _is_number(v) for v in kprec)):
        raise ScoringError("must be a list of numbers or null", field="metrics.BertKPrec")
    r_list = metrics.get("BertscoreR")
    r_raw = r_list[0] if isinstance(r_list, list) and r_list else None
    if isinstance(r_raw, (int, float)) and not isinstance(r_raw, bool):
        return _rb_agg_core((r_raw + 1) / 2, rouge_l, kprec, unguarded=unguarded, note=None)
    note = "BertscoreR[0] unusable; R = Recall[0] (the reference's bare except)"
    recall0 = metrics["Recall"][0]
    if not _is_number(recall0):
        raise ScoringError("must be a number", field="metrics.Recall[0]")
    return _rb_agg_core(recall0, rouge_l, kprec, unguarded=unguarded, note=note)


# ---------------------------------------------------------------------------
# Judge output parsers (live judging is not part of this module)
# ---------------------------------------------------------------------------

_FIRST_WORD = re.compile(r"\s*([A-Za-z]+)")


def first_token_idk(text: Any) -> Union[int, float, str, None]:
    """Parse an IDK judge output into ``idk_eval``.

    The first ASCII-alphabetic run after optional whitespace (``re.match``), lowercased:
    ``yes`` -> ``1``, ``no`` -> ``0``, **any other word** (including ``partial``) -> ``0.5``;
    no match (output starts with a quote, ``*``, digit, bracket ...) -> the string
    ``"unknown"``; a non-string -> ``None``.

    >>> [first_token_idk(t) for t in ["Yes.", " no", "Partial", "maybe", '"yes"', None]]
    [1, 0, 0.5, 0.5, 'unknown', None]
    """
    if not isinstance(text, str):
        return None
    match = _FIRST_WORD.match(text)
    if match is None:
        return "unknown"
    word = match.group(1).lower()
    if word == "yes":
        return 1
    if word == "no":
        return 0
    return 0.5


_FENCED_JSON = re.compile(r"```json\s*(.*?)\s*```", re.DOTALL)
_FIRST_OBJECT = re.compile(r"\{\s*(.*?)\s*\}", re.DOTALL)
_BAD_ESCAPE = re.compile(r"\\(?![\"\\/bfnrt]|u[0-9a-fA-F]{4})")


def underspecified_json(text: Any) -> Optional[str]:
    r"""The JSON text the underspecified parser reads (``extract_and_format_json``), None when nothing matches.

    If ```` ```json ```` occurs anywhere, only the fenced pattern
    ```` ```json\s*(.*?)\s*``` ```` is searched (an opening fence without a
    closing one is no match; there is no fallback to braces); otherwise
    ``\{\s*(.*?)\s*\}`` (non-greedy, up to the first ``}``).  Group 1 loses
    its invalid backslash escapes, then gets ``{`` prepended only if it does not
    start with ``{`` and ``}`` appended only if it does not end with ``}``.

    >>> underspecified_json('{{"decision": "yes"}}')
    '{"decision": "yes"}'
    >>> underspecified_json('```json\n{"decision": "no"}') is None
    True
    """
    if not isinstance(text, str):
        return None
    pattern = _FENCED_JSON if "```json" in text else _FIRST_OBJECT
    match = pattern.search(text)
    if match is None:
        return None
    body = _BAD_ESCAPE.sub("", match.group(1))
    if not body.startswith("{"):
        body = "{" + body
    if not body.endswith("}"):
        body = body + "}"
    return body


def parse_underspecified(text: Any) -> Number:
    r"""Parse an underspecified judge output into ``underspecified_eval`` (spec 11).

    :func:`underspecified_json`, then ``json.loads``; the ``decision`` is
    lower-cased: ``yes`` -> ``1``, ``no`` -> ``0``, any other string -> ``0.5``.
    No match, invalid JSON, a non-object or a non-string decision -> ``0.5``
    (the reference maps every exception to 0.5).

    >>> parse_underspecified('{"decision": "yes", "explanation": "x"}')
    1
    >>> parse_underspecified('```json\n{"decision": "NO"}\n```')
    0
    >>> parse_underspecified('{{"decision": "Yes"}}'), parse_underspecified('```json {"decision": "yes"}')
    (1, 0.5)
    >>> parse_underspecified("no json here")
    0.5
    """
    body = underspecified_json(text)
    if body is None:
        return 0.5
    try:
        data = json.loads(body)
        decision = data.get("decision", "").lower()
    except Exception:  # the reference maps every failure to 0.5
        return 0.5
    if decision == "yes":
        return 1
    if decision == "no":
        return 0
    return 0.5


_FOR_EXAMPLE = re.compile(r"for example:.*?$", re.IGNORECASE | re.MULTILINE)
_RATING_PATTERNS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"Rating: \[\[(\d+)\]\]",
        r"Rating: (\d+)",
        r"\[\[(\d+)\]\]",
        r"\[(\d+)\]",
        r"Rating: \[\[([0-9]*\.?[0-9]+)\]\]",
        r"Overall Rating: ([0-9]*\.?[0-9]+)",
        r"Score: ([0-9]*\.?[0-9]+)/10",
        r"Score: ([0-9]*\.?[0-9]+)",
        r"\[Rating\]\n(\d+)",
        r"Rating: \[\[(\d+)/10\]\]",
        r"Rating: \[\[([-+]?\d*\.?\d+)",
        r"([-+]?\d*\.?\d+) out of 10",
    )
)


def rating_text(text: str) -> Optional[str]:
    """The number :func:`extract_rating` reads (the last matching pattern's first match), None if none matches.

    >>> rating_text("Rating: [[8]] but 6 out of 10"), rating_text("nothing")
    ('6', None)
    """
    text = _FOR_EXAMPLE.sub("", text)
    found: Optional[str] = None
    for pattern in _RATING_PATTERNS:
        match = pattern.search(text)
        if match is not None:
            found = match.group(1)
    return found


def extract_rating(text: str) -> float:
    """Parse one RB_llm judge output into a score in (0, 1].

    Delete ``for example:.*?$`` (IGNORECASE, MULTILINE); try 12 patterns in order, each
    taking its first match, and **the last pattern that matches wins**; the value is
    ``float(match) / 10``.  No match, or a value ``<= 0`` or ``> 1``, gives ``0.5``.

    >>> extract_rating("Good answer. Rating: [[8]]")
    0.8
    >>> extract_rating("I'd say 7 out of 10. Rating: [[9]]")
    0.7
    >>> extract_rating("Rating: [[0]]"), extract_rating("nothing")
    (0.5, 0.5)
    """
    if not isinstance(text, str):
        raise ScoringError("judge output is not a string", field="RB_llm")
    found = rating_text(text)
    if found is None:
        return 0.5
    value = float(found) / 10
    if value <= 0 or value > 1:
        return 0.5
    return value


def median_rating(values: Sequence[float]) -> float:
    """``RB_llm`` across judges: ``np.median`` (mean of the two middle values for an even
    count, computed as ``(a + b) / 2``).

    >>> median_rating([0.9, 0.8, 0.7, 1.0])
    0.8500000000000001
    """
    if not values:
        raise ScoringError("no judge ratings", field="RB_llm")
    ordered = sorted(float(v) for v in values)
    n = len(ordered)
    mid = n // 2
    if n % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


# ---------------------------------------------------------------------------
# IDK conditioning
# ---------------------------------------------------------------------------

_NOT_ANSWERABLE = ("UNANSWERABLE", "CONVERSATIONAL")


def condition_idk(
    value: Any,
    answerability: Optional[str],
    idk: Any,
    *,
    underspecified: Any = None,
    paper_idk: bool = False,
) -> Any:
    """IDK-conditioned value of one metric (``get_idk_underspec_score`` / ``get_idk_score``).

    With ``A = answerability`` and ``I = idk`` (``idk_eval[0]``), the first rule that
    matches applies:

    0. (default only; skipped by ``paper_idk``) ``A == "UNDERSPECIFIED"``: ``1`` if
       ``underspecified == 1`` else ``0``;
    1. ``A`` in {UNANSWERABLE, CONVERSATIONAL} and ``I == 1``: ``1``;
    2. ``A`` in {UNANSWERABLE, CONVERSATIONAL} and ``I`` in {0, 0.5}: ``0``;
    3. ``I == 1``: ``0`` (full IDK on ANSWERABLE, PARTIAL, None or anything else);
    4. otherwise the raw ``value``.  Quirk kept: an UNANSWERABLE row whose judge output
       parsed to ``"unknown"`` or ``None`` keeps its raw value.

    >>> condition_idk(0.4, "UNANSWERABLE", 1), condition_idk(0.4, "UNANSWERABLE", 0.5)
    (1, 0)
    >>> condition_idk(0.4, "PARTIAL", 1), condition_idk(0.4, "ANSWERABLE", 0.5)
    (0, 0.4)
    >>> condition_idk(0.4, "UNANSWERABLE", "unknown")
    0.4
    >>> condition_idk(0.4, "UNDERSPECIFIED", 0, underspecified=1)
    1
    """
    if not paper_idk and answerability == "UNDERSPECIFIED":
        return 1 if underspecified == 1 else 0
    if answerability in _NOT_ANSWERABLE:
        if _eq(idk, 1):
            return 1
        if _eq(idk, 0) or _eq(idk, 0.5):
            return 0
    if _eq(idk, 1):
        return 0
    return value


def _eq(a: Any, b: Any) -> bool:
    # Python ``==`` as in the reference, but never raising on odd types.
    try:
        return bool(a == b)
    except Exception:
        return False


def conditioned_key(metric: str, *, paper_idk: bool = False) -> str:
    """Output key of a conditioned metric.

    >>> conditioned_key("RB_agg"), conditioned_key("RB_agg", paper_idk=True)
    ('RB_agg_idk_underspecified', 'RB_agg_idk')
    """
    return metric + ("_idk" if paper_idk else "_idk_underspecified")


def answerability_of(record: Dict[str, Any], *, alias: bool = False) -> Optional[str]:
    """``answerability[0]`` of an input record, ``None`` when missing, empty or not a list.

    Only the lowercase key is read (the 2024 files use ``Answerability`` and are therefore
    conditioned as answerable by the reference); ``alias=True`` (variant
    ``answerability_alias``) reads ``Answerability`` when the lowercase key is absent.
    A plain string is accepted as a one-element value.
    """
    if "answerability" in record:
        value = record["answerability"]
    elif alias:
        value = record.get("Answerability")
    else:
        value = None
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value:
        first = value[0]
        return first if isinstance(first, str) else None
    return None


# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------


class RecordResult(NamedTuple):
    """A record with its ``metrics`` filled in, and diagnostics naming the record."""

    record: Dict[str, Any]
    diagnostics: List[str]


def record_id(record: Dict[str, Any], fallback: Optional[str]) -> str:
    """``task_id=<id>`` for messages, or ``fallback`` when the record has no usable task_id."""
    task_id = record.get("task_id")
    if isinstance(task_id, (str, int)) and not isinstance(task_id, bool):
        return f"task_id={task_id}"
    return fallback or "record"


_record_id = record_id


def record_texts(record: Dict[str, Any], key: str, rid: str, *, required: bool) -> Optional[List[str]]:
    """The ``text`` of every element of ``record[key]`` (``targets``, ``contexts``, ...); None when absent."""
    return _texts(record, key, rid, required=required)


def _texts(record: Dict[str, Any], key: str, rid: str, *, required: bool) -> Optional[List[str]]:
    value = record.get(key)
    if value is None:
        if required:
            raise ScoringError(f"missing {key!r}", record=rid, field=key)
        return None
    if not isinstance(value, list):
        raise ScoringError(f"{key!r} must be a list", record=rid, field=key)
    texts = []
    for i, item in enumerate(value):
        text = item.get("text") if isinstance(item, dict) else None
        if not isinstance(text, str):
            raise ScoringError("text must be a string", record=rid, field=f"{key}[{i}].text")
        texts.append(text)
    return texts


def score_record(
    record: Dict[str, Any],
    *,
    variants: Sequence[str] = (),
    bertscore: Optional[BertScorer] = None,
    record_id: Optional[str] = None,
    lcs: Optional[_rouge.LcsFn] = None,
) -> RecordResult:
    """The algorithmic step (``run_algorithmic.py``) on one task record.

    ``pred = predictions[0].text``.  Writes ``Recall``, ``RougeL_stemFalse``, (with a
    ``bertscore`` scorer: ``BertscoreP``, ``BertscoreR``, ``BertKPrec``),
    ``Extractiveness_RougeL`` (absent with no passages), ``Length`` and, when BertscoreR is
    available (from the scorer or already in the input ``metrics``) and there is at least
    one target, ``RB_agg``.

    Reference behaviours kept: an existing ``metrics`` dict is **appended to** (and RB_agg
    then reads the old ``[0]`` entries; a diagnostic names the record); integer
    ``task_id``/``conversation_id`` become strings (pandas ``dtype=str``); a metric's
    list is created inside the reference's loop over targets (passages), so with
    ``targets == []`` no per-target key (``Recall``, ``RougeL_stemFalse``, ``BertscoreP/R``,
    ``Length``) and no ``RB_agg`` is written, and with no passages no per-passage key.
    Defined values for reference crashes: missing/empty ``predictions`` raise
    :class:`ScoringError` naming the task; a missing ``contexts`` key counts as ``[]``
    with a diagnostic.  Not emulated: pandas filling keys missing from a record with
    ``NaN`` (that needs the whole file in memory); such keys stay absent.

    The input record is not modified; a shallow copy with a new ``metrics`` is returned.
    """
    variants = _check_variants(variants)
    tokenizer = _tokenizer(variants)
    rid = record_id or _record_id(record, "record")
    diagnostics: List[str] = []

    predictions = record.get("predictions")
    if not isinstance(predictions, list) or not predictions:
        raise ScoringError("'predictions' is missing or empty", record=rid, field="predictions")
    first = predictions[0]
    pred = first.get("text") if isinstance(first, dict) else None
    if not isinstance(pred, str):
        raise ScoringError("must be a string", record=rid, field="predictions[0].text")
    targets = _texts(record, "targets", rid, required=True) or []
    passages = _texts(record, "contexts", rid, required=False)
    if passages is None:
        diagnostics.append(f"{rid}: 'contexts' missing, treated as []")
        passages = []

    out = dict(record)
    for key in ("task_id", "conversation_id"):
        value = out.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            out[key] = str(value)
    old = record.get("metrics")
    if old is None:
        metrics: Dict[str, Any] = {}
    elif isinstance(old, dict):
        metrics = {k: (list(v) if isinstance(v, list) else v) for k, v in old.items()}
    else:
        raise ScoringError("'metrics' must be an object", record=rid, field="metrics")

    appended: List[str] = []

    def put(name: str, values: List[Any]) -> None:
        # The reference creates a metric's list inside its loop over targets (or passages),
        # so with no targets (or passages) the key is not written at all.
        if not values:
            return
        if name in metrics:
            current = metrics[name]
            if not isinstance(current, list):
                raise ScoringError("existing metric is not a list", record=rid, field=f"metrics.{name}")
            appended.append(name)
            current.extend(values)
        else:
            metrics[name] = values

    # The prediction is normalised, cleaned and tokenized once per record (not once per
    # target or passage); each target and passage once.  Same values as recall(),
    # rouge_l_stem_false() and extractiveness_rouge_l() called pair by pair.
    if targets:
        put("Recall", _recalls(pred, targets))
        pred_tokens = _rouge.tokenize(pred, tokenizer=tokenizer)
        target_tokens = [_rouge.tokenize(t, tokenizer=tokenizer) for t in targets]
        put("RougeL_stemFalse", [s.fmeasure for s in _rouge.rouge_l_many(target_tokens, pred_tokens, lcs=lcs)])
    if bertscore is not None:
        pairs = [bertscore(pred, t) for t in targets]
        put("BertscoreP", [p for p, _ in pairs])
        put("BertscoreR", [r for _, r in pairs])
        put("BertKPrec", [bertscore(pred, p)[0] for p in passages])
    if passages:
        put("Extractiveness_RougeL", _extractiveness(pred, passages, tokenizer, lcs))
    put("Length", [len(pred)] * len(targets))
    if targets and "BertscoreR" in metrics:
        try:
            result = rb_agg_from_metrics(metrics, unguarded="rb_agg_unguarded" in variants)
        except ScoringError as exc:
            raise ScoringError(exc.msg, record=rid, field=exc.field) from None
        if result.note:
            diagnostics.append(f"{rid}: RB_agg: {result.note}")
        put("RB_agg", [result.value])
    if appended:
        diagnostics.append(
            f"{rid}: input already had metrics {', '.join(appended)}; new values appended "
            "(as the reference; RB_agg reads the first entries)"
        )
    out["metrics"] = metrics
    return RecordResult(out, diagnostics)


def _recalls(pred: str, targets: Sequence[str]) -> List[Number]:
    """:func:`recall` of ``pred`` against each target, normalising ``pred`` once."""
    pred_counts = Counter(_answer_tokens(pred))
    out: List[Number] = []
    for target in targets:
        target_tokens = _answer_tokens(target)
        common = sum((pred_counts & Counter(target_tokens)).values())
        out.append(0 if common == 0 else 1.0 * common / len(target_tokens))
    return out


def _extractiveness(pred: str, passages: Sequence[str], tokenizer: str, lcs: Optional[_rouge.LcsFn]) -> List[Number]:
    """:func:`extractiveness_rouge_l` of ``pred`` against each passage, cleaning ``pred`` once."""
    text = clean_for_extractiveness(pred)
    squeezed = text.replace(" ", "")
    out: List[Number] = []
    scored: List[Tuple[int, List[str]]] = []  # (index in out, passage tokens) of the passages ROUGE-L scores
    for passage in passages:
        target = clean_for_extractiveness(passage)
        if target.replace(" ", "") in squeezed:
            out.append(1)
            continue
        scored.append((len(out), _rouge.tokenize(target, tokenizer=tokenizer)))
        out.append(0)
    if scored:
        text_tokens = _rouge.tokenize(text, tokenizer=tokenizer)
        scores = _rouge.rouge_l_many([tokens for _, tokens in scored], text_tokens, lcs=lcs)
        for (i, _), s in zip(scored, scores):
            out[i] = s.fmeasure
    return out


def round_floats(value: Any, digits: int = 10) -> Any:
    """Round every float in a JSON value to ``digits`` decimals, as pandas
    ``to_json(double_precision=10)`` does when the reference rewrites its file; NaN and
    infinities become ``None`` (pandas writes ``null``).  Ints and bools are untouched.

    >>> round_floats({"m": [0.9999997615814201, 1e-12, 2, float("nan")]})
    {'m': [0.9999997616, 0.0, 2, None]}
    """
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        return round(value, digits)
    if isinstance(value, dict):
        return {k: round_floats(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [round_floats(v, digits) for v in value]
    return value


def condition_record(
    record: Dict[str, Any],
    *,
    metrics: Sequence[str] = CONDITIONED_METRICS,
    variants: Sequence[str] = (),
    record_id: Optional[str] = None,
) -> RecordResult:
    """IDK conditioning of one record (the reference's last pipeline stage).

    For each name in ``metrics`` that the record has, writes
    ``<name>_idk_underspecified`` (or ``<name>_idk`` with ``paper_idk``) as ``[x]`` using
    :func:`condition_idk` on ``metrics[name][0]``, ``answerability[0]``,
    ``metrics.idk_eval[0]`` and ``metrics.underspecified_eval[0]``.  An existing
    conditioned key is overwritten.  A requested metric that the record lacks is skipped
    with a diagnostic.  Missing ``idk_eval`` raises :class:`ScoringError` (the reference
    raises KeyError); with the default rules, an UNDERSPECIFIED row without
    ``underspecified_eval`` also raises.
    """
    variants = _check_variants(variants)
    paper = "paper_idk" in variants
    rid = record_id or _record_id(record, "record")
    diagnostics: List[str] = []
    old = record.get("metrics")
    if not isinstance(old, dict):
        raise ScoringError("missing 'metrics' object", record=rid, field="metrics")
    answerability = answerability_of(record, alias="answerability_alias" in variants)

    def first(name: str, required: bool) -> Any:
        value = old.get(name)
        if isinstance(value, list) and value:
            return value[0]
        if required:
            raise ScoringError("missing or empty", record=rid, field=f"metrics.{name}")
        return None

    idk = first("idk_eval", True)
    underspecified = None
    if not paper and answerability == "UNDERSPECIFIED":
        underspecified = first("underspecified_eval", True)
    new = dict(old)
    for name in metrics:
        value = old.get(name)
        if not isinstance(value, list) or not value:
            diagnostics.append(f"{rid}: metric {name} missing; not conditioned")
            continue
        new[conditioned_key(name, paper_idk=paper)] = [
            condition_idk(value[0], answerability, idk, underspecified=underspecified, paper_idk=paper)
        ]
    out = dict(record)
    out["metrics"] = new
    return RecordResult(out, diagnostics)


# ---------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------

#: Answerability labels and their summary group names, in output order.
GROUPS = (
    ("ANSWERABLE", "Answerable"),
    ("PARTIAL", "Partial"),
    ("UNANSWERABLE", "Unanswerable"),
    ("UNDERSPECIFIED", "Underspecified"),
    ("CONVERSATIONAL", "Conversational"),
)
_GROUP_NAME = dict(GROUPS)
#: Groups that the paper's "all" column leaves out.
EXCLUDED_FROM_ALL = ("Conversational",)


def answerability_group(label: Optional[str]) -> str:
    """Summary group of an answerability label; anything unknown or missing is ``Unknown``
    (counted in ``all``, like the reference's conditioning treats it as answerable)."""
    if label is None:
        return "Unknown"
    return _GROUP_NAME.get(label.upper(), "Unknown")


class GroupMean(NamedTuple):
    """Mean of one metric over one group: ``n`` numeric values, ``mean`` (``None`` if n=0),
    ``skipped`` non-numeric values (null, ``"unknown"``) left out of the mean."""

    n: int
    mean: Optional[float]
    skipped: int


class ExactMean:
    """Running mean in constant memory with an exactly rounded sum.

    Keeps Shewchuk's non-overlapping partials (the algorithm behind ``math.fsum``; the
    list stays a few entries long), so :attr:`mean` equals
    ``math.fsum(values) / n`` whatever the order or number of values.
    Non-numeric values (None, NaN, strings) are counted in :attr:`skipped`.

    >>> m = ExactMean()
    >>> for v in [0.1] * 10 + [None]:
    ...     m.add(v)
    >>> m.n, m.mean, m.skipped
    (10, 0.1, 1)
    """

    __slots__ = ("partials", "n", "skipped")

    def __init__(self) -> None:
        self.partials: List[float] = []
        self.n = 0
        self.skipped = 0

    def add(self, value: Any) -> None:
        if not _is_number(value) or not math.isfinite(value):
            self.skipped += 1
            return
        self.n += 1
        self._add_exact(float(value))

    def merge(self, other: "ExactMean") -> None:
        """Fold in ``other`` exactly (its partials are added one by one, so the sum stays exact)."""
        for p in other.partials:
            self._add_exact(p)
        self.n += other.n
        self.skipped += other.skipped

    def data(self) -> List[Any]:
        """``[partials, n, skipped]`` as plain JSON data (floats round-trip exactly)."""
        return [list(self.partials), self.n, self.skipped]

    @classmethod
    def from_data(cls, data: Sequence[Any]) -> "ExactMean":
        m = cls()
        m.partials = [float(p) for p in data[0]]
        m.n = int(data[1])
        m.skipped = int(data[2])
        return m

    def _add_exact(self, x: float) -> None:
        i = 0
        partials = self.partials
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    @property
    def mean(self) -> Optional[float]:
        return math.fsum(self.partials) / self.n if self.n else None

    def result(self) -> GroupMean:
        return GroupMean(self.n, self.mean, self.skipped)


class SummaryAccumulator:
    """Per-(setting, model, group, metric) means in constant memory per key.

    Means are exactly rounded sums divided by n (see :class:`ExactMean`).  Groups:
    Answerable, Partial, Unanswerable (+ Underspecified, Conversational, Unknown when
    present) and ``all``, which leaves out Conversational as the paper's tables do.
    """

    def __init__(self) -> None:
        self._data: Dict[Tuple[str, str, str, str], ExactMean] = {}
        self._order: Dict[str, Dict[str, None]] = {}
        self._metrics: Dict[str, None] = {}

    def add(self, setting: str, model: str, group: str, values: Dict[str, Any]) -> None:
        models = self._order.setdefault(setting, {})
        models.setdefault(model, None)
        groups = [group] if group in EXCLUDED_FROM_ALL else [group, "all"]
        for metric, value in values.items():
            self._metrics.setdefault(metric, None)
            for g in groups:
                acc = self._data.get((setting, model, g, metric))
                if acc is None:
                    acc = self._data[(setting, model, g, metric)] = ExactMean()
                acc.add(value)

    def data(self) -> Dict[str, Any]:
        """The state as plain JSON data."""
        return {
            "order": [[setting, list(models)] for setting, models in self._order.items()],
            "metrics": list(self._metrics),
            "means": [list(key) + [m.data()] for key, m in self._data.items()],
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> "SummaryAccumulator":
        acc = cls()
        for setting, models in data["order"]:
            acc._order[str(setting)] = dict.fromkeys(str(m) for m in models)
        acc._metrics = dict.fromkeys(str(m) for m in data["metrics"])
        for entry in data["means"]:
            key = (str(entry[0]), str(entry[1]), str(entry[2]), str(entry[3]))
            acc._data[key] = ExactMean.from_data(entry[4])
        return acc

    def merge(self, other: "SummaryAccumulator") -> None:
        """Fold in the accumulator of the next part of the input (exact; orders of first appearance kept)."""
        for setting, models in other._order.items():
            mine = self._order.setdefault(setting, {})
            for model in models:
                mine.setdefault(model, None)
        for metric in other._metrics:
            self._metrics.setdefault(metric, None)
        for key, m in other._data.items():
            if key in self._data:
                self._data[key].merge(m)
            else:
                self._data[key] = ExactMean.from_data(m.data())

    def result(self) -> Dict[str, Dict[str, Dict[str, Dict[str, GroupMean]]]]:
        """``{setting: {model: {group: {metric: GroupMean}}}}`` with groups in the order
        of :data:`GROUPS`, then Unknown, then ``all``; settings and models in order of
        first appearance, metrics in order of first appearance."""
        group_order = [name for _, name in GROUPS] + ["Unknown", "all"]
        out: Dict[str, Dict[str, Dict[str, Dict[str, GroupMean]]]] = {}
        for setting, models in self._order.items():
            per_model: Dict[str, Dict[str, Dict[str, GroupMean]]] = {}
            for model in models:
                per_group: Dict[str, Dict[str, GroupMean]] = {}
                for group in group_order:
                    per_metric: Dict[str, GroupMean] = {}
                    for metric in self._metrics:
                        acc = self._data.get((setting, model, group, metric))
                        if acc is not None:
                            per_metric[metric] = acc.result()
                    if per_metric:
                        per_group[group] = per_metric
                per_model[model] = per_group
            out[setting] = per_model
        return out


def summary_values(metrics: Dict[str, Any]) -> Dict[str, Any]:
    """The value of each metric of an evaluated record used in summaries.

    Per-passage metrics (``BertKPrec``, ``Extractiveness_RougeL``) use the maximum over
    passages (as the analytics files store ``Bert-KPrec``); every other metric uses the
    first entry (``[0]``, the first target, as RB_agg does).  Empty lists and
    non-list values are left out; ``idk_eval`` / ``underspecified_eval`` are included
    (``"unknown"`` counts as skipped).
    """
    out: Dict[str, Any] = {}
    for name, value in metrics.items():
        if not isinstance(value, list) or not value:
            continue
        if name in ("BertKPrec", "Extractiveness_RougeL"):
            numbers = [v for v in value if _is_number(v)]
            out[name] = max(numbers) if numbers else None
        else:
            out[name] = value[0]
    return out


# ---------------------------------------------------------------------------
# Column types: pandas decides int versus float per column, not per record
# ---------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "missing" if value != value else "float"
    if value is None:
        return "missing"
    return "object"


class ColumnTypes:
    """What kinds of value each column holds, and so its pandas dtype when the reference writes it.

    The reference builds ``idk_eval``, ``underspecified_eval`` and the
    conditioned metrics as DataFrame columns before putting each value into the
    record's ``metrics``; pandas gives the column one dtype (spec 11):

    * every value an int: ``int64``, the integers are written as integers;
    * ints with a float or a missing value (None, NaN): ``float64``, so every
      ``1``/``0`` is written ``1.0``/``0.0`` and a missing value ``null``;
    * a string (``"unknown"``) or another object anywhere: ``object``, every
      value keeps its own type (bools mixed with anything else too).

    The summary is a few flags per column, so it merges exactly (the union of
    the flags) and needs no record in memory: a streaming writer makes one pass
    to fill it and a second to write.

    >>> t = ColumnTypes()
    >>> for v in (1, 0, 0.5):
    ...     t.add("idk_eval", v)
    >>> t.add("x", 1); t.add("x", "unknown")
    >>> t.dtype("idk_eval"), t.cast("idk_eval", 1), t.dtype("x"), t.cast("x", 1)
    ('float', 1.0, 'object', 1)
    """

    def __init__(self) -> None:
        self.seen: Dict[str, List[str]] = {}

    def add(self, column: str, value: Any) -> None:
        kinds = self.seen.setdefault(column, [])
        kind = _kind(value)
        if kind not in kinds:
            kinds.append(kind)

    def merge(self, other: "ColumnTypes") -> None:
        for column, kinds in other.seen.items():
            mine = self.seen.setdefault(column, [])
            for kind in kinds:
                if kind not in mine:
                    mine.append(kind)

    def data(self) -> Dict[str, List[str]]:
        return {column: sorted(kinds) for column, kinds in self.seen.items()}

    @classmethod
    def from_data(cls, data: Mapping[str, Sequence[str]]) -> "ColumnTypes":
        out = cls()
        out.seen = {str(c): [str(k) for k in kinds] for c, kinds in data.items()}
        return out

    def dtype(self, column: str) -> str:
        """``int``, ``float``, ``bool`` or ``object`` (``int`` for a column never seen)."""
        kinds = set(self.seen.get(column, ()))
        if "object" in kinds:
            return "object"
        if "bool" in kinds:
            return "bool" if kinds == {"bool"} else "object"
        if kinds & {"float", "missing"}:
            return "float"
        return "int"

    def cast(self, column: str, value: Any) -> Any:
        """``value`` as the column's dtype writes it (an int in a float column becomes a float)."""
        if isinstance(value, int) and not isinstance(value, bool) and self.dtype(column) == "float":
            return float(value)
        return value


# ---------------------------------------------------------------------------
# Item rows and accumulators (the family contract, docs/adding-a-family.md)
# ---------------------------------------------------------------------------

#: The plain fields after the metrics of an algorithmic / condition item row.
ROW_FIELDS = ("group", "model", "non_numeric")


def _task_id(record: Mapping[str, Any]) -> Optional[str]:
    task_id = record.get("task_id")
    if isinstance(task_id, str):
        return task_id
    if isinstance(task_id, int) and not isinstance(task_id, bool):
        return str(task_id)
    return None


def _model(record: Mapping[str, Any]) -> Optional[str]:
    model = record.get("model_id")
    return None if model is None else str(model)


def _metric_row(
    record: Mapping[str, Any], values: Mapping[str, Any], names: Sequence[str], *, alias: bool = False
) -> ItemRow:
    """``task_id``, each of ``names`` (a finite number or None), ``group``, ``model``, ``non_numeric``.

    A metric the record lacks is None; one it has with no numeric value (null,
    NaN, a string) is None *and* named in ``non_numeric``, because the reports
    count it (its mean then shows as null) where an absent one is left out.
    """
    row: ItemRow = {"task_id": _task_id(record)}
    non_numeric: List[str] = []
    for name in names:
        if name not in values:
            row[name] = None
            continue
        value = values[name]
        if is_number(value) and math.isfinite(value):
            row[name] = value
        else:
            row[name] = None
            non_numeric.append(name)
    row["group"] = answerability_group(answerability_of(dict(record), alias=alias))
    row["model"] = _model(record)
    row["non_numeric"] = non_numeric
    return row


def _add_row_means(means: Mapping[str, ExactMean], item: ItemRow) -> None:
    skipped = item.get("non_numeric") or ()
    for name, mean in means.items():
        value = item.get(name)
        if value is not None:
            mean.add(value)
        elif name in skipped:
            mean.add(None)


def _means_data(means: Mapping[str, ExactMean]) -> Dict[str, Any]:
    return {name: m.data() for name, m in means.items()}


def _means_report(
    n: int, output: Optional[str], means: Mapping[str, ExactMean]
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The ``result`` payload and the gateable metrics of a streamed step (a metric no record had is left out)."""
    present = {k: v for k, v in means.items() if v.n or v.skipped}
    result = {
        "records": n,
        "output": output,
        "means": {k: v.mean for k, v in present.items()},
        "counts": {k: v.n for k, v in present.items()},
    }
    metrics: Dict[str, Any] = {"records": n}
    metrics.update((k, v.mean) for k, v in present.items())
    return result, metrics


def algorithmic_row(scored: Mapping[str, Any]) -> ItemRow:
    """The item row of a record that :func:`score_record` has filled: the value of each metric
    the report averages (``[0]`` of a per-target list, the max of a per-passage one; see
    :func:`summary_values`)."""
    return _metric_row(scored, summary_values(scored["metrics"]), ALGORITHMIC_METRICS)


def algorithmic_item(
    record: Dict[str, Any],
    *,
    variants: Sequence[str] = (),
    bertscore: Optional[BertScorer] = None,
    lcs: Optional[_rouge.LcsFn] = None,
) -> ItemRow:
    """The ``algorithmic`` item row of one task record.

    >>> row = algorithmic_item({"task_id": "t", "targets": [{"text": "the cat sat"}], "contexts": [],
    ...                         "predictions": [{"text": "a cat sat"}]})
    >>> row["task_id"], row["Recall"], row["Length"], row["BertKPrec"], row["group"]
    ('t', 1.0, 9, None, 'Unknown')
    """
    return algorithmic_row(score_record(record, variants=variants, bertscore=bertscore, lcs=lcs).record)


class _MeansAccumulator(Accumulator):
    """The state the algorithmic, condition and judge steps share: a record count and one
    :class:`ExactMean` per metric (a subclass fills ``self.means`` in ``__init__``)."""

    records: int
    means: Dict[str, ExactMean]

    def _data(self) -> Dict[str, Any]:
        return {"records": self.records, "means": _means_data(self.means)}

    def _load(self, data: Mapping[str, Any]) -> None:
        self.records = int(data["records"])
        self.means = {name: ExactMean.from_data(data["means"][name]) for name in self.means}

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, type(self))
        self.records += other.records
        for name, mean in self.means.items():
            mean.merge(other.means[name])

    def add(self, item: ItemRow) -> None:
        self.records += 1
        _add_row_means(self.means, item)

    def _means_final(self, params: Sequence[Tuple[str, object]]) -> Report:
        """The report of the algorithmic and condition steps (their signature ``params``)."""
        result, metrics = _means_report(self.records, self.params["output"], self.means)
        return Report(
            family=FAMILY,
            signature=signature(variants=self.params["variants"], params=params),
            result=result,
            metrics=metrics,
            diagnostics=self.notes(),
        )


@register_accumulator
class AlgorithmicAccumulator(_MeansAccumulator):
    """``mtrag algorithmic``: the exact mean of each metric over the records (see :class:`ExactMean`)."""

    FAMILY = FAMILY
    COMMAND = "algorithmic"
    DIRECTIONS = {
        "Recall": "higher",
        "RougeL_stemFalse": "higher",
        "BertscoreP": "higher",
        "BertscoreR": "higher",
        "BertKPrec": "higher",
        "RB_agg": "higher",
    }

    def __init__(
        self,
        *,
        output: Optional[str] = None,
        variants: Sequence[str] = (),
        bertscore: str = "input",
        backend: str = "stdlib",
    ) -> None:
        super().__init__(output=output, variants=list(check_variants(variants)), bertscore=bertscore, backend=backend)
        self.records = 0
        self.means = {name: ExactMean() for name in ALGORITHMIC_METRICS}

    def finalize(self) -> Report:
        params: List[Tuple[str, object]] = [("step", "algorithmic"), ("bertscore", self.params["bertscore"])]
        if self.params["backend"] != "stdlib":
            params.append(("backend", self.params["backend"]))
        return self._means_final(params)


def condition_row(conditioned: Mapping[str, Any], keys: Sequence[str], *, alias: bool = False) -> ItemRow:
    """The item row of a record that :func:`condition_record` has conditioned (``keys``: its conditioned keys)."""
    metrics = conditioned["metrics"]
    values = {k: metrics[k][0] for k in keys if isinstance(metrics.get(k), list) and metrics[k]}
    return _metric_row(conditioned, values, keys, alias=alias)


def condition_item(
    record: Dict[str, Any],
    *,
    metrics: Sequence[str] = CONDITIONED_METRICS,
    variants: Sequence[str] = (),
    digits: Optional[int] = 10,
) -> ItemRow:
    """The ``condition`` item row of one evaluated record (the value each record gets, before
    the file's column typing; see :class:`ColumnTypes`).

    >>> condition_item({"task_id": "t", "answerability": ["UNANSWERABLE"],
    ...                 "metrics": {"RB_agg": [0.4], "idk_eval": [1]}}, metrics=["RB_agg"])
    {'task_id': 't', 'RB_agg_idk_underspecified': 1, 'group': 'Unanswerable', 'model': None, 'non_numeric': []}
    """
    variants = check_variants(variants)
    if digits is not None:
        record = round_floats(record, digits)
    out = condition_record(record, metrics=metrics, variants=variants)
    keys = [conditioned_key(m, paper_idk="paper_idk" in variants) for m in metrics]
    return condition_row(out.record, keys, alias="answerability_alias" in variants)


@register_accumulator
class ConditionAccumulator(_MeansAccumulator):
    """``mtrag condition``: the exact mean of each conditioned metric over the records."""

    FAMILY = FAMILY
    COMMAND = "condition"
    DIRECTIONS = {
        "RL_F_idk_underspecified": "higher",
        "RB_llm_idk_underspecified": "higher",
        "RB_agg_idk_underspecified": "higher",
        "RL_F_idk": "higher",
        "RB_llm_idk": "higher",
        "RB_agg_idk": "higher",
    }

    def __init__(
        self,
        *,
        output: Optional[str] = None,
        metrics: Sequence[str] = CONDITIONED_METRICS,
        variants: Sequence[str] = (),
        digits: Optional[int] = 10,
    ) -> None:
        variants = check_variants(variants)
        super().__init__(output=output, metrics=list(metrics), variants=list(variants), digits=digits)
        self.keys = [conditioned_key(m, paper_idk="paper_idk" in variants) for m in metrics]
        self.records = 0
        self.means = {key: ExactMean() for key in self.keys}

    def finalize(self) -> Report:
        params = [
            ("step", "condition"),
            ("metrics", ",".join(self.params["metrics"])),
            ("float_digits", self.params["digits"]),
        ]
        return self._means_final(params)


#: ``mtrag judge`` steps and the metric each writes, in the reference pipeline's order
#: (``run_generation_eval.py``: underspecified judge, IDK judge, RAGAS, RADBench).
JUDGE_METRICS = {"underspecified": "underspecified_eval", "idk": "idk_eval", "rl_f": "RL_F", "rb_llm": "RB_llm"}
#: The judged metrics that are built as pandas columns of 0 / 0.5 / 1 (see :class:`ColumnTypes`).
JUDGE_COLUMNS = ("underspecified_eval", "idk_eval")


def judge_item(record: Mapping[str, Any], *, steps: Sequence[str]) -> ItemRow:
    """The ``judge`` item row of a judged record: ``task_id``, the first value of each step's metric
    (as judged: ``"unknown"`` and None stay), ``group``, ``model``.

    >>> judge_item({"task_id": "t", "metrics": {"idk_eval": ["unknown"], "RB_llm": [0.8]}}, steps=["idk", "rb_llm"])
    {'task_id': 't', 'idk_eval': 'unknown', 'RB_llm': 0.8, 'group': 'Unknown', 'model': None}
    """
    metrics = record.get("metrics") or {}
    row: ItemRow = {"task_id": _task_id(record)}
    for step in steps:
        name = JUDGE_METRICS[step]
        value = metrics.get(name)
        first = value[0] if isinstance(value, list) and value else None
        row[name] = None if isinstance(first, float) and not math.isfinite(first) else first
    row["group"] = answerability_group(answerability_of(dict(record)))
    row["model"] = _model(record)
    return row


@register_accumulator
class JudgeAccumulator(_MeansAccumulator):
    """``mtrag judge``: the exact mean of each judged metric (non-numeric answers left out)."""

    FAMILY = FAMILY
    COMMAND = "judge"
    DIRECTIONS = {"RB_llm": "higher", "RL_F": "higher"}

    def __init__(
        self,
        *,
        output: Optional[str] = None,
        steps: Sequence[str] = ("idk", "rb_llm", "rl_f"),
        judge_template: str = "builtin",
        judge_model: str = "none",
    ) -> None:
        bad = [s for s in steps if s not in JUDGE_METRICS]
        if bad or not steps:
            raise ScoringError(
                f"--steps: unknown step(s) {', '.join(bad) or '(none)'}; choose from {', '.join(JUDGE_METRICS)}"
            )
        super().__init__(output=output, steps=list(steps), judge_template=judge_template, judge_model=judge_model)
        self.records = 0
        self.means = {JUDGE_METRICS[s]: ExactMean() for s in steps}

    def add(self, item: ItemRow) -> None:
        self.records += 1
        for name, mean in self.means.items():
            mean.add(item.get(name))

    @classmethod
    def metric_names(cls, *, steps: Sequence[str]) -> List[str]:
        """The gateable names (before the runner's judge statistics are added)."""
        return ["records"] + [JUDGE_METRICS[s] for s in steps if s in JUDGE_METRICS]

    def finalize(self) -> Report:
        steps = self.params["steps"]
        means = {name: m.mean for name, m in self.means.items()}
        params = [
            ("step", "judge"),
            ("steps", "+".join(steps)),
            ("judge_template", self.params["judge_template"]),
            ("judge_model", self.params["judge_model"]),
        ]
        return Report(
            family=FAMILY,
            signature=signature(params=params),
            result={"records": self.records, "output": self.params["output"], "steps": list(steps), "means": means},
            metrics=dict([("records", self.records)] + list(means.items())),
            diagnostics=self.notes(),
        )


# ---------------------------------------------------------------------------
# File-level functions: algorithmic, condition (streaming), summarize
# ---------------------------------------------------------------------------

Output = Union[str, Any]  # a path (written atomically) or a text stream


@contextmanager
def _records_writer(output: Output) -> Iterator[Any]:
    if isinstance(output, str):
        with atomic_writer(output) as fh:
            yield fh
    else:
        yield output


def _output_label(output: Output, name: Optional[str]) -> Optional[str]:
    if name is not None:
        return name
    return output if isinstance(output, str) else "-"


def _check_not_input(path: str, output: Output) -> None:
    if not isinstance(output, str):
        return
    same = os.path.abspath(path) == os.path.abspath(output)
    if not same and os.path.exists(output):
        try:
            same = os.path.samefile(path, output)
        except OSError:
            pass
    if same:
        raise ScoringError("the records file must differ from the input", path=output)


def _record_rid(path: str, line_no: int, record: Mapping[str, Any]) -> str:
    task_id = record.get("task_id")
    if isinstance(task_id, (str, int)) and not isinstance(task_id, bool):
        return f"task_id={task_id}"
    return f"{path}:{line_no}"


def _checked(path: str, item: Numbered) -> Tuple[int, Dict[str, Any], str]:
    line_no, record = parse_item(path, item)
    if not isinstance(record, dict):
        raise ScoringError("expected a JSON object", path=path, line=line_no)
    return line_no, record, _record_rid(path, line_no, record)


def _located(exc: ScoringError, path: str, line_no: int, rid: str) -> ScoringError:
    return ScoringError(
        exc.msg, path=path, line=line_no, field=exc.field, record=rid if rid.startswith("task_id=") else None
    )


def _json_algorithmic(record: Dict[str, Any]) -> str:
    # run_algorithmic.py writes with json.dump: ASCII escapes, full repr, NaN kept.
    return json.dumps(record)


def _json_pandas(record: Dict[str, Any]) -> str:
    # close to pandas to_json(orient="records", lines=True): compact, ASCII, "\/".
    return json.dumps(record, separators=(",", ":"), allow_nan=False).replace("/", "\\/")


def _algorithmic_work(
    item: Numbered,
    *,
    path: str,
    variants: Sequence[str],
    bertscore: Optional[BertScorer],
    lcs: Optional[_rouge.LcsFn],
) -> Tuple[ItemRow, Tuple[str, List[str]]]:
    """Per-record work of :func:`algorithmic_file` (runs in a worker under ``--jobs``):
    the item row, and the output line with the record's diagnostics."""
    line_no, record, rid = _checked(path, item)
    try:
        result = score_record(record, variants=variants, bertscore=bertscore, record_id=rid, lcs=lcs)
    except ScoringError as exc:
        raise _located(exc, path, line_no, rid) from None
    return algorithmic_row(result.record), (_json_algorithmic(result.record) + "\n", result.diagnostics)


def _engine_for(bertscore: Optional[BertScorer]) -> Optional[Engine]:
    # A BERTScore model stays in this process (it is neither small nor always picklable).
    return Engine() if bertscore is not None else None


def algorithmic_file(
    path: str,
    output: Output,
    *,
    variants: Sequence[str] = (),
    bertscore: Optional[BertScorer] = None,
    bertscore_name: Optional[str] = None,
    lcs: Optional[_rouge.LcsFn] = None,
    backend: str = "stdlib",
    on_item: Optional[Callable[[ItemRow], None]] = None,
    output_name: Optional[str] = None,
) -> Report:
    """``mtrag algorithmic``: write every record of ``path`` with its ``metrics`` to ``output``
    (as ``run_algorithmic.py``, one record at a time) and report the mean of each metric.

    ``output`` is a path (written atomically: a bad input leaves nothing) or a text stream;
    ``output_name`` is what the report shows as ``output`` (default: the path, ``-`` for a
    stream).  ``bertscore`` is the BERTScore hook (see :data:`BertScorer`), named
    ``bertscore_name`` in the signature (default ``scorer``; ``input`` without a hook);
    ``lcs`` an exact LCS-length function for the ROUGE-L metrics, named ``backend``.
    ``on_item`` receives each item row (:func:`algorithmic_item`) in input order.

    The records are read here and scored on the current engine (``--jobs``, Dask; see
    :mod:`rageval_min._parallel`); the output lines are written here, in input order.  With
    a ``bertscore`` hook the scoring stays in this process.
    """
    variants = check_variants(variants)
    _check_not_input(path, output)
    name = bertscore_name or ("input" if bertscore is None else "scorer")
    acc = AlgorithmicAccumulator(
        output=_output_label(output, output_name), variants=variants, bertscore=name, backend=backend
    )
    fn = functools.partial(_algorithmic_work, path=path, variants=variants, bertscore=bertscore, lcs=lcs)
    return _write_records(acc, fn, path, output, on_item=on_item, engine=_engine_for(bertscore))


def _write_records(
    acc: Accumulator,
    fn: Callable[[Numbered], Tuple[ItemRow, Tuple[str, List[str]]]],
    path: str,
    output: Output,
    *,
    on_item: Optional[Callable[[ItemRow], None]],
    engine: Optional[Engine] = None,
) -> Report:
    """Score every record of ``path`` with ``fn`` on the current engine (or ``engine``): add
    the rows to ``acc``, write each output line to ``output`` in input order and note its
    diagnostics; raise the collected problems (nothing is written then); the report."""
    errors = DeferredProblems()
    with _records_writer(output) as fh:
        write = fh.write

        def on_result(extra: Tuple[str, List[str]]) -> None:
            write(extra[0])
            for d in extra[1]:
                acc.note(d)

        accumulate_items(
            acc,
            fn,
            deferred_jsonl(path),
            on_item=errors.wanted(on_item),
            on_result=errors.wanted(on_result),
            on_error=errors,
            engine=engine,
        )
        errors.raise_if_any()
    return finish(acc)


def _conditioned(
    item: Numbered,
    *,
    path: str,
    metrics: Sequence[str],
    variants: Sequence[str],
    digits: Optional[int],
    keys: Sequence[str],
    alias: bool,
) -> Tuple[RecordResult, ItemRow, List[str]]:
    line_no, record, rid = _checked(path, item)
    if digits is not None:
        record = round_floats(record, digits)  # values as the reference reads them
    try:
        result = condition_record(record, metrics=metrics, variants=variants, record_id=rid)
    except ScoringError as exc:
        raise _located(exc, path, line_no, rid) from None
    row = condition_row(result.record, keys, alias=alias)
    present = [k for k in keys if row[k] is not None or k in row["non_numeric"]]
    return result, row, present


def _condition_types_work(item: Numbered, **options: Any) -> Tuple[None, List[Tuple[str, Any]]]:
    """Pass 1 of :func:`condition_file`: validate one record; its conditioned ``(key, value)`` pairs."""
    result, _, present = _conditioned(item, **options)
    m = result.record["metrics"]
    return None, [(key, m[key][0]) for key in present]


def _condition_write_work(
    item: Numbered, *, types: Optional["ColumnTypes"], **options: Any
) -> Tuple[ItemRow, Tuple[str, List[str]]]:
    """Pass 2 of :func:`condition_file`: the item row, and the output line (typed by ``types``)."""
    result, row, present = _conditioned(item, **options)
    record = result.record
    if types is None:
        line = json.dumps(record)
    else:
        m = record["metrics"]
        for key in present:
            m[key] = [types.cast(key, m[key][0])]
        line = _json_pandas(record)
    return row, (line + "\n", result.diagnostics)


class _Discard:
    """The accumulator of a pass that only validates (it gets no rows)."""

    def add(self, item: ItemRow) -> None:  # pragma: no cover - pass 1 returns no rows
        raise AssertionError("pass 1 adds no rows")


def condition_file(
    path: str,
    output: Output,
    *,
    metrics: Sequence[str] = CONDITIONED_METRICS,
    variants: Sequence[str] = (),
    digits: Optional[int] = 10,
    on_item: Optional[Callable[[ItemRow], None]] = None,
    output_name: Optional[str] = None,
) -> Report:
    """``mtrag condition``: IDK-condition every record of ``path`` into ``output`` and report the means.

    With ``digits`` (default 10) the records are written as the reference's pandas
    writer does: every float rounded to ``digits`` decimals (before conditioning, as the
    reference reads them back), compact JSON, and each conditioned metric typed by its
    **column** (:class:`ColumnTypes`): one float or null anywhere in a column writes every
    ``1``/``0`` of it as ``1.0``/``0.0``.  The column types need the whole file, so the input
    is read twice: the first pass validates every record and fills the type summary (nothing
    is written when a record is bad), the second writes; no record is held in memory.
    ``digits=None`` (``--full-precision``) writes plain ``json.dumps`` records, each value
    with its own type.  ``on_item`` receives each item row (:func:`condition_item`).

    Both passes score on the current engine (``--jobs``, Dask); the lines are written
    here in input order.  A shard's records are typed by the shard's own columns (the
    report, which holds means, merges exactly; see ``docs/mtrag.md``).
    """
    variants = check_variants(variants)
    metrics = list(metrics)
    paper = "paper_idk" in variants
    keys = [conditioned_key(m, paper_idk=paper) for m in metrics]
    _check_not_input(path, output)
    acc = ConditionAccumulator(
        output=_output_label(output, output_name), metrics=metrics, variants=variants, digits=digits
    )
    options: Dict[str, Any] = dict(
        path=path,
        metrics=metrics,
        variants=variants,
        digits=digits,
        keys=keys,
        alias="answerability_alias" in variants,
    )
    types = ColumnTypes()

    def add_types(pairs: List[Tuple[str, Any]]) -> None:
        for key, value in pairs:
            types.add(key, value)

    errors = DeferredProblems()  # pass 1: validate, and the dtype of each conditioned column
    accumulate_items(
        _Discard(),
        functools.partial(_condition_types_work, **options),
        deferred_jsonl(path),
        on_result=errors.wanted(add_types),
        on_error=errors,
    )
    errors.raise_if_any()
    fn = functools.partial(_condition_write_work, types=None if digits is None else types, **options)
    return _write_records(acc, fn, path, output, on_item=on_item)  # pass 2: write


#: The plain fields of a ``summarize`` item row (every other key is a metric).
SUMMARY_FIELDS = ("task_id", "source", "setting", "input", "format", "model", "group")


@register_accumulator
class SummarizeAccumulator(Accumulator):
    """``mtrag summarize``: per (setting, model, group, metric) exact means (see :class:`SummaryAccumulator`).

    The sources (setting label, input path, format) come from the item rows, in
    input order; every input gives at least one row.
    """

    FAMILY = FAMILY
    COMMAND = "summarize"
    DIRECTIONS: ClassVar[Mapping[str, str]] = {}

    def __init__(self, *, metrics: Sequence[str] = (), variants: Sequence[str] = ()) -> None:
        super().__init__(metrics=list(metrics), variants=list(check_variants(variants)))
        self.table = SummaryAccumulator()
        self.sources: List[List[Any]] = []

    def add(self, item: ItemRow) -> None:
        index = int(item["source"])
        if not self.sources or self.sources[-1][0] != index:
            if all(s[0] != index for s in self.sources):
                self.sources.append([index, item["setting"], item["input"], item["format"]])
        values = {k: v for k, v in item.items() if k not in SUMMARY_FIELDS}
        self.table.add(str(item["setting"]), str(item["model"]), str(item["group"]), values)

    def _data(self) -> Dict[str, Any]:
        return {"sources": [list(s) for s in self.sources], "table": self.table.data()}

    def _load(self, data: Mapping[str, Any]) -> None:
        self.sources = [[int(s[0]), str(s[1]), str(s[2]), str(s[3])] for s in data["sources"]]
        self.table = SummaryAccumulator.from_data(data["table"])

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, SummarizeAccumulator)
        for s in other.sources:
            if all(mine[0] != s[0] for mine in self.sources):
                self.sources.append(list(s))
        self.table.merge(other.table)

    def missing_metrics(self) -> List[str]:
        """The ``metrics`` asked for that no row had."""
        seen = set(self.table._metrics)
        return sorted(set(self.params["metrics"]) - seen)

    def finalize(self) -> Report:
        table = self.table.result()
        result_settings = []
        gate_metrics: Dict[str, Any] = {}
        for _, label, path, kind in sorted(self.sources, key=lambda s: s[0]):
            models = table.get(label, {})
            result_settings.append(
                {
                    "setting": label,
                    "input": path,
                    "format": kind,
                    "models": {
                        mo: {g: {m: gm._asdict() for m, gm in per.items()} for g, per in groups.items()}
                        for mo, groups in models.items()
                    },
                }
            )
            for mo, groups in models.items():
                for g, per in groups.items():
                    for m, gm in per.items():
                        gate_metrics["/".join(_gate_label(x) for x in (label, mo, g, m))] = gm.mean
        return Report(
            family=FAMILY,
            signature=signature(variants=self.params["variants"], params=[("step", "summarize"), ("mean", "fsum")]),
            result={"settings": result_settings},
            metrics=gate_metrics,
            diagnostics=self.notes(),
        )


def summarize_row(
    task_id: Optional[str],
    values: Mapping[str, Any],
    *,
    source: int,
    setting: str,
    input: str,
    format: str,
    model: str,
    group: str,
) -> ItemRow:
    """A ``summarize`` item row: ``task_id``, the metric values, then the plain fields (:data:`SUMMARY_FIELDS`)."""
    clash = [k for k in values if k in SUMMARY_FIELDS]
    if clash:
        raise ScoringError(f"a metric is named {clash[0]!r}, a reserved item-row field", path=input)
    row: ItemRow = {"task_id": task_id}
    row.update(values)
    row.update(source=source, setting=setting, input=input, format=format, model=model, group=group)
    return row


def summarize_item(
    record: Mapping[str, Any],
    *,
    setting: str,
    input: str = "-",
    source: int = 0,
    model: Optional[str] = None,
    metrics: Sequence[str] = (),
    variants: Sequence[str] = (),
) -> ItemRow:
    """The ``summarize`` item row of one evaluated JSONL record (``model``: the name used when the
    record has no ``model_id``; default the setting label).

    >>> rec = {"task_id": "t", "answerability": ["PARTIAL"], "metrics": {"RB_llm": [0.8], "BertKPrec": [0.1, 0.3]}}
    >>> summarize_item(rec, setting="demo")
    {'task_id': 't', 'RB_llm': 0.8, 'BertKPrec': 0.3, 'source': 0, 'setting': 'demo', 'input': '-', \
'format': 'jsonl', 'model': 'demo', 'group': 'Partial'}
    """
    variants = check_variants(variants)
    if not isinstance(record.get("metrics"), dict):
        raise ScoringError("expected an object with a 'metrics' object", field="metrics")
    values = summary_values(record["metrics"])
    if metrics:
        values = {k: v for k, v in values.items() if k in metrics}
    name = record.get("model_id")
    return summarize_row(
        _task_id(record),
        values,
        source=source,
        setting=setting,
        input=input,
        format="jsonl",
        model=str(name) if name is not None else (model or setting),
        group=answerability_group(answerability_of(dict(record), alias="answerability_alias" in variants)),
    )


def _gate_label(text: str) -> str:
    return "_".join(text.split()).replace("<", "_").replace(">", "_").replace("=", "_")


def _analytics_rows(path: str, data: Dict[str, Any]) -> Iterator[Tuple[Optional[str], str, str, Dict[str, Any]]]:
    """``(task_id, model, group, values)`` for each evaluation of an InspectorRAGet analytics file.

    Evaluations are under ``evaluations`` (``annotations``) or, in schema 2, under
    ``results`` (``scores``).  A metric's value is the ``value`` of its only annotator
    (``system``/``composite``) when numeric or null; human (multi-annotator) and
    categorical metrics are left out.  Answerability comes from the task's
    ``Answerability`` or ``answerability`` (list or string)."""
    tasks = data.get("tasks")
    if not isinstance(tasks, list):
        raise ScoringError("analytics file without a 'tasks' list", path=path, field="tasks")
    answer: Dict[str, Optional[str]] = {}
    for i, task in enumerate(tasks):
        if not isinstance(task, dict) or "task_id" not in task:
            raise ScoringError("task without task_id", path=path, field=f"tasks[{i}]")
        label = answerability_of(task, alias=True) if "answerability" not in task else answerability_of(task)
        answer[str(task["task_id"])] = label
    evals = data.get("evaluations")
    key = "annotations"
    if evals is None:
        evals, key = data.get("results"), "scores"
    if not isinstance(evals, list):
        raise ScoringError("analytics file without 'evaluations' or 'results'", path=path)
    if not evals:
        raise ScoringError("analytics file holds no evaluations", path=path)
    for i, ev in enumerate(evals):
        if not isinstance(ev, dict) or not isinstance(ev.get(key), dict):
            raise ScoringError(f"evaluation without '{key}'", path=path, field=f"evaluations[{i}]")
        task_id = str(ev.get("task_id"))
        if task_id not in answer:
            raise ScoringError(f"unknown task_id {task_id!r}", path=path, field=f"evaluations[{i}].task_id")
        values: Dict[str, Any] = {}
        for metric, by_annotator in ev[key].items():
            if not isinstance(by_annotator, dict) or len(by_annotator) != 1:
                continue
            (entry,) = by_annotator.values()
            value = entry.get("value") if isinstance(entry, dict) else None
            if value is None or is_number(value):
                values[metric] = value
        yield task_id, str(ev.get("model_id")), answerability_group(answer[task_id]), values


def _summarize_jsonl_work(
    item: Numbered,
    *,
    path: str,
    source: int,
    setting: str,
    model: str,
    alias: bool,
    wanted: Sequence[str],
) -> ItemRow:
    """The ``summarize`` item row of one evaluated JSONL record (runs in a worker under ``--jobs``)."""
    line_no, record = parse_item(path, item)
    if not isinstance(record, dict) or not isinstance(record.get("metrics"), dict):
        raise ScoringError("expected an object with a 'metrics' object", path=path, line=line_no, field="metrics")
    name = record.get("model_id")
    values = summary_values(record["metrics"])
    if wanted:
        values = {k: v for k, v in values.items() if k in wanted}
    return summarize_row(
        _task_id(record),
        values,
        source=source,
        setting=setting,
        input=path,
        format="jsonl",
        model=str(name) if name is not None else model,
        group=answerability_group(answerability_of(record, alias=alias)),
    )


def _summarize_analytics_work(
    row: Tuple[Optional[str], str, str, Dict[str, Any]],
    *,
    path: str,
    source: int,
    setting: str,
    wanted: Sequence[str],
) -> ItemRow:
    task_id, model, group, values = row
    if wanted:
        values = {k: v for k, v in values.items() if k in wanted}
    return summarize_row(
        task_id, values, source=source, setting=setting, input=path, format="analytics", model=model, group=group
    )


def summarize_files(
    inputs: Sequence[str],
    *,
    settings: Sequence[str] = (),
    metrics: Sequence[str] = (),
    model: Optional[str] = None,
    variants: Sequence[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """``mtrag summarize``: means per setting, model and answerability group of evaluated
    JSONL files (``.jsonl``) and/or InspectorRAGet analytics files, one setting per input.

    ``settings`` label the inputs (default: the file name without extension); ``metrics``
    keeps only these metrics (each must occur); ``model`` names JSONL records without
    ``model_id`` (default: the setting label).  ``on_item`` receives each item row:
    ``task_id``, the record's metric values, then ``source`` (the input's index),
    ``setting``, ``input``, ``format``, ``model``, ``group``.  An input with no
    evaluation is an input error.
    """
    variants = check_variants(variants)
    if settings and len(settings) != len(inputs):
        raise ScoringError(f"{len(settings)} --setting labels for {len(inputs)} --input files", field="--setting")
    if not inputs:
        raise ScoringError("no --input file", field="--input")
    wanted = list(dict.fromkeys(metrics))
    acc = SummarizeAccumulator(metrics=wanted, variants=variants)
    alias = "answerability_alias" in variants
    for index, path in enumerate(inputs):
        label = settings[index] if settings else os.path.splitext(os.path.basename(path))[0]
        if path.endswith(".jsonl"):
            fn = functools.partial(
                _summarize_jsonl_work,
                path=path,
                source=index,
                setting=label,
                model=model or label,
                alias=alias,
                wanted=wanted,
            )
            errors = DeferredProblems()
            accumulate_items(acc, fn, deferred_jsonl(path), on_item=errors.wanted(on_item), on_error=errors)
            errors.raise_if_any()
            continue
        data = read_json(path)
        if not isinstance(data, dict):
            raise ScoringError("expected an analytics object (or use a .jsonl file of evaluated records)", path=path)
        fn = functools.partial(_summarize_analytics_work, path=path, source=index, setting=label, wanted=wanted)
        accumulate_items(acc, fn, _analytics_rows(path, data), on_item=on_item)
    missing = acc.missing_metrics()
    if missing:
        raise ScoringError(f"no values for metric(s) {', '.join(missing)}", field="--metric")
    return finish(acc)


def _fmt(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def format_summary_text(report: Report, outcomes: Sequence[Any] = ()) -> str:
    """The ``text`` format of a ``summarize`` report: tables per setting, one row per model and
    group, one column per metric (means); any other mtrag report in the common text format."""
    if "settings" not in report.result:
        return render(report, "text", outcomes)
    lines = ["rageval-min mtrag summarize", f"signature: {report.signature}"]
    for setting in report.result["settings"]:
        lines.append("")
        lines.append(f"setting {setting['setting']} ({setting['format']}: {setting['input']})")
        metric_names: List[str] = []
        for groups in setting["models"].values():
            for per in groups.values():
                for m in per:
                    if m not in metric_names:
                        metric_names.append(m)
        rows = [["model", "group", "n"] + metric_names]
        for mo, groups in setting["models"].items():
            for g, per in groups.items():
                n = max((v["n"] for v in per.values()), default=0)
                rows.append([mo, g, str(n)] + [_fmt(per[m]["mean"]) if m in per else "" for m in metric_names])
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines.extend("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)
    if outcomes:
        lines.append("")
        for o in outcomes:
            status = {True: "pass", False: "FAIL", None: "skipped"}[o.passed]
            lines.append(f"gate {o.text}: {_fmt(o.value) if o.value is not None else 'n/a'} {status}")
        ok = all(o.passed is not False for o in outcomes)
        lines.append("result: " + ("PASS" if ok else "FAIL"))
    return "\n".join(lines) + "\n"


#: The family's own renderings (format name -> renderer), used by the CLI and ``rageval-min merge``.
REPORT_FORMATS = {"text": format_summary_text}


def signature(*, variants: Sequence[str] = (), params: Sequence[Tuple[str, object]] = ()) -> str:
    """The reproducibility signature of an mtrag result (``params`` in the command's fixed order).

    >>> signature(params=[("step", "summarize")])
    'rageval_min:...|family=mtrag|ref=IBM/mt-rag-benchmark@cc5b1d4|variants=none|step=summarize'
    """
    return make_signature(FAMILY, REFERENCE, check_variants(variants), params)
