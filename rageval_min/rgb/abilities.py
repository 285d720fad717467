"""Pipeline step: ``rgb report``, the four RGB abilities over several prediction files.

The four abilities RGB measures all come from the same per-answer labels:

* **noise robustness**: ``all_rate`` on the base sets (``en``/``zh``) per noise rate;
* **negative rejection**: ``all_rate`` at noise rate 1.0 (in the reference this is
  "rejected *or* correct", see :func:`rageval_min.rgb.score`);
* **information integration**: ``all_rate`` on the ``_int`` sets;
* **counterfactual robustness**: ``fact_check_rate`` (error detection) and ``correct_rate``
  (error correction) on the ``_fact`` sets.

``report_files(paths, ...) -> Report`` scores every file (named as
``chen700564/RGB@65ec39e:evalue.py`` names its prediction files) and groups the runs.
"""

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ..errors import ScoringError
from ..report import Report
from ._common import FAMILY, Number, check_variants, dataset_branch, result_metrics, signature
from .accumulators import ScoreAccumulator
from .evalue import _RESULT_SUFFIXES, RunName, Scores, format_result_text, parse_prediction_filename
from .files import _accumulate_rows, check_noise_rate, read_records

__all__ = [
    "REPORT_METRICS",
    "REPORT_RENDERERS",
    "render_report_markdown",
    "render_report_text",
    "REPORT_FORMATS",
    "STDOUT_SUFFIX",
    "abilities_table",
    "ability_rows",
    "format_abilities",
    "report_files",
    "report_metric_names",
    "report_runs",
]


def _rate_key(value: Number) -> str:
    return repr(float(value))


def abilities_table(runs: Sequence[Tuple[RunName, Scores]]) -> Dict[str, Any]:
    """Group scored runs into the four RGB abilities, per model and language.

    Returns ``{model: {lang: {...}}}`` with, where the runs exist:
    ``noise_robustness`` (base sets below noise 1: ``{noise: all_rate}``, ascending),
    ``negative_rejection`` (base sets at noise 1: ``all_rate``, i.e. "rejected or correct"
    unless the scores were computed with variant ``noise1_reject_only``),
    ``information_integration`` (``_int`` sets: ``{noise: all_rate}``) and
    ``counterfactual_robustness`` (``_fact`` sets: ``{noise/correct: {accuracy,
    error_detection_rate, error_correction_rate}}``).  Several runs with the same key
    (e.g. different passage counts) are keyed with ``@passageN`` appended.
    """
    table: Dict[str, Dict[str, Dict[str, Any]]] = {}
    order = sorted(
        runs,
        key=lambda r: (
            r[0].model,
            r[0].dataset[:2],
            r[0].dataset,
            r[0].noise_rate,
            r[0].correct_rate,
            r[0].passage_num,
        ),
    )
    passages: Dict[Tuple[str, str, str], Set[int]] = {}
    for run, _ in order:
        passages.setdefault((run.model, run.dataset, run.dataset[:2]), set()).add(run.passage_num)
    for run, sc in order:
        lang = run.dataset[:2]
        entry = table.setdefault(run.model, {}).setdefault(lang, {})
        multi = len(passages[(run.model, run.dataset, lang)]) > 1
        suffix = f"@passage{run.passage_num}" if multi else ""
        branch = dataset_branch(run.dataset)
        if branch == "fact":
            key = f"noise{_rate_key(run.noise_rate)}_correct{_rate_key(run.correct_rate)}{suffix}"
            entry.setdefault("counterfactual_robustness", {})[key] = {
                "accuracy": sc.all_rate,
                "error_detection_rate": sc.fact_check_rate,
                "error_correction_rate": sc.correct_rate,
            }
        elif branch == "int":
            name = run.dataset[2:] if run.dataset[2:] != "_int" else ""
            entry.setdefault("information_integration", {})[_rate_key(run.noise_rate) + name + suffix] = sc.all_rate
        else:
            name = run.dataset[2:]  # "" or "_refine"
            if run.noise_rate == 1:
                entry.setdefault("negative_rejection", {})[_rate_key(run.noise_rate) + name + suffix] = sc.all_rate
            else:
                entry.setdefault("noise_robustness", {})[_rate_key(run.noise_rate) + name + suffix] = sc.all_rate
    return table


_ABILITY_LABELS = (
    ("noise_robustness", "noise robustness"),
    ("negative_rejection", "negative rejection"),
    ("information_integration", "information integration"),
)


