"""Pipeline step: who wrote two item-row files, and so what their metrics mean.

Every row rageval-min writes with ``--per-item`` ends with the field
``_rageval_min``: ``"<family> <command> <parameter digest>"`` (see
:func:`rageval_min._contract.params_digest`).  From it ``compare`` learns, with
no ``--family``:

* which family and command wrote the rows, and so each metric's declared
  direction (``METRICS`` of the command's accumulator) and the key (an item
  row's first field);
* whether the two files are comparable at all: rows of different commands, or
  of the same command run with different parameters, are refused, and so is a
  file that mixes writers or a pair where only one side says who wrote it.

A metric whose direction nobody declared is an input error, never a silent
"higher is better".
"""

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .._contract import PROVENANCE_FIELD, accumulator_class, params_digest
from .._io import iter_jsonl
from .._metrics import Metric, find_metric
from ..errors import ScoringError

__all__ = ["Writer", "declared_directions", "resolve", "sniff"]


class Writer(NamedTuple):
    """What the first row of a file says about it."""

    path: str
    #: ``(family, command, digest)`` or None when the rows do not say
    writer: Optional[Tuple[str, str, str]]
    #: the first field of the first row (an item row's natural key)
    first_field: Optional[str]
    #: the line of the first row (None: the file has none)
    line: Optional[int] = None


def _parse(text: Any, path: str, line: int) -> Tuple[str, str, str]:
    parts = text.split(" ") if isinstance(text, str) else []
    if len(parts) != 3 or not all(parts):
        raise ScoringError("expected '<family> <command> <digest>'", path=path, line=line, field=PROVENANCE_FIELD)
    return parts[0], parts[1], parts[2]


def sniff(path: str) -> Writer:
    """The writer and the first field of ``path``'s first row (reads one record)."""
    for line, rec in iter_jsonl(path):
        if not isinstance(rec, dict) or not rec:
            return Writer(path, None, None, line)
        writer = _parse(rec[PROVENANCE_FIELD], path, line) if PROVENANCE_FIELD in rec else None
        return Writer(path, writer, next(iter(rec)), line)
    return Writer(path, None, None)


def _default_params(family: str, command: str, digest: str) -> Optional[Dict[str, Any]]:
    """The accumulator's default parameters when they are the ones the rows were written with."""
    try:
        params = dict(accumulator_class(family, command)().params)
    except (TypeError, ScoringError):  # an accumulator without defaults for every option
        return None
    return params if params_digest(params) == digest else None


def _as_built(family: str, command: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
    """``params`` as the accumulator keeps them (normalised: sorted lists, defaults filled in)."""
    try:
        return dict(accumulator_class(family, command)(**params).params)
    except (TypeError, ValueError):
        raise ScoringError(f"--param values are not options of {family} {command}") from None


class Resolved(NamedTuple):
    family: Optional[str]
    command: str
    key: str
    #: the accumulator's parameters for the aggregates, or None (no aggregates)
    params: Optional[Dict[str, Any]]
    diagnostics: List[str]


def resolve(
    base: Writer,
    cand: Writer,
    *,
    key: Optional[str],
    family: Optional[str],
    command: Optional[str],
    params: Optional[Mapping[str, Any]],
) -> Resolved:
    """Family, command, key and aggregate parameters of a comparison; refuse incomparable files."""
    notes: List[str] = []
    if (base.writer is None) != (cand.writer is None):
        said, silent = (base, cand) if base.writer is not None else (cand, base)
        raise ScoringError(
            f"only one file says which command wrote it ({' '.join(said.writer or ())} in {said.path}); "
            "compare two files written by the same rageval-min command",
            path=silent.path,
            line=silent.line,
            field=PROVENANCE_FIELD,
        )
    if base.writer is not None and cand.writer is not None:
        (bf, bc, bd), (cf, cc, cd) = base.writer, cand.writer
        if (bf, bc) != (cf, cc):
            raise ScoringError(
                f"the files were written by different commands: {bf} {bc} ({base.path}:{base.line}) and {cf} {cc}",
                path=cand.path,
                line=cand.line,
                field=PROVENANCE_FIELD,
            )
        if bd != cd:
            raise ScoringError(
                f"the files were written by {bf} {bc} with different options (digest {bd} vs {cd}); "
                "score both with the same options",
                path=cand.path,
            )
        if family and (family, command or bc) != (bf, bc):
            raise ScoringError(f"--family {family}:{command or bc} disagrees with the files' writer, {bf} {bc}")
        family, command = bf, bc
        if params:
            if params_digest(_as_built(bf, bc, params)) != bd:
                raise ScoringError(f"--param values are not the options {bf} {bc} wrote the rows with")
        else:
            params = _default_params(bf, bc, bd)
            if params is None:
                notes.append(
                    f"aggregates not computed: the rows were written by {bf} {bc} with non-default options; "
                    "pass them with --param to compare the aggregates too"
                )
        key = key or base.first_field
    elif family:  # rows that do not say who wrote them, with --family: its default options unless --param
        params = dict(params or {})
    if not key:
        raise ScoringError("--key is required for rows rageval-min did not write (name their id field)")
    return Resolved(family, command or "score", key, dict(params) if params is not None else None, notes)


def declared_directions(
    family: Optional[str], command: str, names: Sequence[str], overrides: Mapping[str, str]
) -> Dict[str, str]:
    """Each metric's direction: the user's override, else the command's declaration; unknown is an error."""
    declared: Sequence[Metric] = ()
    legacy: Optional[Mapping[str, str]] = None
    if family:
        cls = accumulator_class(family, command)
        declared = cls.METRICS
        legacy = None if declared else cls.DIRECTIONS
    out: Dict[str, str] = {}
    unknown: List[str] = []
    for name in names:
        bare = name[len("aggregate.") :] if name.startswith("aggregate.") else name
        if name in overrides or bare in overrides:
            out[name] = overrides.get(name, overrides.get(bare, ""))
            continue
        found = find_metric(declared, bare) if declared else None
        if found is not None:
            out[name] = found.direction
        elif legacy is not None:
            out[name] = legacy.get(bare, "higher")
        else:
            unknown.append(name)
    if unknown:
        why = (
            f"{family} {command} declares none"
            if family
            else "the rows do not say which command wrote them, so nothing declares one"
        )
        raise ScoringError(
            f"no known direction for {', '.join(unknown[:10])}{' ...' if len(unknown) > 10 else ''} ({why}); "
            "say which way is better with --higher-is-better, --lower-is-better or --neither NAME, "
            "or leave it out with --metric"
        )
    return out
