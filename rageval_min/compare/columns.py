"""Pipeline step: the item rows of one file as value tuples (columns built on demand), not one dict per row.

A 100k-row per-item file read as one ``dict`` per row costs about 1 KB a row
(each row's dict, its own copies of the key strings, its float objects): two
such files are over 300 MB.  :class:`Columns` keeps each row's values as a
tuple, one tuple of keys per distinct key order, and the row of each id, so
the same two files take about a third of that, and ``compare`` reads a
metric's values as a list (a column, ``MISSING`` where a row lacks the field)
built at C speed.

:class:`RowView` and :class:`LineView` are read-only mappings over these rows
with the meaning the dicts of :class:`~rageval_min.compare.paired.ItemRows`
always had (id -> the row as a dict, rebuilt with its keys in file order;
id -> line number), so code that indexes ``ItemRows.rows`` sees no change.
"""

from array import array
from itertools import repeat
from operator import itemgetter
from typing import Any, Dict, Iterator, List, Mapping, Sequence, Tuple, TypeVar

__all__ = ["MISSING", "Columns", "LineView", "RowView", "columns_of"]


class _Missing:
    """The value of a field a row does not have (never a JSON value)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Columns:
    """Rows stored as value tuples with one key tuple per distinct key order; columns built on demand."""

    def __init__(self) -> None:
        #: each row's values, in its keys' order, and the index of its keys in ``shapes``
        self.tuples: List[Tuple[Any, ...]] = []
        self.shape_of: List[int] = []
        #: the distinct key orders of the rows, in the order they first appear
        self.shapes: List[Tuple[str, ...]] = []
        #: id -> row index, in file order; row index -> line number
        self.index: Dict[Any, int] = {}
        self.line_of: "array[int]" = array("q")
        self._shape_ids: Dict[Tuple[str, ...], int] = {}
        self._last: Tuple[Tuple[str, ...], int] = ((), -1)
        self._columns: Dict[str, List[Any]] = {}

    def __len__(self) -> int:
        return len(self.tuples)

    def append(self, rid: Any, rec: Mapping[str, Any], line: int) -> None:
        """Add one row (``rid`` must be new; the caller checks duplicates)."""
        self.index[rid] = len(self.tuples)
        self.add_shape(rec)
        self.tuples.append(tuple(rec.values()))
        self.line_of.append(line)

    def add_shape(self, rec: Mapping[str, Any]) -> None:
        """Record the key order of the row being added (the caller then appends its values)."""
        keys = tuple(rec)
        last = self._last
        if keys != last[0]:
            shape = self._shape_ids.get(keys)
            if shape is None:
                shape = self._shape_ids[keys] = len(self.shapes)
                self.shapes.append(keys)
            self._last = last = (keys, shape)
        self.shape_of.append(last[1])

    @property
    def fields(self) -> Dict[str, None]:
        """Every field name, in the order the fields first appear in the file."""
        return dict.fromkeys(name for keys in self.shapes for name in keys)

    def column(self, name: str) -> List[Any]:
        """Field ``name`` of every row (``MISSING`` where a row lacks it); built once, then kept."""
        col = self._columns.get(name)
        if col is None:
            where = [keys.index(name) if name in keys else -1 for keys in self.shapes]
            if len(where) == 1 and where[0] >= 0:
                col = list(map(itemgetter(where[0]), self.tuples))
            else:
                col = [t[where[s]] if where[s] >= 0 else MISSING for t, s in zip(self.tuples, self.shape_of)]
            self._columns[name] = col
        return col

    def row(self, r: int) -> Dict[str, Any]:
        """Row ``r`` as the dict it was read as (same keys, same order, same value objects)."""
        return dict(zip(self.shapes[self.shape_of[r]], self.tuples[r]))

    def rows(self, rows: Sequence[int]) -> Iterator[Dict[str, Any]]:
        """:meth:`row` of each of ``rows``, built at C speed when every row has the same keys."""
        every = isinstance(rows, range) and rows == range(len(self))
        tuples = self.tuples if every else map(self.tuples.__getitem__, rows)
        if len(self.shapes) == 1:
            return map(dict, map(zip, repeat(self.shapes[0]), tuples))
        return map(self.row, rows)

    def forget_columns(self) -> None:
        """Drop the columns built so far (they are rebuilt on demand)."""
        self._columns.clear()

    def values(self, name: str, rows: Sequence[int]) -> List[Any]:
        """Field ``name`` of ``rows`` (``MISSING`` where absent)."""
        col = self.column(name)
        if isinstance(rows, range) and rows == range(len(col)):
            return col
        return list(map(col.__getitem__, rows))


_V = TypeVar("_V")


class _IdView(Mapping[Any, _V]):
    """A mapping keyed by the row ids of :class:`Columns` (iteration in file order); a subclass
    says what an id maps to."""

    def __init__(self, columns: Columns) -> None:
        self.columns = columns

    def __getitem__(self, rid: Any) -> _V:
        raise NotImplementedError

    def __contains__(self, rid: object) -> bool:
        return rid in self.columns.index

    def __iter__(self) -> Iterator[Any]:
        return iter(self.columns.index)

    def __len__(self) -> int:
        return len(self.columns.index)


class RowView(_IdView[Dict[str, Any]]):
    """id -> row dict, over :class:`Columns` (iteration in file order)."""

    def __getitem__(self, rid: Any) -> Dict[str, Any]:
        return self.columns.row(self.columns.index[rid])


class LineView(_IdView[int]):
    """id -> line number, over :class:`Columns`."""

    def __getitem__(self, rid: Any) -> int:
        return self.columns.line_of[self.columns.index[rid]]


def columns_of(rows: Mapping[Any, Mapping[str, Any]], lines: Mapping[Any, int]) -> Columns:
    """The :class:`Columns` behind ``rows``: its own when it is a :class:`RowView`, else built from the dicts.

    >>> cols = columns_of({"a": {"id": "a", "x": 1}, "b": {"id": "b"}}, {"a": 1, "b": 2})
    >>> cols.column("x"), cols.row(1)
    ([1, MISSING], {'id': 'b'})
    """
    if isinstance(rows, RowView):
        return rows.columns
    cols = Columns()
    for rid, rec in rows.items():
        cols.append(rid, rec, lines.get(rid, 0))
    return cols
