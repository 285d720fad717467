"""Mirrors MT-RAG's retrieval scorer, ``IBM/mt-rag-benchmark@cc5b1d4:scripts/evaluation/run_retrieval_eval.py``.

What the reference does, step by step, and how it is reproduced:

1. Predictions: one JSON object a line; ``task_id`` names the task,
   ``Collection`` its collection, ``contexts[]`` its ranked documents with
   ``document_id`` and ``score`` (a document repeated in one task keeps its
   last score; a task repeated keeps its last line, at its first line's
   position -- Python dict semantics).
2. Per collection, its qrels: a BEIR TSV (``query-id corpus-id score``), the
   first line skipped as a header, grades ``int()``; a judgment repeated keeps
   the last grade.  The reference hard-codes four paths that are not in the
   repository; here ``--qrels COLLECTION=PATH`` or ``--qrels-dir DIR``
   (``DIR/<clapnq|govt|fiqa|cloud>/qrels/dev.tsv``, the benchmark's layout).
3. BEIR's ``ignore_identical_ids``: a document whose id equals the task id is
   dropped.
4. pytrec_eval (trec_eval 9.0.8: scores in single precision, ties by docno
   descending) with ``ndcg_cut.1,3,5`` and ``recall.1,3,5`` over the tasks of
   the collection that have judgments (a task with no contexts scores 0); the
   per-collection value is ``round(sum / n, 5)``, the sum taken in task order.
   No task with judgments in a collection: the reference divides by zero; here
   an input error.
5. ``count`` is the number of predictions of the collection (judged or not);
   the weighted average over collections is
   ``sum(value * count) / sum(count)`` with Python's ``sum``, unrounded.

One difference, documented: the reference walks the collections in ``set``
order, which changes with ``PYTHONHASHSEED``, so the last bits of its weighted
average vary between its own runs; here the collections are taken in sorted
order (the per-collection numbers do not depend on it).  A topic whose
judgments are all negative crashes pytrec_eval; here it scores 0 with a
diagnostic.
"""

import argparse
import csv
import functools
import json
import os
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from .._contract import Accumulator, ItemRow, finish, register_accumulator
from .._metrics import Metric
from .._numbers import as_float, int_text
from .._parallel import accumulate_items
from .._signature import make_signature
from .._state_schema import Either, Fields, Items, Number, OneOf, Schema, Text
from ..errors import ScoringError
from ..ir.formats import RunTopic
from ..ir.trec_eval import float32, judgments, parse_measures, rank, score_topic, sequential_sum
from ..report import Report

__all__ = [
    "COLLECTION_DIRS",
    "K_VALUES",
    "MtragRetrievalAccumulator",
    "REFERENCE",
    "load_qrels",
    "read_predictions",
    "register_retrieval",
    "retrieval_file",
    "run_retrieval",
    "signature",
]

REFERENCE = "IBM/mt-rag-benchmark@cc5b1d4"
K_VALUES = (1, 3, 5)
#: The reference's collection names -> the benchmark's qrels folders.
COLLECTION_DIRS = {
    "mt-rag-clapnq-elser-512-100-20240503": "clapnq",
    "mt-rag-govt-elser-512-100-20240611": "govt",
    "mt-rag-fiqa-beir-elser-512-100-20240501": "fiqa",
    "mt-rag-ibmcloud-elser-512-100-20240502": "cloud",
}
_MEASURES = parse_measures([f"ndcg_cut.{k}" for k in K_VALUES] + [f"recall.{k}" for k in K_VALUES])
_NAMES = tuple((m.name, m.trec_name) for m in _MEASURES)  # nDCG@1 -> ndcg_cut_1, R@1 -> recall_1


def signature(*, variants: Sequence[str] = (), params: Sequence[Tuple[str, object]] = ()) -> str:
    """The signature of an MT-RAG retrieval result (the reference is the MT-RAG script).

    >>> signature()
    'rageval_min:0.1.0|family=mtrag|ref=IBM/mt-rag-benchmark@cc5b1d4|variants=none|trec_eval=9.0.8|k=1,3,5'
    """
    if variants:
        raise ScoringError("mtrag retrieval has no variants")
    return make_signature("mtrag", REFERENCE, (), [("trec_eval", "9.0.8"), ("k", "1,3,5"), *params])


def read_predictions(path: str) -> Dict[str, Tuple[str, Dict[str, Any], int]]:
    """``task_id -> (collection, {document_id: score}, line)`` as the reference builds its two dicts."""
    from .._io import iter_jsonl

    out: Dict[str, Tuple[str, Dict[str, Any], int]] = {}
    for line, item in iter_jsonl(path):
        if not isinstance(item, dict):
            raise ScoringError("each line must be a JSON object", path=path, line=line)
        for key in ("task_id", "Collection"):
            if key not in item:
                raise ScoringError("missing (the reference raises KeyError)", path=path, line=line, field=key)
        ctxs = item.get("contexts", [])
        if not isinstance(ctxs, list):
            raise ScoringError("must be a list", path=path, line=line, field="contexts")
        docs: Dict[str, Any] = {}
        for ctx in ctxs:
            if not isinstance(ctx, dict) or "document_id" not in ctx or "score" not in ctx:
                raise ScoringError("needs document_id and score", path=path, line=line, field="contexts[]")
            score = ctx["score"]
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                raise ScoringError(f"must be a number, got {json.dumps(score)}", path=path, line=line, field="score")
            as_float(score, path=path, line=line, field="score")  # 401 digits: an input error (NaN passes, as upstream)
            docs[str(ctx["document_id"])] = score
        out[str(item["task_id"])] = (str(item["Collection"]), docs, line)
    if not out:
        raise ScoringError("holds no predictions", path=path)
    return out


