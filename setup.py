"""Build script: the package list (setuptools' static configuration cannot mix a search with
the two renamed folders below), the package data and the optional C speedups. Everything else is
declared in pyproject.toml.

The gold samples ship as ``rageval_min._gold_samples``, one data package per family folder (so
that ``rageval-min demo`` works from any directory); declaring each folder keeps setuptools from
warning that it would be ignored.

The extension ``rageval_min._speedups`` is optional: without a C compiler (or when its build
fails) ``pip install .`` still installs the pure-Python package, which computes the same
numbers. ``python setup.py build_ext --inplace`` builds it next to the sources (what the test
suite, run from the checkout, imports).
"""

import os
import sys

from setuptools import Extension, find_packages, setup

SAMPLES = "gold_samples"
sample_packages = [
    f"rageval_min._gold_samples.{name}"
    for name in sorted(os.listdir(SAMPLES))
    if os.path.isdir(os.path.join(SAMPLES, name)) and not name.startswith((".", "_"))
]

# No fused multiply-add: the kernels compute integers only, but no float may ever be contracted.
_ARGS = [] if sys.platform == "win32" else ["-ffp-contract=off"]

setup(
    packages=find_packages(include=["rageval_min", "rageval_min.*"])
    + ["rageval_min._gold_samples", "rageval_min_extras"]
    + sample_packages,
    package_data={"rageval_min": ["py.typed"], **{name: ["*"] for name in sample_packages}},
    ext_modules=[
        Extension(
            "rageval_min._speedups",
            sources=["rageval_min/_speedups.c", "rageval_min/_speedups_json.c"],
            extra_compile_args=_ARGS,
            optional=True,
        )
    ],
)
