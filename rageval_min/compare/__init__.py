"""Is the candidate worse than the baseline?  Paired comparison of two item-row files.

The public face of the compare family: every name below is importable as
``rageval_min.compare.NAME``.
"""

from .paired import (
    DEFAULT_MIN_N,
    DEFAULT_RESAMPLES,
    FAMILY,
    INTERVALS,
    MAX_RESAMPLES,
    REFERENCE,
    SWITCH_N,
    TESTS,
    CompareOptions,
    ItemRows,
    compare_files,
    compare_rows,
    compare_with_options,
    read_item_rows,
)

__all__ = [
    "CompareOptions",
    "DEFAULT_MIN_N",
    "DEFAULT_RESAMPLES",
    "FAMILY",
    "INTERVALS",
    "ItemRows",
    "MAX_RESAMPLES",
    "REFERENCE",
    "SWITCH_N",
    "TESTS",
    "compare_files",
    "compare_rows",
    "compare_with_options",
    "read_item_rows",
]
