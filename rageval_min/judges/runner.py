"""LLM judges and embedding scorers: the adapter interface and the one runner.

A *judge* turns a prompt into answer text.  An *embedding scorer* turns candidate
and reference texts into BERTScore-style precision / recall / F lists.  Both are
tiny :class:`typing.Protocol` classes, so any Python object with the right shape
can be passed to the API; the CLI builds one from a spec string:

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

Every call goes through :func:`run_judge` (or :class:`JudgeRunner`, which holds
the options): a content-addressed JSONL cache, retries with exponential backoff on
HTTP 429 / 5xx / timeouts, a total deadline per call, a thread pool whose results
come back in input order, an abort after too many consecutive failures, a progress
line on a terminal, and a final :class:`JudgeStats`.  Every limit (redirects,
response size, deadline, key redaction, the ``cmd:`` environment, cache recovery)
is listed in docs/judges.md, "Security and limits".

Cache format: one JSON object per line, appended and fsync'd after every answer::

    {"key": "<sha256>", "judge": "<identity>", "model": "<model>",
     "params": {...}, "prompt_sha256": "<sha256>", "answer": "<text>"}

``key`` is the sha256 of the canonical JSON of judge identity, model, parameters
and prompt (:func:`cache_key`).  Only successful answers are written.  A process
killed while writing leaves at most a truncated last line: it is skipped when the
cache is read and cut off before the next append; a byte-order mark and lines of
NUL bytes (a power loss) are skipped too, and said (:attr:`JudgeCache.notes`).
API keys are never part of an identity, a cache record, an error message or a
``repr``.

Prompt templates (:class:`PromptTemplate`) are plain text with ``{name}`` fields
for the placeholders a step defines; other braces are left alone and ``{{`` /
``}}`` give a literal brace.  The signature records ``judge_template=builtin`` or
the first 12 hex digits of the template file's sha256.
"""

import hashlib
import http.client
import json
import math
import os
import queue
import re
import shlex
import socket
import subprocess
import threading
import time
import urllib.parse
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
    Set,
    TextIO,
    Tuple,
    runtime_checkable,
)

from .._extras import load_extra
from .._io import read_text
from ..errors import ScoringError

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "MAX_CONCURRENCY",
    "MAX_MAX_RESPONSE_BYTES",
    "MAX_RETRIES",
    "MAX_TIMEOUT",
    "MIN_MAX_RESPONSE_BYTES",
    "CommandJudge",
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
    "PRF",
    "PromptTemplate",
    "ReplayJudge",
    "UnparseableAnswer",
    "as_pair_scorer",
    "cache_key",
    "canonical_json",
    "chat_messages",
    "judge_from_spec",
    "key_env_names",
    "redact",
    "run_judge",
    "template_fields",
    "template_signature",
    "templates_from_args",
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
_READ_CHUNK = 64 * 1024


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


def _retry_after(value: Optional[str]) -> Optional[float]:
    if not value:
        return None
    try:
        secs = float(value)
    except ValueError:
        return None
    return secs if secs >= 0 else None


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


