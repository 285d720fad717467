"""Mirrors IBM/mt-rag-benchmark@cc5b1d4:scripts/evaluation/run_algorithmic.py: the algorithmic metrics and RB_agg.

The step's item rows and accumulator are here too; its file-level function is
:func:`rageval_min.mtrag.files.algorithmic_file`.

Int-versus-float rules of the reference are kept, because they reach the JSON output:

* per value, in the algorithmic step (plain ``json.dump`` of Python values): ``Recall`` is
  int ``0`` when nothing overlaps, ``RougeL_stemFalse`` int ``0`` when a side has no tokens,
  ``Extractiveness_RougeL`` int ``1`` on the containment shortcut, ``RB_agg`` int ``0`` under
  the zero guard, ``Length`` always int.  (The per-column rule of the later steps is
  :mod:`rageval_min.mtrag.conditioning`'s.)

BERTScore is not computed here (it needs model weights).  ``RB_agg`` uses ``BertscoreR`` and
``BertKPrec`` values already present in the input record's ``metrics``, or values produced
by an optional scorer callable (see :data:`BertScorer`) passed to :func:`score_record`.
"""

import functools
import re
import string
from collections import Counter
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .. import rouge as _rouge
from .._contract import ItemRow, register_accumulator
from .._metrics import Input, InputField, Metric
from .._numbers import as_float
from .._speedups_loader import kernels
from .._state_schema import Count, Fields, Items, Schema, Text
from ..errors import ScoringError
from ..report import Report
from ._common import (
    ALGORITHMIC_METRICS,
    ANSWERABILITY_FIELDS,
    BACKEND_STATE,
    FAMILY,
    MODEL_FIELD,
    OUTPUT_STATE,
    RECORDS_METRIC,
    STEP_VARIANTS,
    TASK_ID_FIELD,
    BertScorer,
    ExactMean,
    Number,
    RecordResult,
    _check_variants,
    _is_number,
    _MeansAccumulator,
    _metric_row,
    _record_id,
    _texts,
    _tokenizer,
    check_variants,
    exact_mean_state,
)
from .summarize import summary_values

__all__ = [
    "AlgorithmicAccumulator",
    "RBAgg",
    "algorithmic_item",
    "clean_for_extractiveness",
    "extractiveness_rouge_l",
    "k_prec",
    "length",
    "normalize_answer",
    "rb_agg",
    "rb_agg_from_metrics",
    "recall",
    "rouge_l_stem_false",
    "score_record",
]

_PUNCT_BYTES = string.punctuation.encode("ascii")
_ARTICLE_WORDS = frozenset(("a", "an", "the"))
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NON_WORD = re.compile(r"[^\w\s]")


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
    c = kernels()  # the C kernel, when built (the same string)
    done = c.clean_extractive(text) if c is not None else None
    if done is not None:
        return done  # type: ignore[no-any-return]
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


class RBAgg(NamedTuple):
    """Result of :func:`rb_agg`: the value (``None`` when undefined) and, when the reference
    would have crashed, a note explaining the defined value."""

    value: Optional[Number]
    note: Optional[str]


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
    as_float(rouge_l, field="metrics.RougeL_stemFalse[0]")  # 401 digits: an input error
    kprec = metrics.get("BertKPrec")
    if kprec is not None and (not isinstance(kprec, list) or not all(v is None or _is_number(v) for v in kprec)):
        raise ScoringError("must be a list of numbers or null", field="metrics.BertKPrec")
    for v in kprec or ():
        if v is not None:
            as_float(v, field="metrics.BertKPrec")
    r_list = metrics.get("BertscoreR")
    r_raw = r_list[0] if isinstance(r_list, list) and r_list else None
    if isinstance(r_raw, (int, float)) and not isinstance(r_raw, bool):
        try:
            r_half = (r_raw + 1) / 2
        except OverflowError:  # beyond the float range: the reference's bare except falls back too
            r_half = None
        if r_half is not None:
            return _rb_agg_core(r_half, rouge_l, kprec, unguarded=unguarded, note=None)
    note = "BertscoreR[0] unusable; R = Recall[0] (the reference's bare except)"
    recall0 = metrics["Recall"][0]
    if not _is_number(recall0):
        raise ScoringError("must be a number", field="metrics.Recall[0]")
    as_float(recall0, field="metrics.Recall[0]")
    return _rb_agg_core(recall0, rouge_l, kprec, unguarded=unguarded, note=note)


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
    pred, targets, passages = _record_inputs(record, rid, diagnostics)
    out, metrics = _output_record(record, rid)
    appended: List[str] = []
    put = functools.partial(_put, metrics, appended, rid)
    # The prediction is normalised, cleaned and tokenized once per record (not once per
    # target or passage); each target and passage once.  Same values as recall(),
    # rouge_l_stem_false() and extractiveness_rouge_l() called pair by pair.
    if targets:
        put("Recall", _recalls(pred, targets))
        put("RougeL_stemFalse", [s.fmeasure for s in _rouge.rouge_l_texts(targets, pred, tokenizer=tokenizer, lcs=lcs)])
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


def _record_inputs(record: Dict[str, Any], rid: str, diagnostics: List[str]) -> Tuple[str, List[str], List[str]]:
    """``(prediction, targets, passages)`` of a task record, checked (a missing ``contexts`` is
    ``[]``, with a diagnostic)."""
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
    return pred, targets, passages