def ability_rows(table: Mapping[str, Any]) -> List[Tuple[str, str, str, str, Optional[Number]]]:
    """Flatten :func:`abilities_table` into ``(model, lang, ability, setting, value)`` rows.

    Counterfactual robustness gives three rows per setting: ``error detection rate``,
    ``error correction rate`` and ``accuracy``.  Values are unrounded.
    """
    rows: List[Tuple[str, str, str, str, Optional[Number]]] = []
    for model, langs in table.items():
        for lang, abilities in langs.items():
            for key, title in _ABILITY_LABELS:
                for setting, value in abilities.get(key, {}).items():
                    rows.append((model, lang, title, "noise " + setting, value))
            for setting, vals in abilities.get("counterfactual_robustness", {}).items():
                rows.append(
                    (model, lang, "counterfactual: error detection rate", setting, vals["error_detection_rate"])
                )
                rows.append(
                    (model, lang, "counterfactual: error correction rate", setting, vals["error_correction_rate"])
                )
                rows.append((model, lang, "counterfactual: accuracy", setting, vals["accuracy"]))
    return rows


def format_abilities(report: Report, outcomes: Any = ()) -> str:
    """An ``rgb report``'s abilities object alone, as JSON (indent 2), as ``expected_abilities.json`` holds it."""
    abilities = report.result.get("abilities") if isinstance(report.result, Mapping) else None
    if abilities is None:
        raise ScoringError("--format abilities is the format of an rgb report (rgb report), not of this report")
    return json.dumps(abilities, indent=2, ensure_ascii=False) + "\n"


#: The reference's own output formats of an rgb report (name -> renderer), for the CLI and ``merge``:
#: ``rgb`` is the ``_result.json`` text of ``rgb score``/``rgb judge``, ``abilities`` the table of ``rgb report``.
REPORT_FORMATS = {"rgb": format_result_text, "abilities": format_abilities}
#: What follows a reference format on stdout (the reference's result file has no final newline).
STDOUT_SUFFIX = {"rgb": "\n"}


#: The gateable metrics of ``rgb report`` (not a mergeable command, so no accumulator): every key
#: of every run's score object under the run's stem (see :func:`report_metric_names`).
REPORT_METRICS = tuple(
    m._replace(
        name="{model}/{dataset}/noise{noise_rate}_passage{passage_num}_correct{correct_rate}/" + m.name, per_item=False
    )
    for m in ScoreAccumulator.METRICS
    if m.name in ScoreAccumulator.metric_names(dataset="_fact")
)


def report_runs(paths: Sequence[str]) -> List[Tuple[str, RunName]]:
    """``(path, run)`` of every prediction file of ``rgb report`` (names checked, no file read).

    A model run at several temperatures gets ``@temp{T}`` appended; the same run twice,
    or a score/judge file, is a :class:`ScoringError`.
    """
    names: List[RunName] = []
    for path in paths:
        if os.path.basename(path).endswith(_RESULT_SUFFIXES):
            raise ScoringError("give prediction files, not score or judge files", path=path)
        name = parse_prediction_filename(path)
        check_noise_rate(name.noise_rate, path=path)
        names.append(name)
    temps: Dict[str, Set[float]] = {}
    for n in names:
        temps.setdefault(n.model, set()).add(n.temp)
    seen: Dict[RunName, str] = {}
    out: List[Tuple[str, RunName]] = []
    for path, name in zip(paths, names):
        if len(temps[name.model]) > 1:  # keep runs at different temperatures apart
            name = name._replace(model=f"{name.model}@temp{name.temp}")
        if name in seen:
            raise ScoringError(f"the same run as {seen[name]}", path=path)
        seen[name] = path
        out.append((path, name))
    return out


def _run_stem(name: RunName) -> str:
    return f"{name.model}/{name.dataset}/noise{name.noise_rate}_passage{name.passage_num}_correct{name.correct_rate}/"


def report_metric_names(paths: Sequence[str]) -> List[str]:
    """The gateable names ``rgb report`` gives for these files (``MODEL/DATASET/noise.../KEY``)."""
    names: List[str] = []
    for _, run in report_runs(paths):
        stem = _run_stem(run)
        names += [stem + k for k in ScoreAccumulator.metric_names(dataset=run.dataset)]
    return names


