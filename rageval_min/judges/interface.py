"""Pipeline step: the judge interface -- what a judge and an embedding scorer are, and what a run returns.

A *judge* turns a prompt into answer text.  An *embedding scorer* turns candidate
and reference texts into BERTScore-style precision / recall / F lists.  Both are
tiny :class:`typing.Protocol` classes, so any Python object with the right shape
can be passed to the API; the CLI builds one from a spec string
(:func:`rageval_min.judges.spec.judge_from_spec`).

This module also holds the limits every transport shares (docs/judges.md,
"Security and limits") and :func:`redact`, which every error message copied
from a server or a judge program goes through.  API keys are never part of an
identity, a cache record, an error message or a ``repr``.
"""

import json
import os
import re
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    runtime_checkable,
)

from ..errors import ScoringError

__all__ = [
    "DEFAULT_ABORT_AFTER",
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "EX_TEMPFAIL",
    "MAX_CONCURRENCY",
    "MAX_COPIED_TEXT",
    "MAX_MAX_RESPONSE_BYTES",
    "MAX_RETRIES",
    "MAX_TIMEOUT",
    "MIN_MAX_RESPONSE_BYTES",
    "OPENAI_API_KEY_ENV",
    "PRF",
    "EmbeddingScorer",
    "FunctionJudge",
    "Judge",
    "JudgeAborted",
    "JudgeAnswer",
    "JudgeError",
    "JudgeResult",
    "JudgeStats",
    "UnparseableAnswer",
    "as_pair_scorer",
    "canonical_json",
    "chat_messages",
    "key_env_names",
    "redact",
]

DEFAULT_API_KEY_ENV = "RAGEVAL_MIN_JUDGE_API_KEY"
OPENAI_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_TIMEOUT = 120.0
DEFAULT_RETRIES = 4
DEFAULT_ABORT_AFTER = 5
EX_TEMPFAIL = 75

# Limits (docs/judges.md, "Security and limits").
#: Longest total time of one judge call, in seconds (``--judge-timeout``).
MAX_TIMEOUT = 3600.0
#: Largest HTTP response body read (``--judge-max-response-bytes``), and its bounds.
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
MIN_MAX_RESPONSE_BYTES = 1024
MAX_MAX_RESPONSE_BYTES = 1024 * 1024 * 1024
#: Most judge calls in flight (``--concurrency``) and most retries per call (``--judge-retries``).
MAX_CONCURRENCY = 256
MAX_RETRIES = 20
#: Longest server or program text copied into an error message.
MAX_COPIED_TEXT = 500

# --------------------------------------------------------------------------- #
# Interfaces
# --------------------------------------------------------------------------- #


@runtime_checkable
class Judge(Protocol):
    """Anything that answers a prompt.

    ``identity`` is a stable string naming the judge (not its model, not a key):
    it is hashed into every cache key.  ``model`` is the model name ("" when
    the judge has none).  Calling the judge with a prompt and a parameter
    mapping returns the answer text.  ``params`` holds the generation settings a
    step fixes (``system`` message, ``temperature``, ``top_p``, ``max_tokens``,
    ``seed``, ...); a judge that cannot honour them may ignore them, but they
    are part of the cache key either way.

    A failed call raises :class:`JudgeError` (``retryable=True`` for a
    transient failure); a :class:`~rageval_min.errors.ScoringError` stops the
    whole run (used for configuration problems and replay misses).
    """

    identity: str
    model: str

    def __call__(self, prompt: str, params: Mapping[str, Any]) -> str: ...


class PRF(NamedTuple):
    """BERTScore-style lists, one value per candidate/reference pair."""

    P: List[float]
    R: List[float]
    F: List[float]


@runtime_checkable
class EmbeddingScorer(Protocol):
    """Anything that scores candidates against references, BERTScore style.

    ``scorer(candidates, references)`` takes two equally long sequences of
    strings and returns a :class:`PRF` of three equally long float lists.
    ``identity`` names the model and settings (it goes into signatures).
    The extra ``rageval_min_extras.bertscore`` provides one.
    """

    identity: str

    def __call__(self, candidates: Sequence[str], references: Sequence[str]) -> PRF: ...


class JudgeError(Exception):
    """One failed judge call.  ``retryable`` marks 429 / 5xx / timeouts."""

    def __init__(self, msg: str, *, retryable: bool = False, retry_after: Optional[float] = None) -> None:
        super().__init__(msg)
        self.retryable = retryable
        self.retry_after = retry_after


class UnparseableAnswer(Exception):
    """Raised by a step's parser for an answer it cannot read.

    ``fallback`` is the value the step's reference assigns to such an answer
    (``"unknown"``, ``None``, ...).  The runner stores it and counts the
    answer in :attr:`JudgeStats.unparseable`.
    """

    def __init__(self, fallback: Any = None, msg: str = "unparseable judge answer") -> None:
        super().__init__(msg)
        self.fallback = fallback


class JudgeStats(NamedTuple):
    """What a run did.  Each count is separate and gateable.

    ``calls``: prompts sent to the judge (retries not counted again);
    ``cache_hits``: prompts answered from the cache (or by an identical prompt
    earlier in the same run); ``failures``: calls that still failed after the
    retries (never cached); ``unparseable``: answers the parser rejected.
    """

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    unparseable: int = 0

    def as_metrics(self, prefix: str = "judge_") -> Dict[str, int]:
        """``{"judge_calls": .., "judge_cache_hits": .., ...}`` for gates."""
        return {prefix + k: v for k, v in self._asdict().items()}


