"""What a partial state may hold, declared by each accumulator, and the one function that checks it.

A partial state (``--emit-partial``) is input like any other: ``merge`` reads it from a file
anyone may have edited.  Its digest (see :func:`rageval_min._contract.state_digest`) recognises a
state changed after it was written, but a state can be written by hand, or its digest recomputed.
So every accumulator declares, next to its ``METRICS`` and ``INPUTS``, a ``STATE_SCHEMA``: the
types, ranges and allowed values of its ``params`` and ``data``, written with the small vocabulary
below; :func:`check_state` walks a state against it before anything is built from the state.  A
state that breaks it is a :class:`~rageval_min.errors.ScoringError` naming the field path::

    state.data.counts.correct: must be a non-negative integer, got -1

The vocabulary (each a plain record; only :func:`check_state` gives it meaning):

* :class:`Count` -- a non-negative integer (not a bool), at most :data:`MAX_COUNT`, and at most the
  count at path ``at_most`` when given;
* :class:`Integer` -- an integer in ``[lo, hi]``;
* :class:`Number` -- a finite int or float in ``[lo, hi]`` (ints at most :data:`MAX_COUNT` in size);
* :class:`Text` -- a string of at most ``max_len`` characters, one of ``choices`` or matching
  ``pattern`` when given;
* :class:`Flag` -- a bool; :class:`OneOf` -- one of a few exact JSON scalars (``None`` included);
* :class:`Maybe` -- ``None`` or its node; :class:`Either` -- the first of its nodes that fits;
* :class:`Conflict` -- a value of its node, but not one value while another field holds another
  (two parameters no run can have had together);
* :class:`Items` -- a list of one node, its length fixed by ``length`` (a number, or a
  :class:`Size` / :class:`ValueAt` of another field), at least ``min_len`` and at most ``max_len``,
  optionally ``unique``;
* :class:`Row` -- a list of exactly its nodes, position by position;
* :class:`Fields` -- an object with exactly these keys (those in ``optional`` may be absent);
* :class:`Table` -- an object with any string keys (the set of them, when ``keys`` names a list
  field, equal to that list's items) and one node for every value;
* :class:`Switch` -- the node of the case named by another field (a mode parameter);
* :class:`Schema` -- the whole declaration: ``params`` and ``data`` (each a node).

Paths (``at_most``, ``Size``, ``ValueAt``, ``Table.keys``) are dotted paths from the state's top
(``params.rouge_types``, ``data.count``); a path may go through a list index (``data.means.0``).
The number kinds (:class:`Count`, :class:`Integer`, :class:`Number`) are checked with the shared
checks of :mod:`rageval_min._numbers` (``integer_fault``, ``number_fault``); the words are this module's.

>>> schema = Schema(
...     params=Fields({"k": Integer(lo=1)}),
...     data=Fields({"n": Count(), "xs": Items(Number(), length=ValueAt("data.n"))}),
... )
>>> node = Fields({"params": schema.params, "data": schema.data})
>>> check_state(node, {"params": {"k": 5}, "data": {"n": 2, "xs": [0.5, 1]}})
>>> check_state(node, {"params": {"k": 1.5}, "data": {"n": 2, "xs": [0.5, 1]}})
Traceback (most recent call last):
  ...
rageval_min.errors.ScoringError: state.params.k: must be a positive integer, got 1.5
>>> check_state(node, {"params": {"k": 5}, "data": {"n": 3, "xs": [0.5, 1]}})
Traceback (most recent call last):
  ...
rageval_min.errors.ScoringError: state.data.xs: must hold 3 items (data.n), got a list of 2 item(s)
"""

import json
import math
import re
from typing import Any, Mapping, NamedTuple, Optional, Tuple, Union

from ._numbers import integer_fault, number_fault
from .errors import ScoringError

__all__ = [
    "Conflict",
    "Count",
    "Either",
    "Fields",
    "Flag",
    "Integer",
    "Items",
    "MAX_COUNT",
    "MAX_TEXT",
    "Maybe",
    "Number",
    "OneOf",
    "Row",
    "Schema",
    "Size",
    "Switch",
    "Table",
    "Text",
    "ValueAt",
    "check_state",
]

