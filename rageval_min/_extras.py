"""One loader for every optional extra.

The core never imports a third-party package.  Features that need one live in
``rageval_min_extras`` (the ``extras/`` folder of a checkout, shipped in the
wheel under that name) and are loaded only when a user asks for them, through
:func:`load_extra`:

==============  =======================  =====================================
registry name   module                   pip extra
==============  =======================  =====================================
``rouge``       ``rouge_backend``        ``rageval-min[rouge]``
``fast``        ``rapidfuzz_lcs``        ``rageval-min[fast]``
``tokens``      ``tokens``               ``rageval-min[tokens]``
``bertscore``   ``bertscore``            ``rageval-min[bertscore]``
``openai``      ``openai_judge``         ``rageval-min[openai]``
``dask``        ``dask_engine``          ``rageval-min[dask]``
==============  =======================  =====================================

A missing ``rageval_min_extras`` package, or a module of it that cannot find
its own third-party dependency, is a :class:`~rageval_min.errors.ScoringError`
naming :func:`pip_hint`.
"""

import importlib
import os
import sys
from types import ModuleType
from typing import Dict, Tuple

from .errors import ScoringError

__all__ = ["EXTRAS", "load_extra", "pip_hint"]

#: registry name -> (module of rageval_min_extras, name of the pip extra)
EXTRAS: Dict[str, Tuple[str, str]] = {
    "rouge": ("rouge_backend", "rouge"),
    "fast": ("rapidfuzz_lcs", "fast"),
    "tokens": ("tokens", "tokens"),
    "bertscore": ("bertscore", "bertscore"),
    "openai": ("openai_judge", "openai"),
    "dask": ("dask_engine", "dask"),
}

_PACKAGE = "rageval_min_extras"


def pip_hint(name: str) -> str:
    """The install command of extra ``name``.

    >>> pip_hint("fast")
    "pip install 'rageval-min[fast]'"
    """
    return f"pip install 'rageval-min[{EXTRAS[name][1]}]'"


def _load_source_package() -> bool:
    """Make a checkout's ``extras/`` importable as ``rageval_min_extras``."""
    import importlib.util

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folder = os.path.join(here, "extras")
    init = os.path.join(folder, "__init__.py")
    if not os.path.isfile(init):
        return False
    spec = importlib.util.spec_from_file_location(_PACKAGE, init, submodule_search_locations=[folder])
    if spec is None or spec.loader is None:  # pragma: no cover - defensive
        return False
    mod = importlib.util.module_from_spec(spec)
    sys.modules[_PACKAGE] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[_PACKAGE]
        raise
    return True


def load_extra(name: str) -> ModuleType:
    """Import the module of extra ``name`` (see the table above).

    An unknown name is a programming error (``KeyError``); a missing package
    is a :class:`ScoringError` with the pip command.
    """
    module, _ = EXTRAS[name]
    full = f"{_PACKAGE}.{module}"
    try:
        return importlib.import_module(full)
    except ImportError as exc:
        if (getattr(exc, "name", None) or "") != _PACKAGE:
            raise ScoringError(
                f"the {name} extra cannot be loaded ({exc}); install it with: {pip_hint(name)}"
            ) from None
    if not _load_source_package():
        raise ScoringError(f"the optional package {_PACKAGE} is not installed; install it with: {pip_hint(name)}")
    return importlib.import_module(full)
