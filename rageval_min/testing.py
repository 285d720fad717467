"""Test helpers for code that embeds rageval-min (stdlib only; importing this does not import pytest).

>>> from rageval_min.report import Report
>>> report = Report("grounding", "sig", {}, {"precision": 2 / 3, "chr": 0.9})
>>> assert_gates(report, "chr >= 0.75")
>>> assert_gates(report, "precision>=0.8", "chr>=0.75")
Traceback (most recent call last):
...
AssertionError: 1 of 2 gates failed (grounding):
  precision>=0.8: precision = 0.6667 (exactly 0.6666666666666666), required >= 0.8
"""

from typing import Any, List, Mapping, Optional, Union

from .gates import GateOutcome, evaluate_gates, parse_gate

__all__ = ["assert_gates"]

Number = Union[int, float]


def _metrics_of(report: Any) -> Mapping[str, Optional[Number]]:
    metrics = getattr(report, "metrics", None)
    if isinstance(metrics, Mapping):
        return metrics
    if isinstance(report, Mapping):
        return report
    raise TypeError(f"assert_gates: expected a Report (or a mapping of metric values), got {type(report).__name__}")


def _show(value: Any) -> str:
    if value is None:
        return "undefined (None)"
    if isinstance(value, float) and value == value and abs(value) < 1e6:
        short = f"{value:.4f}".rstrip("0").rstrip(".") or "0"
        return short if short == repr(value) else f"{short} (exactly {value!r})"
    return repr(value)


def _line(o: GateOutcome) -> str:
    threshold = int(o.threshold) if float(o.threshold).is_integer() else o.threshold
    return f"  {o.text}: {o.name} = {_show(o.value)}, required {o.op} {threshold}"


def assert_gates(report: Any, *gates: str) -> None:
    """Assert that every gate ``"NAME OP VALUE"`` holds on ``report.metrics``.

    ``report`` is a :class:`rageval_min.report.Report` (what the family
    file-level functions return) or a plain mapping of metric values.  Gates
    are parsed and evaluated by :mod:`rageval_min.gates` exactly as ``--gate``
    is: unrounded values, a None (undefined) or NaN value fails.  A gate with
    bad syntax, or naming a metric the report does not have, raises
    :class:`~rageval_min.errors.ScoringError` (a mistake in the test, not a
    failed gate).  On failure the AssertionError lists each failed gate with
    its value and threshold.
    """
    if not gates:
        raise ValueError("assert_gates: give at least one gate, e.g. 'precision>=0.8'")
    metrics = _metrics_of(report)
    outcomes = evaluate_gates([parse_gate(g) for g in gates], metrics)
    failed: List[GateOutcome] = [o for o in outcomes if o.passed is not True]
    if not failed:
        return
    family = getattr(report, "family", None)
    head = f"{len(failed)} of {len(outcomes)} gate{'s' if len(outcomes) != 1 else ''} failed"
    head += f" ({family}):" if family else ":"
    raise AssertionError("\n".join([head] + [_line(o) for o in failed]))
