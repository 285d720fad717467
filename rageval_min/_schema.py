"""Pipeline step: the records of each input file held against the command's declared ``INPUTS``.

Every family reads its fields the reference's way (a missing field means a
default), which keeps parity and would hide a misspelled field.  Before any
work, each JSON Lines input of the running command is read once more and
compared with what its accumulator declares (:mod:`rageval_min._metrics`):

* a required field missing from some records, or a field of another type than
  declared: one diagnostic per field, with the count and what the reference's
  reading makes of it ("2 of 5 trace records have no answer_json: an empty
  claim ...");
* a field that is not declared but is close to a declared name:
  ``gold_citation: did you mean gold_citations?``;
* a file whose records have none of this input's own required fields but those
  of another input of the command (``--gold`` and ``--trace`` swapped): an
  input error, always.

The diagnostics join the report's; with ``--strict`` the first one is an input
error (exit 2).  Numbers never change.  Only top-level fields with plain names
are checked, in the first :data:`MAX_CHECKED` records of regular files; a file
that is not JSON Lines objects, a pipe or standard input is left to the
command's own reader.
"""

from __future__ import annotations

import json

from ._io import remember_parsed, text_chunks
from ._metrics import Input, InputField
from .errors import ScoringError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple
else:
    from ._namedtuple import NamedTuple

__all__ = ["MAX_CHECKED", "FileFields", "check_inputs", "diagnose", "read_fields"]

#: How many records of a file are looked at (the diagnostics say so when a file has more): enough
#: to catch a misspelled or missing field, without parsing a large input twice.
MAX_CHECKED = 1_000

#: The longest line looked at (characters); a longer one ends the look.
_MAX_LINE = 1 << 20


class FileFields(NamedTuple):
    """What the records of one file hold: record count, and per field name its count and its types."""

    records: int
    present: Dict[str, int]
    types: Dict[str, Dict[str, int]]
    truncated: bool


#: The JSON type of each Python type ``json.loads`` makes.
_KINDS: Dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
    type(None): "null",
}


#: The C scanner of a plain decoder (what ``json.loads`` runs, without its Python layers).
_SCAN: Callable[[str, int], Tuple[Any, int]] = getattr(json.JSONDecoder(), "scan_once")


def _loads(line: str) -> Any:
    """``json.loads(line)``: a line that starts with its value and ends with JSON whitespace goes
    to the scanner alone; any other line (leading whitespace, an error) to ``json.loads``.

    >>> _loads('{"a": [1, 2.5]}\\r\\n'), _loads(' 7 ')
    ({'a': [1, 2.5]}, 7)
    """
    try:
        value, end = _SCAN(line, 0)
    except StopIteration:
        return json.loads(line)
    if end == len(line) or not line[end:].strip(" \t\n\r"):
        return value
    return json.loads(line)  # raises: extra data


def read_fields(path: str, *, remember: bool = False) -> Optional[FileFields]:
    """The fields of a JSON Lines file's records, or None when it is not JSON Lines objects or not a
    regular file (a pipe or FIFO is read once, by the command).  With ``remember``, the records
    read are kept for the command's reader (:func:`rageval_min._io.remember_parsed`)."""
    import os

    if not os.path.isfile(path):
        return None
    shapes: Dict[Tuple[Tuple[str, type], ...], int] = {}  # records per shape (keys and value types)
    records = 0
    try:
        with text_chunks(open(path, encoding="utf-8", errors="replace")) as fh:
            while True:
                line = fh.readline(_MAX_LINE)
                if not line:
                    break
                if len(line) == _MAX_LINE and not line.endswith("\n"):
                    return None  # a very long line: a whole-file JSON input, or left to the reader
                text = line.strip()
                if not text:
                    continue
                if records == MAX_CHECKED:
                    return _file_fields(records, shapes, True)
                rec = _loads(line)
                if not isinstance(rec, dict):
                    return None
                if remember:  # the command's reader takes it instead of parsing the line again
                    remember_parsed(text, rec)
                records += 1
                shape = tuple(zip(rec, map(type, rec.values())))
                shapes[shape] = shapes.get(shape, 0) + 1
    except (OSError, ValueError, RecursionError):
        return None  # the command's own reader reports it, with file and line
    return _file_fields(records, shapes, False) if records else None


