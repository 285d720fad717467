"""Grounding gate: answered precision, citation hit rate, refusals and recall@k.

Reference: the ``score_eval`` scorer of WFGY ProblemMap,
``onestardao/WFGY@25aaa9d:ProblemMap/eval/eval_rag_precision_recall.md`` (MIT).
The default behaviour reproduces it bit for bit, quirks included; the rules are
written down below and in ``docs/grounding.md``.

Inputs are a *gold* file (``qid``, ``answerable``, ``gold_claim_substr``,
``gold_citations``) and a *trace* file (``qid`` or ``q_id``, ``retrieved_ids``,
``answer_json`` with ``claim`` and ``citations``).  For every unique gold qid, in
first-appearance order (the last gold record for a qid wins):

* the trace is the last one with that qid; a missing trace is an answer with an
  empty claim, no citations and nothing retrieved;
* the answer is a refusal when ``claim.strip().lower() == "not in context"``;
* ``A``/``U`` count truthy/falsy ``answerable``; ``S``/``R`` count shipped
  answers and refusals;
* a shipped answer to ``answerable == False`` adds to ``UNDER``; any other
  shipped answer adds ``H`` (citation hit) to ``CHR_hit`` and ``C and H`` to
  ``TP`` (``C``: some gold substring of at least 5 characters occurs in the
  lower-cased claim; ``[]`` is vacuously true, ``None`` false);
* a refusal with ``answerable == True`` adds to ``OVER``;
* for ``answerable == True``, recall counts whether every gold citation is in
  ``retrieved_ids[:k]`` (plain slicing, so ``k <= 0`` behaves like Python).

Then::

    precision     = TP / S          (1.0 when S == 0)
    chr           = CHR_hit / S     (1.0 when S == 0)
    under_refusal = UNDER / U       (0.0 when U == 0)
    over_refusal  = OVER / A        (0.0 when A == 0)
    recall@k      = RECALL / REC_DEN (0.0 when no item has answerable == True)

The reference's gates (``--gates "precision=0.80,chr=0.75,under=0.05,over=0.10"``)
keep their values as strings, compare the unrounded metrics with ``float()`` of
them in the order precision, chr, under, over, and stop at the first failure.

Where the reference crashes, a :class:`~rageval_min.errors.ScoringError` names
the file, line and qid.  One deliberate difference: an empty gold or trace
file is an input error (the reference would report precision 1.0 on nothing).

Variants (opt-in, recorded in the signature): ``bom_tolerant``,
``refusal_relaxed``, ``chr_as_documented``, ``answerable_strict``,
``gate_recall``.
"""

import functools
import json
import re
import unicodedata
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .._contract import Accumulator, ItemRow, finish, register_accumulator
from .._io import Problems, iter_jsonl
from .._metrics import Input, InputField, Metric
from .._numbers import float_text
from .._parallel import accumulate_items
from .._signature import make_signature
from .._state_schema import Count, Fields, Integer, Items, Schema, Text
from ..errors import ScoringError
from ..gates import GateOutcome
from ..report import Report

__all__ = [
    "DEFAULT_GATES",
    "FAMILY",
    "GroundingAccumulator",
    "REPORT_FORMATS",
    "GroundingScores",
    "REFERENCE",
    "REFUSAL",
    "VARIANTS",
    "citation_hit",
    "contains_substr",
    "evaluate_reference_gates",
    "format_wfgy",
    "is_refusal",
    "parse_reference_gates",
    "reference_output",
    "check_variants",
    "score",
    "score_file",
    "score_files",
    "score_item",
    "signature",
]

FAMILY = "grounding"
REFERENCE = "onestardao/WFGY@25aaa9d"
REFUSAL = "not in context"
DEFAULT_GATES = "precision=0.80,chr=0.75,under=0.05,over=0.10"
VARIANTS = ("answerable_strict", "bom_tolerant", "chr_as_documented", "gate_recall", "refusal_relaxed")

