"""rageval_min: deterministic RAG/LLM evaluation metrics with reference parity, stdlib only.

The public API (see ``docs/api.md``).  Family modules are imported on first use,
so ``import rageval_min`` stays cheap:

* families: :mod:`~rageval_min.grounding`, :mod:`~rageval_min.rgb`,
  :mod:`~rageval_min.pairwise`, :mod:`~rageval_min.factuality`,
  :mod:`~rageval_min.rouge`, :mod:`~rageval_min.mtrag`; each has ``score_item``
  (or ``<command>_item``), an accumulator and ``score_file`` (or
  ``<command>_file``) returning a :class:`Report`;
* :mod:`~rageval_min.compare`: paired comparison of two item-row files;
* :mod:`~rageval_min.judges`: the LLM-judge adapter interface and runner;
* :mod:`~rageval_min.testing`: ``assert_gates`` for a project's own tests;
* gates (:func:`parse_gate`, :func:`evaluate_gates`), formats (:data:`FORMATS`,
  :func:`render`), partial states (:func:`accumulator_from_state`) and the one
  exception type, :class:`ScoringError`.
"""

from __future__ import annotations

from . import registry
from ._version import __version__ as __version__
from .errors import ScoringError as ScoringError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The public packages of the commands (from the registry), plus the testing helpers.
_MODULES = frozenset([c.package for c in registry.COMMANDS if c.package] + ["testing"])
_NAMES = {
    "FORMATS": "report",
    "Report": "report",
    "render": "report",
    "accumulator_from_state": "_contract",
    "evaluate_gates": "gates",
    "parse_gate": "gates",
}

__all__ = sorted(["ScoringError", "__version__", *_NAMES, *_MODULES])


def __getattr__(name: str) -> Any:
    import importlib

    if name in _MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _NAMES:
        return getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
