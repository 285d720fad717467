"""Pipeline step: calibration records -- a ``judge agreement`` result bound to the judge it measured.

``judge agreement --emit-calibration FILE`` writes one JSON object::

    {"kind": "rageval-min judge calibration", "version": 1,
     "judge": {"spec": ..., "model": ..., "template_hash": ...},
     "labels": {"sha256": ...}, "judged": {"sha256": ...},
     "signature": ..., "status": "ok" | "insufficient data", "n": ...,
     "metrics": {...every gateable value...},
     "gates": [{"gate": "kappa>=0.6", "passed": true}, ...], "pass": true}

``template_hash`` is ``builtin`` or the first 12 hex digits of the sha256 of
the template file's bytes (what a judge command's signature records as
``judge_template``).  :func:`check_calibration` is what a judge command given
``--require-calibration FILE`` runs before it may gate: the record must be one
of these, name the same judge spec, model and template hash (and label file,
when the caller names one), have passed, and every gate it names -- re-evaluated
on its metrics, so an edited ``passed`` flag does not count -- must hold, as
must any further gate the caller requires.
"""

import hashlib
import json
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence

from .._io import read_text
from .._output import atomic_writer
from ..errors import ScoringError
from ..gates import GateOutcome, evaluate_gates, parse_gate

__all__ = ["KIND", "VERSION", "calibration_record", "check_calibration", "template_hash", "write_calibration"]

KIND = "rageval-min judge calibration"
VERSION = 1


def template_hash(path: Optional[str]) -> str:
    """``builtin`` for no template (or the word ``builtin``), else the 12-hex-digit sha256 prefix of the file."""
    if path is None or path == "builtin":
        return "builtin"
    text = read_text(path, what="judge template")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def calibration_record(
    *,
    spec: str,
    model: str,
    template: str,
    labels_sha256: str,
    judged_sha256: str,
    signature: str,
    result: Mapping[str, Any],
    metrics: Mapping[str, Any],
    outcomes: Sequence[GateOutcome],
    passed: bool,
) -> Dict[str, Any]:
    """The calibration record (see the module docstring) of one ``judge agreement`` run."""
    return {
        "kind": KIND,
        "version": VERSION,
        "judge": {"spec": spec, "model": model, "template_hash": template},
        "labels": {"sha256": labels_sha256},
        "judged": {"sha256": judged_sha256},
        "signature": signature,
        "status": result.get("status"),
        "n": result.get("n"),
        "metrics": dict(metrics),
        "gates": [{"gate": o.text, "passed": o.passed} for o in outcomes],
        "pass": passed,
    }


def write_calibration(path: str, record: Mapping[str, Any]) -> None:
    """Write ``record`` to ``path`` atomically (strict JSON, one object and a newline)."""
    with atomic_writer(path) as fh:
        fh.write(json.dumps(record, ensure_ascii=False, allow_nan=False, indent=2) + "\n")


def _load(path: str) -> Dict[str, Any]:
    try:
        record = json.loads(read_text(path, what="calibration record"))
    except ValueError as exc:
        raise ScoringError(f"not a calibration record (invalid JSON: {exc})", path=path) from None
    if not isinstance(record, dict) or record.get("kind") != KIND:
        raise ScoringError(f"not a calibration record (expected kind {KIND!r})", path=path, field="kind")
    if record.get("version") != VERSION:
        raise ScoringError(f"unsupported version {record.get('version')!r} (expected {VERSION})", path=path)
    for key in ("judge", "labels", "metrics"):
        if not isinstance(record.get(key), dict):
            raise ScoringError("missing or not an object", path=path, field=key)
    if not isinstance(record.get("gates"), list):
        raise ScoringError("missing or not a list", path=path, field="gates")
    return record


def _metrics(record: Dict[str, Any], path: str) -> Dict[str, Optional[float]]:
    out: Dict[str, Optional[float]] = {}
    for name, value in record["metrics"].items():
        ok = value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value))
        if not ok:
            raise ScoringError(f"not a number: {value!r}", path=path, field=f"metrics.{name}")
        out[name] = value
    return out


def _gates(record: Dict[str, Any], path: str) -> List[str]:
    texts = []
    for i, g in enumerate(record["gates"]):
        if not isinstance(g, dict) or not isinstance(g.get("gate"), str):
            raise ScoringError("expected {gate, passed}", path=path, field=f"gates[{i}]")
        texts.append(g["gate"])
    return texts


def check_calibration(
    record_path: str,
    *,
    spec: str,
    model: str,
    template_hash: str,
    labels_sha256: Optional[str] = None,
    require: Sequence[str] = (),
) -> None:
    """Return when the calibration record at ``record_path`` vouches for this judge, else raise ScoringError.

    Checked in order: the file is a calibration record of this version; its
    judge spec, model and template hash equal the given ones; its labels
    sha256 equals ``labels_sha256`` (when given); its status is ``ok`` and it
    passed; each gate it names, and each gate of ``require`` (``"NAME OP
    VALUE"`` texts), holds on its metrics (an undefined value fails).  The
    error names the record and the field that did not match.
    """
    record = _load(record_path)
    judge = record["judge"]
    for key, want in (("spec", spec), ("model", model), ("template_hash", template_hash)):
        if judge.get(key) != want:
            raise ScoringError(
                f"the calibration is for {key} {judge.get(key)!r}, not {want!r}", path=record_path, field=f"judge.{key}"
            )
    if labels_sha256 is not None and record["labels"].get("sha256") != labels_sha256:
        raise ScoringError("the calibration was made on another label file", path=record_path, field="labels.sha256")
    if record.get("status") != "ok":
        raise ScoringError(f"the calibration status is {record.get('status')!r}", path=record_path, field="status")
    if record.get("pass") is not True:
        raise ScoringError("the calibration did not pass its gates", path=record_path, field="pass")
    metrics = _metrics(record, record_path)
    texts = _gates(record, record_path) + list(require)
    gates = [parse_gate(t) for t in texts]
    unknown = [g.text for g in gates if g.name not in metrics]
    if unknown:
        raise ScoringError(f"gate {unknown[0]!r} names no metric of the calibration", path=record_path)
    for outcome in evaluate_gates(gates, metrics):
        if not outcome.passed:
            value = "undefined" if outcome.value is None else repr(outcome.value)
            raise ScoringError(f"calibration gate {outcome.text} fails: {value}", path=record_path)
