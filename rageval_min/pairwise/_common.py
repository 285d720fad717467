"""Pipeline step: what every step of the pairwise family shares.

The family's names and constants (``FAMILY``, ``REFERENCE`` =
``open-compass/DevBench@bb593c1``, the comparison columns, variants, extras),
pandas' missing-value rule, numpy's float32 rounding, the option checks and the
scoring row (:class:`_Row`, one item row as the aggregation steps read it).

Missing values follow pandas' reading rule on every input format: ``None``,
float NaN, the empty string and pandas' default NA tokens (``NA``, ``nan``,
``NULL``, ``N/A``, ...) are "missing".  Other cells are kept as text: pandas
would re-type a cell that is a bare number (``1.50`` -> ``1.5``) when the
reference re-reads its own TSV; that difference is not emulated.
"""

import struct
from typing import Any, Iterable, List, Mapping, NamedTuple, Optional, Tuple

from ..errors import ScoringError

__all__ = [
    "EM_MARKER",
    "EXTRAS",
    "FAIL_MESSAGE",
    "FAMILY",
    "GUIDANCE_PLACEHOLDER",
    "LENGTH_UNITS",
    "PANDAS_NA_TOKENS",
    "RECORD_COLUMNS",
    "REFERENCE",
    "VARIANTS",
    "check_extras",
    "check_variants",
    "f32",
    "is_missing",
    "round4_f32",
]


FAMILY = "pairwise"
REFERENCE = "open-compass/DevBench@bb593c1"
FAIL_MESSAGE = "Failed to obtain answer via API."
EM_MARKER = "EM"
RECORD_COLUMNS = (
    "cmp_index",
    "question",
    "answer1",
    "answer2",
    "A",
    "B",
    "reference_answer",
    "evaluating_guidance",
    "task",
)
#: Columns that are never the judge column when it is guessed.
_NOT_JUDGE = set(RECORD_COLUMNS) | {"extracted", "prompt", "exact_match"}
VARIANTS = ("choice_lenient", "letters_by_nopt", "orphans_excluded", "float64_tables", "macro_average", "strict_ids")
EXTRAS = ("conservative_win_rate", "per_model_consistency", "unparseable_share")
#: Units of the answer lengths (``tokens``: cl100k, through the tokens extra).
LENGTH_UNITS = ("chars", "tokens")
GUIDANCE_PLACEHOLDER = "<Evaluating Guidance>"

#: pandas' default NA tokens (``read_csv``/``read_excel`` with ``keep_default_na``).
PANDAS_NA_TOKENS = frozenset(
    [
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    ]
)


# --------------------------------------------------------------------------- numerics

_F32 = struct.Struct("f")


def f32(x: float) -> float:
    """Round a double to the nearest float32 (ties to even) and widen it back.

    >>> f32(0.1)
    0.10000000149011612
    """
    value: float = _F32.unpack(_F32.pack(x))[0]
    return value


def round4_f32(x: float) -> float:
    """numpy's ``round(4)`` on a float32 value: ``f32(rint(f32(x*10000)) / 10000)``.

    Differs from float64 ``round(x, 4)`` on ties such as 1/160:

    >>> round4_f32(f32(f32(1 / 80) / 2)), round(1 / 160, 4)
    (0.006200000178068876, 0.0063)
    """
    y = f32(x * 10000.0)
    return f32(float(round(y)) / 10000.0)


# --------------------------------------------------------------------------- missing values


def is_missing(value: Any) -> bool:
    """pandas' NA rule: None, NaN, or a string that is one of the default NA tokens.

    >>> [is_missing(v) for v in (None, float("nan"), "", "NA", "n/a", " NA", "0")]
    [True, True, True, True, True, False, False]
    """
    if value is None:
        return True
    if isinstance(value, float):
        return value != value
    if isinstance(value, str):
        return value in PANDAS_NA_TOKENS
    return False


def _as_text(value: Any) -> str:
    """``str()`` of a cell as the reference sees it after pandas: missing -> ``"nan"``."""
    if is_missing(value):
        return "nan"
    return str(value)


def _cell_str(value: Any) -> Optional[str]:
    if is_missing(value):
        return None
    return _as_text(value)


# --------------------------------------------------------------------------- the scoring row


class _Row(NamedTuple):
    """One item row as the aggregates use it (``cmp_index`` split into its three parts)."""

    pos: int
    cmp_index: str
    idx: str
    part1: str
    part2: str
    A: str
    B: str
    task: Optional[str]
    len1: int
    len2: int
    exact_match: bool
    failed: bool
    judge_missing: bool
    choice: Optional[str]


def _split_cmp(cmp_index: str, *, strict: bool = False, where: Optional[Mapping[str, Any]] = None) -> List[str]:
    """``cmp_index.split(';')``, checked: at least 3 parts (``strict``: exactly 3)."""
    parts = cmp_index.split(";")
    if len(parts) < 3 or (strict and len(parts) > 3):
        msg = (
            "cmp_index must look like '{index};{model A};{model B}'"
            if len(parts) < 3
            else "cmp_index has more than 3 ';'-separated parts (strict_ids)"
        )
        raise ScoringError(msg, record=f"cmp_index={cmp_index}", field="cmp_index", **dict(where or {}))
    return parts


def _row_of(pos: int, item: Mapping[str, Any]) -> _Row:
    parts = item["cmp_index"].split(";")
    return _Row(
        pos,
        item["cmp_index"],
        parts[0],
        parts[1],
        parts[2],
        item["A"],
        item["B"],
        item["task"],
        item["length_a"],
        item["length_b"],
        bool(item["exact_match"]),
        bool(item["api_failed"]),
        bool(item["judge_missing"]),
        item["choice"],
    )


def _metric_of(idx: str) -> str:
    return idx.rsplit("-", 1)[-1]


# --------------------------------------------------------------------------- option checks


def check_variants(variants: Iterable[str]) -> Tuple[str, ...]:
    """The sorted, de-duplicated variant names; an unknown one is a ScoringError.

    >>> check_variants(["strict_ids", "float64_tables", "strict_ids"])
    ('float64_tables', 'strict_ids')
    """
    names = tuple(sorted(set(variants)))
    bad = [v for v in names if v not in VARIANTS]
    if bad:
        raise ScoringError(f"unknown variant(s) {', '.join(bad)}; known: {', '.join(VARIANTS)}", field="variant")
    return names


def check_extras(extras: Iterable[str]) -> Tuple[str, ...]:
    """The sorted, de-duplicated extra names; an unknown one is a ScoringError."""
    names = tuple(sorted(set(extras)))
    bad = [e for e in names if e not in EXTRAS]
    if bad:
        raise ScoringError(f"unknown extra(s) {', '.join(bad)}; known: {', '.join(EXTRAS)}", field="extra")
    return names


def _check_nopt(nopt: int) -> int:
    if isinstance(nopt, bool) or nopt not in (2, 3, 4):
        raise ScoringError(f"nopt must be 2, 3 or 4, got {nopt}", field="nopt")
    return nopt


def _check_lengths(lengths: str) -> str:
    if lengths not in LENGTH_UNITS:
        raise ScoringError(f"lengths must be one of {', '.join(LENGTH_UNITS)}, got {lengths!r}", field="lengths")
    return lengths
