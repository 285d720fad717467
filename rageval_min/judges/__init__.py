"""LLM judges and embedding scorers: the adapter interface and the one runner.

The public face of the judges: every name below is importable as
``rageval_min.judges.NAME``; the agreement, sampling and cost modules are
``rageval_min.judges.agreement``, ``.sampling`` and ``.cost``.

Inside, one module per concern: ``interface`` (the :class:`Judge` and
:class:`EmbeddingScorer` protocols, errors, stats, limits, redaction), the
transports ``http`` (``http(s)://``), ``command`` (``cmd:``) and ``replay``
(``replay:``), ``spec`` (a judge from its ``--judge`` spec), ``cache`` (the
JSONL answer cache), ``runner`` (:func:`run_judge`, :class:`JudgeRunner` and
its :class:`RunnerOptions`), ``templates`` (prompt templates), ``options``
(the ``--judge*`` and ``--bertscore*`` command-line options) and ``cli``
(``rageval-min judge``).
"""

from .cache import JudgeCache, cache_key
from .command import CommandJudge
from .http import HttpJudge
from .interface import (
    DEFAULT_ABORT_AFTER,
    DEFAULT_API_KEY_ENV,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    EX_TEMPFAIL,
    MAX_CONCURRENCY,
    MAX_COPIED_TEXT,
    MAX_MAX_RESPONSE_BYTES,
    MAX_RETRIES,
    MAX_TIMEOUT,
    MIN_MAX_RESPONSE_BYTES,
    OPENAI_API_KEY_ENV,
    PRF,
    EmbeddingScorer,
    FunctionJudge,
    Judge,
    JudgeAborted,
    JudgeError,
    JudgeResult,
    JudgeStats,
    UnparseableAnswer,
    as_pair_scorer,
    canonical_json,
    chat_messages,
    key_env_names,
    redact,
)
from .replay import ReplayJudge
from .runner import JudgeRunner, RunnerOptions, run_judge, run_with_options
from .spec import judge_from_spec
from .templates import PromptTemplate, template_fields, template_signature, templates_from_args

__all__ = [
    "CommandJudge",
    "DEFAULT_ABORT_AFTER",
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "EX_TEMPFAIL",
    "EmbeddingScorer",
    "FunctionJudge",
    "HttpJudge",
    "Judge",
    "JudgeAborted",
    "JudgeCache",
    "JudgeError",
    "JudgeResult",
    "JudgeRunner",
    "JudgeStats",
    "MAX_CONCURRENCY",
    "MAX_COPIED_TEXT",
    "MAX_MAX_RESPONSE_BYTES",
    "MAX_RETRIES",
    "MAX_TIMEOUT",
    "MIN_MAX_RESPONSE_BYTES",
    "OPENAI_API_KEY_ENV",
    "PRF",
    "PromptTemplate",
    "ReplayJudge",
    "RunnerOptions",
    "UnparseableAnswer",
    "as_pair_scorer",
    "cache_key",
    "canonical_json",
    "chat_messages",
    "judge_from_spec",
    "key_env_names",
    "redact",
    "run_judge",
    "run_with_options",
    "template_fields",
    "template_signature",
    "templates_from_args",
]