class _Watchdog:
    """Ends a call at its deadline: shuts its TCP connection down, so that any blocked step returns at once.

    It holds a duplicate of the connection's socket (its own descriptor, the
    same connection), taken as soon as the TCP connection exists, so a TLS
    handshake, a request being sent, headers or a body trickling in are all
    cut off at the deadline.
    """

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._sock: Optional[socket.socket] = None
        self._done = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self.fire)
        self._timer.daemon = True
        self._timer.start()

    def create_connection(self, *args: Any, **kwargs: Any) -> socket.socket:
        """``socket.create_connection`` that keeps a duplicate for :meth:`fire` (an HTTPConnection hook)."""
        sock = socket.create_connection(*args, **kwargs)
        with self._lock:
            if not self._done:
                self._sock = sock.dup()
            if self.fired:
                self._shutdown()
        return sock

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            self._shutdown()

    def _shutdown(self) -> None:
        if self._sock is None:
            return
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def cancel(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._done = True
            if self._sock is not None:
                self._sock.close()
                self._sock = None


class HttpJudge:
    """OpenAI-compatible chat completions over :mod:`http.client` (stdlib only).

    ``POST {base_url}/chat/completions`` with ``{"model", "messages", **params}``
    (``params["system"]`` becomes a system message); the answer is
    ``choices[0].message.content``.  HTTP 429 and 5xx, connection errors and
    timeouts are retryable failures; other HTTP errors, malformed JSON and a
    missing content are failures that are not retried.

    Limits (see docs/judges.md, "Security and limits"): ``timeout`` is the
    total time of one call in seconds (connecting, sending, waiting and
    reading), not of each socket read; the response body is read in pieces and
    a reply over ``max_response_bytes`` is a failed call; a redirect (3xx) is a
    failed call that is not followed, so the request and its key only ever go
    to ``base_url``'s origin.  Environment proxies are not used.

    The bearer key is read once from the environment variable ``api_key_env``
    (nothing is sent when it is unset or empty); it is never shown by ``repr``,
    in the identity or in the cache, and server text copied into an error
    message is redacted (:func:`redact`).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        if not model:
            raise ScoringError("an http judge needs a model name (--judge-model NAME)")
        parts = urllib.parse.urlsplit(base_url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise ScoringError(f"not an http(s) URL: {base_url!r}", field="--judge")
        if parts.username or parts.password:
            raise ScoringError(
                "put no credentials in the judge URL; use the API key environment variable", field="--judge"
            )
        try:
            port = parts.port
        except ValueError:
            raise ScoringError(f"bad port in the judge URL {base_url!r}", field="--judge") from None
        if parts.query or parts.fragment:
            raise ScoringError(f"no query or fragment in the judge URL, please: {base_url!r}", field="--judge")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = _check_timeout(timeout)
        self.max_response_bytes = int(max_response_bytes)
        if not MIN_MAX_RESPONSE_BYTES <= self.max_response_bytes <= MAX_MAX_RESPONSE_BYTES:
            raise ScoringError(
                f"--judge-max-response-bytes must be between {MIN_MAX_RESPONSE_BYTES} and {MAX_MAX_RESPONSE_BYTES}"
            )
        self.identity = "openai-chat@" + self.base_url
        self.api_key_env = api_key_env
        self._https = scheme == "https"
        self._host = parts.hostname
        self._port = port
        self._path = parts.path.rstrip("/") + "/chat/completions"
        self._api_key = os.environ.get(api_key_env) or None
        self._live: Set[_Watchdog] = set()
        self._live_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"HttpJudge(base_url={self.base_url!r}, model={self.model!r})"

    def cancel(self) -> None:
        """End every call in flight now (used on Ctrl-C); each fails as timed out."""
        with self._live_lock:
            live = list(self._live)
        for w in live:
            w.fire()

    def _secrets(self) -> List[str]:
        return ([self._api_key] if self._api_key else []) + _env_secrets(self.api_key_env)

    def _fail(self, msg: str, **kw: Any) -> JudgeError:
        return JudgeError(redact(msg, self._secrets()), **kw)

    def _connection(self, watchdog: _Watchdog) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection
        if self._https:
            import ssl

            conn = http.client.HTTPSConnection(
                self._host, self._port, timeout=self.timeout, context=ssl.create_default_context()
            )
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
        conn._create_connection = watchdog.create_connection  # type: ignore[attr-defined]
        return conn

    def __call__(self, prompt: str, params: Mapping[str, Any]) -> str:
        messages, rest = chat_messages(prompt, params)
        body = dict(rest)
        body["model"] = self.model
        body["messages"] = messages
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = "Bearer " + self._api_key
        watchdog = _Watchdog(self.timeout)
        with self._live_lock:
            self._live.add(watchdog)
        conn = self._connection(watchdog)
        try:
            return self._exchange(conn, watchdog, data, headers)
        finally:
            watchdog.cancel()
            with self._live_lock:
                self._live.discard(watchdog)
            conn.close()

    def _timed_out(self) -> JudgeError:
        return JudgeError(
            f"timed out after {self.timeout:g}s (the whole call, --judge-timeout) waiting for {self.base_url}",
            retryable=True,
        )

    def _exchange(self, conn: http.client.HTTPConnection, watchdog: _Watchdog, data: bytes, headers: Any) -> str:
        try:
            conn.connect()
        except (socket.timeout, TimeoutError):
            raise self._timed_out() from None
        except OSError as exc:
            if watchdog.fired:
                raise self._timed_out() from None
            raise self._fail(f"cannot reach {self.base_url}: {exc.strerror or exc}", retryable=True) from None
        try:
            conn.request("POST", self._path, body=data, headers=headers)
            resp = conn.getresponse()
            status = resp.status
            if 300 <= status <= 399:
                where = resp.getheader("Location") or "no Location"
                raise self._fail(
                    f"HTTP {status} redirect from {self.base_url} to {where[:200]}: redirects are not followed "
                    "(the API key goes only to the --judge URL); point --judge at the final URL"
                )
            if not 200 <= status <= 299:
                try:
                    detail = resp.read(MAX_COPIED_TEXT).decode("utf-8", "replace").strip().replace("\n", " ")
                except (OSError, http.client.HTTPException):
                    detail = ""
                retryable = status == 429 or 500 <= status <= 599
                after = _retry_after(resp.getheader("Retry-After"))
                raise self._fail(
                    f"HTTP {status} from {self.base_url}: {detail}", retryable=retryable, retry_after=after
                )
            raw = self._read_body(resp)
        except JudgeError:
            if watchdog.fired:
                raise self._timed_out() from None
            raise
        except (OSError, http.client.HTTPException) as exc:  # timeout, reset, cut-off body, ...
            if watchdog.fired or isinstance(exc, (socket.timeout, TimeoutError)):
                raise self._timed_out() from None
            raise JudgeError(
                f"connection to {self.base_url} failed: {exc.__class__.__name__}", retryable=True
            ) from None
        if watchdog.fired:
            raise self._timed_out()
        return _content_from_json(raw, self.base_url, self._secrets())

    def _read_body(self, resp: http.client.HTTPResponse) -> bytes:
        limit = self.max_response_bytes
        over = JudgeError(
            f"response from {self.base_url} is larger than {limit} bytes (--judge-max-response-bytes); not read"
        )
        header = (resp.getheader("Content-Length") or "").strip()
        length = int(header) if header.isdigit() and len(header) < 20 else None
        if length is not None and length > limit:
            raise over
        chunks: List[bytes] = []
        total = 0
        while True:
            chunk = resp.read(min(_READ_CHUNK, limit + 1 - total))
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise over
            chunks.append(chunk)
        if length is not None and total < length:
            raise JudgeError(
                f"connection to {self.base_url} failed: body cut off at {total} of {length} bytes", retryable=True
            )
        return b"".join(chunks)


def _content_from_json(raw: bytes, where: str, secrets: Sequence[str] = ()) -> str:
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        snippet = raw[:80].decode("utf-8", "replace")
        raise JudgeError(redact(f"malformed JSON from {where}: {snippet!r}", secrets)) from None
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise JudgeError(f"no choices[0].message.content in the response from {where}") from None
    if not isinstance(content, str):
        raise JudgeError(f"choices[0].message.content from {where} is {type(content).__name__}, not a string")
    if _SURROGATE_RE.search(content):
        raise JudgeError(f"choices[0].message.content from {where} holds a lone UTF-16 surrogate, which is not text")
    return content


class CommandJudge:
    """Run a program per prompt: prompt (UTF-8) on stdin, answer on stdout.

    The command is split with :func:`shlex.split` and run without a shell.
    The model name and the step parameters are passed as the environment
    variables ``RAGEVAL_MIN_JUDGE_MODEL`` and ``RAGEVAL_MIN_JUDGE_PARAMS``
    (JSON).  The API key variables (``RAGEVAL_MIN_JUDGE_API_KEY``,
    ``OPENAI_API_KEY`` and ``api_key_env``) are removed from the program's
    environment unless ``pass_env`` is set (``--judge-pass-env``).  stdout is
    returned as is (decoded as UTF-8).  Exit status 75 and a timeout (the
    whole run of the program) are retryable failures; any other non-zero
    status is a failure that is not retried.
    """

    def __init__(
        self,
        command: str,
        *,
        model: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        api_key_env: Optional[str] = None,
        pass_env: bool = False,
    ) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise ScoringError(f"cannot split judge command {command!r}: {exc}") from None
        if not self.argv:
            raise ScoringError('cmd: judge needs a program, e.g. cmd:"python my_judge.py"')
        self.command = command
        self.model = model
        self.timeout = _check_timeout(timeout)
        self.api_key_env = api_key_env
        self.pass_env = pass_env
        self.identity = "cmd:" + " ".join(shlex.quote(a) for a in self.argv)
        self._live: Set["subprocess.Popen[bytes]"] = set()
        self._live_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CommandJudge(command={self.command!r}, model={self.model!r})"

    def environment(self, params: Mapping[str, Any]) -> Dict[str, str]:
        """The program's environment: ours, less the API keys (unless ``pass_env``), plus model and params."""
        env = dict(os.environ)
        if not self.pass_env:
            for name in key_env_names(self.api_key_env):
                env.pop(name, None)
        env["RAGEVAL_MIN_JUDGE_MODEL"] = self.model
        env["RAGEVAL_MIN_JUDGE_PARAMS"] = json.dumps(dict(params), ensure_ascii=False, sort_keys=True)
        return env

    def cancel(self) -> None:
        """Kill every program still running (used on Ctrl-C)."""
        with self._live_lock:
            live = list(self._live)
        for proc in live:
            try:
                proc.kill()
            except OSError:
                pass

    def __call__(self, prompt: str, params: Mapping[str, Any]) -> str:
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.environment(params),
            )
        except OSError as exc:
            raise ScoringError(f"cannot run judge command {self.argv[0]!r}: {exc.strerror or exc}") from None
        with self._live_lock:
            self._live.add(proc)
        try:
            out, err = proc.communicate(prompt.encode("utf-8"), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise JudgeError(f"judge command timed out after {self.timeout:g}s", retryable=True) from None
        finally:
            with self._live_lock:
                self._live.discard(proc)
        if proc.returncode != 0:
            lines = err.decode("utf-8", "replace").strip().splitlines()
            tail = redact(lines[-1], _env_secrets(self.api_key_env)) if lines else ""
            raise JudgeError(
                f"judge command exited with status {proc.returncode}" + (f": {tail}" if tail else ""),
                retryable=proc.returncode == EX_TEMPFAIL,
            )
        try:
            return out.decode("utf-8")
        except UnicodeDecodeError:
            raise JudgeError("judge command wrote non-UTF-8 output") from None


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


class _UnsafeJson(ValueError):
    """Valid JSON that cannot be read safely (too long an integer, an overflowing number, ...)."""


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return bool(_SURROGATE_RE.search(value))
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def _strict_loads(text: str) -> Any:
    """``json.loads`` that raises :class:`_UnsafeJson` for what the cache must not hold.

    Malformed JSON raises :class:`json.JSONDecodeError` as usual.
    """

    def constant(name: str) -> Any:
        raise _UnsafeJson(f"{name} is not a JSON number")

    def number(tok: str) -> float:
        v = float(tok)
        if not math.isfinite(v):
            raise _UnsafeJson(f"the number {tok[:30]} overflows a float")
        return v

    try:
        value = json.loads(text, parse_constant=constant, parse_float=number)
    except (json.JSONDecodeError, _UnsafeJson):
        raise
    except RecursionError:
        raise _UnsafeJson("JSON nested too deeply") from None
    except ValueError as exc:  # an integer longer than sys.get_int_max_str_digits()
        raise _UnsafeJson(f"cannot read this JSON value ({exc})") from None
    if "\\u" in text and _has_surrogate(value):
        raise _UnsafeJson("holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text")
    return value


class _CacheScan(NamedTuple):
    entries: List[Dict[str, Any]]
    good: int  # bytes of the file up to the end of its last complete line
    notes: List[str]  # what was recovered from, for the user


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(identity: str, model: str, params: Mapping[str, Any], prompt: str) -> str:
    """sha256 of the canonical JSON of judge identity, model, parameters, prompt.

    >>> cache_key("j", "m", {"temperature": 0}, "hi") == cache_key("j", "m", {"temperature": 0}, "hi")
    True
    >>> cache_key("j", "m", {}, "hi") == cache_key("j", "m2", {}, "hi")
    False
    """
    return _sha256(canonical_json({"judge": identity, "model": model, "params": dict(params), "prompt": prompt}))


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


# --------------------------------------------------------------------------- #
# Cache
# --------------------------------------------------------------------------- #


def _fsync_dir(path: str) -> None:
    """Persist a new directory entry (best effort; not every platform allows it)."""
    try:
        dfd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


class JudgeCache:
    """Append-only, fsync'd, content-addressed JSONL cache of judge answers.

    Reading keeps the first answer per key.  Damage that a crash or a power
    loss leaves is recovered from, and said in :attr:`notes`: a last line
    without its newline that is not valid JSON (a write cut short by a kill)
    is skipped and cut off before the next append; a UTF-8 byte-order mark at
    the start is ignored; a line of NUL bytes (a block the file system
    allocated but never wrote) is skipped, and so is a line that NUL bytes
    made unreadable; NUL bytes before an intact entry are ignored.  Any other
    bad line, and JSON this project cannot read safely (an integer over
    Python's digit limit, a number that overflows a float, ``NaN``, a lone
    UTF-16 surrogate, nesting too deep) is a
    :class:`~rageval_min.errors.ScoringError` naming the file and line.
    Thread-safe; one writing process per file.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._answers: Dict[str, str] = {}
        self._good_size = 0
        self._fd: Optional[int] = None
        self.notes: List[str] = []
        d = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(d):
            raise ScoringError("judge cache directory does not exist", path=path)
        if os.path.exists(path):
            scan = self._parse(path)
            self._good_size = scan.good
            self.notes = scan.notes
            for entry in scan.entries:
                self._answers.setdefault(entry["key"], entry["answer"])

    @staticmethod
    def read_entries(path: str) -> List[Dict[str, Any]]:
        """Every valid entry of a cache file (recovering as :class:`JudgeCache` does)."""
        return JudgeCache._parse(path).entries

    @staticmethod
    def _parse(path: str) -> "_CacheScan":
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise ScoringError(f"cannot read judge cache: {exc.strerror or exc}", path=path) from None
        scan = _CacheScan([], 0, [])
        pos = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        nul_lines = damaged = 0
        line_no = 0
        while pos < len(data):
            nl = data.find(b"\n", pos)
            line_no += 1
            last = nl < 0
            end = len(data) if last else nl + 1
            chunk = data[pos:end].rstrip(b"\r\n")
            had_nul = b"\x00" in chunk
            body = chunk.strip(b"\x00 \t\r") if had_nul else chunk
            pos = end
            if not body.strip():
                if had_nul:
                    nul_lines += 1
                scan = scan._replace(good=end)
                continue
            try:
                entry = _strict_loads(body.decode("utf-8"))
                ok = (
                    isinstance(entry, dict)
                    and isinstance(entry.get("key"), str)
                    and isinstance(entry.get("answer"), str)
                )
            except _UnsafeJson as exc:
                raise ScoringError(f"judge cache entry: {exc}", path=path, line=line_no) from None
            except (UnicodeDecodeError, ValueError):
                ok, entry = False, None
            if not ok and had_nul:
                damaged += 1  # a line the power loss garbled: the rest of the file is still good
                scan = scan._replace(good=end)
                continue
            if not ok:
                if last:
                    break  # a write cut short by a kill: skip it (cut off before the next append)
                raise ScoringError(
                    "not a judge cache entry (want a JSON object with key and answer)", path=path, line=line_no
                )
            scan.entries.append(entry)
            scan = scan._replace(good=end)
        notes = scan.notes
        if data.startswith(b"\xef\xbb\xbf"):
            notes.append("ignored a UTF-8 byte-order mark at the start")
        if nul_lines:
            notes.append(f"skipped {nul_lines} line(s) of NUL bytes (left by a crash or power loss)")
        if damaged:
            notes.append(f"skipped {damaged} line(s) damaged by NUL bytes (left by a crash or power loss)")
        if scan.good < len(data):
            notes.append("skipped an unfinished last line (a write cut short)")
        return scan

    def __len__(self) -> int:
        return len(self._answers)

    def get(self, key: str) -> Optional[str]:
        with self._lock:
            return self._answers.get(key)

    def put(self, key: str, record: Mapping[str, Any]) -> None:
        """Append one answer (``record`` holds judge, model, params, prompt_sha256, answer)."""
        line = dict(record)
        line["key"] = key
        out = {"key": key}
        out.update((k, v) for k, v in line.items() if k != "key")
        data = (json.dumps(out, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            if key in self._answers:
                return
            if self._fd is None:
                self._open_for_append()
            assert self._fd is not None
            view = memoryview(data)
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
            os.fsync(self._fd)
            self._answers[key] = str(out["answer"])

    def _open_for_append(self) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        created = not os.path.exists(self.path)
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            raise ScoringError(f"cannot write judge cache: {exc.strerror or exc}", path=self.path) from None
        if created:
            _fsync_dir(os.path.dirname(os.path.abspath(self.path)))
        size = os.fstat(fd).st_size
        if size > self._good_size:
            # Only a truncated last line can lie beyond the good prefix
            # (re-scan in case the file grew since it was read).
            good = self._parse(self.path).good
            if size > good:
                os.ftruncate(fd, good)
                os.fsync(fd)
        elif size > 0:
            # Make sure we start on a fresh line.
            with open(self.path, "rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    os.write(fd, b"\n")
        self._fd = fd

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


# --------------------------------------------------------------------------- #
# Runner
# --------------------------------------------------------------------------- #


class _Progress:
    def __init__(self, stream: Optional[TextIO], total: int, label: str) -> None:
        self.stream = stream if stream is not None and _isatty(stream) else None
        self.total = total
        self.label = label
        self._last = 0.0
        self._shown = False

    def update(self, done: int, stats: JudgeStats, force: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        self.stream.write(
            f"\r{self.label}: {done}/{self.total} calls={stats.calls} cache_hits={stats.cache_hits} "
            f"failures={stats.failures}"
        )
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self.stream is not None and self._shown:
            self.stream.write("\n")
            self.stream.flush()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except Exception:
        return False


class _Run:
    """The shared state of one :func:`run_judge` call and the steps its workers take."""

    def __init__(
        self,
        judge: Judge,
        prompts: Sequence[str],
        params: Dict[str, Any],
        cache: Optional[JudgeCache],
        *,
        retries: int,
        abort_after: int,
        backoff: float,
        max_backoff: float,
        sleep: Callable[[float], None],
    ) -> None:
        self.judge = judge
        self.prompts = prompts
        self.params = params
        self.cache = cache
        self.retries = retries
        self.abort_after = abort_after
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.sleep = sleep
        self.identity = judge.identity
        self.model = getattr(judge, "model", "") or ""
        self.use_cache = cache is not None and getattr(judge, "cacheable", True)
        self.secrets = _judge_secrets(judge)
        n = len(prompts)
        self.answers: List[Optional[str]] = [None] * n
        self.errors: List[Optional[str]] = [None] * n
        self.lock = threading.Lock()
        self.calls = self.cache_hits = self.failures = self.consecutive = self.done = 0
        self.abort = False
        self.last_error = ""
        self.fatal: List[BaseException] = []

    # -- step 1: cache lookup ------------------------------------------------
    def lookup(self) -> Dict[str, List[int]]:
        """Fill answers from the cache; return the prompts still to ask, by key (duplicates asked once)."""
        todo: Dict[str, List[int]] = {}
        for i, prompt in enumerate(self.prompts):
            if not isinstance(prompt, str):
                raise ScoringError(f"prompt {i + 1} is {type(prompt).__name__}, not a string")
            key = cache_key(self.identity, self.model, self.params, prompt)
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is not None:
                self.answers[i] = hit
                self.cache_hits += 1
            elif key in todo:
                todo[key].append(i)
                self.cache_hits += 1
            else:
                todo[key] = [i]
        self.done = len(self.prompts) - sum(len(idx) for idx in todo.values())
        return todo

    # -- step 2: one call, with retries and backoff ---------------------------
    def call(self, prompt: str) -> str:
        attempt = 0
        while True:
            try:
                return self.judge(prompt, self.params)
            except JudgeError as exc:
                if not exc.retryable or attempt >= self.retries or self.aborted():
                    raise
                delay = min(self.backoff * (2**attempt), self.max_backoff)
                if exc.retry_after is not None:
                    delay = max(delay, min(exc.retry_after, self.max_backoff))
                self.sleep(delay)
                attempt += 1

    # -- step 3: bookkeeping of each outcome ---------------------------------
    def aborted(self) -> bool:
        with self.lock:
            return self.abort

    def failed(self, idx: List[int], exc: JudgeError) -> None:
        msg = redact(str(exc), self.secrets)
        with self.lock:
            self.failures += 1
            self.consecutive += 1
            self.last_error = msg
            self.done += len(idx)
            for i in idx:
                self.errors[i] = msg
            if self.abort_after and self.consecutive >= self.abort_after:
                self.abort = True

    def stop(self, exc: BaseException) -> None:
        with self.lock:
            self.fatal.append(exc)
            self.abort = True

    def answered(self, key: str, idx: List[int], answer: str) -> None:
        if self.use_cache:
            assert self.cache is not None
            prompt = self.prompts[idx[0]]
            record = {
                "judge": self.identity,
                "model": self.model,
                "params": self.params,
                "prompt_sha256": _sha256(prompt),
                "answer": answer,
            }
            try:
                self.cache.put(key, record)
            except OSError as exc:
                raise ScoringError(f"cannot write judge cache: {exc.strerror or exc}", path=self.cache.path) from None
        with self.lock:
            self.consecutive = 0
            self.done += len(idx)
            for i in idx:
                self.answers[i] = answer

    # -- step 4: the worker of the pool --------------------------------------
    def worker(self, work: "queue.Queue[Tuple[str, List[int]]]") -> None:
        while not self.aborted():
            try:
                key, idx = work.get_nowait()
            except queue.Empty:
                return
            with self.lock:
                self.calls += 1
            try:
                answer = self.call(self.prompts[idx[0]])
            except JudgeError as exc:
                self.failed(idx, exc)
                continue
            except BaseException as exc:  # ScoringError and anything unexpected stop the run
                self.stop(exc)
                return
            try:
                self.answered(key, idx, answer)
            except BaseException as exc:  # the cache cannot be written
                self.stop(exc)
                return

    # -- step 5: stats ----------------------------------------------------------
    def stats(self, unparseable: int = 0) -> JudgeStats:
        with self.lock:
            return JudgeStats(self.calls, self.cache_hits, self.failures, unparseable)

    def progress(self) -> Tuple[int, JudgeStats]:
        with self.lock:
            return self.done, JudgeStats(self.calls, self.cache_hits, self.failures, 0)


def _judge_secrets(judge: Any) -> List[str]:
    """The API keys a judge's messages must never show (its own and the usual variables')."""
    own = getattr(judge, "_secrets", None)
    secrets = list(own()) if callable(own) else []
    return secrets + _env_secrets(getattr(judge, "api_key_env", None))


#: How long Ctrl-C waits for the calls in flight to end after cancelling them.
_INTERRUPT_GRACE = 1.0


def _run_pool(run: _Run, todo: Dict[str, List[int]], concurrency: int, prog: "_Progress") -> None:
    """Ask every prompt of ``todo`` with ``concurrency`` daemon threads; Ctrl-C cancels the calls in flight."""
    work: "queue.Queue[Tuple[str, List[int]]]" = queue.Queue()
    for item in todo.items():
        work.put(item)
    threads = [
        threading.Thread(target=run.worker, args=(work,), name=f"judge-{t}", daemon=True)
        for t in range(min(concurrency, max(1, len(todo))))
    ]
    for t in threads:
        t.start()
    try:
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=0.1)
                prog.update(*run.progress())
    except KeyboardInterrupt:
        with run.lock:
            run.abort = True
        cancel = getattr(run.judge, "cancel", None)
        if callable(cancel):
            cancel()
        end = time.monotonic() + _INTERRUPT_GRACE
        for t in threads:  # daemon threads: whatever still runs after the grace ends with the process
            t.join(timeout=max(0.0, end - time.monotonic()))
        raise
    finally:
        prog.update(*run.progress(), force=True)
        prog.close()


def _parse_answers(answers: Sequence[Optional[str]], parse: Optional[Callable[[str], Any]]) -> Tuple[List[Any], int]:
    """Each answer through ``parse``: the values and how many were unparseable."""
    parsed: List[Any] = []
    unparseable = 0
    for a in answers:
        if a is None:
            parsed.append(None)
        elif parse is None:
            parsed.append(a)
        else:
            try:
                parsed.append(parse(a))
            except UnparseableAnswer as exc:
                parsed.append(exc.fallback)
                unparseable += 1
    return parsed, unparseable


def run_judge(
    judge: Judge,
    prompts: Sequence[str],
    *,
    params: Optional[Mapping[str, Any]] = None,
    parse: Optional[Callable[[str], Any]] = None,
    cache: Optional[JudgeCache] = None,
    concurrency: int = 1,
    retries: int = DEFAULT_RETRIES,
    abort_after: int = DEFAULT_ABORT_AFTER,
    backoff: float = 1.0,
    max_backoff: float = 60.0,
    sleep: Callable[[float], None] = time.sleep,
    progress: Optional[TextIO] = None,
    label: str = "judge",
) -> JudgeResult:
    """Ask ``judge`` every prompt; return answers in input order.

    * Cached answers (same :func:`cache_key`) are not asked again; identical
      prompts in one run are asked once.  Each new answer is appended to
      ``cache`` as soon as it arrives.
    * A :class:`JudgeError` with ``retryable`` set is retried up to
      ``retries`` more times, waiting ``backoff * 2**attempt`` seconds (capped
      at ``max_backoff``; a server's ``Retry-After`` wins when larger) through
      the injectable ``sleep``.  A call that still fails counts in
      ``failures``; its answer is ``None`` and nothing is cached.  Its error
      message is redacted (:func:`redact`) and capped.
    * After ``abort_after`` consecutive failed calls (0 = never) no new call
      is started and :class:`JudgeAborted` is raised once the running ones
      end.  A :class:`~rageval_min.errors.ScoringError` from the judge stops
      the run the same way and is re-raised as is.
    * ``concurrency`` daemon threads call the judge at once; on Ctrl-C the
      judge's calls in flight are cancelled (its ``cancel()``, when it has
      one) and :class:`KeyboardInterrupt` propagates within about a second.
    * ``parse`` turns each answer into a value; raising
      :class:`UnparseableAnswer` stores its ``fallback`` and counts the answer
      as unparseable.
    * A progress line goes to ``progress`` only when it is a terminal.
    """
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise ScoringError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}")
    if not 0 <= retries <= MAX_RETRIES:
        raise ScoringError(f"--judge-retries must be between 0 and {MAX_RETRIES}")
    run = _Run(
        judge,
        prompts,
        dict(params or {}),
        cache,
        retries=retries,
        abort_after=abort_after,
        backoff=backoff,
        max_backoff=max_backoff,
        sleep=sleep,
    )
    todo = run.lookup()
    _run_pool(run, todo, concurrency, _Progress(progress, len(prompts), label))
    if run.fatal:
        raise run.fatal[0]
    if run.abort:
        raise JudgeAborted(
            f"judge run aborted after {run.consecutive} consecutive failed calls "
            f"(last: {run.last_error}); answers so far are cached, rerun to resume",
            run.stats(),
        )
    parsed, unparseable = _parse_answers(run.answers, parse)
    return JudgeResult(run.answers, parsed, run.errors, run.stats(unparseable))


class JudgeRunner:
    """A judge plus the runner options chosen on the command line.

    ``runner.run(prompts, params=..., parse=...)`` calls :func:`run_judge`
    with them; ``runner.stats`` sums every run (a family with several judged
    steps reports one total).
    """

    def __init__(
        self,
        judge: Judge,
        *,
        cache_path: Optional[str] = None,
        concurrency: int = 1,
        retries: int = DEFAULT_RETRIES,
        abort_after: int = DEFAULT_ABORT_AFTER,
        progress: Optional[TextIO] = None,
        sleep: Callable[[float], None] = time.sleep,
        backoff: float = 1.0,
        templates: Optional[Mapping[str, str]] = None,
    ) -> None:
        self.judge = judge
        self.cache: Optional[JudgeCache] = JudgeCache(cache_path) if cache_path else None
        self.concurrency = concurrency
        self.retries = retries
        self.abort_after = abort_after
        self.progress = progress
        self.sleep = sleep
        self.backoff = backoff
        self.template_paths: Dict[str, str] = dict(templates or {})
        self.stats = JudgeStats()

    def run(
        self,
        prompts: Sequence[str],
        *,
        params: Optional[Mapping[str, Any]] = None,
        parse: Optional[Callable[[str], Any]] = None,
        label: str = "judge",
    ) -> JudgeResult:
        try:
            res = run_judge(
                self.judge,
                prompts,
                params=params,
                parse=parse,
                cache=self.cache,
                concurrency=self.concurrency,
                retries=self.retries,
                abort_after=self.abort_after,
                backoff=self.backoff,
                sleep=self.sleep,
                progress=self.progress,
                label=label,
            )
        except JudgeAborted as exc:
            self.stats = JudgeStats(*(a + b for a, b in zip(self.stats, exc.stats)))
            raise
        self.stats = JudgeStats(*(a + b for a, b in zip(self.stats, res.stats)))
        return res

    def template(self, step: str, builtin: "PromptTemplate") -> "PromptTemplate":
        """The template for ``step``: the user's file if one was given, else ``builtin``."""
        path = self.template_paths.get(step)
        if path is None:
            path = self.template_paths.get("")
        if path is None:
            return builtin
        return PromptTemplate.from_file(path, builtin.fields, step=step)

    def signature_params(self, templates: Mapping[str, "PromptTemplate"]) -> List[Tuple[str, object]]:
        """``judge_model`` and ``judge_template`` for a family's signature."""
        return [
            ("judge_model", getattr(self.judge, "model", "") or "none"),
            ("judge_template", template_signature(templates)),
        ]

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()


