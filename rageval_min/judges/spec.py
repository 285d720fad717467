"""Pipeline step: a judge from its command-line spec string (``--judge``).

==========================  ====================================================
spec                        judge
==========================  ====================================================
``http://HOST:PORT/v1``     any OpenAI-compatible chat-completions server (vLLM,
``https://...``             llama.cpp server, Ollama, LM Studio, a cloud API),
                            spoken with :mod:`http.client`; needs
                            ``--judge-model``.
                            The bearer key, if any, is read from the environment
                            variable ``RAGEVAL_MIN_JUDGE_API_KEY`` (or the one
                            named by ``--judge-api-key-env``).
``openai:MODEL``            the official ``openai`` client (extra
                            ``rageval-min[openai]``); key and base URL from the
                            client's usual ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``.
``cmd:PROGRAM ARGS``        runs the command (split with :func:`shlex.split`, no
                            shell) once per prompt: prompt on stdin, answer on
                            stdout.  Exit status 75 (``EX_TEMPFAIL``) is retried,
                            any other non-zero status is a failed call.  The
                            API key variables are not passed to the program
                            unless ``--judge-pass-env`` is given.
``replay:CACHE.jsonl``      offline replay of a judge cache; a prompt that is not
                            in the file is an error, never a default answer.
==========================  ====================================================
"""

from typing import Optional

from .._extras import load_extra
from ..errors import ScoringError
from .command import CommandJudge
from .http import HttpJudge
from .interface import DEFAULT_API_KEY_ENV, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT, Judge
from .replay import ReplayJudge

__all__ = ["judge_from_spec"]


def judge_from_spec(
    spec: str,
    *,
    model: Optional[str] = None,
    timeout: float = DEFAULT_TIMEOUT,
    api_key_env: Optional[str] = None,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    pass_env: bool = False,
) -> Judge:
    """Build a judge from a CLI spec string (see the module docstring).

    ``max_response_bytes`` applies to ``http(s)://`` judges; ``pass_env`` lets a
    ``cmd:`` judge's program see the API key variables (off by default).

    >>> judge_from_spec("http://127.0.0.1:8000/v1", model="m").identity
    'openai-chat@http://127.0.0.1:8000/v1'
    >>> judge_from_spec('cmd:python -c "print(1)"').identity
    "cmd:python -c 'print(1)'"
    >>> judge_from_spec("nope")
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: --judge: unknown judge spec 'nope' (expected http://HOST:PORT/v1, ...
    """
    s = spec.strip()
    low = s.lower()
    if low.startswith("http://") or low.startswith("https://"):
        return HttpJudge(
            s,
            model or "",
            timeout=timeout,
            api_key_env=api_key_env or DEFAULT_API_KEY_ENV,
            max_response_bytes=max_response_bytes,
        )
    if low.startswith("cmd:"):
        return CommandJudge(s[4:], model=model or "", timeout=timeout, api_key_env=api_key_env, pass_env=pass_env)
    if low.startswith("replay:"):
        return ReplayJudge(s[7:], model=model)
    if low.startswith("openai:"):
        name = s[7:]
        if model and name and model != name:
            raise ScoringError(f"--judge {s} and --judge-model {model} name different models")
        name = name or (model or "")
        if not name:
            raise ScoringError("openai judge needs a model: --judge openai:MODEL")
        mod = load_extra("openai")
        judge: Judge = mod.OpenAIJudge(name, timeout=timeout, api_key_env=api_key_env)
        return judge
    raise ScoringError(
        f"unknown judge spec {spec!r} (expected http://HOST:PORT/v1, openai:MODEL, "
        'cmd:"PROGRAM ARGS" or replay:CACHE.jsonl)',
        field="--judge",
    )
