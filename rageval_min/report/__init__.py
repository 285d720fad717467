"""The report layer: the :class:`Report` model and one renderer per format.

It knows no family.  A family computes a :class:`Report`; :func:`render` turns it,
with the gate outcomes, into one of :data:`FORMATS` (``json``, ``text``,
``markdown``, ``junit``, ``html``) or into one of the family's own formats
(its ``REPORT_FORMATS``).  Each renderer is imported only when its format is
asked for; the HTML page asks the registry for the family's chart section.
"""

from __future__ import annotations

import importlib

from ..gates import GateOutcome
from .model import Report, format_number, overall_pass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, Mapping, Optional, Sequence

#: (``Formatter``, a type alias, exists for the type checker only.)
__all__ = ["FORMATS", "Report", "format_number", "overall_pass", "render", "text_table"]

FORMATS = ("json", "text", "markdown", "junit", "html")

if TYPE_CHECKING:
    Formatter = Callable[[Report, Sequence[GateOutcome]], str]


def render(
    report: Report,
    fmt: str,
    outcomes: Sequence[GateOutcome] = (),
    formatters: Optional[Mapping[str, Formatter]] = None,
) -> str:
    """Render ``report`` in format ``fmt`` (a family may add its own formats)."""
    if formatters and fmt in formatters:
        return formatters[fmt](report, outcomes)
    if fmt not in FORMATS:
        raise KeyError(fmt)
    module = importlib.import_module(f"{__name__}.render_{fmt}")
    renderer: Formatter = getattr(module, f"render_{fmt}")
    return renderer(report, outcomes)


def text_table(rows: Sequence[Sequence[str]]) -> List[str]:
    """Aligned columns, two spaces apart (see :func:`rageval_min.report.render_text.text_table`)."""
    from .render_text import text_table as _table

    return _table(rows)
