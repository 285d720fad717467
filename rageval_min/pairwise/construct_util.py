"""Mirrors open-compass/DevBench@bb593c1:llm_judge/subeval/subjective/construct_util.py: the comparisons.

Every question row of an input table is turned into judge inputs comparing a
model with the reference model ``refm`` (:func:`build_comparisons`).
``cmp_index`` is ``"{index};{model in slot A};{model in slot B}"``.  ``dual``
mode emits both presentation orders (refm first), ``random`` mode one order
chosen by numpy's legacy Mersenne Twister (``np.random.seed(seed)`` per model,
``random() < 0.5`` keeps the normal order), emulated here with the stdlib.
Rows whose two answers are equal after ``strip()`` are exact matches (EM):
they are marked and never sent to a judge.  A missing answer becomes the text
``"nan"`` (the reference ``str()``-s pandas' NaN).

:func:`infer_input_tsv` writes the reference's infer-input TSV (the file
``sub_eval.py`` dumps before judging).
"""

import csv
import random
from collections import OrderedDict
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from ..errors import ScoringError
from ._common import RECORD_COLUMNS, _as_text, _cell_str, is_missing

__all__ = [
    "Comparison",
    "build_comparisons",
    "comparisons_from_file",
    "infer_input_tsv",
    "legacy_numpy_random",
    "read_table",
]


# --------------------------------------------------------------------------- seeding


