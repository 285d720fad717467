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
from .interface import JudgeAnswer, canonical_json

__all__ = ["ReplayJudge"]


class ReplayJudge:
    """Answer from a judge cache file, offline.

    An entry matches when its ``prompt_sha256``, ``params`` and sample index
    (``sample``, 0 when absent) equal the request's and, when ``model`` is
    given, its model too (the judge identity,
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
        self._index: Dict[Tuple[str, str, int], Dict[str, Tuple[str, Any]]] = {}
        models = set()
        scan = JudgeCache._parse(path)
        self.notes = scan.notes
        for entry in scan.entries:
            ent_model = str(entry.get("model", ""))
            if self._want_model is not None and ent_model != self._want_model:
                continue
            models.add(ent_model)
            sample = entry.get("sample", 0)
            k = (
                str(entry.get("prompt_sha256", "")),
                canonical_json(entry.get("params", {})),
                sample if isinstance(sample, int) else -1,
            )
            self._index.setdefault(k, {}).setdefault(ent_model, (entry["answer"], entry.get("usage")))
        if self._want_model is None and len(models) == 1:
            # one model in the cache: report it, so a replay's signature equals the live run's
            self.model = next(iter(models))

    def __repr__(self) -> str:
        return f"ReplayJudge(path={self.path!r}, model={self.model!r})"

    def __call__(self, prompt: str, params: Mapping[str, Any]) -> str:
        return self.answer_full(prompt, params).text

    def answer_full(self, prompt: str, params: Mapping[str, Any], sample: int = 0) -> JudgeAnswer:
        """The cached answer of sample ``sample`` of ``prompt``, with the usage it was made with (not fresh)."""
        psha = _sha256(prompt)
        found = self._index.get((psha, canonical_json(dict(params)), sample))
        if not found:
            scope = f" for model {self._want_model!r}" if self._want_model else ""
            shown = canonical_json(dict(params))
            which = f" (sample {sample})" if sample else ""
            raise ScoringError(
                f"replay: no cached answer{scope} for prompt sha256 {psha[:16]}{which} with params {shown}",
                path=self.path,
            )
        answers = {a for a, _ in found.values()}
        if len(answers) > 1:
            raise ScoringError(
                f"replay: prompt sha256 {psha[:16]} has different answers from models "
                f"{', '.join(sorted(found))}; choose one with --judge-model",
                path=self.path,
            )
        text, usage = next(iter(found.values()))
        return JudgeAnswer(text, usage if isinstance(usage, dict) else None, fresh=False)
