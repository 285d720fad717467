"""rageval_min: deterministic RAG/LLM evaluation metrics, stdlib only."""

from ._version import __version__
from .errors import ScoringError

__all__ = ["ScoringError", "__version__"]