def load_qrels(path: str) -> Dict[str, Dict[str, int]]:
    """A BEIR qrels TSV as the reference reads it: header skipped, ``int()`` grades, the last judgment wins."""
    qrels: Dict[str, Dict[str, int]] = {}
    try:
        fh = open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise ScoringError(f"cannot read: {exc.strerror}", path=path) from None
    lineno = 1
    with fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_MINIMAL)
        try:
            next(reader, None)
            for lineno, row in enumerate(reader, 2):
                try:
                    grade = int_text(row[2])
                    if grade is None:
                        raise ValueError(row[2])
                    qrels.setdefault(row[0], {})[row[1]] = grade
                except (IndexError, ValueError):
                    raise ScoringError(
                        "expected query-id<TAB>corpus-id<TAB>integer score", path=path, line=lineno
                    ) from None
        except UnicodeDecodeError:
            raise ScoringError("not UTF-8 text", path=path, line=lineno + 1) from None
        except csv.Error as exc:
            raise ScoringError(f"not a TSV file: {exc}", path=path, line=lineno + 1) from None
    return qrels


def retrieval_item(record: Tuple[str, str, Dict[str, Any], Optional[Dict[str, int]]]) -> ItemRow:
    """The item row of one task: its collection and, when it has judgments, the six values at full precision."""
    task_id, collection, docs, grades = record
    row: ItemRow = {"task_id": task_id, "collection": collection, "judged": int(grades is not None)}
    if grades is None:
        row.update({name: None for name, _ in _NAMES})
        row["all_negative"] = 0
        return row
    kept = [(d, float(s)) for d, s in docs.items() if d != task_id]  # BEIR ignore_identical_ids
    topic = RunTopic(task_id, [d.encode("utf-8") for d, _ in kept], [s for _, s in kept], 0)
    scores = float32(topic.scores)
    encoded = {d.encode("utf-8"): g for d, g in grades.items()}
    rels = [encoded.get(topic.docnos[i], -1) for i in rank(topic.docnos, scores)]
    judged = judgments(encoded, 1)
    values, _ = score_topic(rels, judged, _MEASURES, 1)
    row.update({name: values[name] for name, _ in _NAMES})
    row["all_negative"] = int(judged.all_negative)
    return row


def _judged_row(judged: bool) -> Fields:
    """The state of one task row: with judgments, its six values; without, none (see :func:`retrieval_item`)."""
    value = Number(lo=0, hi=1) if judged else OneOf((None,))
    return Fields(
        {
            "task_id": Text(),
            "collection": Text(max_len=1000),
            "judged": OneOf((int(judged),)),
            "all_negative": OneOf((0, 1)) if judged else OneOf((0,)),
            **{name: value for name, _ in _NAMES},
        }
    )


@register_accumulator
class MtragRetrievalAccumulator(Accumulator):
    """Task rows in input order; ``finalize`` forms the per-collection means and the weighted average."""

    FAMILY = "mtrag"
    COMMAND = "retrieval"
    METRICS = (
        Metric("count", "neither", "count", "tasks scored"),
        *(Metric(name, "higher", "mean", f"{trec}: mean over tasks", True, lo=0.0, hi=1.0) for name, trec in _NAMES),
    )

    STATE_SCHEMA = Schema(
        params=Fields({"variants": Items(Text(), max_len=0)}),
        data=Fields({"rows": Items(Either((_judged_row(True), _judged_row(False))))}),
    )

    def __init__(self, *, variants: Sequence[str] = ()) -> None:
        if variants:
            raise ScoringError("mtrag retrieval has no variants")
        super().__init__(variants=[])
        self.rows: List[ItemRow] = []

    @classmethod
    def metric_names(cls, **options: Any) -> List[str]:
        return ["count"] + [name for name, _ in _NAMES]

    def add(self, item: ItemRow) -> None:
        self.rows.append(item)

    def _data(self) -> Dict[str, Any]:
        return {"rows": list(self.rows)}

    def _load(self, data: Mapping[str, Any]) -> None:
        self.rows = [dict(r) for r in data["rows"]]

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, MtragRetrievalAccumulator)
        self.rows.extend(other.rows)

    def finalize(self) -> Report:
        if not self.rows:  # (merged empty shards) the reference divides by zero
            raise ScoringError("no task to score")
        groups: Dict[str, List[ItemRow]] = {}
        for row in self.rows:
            groups.setdefault(row["collection"], []).append(row)
        table = [_collection_entry(name, groups[name]) for name in sorted(groups)]
        total = sum(e["count"] for e in table)
        weighted = {
            key: [sum(e[key][i] * e["count"] for e in table) / total for i in range(len(K_VALUES))]
            for key in ("nDCG", "Recall")
        }
        result = {"collections": table, "all": {**weighted, "collection": "all", "count": total}}
        metrics: Dict[str, Any] = {"count": total}
        for i, k in enumerate(K_VALUES):
            metrics[f"nDCG@{k}"] = weighted["nDCG"][i]
            metrics[f"R@{k}"] = weighted["Recall"][i]
        negative = [r["task_id"] for r in self.rows if r.get("all_negative")]
        notes = (
            [f"{len(negative)} task(s) have only negative grades; scored 0 (pytrec_eval crashes)"] if negative else []
        )
        return Report("mtrag", signature(), result, metrics, notes + self.notes())


