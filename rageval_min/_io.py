"""Reading inputs, and JSON written strictly, shared by every family (files are written by
:mod:`rageval_min._output`).

Readers stream: a JSONL file is read one line at a time, so memory does not grow
with the file.  A bad line does not stop the reading at once: every problem is
collected (up to :data:`MAX_PROBLEMS`) and raised together as one
:class:`~rageval_min.errors.ScoringError` when the file ends, each problem named
``file:line: what is wrong``.  Callers that write output while they read should
write through :func:`~rageval_min._output.atomic_writer`, so that a file that turns out to be bad
leaves no partial output behind.

JSONL lines follow the convention of the reference scorers: each line is
``str.strip()``-ed and blank lines are skipped.  A UTF-8 byte order mark is an
error unless ``bom_tolerant=True`` (the references open files as plain
``utf-8``, where ``json.loads`` rejects a BOM).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from collections import deque

from ._output import atomic_writer
from ._speedups_loader import kernels
from .errors import ScoringError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import (
        IO,
        Any,
        Callable,
        Deque,
        Dict,
        Iterable,
        Iterator,
        List,
        NamedTuple,
        Optional,
        Tuple,
        Type,
        TypeVar,
    )
else:
    from ._namedtuple import NamedTuple

__all__ = [
    "MAX_LINE_BYTES",
    "dumps",
    "dumps_extended",
    "finite_json",
    "first_bad_path",
    "loads",
    "MAX_PROBLEMS",
    "Problems",
    "deferred_jsonl",
    "DeferredProblems",
    "Numbered",
    "parse_item",
    "iter_jsonl",
    "parse_line",
    "ReadError",
    "Unparsed",
    "iter_records",
    "read_json",
    "read_text",
    "RECORD_FORMATS",
    "write_jsonl",
]

#: How many problems a reader collects before it stops reading the file.
MAX_PROBLEMS = 50

#: The longest JSONL line a reader accepts; a longer one is reported, not loaded.
MAX_LINE_BYTES = 256 * 1024 * 1024

_BOM = "\ufeff"


class Problems:
    """Collects problems and raises them together.

    >>> p = Problems()
    >>> p.add("expected a list", path="g.jsonl", line=2, field="citations")
    >>> len(p)
    1
    >>> try:
    ...     p.raise_if_any()
    ... except ScoringError as exc:
    ...     print(exc)
    g.jsonl:2: citations: expected a list
    """

    def __init__(self, limit: int = MAX_PROBLEMS) -> None:
        self.limit = limit
        self.messages: List[str] = []
        self.count = 0

    def __len__(self) -> int:
        return self.count

    @property
    def full(self) -> bool:
        return self.count >= self.limit

    def add(
        self,
        msg: str,
        *,
        path: Optional[str] = None,
        line: Optional[int] = None,
        field: Optional[str] = None,
        record: Optional[Any] = None,
    ) -> None:
        self.count += 1
        if len(self.messages) < self.limit:
            err = ScoringError(msg, path=path, line=line, field=field, record=record)
            self.messages.append(str(err))

    def add_error(self, err: ScoringError) -> None:
        """Merge an error that may itself carry several problems."""
        self.count += err.count
        for m in err.problems:
            if len(self.messages) < self.limit:
                self.messages.append(m)

    def raise_if_any(self, error: Type[ScoringError] = ScoringError) -> None:
        """Raise the problems (if any) as one ``error``."""
        if not self.count:
            return
        first = self.messages[0]
        if self.count == 1:
            raise error(first, problems=self.messages, count=1)
        more = self.count - 1
        stopped = " (stopped reading)" if self.count >= self.limit else ""
        raise error(
            f"{first} (and {more} more problem{'s' if more > 1 else ''}{stopped})",
            problems=self.messages,
            count=self.count,
        )


def _open_binary(path: str, what: Optional[str] = None) -> IO[bytes]:
    the = f" the {what}" if what else ""
    if os.path.isdir(path):
        raise ScoringError(f"cannot open{the}: is a directory, expected a file", path=path)
    try:
        return open(path, "rb")
    except OSError as exc:
        raise ScoringError(f"cannot open{the}: {exc.strerror or exc}", path=path) from None


# patterns compiled by re's cache when first needed (a rare path), not at start-up
_SURROGATE = "[\ud800-\udfff]"


def _escape_hit(text: str) -> bool:
    r"""True when ``text`` may hold a ``\uD800``-``\uDFFF`` escape (a cheap pre-check):
    ``"\\ud" in text or "\\uD" in text``, by the C kernel when it is built (one pass that
    stops at backslashes only; two substring searches cost ten times more on long lines).

    >>> _escape_hit(r'{"a": "x\ud800"}'), _escape_hit(r'{"a": "\n\u00e9"}'), _escape_hit(r'\\uD')
    (True, False, True)
    """
    c = kernels()
    hit = c.escape_hit(text) if c is not None else None
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    return "\\u" in text and ("\\ud" in text or "\\uD" in text)


def _brackets(text: str) -> int:
    """``text.count("[") + text.count("{")`` (a bound on the nesting depth), in one pass by the C
    kernel when it is built.

    >>> _brackets('{"a": [[1], {"b": "["}]}')
    5
    """
    c = kernels()
    n = c.brackets(text) if c is not None else None
    return n if n is not None else text.count("[") + text.count("{")


def first_bad_path(value: Any, bad: Callable[[Any], bool], *, keys: bool = False, path: str = "") -> Optional[str]:
    """The field path (``a.b[2]``; ``(value)`` for ``value`` itself) of the first leaf of a
    JSON value for which ``bad`` is true (with ``keys``, object keys are checked too); None
    when there is none.

    >>> first_bad_path({"a": [1, float("nan")]}, lambda v: v != v)
    'a[1]'
    """
    if isinstance(value, dict):
        for k, v in value.items():
            sub = f"{path}.{k}" if path else str(k)
            if keys and bad(k):
                return sub
            found = first_bad_path(v, bad, keys=keys, path=sub)
            if found:
                return found
        return None
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = first_bad_path(v, bad, keys=keys, path=f"{path}[{i}]")
            if found:
                return found
        return None
    return (path or "(value)") if bad(value) else None


def _has_surrogate(value: Any) -> bool:
    return isinstance(value, str) and re.search(_SURROGATE, value) is not None


#: How deep a JSON value may nest (lists and objects); deeper values would reach the recursion limit
#: of the code that walks them.  No input of any reference nests more than a few levels.
MAX_DEPTH = 200


_NESTED = frozenset((dict, list))


def _flat(value: Any) -> bool:
    """True for an object whose values are all scalars (nesting 1: most records): its depth needs
    no look, which is cheaper than counting the brackets of a long line.

    >>> _flat({"a": 1, "b": "x"}), _flat({"a": [1]}), _flat([1])
    (True, False, False)
    """
    return type(value) is dict and _NESTED.isdisjoint(map(type, value.values()))


def _depth(value: Any) -> int:
    """How deeply ``value`` nests (a scalar is 0), without recursion.

    >>> _depth([1, {"a": [[]]}])
    4
    """
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            level += 1
            deepest = max(deepest, level)
            stack.extend((v, level) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


#: Records the input check (:func:`rageval_min._schema.read_fields`) parsed before the command
#: reads them, ``(stripped line text, value)`` in file order: :func:`loads` takes the first one
#: when its text is the line's (the reader reads the same lines in the same order) instead of
#: parsing the same text again; a line whose text is not the first one's is parsed (another
#: file read first, a file that changed in between).  At most :data:`_PARSED_CHARS` characters
#: of text are held; the reader of a JSON Lines file empties it when it ends
#: (:func:`forget_parsed`).  A queue, not a dict by text: hashing long lines costs more than
#: comparing one.
_PARSED: Deque[Tuple[str, Any]] = deque()
_PARSED_CHARS = 1 << 22
_PARSED_SIZE = [0]
_NOT_PARSED = object()


def remember_parsed(text: str, value: Any) -> None:
    """Keep ``value``, which is ``json.loads(text)``, for :func:`loads` (while under the limit).

    The same text always parses to the same value, so taking it from here changes nothing but
    the time; each kept value is handed out once.
    """
    if _PARSED_SIZE[0] + len(text) <= _PARSED_CHARS:
        _PARSED.append((text, value))
        _PARSED_SIZE[0] += len(text)


def _take_parsed(text: str) -> Any:
    """The first kept value when it was kept for ``text`` (removed), else ``_NOT_PARSED``.

    >>> forget_parsed(); remember_parsed('{"a": 1}', {"a": 1}); remember_parsed('{"b": 2}', {"b": 2})
    >>> _take_parsed('{"b": 2}') is _NOT_PARSED, _take_parsed('{"a": 1}'), _take_parsed('{"b": 2}')
    (True, {'a': 1}, {'b': 2})
    >>> forget_parsed()
    """
    kept = _PARSED[0]
    if kept[0] != text:
        return _NOT_PARSED
    _PARSED.popleft()
    return kept[1]


def forget_parsed() -> None:
    """Drop every value :func:`remember_parsed` kept."""
    _PARSED.clear()
    _PARSED_SIZE[0] = 0


def loads(text: str) -> Any:
    r"""``json.loads`` with every failure a :class:`ValueError` subclass the readers report.

    Raises ``json.JSONDecodeError`` for malformed JSON and :class:`ScoringError`
    (without a location) for valid JSON that cannot be processed: an integer
    longer than Python's conversion limit, nesting deeper than the recursion
    limit, or a string holding a lone UTF-16 surrogate (``"\ud800"``), which
    no UTF-8 output can carry.  ``NaN``, ``Infinity`` and numbers beyond the
    float range are read as the references read them (Python's ``json``
    accepts them); outputs write them as ``null`` (see :func:`dumps`).

    >>> loads('{"a": [1, 2.5, NaN]}')
    {'a': [1, 2.5, nan]}
    >>> loads('{"q": "\\ud800"}')
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: q: holds a lone UTF-16 surrogate (\ud800-\udfff), which is not text
    """
    value = _take_parsed(text) if _PARSED else _NOT_PARSED
    try:
        if value is _NOT_PARSED:
            value = json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise ScoringError("JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer longer than sys.get_int_max_str_digits()
        raise ScoringError(f"cannot read this JSON value: {exc}") from None
    if len(text) > MAX_DEPTH and not _flat(value) and _brackets(text) > MAX_DEPTH and _depth(value) > MAX_DEPTH:
        raise ScoringError(f"JSON nested more than {MAX_DEPTH} levels deep")
    if _escape_hit(text):
        where = first_bad_path(value, _has_surrogate, keys=True)
        if where:
            raise ScoringError("holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text", field=where)
    return value


def _finite(value: Any) -> Tuple[Any, int]:
    """``value`` with every non-finite float replaced by None, and how many were replaced."""
    if isinstance(value, float):
        return (value, 0) if math.isfinite(value) else (None, 1)
    if isinstance(value, dict):
        out, n = {}, 0
        for k, v in value.items():
            out[k], m = _finite(v)
            n += m
        return out, n
    if isinstance(value, (list, tuple)):
        items, n = [], 0
        for v in value:
            w, m = _finite(v)
            items.append(w)
            n += m
        return items, n
    return value, 0


def finite_json(value: Any) -> Tuple[Any, int]:
    """``value`` made strict-JSON-safe: NaN and infinities become None; returns ``(value, replaced)``.

    >>> finite_json({"a": float("nan"), "b": [1.0, float("inf")]})
    ({'a': None, 'b': [1.0, None]}, 2)
    """
    return _finite(value)


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` that always writes strict JSON: NaN and infinities are written as ``null``.

    The common case (no non-finite number) costs one ``json.dumps`` call.

    >>> dumps({"x": float("nan")})
    '{"x": null}'
    """
    kwargs["allow_nan"] = False
    try:
        return json.dumps(value, **kwargs)
    except ValueError:
        return json.dumps(_finite(value)[0], **kwargs)