def _file_fields(records: int, shapes: Mapping[Tuple[Tuple[str, type], ...], int], truncated: bool) -> FileFields:
    """:class:`FileFields` of the records counted by shape (most files have one or a few shapes),
    the fields and their types in the order the records first show them."""
    present: Dict[str, int] = {}
    types: Dict[str, Dict[str, int]] = {}
    for shape, count in shapes.items():
        for key, kind in shape:
            present[key] = present.get(key, 0) + count
            seen = types.setdefault(key, {})
            name = _KINDS.get(kind, "other")
            seen[name] = seen.get(name, 0) + count
    return FileFields(records, present, types, truncated)


def _plain(name: str) -> bool:
    return not any(c in name for c in ".[]{}<>")


def _type_ok(found: str, declared: Sequence[str]) -> bool:
    return found in declared or (found == "integer" and "number" in declared)


def _own_required(inp: Input, other: Input) -> List[str]:
    mine = {f.name for f in inp.fields if f.required and _plain(f.name)}
    return sorted(mine - {f.name for f in other.fields})


def _swapped(inp: Input, seen: FileFields, others: Sequence[Input], path: str) -> Optional[str]:
    """The message when ``path`` holds another input's records rather than ``inp``'s."""
    for other in others:
        mine, theirs = _own_required(inp, other), _own_required(other, inp)
        if not mine or not theirs or any(seen.present.get(f) for f in mine):
            continue
        if all(seen.present.get(f, 0) * 10 >= seen.records * 9 for f in theirs):
            return (
                f"given as {inp.option}, but its records look like {other.option} records "
                f"(they have {', '.join(theirs)} and no {', '.join(mine)}): are the two files swapped?"
            )
    return None


def _field_notes(inp: InputField, seen: FileFields, what: str) -> List[str]:
    notes = []
    have = seen.present.get(inp.name, 0)
    if inp.required and have < seen.records:
        reading = f": {inp.when_missing}, as the reference reads it" if inp.when_missing else ""
        notes.append(f"{seen.records - have} of {seen.records} {what} records have no {inp.name}{reading}")
    wrong = sum(n for t, n in seen.types.get(inp.name, {}).items() if not _type_ok(t, inp.types))
    if wrong:
        notes.append(
            f"{wrong} of {seen.records} {what} records have {inp.name} of another type than {'/'.join(inp.types)}"
        )
    return notes


def diagnose(inp: Input, seen: FileFields, others: Sequence[Input] = ()) -> List[str]:
    """The diagnostics of one file read as ``inp`` (see the module docstring); a swap raises."""
    declared = [f for f in inp.fields if _plain(f.name)]
    notes: List[str] = []
    for field in declared:
        notes += _field_notes(field, seen, inp.what)
    names = [f.name for f in declared]
    for key in sorted(seen.present):
        if key in names or not _plain(key):
            continue
        import difflib  # here, not at start-up: only a field that is not declared needs it

        near = difflib.get_close_matches(key, names, n=1, cutoff=0.8)
        if near:
            notes.append(f"{seen.present[key]} {inp.what} records have {key}: did you mean {near[0]}?")
    if seen.truncated:
        notes = [f"{n} (in the first {MAX_CHECKED} records)" for n in notes]
    return notes


def check_inputs(inputs: Sequence[Input], paths: Mapping[str, Optional[str]], *, strict: bool) -> List[str]:
    """Diagnostics of every file named for ``inputs`` (``paths``: option -> file), each prefixed with
    ``FILE (OPTION):``; a swapped file, or any diagnostic with ``strict``, is a :class:`ScoringError`."""
    options = [i.option for i in inputs]
    files: List[Tuple[Input, str, Optional[FileFields]]] = []
    for inp in inputs:
        path = paths.get(inp.option)
        if path and path != "-" and options.count(inp.option) == 1:
            files.append((inp, path, read_fields(path, remember=True)))
        # stdin is read once, by the command; an option with two declared formats is ambiguous
    readable = all(seen is not None for _, _, seen in files)  # else the reader's own error comes first
    out: List[str] = []
    for inp, path, seen in files:
        if seen is None:
            continue
        swapped = _swapped(inp, seen, [i for i in inputs if i.option != inp.option], path) if readable else None
        if swapped:
            raise ScoringError(swapped, path=path)
        for note in diagnose(inp, seen):
            if strict:
                raise ScoringError(f"{note} (--strict)", path=path, field=inp.option)
            out.append(f"{path} ({inp.option}): {note}")
    return out
