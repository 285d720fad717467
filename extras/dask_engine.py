"""Dask engine for ``--engine dask`` and a Python entry point taking a Dask bag.

Install with ``pip install 'rageval-min[dask]'`` (dask and distributed).  Nothing
here changes a number: chunks of records are scored on the workers, each chunk
is accumulated there into a fresh accumulator, and the accumulator *states*
(plain JSON data) come back and are merged in chunk order, which the family
contract guarantees is byte-identical to one pass.

* ``rageval-min <command> ... --engine dask [--scheduler tcp://HOST:PORT]``:
  the command reads and validates its input here and sends the per-item work to
  the cluster (no ``--scheduler``: a ``distributed.LocalCluster`` of worker
  processes on this machine).
* :func:`score_bag`: for data that already lives in a Dask bag::

      import functools
      from rageval_min import rouge
      from rageval_min_extras.dask_engine import score_bag

      report = score_bag(
          bag_of_records,
          functools.partial(rouge.score_item, rouge_types=["rougeL"], use_stemmer=False,
                            tokenizer="reference", lcs=None),
          rouge.RougeAccumulator(rouge_types=["rougeL"], use_stemmer=False,
                                 tokenizer="reference", backend="stdlib"),
      )

  Each partition is scored and accumulated on a worker; the states are merged
  in partition order.

The workers need ``rageval_min`` importable (the same installation as the client).
"""

from collections import deque
from typing import Any, Callable, Deque, Iterable, Iterator, List, Optional

from rageval_min._contract import Accumulator, accumulator_from_state, finish
from rageval_min._parallel import Engine, run_chunk
from rageval_min.errors import ScoringError

from ._common import missing_extra

__all__ = ["DaskEngine", "score_bag"]

INSTALL = "pip install 'rageval-min[dask]'"


def _distributed() -> Any:
    try:
        import distributed  # type: ignore[import-not-found]
    except ImportError:
        raise missing_extra("distributed", INSTALL) from None
    return distributed


def _accumulate_chunk(fn: Callable[[Any], Any], chunk: List[Any], empty: Any) -> Any:
    """On a worker: score a chunk, fold it into a fresh accumulator, return its state."""
    acc = accumulator_from_state(empty)
    for record in chunk:
        result = fn(record)
        row = result[0] if isinstance(result, tuple) else result
        if row is not None:
            acc.add(row)
    return acc.to_state()


def _accumulate_partition(records: Iterable[Any], fn: Callable[[Any], Any], empty: Any) -> List[Any]:
    return [_accumulate_chunk(fn, list(records), empty)]


class DaskEngine(Engine):
    """Runs chunks as tasks of a ``distributed.Client`` (a LocalCluster of processes when no address is given)."""

    name = "dask"

    def __init__(self, scheduler: Optional[str] = None, *, n_workers: int = 2) -> None:
        distributed = _distributed()
        self._cluster = None
        try:
            if scheduler:
                self._client = distributed.Client(scheduler, timeout="30s")
            else:
                self._cluster = distributed.LocalCluster(
                    n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None
                )
                self._client = distributed.Client(self._cluster)
        except (OSError, TimeoutError) as exc:
            raise ScoringError(f"cannot reach the Dask scheduler {scheduler or '(local)'}: {exc}") from None
        self.jobs = max(1, len(self._client.scheduler_info().get("workers", {})))

    def _window(self, submit: Callable[[List[Any]], Any], chunks: Iterable[List[Any]]) -> Iterator[Any]:
        window: Deque[Any] = deque()
        for chunk in chunks:
            self.chunks_run += 1
            window.append(submit(chunk))
            if len(window) >= 2 * self.jobs:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()

    def map_chunks(self, fn: Callable[[Any], Any], chunks: Iterable[List[Any]]) -> Iterator[List[Any]]:
        return self._window(lambda chunk: self._client.submit(run_chunk, fn, chunk, pure=False), chunks)

    def accumulate_chunks(self, acc: Accumulator, fn: Callable[[Any], Any], chunks: Iterable[List[Any]]) -> Any:
        """Score and accumulate each chunk on a worker; merge the states here in chunk order."""
        empty = type(acc)(**acc.params).to_state()
        for state in self._window(
            lambda chunk: self._client.submit(_accumulate_chunk, fn, chunk, empty, pure=False), chunks
        ):
            acc.merge(accumulator_from_state(state))
        return acc

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def score_bag(bag: Any, item: Callable[[Any], Any], accumulator: Accumulator) -> Any:
    """The report of every record of a Dask ``bag``: ``item`` per record on the workers, states merged in order.

    ``item`` is a family's per-item scorer with its options bound (picklable);
    ``accumulator`` is an empty accumulator built with the same options (it
    fixes the signature).  Returns the family's ``Report``.
    """
    empty = type(accumulator)(**accumulator.params).to_state()
    states = bag.map_partitions(_accumulate_partition, item, empty).compute()
    for state in states:
        accumulator.merge(accumulator_from_state(state))
    return finish(accumulator)
