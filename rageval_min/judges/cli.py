"""``rageval-min judge run``: ask a judge every prompt of a file, through the runner.

The generic face of :mod:`rageval_min.judges`, usable without any metric family:
the cache, retries, concurrency and replay work exactly as in a family's
``judge`` subcommand.
"""

import argparse
import json
import math
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from .._cli_common import CliIO, add_records_option, add_report_options, emit_report, prepare
from .._io import Problems, first_bad_path, iter_records, read_text, write_jsonl
from .._signature import make_signature
from ..errors import ScoringError
from ..gates import GateOutcome
from ..report import Report
from . import options as _cli_judge
from . import runner as judges
from .agreement_cli import register_agreement

__all__ = ["register", "run", "compute", "parse_params", "read_prompts", "Prompts", "METRICS"]

REF = "rageval-min/judges@none"

#: The gateable metrics of ``judge run``.
METRICS = ("judge_calls", "judge_cache_hits", "judge_failures", "judge_unparseable", "judge_skipped")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "judge",
        help="run an LLM judge over a prompts file (cache, retries, concurrency, replay)",
        description="Generic judge runner. Families have their own 'judge' subcommands with the same options.",
    )
    jsub = p.add_subparsers(dest="judge_command", metavar="SUBCOMMAND")
    r = jsub.add_parser(
        "run",
        help="answer every prompt of a JSONL/JSON/CSV/TSV file",
        description="Answer every record's prompt (the --prompt-field, or the --judge-template rendered "
        "with the record's fields; a null prompt is not sent) and write one JSON line per record to --records: "
        '{"id", "answer", "error"}, or the record itself with --answer-field. '
        "The run stats (judge_calls, judge_cache_hits, judge_failures, "
        "judge_unparseable) are the report on stdout (or --output [FORMAT:]PATH) and can be gated; "
        "exit 1 when any call failed or a --gate fails.",
    )
    r.add_argument("--input", required=True, metavar="PROMPTS.jsonl", help="records with an id and a prompt")
    add_records_option(r, what="the answers, one JSON line per record")
    r.add_argument(
        "--id-field", default="id", metavar="NAME", help="record id field (default: id; else the line number)"
    )
    r.add_argument(
        "--prompt-field",
        default="prompt",
        metavar="NAME",
        help="prompt field when no template is given (default: prompt)",
    )
    r.add_argument(
        "--answer-field",
        metavar="NAME",
        help="write each input record back with the answer under NAME (and judge_error when the call failed) "
        "instead of {id, answer, error}; e.g. --prompt-field judge_prompt --answer-field evaluation for rgb",
    )
    r.add_argument("--system", metavar="TEXT", help="system message sent with every prompt")
    r.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="generation parameter sent with every prompt (VALUE parsed as JSON, else a string), "
        "e.g. temperature=0; repeatable",
    )
    _cli_judge.add_judge_options(r)
    add_report_options(r)
    r.set_defaults(func=run)
    register_agreement(jsub)
    p.set_defaults(func=_no_subcommand)


def _no_subcommand(args: argparse.Namespace, io: CliIO) -> int:
    raise ScoringError("judge: choose a subcommand: run, agreement (see rageval-min judge --help)")


