"""Mirrors NIST trec_eval's per-topic measures (``usnistgov/trec_eval@d95ca64`` = v9.0.8, and
``usnistgov/trec_eval@f425365`` = 10.0: ``form_res_rels.c``, ``m_*.c``, ``meas_avg.c``).

A topic's retrieved documents are ranked by score descending, ties broken by
docno *descending* in byte order (``strcmp(p2->docno, p1->docno)``); the rank
column and the file order play no part.  trec_eval 9.0.8 (and pytrec_eval,
which embeds it) keeps scores as C ``float``, so scores that differ only beyond
single precision tie; 10.0 keeps ``double``.

Each retrieved document gets its qrels grade, or ``-1`` when it is not in the
qrels ("not in the pool"); a negative qrels grade ("in the pool, unjudged")
also becomes ``-1``: the two are told apart by no measure computed here.  With
``L`` the relevance level (``-l``, default 1), ``R`` the judged-relevant
documents of the topic (grade >= L, retrieved or not) and ``N`` the judged
non-relevant ones (0 <= grade < L), the measures, as trec_eval computes them
(``r_i`` the 0-based ranks of the relevant retrieved documents, in order)::

    P@k        = |{r_i < k}| / k
    R@k        = |{r_i < k}| / R                  (0 when R == 0)
    AP         = (sum_i (i+1) / (r_i+1)) / R       (summed in rank order; 0 when none retrieved)
    AP@k       = the same sum over r_i < k, / R   (0 when R == 0)
    RR         = 1 / (r_0 + 1)                     (0 when none retrieved)
    Success@k  = 1 if r_0 < k else 0
    Rprec      = |{r_i < R}| / R                   (0 when R == 0 or nothing retrieved)
    nDCG       = DCG / IDCG, DCG = sum over ranks j (in order) of g_j / log2(j + 2) for grades g_j > 0,
                 IDCG the same over every positive grade of the qrels sorted descending (0 when IDCG == 0);
                 gains are the grades themselves, not thresholded by L
    nDCG@k     = DCG and IDCG over the first k positions only
    Bpref      = (sum over judged relevant retrieved d of 1 - min(n_d, R) / min(N, R)) / R,
                 n_d the judged non-relevant retrieved above d (1 when n_d == 0); documents outside
                 the pool and negative grades are skipped (Buckley and Voorhees, SIGIR 2004)
    NumRet, NumRel, NumRelRet  the counts

A topic whose judgments are all negative makes trec_eval exit 4 ("Can't
calculate measure": it cannot size its grade table) and can crash
pytrec_eval; here it is defined as 0 on every measure (``NumRel`` 0) and
flagged, which is also what trec_eval 10.0 prints when an earlier topic
happened to size that table.
"""

import math
from array import array
from bisect import bisect_left
from operator import gt
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from .._numbers import int_text
from ..errors import ScoringError

__all__ = [
    "ALIASES",
    "Measure",
    "TopicJudgments",
    "VERSIONS",
    "float32",
    "judgments",
    "parse_measures",
    "rank",
    "score_topic",
    "sequential_sum",
]

#: The trec_eval builds whose semantics can be chosen (``--trec-eval``).
VERSIONS = ("9.0.8", "10.0")

#: Kinds in the order trec_eval prints them (its measure table), with their trec_eval names.
_KINDS: Tuple[Tuple[str, str], ...] = (
    ("NumRet", "num_ret"),
    ("NumRel", "num_rel"),
    ("NumRelRet", "num_rel_ret"),
    ("AP", "map"),
    ("Rprec", "Rprec"),
    ("Bpref", "bpref"),
    ("RR", "recip_rank"),
    ("P@", "P"),
    ("R@", "recall"),
    ("nDCG", "ndcg"),
    ("nDCG@", "ndcg_cut"),
    ("AP@", "map_cut"),
    ("Success@", "success"),
)
_ORDER = {kind: i for i, (kind, _) in enumerate(_KINDS)}
_TREC = dict(_KINDS)

#: trec_eval names (with ``.k`` or ``_k`` for cut-off measures) -> ir_measures kinds.
ALIASES = {
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    "map": "AP",
    "rprec": "Rprec",
    "bpref": "Bpref",
    "recip_rank": "RR",
    "p": "P@",
    "recall": "R@",
    "ndcg": "nDCG",
    "ndcg_cut": "nDCG@",
    "map_cut": "AP@",
    "success": "Success@",
}
_PLAIN = {"NumRet", "NumRel", "NumRelRet", "AP", "Rprec", "Bpref", "RR", "nDCG"}
_CUT = {"P@", "R@", "nDCG@", "AP@", "Success@"}
#: Counts: printed with ``%d`` and summed (not averaged) in the ``all`` rows.
INTEGER_KINDS = ("NumRet", "NumRel", "NumRelRet")


