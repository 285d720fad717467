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
from .cache import JudgeCache, _sha256, cache_key
from .interface import (
    DEFAULT_ABORT_AFTER,
    DEFAULT_RETRIES,
    MAX_CONCURRENCY,
    MAX_RETRIES,
    Judge,
    JudgeAborted,
    JudgeError,
    JudgeResult,
    JudgeStats,
    UnparseableAnswer,
    _env_secrets,
    redact,
)
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
    ) -> None:
        self.judge = judge
        self.prompts = prompts
        self.params = params
        self.cache = cache
        self.options = options
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
        self.last_error = ""
        self.fatal: List[BaseException] = []

    # -- step 1: cache lookup ------------------------------------------------
    def lookup(self) -> Dict[str, List[int]]:
        """Fill answers from the cache; return the prompts still to ask, by key (duplicates asked once)."""
        todo: Dict[str, List[int]] = {}
        for i, prompt in enumerate(self.prompts):
            if not isinstance(prompt, str):
                raise ScoringError(f"prompt {i + 1} is {type(prompt).__name__}, not a string")
            key = cache_key(self.identity, self.model, self.params, prompt)
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is not None:
                self.answers[i] = hit
                self.cache_hits += 1
            elif key in todo:
                todo[key].append(i)
                self.cache_hits += 1
            else:
                todo[key] = [i]
        self.done = len(self.prompts) - sum(len(idx) for idx in todo.values())
        return todo

    # -- step 2: one call, with retries and backoff ---------------------------
    def call(self, prompt: str) -> str:
        attempt = 0
        while True:
            try:
                return self.judge(prompt, self.params)
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

    def answered(self, key: str, idx: List[int], answer: str) -> None:
        if self.use_cache:
            assert self.cache is not None
            prompt = self.prompts[idx[0]]
            record = {
                "judge": self.identity,
                "model": self.model,
                "params": self.params,
                "prompt_sha256": _sha256(prompt),
                "answer": answer,
            }
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
            with self.lock:
                self.calls += 1
            try:
                answer = self.call(self.prompts[idx[0]])
            except JudgeError as exc:
                self.failed(idx, exc)
                continue
            except BaseException as exc:  # ScoringError and anything unexpected stop the run
                self.stop(exc)
                return
            try:
                self.answered(key, idx, answer)
            except BaseException as exc:  # the cache cannot be written
                self.stop(exc)
                return

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
    except KeyboardInterrupt:
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
) -> JudgeResult:
    """:func:`run_judge` with its runner options as one :class:`RunnerOptions`."""
    options = options.checked()
    run = _Run(judge, prompts, dict(params or {}), cache, options)
    todo = run.lookup()
    _run_pool(run, todo, options.concurrency, _Progress(options.progress, len(prompts), label))
    if run.fatal:
        raise run.fatal[0]
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
    ) -> None:
        self.judge = judge
        self.cache: Optional[JudgeCache] = JudgeCache(cache_path) if cache_path else None
        self.options = options if options is not None else RunnerOptions()
        self.template_paths: Dict[str, str] = dict(templates or {})
        self.stats = JudgeStats()

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
    ) -> JudgeResult:
        try:
            res = run_with_options(
                self.judge, prompts, self.options, params=params, parse=parse, cache=self.cache, label=label
            )
        except JudgeAborted as exc:
            self.stats = JudgeStats(*(a + b for a, b in zip(self.stats, exc.stats)))
            raise
        self.stats = JudgeStats(*(a + b for a, b in zip(self.stats, res.stats)))
        return res

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
        if self.cache is not None:
            self.cache.close()
