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
                            spoken with :mod:`urllib`; needs ``--judge-model``.
                            The bearer key, if any, is read from the environment
                            variable ``RAGEVAL_MIN_JUDGE_API_KEY`` (or the one
                            named by ``--judge-api-key-env``).
``openai:MODEL``            the official ``openai`` client (extra
                            ``rageval-min[openai]``); key and base URL from the
                            client's usual ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``.
``cmd:PROGRAM ARGS``        runs the command (split with :func:`shlex.split`, no
                            shell) once per prompt: prompt on stdin, answer on
                            stdout.  Exit status 75 (``EX_TEMPFAIL``) is retried,
                            any other non-zero status is a failed call.
``replay:CACHE.jsonl``      offline replay of a judge cache; a prompt that is not
                            in the file is an error, never a default answer.
==========================  ====================================================

Every call goes through :func:`run_judge` (or :class:`JudgeRunner`, which holds
the options): a content-addressed JSONL cache, retries with exponential backoff on
HTTP 429 / 5xx / timeouts, a per-call timeout, a thread pool whose results come
back in input order, an abort after too many consecutive failures, a progress line
on a terminal, and a final :class:`JudgeStats`.

Cache format: one JSON object per line, appended and fsync'd after every answer::

    {"key": "<sha256>", "judge": "<identity>", "model": "<model>",
     "params": {...}, "prompt_sha256": "<sha256>", "answer": "<text>"}

``key`` is the sha256 of the canonical JSON of judge identity, model, parameters
and prompt (:func:`cache_key`).  Only successful answers are written.  A process
killed while writing leaves at most a truncated last line: it is skipped when the
cache is read and cut off before the next append.  API keys are never part of an
identity, a cache record, an error message or a ``repr``.