class Measure(NamedTuple):
    """One measure: its ir_measures ``kind`` (``"P@"``, ``"AP"``...) and cut-off ``k`` (0: none)."""

    kind: str
    k: int

    @property
    def name(self) -> str:
        """The ir_measures name (``P@10``, ``nDCG``)."""
        return f"{self.kind}{self.k}" if self.kind in _CUT else self.kind

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints (``P_10``, ``ndcg``)."""
        base = _TREC[self.kind]
        return f"{base}_{self.k}" if self.kind in _CUT else base

    @property
    def is_count(self) -> bool:
        return self.kind in INTEGER_KINDS


def _unknown(text: str) -> ScoringError:
    return ScoringError(
        f"unknown measure {text!r}; known: P@k R@k AP AP@k nDCG nDCG@k RR Success@k Rprec Bpref "
        "NumRel NumRet NumRelRet (or trec_eval names: P.k recall.k map map_cut.k ndcg ndcg_cut.k recip_rank "
        "success.k Rprec bpref num_rel num_ret num_rel_ret)",
        field="--measure",
    )


def _parse_one(text: str) -> List[Measure]:
    word = text.strip()
    if word in _PLAIN:
        return [Measure(word, 0)]
    head, at, tail = word.partition("@")
    if at:
        if head + "@" in _CUT:
            return [Measure(head + "@", _cutoff(tail, text))]
        raise _unknown(text)
    low = word.lower()
    if ALIASES.get(low) in _PLAIN:
        return [Measure(ALIASES[low], 0)]
    for head, sep, tail in (word.partition("."), word.rpartition("_")):
        kind = ALIASES.get(head.lower(), "")
        if sep and kind in _CUT:
            return [Measure(kind, _cutoff(k, text)) for k in tail.split(",")]
    raise _unknown(text)


def _cutoff(text: str, whole: str) -> int:
    k = int_text(text)
    if k is None or k <= 0:
        raise ScoringError(f"measure {whole!r}: the cut-off must be a positive integer", field="--measure")
    return k


def parse_measures(names: Sequence[str]) -> Tuple[Measure, ...]:
    """Measures from ir_measures or trec_eval names, de-duplicated, in trec_eval's print order.

    >>> [m.name for m in parse_measures(["nDCG@10", "map", "P.5,10", "recip_rank", "R@100"])]
    ['AP', 'RR', 'P@5', 'P@10', 'R@100', 'nDCG@10']
    >>> [m.trec_name for m in parse_measures(["ndcg_cut_10", "AP@5", "Success@1", "num_rel"])]
    ['num_rel', 'ndcg_cut_10', 'map_cut_5', 'success_1']
    """
    found = set()
    for name in names:
        found.update(_parse_one(name))
    if not found:
        raise ScoringError("no measure given", field="--measure")
    return tuple(sorted(found, key=lambda m: (_ORDER[m.kind], m.k)))


def float32(scores: List[float]) -> List[float]:
    """Scores rounded to C ``float`` as trec_eval 9.0.8 stores them (overflow gives an infinity).

    >>> float32([0.80000001, 0.8]) == [0.800000011920929, 0.800000011920929]
    True
    """
    return array("f", scores).tolist()


def rank(docnos: Sequence[bytes], scores: Sequence[float]) -> List[int]:
    """Indices of the documents in trec_eval's order: score descending, then docno descending (bytes).

    >>> rank([b"a", b"c", b"b"], [1.0, 1.0, 2.0])
    [2, 1, 0]
    """
    n = len(scores)
    if all(map(gt, scores, scores[1:])):
        return list(range(n))  # strictly descending already: no tie to break
    order = sorted(range(n), key=docnos.__getitem__, reverse=True)
    order.sort(key=scores.__getitem__, reverse=True)  # stable: ties keep docno-descending order
    return order


class TopicJudgments(NamedTuple):
    """What the measures need from one topic's qrels (see :func:`judgments`)."""

    grades: Dict[bytes, int]
    num_rel: int
    num_nonrel: int
    ideal: Tuple[int, ...]
    num_pos: int
    all_negative: bool


def judgments(grades: Dict[bytes, int], level: int) -> TopicJudgments:
    """Summarise one topic's qrels: R, N, the ideal gains, and whether every grade is negative.

    ``num_pos`` counts grades > 0 (what trec_eval's ``-c`` prints as ``num_rel`` of ``all``).

    >>> j = judgments({b"a": 2, b"b": 0, b"c": 1, b"d": -1}, 1)
    >>> j.num_rel, j.num_nonrel, j.ideal, j.num_pos, j.all_negative
    (2, 1, (2, 1), 2, False)
    """
    values = grades.values()
    return TopicJudgments(
        grades=grades,
        num_rel=sum(1 for g in values if g >= level),
        num_nonrel=sum(1 for g in values if 0 <= g < level),
        ideal=tuple(sorted((g for g in values if g > 0), reverse=True)),
        num_pos=sum(1 for g in values if g > 0),
        all_negative=bool(grades) and all(g < 0 for g in values),
    )


