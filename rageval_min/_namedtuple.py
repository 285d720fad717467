"""``NamedTuple`` classes without importing :mod:`typing` at run time.

The modules every command imports at start-up (the kernel, the registry, the report model)
import :mod:`typing` only for the type checker: importing it costs about 3 ms, a tenth of
``rageval-min rouge``'s start-up.  Their typed records are declared as usual::

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import NamedTuple
    else:
        from ._namedtuple import NamedTuple

    class Gate(NamedTuple):
        name: str
        threshold: float = 0.0

The type checker reads :class:`typing.NamedTuple`; at run time the class statement makes the
same class :class:`typing.NamedTuple` makes: a :func:`collections.namedtuple` with the
annotated fields in order, their defaults, the class's docstring, methods and attributes, and
its annotations (the text of each, under ``from __future__ import annotations``).

>>> class Point(NamedTuple):
...     '''A point.'''
...     x: int
...     y: int = 0
...     def norm1(self) -> int:
...         return abs(self.x) + abs(self.y)
>>> p = Point(3, -4)
>>> p, p.norm1(), Point(1), Point._fields, Point.__doc__
(Point(x=3, y=-4), 7, Point(x=1, y=0), ('x', 'y'), 'A point.')
>>> isinstance(p, tuple), Point._field_defaults
(True, {'y': 0})
"""

from __future__ import annotations

from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Tuple

__all__ = ["NamedTuple"]

#: Names a NamedTuple class may not define (they are the tuple's own).
_RESERVED = frozenset(
    ("__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults", "_make", "_replace", "_asdict")
)


class _Maker(type):
    """Makes each class statement over :class:`NamedTuple` a :func:`collections.namedtuple`."""

    def __new__(mcls, name: str, bases: Tuple[type, ...], ns: Dict[str, Any]) -> Any:
        if not bases:  # NamedTuple itself
            return super().__new__(mcls, name, bases, ns)
        annotations = ns.get("__annotations__", {})
        fields = list(annotations)
        defaults = [ns[f] for f in fields if f in ns]
        if any(f in ns for f in fields[: len(fields) - len(defaults)]):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        for key in sorted(_RESERVED.intersection(ns)):
            raise AttributeError(f"{name}: cannot overwrite NamedTuple attribute {key}")
        cls = namedtuple(name, fields, defaults=defaults, module=ns.get("__module__"))  # type: ignore[misc]
        cls.__annotations__ = dict(annotations)
        for key, value in ns.items():  # the docstring, the qualified name, methods, class attributes
            if key not in ("__module__", "__annotations__") and key not in annotations:
                setattr(cls, key, value)
        return cls


class NamedTuple(metaclass=_Maker):
    """The base of a class statement that makes a named tuple (see the module docstring)."""
