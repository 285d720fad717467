"""Pipeline step: the one judge runner -- cache lookup, a thread pool, retries, abort, progress and stats.

Every call goes through :func:`run_judge` (or :class:`JudgeRunner`, which holds
the options of one command line, :class:`RunnerOptions`): a content-addressed
JSONL cache (:mod:`rageval_min.judges.cache`), retries with exponential backoff
on HTTP 429 / 5xx / timeouts, a total deadline per call, a thread pool whose
results come back in input order, an abort after too many consecutive
failures, a progress line on a terminal, and a final :class:`JudgeStats`.
Every limit (redirects, response size, deadline, key redaction, the ``cmd:``
environment, cache recovery) is listed in docs/judges.md, "Security and
limits".
"""

import queue
import threading
import time
from typing import (
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    TextIO,
    Tuple,
)

from ..errors import ScoringError
from .accounting import JudgeBudgetExceeded, Ledger
from .cache import JudgeCache, _sha256, sample_key
from .interface import (
    DEFAULT_ABORT_AFTER,
    DEFAULT_RETRIES,
    MAX_CONCURRENCY,
    MAX_RETRIES,
    Judge,
    JudgeAborted,
    JudgeAnswer,
    JudgeError,
    JudgeResult,
    JudgeStats,
    UnparseableAnswer,
    _env_secrets,
    redact,
)
from .sampled import SampleStats, Sampling, combine_item, decide, rules_for
from .templates import PromptTemplate, template_signature

__all__ = ["JudgeRunner", "RunnerOptions", "run_judge", "run_with_options"]


class RunnerOptions(NamedTuple):
    """How a judge run is carried out: the runner's options of one command line, in one frozen object.

    Built once (by :func:`rageval_min.judges.options.judge_from_args` from the
    ``--concurrency``, ``--judge-retries`` and ``--judge-abort-after``
    options, or by :func:`run_judge` from its keywords) and handed down
    unchanged to :class:`JudgeRunner`, each run and its workers.

    ``concurrency``: judge calls in flight (1 to :data:`MAX_CONCURRENCY`);
    ``retries``: further attempts of a retryable failed call (0 to
    :data:`MAX_RETRIES`); ``abort_after``: consecutive failed calls that stop
    the run (0 = never); ``backoff`` and ``max_backoff``: the first wait
    before a retry and the cap of the doubling waits, in seconds; ``sleep``:
    how to wait (injectable for tests); ``progress``: the stream of the
    progress line (shown only on a terminal).

    >>> RunnerOptions(concurrency=4).checked().concurrency
    4
    >>> RunnerOptions(retries=99).checked()
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: --judge-retries must be between 0 and 20
    """

    concurrency: int = 1
    retries: int = DEFAULT_RETRIES
    abort_after: int = DEFAULT_ABORT_AFTER
    backoff: float = 1.0
    max_backoff: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    progress: Optional[TextIO] = None

    def checked(self) -> "RunnerOptions":
        """These options, if within the limits; else a :class:`~rageval_min.errors.ScoringError`."""
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise ScoringError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}")
        if not 0 <= self.retries <= MAX_RETRIES:
            raise ScoringError(f"--judge-retries must be between 0 and {MAX_RETRIES}")
        return self


