"""Mirrors trec_eval's main loop and averaging (``usnistgov/trec_eval@d95ca64:trec_eval.c``,
``meas_avg.c``; 10.0: ``@f425365``): one item row per topic, the ``all`` values from them.

Which topics count (``missing``):

``skip`` (default; trec_eval 9.0.8 without ``-c`` and pytrec_eval)
    the topics in both the run and the qrels.  A qrels topic absent from the
    run is left out (and named in a diagnostic).  The default because
    pytrec_eval -- what BEIR, MTEB and MT-RAG report with -- does this, so the
    numbers match the ones people publish and compare against.
``zero`` (``trec_eval -c``, ir_measures, ranx after ``make_comparable``)
    every qrels topic; one absent from the run scores 0 on every measure.
    ``NumRel`` of ``all`` then counts every grade > 0 in the qrels (as
    ``-c`` prints it, whatever the relevance level).

A run topic without judgments is ignored in both (a diagnostic counts them).
The ``all`` value of a measure is the sum of the topic values in qid byte
order (a left-to-right double sum, as trec_eval accumulates) divided by the
number of topics; counts (``NumRet``, ``NumRel``, ``NumRelRet``) are summed.

Item rows (one per topic, run order; with ``missing="zero"`` the qrels
topics absent from the run follow, in qrels order): ``qid``, ``in_run``
(0/1), the integer pieces ``NumRet``, ``NumRel``, ``NumRelRet``,
``first_rel_rank`` (1-based, None when no relevant document was retrieved),
``judged_pos`` (grades > 0, for ``-c``'s ``NumRel``), ``all_negative``
(0/1), ``runid``, then every requested measure.  The accumulator keeps the
rows (its state grows with the number of topics, a few hundred bytes each),
so that merging shards reproduces trec_eval's summation order exactly.
"""

import functools
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from .._contract import Accumulator, ItemRow, finish, register_accumulator
from .._metrics import Input, Metric
from .._parallel import accumulate_items, current_engine
from .._state_schema import Count, Fields, Flag, Integer, Items, Maybe, Number, OneOf, Schema, Text
from ..errors import ScoringError
from ..report import Report
from . import formats
from .trec_eval import (
    INTEGER_KINDS,
    VERSIONS,
    Measure,
    float32,
    judgments,
    parse_measures,
    rank,
    score_topic,
    sequential_sum,
)

__all__ = ["DEFAULT_MEASURES", "IrAccumulator", "MISSING", "score_file", "score_item", "score_topics"]

DEFAULT_MEASURES = ("nDCG@10", "AP", "RR", "R@100", "P@10")
MISSING = ("skip", "zero")
_FIXED = ("qid", "in_run", "NumRet", "NumRel", "NumRelRet", "first_rel_rank", "judged_pos", "all_negative", "runid")


def _dedupe(topic: formats.RunTopic, duplicates: str, path: str) -> formats.RunTopic:
    docnos = topic.docnos
    if len(set(docnos)) == len(docnos):
        return topic
    seen: Dict[bytes, int] = {}
    keep = []
    for i, d in enumerate(docnos):
        if d in seen:
            if duplicates == "first":
                continue
            line: Optional[int] = topic.line or None
            if path and topic.line and not path.endswith((".json", ".jsonl", ".ndjson")):
                line = formats._content_line(path, topic.line, i)
            raise ScoringError(
                f"document {d.decode('utf-8', 'replace')!r} is retrieved twice for topic {topic.qid!r}; "
                "trec_eval refuses this (exit 4); --duplicates first keeps the first",
                path=path or None,
                line=line,
            )
        seen[d] = i
        keep.append(i)
    return topic._replace(docnos=[docnos[i] for i in keep], scores=[topic.scores[i] for i in keep])


