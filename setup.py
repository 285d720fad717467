"""Build script: the package list (setuptools' static configuration cannot mix a search with
the two renamed folders below). Everything else is declared in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["rageval_min", "rageval_min.*"])
    + ["rageval_min._gold_samples", "rageval_min_extras"],
)
