"""``rageval-min judge run``: ask a judge every prompt of a file, through the runner.

The generic face of :mod:`rageval_min.judges`, usable without any metric family:
the cache, retries, concurrency and replay work exactly as in a family's
``judge`` subcommand.
"""

import argparse
import json
from typing import Any, Dict, List, Optional

from .._cli_common import CliIO, add_records_option, add_report_options, emit_report, prepare
from .._io import read_text, write_jsonl
from ..errors import ScoringError
from . import options as _cli_judge
from .agreement_cli import register_agreement
from .judge_run import Prompts, compute, read_prompts
from .stats_metrics import TRUST_METRIC_NAMES
from .templates import PromptTemplate, template_fields

__all__ = ["register", "run", "compute", "parse_params", "read_prompts", "Prompts", "METRICS"]

#: The gateable metrics of ``judge run``.
METRICS = (
    "judge_calls",
    "judge_cache_hits",
    "judge_failures",
    "judge_unparseable",
    "judge_skipped",
) + TRUST_METRIC_NAMES


def register(sub: Any) -> None:
    p = sub.add_parser(
        "judge",
        help="run an LLM judge over a prompts file (cache, retries, concurrency, replay)",
        description="Generic judge runner. Families have their own 'judge' subcommands with the same options.",
    )
    jsub = p.add_subparsers(dest="judge_command", metavar="SUBCOMMAND")
    _register_run(jsub)
    register_agreement(jsub)
    p.set_defaults(func=_no_subcommand)


def _register_run(jsub: Any) -> None:
    """``judge run``: its options."""
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


def _load_template(values: Optional[List[str]]) -> Optional[PromptTemplate]:
    if not values:
        return None
    if len(values) > 1:
        raise ScoringError("judge run takes one --judge-template")
    path = values[0]
    text = read_text(path, what="judge template")
    return PromptTemplate(text, template_fields(text), source=path)


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
    files, args.judge_template = args.judge_template, None  # the generic command renders the template itself
    params = parse_params(args.param, args.system)
    runner = _cli_judge.judge_from_args(args, stderr=io.stderr, template_files=files)
    try:
        data = read_prompts(args.input, id_field=args.id_field, prompt_field=args.prompt_field, template=template)
        report, rows = compute(runner, data, params=params, template=template, answer_field=args.answer_field)
    finally:
        runner.close()
    write_jsonl(args.records, rows)
    return emit_report(report, args, io)
