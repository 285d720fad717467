"""Pipeline step: the judge answer cache -- content-addressed, append-only JSONL that survives a kill.

Cache format: one JSON object per line, appended and fsync'd after every answer::

    {"key": "<sha256>", "judge": "<identity>", "model": "<model>",
     "params": {...}, "prompt_sha256": "<sha256>", "answer": "<text>"}

plus ``"sample": s`` for sample ``s >= 1`` of ``--samples N`` (:func:`sample_key`)
and ``"usage": {...}`` when the server reported token usage (kept as it came).
Lines without them (older caches) are read as sample 0 without usage.

``key`` is the sha256 of the canonical JSON of judge identity, model, parameters
and prompt (:func:`cache_key`).  Only successful answers are written.  A process
killed while writing leaves at most a truncated last line: it is skipped when the
cache is read and cut off before the next append; a byte-order mark and lines of
NUL bytes (a power loss) are skipped too, and said (:attr:`JudgeCache.notes`).
"""

import hashlib
import json
import os
import threading
from typing import (
    Any,
    Dict,
    List,
    Mapping,
    NamedTuple,
    Optional,
)

from .._numbers import float_text
from ..errors import ScoringError
from .interface import _SURROGATE_RE, canonical_json

__all__ = ["JudgeCache", "cache_key", "sample_key"]


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
        v = float_text(tok, finite=True)
        if v is None:
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


def sample_key(identity: str, model: str, params: Mapping[str, Any], prompt: str, sample: int) -> str:
    """The cache key of sample ``sample`` of a prompt (``--samples N``): :func:`cache_key` for sample 0.

    Sample 0 keeps the key of a run without ``--samples``, so caches written
    before sampling existed still answer it; sample ``s >= 1`` adds ``"sample": s``
    to the hashed JSON.

    >>> sample_key("j", "m", {}, "hi", 0) == cache_key("j", "m", {}, "hi")
    True
    >>> len({sample_key("j", "m", {}, "hi", s) for s in range(3)})
    3
    """
    if sample == 0:
        return cache_key(identity, model, params, prompt)
    body = {"judge": identity, "model": model, "params": dict(params), "prompt": prompt, "sample": sample}
    return _sha256(canonical_json(body))


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
        self._usage: Dict[str, Any] = {}
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
                if entry["key"] not in self._answers:
                    self._answers[entry["key"]] = entry["answer"]
                    if entry.get("usage") is not None:
                        self._usage[entry["key"]] = entry["usage"]

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

    def get_usage(self, key: str) -> Any:
        """The ``usage`` stored with the answer of ``key`` (as the server returned it), or ``None``."""
        with self._lock:
            return self._usage.get(key)

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
            if out.get("usage") is not None:
                self._usage[key] = out["usage"]

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