class _Progress:
    def __init__(self, stream: Optional[TextIO], total: int, label: str) -> None:
        self.stream = stream if stream is not None and _isatty(stream) else None
        self.total = total
        self.label = label
        self._last = 0.0
        self._shown = False

    def update(self, done: int, stats: JudgeStats, force: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        self.stream.write(
            f"\r{self.label}: {done}/{self.total} calls={stats.calls} cache_hits={stats.cache_hits} "
            f"failures={stats.failures}"
        )
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self.stream is not None and self._shown:
            self.stream.write("\n")
            self.stream.flush()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except Exception:
        return False


class _Run:
    """The shared state of one :func:`run_judge` call and the steps its workers take."""

    def __init__(
        self,
        judge: Judge,
        prompts: Sequence[str],
        params: Dict[str, Any],
        cache: Optional[JudgeCache],
        options: RunnerOptions,
        samples: Optional[Sequence[int]] = None,
        ledger: Optional[Ledger] = None,
    ) -> None:
        self.judge = judge
        self.prompts = prompts
        self.params = params
        self.cache = cache
        self.options = options
        self.samples = samples
        self.ledger = ledger
        self.live = getattr(judge, "cacheable", True)  # a replay judge spends nothing
        self.identity = judge.identity
        self.model = getattr(judge, "model", "") or ""
        self.use_cache = cache is not None and getattr(judge, "cacheable", True)
        self.secrets = _judge_secrets(judge)
        n = len(prompts)
        self.answers: List[Optional[str]] = [None] * n
        self.errors: List[Optional[str]] = [None] * n
        self.lock = threading.Lock()
        self.calls = self.cache_hits = self.failures = self.consecutive = self.done = 0
        self.abort = False
        self.budget_stop = False
        self.last_error = ""
        self.fatal: List[BaseException] = []

    # -- step 1: cache lookup ------------------------------------------------
    def lookup(self) -> Dict[str, List[int]]:
        """Fill answers from the cache; return the prompts still to ask, by key (duplicates asked once)."""
        todo: Dict[str, List[int]] = {}
        counted = set()  # usage is counted once per key, as a run that asks a repeated prompt once
        for i, prompt in enumerate(self.prompts):
            if not isinstance(prompt, str):
                raise ScoringError(f"prompt {i + 1} is {type(prompt).__name__}, not a string")
            key = sample_key(self.identity, self.model, self.params, prompt, self.sample(i))
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is not None:
                self.answers[i] = hit
                self.cache_hits += 1
                if self.ledger is not None and key not in counted:
                    assert self.cache is not None
                    counted.add(key)
                    self.ledger.count(self.cache.get_usage(key), fresh=False)
            elif key in todo:
                todo[key].append(i)
                self.cache_hits += 1
            else:
                todo[key] = [i]
        self.done = len(self.prompts) - sum(len(idx) for idx in todo.values())
        return todo

    def sample(self, i: int) -> int:
        """The sample index of prompt ``i`` (0 without ``--samples``)."""
        return self.samples[i] if self.samples is not None else 0

    # -- step 2: one call, with retries and backoff ---------------------------
    def call(self, prompt: str, sample: int = 0) -> JudgeAnswer:
        full = getattr(self.judge, "answer_full", None)
        attempt = 0
        while True:
            try:
                if callable(full):
                    return full(prompt, self.params, sample)  # type: ignore[no-any-return]
                return JudgeAnswer(self.judge(prompt, self.params))
            except JudgeError as exc:
                opts = self.options
                if not exc.retryable or attempt >= opts.retries or self.aborted():
                    raise
                delay = min(opts.backoff * (2**attempt), opts.max_backoff)
                if exc.retry_after is not None:
                    delay = max(delay, min(exc.retry_after, opts.max_backoff))
                opts.sleep(delay)
                attempt += 1

    # -- step 3: bookkeeping of each outcome ---------------------------------
    def aborted(self) -> bool:
        with self.lock:
            return self.abort

    def failed(self, idx: List[int], exc: JudgeError) -> None:
        msg = redact(str(exc), self.secrets)
        with self.lock:
            self.failures += 1
            self.consecutive += 1
            self.last_error = msg
            self.done += len(idx)
            for i in idx:
                self.errors[i] = msg
            if self.options.abort_after and self.consecutive >= self.options.abort_after:
                self.abort = True

    def stop(self, exc: BaseException) -> None:
        with self.lock:
            self.fatal.append(exc)
            self.abort = True

    def answered(self, key: str, idx: List[int], got: JudgeAnswer) -> None:
        answer = got.text
        if self.use_cache:
            assert self.cache is not None
            prompt = self.prompts[idx[0]]
            record: Dict[str, Any] = {
                "judge": self.identity,
                "model": self.model,
                "params": self.params,
                "prompt_sha256": _sha256(prompt),
                "answer": answer,
            }
            if self.sample(idx[0]):
                record["sample"] = self.sample(idx[0])
            if got.usage is not None:
                record["usage"] = got.usage
            try:
                self.cache.put(key, record)
            except OSError as exc:
                raise ScoringError(f"cannot write judge cache: {exc.strerror or exc}", path=self.cache.path) from None
        with self.lock:
            self.consecutive = 0
            self.done += len(idx)
            for i in idx:
                self.answers[i] = answer

    # -- step 4: the worker of the pool --------------------------------------
    def worker(self, work: "queue.Queue[Tuple[str, List[int]]]") -> None:
        while not self.aborted():
            try:
                key, idx = work.get_nowait()
            except queue.Empty:
                return
            reserved = self.reserve()
            if reserved is None:
                return
            with self.lock:
                self.calls += 1
            try:
                answer = self.call(self.prompts[idx[0]], self.sample(idx[0]))
            except JudgeError as exc:
                self.settle(reserved, None)
                self.failed(idx, exc)
                continue
            except BaseException as exc:  # ScoringError and anything unexpected stop the run
                self.settle(reserved, None)
                self.stop(exc)
                return
            try:
                self.answered(key, idx, answer)
            except BaseException as exc:  # the cache cannot be written
                self.stop(exc)
                return
            finally:
                self.settle(reserved, answer)

    def reserve(self) -> Optional[Any]:
        """The budget reserved for the next live call (0 without a budget); ``None``: stop, the budget is reached."""
        if self.ledger is None or not self.live:
            return 0
        reserved = self.ledger.reserve()
        if reserved is None:
            with self.lock:
                self.budget_stop = self.abort = True
        return reserved

    def settle(self, reserved: Any, answer: Optional[JudgeAnswer]) -> None:
        """Spend what a live call cost (``answer``) or release its reservation (a failed call)."""
        if self.ledger is None:
            return
        if answer is not None:
            self.ledger.count(answer.usage, fresh=answer.fresh)
        if not self.live:
            return
        if answer is None:
            self.ledger.release(reserved)
            return
        self.ledger.settle(reserved, answer.usage)
        if self.ledger.stopped is not None:
            with self.lock:
                self.budget_stop = self.abort = True

    # -- step 5: stats ----------------------------------------------------------
    def stats(self, unparseable: int = 0) -> JudgeStats:
        with self.lock:
            return JudgeStats(self.calls, self.cache_hits, self.failures, unparseable)

    def progress(self) -> Tuple[int, JudgeStats]:
        with self.lock:
            return self.done, JudgeStats(self.calls, self.cache_hits, self.failures, 0)


def _judge_secrets(judge: Any) -> List[str]:
    """The API keys a judge's messages must never show (its own and the usual variables')."""
    own = getattr(judge, "_secrets", None)
    secrets = list(own()) if callable(own) else []
    return secrets + _env_secrets(getattr(judge, "api_key_env", None))


#: How long Ctrl-C waits for the calls in flight to end after cancelling them.
_INTERRUPT_GRACE = 1.0


def _run_pool(run: _Run, todo: Dict[str, List[int]], concurrency: int, prog: "_Progress") -> None:
    """Ask every prompt of ``todo`` with ``concurrency`` daemon threads; Ctrl-C cancels the calls in flight."""
    work: "queue.Queue[Tuple[str, List[int]]]" = queue.Queue()
    for item in todo.items():
        work.put(item)
    threads = [
        threading.Thread(target=run.worker, args=(work,), name=f"judge-{t}", daemon=True)
        for t in range(min(concurrency, max(1, len(todo))))
    ]
    for t in threads:
        t.start()
    try:
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=0.1)
                prog.update(*run.progress())
    except BaseException:  # Ctrl-C, SIGTERM (the CLI raises it) or a bug: stop the calls in flight
        with run.lock:
            run.abort = True
        cancel = getattr(run.judge, "cancel", None)
        if callable(cancel):
            cancel()
        end = time.monotonic() + _INTERRUPT_GRACE
        for t in threads:  # daemon threads: whatever still runs after the grace ends with the process
            t.join(timeout=max(0.0, end - time.monotonic()))
        raise
    finally:
        prog.update(*run.progress(), force=True)
        prog.close()


