"""Mirrors open-compass/DevBench@bb593c1:llm_judge/subeval/subjective/analyze_util.py: choices, tables.

Functions: ``match_answer``, ``preprocess``, ``proc_task``, ``analyze``.

* extraction (``match_answer``, :func:`extract_choice`): the first match of
  ``(?:选择：|Choice: )([ABCD])``; C or D from a 2-option judge is accepted
  and scored;
* preprocessing (``preprocess``): the failure count and limit
  (:func:`check_failures`), EM rows dropped (they disappear from every rate;
  they are not ties), the extracted rows and their swap consistency
  (:func:`pair_both_orders`), the count lines of ``log.txt``
  (:func:`log_lines`);
* the old-version tables (``analyze`` with ``calc_win_rate`` of ``util.py``,
  :func:`old_version_tables`): ``win+halfdraw`` = (win + (C + D)/2) / total
  and ``win+bothgood`` = (win + C) / total per model against refm, over
  *consistent* rows only, per column ``Overall-lang``, ``EN`` (always equal
  to ``Overall-lang``), each super task and each task (``proc_task``), with
  numpy float32 arithmetic and float32 ``round(4)`` reproduced bit for bit.
  A task filter is a substring test, so ``uml_class`` matches both
  ``uml_class-general`` and ``uml_class-faithfulness``; cells where the pair
  has no comparison are ``0.0``, not NaN.
"""

import re
from collections import OrderedDict
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from ..errors import ScoringError
from ._common import _Row, f32, round4_f32
from .util import find_consistency

__all__ = [
    "Partition",
    "check_failures",
    "count_summary",
    "extract_choice",
    "log_lines",
    "old_version_tables",
    "pair_both_orders",
    "row_diagnostics",
]


_CHOICE_RE = re.compile("(?:选择：|Choice: )([ABCD])")
_CHOICE_LENIENT_RE = re.compile(r"(?:选择\s*[：:]|choice\s*[:：])\s*[*_`]*\s*([abcd])\b", re.IGNORECASE)
_LETTERS_BY_NOPT = {2: "AB", 3: "ABC", 4: "ABCD"}


# --------------------------------------------------------------------------- extraction


def extract_choice(text: Any, *, nopt: int = 2, lenient: bool = False, letters_by_nopt: bool = False) -> Optional[str]:
    """The judge's choice letter, or ``None``.

    Reference rule: the first match of ``(?:选择：|Choice: )([ABCD])``
    anywhere in the text; A-D are accepted whatever ``nopt`` is.

    >>> extract_choice("Reason first.\\nChoice: B\\nChoice: A")
    'B'
    >>> [extract_choice(s) for s in ("Choice:A", "choice: A", "Choice: **A**", "选择：C")]
    [None, None, None, 'C']
    >>> extract_choice("Choice: **a**", lenient=True)
    'A'
    >>> extract_choice("Choice: D", nopt=2, letters_by_nopt=True) is None
    True
    """
    if not isinstance(text, str):
        return None
    if lenient:
        m = _CHOICE_LENIENT_RE.search(text)
        letter = m.group(1).upper() if m else None
    else:
        m = _CHOICE_RE.search(text)
        letter = m.group(1) if m else None
    if letter is not None and letters_by_nopt and letter not in _LETTERS_BY_NOPT.get(nopt, "ABCD"):
        return None
    return letter


# --------------------------------------------------------------------------- preprocessing


def check_failures(rows: Sequence[_Row], *, limit: int, judge_column: str) -> List[str]:
    """The ``cmp_index`` of every failed judge call; a ScoringError when there are ``limit`` or more."""
    failed = [r.cmp_index for r in rows if r.failed]
    if len(failed) >= limit:
        raise ScoringError(
            f"{len(failed)} judge calls failed (limit {limit}; the reference exits): " + ", ".join(failed),
            field=judge_column,
        )
    return failed


class Partition(NamedTuple):
    """The non-EM rows split as the reference splits them."""

    non_em: List[_Row]
    extracted: List[_Row]
    status: List[Optional[bool]]  # per extracted row: consistent, inconsistent, None (orphans_excluded)
    consistent: List[_Row]
    inconsistent: List[_Row]


def pair_both_orders(rows: Sequence[_Row], *, orphans_excluded: bool = False) -> Partition:
    """Non-EM rows, the extracted ones, and their swap consistency (see :func:`find_consistency`)."""
    non_em = [r for r in rows if not r.exact_match]
    extracted = [r for r in non_em if r.choice is not None]
    status = find_consistency([(r.cmp_index, r.choice or "") for r in extracted], orphans_excluded=orphans_excluded)
    consistent = [r for r, s in zip(extracted, status) if s is True]
    inconsistent = [r for r, s in zip(extracted, status) if s is False]
    return Partition(non_em, extracted, status, consistent, inconsistent)


def count_summary(total: int, failed: int, part: Partition) -> "OrderedDict[str, Any]":
    """The ``counts`` object: N, F, M, S, S/M, C, C/T (T = consistent + inconsistent)."""
    m_count, s_count = len(part.non_em), len(part.extracted)
    c_count = len(part.consistent)
    t_count = c_count + len(part.inconsistent)
    return OrderedDict(
        [
            ("total", total),
            ("failed", failed),
            ("non_exact", m_count),
            ("extracted", s_count),
            ("extraction_rate", s_count / m_count if m_count else None),
            ("consistent", c_count),
            ("consistency_rate", c_count / t_count if t_count else None),
        ]
    )