def dumps_extended(text: Optional[str], record: Dict[str, Any], out: Dict[str, Any], end: str = "") -> str:
    """``json.dumps(out) + end`` (default arguments) where ``out`` is ``record`` with new keys at its end.

    ``record`` must be ``json.loads(text)``, unchanged since (``text=None``: not known).  When
    every item of ``record`` is, by identity, the item at the same place in ``out``, the C
    speedups make the result from ``text`` (``_speedups.dumps_splice``): ``text`` itself when it
    is already in ``json.dumps`` form, else its ``json.dumps`` form made from the text, with the
    new items spliced in before the closing brace: the same string ``json.dumps(out)`` gives,
    without encoding the record's values again.  Otherwise (pure path, a replaced or converted
    value, a text the kernel declines) it is ``json.dumps(out)``.

    >>> text = '{"id": "q1", "score": 0.5}'
    >>> record = json.loads(text)
    >>> dumps_extended(text, record, dict(record, metrics={"n": [1]}))
    '{"id": "q1", "score": 0.5, "metrics": {"n": [1]}}'
    """
    c = kernels()
    if c is None or text is None or len(out) <= len(record):
        return json.dumps(out) + end
    items = iter(out.items())
    for (key, value), (new_key, new_value) in zip(record.items(), items):
        if key is not new_key or value is not new_value:
            return json.dumps(out) + end
    added = json.dumps(dict(items))  # '{"key": value, ...}': the same bytes as inside json.dumps(out)
    line = c.dumps_splice(text, added + end)  # text[:-1] + ", " + added[1:] + end (one copy), or None
    return line if line is not None else json.dumps(out) + end  # type: ignore[no-any-return]


