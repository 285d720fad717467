"""Mirrors what ``trec_eval -q`` prints (``usnistgov/trec_eval@d95ca64:meas_print_single.c``,
``meas_print_final.c``, ``m_runid.c``, ``m_num_q.c``; unchanged in 10.0).

One line per (measure, topic), topics in qid byte order, measures in
trec_eval's table order, then the ``all`` block: ``runid`` (the tag of the run's
last line), ``num_q``, then every measure.  Each line is
``%-22s\\t%s\\t%6.4f`` (counts ``%ld``; ``runid`` ``%s``), names as trec_eval
spells them (``P_10``, ``ndcg_cut_10``, ``map``).  Under ``--missing zero``,
10.0 prints the qrels topics absent from the run (``-c``) and 9.0.8 does not,
though both count them in ``all``.

The output equals ``trec_eval -q -m runid -m num_q -m <measures> QRELS RUN``
(``-c`` with ``--missing zero``) byte for byte.
"""

from typing import Any, Dict, List, Mapping, Sequence

from ..errors import ScoringError
from ..report import Report
from .trec_eval import Measure, parse_measures

__all__ = ["format_trec_eval", "line"]


def line(name: str, qid: str, value: Any, *, count: bool = False) -> str:
    """One trec_eval output line.

    >>> line("map", "q1", 0.44166666666666665)
    'map                   \\tq1\\t0.4417\\n'
    >>> line("num_ret", "all", 10, count=True)
    'num_ret               \\tall\\t10\\n'
    """
    if count:
        return f"{name:<22}\t{qid}\t{int(value)}\n"
    return f"{name:<22}\t{qid}\t{value:6.4f}\n"


def _topic_lines(topic: Mapping[str, Any], measures: Sequence[Measure]) -> List[str]:
    return [line(m.trec_name, topic["qid"], topic[m.name], count=m.is_count) for m in measures]


def format_trec_eval(report: Report, outcomes: Sequence[Any] = ()) -> str:
    """The ``trec_eval -q`` text of a report made with ``topics=True`` (``--format trec_eval``)."""
    result: Dict[str, Any] = report.result
    if "topics" not in result:
        raise ScoringError(
            "this report holds no per-topic values: score (or make the partial states) with --format trec_eval"
        )
    measures = parse_measures(list(result["measures"]))
    show_absent = "|trec_eval=10.0|" in report.signature
    out: List[str] = []
    for topic in result["topics"]:
        if topic["in_run"] or show_absent:
            out.extend(_topic_lines(topic, measures))
    out.append(f"{'runid':<22}\tall\t{result['runid']}\n")
    out.append(line("num_q", "all", result["num_q"], count=True))
    out.extend(_topic_lines({"qid": "all", **result["measures"]}, measures))
    return "".join(out)
