"""RGB (Retrieval-Augmented Generation Benchmark): answer labels, robustness rates, document mixing.

Reference: ``chen700564/RGB@65ec39e:evalue.py`` (mixing, labels and the score object),
``chen700564/RGB@65ec39e:reject_evalue.py`` (Rej*) and ``chen700564/RGB@65ec39e:fact_evalue.py``
(ED*, CR).  The upstream code and data are CC BY-NC-SA 4.0; this module is a clean-room
implementation written from the project's RGB spec and ships no upstream code, data or prompt
text; the behaviour is pinned by the conformance vectors in ``tests/data/`` and the gold
samples in ``gold_samples/rgb/``.

The four abilities RGB measures all come from the same per-answer labels:

* **noise robustness**: ``all_rate`` on the base sets (``en``/``zh``) per noise rate;
* **negative rejection**: ``all_rate`` at noise rate 1.0 (in the reference this is
  "rejected *or* correct", see :func:`score`);
* **information integration**: ``all_rate`` on the ``_int`` sets;
* **counterfactual robustness**: ``fact_check_rate`` (error detection) and ``correct_rate``
  (error correction) on the ``_fact`` sets.

Pipeline (pure functions)::

    mix_documents(instance, ...)      -> the passages shown to the model (seeded, bit-exact)
    label_prediction(raw, answer, ...) -> Label(label, factlabel, prediction)
    score(results, ...)               -> Scores (the reference's ``_result.json`` object)

Files (the commands of ``rageval-min rgb``; plain keyword arguments, no argparse)::

    mix_file(path, ..., on_instance)   -> StepSummary         (rgb mix)
    label_file(path, ..., on_record)   -> StepSummary         (rgb label)
    score_file(path, ..., on_item)     -> Report              (rgb score [--judged])
    score_judged_records(records, ...) -> Report              (rgb judge, after the judge calls)
    report_files(paths, ...)           -> Report              (rgb report: the four abilities)

Item rows and accumulators (the family contract, ``docs/adding-a-family.md``): one input
record gives one item row (:func:`label_row`, :func:`judged_row`, :func:`skipped_row`):
``id``, ``label``, then 0/1 outcomes under the names of the rates they make
(``all_rate``, ``fact_check_rate``, ``correct_rate``, ``reject_rate``) plus ``correct`` and
``rejected``; a record the reference drops has every outcome ``None`` and ``skipped`` set.
:class:`ScoreAccumulator` (``rgb score``) and :class:`JudgeAccumulator` (``rgb judge``)
add integer counters, so merging any partition is exact.

Label meaning (authoritative): ``1`` = answer element found, ``0`` = not found, ``[-1]`` =
the model rejected (said the information is insufficient).

Reference quirks kept by default (each is documented on the function that has it):
case-sensitive keywords checked in both languages for every dataset; zh datasets remove
U+0020 from the prediction only; ``str.lower`` (not ``casefold``) for answer matching;
``[]`` labels are never correct; ``""`` answers always match; at noise 1 "rejected or
correct" counts; ``correct_rate`` is the int ``0`` when nothing was flagged; ``correct_tt``
ignores ``1 in label``; the ``_int`` mixer never truncates to the positive count; the default
mixer clamps only one side; fewer documents than ``passage_num`` are possible.

Where the reference crashes, this module either skips the instance exactly as the
reference's catch-all does (raising :class:`InstanceSkipped`, which batch callers turn into a
diagnostic naming the record) or returns the spec's defined value with a diagnostic.
"""