def _collection_entry(name: str, rows: List[ItemRow]) -> Dict[str, Any]:
    judged = [r for r in rows if r["judged"]]
    if not judged:
        raise ScoringError(f"collection {name!r}: no task has judgments (the reference divides by zero)")
    n = len(judged)
    entry: Dict[str, Any] = {"nDCG": [], "Recall": []}
    for name_, _ in _NAMES:
        mean = round(sequential_sum([r[name_] for r in judged]) / n, 5)
        entry["nDCG" if name_.startswith("nDCG") else "Recall"].append(mean)
    entry.update(collection=name, count=len(rows))
    return entry


def _qrels_paths(qrels: Sequence[str], qrels_dir: Optional[str]) -> Dict[str, str]:
    paths = {}
    if qrels_dir:
        paths = {c: os.path.join(qrels_dir, d, "qrels", "dev.tsv") for c, d in COLLECTION_DIRS.items()}
    for item in qrels:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ScoringError(f"must be COLLECTION=PATH, got {item!r}", field="--qrels")
        paths[name] = path
    return paths


def retrieval_file(
    path: str,
    *,
    qrels: Sequence[str] = (),
    qrels_dir: Optional[str] = None,
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """``mtrag retrieval``: score a predictions file per collection (``qrels``: ``COLLECTION=PATH`` items)."""
    preds = read_predictions(path)
    paths = _qrels_paths(qrels, qrels_dir)
    tables: Dict[str, Dict[str, Dict[str, int]]] = {}
    for collection in sorted({c for c, _, _ in preds.values()}):
        if collection not in paths:
            raise ScoringError(f"collection {collection!r} has no qrels: give --qrels {collection}=PATH", path=path)
        tables[collection] = {q: g for q, g in load_qrels(paths[collection]).items() if g}
        if not any(c == collection and task_id in tables[c] for task_id, (c, _, _) in preds.items()):
            raise ScoringError(
                f"collection {collection!r}: no task of {path} has judgments (the reference divides by zero)",
                path=paths[collection],
            )

    def records() -> Iterator[Tuple[str, str, Dict[str, Any], Optional[Dict[str, int]]]]:
        for task_id, (collection, docs, _) in preds.items():
            yield (task_id, collection, docs, tables[collection].get(task_id))

    acc = MtragRetrievalAccumulator()
    accumulate_items(acc, functools.partial(retrieval_item), records(), on_item=on_item)
    return finish(acc)


def register_retrieval(mtrag_subparsers: Any) -> None:
    """Add ``retrieval`` to the ``mtrag`` command's subparsers (the integrator hooks it there)."""
    from .._cli_common import add_report_options

    p = mtrag_subparsers.add_parser(
        "retrieval",
        help="MT-RAG's retrieval scores: nDCG@1,3,5 and Recall@1,3,5 per collection, weighted average",
        description="Reproduces IBM mt-rag-benchmark's scripts/evaluation/run_retrieval_eval.py.",
    )
    p.add_argument("--input", required=True, metavar="PREDICTIONS.jsonl", help="task_id, Collection, contexts[]")
    p.add_argument("--qrels", action="append", default=[], metavar="COLLECTION=PATH", help="a collection's qrels TSV")
    p.add_argument(
        "--qrels-dir", metavar="DIR", help="the benchmark's retrieval_tasks folder (DIR/<name>/qrels/dev.tsv)"
    )
    add_report_options(p, per_item=True)
    p.set_defaults(func=run_retrieval)


def run_retrieval(args: argparse.Namespace, io: Any) -> int:
    """The ``mtrag retrieval`` handler: parse, score, emit."""
    from .._cli_common import emit_report, item_sink, prepare

    prepare(args, inputs=[args.input], metric_names=MtragRetrievalAccumulator.metric_names())
    with item_sink(args.per_item) as on_item:
        report = retrieval_file(args.input, qrels=args.qrels, qrels_dir=args.qrels_dir, on_item=on_item)
    return emit_report(report, args, io)
