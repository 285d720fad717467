"""Helpers shared by the extras."""

from rageval_min.errors import ScoringError

__all__ = ["missing_extra"]


def missing_extra(package: str, pip_command: str) -> ScoringError:
    """The error an extra raises when ``package`` cannot be imported."""
    return ScoringError(f"this feature needs the Python package {package!r}; install it with: {pip_command}")
