"""Pipeline step: command-line options of the judge and BERTScore adapters (argparse only; no scoring).

:mod:`rageval_min.judges` is the adapter interface, transports, cache and
runner; this module turns ``--judge*`` and ``--bertscore*`` options into the
objects it defines.
"""

import argparse
import sys
import time
from typing import Any, Callable, Dict, Optional, Sequence, TextIO

from .._extras import load_extra
from .._numbers import option_float, option_int
from ..errors import ScoringError
from ..report import Report
from .interface import (
    DEFAULT_ABORT_AFTER,
    DEFAULT_API_KEY_ENV,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    MAX_CONCURRENCY,
    MAX_MAX_RESPONSE_BYTES,
    MAX_RETRIES,
    MAX_TIMEOUT,
    MIN_MAX_RESPONSE_BYTES,
    EmbeddingScorer,
)
from .runner import JudgeRunner, RunnerOptions
from .templates import templates_from_args
from .trust_options import add_trust_options, trust_from_args

__all__ = [
    "add_bertscore_options",
    "check_text",
    "add_judge_options",
    "judge_from_args",
    "judge_model",
    "runner_options_from_args",
    "scorer_from_args",
    "with_judge_stats",
]


def _checked(low: int, high: Optional[int], rule: str) -> Callable[[str], int]:
    """An argparse ``type=`` for an integer in ``[low, high]`` (a thin wrapper over ``_numbers``)."""
    return option_int(low, high, invalid="not an integer: {text}", outside=rule)


_positive_int = _checked(1, None, "must be at least 1")
_nonneg_int = _checked(0, None, "must be >= 0")
_concurrency = _checked(1, MAX_CONCURRENCY, f"must be between 1 and {MAX_CONCURRENCY}")
_retries = _checked(0, MAX_RETRIES, f"must be between 0 and {MAX_RETRIES}")
_timeout = option_float(
    0.0,
    MAX_TIMEOUT,
    low_open=True,
    invalid="not a number: {text}",
    outside=f"must be a number of seconds in (0, {MAX_TIMEOUT:g}]",
)
_response_bytes = _checked(
    MIN_MAX_RESPONSE_BYTES,
    MAX_MAX_RESPONSE_BYTES,
    f"must be between {MIN_MAX_RESPONSE_BYTES} and {MAX_MAX_RESPONSE_BYTES}",
)


def check_text(value: Optional[str], option: str) -> Optional[str]:
    """``value`` if it is valid text; a ScoringError for bytes that were not UTF-8 on the command line."""
    if value is None:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ScoringError(f"{option}: not valid UTF-8 text") from None
    return value


