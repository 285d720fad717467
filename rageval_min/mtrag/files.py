"""Pipeline step: the file-level functions of the algorithmic, condition and summarize steps.

Each reads its input (deferred parsing, :func:`rageval_min._io.deferred_jsonl`), scores on the
current engine (``--jobs``, Dask) with module-level work functions, and writes records in
input order.
"""

import functools
import json
import os
from contextlib import contextmanager
from typing import (
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from .. import rouge as _rouge
from .._contract import Accumulator, ItemRow, finish
from .._io import (
    DeferredProblems,
    Numbered,
    Unparsed,
    deferred_jsonl,
    dumps,
    dumps_extended,
    parse_item,
    read_json,
)
from .._output import atomic_writer
from .._parallel import Engine, accumulate_items
from ..errors import ScoringError
from ..report import Report
from ._common import (
    CONDITIONED_METRICS,
    BertScorer,
    RecordResult,
    _task_id,
    answerability_group,
    answerability_of,
    check_variants,
)
from .conditioning import (
    ColumnTypes,
    ConditionAccumulator,
    condition_record,
    condition_row,
    conditioned_key,
    round_floats,
)
from .run_algorithmic import AlgorithmicAccumulator, algorithmic_row, score_record
from .summarize import SummarizeAccumulator, _analytics_rows, summarize_row, summary_values

__all__ = ["algorithmic_file", "condition_file", "summarize_files"]

Output = Union[str, Any]  # a path (written atomically) or a text stream


@contextmanager
def _records_writer(output: Output) -> Iterator[Any]:
    if isinstance(output, str):
        with atomic_writer(output) as fh:
            yield fh
    else:
        yield output


def _output_label(output: Output, name: Optional[str]) -> Optional[str]:
    if name is not None:
        return name
    return output if isinstance(output, str) else "-"


def _check_not_input(path: str, output: Output) -> None:
    if not isinstance(output, str):
        return
    same = os.path.abspath(path) == os.path.abspath(output)
    if not same and os.path.exists(output):
        try:
            same = os.path.samefile(path, output)
        except OSError:
            pass
    if same:
        raise ScoringError("the records file must differ from the input", path=output)


def _record_rid(path: str, line_no: int, record: Mapping[str, Any]) -> str:
    task_id = record.get("task_id")
    if isinstance(task_id, (str, int)) and not isinstance(task_id, bool):
        return f"task_id={task_id}"
    return f"{path}:{line_no}"


def _checked(path: str, item: Numbered) -> Tuple[int, Dict[str, Any], str]:
    line_no, record = parse_item(path, item)
    if not isinstance(record, dict):
        raise ScoringError("expected a JSON object", path=path, line=line_no)
    return line_no, record, _record_rid(path, line_no, record)


def _located(exc: ScoringError, path: str, line_no: int, rid: str) -> ScoringError:
    return ScoringError(
        exc.msg, path=path, line=line_no, field=exc.field, record=rid if rid.startswith("task_id=") else None
    )


def _json_algorithmic(raw: Any, record: Dict[str, Any], out: Dict[str, Any]) -> str:
    # The output line: run_algorithmic.py writes with json.dump (ASCII escapes, full repr, NaN
    # kept).  The line read (raw) is reused when it is already in that form (out is record with
    # "metrics" appended).
    return dumps_extended(raw.text if isinstance(raw, Unparsed) else None, record, out, "\n")


def _json_pandas(record: Dict[str, Any]) -> str:
    # close to pandas to_json(orient="records", lines=True): compact, ASCII, "\/", NaN as null.
    return dumps(record, separators=(",", ":")).replace("/", "\\/")


def _algorithmic_work(
    item: Numbered,
    *,
    path: str,
    variants: Sequence[str],
    bertscore: Optional[BertScorer],
    lcs: Optional[_rouge.LcsFn],
) -> Tuple[ItemRow, Tuple[str, List[str]]]:
    """Per-record work of :func:`algorithmic_file` (runs in a worker under ``--jobs``):
    the item row, and the output line with the record's diagnostics."""
    line_no, record, rid = _checked(path, item)
    try:
        result = score_record(record, variants=variants, bertscore=bertscore, record_id=rid, lcs=lcs)
        row = algorithmic_row(result.record)  # a metric beyond the float range: an input error
    except ScoringError as exc:
        raise _located(exc, path, line_no, rid) from None
    return row, (_json_algorithmic(item[1], record, result.record), result.diagnostics)


def _engine_for(bertscore: Optional[BertScorer]) -> Optional[Engine]:
    # A BERTScore model stays in this process (it is neither small nor always picklable).
    return Engine() if bertscore is not None else None


def algorithmic_file(
    path: str,
    output: Output,
    *,
    variants: Sequence[str] = (),
    bertscore: Optional[BertScorer] = None,
    bertscore_name: Optional[str] = None,
    lcs: Optional[_rouge.LcsFn] = None,
    backend: str = "stdlib",
    on_item: Optional[Callable[[ItemRow], None]] = None,
    output_name: Optional[str] = None,
) -> Report:
    """``mtrag algorithmic``: write every record of ``path`` with its ``metrics`` to ``output``
    (as ``run_algorithmic.py``, one record at a time) and report the mean of each metric.

    ``output`` is a path (written atomically: a bad input leaves nothing) or a text stream;
    ``output_name`` is what the report shows as ``output`` (default: the path, ``-`` for a
    stream).  ``bertscore`` is the BERTScore hook (see :data:`BertScorer`), named
    ``bertscore_name`` in the signature (default ``scorer``; ``input`` without a hook);
    ``lcs`` an exact LCS-length function for the ROUGE-L metrics, named ``backend``.
    ``on_item`` receives each item row (:func:`algorithmic_item`) in input order.

    The records are read here and scored on the current engine (``--jobs``, Dask; see
    :mod:`rageval_min._parallel`); the output lines are written here, in input order.  With
    a ``bertscore`` hook the scoring stays in this process.
    """
    variants = check_variants(variants)
    _check_not_input(path, output)
    name = bertscore_name or ("input" if bertscore is None else "scorer")
    acc = AlgorithmicAccumulator(
        output=_output_label(output, output_name), variants=variants, bertscore=name, backend=backend
    )
    fn = functools.partial(_algorithmic_work, path=path, variants=variants, bertscore=bertscore, lcs=lcs)
    return _write_records(acc, fn, path, output, on_item=on_item, engine=_engine_for(bertscore))


def _write_records(
    acc: Accumulator,
    fn: Callable[[Numbered], Tuple[ItemRow, Tuple[str, List[str]]]],
    path: str,
    output: Output,
    *,
    on_item: Optional[Callable[[ItemRow], None]],
    engine: Optional[Engine] = None,
) -> Report:
    """Score every record of ``path`` with ``fn`` on the current engine (or ``engine``): add
    the rows to ``acc``, write each output line to ``output`` in input order and note its
    diagnostics; raise the collected problems (nothing is written then); the report."""
    errors = DeferredProblems()
    with _records_writer(output) as fh:
        write = fh.write

        def on_result(extra: Tuple[str, List[str]]) -> None:
            write(extra[0])
            for d in extra[1]:
                acc.note(d)

        accumulate_items(
            acc,
            fn,
            deferred_jsonl(path),
            on_item=errors.wanted(on_item),
            on_result=errors.wanted(on_result),
            on_error=errors,
            engine=engine,
        )
        errors.raise_if_any()
    return finish(acc)


def _conditioned(
    item: Numbered,
    *,
    path: str,
    metrics: Sequence[str],
    variants: Sequence[str],
    digits: Optional[int],
    keys: Sequence[str],
    alias: bool,
) -> Tuple[RecordResult, ItemRow, List[str]]:
    line_no, record, rid = _checked(path, item)
    if digits is not None:
        record = round_floats(record, digits)  # values as the reference reads them
    try:
        result = condition_record(record, metrics=metrics, variants=variants, record_id=rid)
        row = condition_row(result.record, keys, alias=alias)
    except ScoringError as exc:
        raise _located(exc, path, line_no, rid) from None
    present = [k for k in keys if row[k] is not None or k in row["non_numeric"]]
    return result, row, present


def _condition_types_work(item: Numbered, **options: Any) -> Tuple[None, List[Tuple[str, Any]]]:
    """Pass 1 of :func:`condition_file`: validate one record; its conditioned ``(key, value)`` pairs."""
    result, _, present = _conditioned(item, **options)
    m = result.record["metrics"]
    return None, [(key, m[key][0]) for key in present]


def _condition_write_work(
    item: Numbered, *, types: Optional["ColumnTypes"], **options: Any
) -> Tuple[ItemRow, Tuple[str, List[str]]]:
    """Pass 2 of :func:`condition_file`: the item row, and the output line (typed by ``types``)."""
    result, row, present = _conditioned(item, **options)
    record = result.record
    if types is None:
        line = json.dumps(record)
    else:
        m = record["metrics"]
        for key in present:
            m[key] = [types.cast(key, m[key][0])]
        line = _json_pandas(record)
    return row, (line + "\n", result.diagnostics)


class _Discard:
    """The accumulator of a pass that only validates (it gets no rows)."""

    def add(self, item: ItemRow) -> None:  # pragma: no cover - pass 1 returns no rows
        raise AssertionError("pass 1 adds no rows")


def condition_file(
    path: str,
    output: Output,
    *,
    metrics: Sequence[str] = CONDITIONED_METRICS,
    variants: Sequence[str] = (),
    digits: Optional[int] = 10,
    on_item: Optional[Callable[[ItemRow], None]] = None,
    output_name: Optional[str] = None,
) -> Report:
    """``mtrag condition``: IDK-condition every record of ``path`` into ``output`` and report the means.

    With ``digits`` (default 10) the records are written as the reference's pandas
    writer does: every float rounded to ``digits`` decimals (before conditioning, as the
    reference reads them back), compact JSON, and each conditioned metric typed by its
    **column** (:class:`ColumnTypes`): one float or null anywhere in a column writes every
    ``1``/``0`` of it as ``1.0``/``0.0``.  The column types need the whole file, so the input
    is read twice: the first pass validates every record and fills the type summary (nothing
    is written when a record is bad), the second writes; no record is held in memory.
    ``digits=None`` (``--full-precision``) writes plain ``json.dumps`` records, each value
    with its own type.  ``on_item`` receives each item row (:func:`condition_item`).

    Both passes score on the current engine (``--jobs``, Dask); the lines are written
    here in input order.  A shard's records are typed by the shard's own columns (the
    report, which holds means, merges exactly; see ``docs/mtrag.md``).
    """
    variants = check_variants(variants)
    metrics = list(metrics)
    paper = "paper_idk" in variants
    keys = [conditioned_key(m, paper_idk=paper) for m in metrics]
    _check_not_input(path, output)
    acc = ConditionAccumulator(
        output=_output_label(output, output_name), metrics=metrics, variants=variants, digits=digits
    )
    options: Dict[str, Any] = dict(
        path=path,
        metrics=metrics,
        variants=variants,
        digits=digits,
        keys=keys,
        alias="answerability_alias" in variants,
    )
    types = ColumnTypes()

    def add_types(pairs: List[Tuple[str, Any]]) -> None:
        for key, value in pairs:
            types.add(key, value)

    errors = DeferredProblems()  # pass 1: validate, and the dtype of each conditioned column
    accumulate_items(
        _Discard(),
        functools.partial(_condition_types_work, **options),
        deferred_jsonl(path),
        on_result=errors.wanted(add_types),
        on_error=errors,
    )
    errors.raise_if_any()
    fn = functools.partial(_condition_write_work, types=None if digits is None else types, **options)
    return _write_records(acc, fn, path, output, on_item=on_item)  # pass 2: write


def _summarize_jsonl_work(
    item: Numbered,
    *,
    path: str,
    source: int,
    setting: str,
    model: str,
    alias: bool,
    wanted: Sequence[str],
) -> ItemRow:
    """The ``summarize`` item row of one evaluated JSONL record (runs in a worker under ``--jobs``)."""
    line_no, record = parse_item(path, item)
    if not isinstance(record, dict) or not isinstance(record.get("metrics"), dict):
        raise ScoringError("expected an object with a 'metrics' object", path=path, line=line_no, field="metrics")
    name = record.get("model_id")
    try:
        values = summary_values(record["metrics"])
    except ScoringError as exc:
        raise ScoringError(exc.msg, path=path, line=line_no, field=exc.field) from None
    if wanted:
        values = {k: v for k, v in values.items() if k in wanted}
    return summarize_row(
        _task_id(record),
        values,
        source=source,
        setting=setting,
        input=path,
        format="jsonl",
        model=str(name) if name is not None else model,
        group=answerability_group(answerability_of(record, alias=alias)),
    )


def _summarize_analytics_work(
    row: Tuple[Optional[str], str, str, Dict[str, Any]],
    *,
    path: str,
    source: int,
    setting: str,
    wanted: Sequence[str],
) -> ItemRow:
    task_id, model, group, values = row
    if wanted:
        values = {k: v for k, v in values.items() if k in wanted}
    return summarize_row(
        task_id, values, source=source, setting=setting, input=path, format="analytics", model=model, group=group
    )


def summarize_files(
    inputs: Sequence[str],
    *,
    settings: Sequence[str] = (),
    metrics: Sequence[str] = (),
    model: Optional[str] = None,
    variants: Sequence[str] = (),
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """``mtrag summarize``: means per setting, model and answerability group of evaluated
    JSONL files (``.jsonl``) and/or InspectorRAGet analytics files, one setting per input.

    ``settings`` label the inputs (default: the file name without extension); ``metrics``
    keeps only these metrics (each must occur); ``model`` names JSONL records without
    ``model_id`` (default: the setting label).  ``on_item`` receives each item row:
    ``task_id``, the record's metric values, then ``source`` (the input's index),
    ``setting``, ``input``, ``format``, ``model``, ``group``.  An input with no
    evaluation is an input error.
    """
    variants = check_variants(variants)
    if settings and len(settings) != len(inputs):
        raise ScoringError(f"{len(settings)} --setting labels for {len(inputs)} --input files", field="--setting")
    if not inputs:
        raise ScoringError("no --input file", field="--input")
    wanted = list(dict.fromkeys(metrics))
    acc = SummarizeAccumulator(metrics=wanted, variants=variants)
    alias = "answerability_alias" in variants
    for index, path in enumerate(inputs):
        label = settings[index] if settings else os.path.splitext(os.path.basename(path))[0]
        if path.endswith(".jsonl"):
            fn = functools.partial(
                _summarize_jsonl_work,
                path=path,
                source=index,
                setting=label,
                model=model or label,
                alias=alias,
                wanted=wanted,
            )
            errors = DeferredProblems()
            accumulate_items(acc, fn, deferred_jsonl(path), on_item=errors.wanted(on_item), on_error=errors)
            errors.raise_if_any()
            continue
        data = read_json(path)
        if not isinstance(data, dict):
            raise ScoringError("expected an analytics object (or use a .jsonl file of evaluated records)", path=path)
        fn = functools.partial(_summarize_analytics_work, path=path, source=index, setting=label, wanted=wanted)
        accumulate_items(acc, fn, _analytics_rows(path, data), on_item=on_item)
    missing = acc.missing_metrics()
    if missing:
        raise ScoringError(f"no values for metric(s) {', '.join(missing)}", field="--metric")
    return finish(acc)