# --------------------------------------------------------------------------- #
# Templates
# --------------------------------------------------------------------------- #

_FIELD_RE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


class PromptTemplate:
    """A prompt with ``{name}`` placeholders.

    Only ``{identifier}`` is a placeholder, and it must be one of ``fields``;
    every other brace (JSON examples in a published prompt) is kept as is;
    ``{{`` and ``}}`` give a literal ``{`` and ``}``.

    >>> t = PromptTemplate("Q: {question}\\nOut: {\\"label\\": ...}", ["question"])
    >>> t.render(question="why?")
    'Q: why?\\nOut: {"label": ...}'
    >>> t.signature_value
    'builtin'
    """

    def __init__(self, text: str, fields: Iterable[str], *, source: Optional[str] = None, step: str = "") -> None:
        self.text = text
        self.fields = tuple(fields)
        self.source = source
        allowed = set(self.fields)
        unknown = sorted({m.group(1) for m in _FIELD_RE.finditer(text) if m.group(1) and m.group(1) not in allowed})
        if unknown:
            where = f" for step {step}" if step else ""
            raise ScoringError(
                f"unknown placeholder(s) {', '.join('{' + u + '}' for u in unknown)}{where}; "
                f"allowed: {', '.join('{' + f + '}' for f in self.fields) or 'none'}",
                path=source,
            )
        self.signature_value = "builtin" if source is None else hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    @classmethod
    def from_file(cls, path: str, fields: Iterable[str], *, step: str = "") -> "PromptTemplate":
        # The signature is the sha256 prefix of the file's bytes (``text`` encodes back to them).
        return cls(read_text(path, what="judge template"), fields, source=path, step=step)

    def render(self, **values: Any) -> str:
        missing = [f for f in self.fields if f not in values and "{" + f + "}" in self.text]
        if missing:
            raise ScoringError(f"template value(s) missing: {', '.join(missing)}")

        def sub(m: "re.Match[str]") -> str:
            tok = m.group(0)
            if tok == "{{":
                return "{"
            if tok == "}}":
                return "}"
            return str(values[m.group(1)])

        return _FIELD_RE.sub(sub, self.text)