def _output_record(record: Dict[str, Any], rid: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The shallow copy written out (integer ids as strings) and a copy of its ``metrics`` to fill."""
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
    return out, metrics


def _put(metrics: Dict[str, Any], appended: List[str], rid: str, name: str, values: List[Any]) -> None:
    """Write ``values`` as metric ``name``, appending to an existing list (named in ``appended``).

    The reference creates a metric's list inside its loop over targets (or passages),
    so with no targets (or passages) the key is not written at all.
    """
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


def _recalls(pred: str, targets: Sequence[str]) -> List[Number]:
    """:func:`recall` of ``pred`` against each target, normalising ``pred`` once."""
    c = kernels()  # the C kernel's (common, n_target) per target, when built
    found = c.answer_overlaps(pred, list(targets)) if c is not None else None
    if found is not None:
        return [0 if common == 0 else 1.0 * common / n for common, n in found]
    pred_counts = Counter(_answer_tokens(pred))
    out: List[Number] = []
    for target in targets:
        target_tokens = _answer_tokens(target)
        common = sum((pred_counts & Counter(target_tokens)).values())
        out.append(0 if common == 0 else 1.0 * common / len(target_tokens))
    return out


def _drop_spaces(text: str) -> str:
    return text.replace(" ", "")


def _extractiveness(pred: str, passages: Sequence[str], tokenizer: str, lcs: Optional[_rouge.LcsFn]) -> List[Number]:
    """:func:`extractiveness_rouge_l` of ``pred`` against each passage, cleaning ``pred`` once."""
    c = kernels() if tokenizer == "reference" and lcs is None else None
    found = c.extractive_counts(pred, list(passages)) if c is not None else None  # the C kernel's counts
    if found is not None:
        n, counts = found
        scores = _rouge.rouge_l_counts(n, [k for k in counts if k is not None])
        return [1 if k is None else scores.pop(0).fmeasure for k in counts]
    text = clean_for_extractiveness(pred)
    c = kernels()  # str.replace(" ", "") costs about 15 ns a character; the kernel one pass
    squeeze = c.drop_spaces if c is not None else _drop_spaces
    squeezed = squeeze(text)
    out: List[Number] = []
    scored: List[Tuple[int, str]] = []  # (index in out, cleaned passage) of the passages ROUGE-L scores
    for passage in passages:
        target = clean_for_extractiveness(passage)
        if squeeze(target) in squeezed:
            out.append(1)
            continue
        scored.append((len(out), target))
        out.append(0)
    if scored:
        scores = _rouge.rouge_l_texts([t for _, t in scored], text, tokenizer=tokenizer, lcs=lcs)
        for (i, _), s in zip(scored, scores):
            out[i] = s.fmeasure
    return out


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


@register_accumulator
class AlgorithmicAccumulator(_MeansAccumulator):
    """``mtrag algorithmic``: the exact mean of each metric over the records (see :class:`ExactMean`)."""

    FAMILY = FAMILY
    COMMAND = "algorithmic"
    METRICS = (
        RECORDS_METRIC,
        Metric("Recall", "higher", "mean", "token recall of the answer against the first target", True, lo=0.0, hi=1.0),
        Metric(
            "RougeL_stemFalse",
            "higher",
            "mean",
            "ROUGE-L F of the answer against the first target",
            True,
            lo=0.0,
            hi=1.0,
        ),
        Metric("BertscoreP", "higher", "mean", "rescaled BERTScore precision against the first target", True),
        Metric("BertscoreR", "higher", "mean", "rescaled BERTScore recall against the first target", True),
        Metric("BertKPrec", "higher", "mean", "rescaled BERTScore precision against the best passage", True),
        Metric(
            "Extractiveness_RougeL",
            "neither",
            "mean",
            "how much of the answer is copied from the best passage (ROUGE-L F, 1 when contained)",
            True,
            lo=0.0,
            hi=1.0,
        ),
        Metric("Length", "neither", "mean", "answer length in characters", True, lo=0.0),
        Metric("RB_agg", "higher", "mean", "harmonic mean of BERTScore recall, ROUGE-L and BertKPrec", True),
    )
    INPUTS = (
        Input(
            "--input",
            "task records with predictions, targets and contexts",
            "task_id",
            (
                TASK_ID_FIELD,
                InputField("conversation_id", ("string", "integer"), False, "left out"),
                InputField("predictions", ("array",), True, "an input error (predictions[0].text is the answer)"),
                InputField("targets", ("array",), True, "an input error"),
                InputField("contexts", ("array",), False, "read as [] with a diagnostic (no per-passage metric)"),
                InputField(
                    "metrics", ("object", "null"), False, "a new metrics object (BertscoreR etc. absent: no RB_agg)"
                ),
            )
            + ANSWERABILITY_FIELDS
            + (MODEL_FIELD,),
        ),
    )

    STATE_SCHEMA = Schema(
        params=Fields(
            {
                "output": OUTPUT_STATE,
                "variants": Items(Text(choices=STEP_VARIANTS["algorithmic"]), unique=True),
                "bertscore": Text(max_len=10_000),  # "input" or the scorer's identity
                "backend": BACKEND_STATE,
            }
        ),
        data=Fields(
            {
                "records": Count(),
                "means": Fields({name: exact_mean_state("data.records") for name in ALGORITHMIC_METRICS}),
            }
        ),
    )

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
