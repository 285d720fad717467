"""Pipeline step: the ``http(s)://`` judge transport (OpenAI-compatible chat completions, :mod:`http.client`).

Spec ``http://HOST:PORT/v1`` or ``https://...``: any OpenAI-compatible
chat-completions server (vLLM, llama.cpp server, Ollama, LM Studio, a cloud
API); needs ``--judge-model``.  The bearer key, if any, is read from the
environment variable ``RAGEVAL_MIN_JUDGE_API_KEY`` (or the one named by
``--judge-api-key-env``).
"""

import http.client
import json
import os
import socket
import threading
import urllib.parse
from typing import (
    Any,
    Dict,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
)

from .._numbers import float_text
from ..errors import ScoringError
from .interface import (
    _SURROGATE_RE,
    DEFAULT_API_KEY_ENV,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT,
    MAX_COPIED_TEXT,
    MAX_MAX_RESPONSE_BYTES,
    MIN_MAX_RESPONSE_BYTES,
    JudgeAnswer,
    JudgeError,
    _check_timeout,
    _env_secrets,
    chat_messages,
    redact,
)

__all__ = ["HttpJudge"]

_READ_CHUNK = 64 * 1024


def _retry_after(value: Optional[str]) -> Optional[float]:
    if not value:
        return None
    secs = float_text(value)
    return secs if secs is not None and secs >= 0 else None


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
        return self.answer_full(prompt, params).text

    def answer_full(self, prompt: str, params: Mapping[str, Any], sample: int = 0) -> JudgeAnswer:
        """The answer and the ``usage`` object the server sent with it (``sample`` is not sent)."""
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
            text, usage = self._exchange(conn, watchdog, data, headers)
            return JudgeAnswer(self._without_secrets(text), usage)
        finally:
            watchdog.cancel()
            with self._live_lock:
                self._live.discard(watchdog)
            conn.close()

    def _without_secrets(self, answer: str) -> str:
        """The answer with the API key (and the keys of the environment) replaced by ``[REDACTED]``: a
        server that echoes it in a successful answer must not get it into the answers file or cache."""
        for secret in self._secrets():
            if secret and len(secret) >= 4 and secret in answer:
                answer = answer.replace(secret, "[REDACTED]")
        return answer

    def _timed_out(self) -> JudgeError:
        return JudgeError(
            f"timed out after {self.timeout:g}s (the whole call, --judge-timeout) waiting for {self.base_url}",
            retryable=True,
        )

    def _exchange(
        self, conn: http.client.HTTPConnection, watchdog: _Watchdog, data: bytes, headers: Any
    ) -> Tuple[str, Optional[Dict[str, Any]]]:
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
        return _answer_from_json(raw, self.base_url, self._secrets())

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


def _safe_usage(usage: Any) -> Optional[Dict[str, Any]]:
    """``usage`` when it is an object that strict JSON can hold (no NaN, no lone surrogate), else ``None``."""
    if not isinstance(usage, dict):
        return None
    try:
        text = json.dumps(usage, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return None
    return None if _SURROGATE_RE.search(text) else usage


def _answer_from_json(raw: bytes, where: str, secrets: Sequence[str] = ()) -> Tuple[str, Optional[Dict[str, Any]]]:
    """The content and the ``usage`` object (as sent; ``None`` when absent or not an object) of a body."""
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
    return content, _safe_usage(payload.get("usage") if isinstance(payload, dict) else None)
