"""The ``json`` format: one object, keys in the order ``family``, ``signature``, ``result``
(the family's payload in the reference's key order), ``intervals`` (with ``--intervals``),
``gates`` (``{gate, name, op, threshold, value, passed}``), ``pass``, ``diagnostics``; printed
with ``indent=2`` and a trailing newline.  Strict JSON: a non-finite number is written as
``null`` and a diagnostic says so.
"""

import json
import math
from typing import Any, Sequence

from ..gates import GateOutcome
from .model import Report, gate_rows, overall_pass

__all__ = ["render_json"]


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


def render_json(report: Report, outcomes: Sequence[GateOutcome]) -> str:
    obj = {
        "family": report.family,
        "signature": report.signature,
        "result": report.result,
        **({"intervals": report.intervals} if report.intervals is not None else {}),
        "gates": [
            {
                "gate": o.text,
                "name": o.name,
                "op": o.op,
                "threshold": o.threshold,
                "value": _json_value(o.value),
                "passed": o.passed,
            }
            for o in gate_rows(report, outcomes)
        ],
        "pass": overall_pass(report, outcomes),
        "diagnostics": list(report.diagnostics),
    }
    try:
        return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError:  # a NaN or an infinity: strict JSON writes null, and says so
        from .._io import finite_json

        clean, replaced = finite_json(obj)
        clean["diagnostics"].append(f"{replaced} non-finite number(s) (NaN or infinity) written as null")
        return json.dumps(clean, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