def report_files(paths: Sequence[str], *, use_labels: bool = False, variants: Sequence[str] = ()) -> Report:
    """``rgb report``: score every prediction file and group the runs into the four abilities.

    ``result`` is ``{"abilities": abilities_table(...), "runs": [...]}``; the metrics are
    every run's score keys under ``MODEL/DATASET/noise{N}_passage{P}_correct{C}/KEY``.
    """
    variants = check_variants(variants)
    runs: List[Tuple[RunName, Scores]] = []
    run_items: List[Dict[str, Any]] = []
    metrics: Dict[str, Any] = {}
    diagnostics: List[str] = []
    for path, name in report_runs(paths):
        acc = ScoreAccumulator(
            dataset=name.dataset, noise_rate=name.noise_rate, use_labels=use_labels, variants=variants
        )
        rows_nr: Set[str] = set()
        _accumulate_rows(acc, read_records(path), path, None, rows_nr)
        if rows_nr and rows_nr != {str(name.noise_rate)}:
            diagnostics.append(
                f"{path}: records' noise_rate {', '.join(sorted(rows_nr))} differs from the file name "
                f"({name.noise_rate}); the file name is used"
            )
        rep = acc.finalize()
        sc = acc.scores()
        assert isinstance(sc, Scores)
        diagnostics += rep.diagnostics
        runs.append((name, sc))
        metrics.update(result_metrics(rep.result, _run_stem(name)))
        run_items.append(
            {
                "file": path,
                "model": name.model,
                "dataset": name.dataset,
                "temp": name.temp,
                "noise_rate": name.noise_rate,
                "passage_num": name.passage_num,
                "correct_rate": name.correct_rate,
                "scores": rep.result,
            }
        )
    if "noise1_reject_only" not in variants and any(
        dataset_branch(n.dataset) == "default" and n.noise_rate == 1 for n, _ in runs
    ):
        diagnostics.append(
            "negative rejection is the reference's 'rejected or correct' rate at noise 1.0 "
            "(--variant noise1_reject_only counts rejections only)"
        )
    params: List[Tuple[str, object]] = [("files", len(paths)), ("use_labels", use_labels)]
    return Report(
        family=FAMILY,
        signature=signature(variants=variants, params=params),
        result={"abilities": abilities_table(runs), "runs": run_items},
        metrics=metrics,
        diagnostics=diagnostics,
    )


def _fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


def _table_lines(rows: Sequence[Sequence[str]]) -> List[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def render_report_text(report: Report, outcomes: Any) -> str:
    """The four abilities as one aligned table (values to 4 decimals; JSON has them unrounded)."""
    rows = [("model", "lang", "ability", "setting", "value")]
    rows += [(m, lang, ab, st, _fmt(v)) for m, lang, ab, st, v in ability_rows(report.result["abilities"])]
    lines = ["rageval-min rgb report", f"signature: {report.signature}", ""]
    lines += _table_lines(rows)
    if outcomes:
        lines.append("")
        lines += _table_lines(
            [("gate", "value", "status")] + [(o.text, _fmt(o.value), "pass" if o.passed else "FAIL") for o in outcomes]
        )
    lines += [f"note: {d}" for d in report.diagnostics]
    if outcomes:
        lines += ["", "result: " + ("PASS" if all(o.passed for o in outcomes) else "FAIL")]
    return "\n".join(lines) + "\n"


def render_report_markdown(report: Report, outcomes: Any) -> str:
    ok = all(o.passed for o in outcomes)
    lines = [
        f"### rageval-min rgb report: {'PASS' if ok else 'FAIL'}",
        "",
        "| model | lang | ability | setting | value |",
        "| --- | --- | --- | --- | ---: |",
    ]
    for m, lang, ab, st, v in ability_rows(report.result["abilities"]):
        lines.append(f"| {m.replace('|', '/')} | {lang} | {ab} | {st} | {_fmt(v)} |")
    if outcomes:
        lines += ["", "| gate | value | status |", "| --- | ---: | --- |"]
        lines += [f"| `{o.text}` | {_fmt(o.value)} | {'pass' if o.passed else 'FAIL'} |" for o in outcomes]
    lines.append("")
    lines += [f"- {d}" for d in report.diagnostics]
    lines.append(f"<sub>`{report.signature}`</sub>")
    return "\n".join(lines) + "\n"


#: The renderers of an ``rgb report`` (``--format``): the table as text or markdown, the abilities object as JSON.
REPORT_RENDERERS = {
    "text": render_report_text,
    "markdown": render_report_markdown,
    "abilities": format_abilities,
}