Prompt templates (:class:`PromptTemplate`) are plain text with ``{name}`` fields
for the placeholders a step defines; other braces are left alone and ``{{`` /
``}}`` give a literal brace.  The signature records ``judge_template=builtin`` or
the first 12 hex digits of the template file's sha256.
"""

import hashlib
import http.client
import json
import os
import queue
import re
import shlex
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
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
    TextIO,
    Tuple,
    runtime_checkable,
)

from ._extras import load_extra
from ._io import read_text
from .errors import ScoringError

__all__ = [
    "DEFAULT_API_KEY_ENV",
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
    "judge_from_spec",
    "run_judge",
    "template_signature",
    "templates_from_args",
]

DEFAULT_API_KEY_ENV = "RAGEVAL_MIN_JUDGE_API_KEY"
DEFAULT_TIMEOUT = 120.0
DEFAULT_RETRIES = 4
DEFAULT_ABORT_AFTER = 5
EX_TEMPFAIL = 75


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

    def line(self) -> str:
        """One human line, e.g. for stderr."""
        return "judge: " + " ".join(f"{k}={v}" for k, v in self._asdict().items())


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


def _messages(prompt: str, params: Mapping[str, Any]) -> Tuple[List[Dict[str, str]], Dict[str, Any]]:
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


class HttpJudge:
    """OpenAI-compatible chat completions over :mod:`urllib` (stdlib only).

    ``POST {base_url}/chat/completions`` with ``{"model", "messages", **params}``
    (``params["system"]`` becomes a system message); the answer is
    ``choices[0].message.content``.  HTTP 429 and 5xx, connection errors and
    timeouts are retryable failures; other HTTP errors, malformed JSON and a
    missing content are failures that are not retried.  ``timeout`` is the
    socket timeout of each request, in seconds.

    The bearer key is read once from the environment variable ``api_key_env``
    (nothing is sent when it is unset or empty); it is never shown by ``repr``,
    in errors, in the identity or in the cache.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        api_key_env: str = DEFAULT_API_KEY_ENV,
    ) -> None:
        if not model:
            raise ScoringError("an http judge needs a model name (--judge-model NAME)")
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
            raise ScoringError(f"not an http(s) URL: {base_url!r}", field="--judge")
        if parts.username or parts.password:
            raise ScoringError(
                "put no credentials in the judge URL; use the API key environment variable", field="--judge"
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.identity = "openai-chat@" + self.base_url
        self._api_key = os.environ.get(api_key_env) or None

    def __repr__(self) -> str:
        return f"HttpJudge(base_url={self.base_url!r}, model={self.model!r})"

    def __call__(self, prompt: str, params: Mapping[str, Any]) -> str:
        messages, rest = _messages(prompt, params)
        body = dict(rest)
        body["model"] = self.model
        body["messages"] = messages
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = "Bearer " + self._api_key
        req = urllib.request.Request(self.base_url + "/chat/completions", data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            status = exc.code
            try:
                detail = exc.read(300).decode("utf-8", "replace").strip().replace("\n", " ")
            except Exception:  # pragma: no cover - best effort
                detail = ""
            retryable = status == 429 or 500 <= status <= 599
            after = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
            raise JudgeError(
                f"HTTP {status} from {self.base_url}: {detail[:200]}", retryable=retryable, retry_after=after
            ) from None
        except (socket.timeout, TimeoutError):
            raise JudgeError(f"timed out after {self.timeout:g}s waiting for {self.base_url}", retryable=True) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise JudgeError(
                    f"timed out after {self.timeout:g}s connecting to {self.base_url}", retryable=True
                ) from None
            raise JudgeError(f"cannot reach {self.base_url}: {reason}", retryable=True) from None
        except (ConnectionError, OSError, http.client.HTTPException) as exc:  # reset, cut-off body, ...
            raise JudgeError(
                f"connection to {self.base_url} failed: {exc.__class__.__name__}", retryable=True
            ) from None
        return _content_from_json(raw, self.base_url)


def _content_from_json(raw: bytes, where: str) -> str:
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        snippet = raw[:80].decode("utf-8", "replace")
        raise JudgeError(f"malformed JSON from {where}: {snippet!r}") from None
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise JudgeError(f"no choices[0].message.content in the response from {where}") from None
    if not isinstance(content, str):
        raise JudgeError(f"choices[0].message.content from {where} is {type(content).__name__}, not a string")
    return content


class CommandJudge:
    """Run a program per prompt: prompt (UTF-8) on stdin, answer on stdout.

    The command is split with :func:`shlex.split` and run without a shell.
    The model name and the step parameters are passed as the environment
    variables ``RAGEVAL_MIN_JUDGE_MODEL`` and ``RAGEVAL_MIN_JUDGE_PARAMS``
    (JSON).  stdout is returned as is (decoded as UTF-8).  Exit status 75
    and a timeout are retryable failures; any other non-zero status is a
    failure that is not retried.
    """

    def __init__(self, command: str, *, model: str = "", timeout: float = DEFAULT_TIMEOUT) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise ScoringError(f"cannot split judge command {command!r}: {exc}") from None
        if not self.argv:
            raise ScoringError('cmd: judge needs a program, e.g. cmd:"python my_judge.py"')
        self.command = command
        self.model = model
        self.timeout = timeout
        self.identity = "cmd:" + " ".join(shlex.quote(a) for a in self.argv)

    def __repr__(self) -> str:
        return f"CommandJudge(command={self.command!r}, model={self.model!r})"

    def __call__(self, prompt: str, params: Mapping[str, Any]) -> str:
        env = dict(os.environ)
        env["RAGEVAL_MIN_JUDGE_MODEL"] = self.model
        env["RAGEVAL_MIN_JUDGE_PARAMS"] = json.dumps(dict(params), ensure_ascii=False, sort_keys=True)
        try:
            proc = subprocess.run(
                self.argv,
                input=prompt.encode("utf-8"),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                timeout=self.timeout,
                env=env,
            )
        except subprocess.TimeoutExpired:
            raise JudgeError(f"judge command timed out after {self.timeout:g}s", retryable=True) from None
        except OSError as exc:
            raise ScoringError(f"cannot run judge command {self.argv[0]!r}: {exc.strerror or exc}") from None
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            tail = err[-1][:200] if err else ""
            raise JudgeError(
                f"judge command exited with status {proc.returncode}" + (f": {tail}" if tail else ""),
                retryable=proc.returncode == EX_TEMPFAIL,
            )
        try:
            return proc.stdout.decode("utf-8")
        except UnicodeDecodeError:
            raise JudgeError("judge command wrote non-UTF-8 output") from None


def _canonical(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(identity: str, model: str, params: Mapping[str, Any], prompt: str) -> str:
    """sha256 of the canonical JSON of judge identity, model, parameters, prompt.

    >>> cache_key("j", "m", {"temperature": 0}, "hi") == cache_key("j", "m", {"temperature": 0}, "hi")
    True
    >>> cache_key("j", "m", {}, "hi") == cache_key("j", "m2", {}, "hi")
    False
    """
    return _sha256(_canonical({"judge": identity, "model": model, "params": dict(params), "prompt": prompt}))


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
        for entry in JudgeCache.read_entries(path):
            ent_model = str(entry.get("model", ""))
            if self._want_model is not None and ent_model != self._want_model:
                continue
            models.add(ent_model)
            k = (str(entry.get("prompt_sha256", "")), _canonical(entry.get("params", {})))
            self._index.setdefault(k, {}).setdefault(ent_model, entry["answer"])
        if self._want_model is None and len(models) == 1:
            # one model in the cache: report it, so a replay's signature equals the live run's
            self.model = next(iter(models))

    def __repr__(self) -> str:
        return f"ReplayJudge(path={self.path!r}, model={self.model!r})"

    def __call__(self, prompt: str, params: Mapping[str, Any]) -> str:
        psha = _sha256(prompt)
        found = self._index.get((psha, _canonical(dict(params))))
        if not found:
            scope = f" for model {self._want_model!r}" if self._want_model else ""
            raise ScoringError(
                f"replay: no cached answer{scope} for prompt sha256 {psha[:16]} with params {_canonical(dict(params))}",
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
) -> Judge:
    """Build a judge from a CLI spec string (see the module docstring).

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
        return HttpJudge(s, model or "", timeout=timeout, api_key_env=api_key_env or DEFAULT_API_KEY_ENV)
    if low.startswith("cmd:"):
        return CommandJudge(s[4:], model=model or "", timeout=timeout)
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

    Reading keeps the first answer per key.  A last line without its newline
    that is not valid JSON is a write cut short by a kill: it is skipped, and
    cut off before the next append.  Any other bad line is a
    :class:`~rageval_min.errors.ScoringError` naming the file and line.
    Thread-safe; one writing process per file.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._answers: Dict[str, str] = {}
        self._good_size = 0
        self._fd: Optional[int] = None
        d = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(d):
            raise ScoringError("judge cache directory does not exist", path=path)
        if os.path.exists(path):
            for entry in self._scan():
                self._answers.setdefault(entry["key"], entry["answer"])

    @staticmethod
    def read_entries(path: str) -> List[Dict[str, Any]]:
        """Every valid entry of a cache file (skipping a truncated last line)."""
        return [e for e in JudgeCache._parse(path)[0]]

    @staticmethod
    def _parse(path: str) -> Tuple[List[Dict[str, Any]], int]:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise ScoringError(f"cannot read judge cache: {exc.strerror or exc}", path=path) from None
        entries: List[Dict[str, Any]] = []
        good = 0
        pos = 0
        line_no = 0
        while pos < len(data):
            nl = data.find(b"\n", pos)
            line_no += 1
            last = nl < 0
            chunk = data[pos:] if last else data[pos:nl]
            end = len(data) if last else nl + 1
            if not chunk.strip():
                pos = end
                good = end
                continue
            try:
                entry = json.loads(chunk.decode("utf-8"))
                ok = (
                    isinstance(entry, dict)
                    and isinstance(entry.get("key"), str)
                    and isinstance(entry.get("answer"), str)
                )
            except (UnicodeDecodeError, ValueError):
                ok = False
                entry = None
            if not ok:
                if last:
                    break  # a write cut short by a kill: skip it
                raise ScoringError(
                    "not a judge cache entry (want a JSON object with key and answer)", path=path, line=line_no
                )
            entries.append(entry)
            pos = end
            good = end
        return entries, good

    def _scan(self) -> List[Dict[str, Any]]:
        entries, good = self._parse(self.path)
        self._good_size = good
        return entries

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
            _, good = self._parse(self.path)
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

    def __enter__(self) -> "JudgeCache":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


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


class _RunState:
    def __init__(self) -> None:
        self.calls = 0
        self.cache_hits = 0
        self.failures = 0
        self.consecutive = 0
        self.done = 0
        self.abort = False
        self.last_error = ""


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
      ``failures``; its answer is ``None`` and nothing is cached.
    * After ``abort_after`` consecutive failed calls (0 = never) no new call
      is started and :class:`JudgeAborted` is raised once the running ones
      end.  A :class:`~rageval_min.errors.ScoringError` from the judge stops
      the run the same way and is re-raised as is.
    * ``concurrency`` threads call the judge at once.
    * ``parse`` turns each answer into a value; raising
      :class:`UnparseableAnswer` stores its ``fallback`` and counts the answer
      as unparseable.
    * A progress line goes to ``progress`` only when it is a terminal.
    """
    if concurrency < 1:
        raise ScoringError("--concurrency must be at least 1")
    if retries < 0:
        raise ScoringError("--judge-retries must be >= 0")
    p: Dict[str, Any] = dict(params or {})
    n = len(prompts)
    identity = judge.identity
    model = getattr(judge, "model", "") or ""
    use_cache = cache is not None and getattr(judge, "cacheable", True)
    answers: List[Optional[str]] = [None] * n
    errors: List[Optional[str]] = [None] * n
    st = _RunState()
    todo: Dict[str, List[int]] = {}
    for i, prompt in enumerate(prompts):
        if not isinstance(prompt, str):
            raise ScoringError(f"prompt {i + 1} is {type(prompt).__name__}, not a string")
        key = cache_key(identity, model, p, prompt)
        hit = cache.get(key) if cache is not None else None
        if hit is not None:
            answers[i] = hit
            st.cache_hits += 1
        elif key in todo:
            todo[key].append(i)
            st.cache_hits += 1
        else:
            todo[key] = [i]

    lock = threading.Lock()
    st.done = n - sum(len(idx) for idx in todo.values())
    fatal: List[BaseException] = []
    work: "queue.Queue[Tuple[str, List[int]]]" = queue.Queue()
    for key, idx in todo.items():
        work.put((key, idx))
    prog = _Progress(progress, n, label)

    def stats_now() -> JudgeStats:
        return JudgeStats(st.calls, st.cache_hits, st.failures, 0)

    def call_one(prompt: str) -> str:
        attempt = 0
        while True:
            try:
                return judge(prompt, p)
            except JudgeError as exc:
                if not exc.retryable or attempt >= retries:
                    raise
                with lock:
                    if st.abort:
                        raise
                delay = min(backoff * (2**attempt), max_backoff)
                if exc.retry_after is not None:
                    delay = max(delay, min(exc.retry_after, max_backoff))
                sleep(delay)
                attempt += 1

    def worker() -> None:
        while True:
            with lock:
                if st.abort:
                    return
            try:
                key, idx = work.get_nowait()
            except queue.Empty:
                return
            prompt = prompts[idx[0]]
            with lock:
                st.calls += 1
            try:
                answer = call_one(prompt)
            except JudgeError as exc:
                msg = str(exc)
                with lock:
                    st.failures += 1
                    st.consecutive += 1
                    st.last_error = msg
                    st.done += len(idx)
                    for i in idx:
                        errors[i] = msg
                    if abort_after and st.consecutive >= abort_after:
                        st.abort = True
                continue
            except BaseException as exc:  # ScoringError and anything unexpected
                with lock:
                    fatal.append(exc)
                    st.abort = True
                return
            if use_cache:
                assert cache is not None
                try:
                    cache.put(
                        key,
                        {
                            "judge": identity,
                            "model": model,
                            "params": p,
                            "prompt_sha256": _sha256(prompt),
                            "answer": answer,
                        },
                    )
                except OSError as exc:
                    with lock:
                        fatal.append(ScoringError(f"cannot write judge cache: {exc.strerror or exc}", path=cache.path))
                        st.abort = True
                    return
                except BaseException as exc:  # ScoringError from opening the cache, or a bug
                    with lock:
                        fatal.append(exc)
                        st.abort = True
                    return
            with lock:
                st.consecutive = 0
                st.done += len(idx)
                for i in idx:
                    answers[i] = answer

    threads = [
        threading.Thread(target=worker, name=f"judge-{t}", daemon=True)
        for t in range(min(concurrency, max(1, len(todo))))
    ]
    for t in threads:
        t.start()
    try:
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=0.1)
                with lock:
                    done, now = st.done, stats_now()
                prog.update(done, now)
    except KeyboardInterrupt:
        with lock:
            st.abort = True
        for t in threads:
            t.join()
        raise
    finally:
        with lock:
            done, now = st.done, stats_now()
        prog.update(done, now, force=True)
        prog.close()
    if fatal:
        raise fatal[0]
    if st.abort:
        raise JudgeAborted(
            f"judge run aborted after {st.consecutive} consecutive failed calls "
            f"(last: {st.last_error}); answers so far are cached, rerun to resume",
            stats_now(),
        )

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
    stats = JudgeStats(st.calls, st.cache_hits, st.failures, unparseable)
    return JudgeResult(answers, parsed, errors, stats)


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
