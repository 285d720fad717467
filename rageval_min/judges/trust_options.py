"""Pipeline step: the judge options of issue #26 -- sampling, usage and cost, budgets, required calibration.

Added to every judge command by :func:`rageval_min.judges.options.add_judge_options`
and read by :func:`~rageval_min.judges.options.judge_from_args`, which hands
the runner a :class:`~rageval_min.judges.sampled.Sampling` and a
:class:`~rageval_min.judges.accounting.Ledger`:

``--samples N``, ``--pass-rule RULE``, ``--tie fail|pass|undetermined``
    repeated sampling (:mod:`rageval_min.judges.sampled`);
``--price-table FILE``
    prices in dollars per 1,000,000 tokens (:mod:`rageval_min.judges.cost`;
    JSON, or TOML where Python has :mod:`tomllib`, 3.11+) -> ``judge_cost``;
``--budget-tokens N`` / ``--budget-usd X``
    stop before the call that would exceed the budget
    (:mod:`rageval_min.judges.accounting`);
``--require-calibration FILE``
    refuse to run (exit 2) unless the calibration record vouches for this
    judge spec, model and template (:func:`~rageval_min.judges.calibration.check_calibration`).

Every check here runs before the first judge call.
"""

import argparse
import json
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Mapping, Optional, Tuple

from .._io import read_text
from .._numbers import MAX_DECIMAL_EXPONENT, decimal_fault, option_int
from ..errors import ScoringError
from .accounting import Ledger
from .calibration import check_calibration, template_hash
from .cost import PriceTable, parse_price_table
from .sampled import Sampling
from .sampling import TIE_RULES

__all__ = ["add_trust_options", "load_prices", "template_hash_of", "trust_from_args"]


_samples = option_int(1, 1000, invalid="not an integer: {text}", outside="must be between 1 and 1000")
_tokens = option_int(0, invalid="not an integer: {text}", outside="must be >= 0")


def _usd(text: str) -> Fraction:
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"not a decimal number: {text!r}") from None
    fault = decimal_fault(d)
    if fault == "size":
        size = f"at most {MAX_DECIMAL_EXPONENT} digits either side of the point"
        raise argparse.ArgumentTypeError(f"must be a number >= 0 of {size}")
    if fault is not None:
        raise argparse.ArgumentTypeError("must be a finite number >= 0")
    return Fraction(d)


def add_trust_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--samples``, ``--pass-rule``, ``--tie``, ``--price-table``, the budgets and ``--require-calibration``."""
    g = parser.add_argument_group("judge sampling, cost and calibration")
    g.add_argument(
        "--samples",
        type=_samples,
        default=1,
        metavar="N",
        help="ask each judged item N times (default 1); each sample is cached under its own key",
    )
    g.add_argument(
        "--pass-rule",
        default="majority",
        metavar="RULE",
        help="how the N samples decide: majority (default), all, any, at-least:K, rate:R, median, mean",
    )
    g.add_argument("--tie", default="fail", choices=TIE_RULES, help="what a tie becomes (default fail)")
    g.add_argument(
        "--price-table",
        metavar="FILE",
        help='prices per 1M tokens, {"models": {"MODEL": {"prompt": P, "completion": C, "cached": R}}} '
        "(JSON; TOML on Python 3.11+); adds judge_cost",
    )
    g.add_argument(
        "--budget-tokens",
        type=_tokens,
        metavar="N",
        help="stop (exit 2) before the call that would take the tokens spent past N; a rerun resumes",
    )
    g.add_argument(
        "--budget-usd",
        type=_usd,
        metavar="X",
        help="stop (exit 2) before the call that would take the dollars spent past X (needs --price-table)",
    )
    g.add_argument(
        "--require-calibration",
        metavar="FILE",
        help="refuse to run unless this judge agreement --emit-calibration record matches the judge "
        "spec, model and template and its gates hold",
    )


def load_prices(path: str) -> PriceTable:
    """The price table at ``path``: JSON, or TOML (``.toml``) where :mod:`tomllib` exists (Python 3.11+)."""
    text = read_text(path, what="price table")
    if not path.lower().endswith(".toml"):
        return parse_price_table(text, path=path)
    import importlib

    try:
        tomllib = importlib.import_module("tomllib")  # Python 3.11+; checked at run time, so 3.9 still imports us
    except ImportError:
        raise ScoringError("a TOML price table needs Python 3.11 or later; write it as JSON", path=path) from None
    try:
        data = tomllib.loads(text)
    except ValueError as exc:
        raise ScoringError(f"price table is not TOML: {exc}", path=path) from None
    return parse_price_table(json.dumps(data, default=str), path=path)


def template_hash_of(paths: Mapping[str, str]) -> str:
    """The template hash a calibration record names: ``builtin``, one file's hash, or ``STEP=hash,...``."""
    if not paths:
        return "builtin"
    if len(paths) == 1:
        return template_hash(next(iter(paths.values())))
    return ",".join(f"{step}={template_hash(p)}" for step, p in sorted(paths.items()))


def _check_budget(args: argparse.Namespace, judge: Any, prices: Optional[PriceTable], model: str) -> None:
    tokens, usd = getattr(args, "budget_tokens", None), getattr(args, "budget_usd", None)
    budgeted = tokens is not None or usd is not None
    if usd is not None and prices is None:
        raise ScoringError("--budget-usd needs --price-table", field="--budget-usd")
    live = getattr(judge, "cacheable", True)
    if budgeted and live and not callable(getattr(judge, "answer_full", None)):
        raise ScoringError(
            "a budget needs a judge that reports token usage (http(s)://, openai:, or replay:), not " + judge.identity,
            field="--budget-tokens" if tokens is not None else "--budget-usd",
        )
    if prices is not None and model not in prices:
        raise ScoringError(f"the price table has no model {model!r}", path=args.price_table)


def trust_from_args(args: argparse.Namespace, judge: Any, template_paths: Mapping[str, str]) -> Tuple[Sampling, Ledger]:
    """The :class:`Sampling` and :class:`Ledger` the options describe; every check before any call."""
    sampling = Sampling.parse(
        getattr(args, "samples", 1), getattr(args, "pass_rule", "majority"), getattr(args, "tie", "fail")
    )
    model = str(getattr(judge, "model", "") or "")
    path = getattr(args, "price_table", None)
    prices = load_prices(path) if path else None
    _check_budget(args, judge, prices, model)
    required = getattr(args, "require_calibration", None)
    if required:
        check_calibration(required, spec=args.judge, model=model, template_hash=template_hash_of(template_paths))
    ledger = Ledger(
        model=model,
        prices=prices,
        budget_tokens=getattr(args, "budget_tokens", None),
        budget_usd=getattr(args, "budget_usd", None),
    )
    return sampling, ledger
