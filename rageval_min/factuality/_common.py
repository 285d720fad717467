"""Shared by every piece of the factuality family: names, references, variants, the signature, JSON values.

The family's references, one per command (:data:`REFERENCES`):

* SAFE / LongFact, ``google-deepmind/long-form-factuality@9d27158``
  (``f1k``, ``safe``, ``correlate``, ``judge``);
* FActScore, ``shmsw25/FActScore@f28272d`` (``factscore``);
* VeriScore, ``Yixiao-Song/VeriScore@7dd3352`` (``veriscore``).

The helpers here are the family's small shared vocabulary: how a value becomes
JSON (nan/inf -> null), how a number is read from a JSON or CSV cell, how a
diagnostic names a record, and when an empty shard is accepted.
"""

import json
import math
import re
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from .._contract import Accumulator, ItemRow, partial_requested
from .._numbers import finite_float, float_text, int_text
from .._signature import make_signature
from ..errors import ScoringError

Number = Union[int, float]

DEFAULT_MAX_CLAIMS = 100
"""SAFE's code default for K (``metric_utils.DEFAULT_MAX_CLAIMS``); neither paper value."""

FAMILY = "factuality"
REF_SAFE = "google-deepmind/long-form-factuality@9d27158"
REF_FACTSCORE = "shmsw25/FActScore@f28272d"
REF_VERISCORE = "Yixiao-Song/VeriScore@7dd3352"
REFERENCE = REF_SAFE
"""The family's main reference (SAFE); :data:`REFERENCES` gives each command's."""

REFERENCES: Dict[str, str] = {
    "f1k": REF_SAFE,
    "safe": REF_SAFE,
    "factscore": REF_FACTSCORE,
    "veriscore": REF_VERISCORE,
    "correlate": REF_SAFE,
    "judge": REF_SAFE,
}
"""Command -> the upstream ``owner/repo@commit`` it mirrors."""

VARIANTS = (
    "aggregate_all_rated",
    "f1_key_effective_k",
    "factscore_excl_ir",
    "pearson_fsum",
    "sides_by_flags",
    "veriscore_py312_sum",
)
"""The opt-in variants of this family (each changes numbers and is recorded in the signature)."""

COMMAND_VARIANTS: Dict[str, Tuple[str, ...]] = {
    "f1k": (),
    "safe": ("aggregate_all_rated", "f1_key_effective_k", "sides_by_flags"),
    "factscore": ("factscore_excl_ir",),
    "veriscore": ("veriscore_py312_sum",),
    "correlate": ("pearson_fsum",),
    "judge": (),
}
"""Command -> the variants that apply to it."""

SUPPORTED_LABEL = "Supported"
NOT_SUPPORTED_LABEL = "Not Supported"
IRRELEVANT_LABEL = "Irrelevant"


def _check_variants(variants: Iterable[str], allowed: Sequence[str]) -> List[str]:
    names = sorted(set(variants))
    for name in names:
        if name not in allowed:
            raise ScoringError(
                f"unknown variant {name!r} (choose from {', '.join(allowed)})",
                field="variant",
            )
    return names


def check_variants(variants: Iterable[str], command: Optional[str] = None) -> Tuple[str, ...]:
    """Sorted, de-duplicated variant names; an unknown one (for ``command``, when given) is a ScoringError.

    >>> check_variants(["pearson_fsum", "pearson_fsum"], "correlate")
    ('pearson_fsum',)
    """
    allowed = VARIANTS if command is None else COMMAND_VARIANTS.get(command, ())
    return tuple(_check_variants(variants, allowed))


def signature(
    *, variants: Iterable[str] = (), params: Sequence[Tuple[str, object]] = (), command: Optional[str] = None
) -> str:
    """The family's reproducibility signature (``family=factuality``, ``ref=`` the command's reference)."""
    ref = REFERENCES.get(command, REFERENCE) if command else REFERENCE
    return make_signature(FAMILY, ref, check_variants(variants, command), params)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_INT_RE = re.compile(r"^[+-]?\d+$")


def _nan_none(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def _clean(value: Any) -> Any:
    """nan/inf -> None, recursively (JSON envelopes and per-line outputs)."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def parse_number(value: Any, field: str) -> Number:
    """A finite JSON number, or a numeric CSV/TSV cell; raises ValueError naming ``field``.

    >>> parse_number("12", "supported"), parse_number(2.5, "x")
    (12, 2.5)
    """
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{field}: expected a number, got {json.dumps(value)}")
    if isinstance(value, (int, float)):
        finite_float(value, field=field)  # a ScoringError (a ValueError) for 1e400 or 401 digits
        return value
    if isinstance(value, str):
        text = value.strip()
        parsed: Optional[Number] = int_text(text) if _INT_RE.match(text) else float_text(text)
        if parsed is None:
            raise ValueError(f"{field}: expected a number, got {value!r}")
        if isinstance(parsed, float) and not math.isfinite(parsed):
            raise ValueError(f"{field}: expected a finite number, got {value!r}")
        finite_float(parsed, field=field)  # an integer cell beyond the float range
        return parsed
    raise ValueError(f"{field}: expected a number, got {type(value).__name__}")


def _no_valid(path: Optional[str], what: str) -> ScoringError:
    return ScoringError(f"no valid record: {what}", path=path)


def record_name(path: str, line: int, ident: Any = None) -> str:
    """How a diagnostic names a record: by its id when it has one, else by ``path:line``.

    An id names the record the same way in a shard and in the whole file, so a
    report merged from shards (``rageval-min merge``) says what one pass says.

    >>> record_name("a.jsonl", 3, "r7"), record_name("a.jsonl", 3)
    ("id='r7'", 'a.jsonl:3')
    """
    return f"{path}:{line}" if ident is None else f"id={ident!r}"


def _noting(acc: Accumulator, path: str, on_item: Optional[Callable[[ItemRow], None]]) -> Callable[[ItemRow], None]:
    """An ``on_item`` that notes an error row (``{"line", "id"?, "error"}``) before passing it on."""

    def on_row(row: ItemRow) -> None:
        if "error" in row:
            acc.note(f"{record_name(path, row['line'], row.get('id'))}: {row['error']}")
        if on_item is not None:
            on_item(row)

    return on_row


def _shard(allow_empty: Optional[bool]) -> bool:
    return partial_requested() if allow_empty is None else allow_empty
