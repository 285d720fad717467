"""Where item rows are computed: in this process, in worker processes (``--jobs``) or on Dask.

A family's file-level function reads and validates its records in this process
(line numbers, the reference's dedup rules and error collection stay where they
are), and hands the per-item work to :func:`accumulate_items`::

    acc = accumulate_items(acc, functools.partial(score_record, **options), records,
                           on_item=on_item, on_result=write_output_line)

``fn(record)`` must be picklable (a module-level function, or a
``functools.partial`` of one with plain options) and return either an item row
or ``(item_row, extra)``; ``extra`` (an output line, a labelled record) goes to
``on_result`` in input order.  A :class:`~rageval_min.errors.ScoringError`
raised by ``fn`` for one record is passed to ``on_error`` when given (so a
family can collect up to 50 problems as in a single process), else raised.

The engine is chosen by the caller through :func:`use_engine` (the CLI does it
for ``--jobs`` and ``--engine dask``); library code that never chooses runs
serially.  Every engine feeds the rows to the accumulator in input order, so
the result is byte-identical for any number of jobs:

``serial``
    one process.
``processes``
    a pool of worker processes; records go out in chunks, at most two chunks
    per worker in flight, results come back in input order.  Memory stays
    bounded by the window, never by the input.
``dask``
    chunks become tasks on a ``dask.distributed`` client; each task scores its
    chunk *and* accumulates it into a fresh accumulator on the worker, and the
    states come back (through JSON-able :meth:`Accumulator.to_state`) to be
    merged in chunk order (see ``rageval_min_extras.dask_engine``).
"""

from __future__ import annotations

import contextvars
import os
from collections import deque
from contextlib import contextmanager

from ._numbers import int_text
from .errors import ScoringError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Deque, Iterable, Iterator, List, Optional, Tuple

__all__ = ["CHUNK", "Engine", "accumulate_items", "current_engine", "jobs_from_text", "run_chunk", "use_engine"]

#: Records per task.
CHUNK = 256


class Engine:
    """Runs ``fn`` over chunks of records; the base class runs them here, in order."""

    name = "serial"
    jobs = 1
    #: How many chunks this engine ran (what the tests check to know the work really went through it).
    chunks_run = 0

    def map_chunks(self, fn: Callable[[Any], Any], chunks: Iterable[List[Any]]) -> Iterator[List[Any]]:
        for chunk in chunks:
            self.chunks_run += 1
            yield run_chunk(fn, chunk)

    def close(self) -> None:
        pass


def run_chunk(fn: Callable[[Any], Any], chunk: List[Any]) -> List[Any]:
    """``fn`` over one chunk of records, an input error kept in place as a failure marker.

    The public hook of the engines: a new engine (the Dask one in ``rageval_min_extras``)
    submits ``run_chunk(fn, chunk)`` wherever it runs work, and hands the results back in
    chunk order.
    """
    out: List[Any] = []
    for record in chunk:
        try:
            out.append(fn(record))
        except ScoringError as exc:
            out.append(_Failed(exc))
    return out


class _Failed:
    """A ScoringError raised for one record (carried back in input order)."""

    __slots__ = ("error",)

    def __init__(self, error: ScoringError) -> None:
        self.error = error

    def __reduce__(self) -> Any:
        return (_Failed, (self.error,))


def _quiet_worker() -> None:
    """A worker leaves Ctrl-C to the main process (which stops the pool and says so in one line):
    no worker traceback, and the pool is shut down by its owner, so no worker outlives the run."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ProcessEngine(Engine):
    """A pool of ``jobs`` worker processes with a bounded window of chunks in flight."""

    name = "processes"

    def __init__(self, jobs: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        self.jobs = jobs
        self._pool = ProcessPoolExecutor(
            max_workers=jobs, mp_context=multiprocessing.get_context(method), initializer=_quiet_worker
        )

    def map_chunks(self, fn: Callable[[Any], Any], chunks: Iterable[List[Any]]) -> Iterator[List[Any]]:
        window: Deque[Any] = deque()
        for chunk in chunks:
            self.chunks_run += 1
            window.append(self._pool.submit(run_chunk, fn, chunk))
            if len(window) >= 2 * self.jobs:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


_ENGINE: "contextvars.ContextVar[Engine]" = contextvars.ContextVar("rageval_min_engine", default=Engine())


def current_engine() -> Engine:
    """The engine chosen by the innermost :func:`use_engine` (serial when none was)."""
    return _ENGINE.get()


@contextmanager
def use_engine(engine: Engine) -> Iterator[Engine]:
    """Run the enclosed file-level functions on ``engine``; closes it afterwards."""
    token = _ENGINE.set(engine)
    try:
        yield engine
    finally:
        _ENGINE.reset(token)
        engine.close()


def jobs_from_text(text: str) -> int:
    """``--jobs N`` or ``auto`` (the CPUs this process may use).

    >>> jobs_from_text("3")
    3
    """
    if text == "auto":
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # not on Linux
            return max(1, os.cpu_count() or 1)
    n = int_text(text)
    if n is None:
        raise ScoringError(f"--jobs must be a number or auto, got {text!r}")
    if not 1 <= n <= 512:
        raise ScoringError(f"--jobs must be between 1 and 512, got {n}")
    return n


def make_engine(jobs: int) -> Engine:
    """The serial engine for one job, else a process pool."""
    return Engine() if jobs <= 1 else ProcessEngine(jobs)


def _chunks(records: Iterable[Any], size: int) -> Iterator[List[Any]]:
    chunk: List[Any] = []
    for record in records:
        chunk.append(record)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _split(result: Any) -> Tuple[Any, Any]:
    if isinstance(result, tuple):
        return result[0], result[1]
    return result, None


def accumulate_items(
    acc: Any,
    fn: Callable[[Any], Any],
    records: Iterable[Any],
    *,
    on_item: Optional[Callable[[Any], None]] = None,
    on_result: Optional[Callable[[Any], None]] = None,
    on_error: Optional[Callable[[ScoringError], None]] = None,
    engine: Optional[Engine] = None,
) -> Any:
    """Score ``records`` with ``fn`` on the current engine and add the rows to ``acc`` in input order.

    ``fn`` returns a row or ``(row, extra)``; a row of None is not added (a
    record the reference drops).  Returns ``acc``.
    """
    engine = engine or current_engine()
    remote = getattr(engine, "accumulate_chunks", None)
    if remote is not None and on_result is None and on_item is None and on_error is None:
        return remote(acc, fn, _chunks(records, CHUNK))
    for results in engine.map_chunks(fn, _chunks(records, CHUNK)):
        for result in results:
            if isinstance(result, _Failed):
                if on_error is None:
                    raise result.error
                on_error(result.error)
                continue
            row, extra = _split(result)
            if row is not None:
                if on_item is not None:
                    on_item(row)
                acc.add(row)
            if on_result is not None and extra is not None:
                on_result(extra)
    return acc