def add_judge_options(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """Add the shared judge options to a family's ``judge`` sub-parser."""
    g = parser.add_argument_group("judge")
    g.add_argument(
        "--judge",
        required=required,
        metavar="SPEC",
        help='http://HOST:PORT/v1 | openai:MODEL | cmd:"PROGRAM ARGS" | replay:CACHE.jsonl',
    )
    g.add_argument("--judge-model", metavar="NAME", help="model name sent to the server (required for http judges)")
    g.add_argument("--judge-cache", metavar="FILE", help="JSONL answer cache: reused, appended, survives a kill")
    g.add_argument(
        "--concurrency",
        type=_concurrency,
        default=1,
        metavar="N",
        help=f"judge calls in flight (default 1, at most {MAX_CONCURRENCY})",
    )
    g.add_argument(
        "--judge-timeout",
        type=_timeout,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"total time of one call, connecting to last byte (default {DEFAULT_TIMEOUT:g}, at most {MAX_TIMEOUT:g})",
    )
    g.add_argument(
        "--judge-retries",
        type=_retries,
        default=DEFAULT_RETRIES,
        metavar="N",
        help=f"retries on 429/5xx/timeouts, exponential backoff (default {DEFAULT_RETRIES}, at most {MAX_RETRIES})",
    )
    g.add_argument(
        "--judge-max-response-bytes",
        type=_response_bytes,
        default=DEFAULT_MAX_RESPONSE_BYTES,
        metavar="N",
        help=f"largest HTTP response read; a larger one is a failed call (default {DEFAULT_MAX_RESPONSE_BYTES}, "
        f"{MIN_MAX_RESPONSE_BYTES}..{MAX_MAX_RESPONSE_BYTES})",
    )
    g.add_argument(
        "--judge-abort-after",
        type=_nonneg_int,
        default=DEFAULT_ABORT_AFTER,
        metavar="N",
        help=f"stop after N consecutive failed calls, 0 = never (default {DEFAULT_ABORT_AFTER})",
    )
    g.add_argument(
        "--judge-api-key-env",
        metavar="VAR",
        help=f"environment variable holding the API key (default {DEFAULT_API_KEY_ENV} for http, "
        "OPENAI_API_KEY for openai:)",
    )
    g.add_argument(
        "--judge-pass-env",
        action="store_true",
        help=f"let a cmd: judge program see the API key variables ({DEFAULT_API_KEY_ENV}, OPENAI_API_KEY and "
        "--judge-api-key-env); they are removed from its environment by default",
    )
    g.add_argument(
        "--judge-template",
        action="append",
        metavar="[STEP=]FILE",
        help="use this prompt template (with {placeholder} fields) instead of the built-in wording",
    )
    add_trust_options(parser)


def judge_from_args(
    args: argparse.Namespace,
    *,
    steps: Sequence[str] = (),
    stderr: Optional[TextIO] = None,
    sleep: Callable[[float], None] = time.sleep,
    template_files: Optional[Sequence[str]] = None,
) -> JudgeRunner:
    """Build the :class:`JudgeRunner` that the options of :func:`add_judge_options` describe.

    What was recovered from a damaged judge cache (a byte-order mark, lines of
    NUL bytes, an unfinished last line) is said on ``stderr``, one note a line.
    ``template_files`` are the ``--judge-template`` values when the caller has
    taken them out of ``args`` (a family that renders its own template); the
    ``--require-calibration`` check hashes them.
    """
    for value, option in (
        (args.judge, "--judge"),
        (args.judge_model, "--judge-model"),
        (args.judge_api_key_env, "--judge-api-key-env"),
    ):
        check_text(value, option)
    from .replay import ReplayJudge
    from .spec import judge_from_spec

    judge = judge_from_spec(
        args.judge,
        model=args.judge_model,
        timeout=args.judge_timeout,
        api_key_env=args.judge_api_key_env,
        max_response_bytes=getattr(args, "judge_max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES),
        pass_env=bool(getattr(args, "judge_pass_env", False)),
    )
    templates = templates_from_args(args.judge_template, steps)
    files = args.judge_template if template_files is None else template_files
    sampling, ledger = trust_from_args(args, judge, templates_from_args(files, steps))
    runner = JudgeRunner(
        judge,
        cache_path=args.judge_cache,
        options=runner_options_from_args(args, stderr=stderr, sleep=sleep),
        templates=templates,
        sampling=sampling,
        ledger=ledger,
    )
    err = stderr if stderr is not None else sys.stderr
    found = [(args.judge_cache, runner.cache.notes if runner.cache is not None else [])]
    if isinstance(judge, ReplayJudge):
        found.append((judge.path, judge.notes))
    for path, notes in found:
        for note in notes:
            err.write(f"rageval-min: note: judge cache {path}: {note}\n")
    return runner


def runner_options_from_args(
    args: argparse.Namespace,
    *,
    stderr: Optional[TextIO] = None,
    sleep: Callable[[float], None] = time.sleep,
) -> RunnerOptions:
    """The :class:`RunnerOptions` of ``--concurrency``, ``--judge-retries`` and ``--judge-abort-after``.

    The progress line goes to ``stderr`` (``sys.stderr`` when not given).
    """
    return RunnerOptions(
        concurrency=args.concurrency,
        retries=args.judge_retries,
        abort_after=args.judge_abort_after,
        sleep=sleep,
        progress=stderr if stderr is not None else sys.stderr,
    )


def add_bertscore_options(parser: argparse.ArgumentParser) -> None:
    """Add the BERTScore options (the ``bertscore`` extra) to a family's parser."""
    g = parser.add_argument_group("BERTScore (extra: pip install 'rageval-min[bertscore]')")
    g.add_argument(
        "--bertscore",
        action="store_true",
        help="compute the BERTScore-based metrics (default model microsoft/deberta-xlarge-mnli, layer 40)",
    )
    g.add_argument("--bertscore-model", metavar="NAME_OR_PATH", help="model name or local folder (implies --bertscore)")
    g.add_argument(
        "--bertscore-layers", type=_positive_int, metavar="N", help="layer to use (required for a local model)"
    )
    g.add_argument(
        "--bertscore-baseline", metavar="FILE", help="rescaling baseline CSV (LAYER,P,R,F) for a local model"
    )
    g.add_argument("--bertscore-no-rescale", action="store_true", help="raw scores, no baseline rescaling")
    g.add_argument("--bertscore-device", metavar="DEVICE", help="torch device (default: cuda when available, else cpu)")


def scorer_from_args(args: argparse.Namespace) -> Optional[EmbeddingScorer]:
    """The :class:`EmbeddingScorer` that :func:`add_bertscore_options` describe, or ``None``.

    Loads ``rageval_min_extras.bertscore`` only when BERTScore was asked for;
    a missing extra is a :class:`~rageval_min.errors.ScoringError` naming
    the pip command.
    """
    model = getattr(args, "bertscore_model", None)
    if not (getattr(args, "bertscore", False) or model):
        return None
    mod = load_extra("bertscore")
    kwargs: Dict[str, Any] = {
        "rescale_with_baseline": not args.bertscore_no_rescale,
        "baseline_path": args.bertscore_baseline,
        "device": args.bertscore_device,
    }
    if model:
        kwargs["model_type"] = model
    scorer: EmbeddingScorer = mod.BertScorer(num_layers=args.bertscore_layers, **kwargs)
    return scorer


def judge_model(runner: JudgeRunner) -> str:
    """The model name a judged result records in its signature (``judge_model=``; ``none`` if unnamed)."""
    return str(getattr(runner.judge, "model", "") or "none")


def with_judge_stats(report: Report, runner: JudgeRunner) -> Report:
    """``report`` with the run's judge statistics added to its gateable metrics.

    With ``--samples N`` > 1 the sampling statistics follow, then the usage
    metrics (when any answer reported usage, or a price table or budget was
    given; :meth:`JudgeRunner.extra_metrics`).  The signature is not touched:
    a family composes ``judge_model`` into it as a parameter (see
    :func:`judge_model`).
    """
    metrics = dict(report.metrics)
    metrics.update(runner.stats.as_metrics())
    metrics.update(runner.extra_metrics())
    return report._replace(metrics=metrics)
