"""The package version, kept in one place (also read by pyproject.toml)."""

__version__ = "0.1.0"
