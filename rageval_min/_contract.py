"""The family contract: item rows, exact mergeable accumulators, partial states.

Every family module (``grounding``, ``rgb``, ``pairwise``, ``factuality``,
``rouge``, ``mtrag``) follows one pattern, written down for newcomers in
``docs/adding-a-family.md``:

* ``REFERENCE``, ``VARIANTS``, ``check_variants(variants)`` and
  ``signature(*, variants=..., params=...)``;
* per scoring command, a per-item scorer (one input record in, one *item row*
  out: a flat dict holding the record's natural key and every per-item metric
  under its canonical name) and an *accumulator* (a subclass of
  :class:`Accumulator`) that turns item rows into the command's
  :class:`~rageval_min.report.Report`;
* a public file-level function per command taking plain keyword arguments and
  an optional ``on_item`` callback (what ``--per-item PATH`` writes).

Accumulator state is plain JSON data.  :meth:`Accumulator.merge` is *exact*:
for any partition of the item rows into consecutive parts, accumulating each
part, passing its state through :meth:`Accumulator.to_state` /
:func:`accumulator_from_state` and merging the parts in input order gives a
report byte-identical to one pass.  Integer counters are added; float
aggregates the reference sums in an order-dependent way (numpy pairwise
summation, sequential ``sum``) keep their values in input order and are summed
once, in :meth:`Accumulator.finalize`.

The envelope of a state is::

    {"rageval_min_state": 1, "family": F, "command": C, "params": {...},
     "diagnostics": [...], "diagnostics_total": N, "data": {...}}

``params`` are what the accumulator was built with (they fix the signature);
two states merge only when family, command and params are equal.
"""

from __future__ import annotations

import contextvars
import json
import math
from collections.abc import Mapping
from contextlib import contextmanager

from ._metrics import Input, Metric, per_item_directions, rate_fields
from .errors import ScoringError
from .report import Report

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, ClassVar, Dict, Iterable, Iterator, List, Optional, Tuple, Type

    from ._state_schema import Fields, Schema  # imported where a state is checked, not at start-up

__all__ = [
    "Accumulator",
    "ItemRow",
    "MAX_DIAGNOSTICS",
    "STATE_VERSION",
    "accumulate",
    "accumulator_class",
    "accumulator_from_state",
    "family_accumulators",
    "emit_states_to",
    "finish",
    "partial_requested",
    "item_row_json",
    "PROVENANCE_FIELD",
    "params_digest",
    "state_digest",
    "state_node",
    "provenance",
    "record_provenance",
    "register_accumulator",
]

if TYPE_CHECKING:
    #: A per-item output: a flat dict, the natural key first, then the metrics.
    ItemRow = Dict[str, Any]
else:
    ItemRow = dict  # at run time the plain type: typing is not imported at start-up

#: Version of the partial-state envelope.
STATE_VERSION = 1

#: How many diagnostics a report keeps (the rest are counted).
MAX_DIAGNOSTICS = 50

_REGISTRY: Dict[Tuple[str, str], Type["Accumulator"]] = {}


def register_accumulator(cls: Type["Accumulator"]) -> Type["Accumulator"]:
    """Class decorator: make ``cls`` findable by its ``(FAMILY, COMMAND)``."""
    _REGISTRY[(cls.FAMILY, cls.COMMAND)] = cls
    return cls


def family_accumulators(family: str) -> List[Type["Accumulator"]]:
    """The registered accumulator classes of ``family`` (those of modules already imported), by command."""
    return [cls for (fam, _), cls in sorted(_REGISTRY.items()) if fam == family]


def accumulator_class(family: str, command: str) -> Type["Accumulator"]:
    """The accumulator class of a family's command (imports the family module)."""
    from . import registry

    if (family, command) not in _REGISTRY:
        if family not in registry.family_names():
            raise ScoringError(f"unknown family {family!r}")
        registry.package_module(family)
    try:
        return _REGISTRY[(family, command)]
    except KeyError:
        raise ScoringError(f"family {family!r} has no mergeable command {command!r}") from None


class deferred_schema:
    """A class attribute holding a state schema built on first use (``STATE_SCHEMA =
    deferred_schema(build)``): a command that writes no state does not import the schema's
    classes (:mod:`rageval_min._state_schema`) at start-up.

    >>> class A:
    ...     S = deferred_schema(lambda: "built")
    >>> A.S
    'built'
    """

    def __init__(self, build: Callable[[], Schema]) -> None:
        self._build = build
        self._value: Optional[Schema] = None

    def __get__(self, obj: Any, owner: Any) -> Schema:
        if self._value is None:
            self._value = self._build()
        return self._value