def _parse_answers(answers: Sequence[Optional[str]], parse: Optional[Callable[[str], Any]]) -> Tuple[List[Any], int]:
    """Each answer through ``parse``: the values and how many were unparseable."""
    parsed: List[Any] = []
    unparseable = 0
    for a in answers:
        if a is None:
            parsed.append(None)
        elif parse is None:
            parsed.append(a)
        else:
            try:
                parsed.append(parse(a))
            except UnparseableAnswer as exc:
                parsed.append(exc.fallback)
                unparseable += 1
    return parsed, unparseable


def run_judge(
    judge: Judge,
    prompts: Sequence[str],
    *,
    params: Optional[Mapping[str, Any]] = None,
    parse: Optional[Callable[[str], Any]] = None,
    cache: Optional[JudgeCache] = None,
    concurrency: int = 1,
    retries: int = DEFAULT_RETRIES,
    abort_after: int = DEFAULT_ABORT_AFTER,
    backoff: float = 1.0,
    max_backoff: float = 60.0,
    sleep: Callable[[float], None] = time.sleep,
    progress: Optional[TextIO] = None,
    label: str = "judge",
) -> JudgeResult:
    """Ask ``judge`` every prompt; return answers in input order.

    * Cached answers (same :func:`cache_key`) are not asked again; identical
      prompts in one run are asked once.  Each new answer is appended to
      ``cache`` as soon as it arrives.
    * A :class:`JudgeError` with ``retryable`` set is retried up to
      ``retries`` more times, waiting ``backoff * 2**attempt`` seconds (capped
      at ``max_backoff``; a server's ``Retry-After`` wins when larger) through
      the injectable ``sleep``.  A call that still fails counts in
      ``failures``; its answer is ``None`` and nothing is cached.  Its error
      message is redacted (:func:`redact`) and capped.
    * After ``abort_after`` consecutive failed calls (0 = never) no new call
      is started and :class:`JudgeAborted` is raised once the running ones
      end.  A :class:`~rageval_min.errors.ScoringError` from the judge stops
      the run the same way and is re-raised as is.
    * ``concurrency`` daemon threads call the judge at once; on Ctrl-C the
      judge's calls in flight are cancelled (its ``cancel()``, when it has
      one) and :class:`KeyboardInterrupt` propagates within about a second.
    * ``parse`` turns each answer into a value; raising
      :class:`UnparseableAnswer` stores its ``fallback`` and counts the answer
      as unparseable.
    * A progress line goes to ``progress`` only when it is a terminal.

    The keywords from ``concurrency`` to ``progress`` are the fields of
    :class:`RunnerOptions`; :func:`run_with_options` takes them as one object.
    """
    options = RunnerOptions(concurrency, retries, abort_after, backoff, max_backoff, sleep, progress)
    return run_with_options(judge, prompts, options, params=params, parse=parse, cache=cache, label=label)