#: The reference's gates: (gates key, metric, operator), in evaluation order.
_REFERENCE_GATES = (
    ("precision", "precision", ">="),
    ("chr", "chr", ">="),
    ("under", "under_refusal", "<="),
    ("over", "over_refusal", "<="),
)


class GroundingScores(NamedTuple):
    """Counts and unrounded rates of one grounding run."""

    answered: int
    refused: int
    answerable: int
    unanswerable: int
    precision: float
    chr: float
    under_refusal: float
    over_refusal: float
    recall_at_k: float
    k: int
    diagnostics: Tuple[str, ...] = ()

    def metrics(self) -> Dict[str, Any]:
        """The gateable outputs under their canonical (output) names."""
        return {
            "answered": self.answered,
            "refused": self.refused,
            "answerable": self.answerable,
            "unanswerable": self.unanswerable,
            "precision": self.precision,
            "chr": self.chr,
            "under_refusal": self.under_refusal,
            "over_refusal": self.over_refusal,
            "recall@k": self.recall_at_k,
        }


def contains_substr(claim: str, subs: Any) -> bool:
    """The reference's claim test.

    True when some entry of ``subs``, lower-cased and at least 5 code points
    long, occurs in the lower-cased claim; when none does, True only if
    ``subs == []``.

    >>> contains_substr("X rejects null keys.", ["Rejects Null"])
    True
    >>> contains_substr("anything", [])
    True
    >>> contains_substr("anything", None)
    False
    >>> contains_substr("a cat", ["cat"])
    False
    """
    c = (claim or "").lower()
    for s in subs or []:
        s = s.lower()
        if len(s) >= 5 and s in c:
            return True
    return bool(subs == [])


def citation_hit(citations: Any, gold_cites: Any, retrieved: Any) -> bool:
    """The reference's citation test.

    Not a list: miss.  A citation outside ``retrieved``: miss.  With gold
    citations: any overlap.  Without: a hit only when nothing is cited.

    >>> citation_hit(["p1"], ["p1", "p2"], ["p1", "p3"])
    True
    >>> citation_hit(["p1", "p9"], ["p1"], ["p1"])
    False
    >>> citation_hit([], [], ["p1"])
    True
    """
    if not isinstance(citations, list):
        return False
    if not set(citations).issubset(set(retrieved or [])):
        return False
    if gold_cites:
        return bool(set(citations) & set(gold_cites))
    return citations == []


_WS = re.compile(r"\s+")


def is_refusal(claim: str, *, relaxed: bool = False) -> bool:
    """True when the (already stripped) claim is the refusal token.

    Reference: ``claim.lower() == "not in context"``.  ``relaxed`` (variant
    ``refusal_relaxed``): NFKC, ``casefold()``, whitespace runs collapsed to one
    space, then one trailing ``.`` or ``!`` and the whitespace before it removed.

    >>> is_refusal("Not In Context"), is_refusal("not in context.")
    (True, False)
    >>> is_refusal("Not  in context!", relaxed=True)
    True
    """
    if not relaxed:
        return claim.lower() == REFUSAL
    s = _WS.sub(" ", unicodedata.normalize("NFKC", claim).casefold()).strip()
    if s.endswith((".", "!")):
        s = s[:-1].rstrip()
    return s == REFUSAL


def _check_hashable_elements(value: Any, field: str, **where: Any) -> None:
    if isinstance(value, (list, tuple, dict, str)):
        for i, item in enumerate(value):
            if isinstance(item, (list, dict)):
                raise ScoringError(
                    f"element {i} is a {type(item).__name__}; ids must be strings or numbers", field=field, **where
                )
    elif value is not None and not isinstance(value, (list, str)):
        raise ScoringError(f"expected a list, got {type(value).__name__}", field=field, **where)