def log_lines(counts: Mapping[str, Any]) -> List[str]:
    """The reference's count lines (log lines 2-5), exactly.

    >>> log_lines({"total": 8, "failed": 0, "non_exact": 8, "extracted": 8,
    ...            "consistent": 8})[1]
    'Total comparisons: 8. Non exact matches:  8'
    """
    n, f, m, s, c = (counts["total"], counts["failed"], counts["non_exact"], counts["extracted"], counts["consistent"])
    rate = f"{s / m * 100:.2f}" if m else "nan"
    out = [
        f"Total comparisons: {n}. Failed to response: {f}",
        f"Total comparisons: {n}. Non exact matches:  {m}",
        f"Extracted {s} answers from the responses (extraction success rate {rate}%)",
    ]
    t = counts.get("consistency_total", s)
    if c != t:
        out.append(
            f"{c} out of {t} answers are consistent. (A vs. B <-> B vs. A) The consistent rate is {c / t * 100:.2f}%"
        )
    return out


def row_diagnostics(rows: Sequence[_Row]) -> List[str]:
    """Per-row notes in input order (extra ``;`` parts, NA judge text), then the missing-task count."""
    out: List[str] = []
    missing_task = 0
    for r in rows:
        if r.cmp_index.count(";") > 2:
            out.append(
                f"cmp_index={r.cmp_index}: more than 3 ';'-separated parts; "
                "parsed as the reference does (parts 0, 1 and 2)"
            )
        if r.judge_missing:
            out.append(
                f"cmp_index={r.cmp_index}: judge text is empty or an NA token; counted as "
                "unparseable (the reference raises TypeError)"
            )
        if r.task is None:
            missing_task += 1
    if missing_task:
        out.append(
            f"{missing_task} row(s) have no task: in the old version they count in "
            "Overall-lang/EN only, the new version counts them by index "
            "(the reference fails on them)"
        )
    return out


# --------------------------------------------------------------------------- old version


def _task_columns(rows: Sequence[_Row]) -> Tuple[List[str], List[str]]:
    tasks: Set[str] = set()
    for r in rows:
        if r.task is None:
            continue
        for piece in r.task.split(", "):
            if piece:
                tasks.add(piece)
    suptasks = sorted({t.split("-")[0] for t in tasks})
    return suptasks, sorted(tasks)


def old_version_tables(
    rows: Sequence[_Row], *, refm: str, float64_tables: bool = False, diagnostics: Optional[List[str]] = None
) -> "OrderedDict[str, Any]":
    """``win+halfdraw`` and ``win+bothgood`` tables over consistent rows.

    Mirrors the reference's old-version table loop step by step (filters,
    counts, float32 operations in its order), so it stays in one piece.

    For model ``m`` against refm and a column filter, with counts over both
    presentation orders: ``wr = win/T``, ``wff = C/T``, ``lff = D/T``;
    ``win+halfdraw = wr + (wff + lff)/2`` and ``win+bothgood = wr + wff`` (D
    stays in the denominator), every operation in float32, then numpy float32
    ``round(4)``; ``0.0`` where ``T = 0``.  Columns: ``model``,
    ``Overall-lang``, ``EN`` (same rows as Overall-lang), the sorted super tasks
    (task text before the first ``-``), the sorted tasks; filters are substring
    tests on the row's task string.  Rows are sorted by model name (the
    reference order depends on the hash seed).  ``float64_tables``: plain
    float64 and ``round(x, 4)``.
    """
    suptasks, tasks = _task_columns(rows)
    columns = ["model", "Overall-lang", "EN"] + suptasks + tasks
    models: Set[str] = set()
    for r in rows:
        models.add(r.A)
        models.add(r.B)
    tables: "OrderedDict[str, Any]" = OrderedDict()
    names = ("win+halfdraw", "win+bothgood")
    if refm not in models:
        if diagnostics is not None:
            diagnostics.append(
                "old version: the reference model has no consistent rows; "
                "tables have no model rows (the reference fails an assertion)"
            )
        for n in names:
            tables[n] = OrderedDict([("columns", columns), ("rows", [])])
        return tables
    filters: List[Optional[str]] = [None, None]
    filters.extend(suptasks + tasks)
    others = sorted(m for m in models if m != refm)
    out_rows: Dict[str, List[List[Any]]] = {n: [] for n in names}
    for m in others:
        mine = [r for r in rows if (r.A == m and r.B == refm) or (r.A == refm and r.B == m)]
        hd: List[Any] = [m]
        bg: List[Any] = [m]
        for flt in filters:
            sel = mine if flt is None else [r for r in mine if r.task is not None and flt in r.task]
            win = sum(1 for r in sel if (r.choice == "A" and r.A == m) or (r.choice == "B" and r.B == m))
            both = sum(1 for r in sel if r.choice == "C")
            neither = sum(1 for r in sel if r.choice == "D")
            tot = len(sel)
            if tot == 0:
                hd.append(0.0)
                bg.append(0.0)
                continue
            if float64_tables:
                wr, wff, lff = win / tot, both / tot, neither / tot
                hd.append(round(wr + (wff + lff) / 2.0, 4))
                bg.append(round(wr + wff, 4))
            else:
                wr, wff, lff = f32(win / tot), f32(both / tot), f32(neither / tot)
                hd.append(round4_f32(f32(wr + f32(f32(wff + lff) / 2.0))))
                bg.append(round4_f32(f32(wr + wff)))
        out_rows["win+halfdraw"].append(hd)
        out_rows["win+bothgood"].append(bg)
    for n in names:
        tables[n] = OrderedDict([("columns", list(columns)), ("rows", out_rows[n])])
    return tables
