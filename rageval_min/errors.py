"""The single exception type of rageval_min.

Every problem that a user can cause -- a bad file, a bad record, a bad option, a
gate that names no metric -- is raised as :class:`ScoringError`.  The message is
one line and says where the problem is, in the form ``file:line: field: what``
(parts that are unknown are left out), so a CLI can print it as is.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional, Sequence

__all__ = ["ScoringError"]


class ScoringError(ValueError):
    """A user-facing error: bad input, bad option or an undefined computation.

    >>> str(ScoringError("expected a list", path="gold.jsonl", line=3, field="citations"))
    'gold.jsonl:3: citations: expected a list'
    >>> str(ScoringError("missing gate 'chr'"))
    "missing gate 'chr'"
    >>> str(ScoringError("claim is not a string", record="qid=q7", field="answer_json.claim"))
    'qid=q7: answer_json.claim: claim is not a string'

    ``problems`` holds the messages when several records were bad (the first
    ones, up to a limit) and ``count`` how many there were; ``str()`` then gives
    the first and a count of the rest.
    """

    def __init__(
        self,
        msg: str,
        *,
        path: Optional[str] = None,
        line: Optional[int] = None,
        field: Optional[str] = None,
        record: Optional[Any] = None,
        problems: Optional[Sequence[str]] = None,
        count: Optional[int] = None,
    ) -> None:
        self.msg = msg
        self.path = path
        self.line = line
        self.field = field
        self.record = record
        where = []
        if path is not None:
            where.append(str(path) if line is None else f"{path}:{line}")
        elif line is not None:
            where.append(f"line {line}")
        if record is not None:
            where.append(str(record))
        if field is not None:
            where.append(str(field))
        text = ": ".join(where + [msg])
        self.problems = list(problems) if problems else [text]
        #: How many problems there were (``problems`` may hold only the first ones).
        self.count = count if count is not None else len(self.problems)
        super().__init__(text)

    def __reduce__(self) -> Any:
        # Keep the location and the collected problems when the error crosses a process boundary
        # (--jobs, the Dask engine): the default would rebuild it from the message alone.
        return (_rebuild, (type(self), dict(self.__dict__), self.args))


def _rebuild(cls: Any, state: Any, args: Any) -> "ScoringError":
    err = cls.__new__(cls)
    Exception.__init__(err, *args)
    err.__dict__.update(state)
    return err  # type: ignore[no-any-return]