def parse_params(values: List[str], system: Optional[str]) -> Dict[str, Any]:
    """``--param KEY=VALUE`` values (JSON where it parses) plus ``system``."""
    out: Dict[str, Any] = {}
    for v in values:
        key, sep, raw = v.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ScoringError(f"--param {v!r}: expected KEY=VALUE")
        if key in ("model", "messages", "system"):
            raise ScoringError(f"--param {key}: set it with --judge-model / --system instead")
        try:
            out[key] = json.loads(raw)
        except (ValueError, RecursionError):
            out[key] = raw
    if system is not None:
        out["system"] = system
    _cli_judge.check_text(system, "--system")
    try:
        json.dumps(out, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ScoringError("--param: not valid UTF-8 text (a lone surrogate or undecodable bytes)") from None
    except ValueError:
        raise ScoringError("--param: NaN and Infinity are not JSON numbers; give a finite number") from None
    return out


def _load_template(values: Optional[List[str]]) -> Optional[judges.PromptTemplate]:
    if not values:
        return None
    if len(values) > 1:
        raise ScoringError("judge run takes one --judge-template")
    path = values[0]
    text = read_text(path, what="judge template")
    return judges.PromptTemplate(text, judges.template_fields(text), source=path)


def _non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


class Prompts(NamedTuple):
    """What :func:`read_prompts` found: per record its id, prompt (``None``: not for the judge) and the record."""

    ids: List[Any]
    prompts: List[Optional[str]]
    records: List[Dict[str, Any]]


def read_prompts(
    path: str,
    *,
    id_field: str = "id",
    prompt_field: str = "prompt",
    template: Optional[judges.PromptTemplate] = None,
) -> Prompts:
    """The ids and prompts of a prompts file (every bad record reported at once).

    A record whose prompt field is JSON ``null`` is not sent to the judge (a
    family marks records that way, e.g. pairwise exact matches).
    """
    out = Prompts([], [], [])
    problems = Problems()
    for line, rec in iter_records(path):
        bad = first_bad_path(rec, _non_finite)
        if bad is not None:
            problems.add(
                "a number that overflows a float (or NaN) cannot be written back", path=path, line=line, field=bad
            )
            continue
        rid = rec.get(id_field, line)
        prompt: Optional[str]
        if template is not None:
            missing = [f for f in template.fields if f not in rec]
            if missing:
                problems.add("missing template field", path=path, line=line, field=",".join(missing))
                continue
            values = {
                f: (rec[f] if isinstance(rec[f], str) else json.dumps(rec[f], ensure_ascii=False))
                for f in template.fields
            }
            prompt = template.render(**values)
        else:
            value = rec.get(prompt_field)
            if prompt_field not in rec or (value is not None and not isinstance(value, str)):
                what = "missing" if prompt_field not in rec else f"not a string ({type(value).__name__})"
                problems.add(what, path=path, line=line, field=prompt_field)
                continue
            prompt = value
        out.ids.append(rid)
        out.prompts.append(prompt)
        out.records.append(rec)
    problems.raise_if_any()
    return out


def compute(
    runner: judges.JudgeRunner,
    data: Prompts,
    *,
    params: Dict[str, Any],
    template: Optional[judges.PromptTemplate],
    answer_field: Optional[str] = None,
) -> Tuple[Report, List[Dict[str, Any]]]:
    """Ask the judge; return the stats report and the output rows.

    Output rows are ``{"id", "answer", "error"}``, or with ``answer_field`` the
    input record with the answer stored under that name (``null`` when the
    call failed, with ``judge_error`` holding the message).
    """
    asked = [i for i, p in enumerate(data.prompts) if p is not None]
    to_ask: List[str] = [p for p in data.prompts if p is not None]
    res = runner.run(to_ask, params=params, label="judge run")
    n = len(data.prompts)
    answers: List[Optional[str]] = [None] * n
    errors: List[Optional[str]] = [None] * n
    for k, i in enumerate(asked):
        answers[i] = res.answers[k]
        errors[i] = res.errors[k]
    rows: List[Dict[str, Any]] = []
    for rid, rec, a, e in zip(data.ids, data.records, answers, errors):
        if answer_field is None:
            rows.append({"id": rid, "answer": a, "error": e})
        else:
            row = dict(rec)
            row[answer_field] = a
            if e is not None:
                row["judge_error"] = e
            rows.append(row)
    judge = runner.judge
    sig = make_signature(
        "judge",
        REF,
        (),
        [
            ("judge", judge.identity),
            ("judge_model", getattr(judge, "model", "") or "none"),
            ("judge_template", template.signature_value if template is not None else "none"),
            ("params", judges.canonical_json(params)),
        ],
    )
    stats = res.stats
    failures_ok = stats.failures == 0
    metrics: Dict[str, Any] = dict(stats.as_metrics())
    metrics["judge_skipped"] = n - len(asked)
    report = Report(
        family="judge",
        signature=sig,
        result=dict([("records", n), ("skipped", n - len(asked))] + list(stats._asdict().items())),
        metrics=metrics,
        diagnostics=[f"{i}: {e}" for i, e in zip(data.ids, errors) if e is not None][:20],
        reference_pass=None,
        family_gates=[GateOutcome("judge_failures", "==", 0.0, stats.failures, failures_ok, "judge_failures==0")],
    )
    return report, rows


def run(args: argparse.Namespace, io: CliIO) -> int:
    # --records is the answers file; the stats report goes to --output or stdout.
    prepare(args, inputs=[args.input], metric_names=METRICS)
    for value, option in (
        (args.id_field, "--id-field"),
        (args.prompt_field, "--prompt-field"),
        (args.answer_field, "--answer-field"),
    ):
        _cli_judge.check_text(value, option)
    template = _load_template(args.judge_template)
    args.judge_template = None  # the generic command renders the template itself
    params = parse_params(args.param, args.system)
    runner = _cli_judge.judge_from_args(args, stderr=io.stderr)
    try:
        data = read_prompts(args.input, id_field=args.id_field, prompt_field=args.prompt_field, template=template)
        report, rows = compute(runner, data, params=params, template=template, answer_field=args.answer_field)
    finally:
        runner.close()
    write_jsonl(args.records, rows)
    return emit_report(report, args, io)
