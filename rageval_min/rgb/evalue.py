"""Mirrors chen700564/RGB@65ec39e:evalue.py: document mixing, answer labels and the score object.

Reference: ``chen700564/RGB@65ec39e:evalue.py`` (``processdata``: the seeded mixing;
``checkanswer`` and ``predict``: the labels; the aggregate written to ``_result.json``; the
prediction file names).  The upstream code and data are CC BY-NC-SA 4.0; this package is a
clean-room implementation written from the project's RGB spec and ships no upstream code,
data or prompt text; the behaviour is pinned by the conformance vectors in ``tests/data/``
and the gold samples in ``gold_samples/rgb/``.

Pipeline (pure functions)::

    mix_documents(instance, ...)      -> the passages shown to the model (seeded, bit-exact)
    label_prediction(raw, answer, ...) -> Label(label, factlabel, prediction)
    label_row(id, label, factlabel, ...) -> the item row that rgb score adds up

Label meaning (authoritative): ``1`` = answer element found, ``0`` = not found, ``[-1]`` =
the model rejected (said the information is insufficient).

Reference quirks kept by default (each is documented on the function that has it):
case-sensitive keywords checked in both languages for every dataset; zh datasets remove
U+0020 from the prediction only; ``str.lower`` (not ``casefold``) for answer matching;
``[]`` labels are never correct; ``""`` answers always match; at noise 1 "rejected or
correct" counts; ``correct_rate`` is the int ``0`` when nothing was flagged; ``correct_tt``
ignores ``1 in label``; the ``_int`` mixer never truncates to the positive count; the default
mixer clamps only one side; fewer documents than ``passage_num`` are possible.
"""

import json
import math
import random
import re
import unicodedata
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .._contract import ItemRow
from .._numbers import float_text, int_text
from ..errors import ScoringError
from ..report import Report
from ._common import (
    InstanceSkipped,
    Number,
    _fill,
    _is_fact,
    _is_int,
    _is_number,
    _is_zh,
    _who,
    check_variants,
    dataset_branch,
)

__all__ = [
    "BUILTIN_ANSWER_INSTRUCTION",
    "BUILTIN_ANSWER_SYSTEM",
    "DEFAULT_SEED",
    "FACT_KEYWORDS",
    "Label",
    "REJECT_KEYWORDS",
    "RunName",
    "Scores",
    "build_answer_prompt",
    "check_answer",
    "format_result_json",
    "format_result_text",
    "ground_truth_of",
    "has_fact_flag",
    "is_rejection",
    "label_prediction",
    "label_row",
    "mix_documents",
    "normalize_prediction",
    "parse_prediction_filename",
    "skipped_row",
    "validate_stored_label",
]

#: The reference seeds stdlib ``random`` with this before mixing each instance.
DEFAULT_SEED = 2333

#: Rejection keywords (zh, en); both are checked for every dataset.
REJECT_KEYWORDS = ("信息不足", "insufficient information")
#: Factual-error keywords (zh, en); both are checked for every dataset.
FACT_KEYWORDS = ("事实性错误", "factual errors")


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


def _int_groups(positive: List[Any], rng: random.Random, who: Optional[str]) -> List[List[Any]]:
    """The ``_int`` branch's groups, each shuffled in order (the instance is not modified)."""
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
    return groups


def _mix_int(
    instance: Mapping[str, Any],
    positive: List[Any],
    pos_num: int,
    passage_num: int,
    rng: random.Random,
    who: Optional[str],
) -> List[Any]:
    """The ``_int`` branch before the final shuffle (see :func:`mix_documents`)."""
    groups = _int_groups(positive, rng, who)
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
    return docs


def _mix_fact(
    instance: Mapping[str, Any],
    positive: List[Any],
    neg_num: int,
    passage_num: int,
    rates: Tuple[Number, Number],
    rng: random.Random,
    who: Optional[str],
) -> List[Any]:
    """The ``_fact`` branch before the final shuffle; ``rates`` is ``(noise_rate, correct_rate)``."""
    noise_rate, correct_rate = rates
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
    return docs


def _mix_default(
    instance: Mapping[str, Any],
    positive: List[Any],
    neg_num: int,
    pos_num: int,
    passage_num: int,
    noise1: bool,
    who: Optional[str],
) -> List[Any]:
    """The default branch before the final shuffle: one clamp only (see :func:`mix_documents`)."""
    negative = _str_list(instance, "negative", who)
    if noise1:
        neg_num, pos_num = passage_num, 0
    elif neg_num > len(negative):
        neg_num = len(negative)
        pos_num = passage_num - neg_num
    elif pos_num > len(positive):
        pos_num = len(positive)
        neg_num = passage_num - pos_num
    return positive[:pos_num] + negative[:neg_num]


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
        docs = _mix_int(instance, positive, pos_num, passage_num, rng, who)
    elif branch == "fact":
        docs = _mix_fact(instance, positive, neg_num, passage_num, (noise_rate, correct_rate), rng, who)
    else:
        docs = _mix_default(instance, positive, neg_num, pos_num, passage_num, noise_rate == 1, who)
    rng.shuffle(docs)
    for d in docs:
        if not isinstance(d, str):
            raise InstanceSkipped(
                f"a selected passage is {type(d).__name__}, not a string (the reference fails building the prompt)",
                record=who,
            )
    return docs


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


#: The names of the reference's score and judge files (not prediction files).
_RESULT_SUFFIXES = ("_result.json", "_chatgpt.json", "_chatgptresult.json")

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
    temp, noise, correct = float_text(m["temp"]), float_text(m["noise"]), float_text(m["correct"])
    passage = int_text(m["passage"])
    if temp is None or noise is None or correct is None or passage is None:
        raise ScoringError("file name has a non-numeric temp/noise/correct part", path=name)
    return RunName(m["dataset"], m["model"], temp, noise, passage, correct)


def format_result_text(report: Report, outcomes: Any = ()) -> str:
    """A score report's ``result`` as the reference's ``_result.json`` text (no final newline, as it writes it)."""
    return format_result_json(report.result)