class Accumulator:
    """Base class of every family accumulator.

    A subclass sets ``FAMILY``, ``COMMAND``, ``METRICS`` and ``INPUTS`` (what
    each metric and input field is, see :mod:`rageval_min._metrics`; the
    ``DIRECTIONS`` and ``RATES`` tables are derived from them), takes its parameters
    as keyword arguments in ``__init__`` (calling ``super().__init__(**params)``
    with the JSON-serialisable ones that fix the signature), and implements:

    ``add(item)``
        fold one item row in;
    ``_data()`` / ``_load(data)``
        its own part of the state (plain JSON data) and the reverse;
    ``_merge(other)``
        fold in ``other``, the accumulator of the *next* part of the input;
    ``finalize()``
        the :class:`~rageval_min.report.Report` (it must not change the state:
        finalizing twice gives the same report).

    Diagnostics go through :meth:`note`; the first :data:`MAX_DIAGNOSTICS` are
    kept and the rest counted, which merges exactly.
    """

    FAMILY: ClassVar[str] = ""
    COMMAND: ClassVar[str] = ""
    #: every metric the command can emit (report and item rows), see :mod:`rageval_min._metrics`
    METRICS: ClassVar[Tuple[Metric, ...]] = ()
    #: the input files of the command and their fields, see :mod:`rageval_min._metrics`
    INPUTS: ClassVar[Tuple[Input, ...]] = ()
    #: per-item metric -> "higher" | "lower" (which direction is better); derived from ``METRICS``
    DIRECTIONS: ClassVar[Mapping[str, str]] = {}
    #: rate -> (numerator item field, denominator item field or None); derived from ``METRICS``
    RATES: ClassVar[Mapping[str, Tuple[str, Optional[str]]]] = {}
    #: parameters that only say where a run wrote its own files (``--records``): not part of the merge
    #: identity, so shards that wrote different files merge (the merged value lists them, see :meth:`merge`)
    LOCAL_PARAMS: ClassVar[Tuple[str, ...]] = ()
    #: what a state of this accumulator may hold (see :mod:`rageval_min._state_schema`); a state is
    #: checked against it before anything is built from it, and without one it cannot be merged
    STATE_SCHEMA: ClassVar[Optional[Schema]] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "METRICS" in cls.__dict__:  # the declarations are the one source of DIRECTIONS and RATES
            cls.DIRECTIONS = per_item_directions(cls.METRICS)
            cls.RATES = rate_fields(cls.METRICS)

    def __init__(self, **params: Any) -> None:
        self.params: Dict[str, Any] = dict(params)
        self._notes: List[str] = []
        self._notes_total = 0
        _announce(self)

    # -- diagnostics -------------------------------------------------------

    def note(self, text: str) -> None:
        """Record one diagnostic line."""
        self._notes_total += 1
        if len(self._notes) < MAX_DIAGNOSTICS:
            self._notes.append(text)

    def notes(self) -> List[str]:
        """The kept diagnostics plus a count of the dropped ones."""
        out = list(self._notes)
        if self._notes_total > len(self._notes):
            out.append(f"... and {self._notes_total - len(self._notes)} more diagnostic(s)")
        return out

    # -- the contract ------------------------------------------------------

    def add(self, item: ItemRow) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _data(self) -> Dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _load(self, data: Mapping[str, Any]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _merge(self, other: "Accumulator") -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def finalize(self) -> Report:  # pragma: no cover - abstract
        raise NotImplementedError

    def merge(self, other: "Accumulator") -> "Accumulator":
        """Fold in the accumulator of the next part of the input; returns ``self``."""
        if (other.FAMILY, other.COMMAND) != (self.FAMILY, self.COMMAND):
            raise ScoringError(
                f"cannot merge a {other.FAMILY} {other.COMMAND} state into a {self.FAMILY} {self.COMMAND} one"
            )
        mine, theirs = self._identity(), other._identity()
        if _canonical(theirs) != _canonical(mine):
            raise ScoringError(
                f"cannot merge {self.FAMILY} states made with different options: "
                f"{_canonical(mine)} vs {_canonical(theirs)}"
            )
        self._merge(other)
        for name in self.LOCAL_PARAMS:
            if name in self.params or name in other.params:
                self.params[name] = _local_union(self.params.get(name), other.params.get(name))
        for text in other._notes:
            if len(self._notes) < MAX_DIAGNOSTICS:
                self._notes.append(text)
        self._notes_total += other._notes_total
        return self

    def _identity(self) -> Dict[str, Any]:
        """The parameters two states must agree on to merge: all but :attr:`LOCAL_PARAMS`."""
        return {k: v for k, v in self.params.items() if k not in self.LOCAL_PARAMS}

    def to_state(self) -> Dict[str, Any]:
        """The whole state as plain JSON-serialisable data (see the module docstring), ending with
        ``written`` (a random id of this write) and ``digest`` (a SHA-256 of the rest), so that a
        state changed after it was written, or the same state given twice to ``merge``, is
        recognised.  Shards whose contents are equal (two empty shards) are still distinct."""
        state: Dict[str, Any] = {
            "rageval_min_state": STATE_VERSION,
            "family": self.FAMILY,
            "command": self.COMMAND,
            "params": self.params,
            "diagnostics": list(self._notes),
            "diagnostics_total": self._notes_total,
            "data": self._data(),
        }
        state["written"] = _write_id()
        state["digest"] = state_digest(state)
        return state

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> "Accumulator":
        """Rebuild an accumulator from :meth:`to_state` output.

        The state is input: it is checked against :attr:`STATE_SCHEMA` (envelope, params and data)
        first, then against its own digest, and only then is anything built from it."""
        _check_envelope(state)
        if (state["family"], state["command"]) != (cls.FAMILY, cls.COMMAND):
            raise ScoringError(
                f"the state is a {state['family']} {state['command']} state, not {cls.FAMILY} {cls.COMMAND}"
            )
        if cls.STATE_SCHEMA is None:
            raise ScoringError(f"{cls.FAMILY} {cls.COMMAND} declares no state schema: its states cannot be merged")
        from ._state_schema import check_state

        check_state(state_node(cls.STATE_SCHEMA), state)
        if "digest" in state and state["digest"] != state_digest(state):
            raise ScoringError("the partial state was changed after it was written (its digest does not match)")
        try:
            acc = cls(**state["params"])
        except ScoringError as exc:
            field = "state.params" + (f".{exc.field}" if exc.field else "")
            raise ScoringError(exc.msg, field=field) from None
        notes = state.get("diagnostics") or []
        acc._notes = list(notes)[:MAX_DIAGNOSTICS]
        acc._notes_total = max(state.get("diagnostics_total", len(notes)), len(acc._notes))
        try:
            acc._load(state["data"])
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise ScoringError(f"malformed partial state for {cls.FAMILY} {cls.COMMAND}: {exc}") from None
        return acc


def _local_union(left: Any, right: Any) -> Any:
    """A local parameter of two merged parts: the value when both agree, else the distinct values in order.

    >>> _local_union("a.jsonl", "a.jsonl"), _local_union("a.jsonl", "b.jsonl"), _local_union(["a", "b"], "a")
    ('a.jsonl', ['a.jsonl', 'b.jsonl'], ['a', 'b'])
    """
    if _canonical(left) == _canonical(right):
        return left
    out = list(left) if isinstance(left, list) else [left]
    for value in right if isinstance(right, list) else [right]:
        if value not in out:
            out.append(value)
    return out if len(out) > 1 else out[0]


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def _write_id() -> str:
    import uuid

    return uuid.uuid4().hex


class NonFiniteState(ScoringError):
    """A state holds NaN or an infinity (a value read from an input: an id, a label), which no
    strict JSON can carry: the command's input is named where the state is written
    (:func:`rageval_min._cli_common.execution`)."""


def state_digest(state: Mapping[str, Any]) -> str:
    """The SHA-256 (hex) of a state's content: everything but its ``digest`` field, canonical JSON."""
    import hashlib

    body = {k: v for k, v in state.items() if k != "digest"}
    try:
        text = json.dumps(body, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    except (ValueError, RecursionError):
        raise NonFiniteState("malformed partial state: a value is not finite JSON (NaN or infinity)") from None
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _check_envelope(state: Any) -> None:
    """What is needed to find a state's accumulator: a state of this version naming family and command."""
    if not isinstance(state, Mapping) or state.get("rageval_min_state") != STATE_VERSION:
        raise ScoringError(f"not a rageval-min partial state (version {STATE_VERSION})")
    for key in ("family", "command"):
        if key not in state:
            raise ScoringError("is missing", field=f"state.{key}")
        if not isinstance(state[key], str):
            raise ScoringError("must be a string", field=f"state.{key}")


def state_node(schema: Schema) -> Fields:
    """The whole state's schema: the envelope (see the module docstring) around ``schema``'s params and data."""
    from ._state_schema import Count, Fields, Items, OneOf, Text

    return Fields(
        {
            "rageval_min_state": OneOf((STATE_VERSION,)),
            "family": Text(max_len=100),
            "command": Text(max_len=100),
            "params": schema.params,
            "diagnostics": Items(Text(), max_len=MAX_DIAGNOSTICS),
            "diagnostics_total": Count(),
            "data": schema.data,
            "written": Text(pattern="[0-9a-f]{32}"),
            "digest": Text(pattern="[0-9a-f]{64}"),
        },
        optional=("diagnostics", "diagnostics_total", "written", "digest"),
    )


def accumulator_from_state(state: Mapping[str, Any]) -> Accumulator:
    """Rebuild any family's accumulator from its state (the family is in the state)."""
    _check_envelope(state)
    cls = accumulator_class(str(state["family"]), str(state["command"]))
    return cls.from_state(state)


#: Where ``--emit-partial`` sends the state of the accumulator a command finishes (set by the CLI).
_STATE_SINK: "contextvars.ContextVar[Optional[Callable[[Dict[str, Any]], None]]]" = contextvars.ContextVar(
    "rageval_min_state_sink", default=None
)


def finish(acc: Accumulator) -> Report:
    """End a file-level function: hand the state to ``--emit-partial`` (when asked), then finalize.

    Every file-level function of a scoring command returns ``finish(acc)``
    rather than ``acc.finalize()``, so that a shard of a larger input can be
    merged later (``rageval-min merge``).
    """
    report = acc.finalize()  # first: a shard whose report cannot be made leaves no state file
    sink = _STATE_SINK.get()
    if sink is not None:
        sink(acc.to_state())
    return report


def partial_requested() -> bool:
    """True when the running command was asked for ``--emit-partial`` (its state must be mergeable)."""
    return _STATE_SINK.get() is not None


@contextmanager
def emit_states_to(sink: Optional[Callable[[Dict[str, Any]], None]]) -> Iterator[None]:
    """Send the states that :func:`finish` sees to ``sink`` within the block."""
    token = _STATE_SINK.set(sink)
    try:
        yield
    finally:
        _STATE_SINK.reset(token)


def accumulate(
    acc: Accumulator, items: Iterable[ItemRow], on_item: Optional[Callable[[ItemRow], None]] = None
) -> Accumulator:
    """Add every item row to ``acc`` (passing each to ``on_item`` first); returns ``acc``."""
    for item in items:
        if on_item is not None:
            on_item(item)
        acc.add(item)
    return acc


def item_row_json(row: ItemRow, writer: Optional[str] = None) -> str:
    """One line of a ``--per-item`` file (strict JSON: NaN and infinities become null).

    ``writer`` (see :func:`provenance`) is appended as the field ``_rageval_min``.

    >>> item_row_json({"id": "a", "f1": float("nan"), "hit": 1})
    '{"id": "a", "f1": null, "hit": 1}\\n'
    >>> item_row_json({"id": "a", "hit": 1}, "grounding score 0123456789ab")
    '{"id": "a", "hit": 1, "_rageval_min": "grounding score 0123456789ab"}\\n'
    """
    clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}
    if writer is not None:
        clean[PROVENANCE_FIELD] = writer
    return json.dumps(clean, ensure_ascii=False, allow_nan=False) + "\n"


#: The field a ``--per-item`` row names its writer in: ``"<family> <command> <params digest>"``.
PROVENANCE_FIELD = "_rageval_min"

#: Set by the CLI for one command: the first registered accumulator built in it is the writer.
_WRITER: "contextvars.ContextVar[Optional[List[Accumulator]]]" = contextvars.ContextVar(
    "rageval_min_writer", default=None
)


def params_digest(params: Mapping[str, Any]) -> str:
    """A short digest of an accumulator's parameters (what must agree for two runs to be comparable).

    >>> params_digest({"k": 5, "variants": []}) == params_digest({"variants": [], "k": 5})
    True
    """
    import hashlib

    return hashlib.sha256(_canonical(dict(params)).encode("utf-8")).hexdigest()[:12]


def _announce(acc: "Accumulator") -> None:
    holder = _WRITER.get()
    if holder is not None and not holder and _REGISTRY.get((acc.FAMILY, acc.COMMAND)) is type(acc):
        holder.append(acc)


@contextmanager
def record_provenance() -> Iterator[List["Accumulator"]]:
    """Within the block, the first registered accumulator built is kept in the yielded list."""
    holder: List[Accumulator] = []
    token = _WRITER.set(holder)
    try:
        yield holder
    finally:
        _WRITER.reset(token)


def provenance() -> Optional[str]:
    """The writer of the running command's item rows, once its accumulator exists (else None):
    ``"<family> <command> <parameter digest>"``, its parameters as they are when this is asked."""
    holder = _WRITER.get()
    if not holder:
        return None
    acc = holder[0]
    return f"{acc.FAMILY} {acc.COMMAND} {params_digest(acc.params)}"