def run_with_options(
    judge: Judge,
    prompts: Sequence[str],
    options: RunnerOptions,
    *,
    params: Optional[Mapping[str, Any]] = None,
    parse: Optional[Callable[[str], Any]] = None,
    cache: Optional[JudgeCache] = None,
    label: str = "judge",
    samples: Optional[Sequence[int]] = None,
    ledger: Optional[Ledger] = None,
) -> JudgeResult:
    """:func:`run_judge` with its runner options as one :class:`RunnerOptions`.

    ``samples`` gives each prompt's sample index (``--samples``: its cache key
    is :func:`~rageval_min.judges.cache.sample_key`); ``ledger`` counts the
    answers' usage and keeps the budget (:class:`~rageval_min.judges.accounting.Ledger`):
    a call the budget does not allow is not started, and
    :class:`~rageval_min.judges.accounting.JudgeBudgetExceeded` is raised once
    the calls in flight end.
    """
    options = options.checked()
    run = _Run(judge, prompts, dict(params or {}), cache, options, samples, ledger)
    todo = run.lookup()
    _run_pool(run, todo, options.concurrency, _Progress(options.progress, len(prompts), label))
    if run.fatal:
        raise run.fatal[0]
    if run.budget_stop:
        assert ledger is not None
        missing = sum(1 for a, e in zip(run.answers, run.errors) if a is None and e is None)
        raise JudgeBudgetExceeded(
            f"{ledger.stop_message()}; {missing} prompt(s) not asked; the answers so far are cached: "
            "rerun with a larger budget to resume"
        )
    if run.abort:
        raise JudgeAborted(
            f"judge run aborted after {run.consecutive} consecutive failed calls "
            f"(last: {run.last_error}); answers so far are cached, rerun to resume",
            run.stats(),
        )
    parsed, unparseable = _parse_answers(run.answers, parse)
    return JudgeResult(run.answers, parsed, run.errors, run.stats(unparseable))