def score_item(
    topic: formats.RunTopic,
    grades: Optional[Mapping[bytes, int]],
    *,
    measures: Sequence[str] = DEFAULT_MEASURES,
    relevance_level: int = 1,
    trec_eval: str = "9.0.8",
    duplicates: str = "error",
    path: str = "",
) -> ItemRow:
    """The item row of one run topic against its judgments (``grades``: docno bytes -> grade).

    >>> t = formats.RunTopic("q1", [b"d1", b"d2", b"d3"], [3.0, 2.0, 2.0], 1, "run")
    >>> row = score_item(t, {b"d1": 0, b"d3": 1, b"d9": 2}, measures=["AP", "P@2"])
    >>> row["first_rel_rank"], row["NumRel"], round(row["AP"], 4), row["P@2"]
    (2, 2, 0.25, 0.5)
    """
    parsed = parse_measures(measures)
    return _row(topic, dict(grades or {}), parsed, relevance_level, trec_eval, duplicates, path)


def _row(
    topic: formats.RunTopic,
    grades: Dict[bytes, int],
    measures: Sequence[Measure],
    level: int,
    version: str,
    duplicates: str,
    path: str,
) -> ItemRow:
    topic = _dedupe(topic, duplicates, path)
    scores = float32(topic.scores) if version == "9.0.8" else topic.scores
    order = rank(topic.docnos, scores)
    docnos = topic.docnos
    get = grades.get
    rels = [get(docnos[i], -1) for i in order]
    judged = judgments(grades, level)
    values, counts = score_topic(rels, judged, measures, level)
    return _assemble(topic.qid, 1, counts, judged.num_pos, judged.all_negative, topic.tag, values)


def _assemble(
    qid: str, in_run: int, counts: Dict[str, int], pos: int, neg: bool, tag: str, values: Dict[str, Any]
) -> ItemRow:
    row: ItemRow = {
        "qid": qid,
        "in_run": in_run,
        "NumRet": counts["NumRet"],
        "NumRel": counts["NumRel"],
        "NumRelRet": counts["NumRelRet"],
        "first_rel_rank": counts["first_rel_rank"] or None,
        "judged_pos": pos,
        "all_negative": int(neg),
        "runid": tag,
    }
    for name, value in values.items():
        if name not in row:
            row[name] = value
    return row


def _missing_row(qid: str, tag: str, grades: Dict[bytes, int], measures: Sequence[Measure], level: int) -> ItemRow:
    judged = judgments(grades, level)
    values, counts = score_topic([], judged, measures, level)
    return _assemble(qid, 0, counts, judged.num_pos, judged.all_negative, tag, values)


def _record_row(
    record: Tuple[Any, ...], *, measures: Tuple[Measure, ...], level: int, version: str, dup: str
) -> ItemRow:
    topic, grades, path, qid, tag = record
    if topic is None:  # a qrels topic absent from the run (missing="zero")
        return _missing_row(qid, tag, grades, measures, level)
    return _row(topic, grades, measures, level, version, dup, path)


def _check_options(relevance_level: int, trec_eval: str, missing: str, duplicates: str) -> None:
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, int) or relevance_level < 0:
        raise ScoringError(f"must be an integer >= 0, got {relevance_level!r}", field="--relevance-level")
    if trec_eval not in VERSIONS:
        raise ScoringError(f"must be one of {', '.join(VERSIONS)}, got {trec_eval!r}", field="--trec-eval")
    if missing not in MISSING:
        raise ScoringError(f"must be one of {', '.join(MISSING)}, got {missing!r}", field="--missing")
    if duplicates not in formats.DUPLICATES:
        raise ScoringError(f"must be one of {', '.join(formats.DUPLICATES)}", field="--duplicates")


