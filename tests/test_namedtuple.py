"""``rageval_min._namedtuple.NamedTuple``: the class statement makes what ``typing.NamedTuple``
makes (the modules on the start-up path use it so as not to import typing at run time)."""

import pickle
from typing import Any, Optional
from typing import NamedTuple as TypingNamedTuple

import pytest

from rageval_min._namedtuple import NamedTuple
from rageval_min.gates import GateOutcome
from rageval_min.rouge import Score


def _declare(base: Any, qualname: str) -> Any:
    """The same class statement over ``base``, importable as ``qualname`` (for pickling)."""

    class Rec(base):  # type: ignore[misc, valid-type]
        """Docstring kept."""

        name: str
        count: int = 0
        note: Optional[str] = None

        def twice(self) -> int:
            return 2 * self.count

        @property
        def loud(self) -> str:
            return str(self.name).upper()

    Rec.__qualname__ = qualname
    return Rec


Ours = _declare(NamedTuple, "Ours")
Theirs = _declare(TypingNamedTuple, "Theirs")


def test_the_same_tuple_as_typing_makes() -> None:
    for cls in (Ours, Theirs):
        a = cls("x", 3)
        assert tuple(a) == ("x", 3, None) and a == ("x", 3, None) and isinstance(a, tuple)
        assert a.twice() == 6 and a.loud == "X" and a._replace(count=1).count == 1
        assert a._asdict() == {"name": "x", "count": 3, "note": None} and cls._make(["y", 1, "n"]).note == "n"
        assert cls._fields == ("name", "count", "note") and cls._field_defaults == {"count": 0, "note": None}
        assert cls.__doc__ == "Docstring kept." and cls.__module__ == __name__
        assert pickle.loads(pickle.dumps(a)) == a and type(pickle.loads(pickle.dumps(a))) is cls
        with pytest.raises(TypeError):
            cls()  # name has no default
    assert repr(Ours("x")) == repr(Theirs("x")) == "Rec(name='x', count=0, note=None)"
    assert list(Ours.__annotations__) == list(Theirs.__annotations__) == ["name", "count", "note"]


def test_the_errors_typing_raises() -> None:
    with pytest.raises(TypeError):

        class Bad(NamedTuple):  # a field without a default after one with a default
            a: int = 0
            b: int

    with pytest.raises(AttributeError):

        class Worse(NamedTuple):
            a: int

            def _asdict(self) -> dict:  # type: ignore[override]
                return {}


def test_the_package_records_are_such_tuples() -> None:
    assert repr(Score(1.0, 0.5, 0.6666666666666666)) == "Score(precision=1.0, recall=0.5, fmeasure=0.6666666666666666)"
    outcome = GateOutcome("chr", ">=", 0.5, 0.75, True, "chr>=0.5")
    assert pickle.loads(pickle.dumps(outcome)) == outcome and outcome.passed is True


def test_the_type_aliases_other_code_imports_at_run_time() -> None:
    """Aliases are for the type checker; the ones other code imports at run time still exist."""
    from typing import Callable, Hashable, Sequence

    from rageval_min import _contract, _io, rouge

    assert rouge.LcsFn == Callable[[Sequence[Hashable], Sequence[Hashable]], int]
    with pytest.raises(AttributeError):
        rouge.NoSuchName
    assert _contract.ItemRow is dict and _io.Numbered is tuple