class JudgeRunner:
    """A judge plus the runner options chosen on the command line.

    ``runner.run(prompts, params=..., parse=...)`` calls :func:`run_with_options`
    with :attr:`options` and :attr:`cache`; ``runner.stats`` sums every run (a
    family with several judged steps reports one total).  ``templates`` maps a
    step (``""`` for the only one) to the user's template file.
    """

    def __init__(
        self,
        judge: Judge,
        *,
        cache_path: Optional[str] = None,
        options: Optional[RunnerOptions] = None,
        templates: Optional[Mapping[str, str]] = None,
        sampling: Optional[Sampling] = None,
        ledger: Optional[Ledger] = None,
    ) -> None:
        self.judge = judge
        self.cache: Optional[JudgeCache] = JudgeCache(cache_path) if cache_path else None
        self.options = options if options is not None else RunnerOptions()
        self.template_paths: Dict[str, str] = dict(templates or {})
        self.stats = JudgeStats()
        self.sampling = (sampling or Sampling()).checked()
        self.sample_stats = SampleStats(self.sampling.samples)
        self.ledger = ledger if ledger is not None else Ledger(model=getattr(judge, "model", "") or "")
        self._noted = False

    # The options as the attributes they were before :class:`RunnerOptions` held them.
    @property
    def concurrency(self) -> int:
        return self.options.concurrency

    @property
    def retries(self) -> int:
        return self.options.retries

    @property
    def abort_after(self) -> int:
        return self.options.abort_after

    @property
    def progress(self) -> Optional[TextIO]:
        return self.options.progress

    def run(
        self,
        prompts: Sequence[str],
        *,
        params: Optional[Mapping[str, Any]] = None,
        parse: Optional[Callable[[str], Any]] = None,
        label: str = "judge",
        vote: Optional[Callable[[Any], Any]] = None,
        kind: str = "bool",
    ) -> JudgeResult:
        """Ask every prompt (``--samples N`` times when the step gives ``vote``; see :mod:`.sampled`).

        ``vote`` turns a parsed answer into the step's vote of kind ``kind``
        (``bool``, ``number`` or ``label``); a step without it (statements,
        atomic facts) is asked once, whatever ``--samples`` says.
        """
        sampled = vote is not None and self.sampling.samples > 1
        n = self.sampling.samples if sampled else 1
        if sampled and self.sampling.rule.name not in rules_for(kind):
            decide([], kind, self.sampling.rule, self.sampling.tie)  # the usage error, before any call
        asked = [p for p in prompts for _ in range(n)]
        try:
            res = run_with_options(
                self.judge,
                asked,
                self.options,
                params=params,
                parse=None if sampled else parse,
                cache=self.cache,
                label=label,
                samples=[s for _ in prompts for s in range(n)] if sampled else None,
                ledger=self.ledger,
            )
        except JudgeAborted as exc:
            self.stats = JudgeStats(*(a + b for a, b in zip(self.stats, exc.stats)))
            raise
        if sampled:
            assert vote is not None
            res = self._combine(res, n, parse, vote, kind)
        self.stats = JudgeStats(*(a + b for a, b in zip(self.stats, res.stats)))
        return res

    def _combine(
        self, res: JudgeResult, n: int, parse: Optional[Callable[[str], Any]], vote: Callable[[Any], Any], kind: str
    ) -> JudgeResult:
        """The sampled result, one item per prompt (:func:`~rageval_min.judges.sampled.combine_item`)."""
        answers: List[Optional[str]] = []
        parsed: List[Any] = []
        errors: List[Optional[str]] = []
        unparseable = 0
        for start in range(0, len(res.answers), n):
            item = combine_item(
                res.answers[start : start + n],
                res.errors[start : start + n],
                parse=parse,
                vote=vote,
                kind=kind,
                sampling=self.sampling,
                stats=self.sample_stats,
            )
            answers.append(item.answer)
            parsed.append(item.parsed)
            errors.append(item.error)
            unparseable += item.unparseable
        return JudgeResult(answers, parsed, errors, res.stats._replace(unparseable=unparseable))

    def extra_metrics(self) -> Dict[str, Any]:
        """The sampling metrics (with ``--samples`` > 1) and the usage metrics (:meth:`Ledger.metrics`)."""
        out: Dict[str, Any] = {}
        if self.sampling.samples > 1:
            out.update(self.sample_stats.metrics())
        out.update(self.ledger.metrics())
        return out

    def template(self, step: str, builtin: "PromptTemplate") -> "PromptTemplate":
        """The template for ``step``: the user's file if one was given, else ``builtin``."""
        path = self.template_paths.get(step)
        if path is None:
            path = self.template_paths.get("")
        if path is None:
            return builtin
        return PromptTemplate.from_file(path, builtin.fields, step=step)

    def signature_params(self, templates: Mapping[str, "PromptTemplate"]) -> List[Tuple[str, object]]:
        """``judge_model`` and ``judge_template`` for a family's signature."""
        return [
            ("judge_model", getattr(self.judge, "model", "") or "none"),
            ("judge_template", template_signature(templates)),
        ]

    def close(self) -> None:
        """Close the cache; say once on the progress stream how many counted answers this run did not pay."""
        if self.cache is not None:
            self.cache.close()
        note = self.ledger.note()
        stream = self.options.progress
        if note is not None and stream is not None and not self._noted:
            self._noted = True
            stream.write(f"rageval-min: note: {note}\n")