import functools
import hashlib
import json
import math
import os
import random
import re
import unicodedata
from typing import (
    Any,
    Callable,
    Dict,
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

from .._contract import Accumulator, ItemRow, finish, register_accumulator
from .._io import Problems, iter_records
from .._parallel import accumulate_items
from .._signature import make_signature
from ..errors import ScoringError
from ..report import Report

__all__ = [
    "DEFAULT_SEED",
    "FACT_KEYWORDS",
    "FAMILY",
    "FactJudgeScores",
    "REPORT_FORMATS",
    "InstanceSkipped",
    "JUDGED",
    "JudgeAccumulator",
    "Label",
    "REF",
    "REFERENCE",
    "REJECT_KEYWORDS",
    "RejectJudgeScores",
    "RunName",
    "ScoreAccumulator",
    "Scores",
    "StepSummary",
    "VARIANTS",
    "abilities_table",
    "ability_rows",
    "build_answer_prompt",
    "build_fact_judge_prompt",
    "build_reject_judge_prompt",
    "check_answer",
    "check_noise_rate",
    "check_variants",
    "dataset_branch",
    "format_abilities",
    "format_result_json",
    "format_result_text",
    "ground_truth_of",
    "has_fact_flag",
    "is_rejection",
    "judge_prompts_file",
    "judged_row",
    "label_file",
    "label_prediction",
    "label_records",
    "label_row",
    "labelled_record",
    "mix_documents",
    "mix_file",
    "normalize_prediction",
    "parse_fact_judgement",
    "parse_prediction_filename",
    "parse_reject_judgement",
    "read_records",
    "report_files",
    "report_metric_names",
    "report_runs",
    "resolve_dataset",
    "resolve_noise_rate",
    "result_metrics",
    "score",
    "score_fact_judged",
    "score_file",
    "score_item",
    "score_judged_records",
    "score_reject_judged",
    "signature",
    "skipped_row",
    "template_id",
    "validate_stored_label",
]

Number = Union[int, float]

FAMILY = "rgb"
#: The reference, as written in the signature.
REFERENCE = "chen700564/RGB@65ec39e"
#: Former name of :data:`REFERENCE`.
REF = REFERENCE
#: The reference seeds stdlib ``random`` with this before mixing each instance.
DEFAULT_SEED = 2333

#: Rejection keywords (zh, en); both are checked for every dataset.
REJECT_KEYWORDS = ("信息不足", "insufficient information")
#: Factual-error keywords (zh, en); both are checked for every dataset.
FACT_KEYWORDS = ("事实性错误", "factual errors")

#: Opt-in variants (names fixed by the spec).  None is on by default.
VARIANTS = (
    "fact_correct_requires_hit",
    "match_casefold_nfkc",
    "noise1_reject_only",
    "reject_casefold",
    "zh_strip_unicode_space",
)


class InstanceSkipped(ScoringError):
    """An instance the reference drops in its catch-all ``try/except`` (so ``nums`` shrinks).

    Batch callers catch this, leave the instance out (parity) and record ``str(exc)`` as a
    diagnostic naming the record.  It is a :class:`ScoringError`, so single-record callers
    that do not catch it still get a clear error.
    """


# --------------------------------------------------------------------------- helpers


def check_variants(variants: Iterable[str]) -> Tuple[str, ...]:
    """Validate variant names; return them sorted and de-duplicated.

    >>> check_variants(["reject_casefold", "reject_casefold"])
    ('reject_casefold',)
    """
    names = sorted(set(variants))
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        raise ScoringError(
            f"unknown rgb variant {', '.join(unknown)}; known: {', '.join(VARIANTS)}",
            field="variant",
        )
    return tuple(names)


def _who(record_id: Any) -> Optional[str]:
    return None if record_id is None else f"id={record_id}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def dataset_branch(dataset: str) -> str:
    """The reference's branch for a dataset name, chosen by substring.

    ``'_int' in dataset`` wins over ``'_fact' in dataset``; anything else is the default
    branch (``en``, ``zh``, ``en_refine``, ``zh_refine``, ...).

    >>> [dataset_branch(d) for d in ("en", "zh_int", "en_fact", "zh_refine")]
    ['default', 'int', 'fact', 'default']
    """
    if "_int" in dataset:
        return "int"
    if "_fact" in dataset:
        return "fact"
    return "default"


def _is_zh(dataset: str) -> bool:
    return "zh" in dataset


def _is_fact(dataset: str) -> bool:
    return "_fact" in dataset


# --------------------------------------------------------------------------- labels


class Label(NamedTuple):
    """The labelling of one model output.

    ``label``: one int per ground-truth element (1 found, 0 not found) or ``[-1]`` for a
    rejection; ``factlabel``: 1 if a factual-error keyword occurs, else 0; ``prediction``:
    the stored prediction (zh: after space removal).
    """

    label: List[int]
    factlabel: int
    prediction: str


def normalize_prediction(prediction: str, dataset: str, *, variants: Iterable[str] = ()) -> str:
    """The prediction as the reference stores it.

    For zh datasets (``'zh' in dataset``) every U+0020 space is removed; tabs, newlines,
    NBSP and U+3000 are kept (quirk).  The ground truth is never touched.  Variant
    ``zh_strip_unicode_space`` removes every character for which ``str.isspace()`` holds.

    >>> normalize_prediction("答案是 12\\u3000人", "zh")
    '答案是12\\u3000人'
    >>> normalize_prediction("a b", "en")
    'a b'
    """
    if not isinstance(prediction, str):
        raise InstanceSkipped(f"prediction is {type(prediction).__name__}, not a string", field="prediction")
    if not _is_zh(dataset):
        return prediction
    if "zh_strip_unicode_space" in variants:
        return "".join(ch for ch in prediction if not ch.isspace())
    return prediction.replace(" ", "")


def _keyword_hit(keywords: Sequence[str], stored: str, raw: str, variants: Iterable[str]) -> bool:
    if "reject_casefold" in variants:
        zh_kw, en_kw = keywords
        return zh_kw.casefold() in stored.casefold() or en_kw.casefold() in raw.casefold()
    return any(k in stored for k in keywords)


def is_rejection(stored: str, *, raw: Optional[str] = None, variants: Iterable[str] = ()) -> bool:
    """Does the (normalized) prediction contain a rejection keyword?

    Default: a case-sensitive substring test for ``信息不足`` or ``insufficient information``
    on the stored prediction, in every dataset (so ``Insufficient information`` is not a
    rejection, and in zh datasets the English phrase never matches because its space was
    removed).  Variant ``reject_casefold`` compares ``casefold()``-ed text and checks the
    English keyword on ``raw`` (the text before zh space removal).

    >>> is_rejection("the insufficient information in documents")
    True
    >>> is_rejection("Insufficient information")
    False
    """
    return _keyword_hit(REJECT_KEYWORDS, stored, stored if raw is None else raw, variants)


def has_fact_flag(stored: str, *, raw: Optional[str] = None, variants: Iterable[str] = ()) -> bool:
    """Does the (normalized) prediction contain a factual-error keyword?

    Same rules as :func:`is_rejection` with ``事实性错误`` / ``factual errors``.
    """
    return _keyword_hit(FACT_KEYWORDS, stored, stored if raw is None else raw, variants)


def _fold(text: str, nfkc: bool) -> str:
    if nfkc:
        return unicodedata.normalize("NFKC", text).casefold()
    return text.lower()


def _lowered_alternatives(element: List[Any], index: int, nfkc: bool) -> List[str]:
    out = []
    for j, alt in enumerate(element):
        if not isinstance(alt, str):
            raise InstanceSkipped(
                f"ground-truth element {index} alternative {j} is {type(alt).__name__}, not a string "
                "(the reference raises AttributeError and drops the instance)",
                field="answer",
            )
        out.append(_fold(alt, nfkc))
    return out


def check_answer(prediction: str, ground_truth: Any, *, variants: Iterable[str] = ()) -> List[int]:
    """One int per ground-truth element: 1 if found in the prediction, else 0.

    ``p = prediction.lower()`` (full Unicode ``str.lower``, not ``casefold``, no NFKC).  A
    ground truth that is not a list is wrapped as ``[ground_truth]``.  For each element: a
    list of alternatives gives 1 if **any** ``alt.lower()`` is a substring of ``p``; a string
    gives 1 if ``element.lower()`` is a substring of ``p``.  So the top level is AND and an
    inner list is OR.  ``[]`` gives ``[]``; ``""`` always matches.  Variant
    ``match_casefold_nfkc`` uses ``unicodedata.normalize("NFKC", s).casefold()`` on both sides.

    A non-string scalar or alternative makes the reference raise AttributeError inside its
    per-instance ``try``, which drops the instance: :class:`InstanceSkipped` here.  All
    alternatives of an inner list are lower-cased before any is tested, as in the reference,
    so a bad alternative raises even after an earlier one would have matched.

    >>> check_answer("The winners were alice and BOB.", ["Alice", "Bob"])
    [1, 1]
    >>> check_answer("It is 1.5 percent.", [["1.5%", "1.5 percent"]])
    [1]
    >>> check_answer("Straße", "STRASSE")
    [0]
    >>> check_answer("Straße", "STRASSE", variants=["match_casefold_nfkc"])
    [1]
    """
    nfkc = "match_casefold_nfkc" in variants
    if not isinstance(prediction, str):
        raise InstanceSkipped(f"prediction is {type(prediction).__name__}, not a string", field="prediction")
    p = _fold(prediction, nfkc)
    elements = ground_truth if isinstance(ground_truth, list) else [ground_truth]
    labels: List[int] = []
    for i, element in enumerate(elements):
        if isinstance(element, list):
            alts = _lowered_alternatives(element, i, nfkc)
            labels.append(1 if any(a in p for a in alts) else 0)
        elif isinstance(element, str):
            labels.append(1 if _fold(element, nfkc) in p else 0)
        else:
            raise InstanceSkipped(
                f"ground-truth element {i} is {type(element).__name__}, not a string or list "
                "(the reference raises AttributeError and drops the instance)",
                field="answer",
            )
    return labels


def label_prediction(prediction: str, ground_truth: Any, *, dataset: str, variants: Iterable[str] = ()) -> Label:
    """Label one raw model output as the reference's ``predict`` post-processing does.

    In order: (a) zh datasets remove U+0020 from the prediction
    (:func:`normalize_prediction`); (b) if a rejection keyword occurs the label is ``[-1]``
    (:func:`is_rejection`; the ground truth is then not looked at, so a bad ground truth
    does not drop a rejected instance); (c) otherwise :func:`check_answer`; (d)
    ``factlabel`` from the factual-error keywords, independent of (b), so ``[-1]`` with
    factlabel 1 is possible.

    >>> label_prediction("答案是 12 人。", ["12人"], dataset="zh")
    Label(label=[1], factlabel=0, prediction='答案是12人。')
    >>> label_prediction("factual errors ... insufficient information", "x", dataset="en_fact")
    Label(label=[-1], factlabel=1, prediction='factual errors ... insufficient information')
    """
    variants = check_variants(variants)
    stored = normalize_prediction(prediction, dataset, variants=variants)
    if is_rejection(stored, raw=prediction, variants=variants):
        labels = [-1]
    else:
        labels = check_answer(stored, ground_truth, variants=variants)
    factlabel = 1 if has_fact_flag(stored, raw=prediction, variants=variants) else 0
    return Label(labels, factlabel, stored)


def ground_truth_of(record: Mapping[str, Any]) -> Any:
    """The ground truth of a record: ``ans`` (reference prediction files) or ``answer``.

    ``ans`` wins when both are present.  Missing both is a :class:`ScoringError`.
    """
    if "ans" in record:
        return record["ans"]
    if "answer" in record:
        return record["answer"]
    raise ScoringError("record has neither 'ans' nor 'answer' (the ground truth)", field="ans")


# --------------------------------------------------------------------------- aggregates


class Scores(NamedTuple):
    """The reference's score object (``_result.json``) plus diagnostics.

    Use :meth:`to_dict` for the JSON object with the reference's key order.  For non-fact
    datasets the ``fact_*``/``correct_*`` fields are not part of the output.
    """

    all_rate: Optional[float]
    noise_rate: Number
    tt: int
    nums: int
    fact: bool
    fact_check_rate: Optional[float]
    correct_rate: Number
    fact_tt: int
    correct_tt: int
    diagnostics: Tuple[str, ...]

    def to_dict(self) -> Dict[str, Any]:
        """Keys ``all_rate, noise_rate, tt, nums`` [+ ``fact_check_rate, correct_rate, fact_tt, correct_tt``]."""
        out: Dict[str, Any] = {
            "all_rate": self.all_rate,
            "noise_rate": self.noise_rate,
            "tt": self.tt,
            "nums": self.nums,
        }
        if self.fact:
            out["fact_check_rate"] = self.fact_check_rate
            out["correct_rate"] = self.correct_rate
            out["fact_tt"] = self.fact_tt
            out["correct_tt"] = self.correct_tt
        return out


def _checked_label(value: Any, who: Optional[str]) -> List[int]:
    if not isinstance(value, list) or not all(_is_int(x) and x in (-1, 0, 1) for x in value):
        raise ScoringError(
            f"label must be a list of ints -1/0/1, got {json.dumps(value, ensure_ascii=False)[:80]}",
            record=who,
            field="label",
        )
    return value


def _checked_factlabel(value: Any, who: Optional[str]) -> int:
    if not (_is_int(value) and value in (0, 1)):
        raise ScoringError(
            f"factlabel must be 0 or 1, got {json.dumps(value, ensure_ascii=False)[:40]}",
            record=who,
            field="factlabel",
        )
    return int(value)


def validate_stored_label(label: Any, factlabel: Any = None, *, fact: bool = False) -> None:
    """Check a stored ``label`` (list of ints -1/0/1) and, for fact datasets, ``factlabel`` (0/1).

    Raises :class:`ScoringError` with ``field`` set to the bad field.
    """
    _checked_label(label, None)
    if fact:
        _checked_factlabel(factlabel, None)


def _outcomes(label: List[int], *, noise1: bool, reject_only: bool) -> Tuple[int, int, int, bool]:
    """``(correct, rejected, hit, empty_at_noise1)`` of one label (the reference's rules)."""
    correct = 1 if (0 not in label and 1 in label) else 0
    rejected = 1 if (label and label[0] == -1) else 0
    if noise1:
        hit = rejected if reject_only else (rejected or correct)
    else:
        hit = correct
    return correct, rejected, 1 if hit else 0, noise1 and not label


def label_row(
    record_id: Any,
    label: List[int],
    factlabel: Any,
    *,
    dataset: str,
    noise_rate: Number,
    variants: Iterable[str] = (),
) -> ItemRow:
    """The item row of one labelled record for ``rgb score`` (see :class:`ScoreAccumulator`).

    Keys: ``id``, ``label``, then the 0/1 outcomes ``correct`` (``0 not in label and 1 in
    label``), ``rejected`` (``label[0] == -1``), ``all_rate`` (counted in ``tt``: correct, or
    at noise 1 rejected or correct), ``fact_check_rate`` (``factlabel == 1``; ``None`` on a
    non-fact dataset) and ``correct_rate`` (a flagged record counted in ``correct_tt``;
    ``None`` when not flagged or not a fact dataset), then ``skipped`` (``None``).
    ``label`` and, on a fact dataset, ``factlabel`` must be valid (they are not checked here).
    """
    variants = check_variants(variants)
    correct, rejected, hit, _ = _outcomes(label, noise1=noise_rate == 1, reject_only="noise1_reject_only" in variants)
    fact_check: Optional[int] = None
    corrected: Optional[int] = None
    if _is_fact(dataset):
        fact_check = 1 if factlabel == 1 else 0
        if fact_check:
            requires_hit = "fact_correct_requires_hit" in variants
            corrected = 1 if (0 not in label and (1 in label or not requires_hit)) else 0
    return {
        "id": record_id,
        "label": list(label),
        "correct": correct,
        "rejected": rejected,
        "all_rate": hit,
        "fact_check_rate": fact_check,
        "correct_rate": corrected,
        "skipped": None,
    }


def skipped_row(record_id: Any, reason: str, *, judged: Optional[str] = None) -> ItemRow:
    """The item row of a record the reference drops: every outcome ``None``, ``skipped`` = the reason."""
    keys = _JUDGED_ROW_KEYS if judged else _SCORE_ROW_KEYS
    row: ItemRow = {"id": record_id}
    row.update(dict.fromkeys(keys, None))
    row["skipped"] = reason
    return row


_SCORE_ROW_KEYS = ("label", "correct", "rejected", "all_rate", "fact_check_rate", "correct_rate")
_JUDGED_ROW_KEYS = ("label", "correct", "all_rate", "reject_rate", "correct_rate", "judge_template")


def _checked_record(record: Any, pos: int) -> Tuple[Any, Optional[str], List[int]]:
    if not isinstance(record, Mapping):
        raise ScoringError(f"record is {type(record).__name__}, not an object", record=f"record {pos}")
    rid = record.get("id")
    who = _who(rid) if rid is not None else f"record {pos}"
    if "label" not in record:
        raise ScoringError("record has no 'label'", record=who, field="label")
    return rid, who, _checked_label(record["label"], who)


def score(
    results: Iterable[Mapping[str, Any]],
    *,
    dataset: str,
    noise_rate: Number,
    variants: Iterable[str] = (),
) -> Scores:
    """The reference's aggregate over labelled records (``{label, factlabel[, id]}``).

    ``tt`` counts records with ``(noise_rate == 1 and label[0] == -1) or
    (0 not in label and 1 in label)``; ``all_rate = tt / nums`` with ``nums`` the number of
    records.  So ``[]`` is never correct, and at noise 1 (``1`` or ``1.0``) a correct answer
    counts as well as a rejection (the reference's "rejection rate" is "rejected or
    correct"; variant ``noise1_reject_only`` counts only rejections there).

    For ``'_fact' in dataset``: ``fact_tt`` = #``factlabel == 1``, ``fact_check_rate =
    fact_tt / nums`` (error detection), ``correct_tt`` = #``factlabel == 1 and 0 not in
    label`` (quirk: ``1 in label`` is not required, so ``[-1]`` or ``[]`` counts; variant
    ``fact_correct_requires_hit`` requires it), ``correct_rate = correct_tt / fact_tt`` or
    the **int** ``0`` when ``fact_tt == 0``.  No rounding.

    Crash paths of the reference, defined here: no records gives ``all_rate`` (and
    ``fact_check_rate``) ``None`` with the counts 0, ``correct_rate`` int 0 and the
    diagnostic "no scorable records"; ``label == []`` at noise 1 (IndexError upstream) is
    judged by the normal clause only (not counted) with a diagnostic naming the record.
    A stored label that is not a list of ints -1/0/1 (or a factlabel not 0/1 on a fact
    dataset) is a :class:`ScoringError`.

    >>> s = score([{"label": [1]}, {"label": [-1]}, {"label": [0]}], dataset="en", noise_rate=1.0)
    >>> s.to_dict()
    {'all_rate': 0.6666666666666666, 'noise_rate': 1.0, 'tt': 2, 'nums': 3}
    """
    variants = check_variants(variants)
    acc = ScoreAccumulator(dataset=dataset, noise_rate=noise_rate, variants=variants)
    fact = _is_fact(dataset)
    for pos, record in enumerate(results, 1):
        rid, who, label = _checked_record(record, pos)
        factlabel = _checked_factlabel(record.get("factlabel"), who) if fact else None
        acc.add(label_row(rid, label, factlabel, dataset=dataset, noise_rate=noise_rate, variants=variants))
    scores = acc.scores()
    assert isinstance(scores, Scores)
    return scores


def format_result_json(obj: Mapping[str, Any]) -> str:
    """The text of a reference score file: ``json.dump(obj, indent=4, ensure_ascii=False)``.

    No trailing newline (the reference writes none).
    """
    return json.dumps(obj, indent=4, ensure_ascii=False)


# --------------------------------------------------------------------------- mixing


def _check_mix_params(noise_rate: Any, correct_rate: Any, passage_num: Any) -> None:
    """Rates in [0, 1] (NaN fails) and ``passage_num`` an int >= 0, as :func:`mix_documents` needs."""
    for name, value in (("noise_rate", noise_rate), ("correct_rate", correct_rate)):
        if not _is_number(value) or not (0 <= value <= 1):  # also rejects NaN
            raise ScoringError(f"{name} must be a number in [0, 1], got {value!r}", field=name)
    if not _is_int(passage_num) or passage_num < 0:
        raise ScoringError(f"passage_num must be an int >= 0, got {passage_num!r}", field="passage_num")


def _str_list(instance: Mapping[str, Any], key: str, who: Optional[str]) -> List[Any]:
    if key not in instance:
        raise InstanceSkipped(
            f"instance has no '{key}' (the reference raises KeyError and drops it)", record=who, field=key
        )
    value = instance[key]
    if not isinstance(value, list):
        raise InstanceSkipped(f"'{key}' is {type(value).__name__}, not a list", record=who, field=key)
    return value


def mix_documents(
    instance: Mapping[str, Any],
    *,
    dataset: str,
    noise_rate: Number,
    passage_num: int,
    correct_rate: Number = 0.0,
    seed: Optional[int] = DEFAULT_SEED,
    rng: Optional[random.Random] = None,
) -> List[str]:
    """The passages the reference shows the model for one instance, in prompt order.

    Reproduces ``random.seed(seed)`` followed by the reference's ``processdata`` with the
    exact sequence of stdlib ``random`` calls (a private ``random.Random(seed)`` is used;
    its algorithm is the module's).  Pass ``rng`` instead to continue an existing generator
    (then ``seed`` is ignored).  ``instance`` is not modified.

    ``neg_num = math.ceil(passage_num * noise_rate)`` (plain float multiply, so
    ``25 * 0.28`` gives 8), ``pos_num = passage_num - neg_num``.  Branch by ``dataset``
    substring (:func:`dataset_branch`); each ends with one ``shuffle(docs)``:

    * default: at ``noise_rate == 1`` all negatives; else if ``neg_num > len(negative)``
      clamp the negatives, **elif** ``pos_num > len(positive)`` clamp the positives (one
      clamp only); ``docs = positive[:pos_num] + negative[:neg_num]`` (first items, so fewer
      than ``passage_num`` documents are possible).
    * ``_int`` (``positive`` is a list of groups): shuffle every group in order; take the
      first of every group (never truncated to ``pos_num``); if fewer than ``pos_num``, add
      round-robin ``g[1]``, ``g[2]``, ... until ``pos_num``; then fill with
      ``negative[:passage_num - len(docs)]``.  Noise 1 is not special-cased.
    * ``_fact``: ``correct_num = ceil(passage_num * correct_rate)``, ``pos_num = passage_num -
      neg_num - correct_num``; ``sample`` ``min(len(positive), pos_num)`` indices and take
      ``positive_wrong`` at them; if ``correct_num > 0``, ``sample`` from the remaining
      indices (ascending) and take ``positive``; then ``negative[:neg_num]``.

    ``passage_num == 0`` gives ``[]`` without any random call (the reference skips
    ``processdata``).  Where the reference's ``try`` would drop the instance,
    :class:`InstanceSkipped` is raised: ``_fact`` with ``pos_num < 0`` (``random.sample``
    ValueError), a missing or non-list field, ``positive_wrong`` shorter than needed, an
    empty or non-list ``_int`` group, and a selected passage that is not a string (the
    reference fails when joining the prompt).  Out-of-range parameters (rates outside
    [0, 1], negative ``passage_num``) are a :class:`ScoringError`: the reference would
    silently slice with negative counts.

    >>> inst = {"positive": ["p0", "p1"], "negative": ["n0", "n1", "n2", "n3"]}
    >>> mix_documents(inst, dataset="en", noise_rate=0.4, passage_num=5)
    ['p1', 'n2', 'n1', 'n0', 'p0']
    """
    _check_mix_params(noise_rate, correct_rate, passage_num)
    rid = instance.get("id") if isinstance(instance, Mapping) else None
    who = _who(rid)
    if not isinstance(instance, Mapping):
        raise InstanceSkipped(f"instance is {type(instance).__name__}, not an object")
    if passage_num == 0:
        return []
    if rng is None:
        rng = random.Random(seed)
    neg_num = math.ceil(passage_num * noise_rate)
    pos_num = passage_num - neg_num
    branch = dataset_branch(dataset)
    positive = _str_list(instance, "positive", who)
    docs: List[Any]
    if branch == "int":
        groups: List[List[Any]] = []
        for gi, g in enumerate(positive):
            if not isinstance(g, list):
                raise InstanceSkipped(
                    f"positive group {gi} is {type(g).__name__}, not a list (an _int dataset needs groups)",
                    record=who,
                    field="positive",
                )
            g = list(g)
            rng.shuffle(g)
            groups.append(g)
        for gi, g in enumerate(groups):
            if not g:
                raise InstanceSkipped(
                    f"positive group {gi} is empty (the reference raises IndexError and drops the instance)",
                    record=who,
                    field="positive",
                )
        docs = [g[0] for g in groups]
        if len(docs) < pos_num:
            # len(docs) < pos_num with no groups is max() of nothing upstream: ValueError.
            if not groups:
                raise InstanceSkipped(
                    "positive has no groups (the reference raises ValueError and drops the instance)",
                    record=who,
                    field="positive",
                )
            longest = max(len(g) for g in groups)
            for i in range(1, longest):
                for g in groups:
                    if len(g) > i:
                        docs.append(g[i])
                        if len(docs) == pos_num:
                            break
                if len(docs) == pos_num:
                    break
        fill = passage_num - len(docs)
        if fill > 0:
            docs += _str_list(instance, "negative", who)[:fill]
    elif branch == "fact":
        correct_num = math.ceil(passage_num * correct_rate)
        pos_num = passage_num - neg_num - correct_num
        k = min(len(positive), pos_num)
        if k < 0:
            raise InstanceSkipped(
                f"noise_rate + correct_rate leave a negative positive count at passage_num {passage_num} "
                f"(noise_rate {noise_rate}, correct_rate {correct_rate}; the reference's random.sample "
                "raises ValueError and drops the instance)",
                record=who,
            )
        selected = rng.sample(range(len(positive)), k)
        wrong = _str_list(instance, "positive_wrong", who) if selected else []
        if any(i >= len(wrong) for i in selected):
            raise InstanceSkipped(
                "positive_wrong is shorter than positive (the reference raises IndexError and drops the instance)",
                record=who,
                field="positive_wrong",
            )
        docs = [wrong[i] for i in selected]
        chosen = set(selected)
        remain = [i for i in range(len(positive)) if i not in chosen]
        if correct_num > 0 and remain:
            docs += [positive[i] for i in rng.sample(remain, min(len(remain), correct_num))]
        if neg_num > 0:
            docs += _str_list(instance, "negative", who)[:neg_num]
    else:
        negative = _str_list(instance, "negative", who)
        if noise_rate == 1:
            neg_num, pos_num = passage_num, 0
        elif neg_num > len(negative):
            neg_num = len(negative)
            pos_num = passage_num - neg_num
        elif pos_num > len(positive):
            pos_num = len(positive)
            neg_num = passage_num - pos_num
        docs = positive[:pos_num] + negative[:neg_num]
    rng.shuffle(docs)
    for d in docs:
        if not isinstance(d, str):
            raise InstanceSkipped(
                f"a selected passage is {type(d).__name__}, not a string (the reference fails building the prompt)",
                record=who,
            )
    return docs


# --------------------------------------------------------------------------- prompts

_PLACEHOLDER_RE = re.compile(r"\{(QUESTION|ANSWER|DOCS|QUERY)\}")


def _fill(template: str, values: Mapping[str, str], required: Sequence[str], what: str) -> str:
    missing = [name for name in required if "{" + name + "}" not in template]
    if missing:
        raise ScoringError(
            f"{what} template lacks the placeholder(s) {', '.join('{' + m + '}' for m in missing)}",
            field="judge_template",
        )
    # One pass, so text substituted for one placeholder is never scanned again.
    return _PLACEHOLDER_RE.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def template_id(template: Optional[str]) -> str:
    """``builtin``, or the first 12 hex digits of the template's UTF-8 sha256 (for the signature)."""
    if template is None:
        return "builtin"
    return hashlib.sha256(template.encode("utf-8")).hexdigest()[:12]


#: Our own wording.  The verdict words are what :func:`parse_reject_judgement` looks for.
BUILTIN_REJECT_TEMPLATE = """\
You review answers written by a system that first searches a document collection and then answers.
Decide whether the answer shows that the retrieved documents were enough to resolve the question.
If the answer says it cannot respond, lacks the needed information, or only guesses, write
"The question is not addressed by the documents." Otherwise write
"The question is addressed by the documents."

Question: Which river flows through the city of Aldmoor?
Answer: The documents do not contain enough information to say which river flows through Aldmoor.
Verdict: The question is not addressed by the documents.

Question: 谁设计了新港图书馆？
Answer: 新港图书馆由建筑师林晓设计。
Verdict: The question is addressed by the documents.

Question: 今年的青岚杯由哪支队伍夺冠？
Answer: 文档中没有提到今年青岚杯的冠军，我无法回答。
Verdict: The question is not addressed by the documents.

Question: When did the Harbor Line tram open?
Answer: The Harbor Line tram opened in May 1998.
Verdict: The question is addressed by the documents.

Question: {QUESTION}
Answer: {ANSWER}
Verdict:"""

#: Our own wording.  The verdict words are what :func:`parse_fact_judgement` looks for.
BUILTIN_FACT_TEMPLATE = """\
A model answered a question using documents, some of which may contain false statements.
Judge only whether the model pointed out that the documents contain factual errors.
Do not judge whether the model's own reply is true.
If it did, write "Yes, the model has identified the factual errors."
If it did not, write "NO, the model failed to notice any factual errors."

Response: The documents contain factual errors; the bridge was completed in 1932, not 1958.
Verdict: Yes, the model has identified the factual errors.

Response: The bridge was completed in 1958.
Verdict: NO, the model failed to notice any factual errors.

Response: 文档中的信息有误，正确答案是1932年。
Verdict: Yes, the model has identified the factual errors.

Response: 该桥于1958年建成。
Verdict: NO, the model failed to notice any factual errors.

Response: Based on the documents, the author of the novel is Mara Quill.
Verdict: NO, the model failed to notice any factual errors.

Answer: {ANSWER}
Verdict:"""


def build_reject_judge_prompt(query: str, prediction: str, *, template: Optional[str] = None) -> str:
    """The prompt asking a judge whether ``prediction`` shows the question was answered.

    Structure (as the reference's ``reject_evalue.py``): an instruction, demonstrations
    (zh and en) each with a verdict sentence, then the slot with the record's ``query`` and
    ``prediction``.  The builtin wording is the project's own; to reproduce a published run
    pass the published prompt as ``template`` with the placeholders ``{QUESTION}`` and
    ``{ANSWER}`` (both required; replaced literally, no other braces are interpreted).
    Parse the judge's reply with :func:`parse_reject_judgement`.

    >>> build_reject_judge_prompt("q?", "a.", template="Q={QUESTION} A={ANSWER} {x}")
    'Q=q? A=a. {x}'
    """
    return _fill(
        BUILTIN_REJECT_TEMPLATE if template is None else template,
        {"QUESTION": query, "ANSWER": prediction},
        ("QUESTION", "ANSWER"),
        "reject judge",
    )


def build_fact_judge_prompt(prediction: str, *, query: Optional[str] = None, template: Optional[str] = None) -> str:
    """The prompt asking a judge whether ``prediction`` flags factual errors in the documents.

    Structure (as the reference's ``fact_evalue.py``): an instruction, demonstrations
    labelled "Response:" with verdicts, then an "Answer:" slot holding the prediction (the
    question is not included by the reference).  Template placeholder: ``{ANSWER}``
    (required); ``{QUESTION}`` is optional and filled with ``query`` (or ``""``).  Parse
    the reply with :func:`parse_fact_judgement`.
    """
    return _fill(
        BUILTIN_FACT_TEMPLATE if template is None else template,
        {"QUESTION": query or "", "ANSWER": prediction},
        ("ANSWER",),
        "fact judge",
    )


def parse_reject_judgement(output: str) -> bool:
    """Rejected iff ``"not addressed"`` occurs in the judge output (case-sensitive).

    >>> parse_reject_judgement("The question is not addressed by the documents.")
    True
    >>> parse_reject_judgement("Not addressed.")
    False
    """
    if not isinstance(output, str):
        raise ScoringError(f"judge output is {type(output).__name__}, not a string", field="evaluation")
    return "not addressed" in output


def parse_fact_judgement(output: str) -> bool:
    """Detected iff ``"has identified"`` or ``"Yes"`` occurs (case-sensitive; quirk: ``Yesterday`` matches).

    >>> parse_fact_judgement("Yesterday it rained")
    True
    >>> parse_fact_judgement("yes")
    False
    """
    if not isinstance(output, str):
        raise ScoringError(f"judge output is {type(output).__name__}, not a string", field="evaluation")
    return "has identified" in output or "Yes" in output


#: Our own wording for the answer prompt (generation is outside this package).
BUILTIN_ANSWER_SYSTEM = {
    "en": (
        "Answer the question using only the documents provided. If the documents do not contain "
        'the answer, reply exactly: "I can not answer the question because of the insufficient '
        'information in documents." If the documents contain factual errors, reply '
        '"There are factual errors in the provided documents." and then give the correct answer.'
    ),
    "zh": (
        "请只根据给出的文档回答问题。如果文档中没有答案，请回答：“文档信息不足，因此我无法基于提供的文档回答该问题。”"
        "如果文档中存在事实性错误，请先回答：“提供的文档存在事实性错误。”再给出正确答案。"
    ),
}
BUILTIN_ANSWER_INSTRUCTION = {
    "en": "Documents:\n{DOCS}\n\nQuestion: {QUERY}",
    "zh": "文档：\n{DOCS}\n\n问题：{QUERY}",
}


def build_answer_prompt(
    query: str,
    docs: Sequence[str],
    *,
    dataset: str,
    instruction: Optional[str] = None,
    system: Optional[str] = None,
) -> Tuple[str, str]:
    """``(system, user)`` messages for the model under test (project wording by default).

    The language is ``dataset[:2]`` (``en`` or ``zh``).  ``DOCS = "\\n".join(docs)``.  A
    published instruction template can be passed with the placeholders ``{DOCS}`` and
    ``{QUERY}``, and a published system text as ``system``.  Scoring depends only on the
    keywords in :data:`REJECT_KEYWORDS` / :data:`FACT_KEYWORDS`, which the builtin system
    text asks for.
    """
    lang = dataset[:2]
    if lang not in BUILTIN_ANSWER_INSTRUCTION:
        raise ScoringError(f"dataset {dataset!r} must start with 'en' or 'zh'", field="dataset")
    user = _fill(
        BUILTIN_ANSWER_INSTRUCTION[lang] if instruction is None else instruction,
        {"DOCS": "\n".join(docs), "QUERY": query},
        ("DOCS", "QUERY"),
        "answer instruction",
    )
    return (BUILTIN_ANSWER_SYSTEM[lang] if system is None else system), user


# --------------------------------------------------------------------------- judged scores


class RejectJudgeScores(NamedTuple):
    """``reject_evalue.py``'s score object (Rej*), plus diagnostics."""

    reject_rate: Optional[float]
    all_rate: Optional[float]
    tt: int
    rejecttt: int
    nums: int
    diagnostics: Tuple[str, ...]

    def to_dict(self) -> Dict[str, Any]:
        """Keys ``reject_rate, all_rate, tt, rejecttt, nums``."""
        return {
            "reject_rate": self.reject_rate,
            "all_rate": self.all_rate,
            "tt": self.tt,
            "rejecttt": self.rejecttt,
            "nums": self.nums,
        }


class FactJudgeScores(NamedTuple):
    """``fact_evalue.py``'s score object (ED* and CR), plus diagnostics."""

    reject_rate: Optional[float]
    all_rate: Optional[float]
    correct_rate: Number
    tt: int
    rejecttt: int
    correct_tt: int
    nums: int
    noise_rate: Number
    diagnostics: Tuple[str, ...]

    def to_dict(self) -> Dict[str, Any]:
        """Keys ``reject_rate, all_rate, correct_rate, tt, rejecttt, correct_tt, nums, noise_rate``."""
        return {
            "reject_rate": self.reject_rate,
            "all_rate": self.all_rate,
            "correct_rate": self.correct_rate,
            "tt": self.tt,
            "rejecttt": self.rejecttt,
            "correct_tt": self.correct_tt,
            "nums": self.nums,
            "noise_rate": self.noise_rate,
        }


def judged_row(
    record_id: Any,
    label: List[int],
    evaluation: Any,
    *,
    judged: str,
    judge_template: str = "unrecorded",
    who: Optional[str] = None,
) -> ItemRow:
    """The item row of one judged record (``rgb score --judged`` and ``rgb judge``).

    Keys: ``id``, ``label``, ``correct`` (``0 not in label and 1 in label``), ``all_rate``
    (the same outcome: the judged ``all_rate`` is ``tt / nums``), ``reject_rate`` (1 when
    the judge output says rejected (reject) or errors detected (fact)), ``correct_rate``
    (fact only, for a flagged record: ``correct``; else ``None``), ``judge_template`` (the
    record's template id) and ``skipped`` (``None``).  A non-string ``evaluation`` is a
    :class:`ScoringError`.
    """
    if judged not in JUDGED:
        raise ScoringError(f"judged must be one of {', '.join(JUDGED)}, got {judged!r}", field="judged")
    parse = parse_reject_judgement if judged == "reject" else parse_fact_judgement
    try:
        verdict = 1 if parse(evaluation) else 0
    except ScoringError as exc:
        raise ScoringError(exc.msg, record=who, field="evaluation") from None
    correct = 1 if (0 not in label and 1 in label) else 0
    return {
        "id": record_id,
        "label": list(label),
        "correct": correct,
        "all_rate": correct,
        "reject_rate": verdict,
        "correct_rate": (correct if verdict else None) if judged == "fact" else None,
        "judge_template": judge_template,
        "skipped": None,
    }


def _judged_acc(results: Iterable[Mapping[str, Any]], judged: str, noise_rate: Number) -> "ScoreAccumulator":
    acc = ScoreAccumulator(dataset="", noise_rate=noise_rate, judged=judged)
    for pos, record in enumerate(results, 1):
        rid, who, label = _checked_record(record, pos)
        if "evaluation" not in record:
            raise ScoringError("record has no 'evaluation' (the stored judge output)", record=who, field="evaluation")
        acc.add(judged_row(rid, label, record["evaluation"], judged=judged, who=who))
    return acc


def score_reject_judged(results: Iterable[Mapping[str, Any]]) -> RejectJudgeScores:
    """Rej*: ``reject_rate = rejecttt / nums`` from stored judge outputs (``evaluation``).

    ``rejecttt`` counts records whose judge output contains ``not addressed``;
    ``all_rate = tt / nums`` where ``tt`` counts ``0 not in label and 1 in label`` (no
    noise-1 clause here).  No records: rates ``None`` plus a diagnostic.
    """
    scores = _judged_acc(results, "reject", 0.0).scores()
    assert isinstance(scores, RejectJudgeScores)
    return scores


def score_fact_judged(results: Iterable[Mapping[str, Any]], *, noise_rate: Number) -> FactJudgeScores:
    """ED* and CR from stored judge outputs (``evaluation``), as ``fact_evalue.py``.

    ``rejecttt`` counts records judged as detecting the errors (:func:`parse_fact_judgement`),
    ``reject_rate = rejecttt / nums`` (ED*), ``all_rate = tt / nums``, ``correct_tt`` counts
    detected records with ``0 not in label and 1 in label`` (stricter than :func:`score`),
    ``correct_rate = correct_tt / rejecttt`` or int ``0``.  No records: rates ``None``.
    """
    scores = _judged_acc(results, "fact", noise_rate).scores()
    assert isinstance(scores, FactJudgeScores)
    return scores


# --------------------------------------------------------------------------- runs and report

_DATASET_RE = r"(?P<dataset>(?:en|zh)(?:_int|_fact|_refine)?)"
_FILENAME_RE = re.compile(
    r"^prediction_" + _DATASET_RE + r"_(?P<model>.+)_temp(?P<temp>[^_]+)_noise(?P<noise>[^_]+)"
    r"_passage(?P<passage>\d+)_correct(?P<correct>[^_]+?)(?P<suffix>_result|_chatgpt|_chatgptresult)?\.json$"
)


class RunName(NamedTuple):
    """What a reference prediction file name encodes."""

    dataset: str
    model: str
    temp: float
    noise_rate: float
    passage_num: int
    correct_rate: float


def parse_prediction_filename(name: str) -> RunName:
    """Parse ``prediction_{dataset}_{model}_temp{T}_noise{N}_passage{P}_correct{C}.json``.

    A directory part is ignored.  The dataset is the longest of ``en``/``zh`` with an
    optional ``_int``, ``_fact`` or ``_refine`` (so a model whose name starts with ``int_``
    on a base dataset is ambiguous; pass the dataset explicitly then).

    >>> parse_prediction_filename("result-en/prediction_en_fact_chatgpt_temp0.2_noise0.4_passage5_correct0.0.json")
    RunName(dataset='en_fact', model='chatgpt', temp=0.2, noise_rate=0.4, passage_num=5, correct_rate=0.0)
    """
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    m = _FILENAME_RE.match(base)
    if not m:
        raise ScoringError(
            "file name does not follow prediction_{dataset}_{model}_temp{T}_noise{N}_passage{P}_correct{C}.json",
            path=name,
        )
    try:
        temp, noise, correct = float(m["temp"]), float(m["noise"]), float(m["correct"])
    except ValueError:
        raise ScoringError("file name has a non-numeric temp/noise/correct part", path=name) from None
    return RunName(m["dataset"], m["model"], temp, noise, int(m["passage"]), correct)


def _rate_key(value: Number) -> str:
    return repr(float(value))


def abilities_table(runs: Sequence[Tuple[RunName, Scores]]) -> Dict[str, Any]:
    """Group scored runs into the four RGB abilities, per model and language.

    Returns ``{model: {lang: {...}}}`` with, where the runs exist:
    ``noise_robustness`` (base sets below noise 1: ``{noise: all_rate}``, ascending),
    ``negative_rejection`` (base sets at noise 1: ``all_rate``, i.e. "rejected or correct"
    unless the scores were computed with variant ``noise1_reject_only``),
    ``information_integration`` (``_int`` sets: ``{noise: all_rate}``) and
    ``counterfactual_robustness`` (``_fact`` sets: ``{noise/correct: {accuracy,
    error_detection_rate, error_correction_rate}}``).  Several runs with the same key
    (e.g. different passage counts) are keyed with ``@passageN`` appended.
    """
    table: Dict[str, Dict[str, Dict[str, Any]]] = {}
    order = sorted(
        runs,
        key=lambda r: (
            r[0].model,
            r[0].dataset[:2],
            r[0].dataset,
            r[0].noise_rate,
            r[0].correct_rate,
            r[0].passage_num,
        ),
    )
    passages: Dict[Tuple[str, str, str], Set[int]] = {}
    for run, _ in order:
        passages.setdefault((run.model, run.dataset, run.dataset[:2]), set()).add(run.passage_num)
    for run, sc in order:
        lang = run.dataset[:2]
        entry = table.setdefault(run.model, {}).setdefault(lang, {})
        multi = len(passages[(run.model, run.dataset, lang)]) > 1
        suffix = f"@passage{run.passage_num}" if multi else ""
        branch = dataset_branch(run.dataset)
        if branch == "fact":
            key = f"noise{_rate_key(run.noise_rate)}_correct{_rate_key(run.correct_rate)}{suffix}"
            entry.setdefault("counterfactual_robustness", {})[key] = {
                "accuracy": sc.all_rate,
                "error_detection_rate": sc.fact_check_rate,
                "error_correction_rate": sc.correct_rate,
            }
        elif branch == "int":
            name = run.dataset[2:] if run.dataset[2:] != "_int" else ""
            entry.setdefault("information_integration", {})[_rate_key(run.noise_rate) + name + suffix] = sc.all_rate
        else:
            name = run.dataset[2:]  # "" or "_refine"
            if run.noise_rate == 1:
                entry.setdefault("negative_rejection", {})[_rate_key(run.noise_rate) + name + suffix] = sc.all_rate
            else:
                entry.setdefault("noise_robustness", {})[_rate_key(run.noise_rate) + name + suffix] = sc.all_rate
    return table


_ABILITY_LABELS = (
    ("noise_robustness", "noise robustness"),
    ("negative_rejection", "negative rejection"),
    ("information_integration", "information integration"),
)


def ability_rows(table: Mapping[str, Any]) -> List[Tuple[str, str, str, str, Optional[Number]]]:
    """Flatten :func:`abilities_table` into ``(model, lang, ability, setting, value)`` rows.

    Counterfactual robustness gives three rows per setting: ``error detection rate``,
    ``error correction rate`` and ``accuracy``.  Values are unrounded.
    """
    rows: List[Tuple[str, str, str, str, Optional[Number]]] = []
    for model, langs in table.items():
        for lang, abilities in langs.items():
            for key, title in _ABILITY_LABELS:
                for setting, value in abilities.get(key, {}).items():
                    rows.append((model, lang, title, "noise " + setting, value))
            for setting, vals in abilities.get("counterfactual_robustness", {}).items():
                rows.append(
                    (model, lang, "counterfactual: error detection rate", setting, vals["error_detection_rate"])
                )
                rows.append(
                    (model, lang, "counterfactual: error correction rate", setting, vals["error_correction_rate"])
                )
                rows.append((model, lang, "counterfactual: accuracy", setting, vals["accuracy"]))
    return rows


def signature(*, variants: Iterable[str] = (), params: Sequence[Tuple[str, object]] = ()) -> str:
    """The rgb signature: ``make_signature("rgb", REFERENCE, variants, params)``.

    >>> signature(params=[("dataset", "en")])
    'rageval_min:0.1.0|family=rgb|ref=chen700564/RGB@65ec39e|variants=none|dataset=en'
    """
    return make_signature(FAMILY, REFERENCE, check_variants(variants), params)


def format_abilities(report: Report, outcomes: Any = ()) -> str:
    """An ``rgb report``'s abilities object alone, as JSON (indent 2), as ``expected_abilities.json`` holds it."""
    abilities = report.result.get("abilities") if isinstance(report.result, Mapping) else None
    if abilities is None:
        raise ScoringError("--format abilities is the format of an rgb report (rgb report), not of this report")
    return json.dumps(abilities, indent=2, ensure_ascii=False) + "\n"


def format_result_text(report: Report, outcomes: Any = ()) -> str:
    """A score report's ``result`` as the reference's ``_result.json`` text (no final newline, as it writes it)."""
    return format_result_json(report.result)


#: The reference's own output formats of an rgb report (name -> renderer), for the CLI and ``merge``:
#: ``rgb`` is the ``_result.json`` text of ``rgb score``/``rgb judge``, ``abilities`` the table of ``rgb report``.
REPORT_FORMATS = {"rgb": format_result_text, "abilities": format_abilities}
#: What follows a reference format on stdout (the reference's result file has no final newline).
STDOUT_SUFFIX = {"rgb": "\n"}


# --------------------------------------------------------------------------- accumulators

#: The judged modes: ``reject`` = ``reject_evalue.py`` (Rej*), ``fact`` = ``fact_evalue.py`` (ED*, CR).
JUDGED = ("reject", "fact")

_SCORE_KEYS = ("all_rate", "noise_rate", "tt", "nums")
_FACT_KEYS = ("fact_check_rate", "correct_rate", "fact_tt", "correct_tt")
_REJECT_JUDGED_KEYS = ("reject_rate", "all_rate", "tt", "rejecttt", "nums")
_FACT_JUDGED_KEYS = ("reject_rate", "all_rate", "correct_rate", "tt", "rejecttt", "correct_tt", "nums", "noise_rate")


def result_metrics(result: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    """The gateable values of a score object: every number (and ``None``) under its key."""
    return {
        prefix + k: v
        for k, v in result.items()
        if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
    }


@register_accumulator
class ScoreAccumulator(Accumulator):
    """``rgb score``: integer counters of the item rows; the rates are formed once, in :meth:`finalize`.

    With ``judged=None`` the rows are :func:`label_row` rows and the report is the
    reference's ``_result.json`` object (:class:`Scores`); with ``judged`` ``reject`` or
    ``fact`` they are :func:`judged_row` rows and the report is :class:`RejectJudgeScores`
    or :class:`FactJudgeScores`.  Merging adds the counters and concatenates the kept
    diagnostics (the records the reference drops and ``label == []`` at noise 1, whose
    ``record N`` positions are shifted by the counts before them), so it is exact for any
    partition.  The judged signature names the sorted set of the records' template ids.
    """

    FAMILY = "rgb"
    COMMAND = "score"
    DIRECTIONS = {
        "correct": "higher",
        "all_rate": "higher",
        "fact_check_rate": "higher",
        "correct_rate": "higher",
        "reject_rate": "higher",
    }

    def __init__(
        self,
        *,
        dataset: str,
        noise_rate: Number,
        use_labels: bool = False,
        variants: Sequence[str] = (),
        judged: Optional[str] = None,
    ) -> None:
        if not _is_number(noise_rate):
            raise ScoringError(f"noise_rate must be a number, got {noise_rate!r}", field="noise_rate")
        if judged is not None and judged not in JUDGED:
            raise ScoringError(f"judged must be one of {', '.join(JUDGED)}, got {judged!r}", field="judged")
        super().__init__(
            dataset=dataset,
            noise_rate=noise_rate,
            use_labels=use_labels,
            variants=list(check_variants(variants)),
            judged=judged,
        )
        self.dataset = dataset
        self.noise_rate = noise_rate
        self.use_labels = use_labels
        self.variants = tuple(self.params["variants"])
        self.judged = judged
        self.nums = self.tt = self.flagged = self.flagged_correct = 0
        #: records the reference drops (file-level notes naming file and line), input order
        self.skipped: List[str] = []
        #: ``[local position, "id=..." or None]`` of ``label == []`` at noise 1
        self.empty_noise1: List[List[Any]] = []
        self.templates: Set[str] = set()

    def _signature_params(self) -> List[Tuple[str, object]]:
        params: List[Tuple[str, object]] = [
            ("dataset", self.dataset),
            ("noise_rate", self.noise_rate),
            ("use_labels", self.use_labels),
        ]
        if self.judged:
            ids = sorted(self.templates)
            params += [("judged", self.judged), ("judge_template", "+".join(ids) if ids else "unrecorded")]
        return params

    @classmethod
    def metric_names(cls, *, dataset: str = "", judged: Optional[str] = None, **options: Any) -> List[str]:
        """The gateable names of the report (they depend only on the options)."""
        if judged == "reject":
            return list(_REJECT_JUDGED_KEYS)
        if judged == "fact":
            return list(_FACT_JUDGED_KEYS)
        return list(_SCORE_KEYS) + (list(_FACT_KEYS) if _is_fact(dataset) else [])

    def skip(self, note: str) -> None:
        """Record a dropped record's diagnostic (kept in full, in input order)."""
        self.skipped.append(note)

    def add(self, item: ItemRow) -> None:
        if item.get("skipped") is not None:
            return
        self.nums += 1
        if self.judged:
            self.tt += item["correct"]
            if item["reject_rate"]:
                self.flagged += 1
                self.flagged_correct += item["correct"]
            self.templates.add(str(item["judge_template"]))
            return
        self.tt += item["all_rate"]
        if self.noise_rate == 1 and not item["label"]:
            rid = item.get("id")
            self.empty_noise1.append([self.nums, None if rid is None else _who(rid)])
        if item["fact_check_rate"]:
            self.flagged += 1
            self.flagged_correct += item["correct_rate"]

    def _data(self) -> Dict[str, Any]:
        return {
            "nums": self.nums,
            "tt": self.tt,
            "flagged": self.flagged,
            "flagged_correct": self.flagged_correct,
            "skipped": list(self.skipped),
            "empty_noise1": [list(e) for e in self.empty_noise1],
            "templates": sorted(self.templates),
        }

    def _load(self, data: Mapping[str, Any]) -> None:
        self.nums = int(data["nums"])
        self.tt = int(data["tt"])
        self.flagged = int(data["flagged"])
        self.flagged_correct = int(data["flagged_correct"])
        self.skipped = [str(n) for n in data["skipped"]]
        self.empty_noise1 = [[int(p), None if w is None else str(w)] for p, w in data["empty_noise1"]]
        self.templates = {str(t) for t in data["templates"]}

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, ScoreAccumulator)
        self.empty_noise1 += [[p + self.nums, w] for p, w in other.empty_noise1]
        self.nums += other.nums
        self.tt += other.tt
        self.flagged += other.flagged
        self.flagged_correct += other.flagged_correct
        self.skipped += other.skipped
        self.templates |= other.templates

    def scores(self) -> Union[Scores, RejectJudgeScores, FactJudgeScores]:
        """The score object (diagnostics: the empty-label and no-record ones, as the scorers give them)."""
        nums, tt = self.nums, self.tt
        if self.judged:
            diags = () if nums else ("no scorable records: rates are null",)
            if self.judged == "reject":
                return RejectJudgeScores(
                    self.flagged / nums if nums else None, tt / nums if nums else None, tt, self.flagged, nums, diags
                )
            return FactJudgeScores(
                self.flagged / nums if nums else None,
                tt / nums if nums else None,
                self.flagged_correct / self.flagged if self.flagged > 0 else 0,
                tt,
                self.flagged,
                self.flagged_correct,
                nums,
                self.noise_rate,
                diags,
            )
        diagnostics = [
            f"{who or f'record {pos}'}: label is [] at noise_rate 1 (the reference fails on label[0]); not counted"
            for pos, who in self.empty_noise1
        ]
        fact = _is_fact(self.dataset)
        if nums == 0:
            diagnostics.append("no scorable records: all_rate is null")
        return Scores(
            tt / nums if nums else None,
            self.noise_rate,
            tt,
            nums,
            fact,
            (self.flagged / nums if nums else None) if fact else None,
            self.flagged_correct / self.flagged if self.flagged > 0 else 0,
            self.flagged,
            self.flagged_correct,
            tuple(diagnostics),
        )

    def _extra_params(self) -> List[Tuple[str, object]]:
        return []

    def finalize(self) -> Report:
        scored = self.scores()
        result = scored.to_dict()
        return Report(
            family=FAMILY,
            signature=signature(variants=self.variants, params=self._signature_params() + self._extra_params()),
            result=result,
            metrics=result_metrics(result),
            diagnostics=list(self.skipped) + list(scored.diagnostics) + self.notes(),
        )


@register_accumulator
class JudgeAccumulator(ScoreAccumulator):
    """``rgb judge``: the judged :class:`ScoreAccumulator` whose signature also names the judge model.

    The judge statistics (``judge_calls``...) are added by the CLI; they are not part of the
    mergeable state.
    """

    COMMAND = "judge"

    def __init__(
        self,
        *,
        dataset: str,
        noise_rate: Number,
        judged: str,
        judge_model: str,
        use_labels: bool = True,
        variants: Sequence[str] = (),
    ) -> None:
        if judged not in JUDGED:
            raise ScoringError(f"judged must be one of {', '.join(JUDGED)}, got {judged!r}", field="judged")
        super().__init__(
            dataset=dataset, noise_rate=noise_rate, use_labels=use_labels, variants=variants, judged=judged
        )
        self.params["judge_model"] = judge_model
        self.judge_model = judge_model

    def _extra_params(self) -> List[Tuple[str, object]]:
        return [("judge_model", self.judge_model)]


# --------------------------------------------------------------------------- files

_RESULT_SUFFIXES = ("_result.json", "_chatgpt.json", "_chatgptresult.json")

Row = Tuple[Any, Dict[str, Any]]
Labelled = Tuple[Any, Dict[str, Any], Optional[Label], Optional[str]]


def read_records(path: str) -> Iterator[Row]:
    """Stream ``(line, record)`` from a JSON Lines file (RGB's files are JSON Lines named ``.json``).

    Problems are raised together at the end and nothing is yielded after the first.
    """
    return iter_records(path, fmt="jsonl")


def _record_who(rec: Mapping[str, Any]) -> Optional[str]:
    return f"id={rec['id']}" if "id" in rec else None


def _note(path: Optional[str], line: Optional[int], rec: Mapping[str, Any], msg: str) -> str:
    who = _record_who(rec)
    return (f"{path}:{line}: " if path is not None else "") + (f"{who}: " if who else "") + msg


def resolve_dataset(path: str, dataset: Optional[str] = None) -> str:
    """``dataset``, else the dataset of a reference prediction file name."""
    if dataset:
        return str(dataset)
    try:
        return parse_prediction_filename(path).dataset
    except ScoringError:
        raise ScoringError(
            "--dataset is required (the file name is not a reference prediction file name)", path=path
        ) from None


def check_noise_rate(value: Any, *, path: Optional[str] = None, field: str = "noise_rate") -> float:
    """``value`` as a float, which must be a finite number in [0, 1] (else a :class:`ScoringError`)."""
    if not _is_number(value) or not math.isfinite(value) or not (0 <= value <= 1):
        raise ScoringError(f"the noise rate must be a number in [0, 1], got {value!r}", path=path, field=field)
    return float(value)


def resolve_noise_rate(path: str, noise_rate: Optional[float] = None) -> float:
    """The noise rate of a prediction file: ``noise_rate``, else the records', else the file name's.

    The records' ``noise_rate`` values must agree (one streaming pass over the file);
    the rate must be in [0, 1].  Errors name the file.
    """
    if noise_rate is not None:
        return check_noise_rate(noise_rate, field="--noise-rate")
    seen = {rec["noise_rate"] for _, rec in read_records(path) if "noise_rate" in rec and _is_number(rec["noise_rate"])}
    if len(seen) == 1:
        return check_noise_rate(seen.pop(), path=path)
    if len(seen) > 1:
        raise ScoringError(f"records have different noise_rate values {sorted(seen)}; pass --noise-rate", path=path)
    try:
        rate = parse_prediction_filename(path).noise_rate
    except ScoringError:
        raise ScoringError(
            "--noise-rate is required (no 'noise_rate' in the records or the file name)", path=path
        ) from None
    return check_noise_rate(rate, path=path)


def _valid_rows(
    rows: Iterable[Row],
    path: Optional[str],
    problems: Problems,
    *,
    fact: bool,
    use_labels: bool,
    failure: List[ScoringError],
    on_row: Optional[Callable[[Mapping[str, Any]], None]] = None,
) -> Iterator[Row]:
    """The records whose structure is sound, while no problem has been found (this process).

    Malformed records go to ``problems`` (up to its limit); a read error of ``rows`` is
    put in ``failure`` (not raised), so the caller raises it only after the records
    yielded before it were scored, as a lazy single pass would.
    """

    def bad(msg: str, line: Optional[int], rec: Mapping[str, Any], field: Optional[str]) -> None:
        problems.add(msg, path=path, line=line, record=_record_who(rec), field=field)

    it = iter(rows)
    while True:
        try:
            line, rec = next(it)
        except StopIteration:
            return
        except ScoringError as exc:
            failure.append(exc)
            return
        if problems.full:
            return
        if use_labels and "label" in rec:
            if rec["label"] is not None:
                try:
                    validate_stored_label(rec["label"], rec.get("factlabel"), fact=fact)
                except ScoringError as exc:
                    bad(exc.msg, line, rec, exc.field)
                    continue
        elif "prediction" not in rec:
            bad("record has no 'prediction'", line, rec, "prediction")
            continue
        elif "ans" not in rec and "answer" not in rec:
            bad("record has neither 'ans' nor 'answer' (the ground truth)", line, rec, "ans")
            continue
        if not problems:
            if on_row is not None:
                on_row(rec)
            yield line, rec


def _label_one(
    rec: Mapping[str, Any], *, dataset: str, variants: Sequence[str], use_labels: bool
) -> Tuple[Optional[Label], Optional[str], Optional[str]]:
    """``(label, skip reason, note)`` of a structurally sound record (``label`` None: dropped)."""
    if use_labels and "label" in rec:
        if rec["label"] is None:
            reason = str(rec.get("rgb_skipped") or "label is null")
            return None, reason, f"skipped: {reason}"
        return Label(rec["label"], rec.get("factlabel", 0), rec.get("prediction", "")), None, None
    try:
        lab = label_prediction(rec["prediction"], ground_truth_of(rec), dataset=dataset, variants=variants)
    except InstanceSkipped as exc:
        return None, exc.msg, f"skipped (as the reference does): {exc.msg}"
    return lab, None, None


def label_records(
    rows: Iterable[Row],
    path: Optional[str],
    notes: List[str],
    *,
    dataset: str,
    variants: Sequence[str] = (),
    use_labels: bool = False,
) -> Iterator[Labelled]:
    """Label each record; yield ``(line, record, Label or None, skip reason or None)``.

    Records the reference drops are appended to ``notes`` (naming file, line and id) and
    yielded with ``None``; malformed records are collected and raised together at the
    end (nothing is yielded after the first).  With ``use_labels`` a record's stored
    ``label`` is used (``None`` = skipped earlier, reason in ``rgb_skipped``).
    """
    problems = Problems()
    failure: List[ScoringError] = []
    for line, rec in _valid_rows(rows, path, problems, fact=_is_fact(dataset), use_labels=use_labels, failure=failure):
        lab, reason, note = _label_one(rec, dataset=dataset, variants=variants, use_labels=use_labels)
        if note is not None:
            notes.append(_note(path, line, rec, note))
        yield line, rec, lab, reason
    if failure:
        raise failure[0]
    problems.raise_if_any()


def _record_row(
    numbered: Row,
    *,
    path: Optional[str],
    dataset: str,
    noise_rate: Number,
    variants: Sequence[str],
    use_labels: bool,
    judged: Optional[str],
) -> Tuple[ItemRow, Optional[str]]:
    """One structurally sound record's item row and its skip note (or None): the per-item work.

    Module-level with plain options, so the engine can run it in worker processes.
    """
    line, rec = numbered
    lab, reason, note = _label_one(rec, dataset=dataset, variants=variants, use_labels=use_labels)
    rid = rec.get("id")
    if lab is None:
        return skipped_row(rid, str(reason), judged=judged), _note(path, line, rec, str(note))
    if judged:
        who = _record_who(rec)
        if "evaluation" not in rec:
            raise ScoringError(
                "record has no 'evaluation' (the stored judge output)",
                path=path,
                line=line,
                record=who,
                field="evaluation",
            )
        if not isinstance(rec["evaluation"], str):
            raise ScoringError("'evaluation' is not a string", path=path, line=line, record=who, field="evaluation")
        template = str(rec.get("judge_template", "unrecorded"))
        return judged_row(rid, lab.label, rec["evaluation"], judged=judged, judge_template=template, who=who), None
    row = label_row(rid, lab.label, lab.factlabel, dataset=dataset, noise_rate=noise_rate, variants=variants)
    return row, None


def score_item(
    record: Mapping[str, Any],
    *,
    dataset: str,
    noise_rate: Number,
    use_labels: bool = False,
    variants: Sequence[str] = (),
) -> ItemRow:
    """The ``rgb score`` item row of one prediction record (see :func:`label_row`).

    The record is labelled (or its stored label used with ``use_labels``); a record the
    reference drops gives :func:`skipped_row`.  A malformed record is a :class:`ScoringError`.
    """
    variants = check_variants(variants)
    for _, rec, lab, reason in label_records(
        [(None, dict(record))], None, [], dataset=dataset, variants=variants, use_labels=use_labels
    ):
        if lab is None:
            return skipped_row(rec.get("id"), str(reason))
        return label_row(
            rec.get("id"), lab.label, lab.factlabel, dataset=dataset, noise_rate=noise_rate, variants=variants
        )
    raise ScoringError("no record")  # pragma: no cover - label_records yields or raises


def _accumulate_rows(
    acc: ScoreAccumulator,
    rows: Iterable[Row],
    path: Optional[str],
    on_item: Optional[Callable[[ItemRow], None]],
    record_rates: Optional[Set[str]] = None,
) -> ScoreAccumulator:
    """Check the records here, label and score them on the current engine, in input order.

    The skip notes reach ``acc`` in input order; a malformed record (collected up to the
    limit) or a read error is raised after the records before it were scored, and an
    error in a record's judge output as soon as its turn comes, as one lazy pass does.
    """
    problems = Problems()
    failure: List[ScoringError] = []

    def seen_rate(rec: Mapping[str, Any]) -> None:
        if record_rates is not None and "noise_rate" in rec:
            record_rates.add(str(rec["noise_rate"]))

    valid = _valid_rows(
        rows,
        path,
        problems,
        fact=_is_fact(acc.dataset),
        use_labels=acc.use_labels,
        failure=failure,
        on_row=seen_rate if record_rates is not None else None,
    )
    fn = functools.partial(
        _record_row,
        path=path,
        dataset=acc.dataset,
        noise_rate=acc.noise_rate,
        variants=acc.variants,
        use_labels=acc.use_labels,
        judged=acc.judged,
    )
    accumulate_items(acc, fn, valid, on_item=on_item, on_result=acc.skip)
    if failure:
        raise failure[0]
    problems.raise_if_any()
    return acc


def score_file(
    path: str,
    *,
    dataset: Optional[str] = None,
    noise_rate: Optional[float] = None,
    use_labels: bool = False,
    judged: Optional[str] = None,
    variants: Sequence[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """``rgb score``: one prediction file (JSON Lines) into a :class:`Report`.

    ``result`` is the reference's score object (``_result.json``; with ``judged``, the
    judged one).  ``dataset`` defaults to the file name's; ``noise_rate`` to the records'
    (which must agree), else the file name's.  ``on_item`` receives every item row
    (:func:`label_row`, :func:`judged_row` or :func:`skipped_row`) in input order.

    The file is read twice when ``noise_rate`` is not given (the records' rates first).
    The records are checked in this process; the labelling runs on the current engine
    (``--jobs``, ``--engine dask``), and the result is the same for any engine.
    """
    variants = check_variants(variants)
    ds = resolve_dataset(path, dataset)
    nr = resolve_noise_rate(path, noise_rate)
    acc = ScoreAccumulator(dataset=ds, noise_rate=nr, use_labels=use_labels, variants=variants, judged=judged)
    return finish(_accumulate_rows(acc, read_records(path), path, on_item))


def score_judged_records(
    records: Sequence[Mapping[str, Any]],
    *,
    path: str,
    dataset: str,
    noise_rate: float,
    judged: str,
    judge_model: str,
    variants: Sequence[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """``rgb judge``: score judged records in memory (as ``rgb score --judged --use-labels`` reads them).

    ``path`` names the records in diagnostics (line = 1-based position).  The judge
    calls happen before (in the caller); only this scoring runs on the current engine.
    """
    acc = JudgeAccumulator(
        dataset=dataset, noise_rate=noise_rate, judged=judged, judge_model=judge_model, variants=variants
    )
    rows = ((i, dict(rec)) for i, rec in enumerate(records, 1))
    return finish(_accumulate_rows(acc, rows, path, on_item))


def labelled_record(
    rec: Mapping[str, Any],
    lab: Optional[Label],
    reason: Optional[str],
    *,
    judge: Optional[str] = None,
    template: Optional[str] = None,
    path: Optional[str] = None,
    line: Optional[int] = None,
) -> Dict[str, Any]:
    """The record as ``rgb label`` writes it: normalized ``prediction``, ``label``, ``factlabel``.

    A dropped record keeps ``label``/``factlabel`` ``None`` and ``rgb_skipped`` = the
    reason.  With ``judge`` (``reject`` or ``fact``) the judge prompt (``judge_prompt``) and
    the template id (``judge_template``) are added; the record needs a string ``query``.
    """
    out = dict(rec)
    if lab is None:
        out["label"] = None
        out["factlabel"] = None
        out["rgb_skipped"] = reason
        return out
    out["prediction"] = lab.prediction
    out["label"] = lab.label
    out["factlabel"] = lab.factlabel
    if judge:
        query = rec.get("query")
        if not isinstance(query, str):
            raise ScoringError(
                "record has no string 'query' (needed by the judge prompt)",
                path=path,
                line=line,
                record=_record_who(rec),
                field="query",
            )
        if judge == "reject":
            out["judge_prompt"] = build_reject_judge_prompt(query, lab.prediction, template=template)
        else:
            out["judge_prompt"] = build_fact_judge_prompt(lab.prediction, query=query, template=template)
        out["judge_template"] = template_id(template)
    return out


class StepSummary(NamedTuple):
    """What a data step (``mix``, ``label``) did: its signature, how many records it wrote, its notes."""

    signature: str
    written: int
    notes: List[str]


def label_file(
    path: str,
    *,
    dataset: Optional[str] = None,
    variants: Sequence[str] = (),
    judge: Optional[str] = None,
    template: Optional[str] = None,
    on_record: Callable[[Dict[str, Any]], object],
) -> StepSummary:
    """``rgb label``: every record of ``path`` labelled (:func:`labelled_record`), in input order, to ``on_record``.

    ``judge`` (``reject``/``fact``) adds the judge prompts, built from ``template`` (its
    text; ``None`` = the builtin wording).
    """
    variants = check_variants(variants)
    if judge is not None and judge not in JUDGED:
        raise ScoringError(f"judge must be one of {', '.join(JUDGED)}, got {judge!r}", field="--judge")
    ds = resolve_dataset(path, dataset)
    notes: List[str] = []
    count = 0
    for line, rec, lab, reason in label_records(read_records(path), path, notes, dataset=ds, variants=variants):
        on_record(labelled_record(rec, lab, reason, judge=judge, template=template, path=path, line=line))
        count += 1
    params: List[Tuple[str, object]] = [("dataset", ds)]
    if judge:
        params += [("judge", judge), ("judge_template", template_id(template))]
    return StepSummary(signature(variants=variants, params=params), count, notes)


def judge_prompts_file(
    path: str,
    *,
    judged: str,
    dataset: str,
    variants: Sequence[str] = (),
    template: Optional[str] = None,
) -> List[Dict[str, Any]]:
    """The labelled records of ``path`` with their judge prompts (``rgb label --judge``), all in memory.

    The whole file is validated here, before any judge call.
    """
    records: List[Dict[str, Any]] = []
    label_file(path, dataset=dataset, variants=variants, judge=judged, template=template, on_record=records.append)
    return records


def mix_file(
    path: str,
    *,
    dataset: str,
    noise_rate: Number,
    passage_num: int,
    correct_rate: Number = 0.0,
    seed: Optional[int] = DEFAULT_SEED,
    on_instance: Callable[[Dict[str, Any]], object],
) -> StepSummary:
    """``rgb mix``: ``{id, query, answer, docs}`` per instance of ``path``, in input order, to ``on_instance``.

    Instances the reference drops are left out and named in the notes.
    """
    _check_mix_params(noise_rate, correct_rate, passage_num)
    notes: List[str] = []
    count = 0
    for line, inst in read_records(path):
        try:
            missing = [k for k in ("id", "query", "answer") if k not in inst]
            if missing:
                raise InstanceSkipped(f"instance has no {', '.join(repr(k) for k in missing)}")
            docs = mix_documents(
                inst,
                dataset=dataset,
                noise_rate=noise_rate,
                passage_num=passage_num,
                correct_rate=correct_rate,
                seed=seed,
            )
        except InstanceSkipped as exc:
            notes.append(_note(path, line, inst, f"skipped (as the reference does): {exc.msg}"))
            continue
        on_instance({"id": inst["id"], "query": inst["query"], "answer": inst["answer"], "docs": docs})
        count += 1
    params: List[Tuple[str, object]] = [
        ("dataset", dataset),
        ("noise_rate", noise_rate),
        ("passage_num", passage_num),
        ("correct_rate", correct_rate),
        ("seed", seed),
    ]
    return StepSummary(signature(params=params), count, notes)


# --------------------------------------------------------------------------- report over runs


def report_runs(paths: Sequence[str]) -> List[Tuple[str, RunName]]:
    """``(path, run)`` of every prediction file of ``rgb report`` (names checked, no file read).

    A model run at several temperatures gets ``@temp{T}`` appended; the same run twice,
    or a score/judge file, is a :class:`ScoringError`.
    """
    names: List[RunName] = []
    for path in paths:
        if os.path.basename(path).endswith(_RESULT_SUFFIXES):
            raise ScoringError("give prediction files, not score or judge files", path=path)
        name = parse_prediction_filename(path)
        check_noise_rate(name.noise_rate, path=path)
        names.append(name)
    temps: Dict[str, Set[float]] = {}
    for n in names:
        temps.setdefault(n.model, set()).add(n.temp)
    seen: Dict[RunName, str] = {}
    out: List[Tuple[str, RunName]] = []
    for path, name in zip(paths, names):
        if len(temps[name.model]) > 1:  # keep runs at different temperatures apart
            name = name._replace(model=f"{name.model}@temp{name.temp}")
        if name in seen:
            raise ScoringError(f"the same run as {seen[name]}", path=path)
        seen[name] = path
        out.append((path, name))
    return out


def _run_stem(name: RunName) -> str:
    return f"{name.model}/{name.dataset}/noise{name.noise_rate}_passage{name.passage_num}_correct{name.correct_rate}/"


def report_metric_names(paths: Sequence[str]) -> List[str]:
    """The gateable names ``rgb report`` gives for these files (``MODEL/DATASET/noise.../KEY``)."""
    names: List[str] = []
    for _, run in report_runs(paths):
        stem = _run_stem(run)
        names += [stem + k for k in ScoreAccumulator.metric_names(dataset=run.dataset)]
    return names


def report_files(paths: Sequence[str], *, use_labels: bool = False, variants: Sequence[str] = ()) -> Report:
    """``rgb report``: score every prediction file and group the runs into the four abilities.

    ``result`` is ``{"abilities": abilities_table(...), "runs": [...]}``; the metrics are
    every run's score keys under ``MODEL/DATASET/noise{N}_passage{P}_correct{C}/KEY``.
    """
    variants = check_variants(variants)
    runs: List[Tuple[RunName, Scores]] = []
    run_items: List[Dict[str, Any]] = []
    metrics: Dict[str, Any] = {}
    diagnostics: List[str] = []
    for path, name in report_runs(paths):
        acc = ScoreAccumulator(
            dataset=name.dataset, noise_rate=name.noise_rate, use_labels=use_labels, variants=variants
        )
        rows_nr: Set[str] = set()
        _accumulate_rows(acc, read_records(path), path, None, rows_nr)
        if rows_nr and rows_nr != {str(name.noise_rate)}:
            diagnostics.append(
                f"{path}: records' noise_rate {', '.join(sorted(rows_nr))} differs from the file name "
                f"({name.noise_rate}); the file name is used"
            )
        rep = acc.finalize()
        sc = acc.scores()
        assert isinstance(sc, Scores)
        diagnostics += rep.diagnostics
        runs.append((name, sc))
        metrics.update(result_metrics(rep.result, _run_stem(name)))
        run_items.append(
            {
                "file": path,
                "model": name.model,
                "dataset": name.dataset,
                "temp": name.temp,
                "noise_rate": name.noise_rate,
                "passage_num": name.passage_num,
                "correct_rate": name.correct_rate,
                "scores": rep.result,
            }
        )
    if "noise1_reject_only" not in variants and any(
        dataset_branch(n.dataset) == "default" and n.noise_rate == 1 for n, _ in runs
    ):
        diagnostics.append(
            "negative rejection is the reference's 'rejected or correct' rate at noise 1.0 "
            "(--variant noise1_reject_only counts rejections only)"
        )
    params: List[Tuple[str, object]] = [("files", len(paths)), ("use_labels", use_labels)]
    return Report(
        family=FAMILY,
        signature=signature(variants=variants, params=params),
        result={"abilities": abilities_table(runs), "runs": run_items},
        metrics=metrics,
        diagnostics=diagnostics,
    )
