"""What the fuzz oracle (tests/test_fuzz.py) asks of an exit-2 message, beyond "one line".

The generator (tests/fuzzgen.py) knows what it changed: which file, which line, which field
(:class:`fuzzgen.Where`).  An input error caused by that change must say where it is:

* **located** (the default for a change to one line of a JSON Lines, TSV or text file): the
  message names ``file:LINE`` of the changed line; when one JSON value was replaced (kind
  ``value``), it also names the field (one of the keys on the value's path: a reader may name the
  top-level field, ``contexts[2].score`` or ``score``).

Each exemption below is one narrow, documented reason why a correct message names something else;
:data:`RULE_COUNTS` counts how many exit-2 cases each rule decided (a long run reports them, see
``RAGEVAL_MIN_FUZZ_COUNTS`` in tests/test_fuzz.py).  A rule still asks for what can be named:

* ``whole-file``: the change was to the file as a whole (empty, binary garbage, cut at a byte,
  invalid UTF-8, JSON Lines rewritten as one array): the message names the file.
* ``document``: a value inside a whole-file JSON document (a partial state, SAFE results, a
  ``cases.json``), which has no line of its own: the message names the file.
* ``option``: a changed option: the message names the option (``--gate`` for a gate).
* ``doubled-line``: a line was doubled, so its copy, one line later, is the duplicate: ``file:LINE``
  or ``file:LINE+1``.
* ``unreadable-value``: the new value is nested deeper than the JSON reader allows or is an integer
  of more digits than Python converts (4,300): the line cannot be parsed, so no field exists yet:
  ``file:LINE`` without a field.
* ``document-as-text``: a line of a whole-file JSON document was cut, dropped, doubled, changed or
  preceded by junk: the JSON parser names the line where the syntax broke, which is the changed
  line or a later one: ``file:N`` with ``N >= LINE - 1``.
* ``document-content``: a line of a whole-file JSON document was changed as text and the document
  still parses (or fails without a position, an integer of too many digits), so the error is about
  its content, which has no lines: the message names the file.
* ``nul-byte``: the junk line holds a NUL byte, and a text input holding one is refused as a whole
  (it is not a text file): the message names the file and says NUL.
* ``strict-json``: the new value is ``NaN``, ``Infinity``, ``-Infinity``, ``1e400``, ``-1e400`` or
  a lone surrogate in a judge cache, whose lines are refused as a whole when they are not strict
  JSON: ``file:LINE`` and the reason, without a field.
* ``quoted-record``: a line of a TSV file whose records may span lines (a quoted cell holding a
  newline; the reader names the line a record starts on): the message names ``file:N`` with ``N``
  in the record that held the line before the change, or in the record that holds it after (a cut
  quote merges records; a dropped line shifts the next record's start).
* ``sniffed-json``: a junk first line (``[]``, ``1``, ...) makes a text file read as a JSON document:
  the JSON parser names the line where it stops, ``file:N`` with ``N >= LINE``.
* ``cross-record``: the change made two records of the file disagree (a noise rate, a duplicate):
  the message names the later record as ``file:N`` and the changed one as ``line LINE``.
* ``mixed-labels``: a changed label made the labels of ``judge agreement`` mix strings and
  numbers, a property of all the labels: the message names ``file:N`` of the first label of the
  minority kind, which may be another line.
* ``pairing``: the changed value is an id that pairs records across files (``task_id``,
  ``Collection``): the message names the file whose pairing failed and the id or collection.
* ``cache-miss``: a changed judge cache line (its prompt digest, parameters or a dropped line) or a
  changed prompt input leaves a prompt with no cached answer: ``replay: no cached answer``, naming
  the cache file (a missing entry has no line).
* ``family-row``: ``compare --family`` hands each row to the family's accumulator, which has no
  field schema: a row it rejects is named as ``file:LINE`` with the exception, without a field.
* ``state-nonfinite``: a value changed to ``NaN``/``Infinity``/``1e400`` under ``--emit-partial``
  reaches the partial state (an id, a label), which is strict JSON: the state is written after the
  whole file is read, so the message names the input file, not its line.
* ``base-error``: the unchanged command line is itself an input error (an empty judge cache, rows of
  no family, a one-family samples folder) and the change left that error as it was: the message is
  the unchanged one (paths, digests and line numbers aside).
"""

import os
import re
from collections import Counter
from typing import List, Optional

from fuzzgen import Case, Where

#: How many exit-2 cases each rule decided, in this process (the long-run report).
RULE_COUNTS: "Counter[str]" = Counter()


def _lines_named(stderr: str, path: str) -> List[int]:
    name = re.escape(os.path.basename(path))
    return [int(n) for n in re.findall(name + ":([0-9]+)", stderr)]


def _unreadable(text: str) -> bool:
    """A JSON value the JSON Lines reader cannot parse at all (too deep, too many digits)."""
    digits = text.lstrip("-")
    return text.startswith(("[[[", '{"a":{"a":')) or digits.isdigit() and len(digits) > 4300


