"""The input check's parsed records handed to the command's reader (``_io.remember_parsed``).

``_schema.read_fields`` parses the first records of each JSON Lines input before the command
runs; the reader then takes those values instead of parsing the same line text again.  The
records a command reads must be the same whether or not the check ran first.
"""

import json
import os
from typing import Any, List, Tuple

from rageval_min import _io, _schema


def _write(tmp_path: Any, lines: List[str]) -> str:
    path = os.path.join(str(tmp_path), "in.jsonl")
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("".join(lines))
    return path


def _read(path: str) -> List[Tuple[int, Any]]:
    return list(_io.iter_jsonl(path))


def test_the_reader_takes_the_checked_records_once(tmp_path: Any) -> None:
    rec = {"id": 1, "prediction": "a \u00e9 b", "reference": "x", "n": [1.5, None, True]}
    lines = [json.dumps(rec) + "\n", "\n", "  " + json.dumps(rec) + " \r\n", json.dumps({"id": 2}) + "\r"]
    lines += [json.dumps({"id": i, "t": "\\ud83d\\ude00"}) + "\n" for i in range(3, 40)]
    path = _write(tmp_path, lines)
    fresh = _read(path)
    assert _schema.read_fields(path, remember=True) is not None
    assert _io._PARSED  # the check kept them
    kept = _read(path)
    assert kept == fresh and not _io._PARSED  # the same records; nothing left once read
    assert kept[0][1] is not kept[1][1]  # two identical lines: two objects (each kept once)


def test_without_remember_nothing_is_kept_and_errors_are_unchanged(tmp_path: Any) -> None:
    path = _write(tmp_path, ['{"a": 1}\n', '{"a": \n', '{"q": "\\ud800"}\n'])
    assert _schema.read_fields(path) is None and not _io._PARSED
    _schema.read_fields(path, remember=True)
    try:
        _read(path)
    except _io.ReadError as exc:
        remembered = str(exc)
    _io.forget_parsed()
    try:
        _read(path)
    except _io.ReadError as exc:
        assert str(exc) == remembered
    assert not _io._PARSED


def test_the_limit_on_kept_text(tmp_path: Any) -> None:
    big = "x" * (_io._PARSED_CHARS // 5)  # a line under read_fields' longest
    path = _write(tmp_path, [json.dumps({"id": i, "t": big}) + "\n" for i in range(6)])
    _schema.read_fields(path, remember=True)
    assert 0 < len(_io._PARSED) < 6 and _io._PARSED_SIZE[0] <= _io._PARSED_CHARS
    assert [v for _, v in _read(path)] == [{"id": i, "t": big} for i in range(6)]
    assert not _io._PARSED and _io._PARSED_SIZE[0] == 0


def test_lines_alike_but_for_their_start(tmp_path: Any) -> None:
    # the same length and the same last characters: each line is kept, and read as itself
    tail = "y" * 100
    lines = [json.dumps({"id": i, "t": tail}) + "\n" for i in range(5)]
    lines += [json.dumps({"id": 10 + i, "t": tail}) + "\n" for i in range(5)]
    path = _write(tmp_path, lines)
    fresh = _read(path)
    _schema.read_fields(path, remember=True)
    assert len(_io._PARSED) == 10
    assert _read(path) == fresh and not _io._PARSED


def test_another_file_read_first_or_a_changed_file(tmp_path: Any) -> None:
    # kept values are taken in file order: lines of another file, or lines that changed after
    # the check, are parsed; the kept ones are still taken when their lines come
    kept = _write(tmp_path, [json.dumps({"id": i}) + "\n" for i in range(4)])
    other = os.path.join(str(tmp_path), "other.jsonl")
    with open(other, "w", encoding="utf-8") as fh:
        fh.write("".join(json.dumps({"o": i}) + "\n" for i in range(3)))
    _schema.read_fields(kept, remember=True)
    values = [json.loads(line) for line in open(kept, encoding="utf-8")]
    taken = [_io.loads(json.dumps({"o": i})) for i in range(3)]
    assert taken == [{"o": i} for i in range(3)] and len(_io._PARSED) == 4  # none taken
    assert [_io.loads(json.dumps({"id": i})) for i in range(4)] == values and not _io._PARSED
    _schema.read_fields(kept, remember=True)
    with open(kept, "w", encoding="utf-8") as fh:  # changed after the check: new first line
        fh.write("".join(json.dumps({"id": i}) + "\n" for i in (9, 0, 1, 2, 3)))
    assert [v for _, v in _read(kept)] == [{"id": i} for i in (9, 0, 1, 2, 3)] and not _io._PARSED


def test_the_input_checks_json_decode_is_json_loads() -> None:
    """``_schema._loads`` (the C scanner alone for a line that starts with its value) parses
    and fails exactly as ``json.loads`` on the same line."""
    lines = [
        '{"a": 1}\n',
        '{"a": 1}\r\n',
        '{"a": 1} \t \n',
        ' {"a": 1}\n',
        '{"a": 1}\x0c\n',
        '{"a": 1} x\n',
        '{"a": 1}{"b": 2}\n',
        '{"a": }\n',
        "\n",
        "",
        "[1, 2.5, NaN, -Infinity, 1e400]\n",
        '"text"',
        "12345678901234567890123",
        '{"a": "\\ud83d\\ude00", "b": [{"c": null}]}',
        "\ufeff{}",
    ]

    def outcome(fn: Any, line: str) -> Any:
        try:
            return ("value", repr(fn(line)))
        except ValueError as exc:
            return ("error", type(exc).__name__, str(exc))

    for line in lines:
        assert outcome(_schema._loads, line) == outcome(json.loads, line), line
