"""Pipeline step: one judged comparison -> its item row (the family contract's per-item work).

:func:`check_record_columns` checks a judge record and finds its judge
column; :func:`score_item` turns one record row into an item row
(``cmp_index``, the models, task and metric, the extracted choice, 0/1
outcomes).  Swap consistency needs the partner row: the accumulator decides it.
"""

from collections import OrderedDict
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from .._contract import ItemRow
from ..errors import ScoringError
from ._common import (
    EM_MARKER,
    FAIL_MESSAGE,
    RECORD_COLUMNS,
    _as_text,
    _cell_str,
    _check_nopt,
    _metric_of,
    _split_cmp,
    check_variants,
    is_missing,
)
from .analyze_util import extract_choice

__all__ = ["ITEM_FIELDS", "candidate_outcomes", "check_record_columns", "score_item"]


#: The keys of an item row, in order (see :func:`score_item`).
ITEM_FIELDS = (
    "cmp_index",
    "model",
    "A",
    "B",
    "task",
    "metric",
    "choice",
    "parsed",
    "exact_match",
    "api_failed",
    "unparseable",
    "judge_missing",
    "win",
    "tie",
    "loss",
    "length_a",
    "length_b",
)


#: Columns that are never the judge column when it is guessed.
_NOT_JUDGE = set(RECORD_COLUMNS) | {"extracted", "prompt", "exact_match"}


def check_record_columns(records: Sequence[Mapping[str, Any]], *, judge_column: Optional[str] = None) -> str:
    """Check that a judge record has the columns scoring needs; return the judge column.

    ``judge_column`` defaults to the only column besides the comparison
    columns (and ``extracted``, ``prompt``, ``exact_match``).
    """
    if not records:
        raise ScoringError("the record has no rows")
    columns: List[str] = []
    seen: Set[str] = set()
    for rec in records:
        for k in rec:
            if k not in seen:
                seen.add(k)
                columns.append(k)
    for need in ("cmp_index", "A", "B", "answer1", "answer2"):
        if need not in seen:
            raise ScoringError(f"the record has no {need!r} column", field=need)
    jcol = judge_column if judge_column is not None else _guess_judge_column(columns)
    if jcol not in seen:
        raise ScoringError(f"the record has no judge column {jcol!r}", field="judge_column")
    return jcol


def _guess_judge_column(columns: Sequence[str]) -> str:
    cands = [c for c in columns if c not in _NOT_JUDGE]
    if len(cands) == 1:
        return cands[0]
    if not cands:
        raise ScoringError(
            f"the record has no judge column (a column besides the {len(RECORD_COLUMNS)} comparison columns)",
            field="judge_column",
        )
    raise ScoringError(
        f"cannot tell which column holds the judge output (candidates: {', '.join(cands)}); pass --judge-column",
        field="judge_column",
    )


def _judge_text(record: Mapping[str, Any], judge_column: str) -> Tuple[Optional[str], bool]:
    """The judge text of a record and whether it was missing (pandas' NA rule).

    A missing text with ``exact_match`` true is the EM marker; any other
    missing text is ``None`` (the reference raises TypeError on it).
    """
    judgment = record.get(judge_column)
    if is_missing(judgment):
        if record.get("exact_match") is True and judgment is None:
            return EM_MARKER, False
        return None, True
    return (judgment if isinstance(judgment, str) else str(judgment)), False


def candidate_outcomes(a: str, b: str, choice: Optional[str], refm: Optional[str]) -> Dict[str, Any]:
    """``model`` (the candidate: the slot model that is not refm) and its 0/1 ``win``, ``tie``, ``loss``.

    One verdict, read for the candidate: the letter of its slot is a win, the
    letter of refm's slot a loss, ``C`` (both good) or ``D`` (neither) a tie.
    All three are ``None`` without a choice; ``model`` and the outcomes are
    ``None`` when refm is unknown or not exactly one of the two slots.

    >>> candidate_outcomes("ref", "m1", "B", "ref")
    {'model': 'm1', 'win': 1, 'tie': 0, 'loss': 0}
    >>> candidate_outcomes("m1", "ref", "B", "ref")
    {'model': 'm1', 'win': 0, 'tie': 0, 'loss': 1}
    """
    if refm is None or (a == refm) == (b == refm):
        return {"model": None, "win": None, "tie": None, "loss": None}
    model = b if a == refm else a
    if choice is None:
        return {"model": model, "win": None, "tie": None, "loss": None}
    if choice in ("C", "D"):
        return {"model": model, "win": 0, "tie": 1, "loss": 0}
    win = int((a if choice == "A" else b) == model)
    return {"model": model, "win": win, "tie": 0, "loss": 1 - win}