class JudgeResult(NamedTuple):
    """Per-prompt results in input order, plus the stats.

    ``answers[i]`` is the text (``None`` when the call failed), ``parsed[i]``
    the parser's value (the answer itself without a parser, ``None`` on
    failure), ``errors[i]`` the failure message or ``None``.
    """

    answers: List[Optional[str]]
    parsed: List[Any]
    errors: List[Optional[str]]
    stats: JudgeStats


class JudgeAnswer(NamedTuple):
    """One answer with what it came with: its text, the server's ``usage`` object as returned
    (``None`` when there was none) and whether it was made by this call (``fresh``) rather
    than read back from a cache (``replay:``).

    A judge that can tell its usage has ``answer_full(prompt, params, sample) -> JudgeAnswer``
    beside ``__call__``; the runner uses it when present.
    """

    text: str
    usage: Optional[Dict[str, Any]] = None
    fresh: bool = True


class JudgeAborted(ScoringError):
    """Too many consecutive failed calls; everything answered so far is cached."""

    def __init__(self, msg: str, stats: JudgeStats) -> None:
        super().__init__(msg)
        self.stats = stats


# --------------------------------------------------------------------------- #
# Judges
# --------------------------------------------------------------------------- #


class FunctionJudge:
    """Wrap a plain ``fn(prompt) -> str`` (or ``fn(prompt, params)``) as a judge.

    >>> j = FunctionJudge(lambda p: p.upper(), identity="upper")
    >>> j("yes", {})
    'YES'
    """

    def __init__(self, fn: Callable[..., str], *, identity: str, model: str = "", takes_params: bool = False) -> None:
        self._fn = fn
        self.identity = identity
        self.model = model
        self._takes_params = takes_params

    def __call__(self, prompt: str, params: Mapping[str, Any]) -> str:
        out = self._fn(prompt, params) if self._takes_params else self._fn(prompt)
        if not isinstance(out, str):
            raise JudgeError(f"judge {self.identity} returned {type(out).__name__}, not str")
        return out

    def __repr__(self) -> str:
        return f"FunctionJudge(identity={self.identity!r}, model={self.model!r})"


def chat_messages(prompt: str, params: Mapping[str, Any]) -> Tuple[List[Dict[str, str]], Dict[str, Any]]:
    """Split ``params`` into the chat messages and the remaining request fields."""
    rest = dict(params)
    system = rest.pop("system", None)
    messages: List[Dict[str, str]] = []
    if system is not None:
        messages.append({"role": "system", "content": str(system)})
    messages.append({"role": "user", "content": prompt})
    return messages, rest


_BEARER_RE = re.compile(r"(?i)\b(bearer)\s+(?!\[REDACTED\])[^\s\"',;}\]]+")


def key_env_names(api_key_env: Optional[str] = None) -> List[str]:
    """The environment variables that hold judge API keys (the defaults plus ``api_key_env``)."""
    names = [DEFAULT_API_KEY_ENV, OPENAI_API_KEY_ENV]
    if api_key_env and api_key_env not in names:
        names.append(api_key_env)
    return names


def redact(text: str, secrets: Iterable[str] = (), *, limit: int = MAX_COPIED_TEXT) -> str:
    """``text`` (copied from a server or a judge program) made safe to write to a file.

    Every secret (API key) is replaced by ``[REDACTED]``, so is the token after
    any ``Bearer`` (an echoed ``Authorization`` header), and the result is cut
    to ``limit`` characters.

    >>> redact("echo: Authorization: Bearer sk-123 and sk-123", ["sk-123"])
    'echo: Authorization: Bearer [REDACTED] and [REDACTED]'
    """
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "[REDACTED]")
    text = _BEARER_RE.sub(lambda m: m.group(1) + " [REDACTED]", text)
    if len(text) > limit:
        text = text[:limit] + "...[cut]"
    return text


def _env_secrets(api_key_env: Optional[str] = None) -> List[str]:
    return [v for v in (os.environ.get(n) for n in key_env_names(api_key_env)) if v]


def _check_timeout(timeout: float) -> float:
    t = float(timeout)
    if not (0 < t <= MAX_TIMEOUT):  # also rejects nan
        raise ScoringError(f"--judge-timeout must be a number of seconds in (0, {MAX_TIMEOUT:g}], not {timeout!r}")
    return t


def canonical_json(obj: Any) -> str:
    """Compact, key-sorted JSON (the form hashed into cache keys and written in signatures).

    >>> canonical_json({"b": 1, "a": [1, "x"]})
    '{"a":[1,"x"],"b":1}'
    """
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def as_pair_scorer(scorer: EmbeddingScorer) -> Callable[[str, str], Tuple[float, float]]:
    """``(candidate, reference) -> (P, R)`` from an :class:`EmbeddingScorer`, one pair per call.

    The shape of MT-RAG's hook (:data:`rageval_min.mtrag.BertScorer`), which
    scores each target and each passage in its own call as the reference does.
    """

    def score(candidate: str, reference: str) -> Tuple[float, float]:
        prf = scorer([candidate], [reference])
        return prf.P[0], prf.R[0]

    return score
