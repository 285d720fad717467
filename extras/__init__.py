"""Optional adapters for rageval_min that need third-party packages.

Installed as the import package ``rageval_min_extras``.  Nothing here is
imported by the core until a user asks for it, and each module fails with the
exact ``pip install`` command when its dependency is missing.
"""

from rageval_min.errors import ScoringError

__all__ = ["missing_extra"]


def missing_extra(package: str, pip_command: str) -> ScoringError:
    """The error an extra raises when ``package`` cannot be imported."""
    return ScoringError(f"this feature needs the Python package {package!r}; install it with: {pip_command}")