def _index_gold(
    gold: Iterable[Tuple[int, Any]], label: str, problems: Problems
) -> Dict[Any, Tuple[int, Dict[str, Any]]]:
    index: Dict[Any, Tuple[int, Dict[str, Any]]] = {}
    try:
        for line, g in gold:
            if not isinstance(g, dict):
                problems.add(f"expected a JSON object, got {type(g).__name__}", path=label, line=line)
                continue
            if "qid" not in g:
                problems.add("missing (every gold record needs a qid)", path=label, line=line, field="qid")
                continue
            qid = g["qid"]
            if isinstance(qid, (list, dict)):
                problems.add(
                    f"must be a string or number, got {type(qid).__name__}", path=label, line=line, field="qid"
                )
                continue
            index[qid] = (line, g)
    except ScoringError as exc:  # the reader's own problems, raised when the file ends
        problems.add_error(exc)
    return index


class _TraceIndex(NamedTuple):
    by_qid: Dict[Any, Tuple[int, Dict[str, Any]]]
    unused: int
    dropped: int


def _index_traces(
    traces: Iterable[Tuple[int, Any]], label: str, problems: Problems, gold: Dict[Any, Any]
) -> _TraceIndex:
    # Only traces whose qid is in gold are kept (the last one wins), so a huge
    # trace file is scored in memory proportional to the gold set.
    index: Dict[Any, Tuple[int, Dict[str, Any]]] = {}
    dropped = unused = 0
    try:
        for line, t in traces:
            if not isinstance(t, dict):
                problems.add(f"expected a JSON object, got {type(t).__name__}", path=label, line=line)
                continue
            qid = t.get("qid") or t.get("q_id")
            if not qid:
                dropped += 1
                continue
            if isinstance(qid, (list, dict)):
                problems.add(
                    f"must be a string or number, got {type(qid).__name__}", path=label, line=line, field="qid"
                )
                continue
            if qid in gold:
                index[qid] = (line, t)
            else:
                unused += 1
    except ScoringError as exc:
        problems.add_error(exc)
    return _TraceIndex(index, unused, dropped)


def check_variants(variants: Iterable[str]) -> Tuple[str, ...]:
    """The sorted, de-duplicated variant names; an unknown one is a ScoringError.

    >>> check_variants(["refusal_relaxed", "bom_tolerant", "refusal_relaxed"])
    ('bom_tolerant', 'refusal_relaxed')
    """
    names = tuple(sorted(set(variants)))
    bad = [v for v in names if v not in VARIANTS]
    if bad:
        raise ScoringError(f"unknown grounding variant(s): {', '.join(bad)}; known: {', '.join(VARIANTS)}")
    return names


def _claim_and_hit(
    claim: str, cits: Any, ret: Any, g: Dict[str, Any], *, gwhere: Dict[str, Any], twhere: Dict[str, Any]
) -> Tuple[bool, bool]:
    """``C`` (a gold substring is in the claim) and ``H`` (a citation hits), as score_eval computes them."""
    subs = g.get("gold_claim_substr")
    try:
        C = contains_substr(claim, subs)
    except (AttributeError, TypeError):
        raise ScoringError(
            "must be a list of strings (an element is not a string)"
            if isinstance(subs, (list, dict))
            else f"must be a list of strings, got {type(subs).__name__}",
            field="gold_claim_substr",
            **gwhere,
        ) from None
    gold_cites = g.get("gold_citations")
    try:
        H = citation_hit(cits, gold_cites, ret)
    except TypeError:
        _check_hashable_elements(cits, "answer_json.citations", **twhere)
        _check_hashable_elements(ret, "retrieved_ids", **twhere)
        _check_hashable_elements(gold_cites, "gold_citations", **gwhere)
        _check_list(ret, "retrieved_ids", twhere)
        raise ScoringError(
            "citations, gold_citations or retrieved_ids hold values that cannot be compared", **gwhere
        ) from None
    return C, H


def _recall(g: Dict[str, Any], ret: Any, k: int, *, gwhere: Dict[str, Any], twhere: Dict[str, Any]) -> int:
    """1 when every gold citation is in ``retrieved_ids[:k]`` (plain slicing), else 0."""
    gold_cites = g.get("gold_citations")
    try:
        return int(set(gold_cites or []).issubset(set(ret[:k])))
    except TypeError:
        _check_hashable_elements(gold_cites, "gold_citations", **gwhere)
        _check_hashable_elements(ret, "retrieved_ids", **twhere)
        _check_list(ret, "retrieved_ids", twhere)
        raise ScoringError("gold_citations or retrieved_ids hold values that cannot be compared", **gwhere) from None


