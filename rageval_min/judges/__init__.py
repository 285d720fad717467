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

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as they are typed; at run time each loads with its module, on first use
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
        JudgeAnswer,
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

#: name -> the module that defines it (imported on first use: no transport at start-up)
_WHERE = {
    "CommandJudge": "command",
    "DEFAULT_ABORT_AFTER": "interface",
    "DEFAULT_API_KEY_ENV": "interface",
    "DEFAULT_MAX_RESPONSE_BYTES": "interface",
    "DEFAULT_RETRIES": "interface",
    "DEFAULT_TIMEOUT": "interface",
    "EX_TEMPFAIL": "interface",
    "EmbeddingScorer": "interface",
    "FunctionJudge": "interface",
    "HttpJudge": "http",
    "Judge": "interface",
    "JudgeAborted": "interface",
    "JudgeAnswer": "interface",
    "JudgeCache": "cache",
    "JudgeError": "interface",
    "JudgeResult": "interface",
    "JudgeRunner": "runner",
    "JudgeStats": "interface",
    "MAX_CONCURRENCY": "interface",
    "MAX_COPIED_TEXT": "interface",
    "MAX_MAX_RESPONSE_BYTES": "interface",
    "MAX_RETRIES": "interface",
    "MAX_TIMEOUT": "interface",
    "MIN_MAX_RESPONSE_BYTES": "interface",
    "OPENAI_API_KEY_ENV": "interface",
    "PRF": "interface",
    "PromptTemplate": "templates",
    "ReplayJudge": "replay",
    "RunnerOptions": "runner",
    "UnparseableAnswer": "interface",
    "as_pair_scorer": "interface",
    "cache_key": "cache",
    "canonical_json": "interface",
    "chat_messages": "interface",
    "judge_from_spec": "spec",
    "key_env_names": "interface",
    "redact": "interface",
    "run_judge": "runner",
    "run_with_options": "runner",
    "template_fields": "templates",
    "template_signature": "templates",
    "templates_from_args": "templates",
}

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
    "JudgeAnswer",
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


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