_STRICT = ("NaN", "Infinity", "-Infinity", "1e400", "-1e400", '"\\ud800"')
_STRICT_REASONS = ("is not a JSON number", "overflows a float", "lone UTF-16 surrogate")
_PAIRING_KEYS = ("task_id", "Collection")


def normalized(stderr: str) -> str:
    """``stderr`` without the case folder of its paths, with digests as ``<hex>`` and line numbers
    as ``N`` (a dropped line moves the first row the unchanged error was about)."""
    text = re.sub(r"\S*[/\\]in[/\\][0-9]+[/\\]", "", stderr)
    return re.sub(r"(\.[a-z]+):[0-9]+:", r"\1:N:", re.sub("[0-9a-f]{16}", "<hex>", text))


def _in_record(named: List[int], where: Where, path: str) -> bool:
    """Whether every named line lies in the record that held the changed line before the change
    (``where.span``, one line beyond it) or in the one that holds it after."""
    from fuzzgen import record_span

    with open(path, encoding="utf-8", errors="replace") as fh:
        after = record_span(fh.read(), where.line or 0)
    low, high = min(where.span[0], after[0]), max(where.span[1], after[1]) + 1
    return all(low <= n <= high for n in named)


def _rule(where: Where, named: List[int], stderr: str, path: str) -> Optional[str]:
    """The exemption that covers a message that does not name the changed line, if one does."""
    line = where.line or 0
    if named and re.search(f"line {line}(?![0-9])", stderr) and "different" in stderr:
        return "cross-record"
    if named and "the labels mix strings and numbers" in stderr:
        return "mixed-labels"
    if where.kind == "value" and where.keys and where.keys[-1] in _PAIRING_KEYS:
        if "has no qrels" in stderr or "has judgments" in stderr:
            return "pairing"
    if where.kind == "value" and where.text in _STRICT and "(--emit-partial, strict JSON) cannot hold" in stderr:
        return "state-nonfinite"
    if "replay: no cached answer for prompt" in stderr:
        return "cache-miss"
    if where.kind == "line-doubled" and named and set(named) <= {line, line + 1}:
        return "doubled-line"
    if where.document and where.kind.startswith("line-") and named and min(named) >= line - 1:
        return "document-as-text"
    if where.document and where.kind.startswith("line-") and not named:
        return "document-content"
    if where.kind == "line-junk" and "\x00" in where.text and "NUL" in stderr:
        return "nul-byte"
    if where.kind == "line-junk" and line == 1 and "not valid JSON" in stderr and named and min(named) >= line:
        return "sniffed-json"
    if where.span != (0, 0) and named and _in_record(named, where, path):
        return "quoted-record"
    return None


def location_problems(case: Case, stderr: str, base_error: Optional[str] = None) -> List[str]:
    """How an exit-2 message of ``case`` fails to say where its change is (empty when it does);
    ``base_error``: the :func:`normalized` message of the unchanged command line, if it is exit 2."""
    where = case.where
    if where is None:
        return []
    if base_error is not None and normalized(stderr) == base_error:
        RULE_COUNTS["base-error"] += 1
        return []
    if where.kind in ("option", "gate"):
        RULE_COUNTS["option"] += 1
        return [] if where.option in stderr else [f"the exit-2 message does not name {where.option}"]
    if where.kind in ("file", "document"):
        RULE_COUNTS["whole-file" if where.kind == "file" else "document"] += 1
        return []  # the file is named: checked by the caller
    assert case.mutated is not None and where.line is not None
    name = f"{os.path.basename(case.mutated)}:{where.line}"
    named = _lines_named(stderr, case.mutated)
    if where.line not in named:
        rule = _rule(where, named, stderr, case.mutated)
        RULE_COUNTS[rule or "FAILED: line"] += 1
        return [] if rule else [f"the exit-2 message does not name {name}"]
    if where.kind == "value" and where.keys and not any(k in stderr for k in where.keys):
        if _unreadable(where.text):
            RULE_COUNTS["unreadable-value"] += 1
            return []
        if where.text in _STRICT and any(r in stderr for r in _STRICT_REASONS):
            RULE_COUNTS["strict-json"] += 1
            return []
        if "compare --family needs the rows that command wrote" in stderr:
            RULE_COUNTS["family-row"] += 1
            return []
        RULE_COUNTS["FAILED: field"] += 1
        return [f"the exit-2 message names {name} but none of the fields {list(where.keys)}"]
    RULE_COUNTS["located"] += 1
    return []


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_LONG_DIGITS = re.compile("[0-9]{101,}")
LINE_CAP = 2000


def message_problems(stderr: str) -> List[str]:
    """Raw control characters (or lone surrogates) on stderr, a number of more than 100 digits
    echoed whole, or a line longer than ``LINE_CAP`` characters."""
    problems = []
    for line in stderr.split("\n"):
        if _CONTROL.search(line):
            problems.append(f"a raw control character on stderr: {_CONTROL.search(line).group()!r}")
        if _LONG_DIGITS.search(line):
            problems.append(f"a number of {len(_LONG_DIGITS.search(line).group())} digits echoed on stderr")
        if len(line) > LINE_CAP:
            problems.append(f"a stderr line of {len(line)} characters")
    return problems