def _check_list(value: Any, field: str, where: Dict[str, Any]) -> None:
    """An input error naming ``field`` (and the trace record) when ``value`` is not a list."""
    if value is not None and not isinstance(value, list):
        raise ScoringError(f"must be a list, got {type(value).__name__}", field=field, **where)


def _pair_row(
    qid: Any,
    g: Dict[str, Any],
    ans: Dict[str, Any],
    *,
    k: int,
    variants: Sequence[str],
    gwhere: Dict[str, Any],
    twhere: Dict[str, Any],
) -> ItemRow:
    relaxed = "refusal_relaxed" in variants
    chr_all = "chr_as_documented" in variants
    answerable = g.get("answerable")
    if "answerable_strict" in variants and not isinstance(answerable, bool):
        raise ScoringError(
            f"must be true or false (variant answerable_strict), got {json.dumps(answerable)}",
            field="answerable",
            **gwhere,
        )
    aj = ans.get("answer_json") or {}
    if not isinstance(aj, dict):
        raise ScoringError(f"must be an object, got {type(aj).__name__}", field="answer_json", **twhere)
    claim_raw = aj.get("claim") or ""
    if not isinstance(claim_raw, str):
        raise ScoringError(f"must be a string, got {type(claim_raw).__name__}", field="answer_json.claim", **twhere)
    claim = claim_raw.strip()
    cits = aj.get("citations") or []
    ret = ans.get("retrieved_ids") or []
    is_ans = not is_refusal(claim, relaxed=relaxed)
    correct = hit = under = over = 0
    recall: Optional[int] = None
    if is_ans:
        C, H = _claim_and_hit(claim, cits, ret, g, gwhere=gwhere, twhere=twhere)
        if answerable == False:  # noqa: E712 -- the reference's equality test, kept on purpose
            under = 1
            if chr_all:
                hit = int(H)
        else:
            hit = int(H)
            correct = int(C and H)
    elif answerable == True:  # noqa: E712
        over = 1
    if answerable == True:  # noqa: E712
        recall = _recall(g, ret, k, gwhere=gwhere, twhere=twhere)
    return {
        "qid": qid,
        "answerable": 1 if answerable else 0,
        "unanswerable": 0 if answerable else 1,
        "answered": int(is_ans),
        "refused": int(not is_ans),
        "correct": correct,
        "citation_hit": hit,
        "under_refusal": under,
        "over_refusal": over,
        "recall@k": recall,
    }


def score_item(
    gold: Dict[str, Any], trace: Optional[Dict[str, Any]], *, k: int = 5, variants: Sequence[str] = ()
) -> ItemRow:
    """The item row of one gold record and its trace (None: no trace, which the reference scores as empty).

    Every value is a 0/1 integer except ``qid`` and ``recall@k`` (None when the
    item is not in recall's denominator, i.e. ``answerable`` is not ``== True``).
    ``correct`` and ``citation_hit`` are what the item adds to precision's and
    CHR's numerators; ``answered`` is their denominator.

    >>> score_item({"qid": "q1", "answerable": True, "gold_claim_substr": ["paris"], "gold_citations": ["d1"]},
    ...            {"qid": "q1", "retrieved_ids": ["d1"], "answer_json": {"claim": "Paris.", "citations": ["d1"]}})
    {'qid': 'q1', 'answerable': 1, 'unanswerable': 0, 'answered': 1, 'refused': 0, 'correct': 1, 'citation_hit': 1, \
'under_refusal': 0, 'over_refusal': 0, 'recall@k': 1}
    """
    qid = gold.get("qid")
    return _pair_row(qid, gold, trace or {}, k=k, variants=check_variants(variants), gwhere={}, twhere={})


_COUNTS = (
    "answerable",
    "unanswerable",
    "answered",
    "refused",
    "correct",
    "citation_hit",
    "under_refusal",
    "over_refusal",
)


