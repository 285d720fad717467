"""The report model: what a family hands to the renderers (a leaf: it imports no renderer).

``metrics`` holds every gateable numeric output, unrounded, under its canonical
name; ``result`` is the JSON payload; ``family_gates`` are gates the family
evaluates itself (a reference's own pass/fail).
"""

from __future__ import annotations

import math

from ..gates import GateOutcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Union
else:
    from .._namedtuple import NamedTuple

__all__ = [
    "SHORT_CIRCUIT",
    "Report",
    "format_number",
    "gate_rows",
    "gate_status",
    "interval_text",
    "overall_pass",
    "own_outcome",
    "status_word",
]

if TYPE_CHECKING:
    Number = Union[int, float]


class Report(NamedTuple):
    """What a family hands to the CLI.

    ``metrics`` holds every gateable numeric output, unrounded, under its
    canonical name; ``result`` is the JSON payload.  ``family_gates`` are gates
    the family itself evaluates (a reference's own pass/fail), reported next to
    the user's ``--gate`` outcomes; ``reference_pass`` is their verdict.
    """

    family: str
    signature: str
    result: Dict[str, Any]
    metrics: Dict[str, Optional[Number]]
    diagnostics: List[str] = []
    reference_pass: Optional[bool] = None
    family_gates: Sequence[GateOutcome] = ()
    #: ``--intervals``: metric -> {"method", "level", "low", "high"}; written beside ``result``, never in it.
    intervals: Optional[Dict[str, Dict[str, Any]]] = None


def overall_pass(report: Report, outcomes: Sequence[GateOutcome]) -> bool:
    """True unless the reference's own gates or any user gate failed."""
    if report.reference_pass is False:
        return False
    return all(o.passed is not False for o in list(report.family_gates) + list(outcomes))


def format_number(value: Any, *, digits: int = 6, exact_from: float = 1e6) -> str:
    """A value for text output: floats to ``digits`` significant digits, in full from
    ``exact_from`` up; ints, bools and None (``n/a``) as they are.

    >>> format_number(2 / 3), format_number(1234567.5), format_number(2 / 3, digits=4)
    ('0.666667', '1234567.5', '0.6667')
    """
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        return f"{value:.{digits}g}" if abs(value) < exact_from else repr(value)
    return str(value)


def interval_text(report: Report, name: str) -> str:
    """``[low, high]`` of ``name``'s ``--intervals`` interval for people ("" without one)."""
    iv = (report.intervals or {}).get(name)
    if not iv or iv.get("low") is None or iv.get("high") is None:
        return ""
    return f"[{format_number(iv['low'])}, {format_number(iv['high'])}]"


def status_word(passed: Optional[bool]) -> str:
    """``pass``, ``FAIL`` or ``skipped`` (a gate the reference did not evaluate)."""
    return {True: "pass", False: "FAIL", None: "skipped"}[passed]


#: What a gate the reference did not evaluate says beside its own outcome.
SHORT_CIRCUIT = "not evaluated by the reference: an earlier gate failed"


def own_outcome(o: GateOutcome) -> Optional[bool]:
    """A gate's outcome on its own value, also where the reference stopped before it (None: no value)."""
    if o.passed is not None or o.value is None:
        return o.passed
    from ..gates import compare

    return compare(o.value, o.op, o.threshold)


def gate_status(o: GateOutcome) -> str:
    """``pass``/``FAIL``, with the reference's short-circuit stated beside a gate it did not evaluate.

    >>> gate_status(GateOutcome("chr", ">=", 0.75, 0.6, None, "chr>=0.75"))
    'FAIL (not evaluated by the reference: an earlier gate failed)'
    """
    own = own_outcome(o)
    word = status_word(own)
    return word if o.passed is not None or own is None else f"{word} ({SHORT_CIRCUIT})"


def gate_rows(report: Report, outcomes: Sequence[GateOutcome]) -> List[GateOutcome]:
    """The family's own gates, then the user's."""
    return list(report.family_gates) + list(outcomes)