#: The largest count or integer a state may hold (2**53 - 1: every such integer is exact as a float).
MAX_COUNT = 2**53 - 1

#: The longest string a state may hold unless its field says otherwise.
MAX_TEXT = 1 << 20


class Count(NamedTuple):
    """A non-negative integer, at most the count at path ``at_most`` when given."""

    at_most: Optional[str] = None


class Integer(NamedTuple):
    """An integer (not a bool) in ``[lo, hi]``."""

    lo: int = -MAX_COUNT
    hi: int = MAX_COUNT


class Number(NamedTuple):
    """A finite number (int or float, not a bool) in ``[lo, hi]`` (``(lo, hi)`` when ``exclusive``)."""

    lo: float = -math.inf
    hi: float = math.inf
    exclusive: bool = False


class Text(NamedTuple):
    """A string: one of ``choices``, or matching ``pattern`` (a full match), when given."""

    choices: Tuple[str, ...] = ()
    pattern: Optional[str] = None
    max_len: int = MAX_TEXT


class Flag(NamedTuple):
    """A bool."""


class OneOf(NamedTuple):
    """One of a few exact JSON scalars (strings, numbers, bools, ``None``)."""

    values: Tuple[Any, ...]


class Maybe(NamedTuple):
    """``None`` or a value of ``node``."""

    node: Any


class Either(NamedTuple):
    """A value of one of ``nodes`` (the error is that of the last)."""

    nodes: Tuple[Any, ...]


class Conflict(NamedTuple):
    """A value of ``node`` that is not ``value`` while the field at ``path`` is ``other``: two
    parameters that no run can have had together (``reason`` says why)."""

    node: Any
    value: Any
    path: str
    other: Any
    reason: str


class Size(NamedTuple):
    """The length of the list (or object) at ``path``, times ``times``."""

    path: str
    times: int = 1


class ValueAt(NamedTuple):
    """The integer at ``path``."""

    path: str


class Items(NamedTuple):
    """A list whose every item is a value of ``node``; ``length`` and ``max_len`` bound its length."""

    node: Any
    length: Union[None, int, Size, ValueAt] = None
    max_len: Union[int, Size, ValueAt] = MAX_COUNT
    unique: bool = False
    min_len: int = 0


class Row(NamedTuple):
    """A list of exactly ``len(nodes)`` items, item ``i`` a value of ``nodes[i]``."""

    nodes: Tuple[Any, ...]


class Fields(NamedTuple):
    """An object with exactly the keys of ``fields`` (those in ``optional`` may be absent), and
    when ``extra_keys`` names a list field, also exactly its items as keys, each a value of ``extra``."""

    fields: Mapping[str, Any]
    optional: Tuple[str, ...] = ()
    extra: Any = None
    extra_keys: Optional[str] = None


class Table(NamedTuple):
    """An object with string keys (exactly the items of the list at path ``keys`` when given, each
    matching ``key_pattern`` when given), every value a value of ``node``."""

    node: Any
    keys: Optional[str] = None
    key_pattern: Optional[str] = None
    max_len: int = MAX_COUNT


class Switch(NamedTuple):
    """A value of ``cases[v]``, where ``v`` is the value at ``path`` (a mode chosen by a parameter)."""

    path: str
    cases: Mapping[Any, Any]


class Schema(NamedTuple):
    """The declared state of one accumulator: its ``params`` and its ``data`` (the envelope around
    them is the contract's, see :func:`rageval_min._contract.state_node`)."""

    params: Any
    data: Any


def check_state(node: Any, state: Any) -> None:
    """Check a whole ``state`` against ``node`` (paths resolve from the state's top); a ScoringError
    names the first field that does not fit (``state.data.counts.correct``)."""
    _check(node, state, "", state if isinstance(state, Mapping) else {})


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _fail(path: str, problem: str, value: Any = None, *, show: bool = True) -> ScoringError:
    text = f"{problem}, got {_describe(value)}" if show else problem
    return ScoringError(text, field=f"state.{path}" if path else "state")