@register_accumulator
class IrAccumulator(Accumulator):
    """The item rows of the topics, kept in input order; ``finalize`` sorts them by qid and averages.

    Merging concatenates the rows (a topic in two parts is an error: shard a
    run by topic), so any partition gives the same report as one pass.
    """

    FAMILY = "ir"
    COMMAND = "score"
    #: every ranking measure is better higher; the counts describe the topics; first_rel_rank lower.
    METRICS = (
        Metric("num_q", "neither", "count", "topics averaged"),
        *(
            Metric(name, "higher", "mean", f"{meaning} (mean over topics)", per_item=True, lo=0.0, hi=1.0)
            for name, meaning in (
                ("AP", "average precision over all relevant documents"),
                ("AP@{k}", "average precision truncated at rank k, over all relevant documents"),
                ("RR", "reciprocal rank of the first relevant document"),
                ("nDCG", "normalised discounted cumulative gain (linear gain)"),
                ("nDCG@{k}", "nDCG truncated at rank k"),
                ("P@{k}", "precision at rank k"),
                ("R@{k}", "recall at rank k"),
                ("Success@{k}", "1 when a relevant document is in the top k"),
                ("Rprec", "precision at rank R (the number of relevant documents)"),
                ("Bpref", "Buckley and Voorhees' bpref"),
            )
        ),
        Metric("NumRel", "neither", "count", "judged relevant documents of the topic", per_item=True),
        Metric("NumRet", "neither", "count", "documents retrieved for the topic", per_item=True),
        Metric("NumRelRet", "higher", "count", "relevant documents retrieved", per_item=True),
        Metric("first_rel_rank", "lower", "count", "rank of the first relevant document (None: none)", True),
        Metric("in_run", "neither", "count", "1 when the topic is in the run", per_item=True),
        Metric("judged_pos", "neither", "count", "documents with a positive grade", per_item=True),
        Metric("all_negative", "neither", "count", "1 when every judgment is negative", per_item=True),
    )
    INPUTS = (
        Input("--qrels", "judgments (TREC qrels, BEIR TSV, JSON or JSON Lines)", "qid", ()),
        Input("--run", "ranked results (TREC run, JSON or JSON Lines)", "qid", ()),
    )

    STATE_SCHEMA = Schema(
        params=Fields(
            {
                "measures": Items(Text(max_len=100), unique=True),
                "relevance_level": Integer(lo=0),
                "trec_eval": Text(choices=VERSIONS),
                "missing": Text(choices=MISSING),
                "duplicates": Text(choices=formats.DUPLICATES),
                "topics": Flag(),
                "variants": Items(Text(), max_len=0),  # ir has no variants
            }
        ),
        data=Fields(
            {
                "rows": Items(
                    Fields(
                        {
                            "qid": Text(),
                            "in_run": OneOf((0, 1)),
                            "NumRet": Count(),
                            "NumRel": Count(),
                            "NumRelRet": Count(),
                            "first_rel_rank": Maybe(Integer(lo=1)),
                            "judged_pos": Count(),
                            "all_negative": OneOf((0, 1)),
                            "runid": Maybe(Text()),
                        },
                        extra=Number(),
                        extra_keys="params.measures",  # one value per measure
                    )
                )
            }
        ),
    )

    def __init__(
        self,
        *,
        measures: Sequence[str] = DEFAULT_MEASURES,
        relevance_level: int = 1,
        trec_eval: str = "9.0.8",
        missing: str = "skip",
        duplicates: str = "error",
        topics: bool = False,
        variants: Sequence[str] = (),
    ) -> None:
        from . import check_variants

        _check_options(relevance_level, trec_eval, missing, duplicates)
        parsed = parse_measures(measures)
        super().__init__(
            measures=[m.name for m in parsed],
            relevance_level=relevance_level,
            trec_eval=trec_eval,
            missing=missing,
            duplicates=duplicates,
            topics=bool(topics),
            variants=list(check_variants(variants)),
        )
        self.measures = parsed
        self.rows: List[ItemRow] = []

    @classmethod
    def metric_names(cls, *, measures: Sequence[str] = DEFAULT_MEASURES, **options: Any) -> List[str]:
        """The gateable names: ``num_q`` and the requested measures (means; counts summed)."""
        return ["num_q"] + [m.name for m in parse_measures(measures)]

    def add(self, item: ItemRow) -> None:
        self.rows.append(item)

    def _data(self) -> Dict[str, Any]:
        return {"rows": list(self.rows)}

    def _load(self, data: Mapping[str, Any]) -> None:
        rows = data["rows"]
        if not isinstance(rows, list) or not all(isinstance(r, dict) and "qid" in r for r in rows):
            raise ValueError("rows must be item rows")
        self.rows = list(rows)

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, IrAccumulator)
        twice = {r["qid"] for r in self.rows}.intersection(r["qid"] for r in other.rows)
        if twice:
            raise ScoringError(f"topic {min(twice)!r} is in two partial states: shard the run by topic, not by line")
        self.rows.extend(other.rows)

    def finalize(self) -> Report:
        from . import FAMILY, signature

        rows = sorted(self.rows, key=lambda r: r["qid"])  # stable: resampled rows may repeat a topic
        if not rows:
            raise ScoringError("no topic is both in the run and in the qrels (trec_eval exits 7 here)")
        n = len(rows)
        zero = self.params["missing"] == "zero"
        means: Dict[str, Any] = {}
        for m in self.measures:
            if m.kind in INTEGER_KINDS:
                field = "judged_pos" if zero and m.kind == "NumRel" else m.kind
                means[m.name] = sum(int(r[field]) for r in rows)
            else:
                name = m.name  # a property: read once, not once per row
                means[name] = sequential_sum([r[name] for r in rows]) / n
        runid = next((r["runid"] for r in reversed(self.rows) if r.get("runid")), "")
        result: Dict[str, Any] = {"runid": runid, "num_q": n, "measures": means}
        if self.params["topics"]:
            result["topics"] = [{"qid": r["qid"], "in_run": r["in_run"], **_values(r, self.measures)} for r in rows]
        return Report(
            family=FAMILY,
            signature=signature(variants=self.params["variants"], params=_sig_params(self.params)),
            result=result,
            metrics={"num_q": n, **means},
            diagnostics=_diagnostics(rows, zero) + self.notes(),
        )


