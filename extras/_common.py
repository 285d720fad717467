"""Helpers shared by the extras."""

from rageval_min.errors import ScoringError

__all__ = ["missing_extra", "package_version"]


def missing_extra(package: str, pip_command: str) -> ScoringError:
    """The error an extra raises when ``package`` cannot be imported."""
    return ScoringError(f"this feature needs the Python package {package!r}; install it with: {pip_command}")


def package_version(dist: str) -> str:
    """The installed version of distribution ``dist`` (``"unknown"`` if it cannot be told)."""
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # metadata missing in odd installs
        return "unknown"
