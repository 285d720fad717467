"""Pipeline step: the item rows of one file, kept by field (columns) instead of one dict per row.

A 100k-row per-item file read as one ``dict`` per row costs about 1 KB a row
(each row's dict, its own copies of the key strings, its float objects): two
such files are over 300 MB.  :class:`Columns` keeps one list of values per
field (``MISSING`` where a row lacks the field), one tuple of keys per
distinct key order, and the row of each id, so the same two files take a
fraction of that, and ``compare`` reads a metric's values as a list at C speed.

:class:`RowView` and :class:`LineView` are read-only mappings over the columns
with the meaning the dicts of :class:`~rageval_min.compare.paired.ItemRows`
always had (id -> the row as a dict, rebuilt with its keys in file order;
id -> line number), so code that indexes ``ItemRows.rows`` sees no change.
"""

from typing import Any, Dict, Iterator, List, Mapping, Sequence, Tuple

__all__ = ["MISSING", "Columns", "LineView", "RowView", "columns_of"]


class _Missing:
    """The value of a field a row does not have (never a JSON value)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Columns:
    """Rows stored by field: ``fields[name][r]`` is row ``r``'s value (or ``MISSING``)."""

    def __init__(self) -> None:
        #: field -> its values by row index, in the order the fields were first seen
        self.fields: Dict[str, List[Any]] = {}
        #: the distinct key orders of the rows, and each row's index into them
        self.shapes: List[Tuple[str, ...]] = []
        self.shape_of: List[int] = []
        #: id -> row index, in file order; row index -> line number
        self.index: Dict[Any, int] = {}
        self.line_of: List[int] = []
        self._shape_ids: Dict[Tuple[str, ...], int] = {}
        self._plan: Tuple[Tuple[str, ...], List[List[Any]], List[List[Any]], int] = ((), [], [], -1)

    def __len__(self) -> int:
        return len(self.line_of)

    def append(self, rid: Any, rec: Mapping[str, Any], line: int) -> None:
        """Add one row (``rid`` must be new; the caller checks duplicates)."""
        keys = tuple(rec)
        if keys != self._plan[0]:
            self._replan(keys)
        _, present, absent, shape = self._plan
        for col, value in zip(present, rec.values()):
            col.append(value)
        for col in absent:
            col.append(MISSING)
        self.shape_of.append(shape)
        self.index[rid] = len(self.line_of)
        self.line_of.append(line)

    def _replan(self, keys: Tuple[str, ...]) -> None:
        rows = len(self.line_of)
        for name in keys:
            if name not in self.fields:
                self.fields[name] = [MISSING] * rows
        shape = self._shape_ids.get(keys)
        if shape is None:
            shape = self._shape_ids[keys] = len(self.shapes)
            self.shapes.append(keys)
        here = set(keys)
        absent = [col for name, col in self.fields.items() if name not in here]
        self._plan = (keys, [self.fields[name] for name in keys], absent, shape)

    def row(self, r: int) -> Dict[str, Any]:
        """Row ``r`` as the dict it was read as (same keys, same order, same value objects)."""
        return {name: self.fields[name][r] for name in self.shapes[self.shape_of[r]]}

    def values(self, name: str, rows: Sequence[int]) -> List[Any]:
        """Field ``name`` of ``rows`` (``MISSING`` where absent)."""
        col = self.fields.get(name)
        if col is None:
            return [MISSING] * len(rows)
        if isinstance(rows, range) and rows == range(len(col)):
            return col
        return list(map(col.__getitem__, rows))


class RowView(Mapping[Any, Dict[str, Any]]):
    """id -> row dict, over :class:`Columns` (iteration in file order)."""

    def __init__(self, columns: Columns) -> None:
        self.columns = columns

    def __getitem__(self, rid: Any) -> Dict[str, Any]:
        return self.columns.row(self.columns.index[rid])

    def __contains__(self, rid: object) -> bool:
        return rid in self.columns.index

    def __iter__(self) -> Iterator[Any]:
        return iter(self.columns.index)

    def __len__(self) -> int:
        return len(self.columns.index)


class LineView(Mapping[Any, int]):
    """id -> line number, over :class:`Columns`."""

    def __init__(self, columns: Columns) -> None:
        self.columns = columns

    def __getitem__(self, rid: Any) -> int:
        return self.columns.line_of[self.columns.index[rid]]

    def __contains__(self, rid: object) -> bool:
        return rid in self.columns.index

    def __iter__(self) -> Iterator[Any]:
        return iter(self.columns.index)

    def __len__(self) -> int:
        return len(self.columns.index)


def columns_of(rows: Mapping[Any, Mapping[str, Any]], lines: Mapping[Any, int]) -> Columns:
    """The :class:`Columns` behind ``rows``: its own when it is a :class:`RowView`, else built from the dicts.

    >>> cols = columns_of({"a": {"id": "a", "x": 1}, "b": {"id": "b"}}, {"a": 1, "b": 2})
    >>> cols.fields["x"], cols.row(1)
    ([1, MISSING], {'id': 'b'})
    """
    if isinstance(rows, RowView):
        return rows.columns
    cols = Columns()
    for rid, rec in rows.items():
        cols.append(rid, rec, lines.get(rid, 0))
    return cols