def legacy_numpy_random(seed: int) -> random.Random:
    """A :class:`random.Random` in the state of ``np.random.seed(seed)``.

    numpy's legacy seeding runs the classic MT19937 ``init_genrand`` on the
    32-bit seed, and ``np.random.random()`` is the same 53-bit draw as the
    stdlib's ``random()``, so the stdlib generator can be put in that state.

    >>> round(legacy_numpy_random(0).random(), 12)
    0.548813503927
    """
    if seed < 0 or seed > 0xFFFFFFFF:
        raise ScoringError(f"seed must be in 0..2**32-1 for numpy's legacy generator, got {seed}")
    mt = [0] * 624
    mt[0] = seed
    for i in range(1, 624):
        prev = mt[i - 1]
        mt[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF
    rng = random.Random()
    rng.setstate((3, tuple(mt) + (624,), None))
    return rng


# --------------------------------------------------------------------------- tables


def read_table(path: str) -> List[Tuple[int, Dict[str, Any]]]:
    """Read an input table or a record: ``.xlsx`` (first sheet, stdlib reader),
    or ``.csv`` / ``.tsv`` / ``.jsonl`` / ``.json`` (the shared readers).

    Returns ``[(line or sheet row, {column: value})]``.  Cell text is kept as
    is; missing values are decided later with :func:`is_missing`.
    """
    if path.lower().endswith(".xlsx"):
        from .._xlsx import read_xlsx_records

        return read_xlsx_records(path)
    from .._io import iter_records

    return list(iter_records(path))


# --------------------------------------------------------------------------- comparisons


class Comparison(NamedTuple):
    """One judge input: the reference's 9 infer-input columns plus the EM mark.

    ``reference_answer`` and ``evaluating_guidance`` are kept as read (``None``
    when missing); ``question`` and the answers are stripped strings.
    """

    cmp_index: str
    question: str
    answer1: str
    answer2: str
    A: str
    B: str
    reference_answer: Optional[str]
    evaluating_guidance: Optional[str]
    task: Optional[str]
    exact_match: bool

    def as_record(self) -> "OrderedDict[str, Any]":
        """The 9 reference columns plus ``exact_match`` (JSON-ready)."""
        d: "OrderedDict[str, Any]" = OrderedDict()
        for k in RECORD_COLUMNS:
            d[k] = getattr(self, k)
        d["exact_match"] = self.exact_match
        return d


def _check_id(part: str, what: str, record: str) -> None:
    if ";" in part:
        raise ScoringError(f"{what} contains ';', which breaks cmp_index parsing (strict_ids)", record=record)


def build_comparisons(
    rows: Sequence[Mapping[str, Any]],
    *,
    refm: str,
    models: Optional[Sequence[str]] = None,
    mode: str = "dual",
    seed: int = 2680,
    strict_ids: bool = False,
    diagnostics: Optional[List[str]] = None,
) -> List[Comparison]:
    """Comparisons of every model in ``models`` against ``refm``, reference order.

    ``rows`` are the input-table rows (columns ``question``, ``index``,
    ``evaluating_guidance``, optional ``task``, ``reference_answer`` and one
    ``answer-{model}`` per model).  ``models`` defaults to every answer column
    except refm, in column order (the reference requires ``--model``; passing
    refm itself, as its README example does, yields EM rows).  Per model, in
    table order: ``dual`` gives the normal row (refm in slot A) then the
    reversed one; ``random`` gives one of them (numpy legacy generator seeded
    with ``seed`` again for every model).  A negative ``seed`` swaps model and
    refm and uses ``abs(seed)``, as the reference does.  Answers are
    ``str()``-ed before the missing test (a missing answer is ``"nan"``) and
    stripped, as is the question.
    """
    if mode not in ("dual", "random"):
        raise ScoringError(f"mode must be 'dual' or 'random', got {mode!r}")
    if not rows:
        raise ScoringError("the input table has no rows")
    models = _checked_models(rows, refm=refm, models=models, diagnostics=diagnostics)
    out: List[Comparison] = []
    for model in models:
        m, ref, s = model, refm, seed
        if s < 0:
            s = -s
            m, ref = ref, m
        rng = legacy_numpy_random(s) if mode == "random" else None
        for line_no, row in enumerate(rows, start=1):
            normal, reverse = _row_pair(row, line_no, model=m, refm=ref, strict_ids=strict_ids)
            if rng is None:
                out.append(normal)
                out.append(reverse)
            else:
                out.append(normal if rng.random() < 0.5 else reverse)
    return out


def _checked_models(
    rows: Sequence[Mapping[str, Any]], *, refm: str, models: Optional[Sequence[str]], diagnostics: Optional[List[str]]
) -> Sequence[str]:
    """The models to compare with ``refm`` (default: every answer column but refm's), the table's columns checked."""
    columns: List[str] = list(dict.fromkeys(k for r in rows for k in r))  # first-seen order, linear
    for need in ("question", "index", "evaluating_guidance"):
        if need not in columns:
            raise ScoringError(f"the input table has no {need!r} column", field=need)
    if "reference_answer" not in columns and diagnostics is not None:
        diagnostics.append("input has no 'reference_answer' column: treated as empty (the reference raises KeyError)")
    available = [c[7:] for c in columns if c.startswith("answer-")]
    if refm not in available:
        raise ScoringError(f"no 'answer-{refm}' column for the reference model", field="refm")
    if models is None:
        models = [m for m in available if m != refm]
    for m in models:
        if m not in available:
            raise ScoringError(f"no 'answer-{m}' column", field="model")
    return models


def _row_pair(
    row: Mapping[str, Any], line_no: int, *, model: str, refm: str, strict_ids: bool
) -> Tuple[Comparison, Comparison]:
    """The normal comparison of one table row (``refm`` in slot A) and the reversed one."""
    m, ref = model, refm
    index_v = row.get("index")
    if is_missing(index_v):
        raise ScoringError("missing 'index'", record=f"row {line_no}", field="index")
    index = _as_text(index_v)
    if strict_ids:
        _check_id(index, "index", f"index={index}")
        _check_id(m, "model name", f"index={index}")
        _check_id(ref, "model name", f"index={index}")
    q = row.get("question")
    if is_missing(q):
        raise ScoringError(
            "missing 'question' (the reference fails on .strip())", record=f"index={index}", field="question"
        )
    question = _as_text(q).strip()
    ans_ref = _as_text(row.get("answer-" + ref)).strip()
    ans_m = _as_text(row.get("answer-" + m)).strip()
    refa = _cell_str(row.get("reference_answer"))
    guid = _cell_str(row.get("evaluating_guidance"))
    task = _cell_str(row.get("task"))
    normal = Comparison(f"{index};{ref};{m}", question, ans_ref, ans_m, ref, m, refa, guid, task, ans_ref == ans_m)
    reverse = Comparison(f"{index};{m};{ref}", question, ans_m, ans_ref, m, ref, refa, guid, task, ans_ref == ans_m)
    return normal, reverse


def infer_input_tsv(comparisons: Iterable[Comparison], fh: Any) -> None:
    """Write the reference's infer-input TSV (pandas ``to_csv(sep='\\t', index=False)``):
    the 9 columns, minimal quoting, missing values as empty cells."""
    w = csv.writer(fh, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    w.writerow(RECORD_COLUMNS)
    for c in comparisons:
        w.writerow(["" if getattr(c, k) is None else getattr(c, k) for k in RECORD_COLUMNS])


def comparisons_from_file(
    path: str,
    *,
    refm: str,
    models: Optional[Sequence[str]] = None,
    mode: str = "dual",
    seed: int = 2680,
    strict_ids: bool = False,
) -> Tuple[List[Comparison], List[str]]:
    """The comparisons of the input table at ``path`` (every row checked) and the notes about the table.

    :func:`build_comparisons` on :func:`read_table`; an error without a file names ``path``.
    """
    rows = [r for _, r in read_table(path)]
    diags: List[str] = []
    try:
        comps = build_comparisons(
            rows, refm=refm, models=models, mode=mode, seed=seed, strict_ids=strict_ids, diagnostics=diags
        )
    except ScoringError as exc:
        if exc.path is None:
            raise ScoringError(exc.msg, path=path, field=exc.field, record=exc.record) from None
        raise
    return comps, diags