def _values(row: ItemRow, measures: Sequence[Measure]) -> Dict[str, Any]:
    return {m.name: row[m.name] for m in measures}


def _sig_params(params: Mapping[str, Any]) -> List[Tuple[str, object]]:
    return [
        ("trec_eval", params["trec_eval"]),
        ("missing", params["missing"]),
        ("relevance_level", params["relevance_level"]),
        ("duplicates", params["duplicates"]),
        ("list_scores", "n-rank"),
        ("measures", ",".join(params["measures"])),
    ]


def _first_ten(qids: Sequence[Any]) -> str:
    """The first ten topic ids of a diagnostic, and ``...`` when there are more.

    >>> _first_ten(["q1", "q2"]), _first_ten([str(i) for i in range(12)])[-7:]
    ("'q1', 'q2'", "'9' ...")
    """
    return ", ".join(map(repr, qids[:10])) + (" ..." if len(qids) > 10 else "")


def _diagnostics(rows: Sequence[ItemRow], zero: bool) -> List[str]:
    out = []
    negative = [r["qid"] for r in rows if r["all_negative"]]
    if negative:
        shown = _first_ten(negative)
        out.append(
            f"{len(negative)} topic(s) have only negative (unjudged) grades and score 0 on every measure "
            f"(trec_eval exits 4 there, pytrec_eval may crash): {shown}"
        )
    if zero:
        absent = [r["qid"] for r in rows if not r["in_run"]]
        if absent:
            shown = _first_ten(absent)
            out.append(f"{len(absent)} qrels topic(s) are not in the run and score 0 (--missing zero): {shown}")
    return out