@register_accumulator
class GroundingAccumulator(Accumulator):
    """Integer counters of the item rows; the rates are formed once, in :meth:`finalize`.

    Merging adds the counters, so it is exact for any partition.  ``missing``
    keeps the first ten qids that had no trace (for the diagnostic) and counts
    the rest; file-level diagnostics arrive through :meth:`note`.
    """

    FAMILY = "grounding"
    COMMAND = "score"
    METRICS = (
        Metric("answered", "neither", "count", "answers shipped (not refusals)", per_item=True),
        Metric("refused", "neither", "count", "refusals ('not in context')", per_item=True),
        Metric("answerable", "neither", "count", "gold items marked answerable", per_item=True),
        Metric("unanswerable", "neither", "count", "gold items marked unanswerable", per_item=True),
        Metric("correct", "higher", "outcome", "shipped, answerable, claim matches and cites a gold source", True),
        Metric(
            "precision",
            "higher",
            "rate",
            "correct / answered (1.0 when nothing was answered)",
            numerator="correct",
            denominator="answered",
            lo=0.0,
            hi=1.0,
        ),
        Metric("citation_hit", "higher", "outcome", "a shipped answer cites a gold citation", per_item=True),
        Metric(
            "chr",
            "higher",
            "rate",
            "citation hit rate: citation_hit / answered (1.0 when nothing was answered)",
            numerator="citation_hit",
            denominator="answered",
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "under_refusal",
            "lower",
            "rate",
            "answers shipped to unanswerable items / unanswerable",
            per_item=True,
            numerator="under_refusal",
            denominator="unanswerable",
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "over_refusal",
            "lower",
            "rate",
            "refusals of answerable items / answerable",
            per_item=True,
            numerator="over_refusal",
            denominator="answerable",
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "recall@k",
            "higher",
            "rate",
            "answerable items whose gold citations are all in retrieved_ids[:k]",
            per_item=True,
            numerator="recall@k",
            lo=0.0,
            hi=1.0,
        ),
    )
    INPUTS = (
        Input(
            "--gold",
            "gold answers",
            "qid",
            (
                InputField("qid", ("string", "integer"), True, "grouped under the qid null"),
                InputField("answerable", ("boolean",), True, "read as unanswerable (falsy)"),
                InputField("gold_claim_substr", ("array", "null"), False, "no substring matches (null)"),
                InputField("gold_citations", ("array", "null"), False, "no citation can hit (null)"),
            ),
        ),
        Input(
            "--trace",
            "the system's answers",
            "qid",
            (
                InputField("qid", ("string", "integer"), True, "matched by q_id, else unmatched"),
                InputField("q_id", ("string", "integer"), False),
                InputField("retrieved_ids", ("array", "null"), True, "nothing retrieved"),
                InputField("answer_json", ("object", "null"), True, "an empty claim: read as an answer with no claim"),
            ),
        ),
    )

    STATE_SCHEMA = Schema(
        params=Fields(
            {
                "k": Integer(lo=1),
                "gates": Text(max_len=1000),
                "variants": Items(Text(choices=VARIANTS), unique=True),
            }
        ),
        data=Fields(
            {
                "counts": Fields(
                    {
                        "answerable": Count(),
                        "unanswerable": Count(),
                        "answered": Count(),
                        "refused": Count(),
                        "correct": Count(at_most="data.counts.answered"),
                        "citation_hit": Count(at_most="data.counts.answered"),
                        "under_refusal": Count(at_most="data.counts.unanswerable"),
                        "over_refusal": Count(at_most="data.counts.answerable"),
                    }
                ),
                "recall": Count(at_most="data.recall_den"),
                "recall_den": Count(at_most="data.counts.answerable"),
                "missing": Items(Text(max_len=10_000), max_len=10),
                "missing_total": Count(),
            }
        ),
    )

    def __init__(self, *, k: int = 5, gates: str = DEFAULT_GATES, variants: Sequence[str] = ()) -> None:
        super().__init__(k=k, gates=gates, variants=list(check_variants(variants)))
        self.k = k
        self.gates = gates
        self.variants = tuple(self.params["variants"])
        self.counts = dict.fromkeys(_COUNTS, 0)
        self.recall = 0
        self.recall_den = 0
        self.missing: List[str] = []
        self.missing_total = 0

    @classmethod
    def metric_names(cls, **options: Any) -> List[str]:
        """The gateable names (they do not depend on the data)."""
        return list(GroundingScores._fields[:4]) + ["precision", "chr", "under_refusal", "over_refusal", "recall@k"]

    def add(self, item: ItemRow) -> None:
        for name in _COUNTS:
            self.counts[name] += item[name]
        if item["recall@k"] is not None:
            self.recall_den += 1
            self.recall += item["recall@k"]

    def add_missing(self, qid: Any) -> None:
        """Record a gold qid that had no trace."""
        self.missing_total += 1
        if len(self.missing) < 10:
            self.missing.append(repr(qid))

    def _data(self) -> Dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "recall": self.recall,
            "recall_den": self.recall_den,
            "missing": list(self.missing),
            "missing_total": self.missing_total,
        }

    def _load(self, data: Mapping[str, Any]) -> None:
        self.counts = {name: int(data["counts"][name]) for name in _COUNTS}
        self.recall = int(data["recall"])
        self.recall_den = int(data["recall_den"])
        self.missing = [str(m) for m in data["missing"]][:10]
        self.missing_total = int(data["missing_total"])

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, GroundingAccumulator)
        for name in _COUNTS:
            self.counts[name] += other.counts[name]
        self.recall += other.recall
        self.recall_den += other.recall_den
        self.missing = (self.missing + other.missing)[:10]
        self.missing_total += other.missing_total

    def scores(self) -> GroundingScores:
        """The counts and unrounded rates (the reference's formulas and empty-denominator defaults)."""
        c = self.counts
        S, U, A = c["answered"], c["unanswerable"], c["answerable"]
        diagnostics = []
        if self.missing_total:
            more = self.missing_total - len(self.missing)
            shown = ", ".join(self.missing) + (f" and {more} more" if more else "")
            diagnostics.append(
                f"{self.missing_total} gold qid(s) have no trace and count as shipped empty answers "
                f"(reference behaviour): {shown}"
            )
        return GroundingScores(
            answered=S,
            refused=c["refused"],
            answerable=A,
            unanswerable=U,
            precision=c["correct"] / S if S else 1.0,
            chr=c["citation_hit"] / S if S else 1.0,
            under_refusal=c["under_refusal"] / U if U else 0.0,
            over_refusal=c["over_refusal"] / A if A else 0.0,
            recall_at_k=self.recall / self.recall_den if self.recall_den else 0.0,
            k=self.k,
            diagnostics=tuple(diagnostics + self.notes()),
        )

    def finalize(self) -> Report:
        scores = self.scores()
        gates_dict = parse_reference_gates(self.gates)
        passed, outcomes = evaluate_reference_gates(scores, gates_dict, variants=self.variants)
        return Report(
            family=FAMILY,
            signature=signature(variants=self.variants, params=[("k", self.k)]),
            result=reference_output(scores, gates_dict, passed),
            metrics=scores.metrics(),
            diagnostics=list(scores.diagnostics),
            reference_pass=passed,
            family_gates=outcomes,
        )


