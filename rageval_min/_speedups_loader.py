"""Which kernels run: the optional C speedups (``rageval_min._speedups``) or the pure Python code.

The decision is made once, at the first call of :func:`kernels` (importing this module does
nothing): the C module when it imports, was built from this version of its source
(:data:`KERNEL_VERSION`) and the environment variable ``RAGEVAL_MIN_PURE`` is not ``1``;
otherwise ``None``, and every caller runs its pure Python code.

The C kernels compute integers only (token counts, n-gram overlaps, LCS lengths, rougeLsum
hits); the Python code turns them into scores with the same float operations as its own path,
so results cannot differ by kernel and the signature does not record which one ran. The JSON
kernels (a record line in ``json.dumps`` form, :func:`rageval_min._io.dumps_extended`) return
that text, floats written by CPython's own repr, or decline. ``tests/test_speedups.py`` and
``tests/test_dumps_form.py`` compare the two paths on the conformance data and seeded random
texts. Copying ``rageval_min/`` without building the extension gives the pure path.
"""

from __future__ import annotations

import os
from types import ModuleType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

__all__ = ["KERNEL_VERSION", "PURE_ENV", "kernels"]

#: The version of ``_speedups.c`` this code expects (a stale build is not used).
KERNEL_VERSION = 6

#: Set to ``1`` to force the pure Python kernels.
PURE_ENV = "RAGEVAL_MIN_PURE"

_UNSET = ModuleType("unset")
_kernels: Optional[ModuleType] = _UNSET


def _load() -> Optional[ModuleType]:
    if os.environ.get(PURE_ENV) == "1":
        return None
    try:
        from . import _speedups  # type: ignore[attr-defined]
    except ImportError:
        return None
    if getattr(_speedups, "KERNEL_VERSION", None) != KERNEL_VERSION:
        return None
    return _speedups  # type: ignore[no-any-return]


def kernels() -> Optional[ModuleType]:
    """The C kernels module, or ``None`` for the pure Python path (decided on the first call)."""
    global _kernels
    if _kernels is _UNSET:
        _kernels = _load()
    return _kernels