def write_jsonl(path: str, rows: Iterable[Any], *, alone: bool = False) -> None:
    """Write ``rows`` to ``path`` as strict JSON Lines (UTF-8 text, not ASCII escapes; a NaN or an
    infinity read from the input is written as ``null``), atomically (``alone``: see :func:`atomic_writer`)."""
    with atomic_writer(path, alone=alone) as fh:
        for row in rows:
            fh.write(dumps(row, ensure_ascii=False) + "\n")


def _open_text_lines(fh: IO[bytes]) -> "io.TextIOWrapper":
    """A text view of ``fh`` with universal newlines, as the references read files.

    ``\\n``, ``\\r\\n`` and a lone ``\\r`` each end a line (Python's ``open()``
    default); U+2028, U+2029 and other separators inside a record do not.
    Undecodable bytes become surrogate escapes so the reader can name them.
    """
    return text_chunks(io.TextIOWrapper(fh, encoding="utf-8", errors="surrogateescape", newline=None))


def text_chunks(fh: "io.TextIOWrapper") -> "io.TextIOWrapper":
    """``fh``, decoding 64 KiB of bytes per call of its decoder rather than 8 KiB: the UTF-8
    decoder of a text file is called from Python (``codecs``), once per chunk, which costs more
    than the lines it decodes when they are short.  The lines read are the same."""
    fh._CHUNK_SIZE = 1 << 16  # type: ignore[attr-defined]
    return fh