def _describe(value: Any) -> str:
    """A short, printable description of a value found in a state."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value) if abs(value) < 10**50 else "an integer of more than 50 digits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        text = json.dumps(value[:40], ensure_ascii=True)
        return text if len(value) <= 40 else text[:-1] + '..."'
    if isinstance(value, list):
        return f"a list of {len(value)} item(s)"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _integer_words(lo: int, hi: int) -> str:
    """How an integer range reads in a message.

    >>> _integer_words(0, MAX_COUNT), _integer_words(1, MAX_COUNT), _integer_words(2, 5)
    ('a non-negative integer', 'a positive integer', 'an integer in [2, 5]')
    """
    if hi == MAX_COUNT and lo in (0, 1):
        return "a non-negative integer" if lo == 0 else "a positive integer"
    if (lo, hi) == (-MAX_COUNT, MAX_COUNT):
        return f"an integer of at most {MAX_COUNT} in size"
    return f"an integer in [{lo}, {hi}]"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _resolve(root: Mapping[str, Any], path: str) -> Any:
    node: Any = root
    for part in path.split("."):
        if isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _expected_length(spec: Union[None, int, Size, ValueAt], root: Mapping[str, Any]) -> Optional[int]:
    if spec is None or isinstance(spec, int):
        return spec
    target = _resolve(root, spec.path)
    if isinstance(spec, Size):
        return len(target) * spec.times if isinstance(target, (list, dict)) else None
    return target if _is_int(target) else None


def _check(node: Any, value: Any, path: str, root: Mapping[str, Any]) -> None:  # noqa: C901 - one dispatch
    """The interpreter of the vocabulary: raise at the first part of ``value`` that ``node`` refuses."""
    kind = type(node)
    if kind is Count or kind is Integer:
        lo, hi = (0, MAX_COUNT) if kind is Count else (node.lo, node.hi)
        fault = integer_fault(value, lo, hi)
        if fault is not None:
            too_big = fault == "high" and hi == MAX_COUNT
            raise _fail(path, f"must be at most {MAX_COUNT}" if too_big else f"must be {_integer_words(lo, hi)}", value)
        if kind is Count and node.at_most is not None:
            limit = _resolve(root, node.at_most)
            if _is_int(limit) and value > limit:
                raise _fail(path, f"must be at most {node.at_most} ({limit})", value)
    elif kind is Number:
        fault = number_fault(value, node.lo, node.hi, exclusive=node.exclusive, int_limit=MAX_COUNT)
        if fault == "type":
            raise _fail(path, "must be a number", value)
        if fault == "nonfinite":
            raise _fail(path, "must be a finite number", value)
        if fault == "range":
            ends = "()" if node.exclusive else "[]"
            raise _fail(path, f"must be a number in {ends[0]}{node.lo:g}, {node.hi:g}{ends[1]}", value)
    elif kind is Text:
        if not isinstance(value, str) or len(value) > node.max_len:
            raise _fail(path, f"must be a string of at most {node.max_len} characters", value)
        if node.choices and value not in node.choices:
            raise _fail(path, f"must be one of {', '.join(node.choices)}", value)
        if node.pattern is not None and re.fullmatch(node.pattern, value) is None:
            raise _fail(path, f"must match {node.pattern}", value)
    elif kind is Flag:
        if not isinstance(value, bool):
            raise _fail(path, "must be true or false", value)
    elif kind is OneOf:
        if not any(type(value) is type(v) and value == v for v in node.values):
            raise _fail(path, f"must be one of {', '.join(json.dumps(v) for v in node.values)}", value)
    elif kind is Maybe:
        if value is not None:
            _check(node.node, value, path, root)
    elif kind is Either:
        for i, option in enumerate(node.nodes):
            try:
                _check(option, value, path, root)
                return
            except ScoringError:
                if i == len(node.nodes) - 1:
                    raise
    elif kind is Conflict:
        _check(node.node, value, path, root)
        if value == node.value and _resolve(root, node.path) == node.other:
            raise _fail(
                path,
                f"cannot be {json.dumps(value)} with {node.path} {json.dumps(node.other)}: {node.reason}",
                show=False,
            )
    elif kind is Switch:
        mode = _resolve(root, node.path)
        if not isinstance(mode, str) or mode not in node.cases:
            raise _fail(path, f"has no declared shape for {node.path} {_describe(mode)}", show=False)
        _check(node.cases[mode], value, path, root)
    elif kind is Items:
        _check_items(node, value, path, root)
    elif kind is Row:
        if not isinstance(value, list) or len(value) != len(node.nodes):
            raise _fail(path, f"must be a list of {len(node.nodes)} items", value)
        for i, (sub, item) in enumerate(zip(node.nodes, value)):
            _check(sub, item, _join(path, i), root)
    elif kind is Fields:
        _check_fields(node, value, path, root)
    elif kind is Table:
        _check_table(node, value, path, root)
    else:  # pragma: no cover - a declaration error, found by the tests of every schema
        raise TypeError(f"not a state schema node: {node!r}")


def _check_items(node: Items, value: Any, path: str, root: Mapping[str, Any]) -> None:
    if not isinstance(value, list):
        raise _fail(path, "must be a list", value)
    want = _expected_length(node.length, root)
    if node.length is not None and want is None:
        raise _fail(path, f"has no length to check against ({node.length})", show=False)
    if want is not None and len(value) != want:
        ref = "" if isinstance(node.length, int) else f" ({node.length.path})"  # type: ignore[union-attr]
        raise _fail(path, f"must hold {want} items{ref}", value)
    if len(value) < node.min_len:
        raise _fail(path, f"must hold at least {node.min_len} item(s)", value)
    most = node.max_len if isinstance(node.max_len, int) else _expected_length(node.max_len, root)
    if most is None or len(value) > most:
        ref = "" if isinstance(node.max_len, int) else f" ({node.max_len.path})"
        raise _fail(path, f"must hold at most {most} items{ref}", value)
    for i, item in enumerate(value):
        _check(node.node, item, _join(path, i), root)
    if node.unique and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
        raise _fail(path, "must not repeat an item", show=False)


def _check_fields(node: Fields, value: Any, path: str, root: Mapping[str, Any]) -> None:
    if not isinstance(value, dict):
        raise _fail(path, "must be an object", value)
    extra = _resolve(root, node.extra_keys) if node.extra_keys is not None else []
    extra_names = {str(e) for e in extra} if isinstance(extra, list) else set()
    for key in value:
        if key not in node.fields and key not in extra_names:
            raise _fail(_join(path, key), "is not a field of this state", show=False)
    for key, sub in node.fields.items():
        if key not in value:
            if key in node.optional:
                continue
            raise _fail(_join(path, key), "is missing", show=False)
        _check(sub, value[key], _join(path, key), root)
    for key in sorted(extra_names - set(node.fields)):
        if key not in value:
            raise _fail(_join(path, key), f"is missing (one of {node.extra_keys})", show=False)
        _check(node.extra, value[key], _join(path, key), root)


def _check_table(node: Table, value: Any, path: str, root: Mapping[str, Any]) -> None:
    if not isinstance(value, dict):
        raise _fail(path, "must be an object", value)
    if len(value) > node.max_len:
        raise _fail(path, f"must have at most {node.max_len} keys", show=False)
    if node.keys is not None:
        names = _resolve(root, node.keys)
        if not isinstance(names, list) or sorted(map(str, names)) != sorted(value):
            raise _fail(path, f"must have exactly the keys listed in {node.keys}", show=False)
    for key, item in value.items():
        if node.key_pattern is not None and re.fullmatch(node.key_pattern, key) is None:
            raise _fail(_join(path, key), f"is not a field of this state (keys match {node.key_pattern})", show=False)
        _check(node.node, item, _join(path, key), root)
