"""Pipeline step: the ``replay:`` judge transport -- offline answers from a judge cache file.

Spec ``replay:CACHE.jsonl``: a prompt that is not in the file is an error,
never a default answer.
"""

import os
from typing import (
    Any,
    Dict,
    Mapping,
    Optional,
    Tuple,
)

from ..errors import ScoringError
from .cache import JudgeCache, _sha256
from .interface import canonical_json

__all__ = ["ReplayJudge"]


class ReplayJudge:
    """Answer from a judge cache file, offline.

    An entry matches when its ``prompt_sha256`` and ``params`` equal the
    request's and, when ``model`` is given, its model too (the judge identity,
    e.g. the server URL, does not matter).  Without ``model``, a cache that
    holds a single model reports that model as :attr:`model`.  No match is a
    :class:`~rageval_min.errors.ScoringError`; so is a prompt recorded with
    different answers by several models when no model was given.
    """

    cacheable = False

    def __init__(self, path: str, *, model: Optional[str] = None) -> None:
        self.path = path
        self.model = model or ""
        self._want_model = model or None
        self.identity = "replay"
        if not os.path.isfile(path):
            raise ScoringError("replay cache not found", path=path)
        self._index: Dict[Tuple[str, str], Dict[str, str]] = {}
        models = set()
        scan = JudgeCache._parse(path)
        self.notes = scan.notes
        for entry in scan.entries:
            ent_model = str(entry.get("model", ""))
            if self._want_model is not None and ent_model != self._want_model:
                continue
            models.add(ent_model)
            k = (str(entry.get("prompt_sha256", "")), canonical_json(entry.get("params", {})))
            self._index.setdefault(k, {}).setdefault(ent_model, entry["answer"])
        if self._want_model is None and len(models) == 1:
            # one model in the cache: report it, so a replay's signature equals the live run's
            self.model = next(iter(models))

    def __repr__(self) -> str:
        return f"ReplayJudge(path={self.path!r}, model={self.model!r})"

    def __call__(self, prompt: str, params: Mapping[str, Any]) -> str:
        psha = _sha256(prompt)
        found = self._index.get((psha, canonical_json(dict(params))))
        if not found:
            scope = f" for model {self._want_model!r}" if self._want_model else ""
            shown = canonical_json(dict(params))
            raise ScoringError(
                f"replay: no cached answer{scope} for prompt sha256 {psha[:16]} with params {shown}",
                path=self.path,
            )
        answers = set(found.values())
        if len(answers) > 1:
            raise ScoringError(
                f"replay: prompt sha256 {psha[:16]} has different answers from models "
                f"{', '.join(sorted(found))}; choose one with --judge-model",
                path=self.path,
            )
        return next(iter(answers))