_BAD_BYTE = "[\udc80-\udcff]"


def _check_utf8(text: str, path: str, lineno: int) -> None:
    # Undecodable bytes are surrogate escapes, never ASCII and never encodable: the two C-level
    # checks clear almost every line before the regex looks for the first escape.
    if text.isascii():
        return
    try:
        text.encode("utf-8")
        return
    except UnicodeEncodeError:
        pass
    m = re.search(_BAD_BYTE, text)
    if m:
        raise ScoringError(
            f"not valid UTF-8 (byte 0x{ord(m.group()) - 0xDC00:02x} at column {m.start() + 1})",
            path=path,
            line=lineno,
        )


class ReadError(ScoringError):
    """A problem of the file as the JSON Lines reader words it (a line that is not valid
    UTF-8 or JSON, a BOM, an empty file), as opposed to a problem of one record's content.
    A :class:`ScoringError` like any other; callers that defer parsing (see
    :func:`iter_jsonl`) tell the two apart."""


class Unparsed(NamedTuple):
    """A line :func:`iter_jsonl` passed on without parsing it (``deferred=True``)."""

    #: The line, stripped.
    text: str
    #: Whether the line ended with a newline (a last line without one may be truncated).
    ended: bool


def parse_line(raw: Unparsed, *, path: str, line: int) -> Any:
    """The JSON value of a line passed on by ``iter_jsonl(..., deferred=True)``.

    Raises :class:`ReadError` worded as :func:`iter_jsonl` words the same problem.

    >>> parse_line(Unparsed('{"a": 1}', True), path="x.jsonl", line=1)
    {'a': 1}
    >>> parse_line(Unparsed('{"a": ', False), path="x.jsonl", line=9)
    Traceback (most recent call last):
    ...
    rageval_min._io.ReadError: x.jsonl:9: truncated or invalid JSON: Expecting value at column 7
    """
    return _parse_text(raw.text, raw.ended, path, line)


def _parse_text(text: str, ended: bool, path: str, line: int) -> Any:
    """:func:`parse_line` of ``Unparsed(text, ended)`` (the reader's own lines: no tuple made)."""
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        what = "invalid JSON" if ended else "truncated or invalid JSON"
        raise ReadError(f"{what}: {exc.msg} at column {exc.colno}", path=path, line=line) from None
    except ScoringError as exc:
        raise ReadError(exc.msg, path=path, line=line, field=exc.field) from None


