"""BERTScore through ``bert-score`` (``pip install 'rageval-min[bertscore]'``).

:class:`BertScorer` is a :class:`rageval_min.judges.EmbeddingScorer`.  Its
defaults are MT-RAG's effective settings (``IBM/mt-rag-benchmark@cc5b1d4:scripts/evaluation/``,
see ``docs/mtrag.md``):
``microsoft/deberta-xlarge-mnli``, layer 40, idf off, baseline rescaling
(``lang="en"``), slow tokenizer, inputs ``.strip()``-ped, each reference
wrapped as ``[[reference]]`` and every pair scored in its own call (MT-RAG
makes one call per pair; batching pairs together can move the last float32
bit).  Any local model folder works with ``model_type=PATH`` and
``num_layers=N``; rescaling then needs ``baseline_path`` (bert-score's
``LAYER,P,R,F`` CSV) or ``rescale_with_baseline=False``.

Two things are done here rather than inside bert-score:

* a pair whose candidate or reference is empty after ``.strip()`` gets the raw
  scores bert-score defines for it, P = R = F = 0, without running the model
  (bert-score 0.3.13 crashes on empty strings with transformers >= 5);
* rescaling, ``(raw - b) / (1 - b)`` in float32 with ``b`` the baseline row of
  the layer, exactly as bert-score computes it, so both paths agree.

The result is not bit-exact across machines (model kernels); the project's
tolerance policy says so.  No model is downloaded by this module: a hub name
is resolved by transformers as usual (set ``HF_HUB_OFFLINE=1`` to forbid
downloads).
"""

import csv
import hashlib
import os
from typing import Any, List, Optional, Sequence

from rageval_min.errors import ScoringError
from rageval_min.judges import PRF

from ._common import missing_extra

__all__ = ["BertScorer", "DEFAULT_MODEL", "DEFAULT_LAYERS", "PIP_COMMAND"]

DEFAULT_MODEL = "microsoft/deberta-xlarge-mnli"
DEFAULT_LAYERS = 40
PIP_COMMAND = "pip install 'rageval-min[bertscore]'"


def _deps() -> Any:
    try:
        import bert_score
    except ImportError as exc:
        pkg = "torch" if (getattr(exc, "name", None) or "").split(".")[0] == "torch" else "bert-score"
        raise missing_extra(pkg, PIP_COMMAND) from None
    return bert_score


def _bundled_baseline(bert_score: Any, lang: str, model_type: str) -> str:
    return os.path.join(os.path.dirname(bert_score.__file__), "rescale_baseline", lang, model_type + ".tsv")


def _read_baseline(path: str, layer: int) -> List[float]:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise ScoringError(f"cannot read BERTScore baseline: {exc.strerror or exc}", path=path) from None
    body = rows[1:]
    if not 0 <= layer < len(body) or len(body[layer]) < 4:
        raise ScoringError(f"BERTScore baseline has no row for layer {layer}", path=path)
    try:
        return [float(v) for v in body[layer][1:4]]
    except ValueError:
        raise ScoringError(
            f"BERTScore baseline row for layer {layer} is not numeric", path=path, line=layer + 2
        ) from None


class BertScorer:
    """BERTScore P/R/F lists for candidate/reference pairs.

    >>> # scorer = BertScorer()                       # MT-RAG defaults
    >>> # scorer = BertScorer("/models/minilm", 6, rescale_with_baseline=False)
    >>> # scorer(["a cat"], ["the cat"]).R
    """

    def __init__(
        self,
        model_type: str = DEFAULT_MODEL,
        num_layers: Optional[int] = None,
        *,
        idf: bool = False,
        rescale_with_baseline: bool = True,
        baseline_path: Optional[str] = None,
        lang: str = "en",
        batch_size: int = 64,
        device: Optional[str] = None,
        strip: bool = True,
        use_fast_tokenizer: bool = False,
        one_pair_per_call: bool = True,
    ) -> None:
        bert_score = _deps()
        import torch

        self._torch = torch
        if num_layers is None:
            num_layers = DEFAULT_LAYERS if model_type == DEFAULT_MODEL else None
            if num_layers is None:
                raise ScoringError(f"BERTScore: give the layer to use for model {model_type!r} (--bertscore-layers N)")
        self.model_type = model_type
        self.num_layers = int(num_layers)
        self.idf = bool(idf)
        self.strip = strip
        self.one_pair_per_call = one_pair_per_call
        self.rescale_with_baseline = rescale_with_baseline
        self._baseline: Optional[Any] = None
        base_tag = "none"
        if rescale_with_baseline:
            path = baseline_path or _bundled_baseline(bert_score, lang, model_type)
            if not os.path.isfile(path):
                raise ScoringError(
                    f"BERTScore: no rescaling baseline for {model_type!r} (looked for {path}); "
                    "give baseline_path (--bertscore-baseline FILE) or turn rescaling off"
                )
            vals = _read_baseline(path, self.num_layers)
            self._baseline = torch.tensor(vals, dtype=torch.float64).float()
            with open(path, "rb") as fh:
                base_tag = "bundled" if baseline_path is None else hashlib.sha256(fh.read()).hexdigest()[:12]
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            self._scorer = bert_score.BERTScorer(
                model_type=model_type,
                num_layers=self.num_layers,
                batch_size=batch_size,
                idf=self.idf,
                device=device,
                lang=lang,
                rescale_with_baseline=False,
                use_fast_tokenizer=use_fast_tokenizer,
            )
        except OSError as exc:
            raise ScoringError(f"BERTScore: cannot load model {model_type!r}: {exc}") from None
        self.identity = (
            f"bertscore:model={model_type},layers={self.num_layers},idf={'true' if idf else 'false'},rescale={base_tag}"
        )
        self._batch_size = batch_size

    def __repr__(self) -> str:
        return f"BertScorer({self.identity})"

    def __call__(self, candidates: Sequence[str], references: Sequence[str]) -> PRF:
        torch = self._torch
        if len(candidates) != len(references):
            raise ScoringError(f"BERTScore: {len(candidates)} candidates but {len(references)} references")
        cands = [c.strip() if self.strip else c for c in candidates]
        refs = [r.strip() if self.strip else r for r in references]
        if self.idf:
            # idf weights from the references of this call, as bert-score's score() does
            import warnings

            self._scorer._idf_dict = None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._scorer.compute_idf([r for r in refs if r.strip()] or [""])
        raw = torch.zeros((len(cands), 3), dtype=torch.float32)
        live = [i for i, (c, r) in enumerate(zip(cands, refs)) if c.strip() and r.strip()]
        groups = [[i] for i in live] if self.one_pair_per_call else ([live] if live else [])
        for group in groups:
            P, R, F = self._scorer.score(
                [cands[i] for i in group], [[refs[i]] for i in group], batch_size=self._batch_size
            )
            raw[group, 0] = P.float()
            raw[group, 1] = R.float()
            raw[group, 2] = F.float()
        out = raw
        if self._baseline is not None:
            out = (raw - self._baseline) / (1 - self._baseline)
        return PRF(out[:, 0].tolist(), out[:, 1].tolist(), out[:, 2].tolist())