def template_fields(text: str) -> List[str]:
    """The sorted placeholder names of a template text.

    >>> template_fields("{b} and {a}, not {{c}} or {1}")
    ['a', 'b']
    """
    return sorted({m.group(1) for m in _FIELD_RE.finditer(text) if m.group(1)})


def template_signature(templates: Mapping[str, PromptTemplate]) -> str:
    """The ``judge_template=`` value for a signature.

    ``builtin`` when every step uses its built-in prompt, the sha256 prefix
    when there is one step, else ``step:value`` pairs joined by ``,``.

    >>> template_signature({"idk": PromptTemplate("{x}", ["x"])})
    'builtin'
    """
    vals = {k: t.signature_value for k, t in templates.items()}
    if all(v == "builtin" for v in vals.values()):
        return "builtin"
    if len(vals) == 1:
        return next(iter(vals.values()))
    return ",".join(f"{k}:{vals[k]}" for k in sorted(vals))


def templates_from_args(values: Optional[Sequence[str]], steps: Sequence[str] = ()) -> Dict[str, str]:
    """Parse repeated ``--judge-template [STEP=]FILE`` into ``{step: path}``.

    A value without ``STEP=`` applies to the only step (key ``""``).

    >>> templates_from_args(["idk=a.txt", "rb_llm=b.txt"], ["idk", "rb_llm"])
    {'idk': 'a.txt', 'rb_llm': 'b.txt'}
    >>> templates_from_args(["t.txt"], ["prompt"])
    {'': 't.txt'}
    """
    out: Dict[str, str] = {}
    for v in values or ():
        step, sep, path = v.partition("=")
        if sep and step in steps:
            key = step
        elif sep and steps and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", step) and not os.path.exists(v):
            raise ScoringError(f"--judge-template: unknown step {step!r} (steps: {', '.join(steps)})")
        else:
            key, path = "", v
            if len(steps) > 1:
                raise ScoringError(f"--judge-template: name the step, STEP=FILE (steps: {', '.join(steps)})")
        if key in out:
            raise ScoringError(f"--judge-template given twice for {key or 'the step'}")
        out[key] = path
    return out


def as_pair_scorer(scorer: EmbeddingScorer) -> Callable[[str, str], Tuple[float, float]]:
    """``(candidate, reference) -> (P, R)`` from an :class:`EmbeddingScorer`, one pair per call.

    The shape of MT-RAG's hook (:data:`rageval_min.mtrag.BertScorer`), which
    scores each target and each passage in its own call as the reference does.
    """

    def score(candidate: str, reference: str) -> Tuple[float, float]:
        prf = scorer([candidate], [reference])
        return prf.P[0], prf.R[0]

    return score