def _pair_item(pair: Tuple[Any, ...], *, k: int, variants: Sequence[str]) -> ItemRow:
    """The item row of one ``(qid, gold, trace, gold file, gold line, trace file, trace line)`` pair."""
    qid, g, ans, gold_label, gline, trace_label, tline = pair
    gwhere: Dict[str, Any] = {"path": gold_label, "line": gline, "record": f"qid={qid!r}"}
    twhere: Dict[str, Any] = (
        {"path": trace_label, "line": tline, "record": f"qid={qid!r}"} if tline else {"record": f"qid={qid!r}"}
    )
    return _pair_row(qid, g, ans, k=k, variants=variants, gwhere=gwhere, twhere=twhere)


def _accumulate(
    gold_items: Iterable[Tuple[int, Any]],
    trace_items: Iterable[Tuple[int, Any]],
    *,
    k: int,
    gates: str,
    variants: Sequence[str],
    gold_label: str,
    trace_label: str,
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> GroundingAccumulator:
    acc = GroundingAccumulator(k=k, gates=gates, variants=variants)
    problems = Problems()
    gold = _index_gold(gold_items, gold_label, problems)
    traces, unused, dropped = _index_traces(trace_items, trace_label, problems, gold)
    problems.raise_if_any()
    if not gold:
        raise ScoringError("holds no gold records", path=gold_label)

    def pairs() -> Iterator[Tuple[Any, ...]]:
        for qid, (gline, g) in gold.items():
            tline, ans = traces.get(qid, (None, {}))
            if tline is None:
                acc.add_missing(qid)
            yield (qid, g, ans, gold_label, gline, trace_label, tline)

    # raises the first record's ScoringError, in gold order, whatever the engine
    accumulate_items(acc, functools.partial(_pair_item, k=k, variants=acc.variants), pairs(), on_item=on_item)
    if unused:
        acc.note(f"{unused} trace line(s) have a qid that is not in the gold file and are ignored")
    if dropped:
        acc.note(f"{dropped} trace line(s) have no qid/q_id and are ignored")
    return acc


def score(
    gold: Iterable[Dict[str, Any]],
    traces: Iterable[Dict[str, Any]],
    *,
    k: int = 5,
    variants: Sequence[str] = (),
) -> GroundingScores:
    """Score parsed gold and trace records (see the module docstring).

    Errors name the record by its 1-based position (``gold record 2``).

    >>> gold = [{"qid": "q1", "answerable": True, "gold_claim_substr": ["paris"],
    ...          "gold_citations": ["d1"]}]
    >>> trace = [{"qid": "q1", "retrieved_ids": ["d1"],
    ...           "answer_json": {"claim": "It is Paris.", "citations": ["d1"]}}]
    >>> s = score(gold, trace)
    >>> s.precision, s.chr, s.recall_at_k
    (1.0, 1.0, 1.0)
    """
    if isinstance(k, bool) or not isinstance(k, int):
        raise ScoringError(f"k must be an int, got {k!r}")
    return _accumulate(
        enumerate(gold, 1),
        enumerate(traces, 1),
        k=k,
        gates=DEFAULT_GATES,
        variants=variants,
        gold_label="gold record",
        trace_label="trace record",
    ).scores()


def _file_accumulator(
    gold_path: str,
    trace_path: str,
    *,
    k: int,
    gates: str,
    variants: Sequence[str],
    on_item: Optional[Callable[[ItemRow], None]],
) -> GroundingAccumulator:
    variants = check_variants(variants)
    tolerant = "bom_tolerant" in variants
    return _accumulate(
        iter_jsonl(gold_path, bom_tolerant=tolerant, bom_hint="--variant bom_tolerant"),
        iter_jsonl(trace_path, bom_tolerant=tolerant, bom_hint="--variant bom_tolerant"),
        k=k,
        gates=gates,
        variants=variants,
        gold_label=gold_path,
        trace_label=trace_path,
        on_item=on_item,
    )


def score_files(gold_path: str, trace_path: str, *, k: int = 5, variants: Sequence[str] = ()) -> GroundingScores:
    """Score two JSON Lines files into counts and unrounded rates; errors name the file and line.

    Both files are streamed; problems in either file are reported together.
    """
    return _file_accumulator(gold_path, trace_path, k=k, gates=DEFAULT_GATES, variants=variants, on_item=None).scores()


def score_file(
    gold_path: str,
    trace_path: str,
    *,
    k: int = 5,
    gates: str = DEFAULT_GATES,
    variants: Sequence[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """The ``grounding`` command: score a gold and a trace file into a Report.

    ``gates`` is the reference's ``--gates`` string; they decide
    ``reference_pass``.  ``on_item`` receives each item row (see
    :func:`score_item`) in gold order.
    """
    parse_reference_gates(gates)
    return finish(_file_accumulator(gold_path, trace_path, k=k, gates=gates, variants=variants, on_item=on_item))


def parse_reference_gates(text: str) -> Dict[str, str]:
    """Parse the reference's ``--gates`` string; values stay strings.

    ``dict(item.split("=") for item in text.split(","))``: keys are not
    stripped, duplicates keep the last value, extra keys are kept.

    >>> parse_reference_gates("precision=0.80,chr=0.75")
    {'precision': '0.80', 'chr': '0.75'}
    >>> parse_reference_gates("precision=0.8=1")
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: --gates item 'precision=0.8=1' must be NAME=VALUE with exactly one '='
    """
    gates: Dict[str, str] = {}
    for item in text.split(","):
        parts = item.split("=")
        if len(parts) != 2:
            raise ScoringError(f"--gates item {item!r} must be NAME=VALUE with exactly one '='")
        gates[parts[0]] = parts[1]
    return gates


def evaluate_reference_gates(
    scores: GroundingScores, gates: Dict[str, str], *, variants: Sequence[str] = ()
) -> Tuple[bool, List[GateOutcome]]:
    """The reference's pass/fail, with one outcome per gate it evaluated.

    Short-circuit order precision, chr, under, over (then recall with the
    ``gate_recall`` variant); a gate after the first failure is reported as
    not evaluated (``passed=None``), and a missing or non-numeric gate is an
    error only if evaluation reaches it, as in the reference.
    """
    order = list(_REFERENCE_GATES)
    if "gate_recall" in variants and "recall" in gates:
        order.append(("recall", "recall@k", ">="))
    values = scores.metrics()
    outcomes: List[GateOutcome] = []
    passed = True
    for key, metric, op in order:
        if not passed:
            threshold = float_text(gates[key]) if key in gates else None
            if threshold is None:
                continue
            outcomes.append(
                GateOutcome(metric, op, threshold, values[metric], None, f"{metric}{op}{gates[key].strip()}")
            )
            continue
        if key not in gates:
            raise ScoringError(
                f"--gates has no {key!r} gate, which the reference requires "
                f"(given: {', '.join(map(repr, gates)) or 'none'})"
            )
        threshold = float_text(gates[key])
        if threshold is None:
            raise ScoringError(f"--gates {key}={gates[key]!r}: not a number")
        value = values[metric]
        ok = value >= threshold if op == ">=" else value <= threshold
        outcomes.append(GateOutcome(metric, op, threshold, value, ok, f"{metric}{op}{gates[key].strip()}"))
        passed = ok
    return passed, outcomes


def reference_output(scores: GroundingScores, gates: Dict[str, str], passed: bool) -> Dict[str, Any]:
    """The reference's output object: exact keys, order, rounding and types."""
    return {
        "answered": scores.answered,
        "refused": scores.refused,
        "answerable": scores.answerable,
        "unanswerable": scores.unanswerable,
        "precision": round(scores.precision, 4),
        "chr": round(scores.chr, 4),
        "under_refusal": round(scores.under_refusal, 4),
        "over_refusal": round(scores.over_refusal, 4),
        "recall@k": round(scores.recall_at_k, 4),
        "k": scores.k,
        "gates": dict(gates),
        "pass": passed,
    }


def format_wfgy(output: Dict[str, Any]) -> str:
    """The reference's stdout for ``output``: ``indent=2``, ASCII escapes, newline."""
    return json.dumps(output, indent=2) + "\n"


def signature(*, variants: Sequence[str] = (), params: Sequence[Tuple[str, object]] = (("k", 5),)) -> str:
    """The reproducibility signature of a grounding result.

    >>> signature(params=[("k", 5)])
    'rageval_min:0.1.0|family=grounding|ref=onestardao/WFGY@25aaa9d|variants=none|k=5'
    """
    return make_signature(FAMILY, REFERENCE, check_variants(variants), params)


#: The reference's own output formats of a grounding report (name -> renderer), for the CLI and ``merge``.
REPORT_FORMATS = {"wfgy": lambda report, outcomes: format_wfgy(report.result)}