def score_topics(
    acc: IrAccumulator,
    topics: Iterable[formats.RunTopic],
    qrels: formats.Qrels,
    *,
    path: str = "",
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> IrAccumulator:
    """Score run topics against ``qrels`` into ``acc`` (through the current engine)."""
    p = acc.params
    fn = functools.partial(
        _record_row, measures=acc.measures, level=p["relevance_level"], version=p["trec_eval"], dup=p["duplicates"]
    )
    seen: Dict[str, str] = {}
    unjudged: List[str] = []

    def records() -> Iterator[Tuple[Any, ...]]:
        for topic in topics:
            seen[topic.qid] = topic.tag
            grades = qrels.get(topic.qid)
            if grades is None:
                unjudged.append(topic.qid)
                continue
            yield (topic, grades, path, topic.qid, topic.tag)

    if current_engine().name == "serial":  # one topic in memory at a time (the engines batch 256 records)
        for record in records():
            _add(acc, fn(record), on_item)
    else:
        accumulate_items(acc, fn, records(), on_item=on_item)
    absent = [q for q in qrels if q not in seen]
    if p["missing"] == "zero" and absent:
        tag = next(reversed(seen.values()), "")  # trec_eval -c gives them the run's tag
        accumulate_items(acc, fn, ((None, qrels[q], path, q, tag) for q in absent), on_item=on_item)
    elif absent:
        shown = _first_ten(absent)
        acc.note(
            f"{len(absent)} qrels topic(s) are not in the run and are left out of the mean "
            f"(--missing skip, as pytrec_eval; --missing zero counts them as 0): {shown}"
        )
    if unjudged:
        shown = _first_ten(unjudged)
        acc.note(f"{len(unjudged)} run topic(s) have no judgments and are ignored: {shown}")
    return acc


def _add(acc: IrAccumulator, row: ItemRow, on_item: Optional[Callable[[ItemRow], None]]) -> None:
    if on_item is not None:
        on_item(row)
    acc.add(row)


def score_file(
    run: str,
    qrels: Optional[str] = None,
    *,
    measures: Sequence[str] = DEFAULT_MEASURES,
    relevance_level: int = 1,
    trec_eval: str = "9.0.8",
    missing: str = "skip",
    duplicates: str = "error",
    run_format: str = "auto",
    qrels_format: str = "auto",
    topics: bool = False,
    variants: Sequence[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """The ``ir`` command: score a run file against a qrels file into a Report.

    ``qrels`` may be omitted when the run is JSON Lines whose records carry
    ``reference_context_ids`` (RAGAS).  ``topics=True`` adds the per-topic
    values to ``result`` (what ``--format trec_eval`` prints).  Item rows go
    to ``on_item`` once the run has been read (so that an ungrouped run,
    read a second time as a whole, gives each topic once).
    """
    acc = IrAccumulator(
        measures=measures,
        relevance_level=relevance_level,
        trec_eval=trec_eval,
        missing=missing,
        duplicates=duplicates,
        topics=topics,
        variants=variants,
    )
    judged = _load_qrels(run, qrels, run_format, qrels_format, duplicates)
    stream, reader = formats.open_run(run, run_format)
    try:
        score_topics(acc, stream, judged, path=run)
    except formats.RunNotGrouped:
        assert reader is not None
        acc = IrAccumulator(**acc.params)
        score_topics(acc, reader.whole(), judged, path=run)
        acc.note("the run is not grouped by topic: it was read whole into memory (sort it by topic to stream it)")
    if on_item is not None:
        for row in acc.rows:
            on_item(row)
    return finish(acc)


def _load_qrels(run: str, qrels: Optional[str], run_format: str, qrels_format: str, duplicates: str) -> formats.Qrels:
    if qrels is not None:
        return formats.read_qrels(qrels, qrels_format, duplicates=duplicates)
    fmt = formats.detect_format(run, "run") if run_format == "auto" else run_format
    if fmt != "jsonl":
        raise ScoringError("--qrels is required unless the run is JSON Lines with reference_context_ids", path=run)
    return formats.read_qrels(run, "jsonl", duplicates=duplicates)
