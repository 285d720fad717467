"""Build script: the package list (setuptools' static configuration cannot mix a search with
the two renamed folders below) and the package data. Everything else is declared in pyproject.toml.

The gold samples ship as ``rageval_min._gold_samples``, one data package per family folder (so
that ``rageval-min demo`` works from any directory); declaring each folder keeps setuptools from
warning that it would be ignored.
"""

import os

from setuptools import find_packages, setup

SAMPLES = "gold_samples"
sample_packages = [
    f"rageval_min._gold_samples.{name}"
    for name in sorted(os.listdir(SAMPLES))
    if os.path.isdir(os.path.join(SAMPLES, name)) and not name.startswith((".", "_"))
]

setup(
    packages=find_packages(include=["rageval_min", "rageval_min.*"])
    + ["rageval_min._gold_samples", "rageval_min_extras"]
    + sample_packages,
    package_data={"rageval_min": ["py.typed"], **{name: ["*"] for name in sample_packages}},
)
