"""MT-RAG generation metrics (IBM ``mt-rag-benchmark``, ``scripts/evaluation``).

Reference: ``IBM/mt-rag-benchmark@cc5b1d4`` (``run_algorithmic.py``, ``judge_wrapper.py``,
``judge_utils.py``); spec ``specs/mtrag.md``.  Everything here is a pure function of its
arguments; the CLI (``rageval-min mtrag ...``) lives in ``_cmd_mtrag.py``.

Canonical metric names (identical in the API, the CLI and the output records)::

    Recall  RougeL_stemFalse  BertscoreP  BertscoreR  BertKPrec  Extractiveness_RougeL
    Length  RB_agg  idk_eval  underspecified_eval  RB_llm  RL_F
    RL_F_idk_underspecified  RB_llm_idk_underspecified  RB_agg_idk_underspecified   (default)
    RL_F_idk  RB_llm_idk  RB_agg_idk                                              (paper_idk)

Every output value is a list: one entry per target for ``Recall``, ``RougeL_stemFalse``,
``BertscoreP``, ``BertscoreR`` and ``Length``; one per passage for ``BertKPrec`` and
``Extractiveness_RougeL`` (key absent when there are no passages); ``[x]`` for the rest.

Int-versus-float rules of the reference are kept, because they reach the JSON output:
``Recall`` is int ``0`` when nothing overlaps, ``RougeL_stemFalse`` int ``0`` when a side
has no tokens, ``Extractiveness_RougeL`` int ``1`` on the containment shortcut, ``RB_agg``
int ``0`` under the zero guard, ``Length`` always int.

Variants (opt-in, named in the signature): ``rb_agg_unguarded``, ``paper_idk``,
``answerability_alias``, ``unicode_tokens``.

BERTScore is not computed here (it needs model weights).  ``RB_agg`` uses ``BertscoreR`` and
``BertKPrec`` values already present in the input record's ``metrics``, or values produced
by an optional scorer callable (see :data:`BertScorer`) passed to :func:`score_record`.
"""

import json
import math
import re
import string
from collections import Counter
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from . import rouge as _rouge
from .errors import ScoringError

__all__ = [
    "REF",
    "VARIANTS",
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

REF = "IBM/mt-rag-benchmark@cc5b1d4"
VARIANTS = ("rb_agg_unguarded", "paper_idk", "answerability_alias", "unicode_tokens")

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

_PUNCT_TABLE = {ord(ch): None for ch in string.punctuation}
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NON_WORD = re.compile(r"[^\w\s]")


def _check_variants(variants: Iterable[str]) -> Tuple[str, ...]:
    names = tuple(variants)
    for name in names:
        if name not in VARIANTS:
            raise ScoringError(f"unknown mtrag variant {name!r} (known: {', '.join(VARIANTS)})", field="variant")
    return names


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
    text = text.lower()
    text = text.translate(_PUNCT_TABLE)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _overlap(prediction: str, target: str) -> Tuple[int, int, int]:
    pred_tokens = normalize_answer(prediction).split()
    target_tokens = normalize_answer(target).split()
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
    text = _NON_WORD.sub("", text.replace("\n", " ")).lower()
    return text.replace("\r", "\n").lstrip(" \t\n\r\x0c")


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


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


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


_FENCED_JSON = re.compile(r"```json(.*?)```", re.DOTALL)
_FIRST_OBJECT = re.compile(r"\{(.*?)\}", re.DOTALL)
_BAD_ESCAPE = re.compile(r"\\(?![\"\\/bfnrt]|u[0-9a-fA-F]{4})")


def parse_underspecified(text: Any) -> Number:
    """Parse an underspecified judge output into ``underspecified_eval``.

    Take the ```` ```json ```` fenced block if present, else the first ``{...}``
    (non-greedy, to the first ``}``); remove invalid backslash escapes; parse it as a JSON
    object; ``decision`` ``yes`` -> ``1``, ``no`` -> ``0``, anything else -> ``0.5``; any
    failure (no object, bad JSON, not a string) -> ``0.5``.

    The fenced block's content is stripped of surrounding braces before re-wrapping, so
    ``{...}`` inside the fence and the bare first object parse alike.  The decision is
    compared exactly (``"Yes"`` gives 0.5): the spec names no case folding here, unlike
    :func:`first_token_idk`.  Both points follow the spec's description; the upstream
    source was not available to confirm them.

    >>> parse_underspecified('{"decision": "yes", "explanation": "x"}')
    1
    >>> parse_underspecified('```json\\n{"decision": "no"}\\n```')
    0
    >>> parse_underspecified("no json here")
    0.5
    """
    try:
        fenced = _FENCED_JSON.search(text)
        if fenced is not None:
            body = fenced.group(1).strip()
            if body.startswith("{") and body.endswith("}"):
                body = body[1:-1]
        else:
            obj = _FIRST_OBJECT.search(text)
            if obj is None:
                return 0.5
            body = obj.group(1)
        body = _BAD_ESCAPE.sub("", body)
        data = json.loads("{" + body + "}")
        decision = data["decision"]
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
    text = _FOR_EXAMPLE.sub("", text)
    found: Optional[str] = None
    for pattern in _RATING_PATTERNS:
        match = pattern.search(text)
        if match is not None:
            found = match.group(1)
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


def _record_id(record: Dict[str, Any], fallback: Optional[str]) -> str:
    task_id = record.get("task_id")
    if isinstance(task_id, (str, int)) and not isinstance(task_id, bool):
        return f"task_id={task_id}"
    return fallback or "record"


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
    ``task_id``/``conversation_id`` become strings (pandas ``dtype=str``).
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
        if name in metrics:
            current = metrics[name]
            if not isinstance(current, list):
                raise ScoringError("existing metric is not a list", record=rid, field=f"metrics.{name}")
            appended.append(name)
            current.extend(values)
        else:
            metrics[name] = values

    put("Recall", [recall(pred, t) for t in targets])
    put("RougeL_stemFalse", [rouge_l_stem_false(pred, t, tokenizer=tokenizer, lcs=lcs) for t in targets])
    if bertscore is not None:
        pairs = [bertscore(pred, t) for t in targets]
        put("BertscoreP", [p for p, _ in pairs])
        put("BertscoreR", [r for _, r in pairs])
        if passages:
            put("BertKPrec", [bertscore(pred, p)[0] for p in passages])
    if passages:
        put(
            "Extractiveness_RougeL",
            [extractiveness_rouge_l(pred, p, tokenizer=tokenizer, lcs=lcs) for p in passages],
        )
    put("Length", [length(pred) for _ in targets])
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
        x = float(value)
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


def signature(variants: Sequence[str] = (), params: Sequence[Tuple[str, object]] = ()) -> str:
    """The reproducibility signature of an mtrag result."""
    from ._signature import make_signature

    variants = _check_variants(variants)
    return make_signature("mtrag", REF, variants, params)
