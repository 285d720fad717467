"""Pipeline step: the file commands ``rgb mix``, ``rgb label`` and ``rgb score`` (plain keyword arguments).

Files (the commands of ``rageval-min rgb``; no argparse here)::

    mix_file(path, ..., on_instance)   -> StepSummary         (rgb mix)
    label_file(path, ..., on_record)   -> StepSummary         (rgb label)
    score_file(path, ..., on_item)     -> Report              (rgb score [--judged])

All input files are JSON Lines (the reference's ``.json`` files are JSON Lines too).  Records
are checked in this process, in input order; the labelling runs on the current engine
(``--jobs``, ``--engine dask``) through the module-level :func:`_record_row`.
"""

import functools
import math
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from .._contract import ItemRow, finish
from .._io import Problems, iter_records
from .._parallel import accumulate_items
from ..errors import ScoringError
from ..report import Report
from ._common import (
    JUDGED,
    InstanceSkipped,
    Number,
    _is_fact,
    _is_number,
    _note,
    _record_who,
    check_variants,
    signature,
    template_id,
)
from .accumulators import ScoreAccumulator
from .evalue import (
    DEFAULT_SEED,
    Label,
    _check_mix_params,
    ground_truth_of,
    label_prediction,
    label_row,
    mix_documents,
    parse_prediction_filename,
    skipped_row,
    validate_stored_label,
)
from .fact_evalue import build_fact_judge_prompt
from .judged import judged_row
from .reject_evalue import build_reject_judge_prompt

__all__ = [
    "StepSummary",
    "check_noise_rate",
    "label_file",
    "label_records",
    "labelled_record",
    "mix_file",
    "read_records",
    "resolve_dataset",
    "resolve_noise_rate",
    "score_file",
    "score_item",
]

Row = Tuple[Any, Dict[str, Any]]
Labelled = Tuple[Any, Dict[str, Any], Optional[Label], Optional[str]]


def read_records(path: str) -> Iterator[Row]:
    """Stream ``(line, record)`` from a JSON Lines file (RGB's files are JSON Lines named ``.json``).

    Problems are raised together at the end and nothing is yielded after the first.
    """
    return iter_records(path, fmt="jsonl")


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
    seen: Dict[Any, int] = {}  # value -> the first line holding it
    for line, rec in read_records(path):
        value = rec.get("noise_rate")
        if "noise_rate" in rec and _is_number(value) and value not in seen:
            if seen:  # name the first record that disagrees, and the line it disagrees with
                first, at = next(iter(seen.items()))
                raise ScoringError(
                    f"records have different noise_rate values [{first!r} at line {at}, {value!r}]; pass --noise-rate",
                    path=path,
                    line=line,
                    field="noise_rate",
                )
            seen[value] = line
    if len(seen) == 1:
        return check_noise_rate(next(iter(seen)), path=path)
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