def iter_jsonl(
    path: str,
    *,
    bom_tolerant: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    bom_hint: Optional[str] = None,
    deferred: bool = False,
) -> Iterator[Tuple[int, Any]]:
    """Yield ``(line_number, value)`` for every non-blank line of a JSON Lines file.

    Lines end as in Python's universal-newline mode (``\\n``, ``\\r\\n`` or a lone
    ``\\r``), which is how every reference reads its files; line numbers are
    1-based and count those lines.  Each line is ``str.strip()``-ed and blank
    lines are skipped.  Problems (unreadable file, non-UTF-8 bytes, a BOM,
    invalid JSON, a truncated last line, a line over ``max_line_bytes``) are
    collected and raised as one ScoringError after the last line; an empty file
    (no records at all) is an error too, all raised as :class:`ReadError`.
    ``bom_hint`` names the option that accepts a BOM, for commands that have one.

    ``deferred=True`` yields :class:`Unparsed` lines for a worker to parse with
    :func:`parse_line` (see :func:`deferred_jsonl` and :class:`DeferredProblems`
    for how its errors are then reported as the reader's).
    """
    problems = Problems()
    seen = 0
    limit = max(1, max_line_bytes // 4)  # characters: a UTF-8 character is at most 4 bytes
    with _open_binary(path) as raw_fh:
        fh = _open_text_lines(raw_fh)
        lineno = 0
        try:
            while True:
                line = fh.readline(limit + 1)
                if not line:
                    break
                lineno += 1
                if len(line) > limit and not line.endswith("\n"):
                    ended = _skip_line(fh, limit)  # a line that never ends (/dev/zero) is not read forever
                    problems.add(
                        f"line longer than {max_line_bytes} bytes (is this a JSON Lines file?)", path=path, line=lineno
                    )
                    if problems.full or not ended:
                        break
                    continue
                try:
                    _check_utf8(line, path, lineno)
                except ScoringError as exc:
                    problems.add_error(exc)
                    if problems.full:
                        break
                    continue
                if lineno == 1 and line.startswith(_BOM):
                    if bom_tolerant:
                        line = line[1:]
                    else:
                        hint = f"save without BOM, or use {bom_hint}" if bom_hint else "save the file without it"
                        problems.add(f"starts with a UTF-8 byte order mark ({hint})", path=path, line=1)
                        continue
                text = line.strip()
                if not text:
                    continue
                seen += 1
                if deferred and not problems:
                    yield lineno, Unparsed(text, line.endswith("\n"))
                    continue
                try:
                    value = _parse_text(text, line.endswith("\n"), path, lineno)
                except ReadError as exc:
                    problems.add_error(exc)
                    if problems.full:
                        break
                    continue
                if not problems.count:  # (the count, not len(): no call per line)
                    yield lineno, value
        finally:
            fh.detach()
            forget_parsed()
    if not seen and not problems:
        problems.add("holds no records (the file is empty)", path=path)
    problems.raise_if_any(ReadError)


if TYPE_CHECKING:
    #: One record as :func:`deferred_jsonl` hands it out: ``(line number, Unparsed)``; a
    #: :class:`ScoringError` as the value is the reader's own problems (the last item).
    Numbered = Tuple[int, Any]
else:
    Numbered = tuple  # at run time the plain type: typing is not imported at start-up


def deferred_jsonl(path: str) -> Iterator[Numbered]:
    """The records of ``path`` unparsed (``iter_jsonl(deferred=True)``), the reader's problems
    as the last item instead of raised, for :func:`parse_item` to parse where the record is
    scored (in a worker under ``--jobs``: a line costs less to send than a parsed record) and
    :class:`DeferredProblems` to report as :func:`iter_jsonl` does."""
    try:
        yield from iter_jsonl(path, deferred=True)
    except ScoringError as exc:
        yield 0, exc


def parse_item(path: str, item: Numbered) -> Tuple[int, Any]:
    """``(line, JSON value)`` of an item of :func:`deferred_jsonl` (raising the reader's problems)."""
    line_no, value = item
    if isinstance(value, ScoringError):
        raise value
    if isinstance(value, Unparsed):
        value = parse_line(value, path=path, line=line_no)
    return line_no, value


if TYPE_CHECKING:
    _T = TypeVar("_T")


class DeferredProblems:
    """``on_error`` for records of :func:`deferred_jsonl`: every bad record is collected (up to
    the limit) and raised together at the end, as a single pass over the file does.

    A line that is not JSON is found where it is parsed (:func:`parse_item`); this puts its
    :class:`ReadError` back where :func:`iter_jsonl` reports it when it parses: the records
    up to it are scored and their problems come first; from it on the file's problems are
    one group, raised after them (at most ``MAX_PROBLEMS`` counted, as the reader stops
    reading there), and no later record is used (:meth:`wanted` turns away their rows and
    output lines).
    """

    def __init__(self) -> None:
        self.problems = Problems()
        self.read: Optional[Problems] = None

    def __call__(self, exc: ScoringError) -> None:
        if isinstance(exc, ReadError):
            if self.read is None:
                self.read = Problems()
            self.read.add_error(exc)
            return
        if self.read is not None:
            return  # the reader would have stopped handing out records
        self.problems.add_error(exc)
        if self.problems.full:
            self.problems.raise_if_any()

    def wanted(self, fn: Optional[Callable[[_T], None]]) -> Optional[Callable[[_T], None]]:
        """``fn``, called only while no line failed to read."""
        if fn is None:
            return None

        def call(value: _T) -> None:
            if self.read is None:
                fn(value)

        return call

    def raise_if_any(self) -> None:
        read = self.read
        if read is not None:
            count = min(read.count, read.limit)
            self.problems.add_error(ScoringError(read.messages[0], problems=read.messages[:count], count=count))
        self.problems.raise_if_any()


def _strip_bom(text: str, path: str, bom_tolerant: bool) -> str:
    if text.startswith(_BOM):
        if not bom_tolerant:
            raise ScoringError("starts with a UTF-8 byte order mark", path=path, line=1)
        return text[1:]
    return text


def _parse_json(text: str, path: str) -> Any:
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise ScoringError(f"invalid JSON: {exc.msg} at column {exc.colno}", path=path, line=exc.lineno) from None
    except ScoringError as exc:
        raise ScoringError(exc.msg, path=path, field=exc.field) from None


def read_json(path: str, *, what: Optional[str] = None, bom_tolerant: bool = False) -> Any:
    """Parse a whole JSON file; every failure is one ScoringError naming path and line."""
    return _parse_json(_strip_bom(read_text(path, what=what), path, bom_tolerant), path)


def _iter_json_array(path: str, *, bom_tolerant: bool) -> Iterator[Tuple[int, Any]]:
    text = _strip_bom(read_text(path), path, bom_tolerant)
    if not text.strip():
        raise ScoringError("holds no records (the file is empty)", path=path)
    data = _parse_json(text, path)
    if isinstance(data, dict):
        for key in ("records", "data", "rows"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
    if not isinstance(data, list):
        raise ScoringError("expected a JSON array of records", path=path, line=1)
    for i, item in enumerate(data, 1):
        yield i, item


def _iter_delimited(path: str, delimiter: str, *, bom_tolerant: bool) -> Iterator[Tuple[int, Any]]:
    kind = "TSV" if delimiter == "\t" else "CSV"
    # Long free-text cells (model answers) exceed csv's default 128 KiB field limit.
    import csv  # only for tabular inputs: it is slow to import

    if csv.field_size_limit() < 2**30:
        csv.field_size_limit(2**30)
    with _open_binary(path) as fh:
        wrapper = io.TextIOWrapper(fh, encoding="utf-8", newline="")
        try:
            reader = csv.reader(wrapper, delimiter=delimiter)
            header: Optional[List[str]] = None
            end = 0  # the last line of the previous record: a quoted cell may span lines
            for row in reader:
                start, end = end + 1, reader.line_num  # name the line where a record starts
                if header is None:
                    if row and row[0].startswith(_BOM):
                        if not bom_tolerant:
                            raise ScoringError("starts with a UTF-8 byte order mark", path=path, line=1)
                        row[0] = row[0][1:]
                    header = row
                    if len(set(header)) != len(header):
                        raise ScoringError("header has duplicate column names", path=path, line=reader.line_num)
                    continue
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) != len(header):
                    raise ScoringError(
                        f"has {len(row)} columns, the header has {len(header)}",
                        path=path,
                        line=start,
                    )
                yield start, dict(zip(header, row))
            if header is None:
                raise ScoringError("holds no records (the file is empty)", path=path)
        except UnicodeDecodeError as exc:
            raise ScoringError(f"not valid UTF-8 ({exc.reason})", path=path) from None
        except csv.Error as exc:
            raise ScoringError(f"malformed {kind}: {exc}", path=path) from None
        finally:
            wrapper.detach()


#: The formats :func:`iter_records` reads.
RECORD_FORMATS = ("jsonl", "json", "csv", "tsv")


def iter_records(
    path: str, *, bom_tolerant: bool = False, fmt: Optional[str] = None
) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """Yield ``(line_or_index, record)`` from a JSONL, JSON, CSV or TSV file.

    The format is ``fmt`` when given (one of :data:`RECORD_FORMATS`; e.g.
    ``"jsonl"`` for JSON Lines files named ``.json``, as RGB's are), else chosen
    by the extension (``.json``, ``.csv``, ``.tsv``; anything else is JSONL).  A JSON file holds an
    array of objects (or an object with a ``records``/``data``/``rows`` array);
    its "line" numbers are 1-based positions in the array.  CSV/TSV files have a
    header row and give string values.  Every record must be a JSON object.
    """
    if fmt is None:
        ext = os.path.splitext(path)[1].lower().lstrip(".")
        fmt = ext if ext in RECORD_FORMATS else "jsonl"
    elif fmt not in RECORD_FORMATS:
        raise ValueError(f"unknown record format {fmt!r}")
    if fmt == "json":
        source = _iter_json_array(path, bom_tolerant=bom_tolerant)
    elif fmt == "csv":
        source = _iter_delimited(path, ",", bom_tolerant=bom_tolerant)
    elif fmt == "tsv":
        source = _iter_delimited(path, "\t", bom_tolerant=bom_tolerant)
    else:
        source = iter_jsonl(path, bom_tolerant=bom_tolerant)
    problems = Problems()
    for lineno, value in source:
        if not isinstance(value, dict):
            problems.add(f"expected a JSON object, got {type(value).__name__}", path=path, line=lineno)
            if problems.full:
                break
            continue
        if not problems.count:
            yield lineno, value
    problems.raise_if_any()


def _skip_line(fh: Any, limit: int) -> bool:
    """Read past the rest of an over-long line, at most ``limit`` more characters; False: it went on."""
    skipped = 0
    line = "x"
    while line and not line.endswith("\n"):
        if skipped > limit:
            return False
        line = fh.readline(1 << 20)
        skipped += len(line)
    return True


#: The largest whole-file input (a partial state, a SAFE result, a template), in bytes; raise it with
#: the environment variable ``RAGEVAL_MIN_MAX_FILE_BYTES`` (see docs/security.md).
MAX_FILE_BYTES = 1 << 30


def max_file_bytes() -> int:
    """:data:`MAX_FILE_BYTES`, or the ``RAGEVAL_MIN_MAX_FILE_BYTES`` environment variable's value."""
    text = os.environ.get("RAGEVAL_MIN_MAX_FILE_BYTES", "")
    if text.strip().isdigit() and len(text.strip()) <= 18:
        return int(text)
    return MAX_FILE_BYTES


def _read_bounded(fh: Any, path: str, what: Optional[str]) -> bytes:
    """The whole file, refusing one over :func:`max_file_bytes` or holding NUL bytes (not text)."""
    limit = max_file_bytes()
    chunks: List[bytes] = []
    total = 0
    while True:
        chunk = fh.read(min(1 << 20, limit + 1 - total) or 1)
        if not chunk:
            return b"".join(chunks)
        if b"\x00" in chunk:
            raise ScoringError(f"{what + ' is ' if what else ''}not a text file (it holds NUL bytes)", path=path)
        total += len(chunk)
        if total > limit:
            raise ScoringError(
                f"{what + ' is ' if what else 'the file is '}larger than {limit} bytes, the limit for a whole-file "
                "input (raise it with RAGEVAL_MIN_MAX_FILE_BYTES)",
                path=path,
            )
        chunks.append(chunk)


def read_text(path: str, *, what: Optional[str] = None) -> str:
    """The whole UTF-8 text of a small file (a template, an expected output, a partial state).

    Unreadable or non-UTF-8 files raise one ScoringError naming the path and
    ``what`` the file is for; so does a file over :func:`max_file_bytes`.
    """
    with _open_binary(path, what) as fh:
        data = _read_bounded(fh, path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ScoringError(
            f"{what + ' is ' if what else ''}not valid UTF-8 (byte 0x{data[exc.start]:02x})", path=path, line=line
        ) from None