def _item(
    record: Mapping[str, Any],
    *,
    judge_column: str,
    nopt: int,
    refm: Optional[str],
    variants: Sequence[str],
    length: Optional[Callable[[str], int]],
    row: int,
    path: Optional[str] = None,
) -> ItemRow:
    where: Dict[str, Any] = {} if path is None else {"path": path, "line": row}
    ci = record.get("cmp_index")
    if not isinstance(ci, str) or is_missing(ci):
        raise ScoringError("missing or non-text cmp_index", record=f"row {row}", field="cmp_index", **where)
    parts = _split_cmp(ci, strict="strict_ids" in variants, where=where)
    a, b = record.get("A"), record.get("B")
    if is_missing(a) or is_missing(b):
        raise ScoringError("missing model name in column A or B", record=f"cmp_index={ci}", **where)
    judgment, judge_missing = _judge_text(record, judge_column)
    em = judgment == EM_MARKER
    failed = isinstance(judgment, str) and FAIL_MESSAGE in judgment
    choice = None
    if not em:
        choice = extract_choice(
            judgment, nopt=nopt, lenient="choice_lenient" in variants, letters_by_nopt="letters_by_nopt" in variants
        )
    fn = len if length is None else length
    outcome = candidate_outcomes(str(a), str(b), choice, refm)
    item: ItemRow = OrderedDict()
    item["cmp_index"] = ci
    item["model"] = outcome["model"]
    item["A"] = str(a)
    item["B"] = str(b)
    item["task"] = _cell_str(record.get("task"))
    item["metric"] = _metric_of(parts[0])
    item["choice"] = choice
    item["parsed"] = None if em else int(choice is not None)
    item["exact_match"] = int(em)
    item["api_failed"] = int(failed)
    item["unparseable"] = None if em or failed else int(choice is None)
    item["judge_missing"] = int(judge_missing)
    item["win"] = outcome["win"]
    item["tie"] = outcome["tie"]
    item["loss"] = outcome["loss"]
    item["length_a"] = fn(_as_text(record.get("answer1")))
    item["length_b"] = fn(_as_text(record.get("answer2")))
    return item


def score_item(
    record: Mapping[str, Any],
    *,
    judge_column: str,
    nopt: int = 2,
    refm: Optional[str] = None,
    variants: Sequence[str] = (),
    length: Optional[Callable[[str], int]] = None,
) -> ItemRow:
    """The item row of one judged comparison (a record row: comparison columns + the judge column).

    Keys (:data:`ITEM_FIELDS`): ``cmp_index``; ``model`` (the candidate, see
    :func:`candidate_outcomes`), ``A``, ``B``, ``task``, ``metric`` (text after
    the last ``-`` of the index); ``choice`` (the extracted letter or
    ``None``); ``parsed`` (1 when a choice was read; ``None`` for an EM row:
    its mean is ``extraction_rate``); 0/1 ``exact_match`` (the EM marker:
    never judged) and ``api_failed`` (the API fail message); ``unparseable``
    (1 when the judge answered but no choice could be read; ``None`` for EM
    and failed rows: its mean is ``unparseable_share``); 0/1
    ``judge_missing`` (an empty or NA judge text); the candidate's 0/1
    ``win``/``tie``/``loss`` for this one verdict (``None`` without a
    choice); ``length_a``/``length_b``, the answer lengths (``len`` or
    ``length``).  Swap consistency needs the partner row: it is decided by
    the accumulator.  Item names differ from the count metrics (``failed``,
    ``extracted``), so a count is never read as a rate.

    >>> row = score_item({"cmp_index": "p1-general;ref;m1", "A": "ref", "B": "m1", "answer1": "ab",
    ...                   "answer2": "abc", "task": "api-general", "judge": "Choice: B"},
    ...                  judge_column="judge", refm="ref")
    >>> row["choice"], row["win"], row["loss"], row["metric"], row["length_b"]
    ('B', 1, 0, 'general', 3)
    """
    return _item(
        record,
        judge_column=judge_column,
        nopt=_check_nopt(nopt),
        refm=refm,
        variants=check_variants(variants),
        length=length,
        row=1,
    )