_LOG2: List[float] = []


def _discounts(n: int) -> List[float]:
    """``log2(i + 2)`` for i < n (cached), the discount of the document at 0-based rank i."""
    if len(_LOG2) < n:
        _LOG2.extend(math.log2(i + 2) for i in range(len(_LOG2), n))
    return _LOG2


def sequential_sum(values: Sequence[float]) -> float:
    """Left-to-right double sum, as C's ``sum += x`` (Python's ``sum`` compensates on 3.12+).

    >>> sequential_sum([0.1, 0.2, 0.3]) == (0.1 + 0.2) + 0.3
    True
    """
    total = 0.0
    for v in values:
        total += v
    return total


def _dcg(gains: Sequence[Tuple[int, int]], k: int) -> float:
    disc = _discounts(gains[-1][0] + 1 if gains else 0)
    total = 0.0
    for j, g in gains:
        if j >= k:
            break
        total += g / disc[j]
    return total


def _idcg(ideal: Sequence[int], k: int) -> float:
    disc = _discounts(len(ideal))
    total = 0.0
    for j, g in enumerate(ideal[:k]):
        total += g / disc[j]
    return total


def score_topic(
    rels: Sequence[int], judged: TopicJudgments, measures: Sequence[Measure], level: int
) -> Tuple[Dict[str, float], Dict[str, int]]:
    """The measures of one topic from its ranked grades (``-1``: not in the pool or unjudged).

    Returns ``(values, counts)``: ``values`` maps each measure name to its
    value (counts as ``int``); ``counts`` holds ``NumRet``, ``NumRel``,
    ``NumRelRet`` and ``first_rel_rank`` (1-based; 0 when none).

    >>> j = judgments({b"d1": 2, b"d2": 0, b"d3": 1}, 1)
    >>> v, c = score_topic([0, 2, 1], j, parse_measures(["AP", "RR", "P@2", "nDCG@2", "Bpref"]), 1)
    >>> round(v["AP"], 4), v["RR"], v["P@2"], c["first_rel_rank"]
    (0.5833, 0.5, 0.5, 2)
    """
    num_rel = judged.num_rel
    num_ret = len(rels)
    hits = [i for i, g in enumerate(rels) if g >= level]
    counts = {
        "NumRet": num_ret,
        "NumRel": num_rel,
        "NumRelRet": len(hits),
        "first_rel_rank": hits[0] + 1 if hits else 0,
    }
    values: Dict[str, float] = {}
    ap_terms: Optional[List[float]] = None
    gains: Optional[List[Tuple[int, int]]] = None
    for m in measures:
        kind, k = m.kind, m.k
        if kind in INTEGER_KINDS:
            values[m.name] = counts[kind]
            continue
        if judged.all_negative:
            values[m.name] = 0.0
        elif kind == "P@":
            values[m.name] = bisect_left(hits, k) / k
        elif kind == "R@":
            values[m.name] = bisect_left(hits, k) / num_rel if num_rel else 0.0
        elif kind in ("AP", "AP@"):
            if ap_terms is None:
                ap_terms = [(i + 1) / (r + 1) for i, r in enumerate(hits)]
            upto = len(ap_terms) if kind == "AP" else bisect_left(hits, k)
            values[m.name] = sequential_sum(ap_terms[:upto]) / num_rel if num_rel and upto else 0.0
        elif kind == "RR":
            values[m.name] = 1.0 / (hits[0] + 1) if hits else 0.0
        elif kind == "Success@":
            values[m.name] = 1.0 if hits and hits[0] < k else 0.0
        elif kind == "Rprec":
            values[m.name] = bisect_left(hits, num_rel) / num_rel if num_rel and num_ret else 0.0
        elif kind in ("nDCG", "nDCG@"):
            if gains is None:
                gains = [(j, g) for j, g in enumerate(rels) if g > 0]
            cut = num_ret if kind == "nDCG" else k
            ideal = _idcg(judged.ideal, len(judged.ideal) if kind == "nDCG" else k)
            values[m.name] = _dcg(gains, cut) / ideal if ideal > 0.0 else 0.0
        else:  # Bpref
            values[m.name] = _bpref(rels, judged, level)
    return values, counts


def _bpref(rels: Sequence[int], judged: TopicJudgments, level: int) -> float:
    num_rel = judged.num_rel
    if not num_rel:
        return 0.0
    denom = min(judged.num_nonrel, num_rel)
    nonrel = 0
    total = 0.0
    for g in rels:
        if g < 0:
            continue
        if g < level:
            nonrel += 1
        elif nonrel:
            total += 1.0 - min(nonrel, num_rel) / denom
        else:
            total += 1.0
    return total / num_rel
