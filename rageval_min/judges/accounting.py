"""Pipeline step: the token usage and cost of a judged command, and its budget (``--budget-tokens``, ``--budget-usd``).

:class:`Ledger` is shared by every run of one command (a family with several
judged steps keeps one total and one budget):

* **usage**: every answer the command used is counted once per cache key --
  answered now, read from ``--judge-cache`` or replayed -- with the usage
  stored beside it, i.e. what it cost when it was made; an answer without
  usage is counted in ``judge_usage_missing``, never as zero tokens
  (:class:`~rageval_min.judges.cost.UsageTotals`).  :attr:`Ledger.reused`
  says how many of them were not paid by this run.
* **budget**: only the calls made now spend it.  Before each call the runner
  asks :meth:`Ledger.reserve`: the call starts only when the tokens (or
  dollars) spent, plus those reserved by the calls in flight, plus this call's
  estimate stay within the budget.  The estimate of a call is the largest cost
  of one answer seen so far (in the cache or this run); while no answer's
  usage is known the calls run one at a time, so each is counted before the
  next one is estimated (the first call starts when anything of the budget is
  left, so ``--budget-tokens 0`` makes no call).  A call larger than every
  answer before it can still go over the budget: no tokenizer is shipped, so a
  call's size is not known before it is made.  Tokens are prompt plus completion tokens (cached prompt
  tokens included); dollars are :func:`~rageval_min.judges.cost.cost` at the
  price table's prices.  A live answer without usage stops a budgeted run:
  the budget could not be kept.
"""

import threading
from fractions import Fraction
from typing import Any, Dict, Mapping, Optional, Union

from ..errors import ScoringError
from .cost import Usage, UsageTotals, cost, extract_usage, format_usd

__all__ = ["JudgeBudgetExceeded", "Ledger"]

Amount = Union[int, Fraction]


class JudgeBudgetExceeded(ScoringError):
    """The next call would go over ``--budget-tokens`` / ``--budget-usd``; everything answered is cached."""


def _usage(raw: Any) -> Optional[Usage]:
    try:
        return extract_usage({"usage": raw}) if isinstance(raw, Mapping) else None
    except ScoringError:  # counts a server sent that are not token counts: no usable usage
        return None


class Ledger:
    """Usage totals and the budget of one command (thread-safe)."""

    def __init__(
        self,
        *,
        model: str = "",
        prices: Optional[Mapping[str, Mapping[str, Fraction]]] = None,
        budget_tokens: Optional[int] = None,
        budget_usd: Optional[Fraction] = None,
        always: bool = False,
    ) -> None:
        self.model = model
        self.prices = prices
        self.budget_tokens = budget_tokens
        self.budget_usd = budget_usd
        self.always = always or prices is not None or self.budgeted
        self.totals = UsageTotals()
        self.reused = 0
        self.seen = False  # any answer with usage
        self.spent: Amount = 0 if budget_usd is None else Fraction(0)
        self.live = 0
        self.reserved: Amount = 0
        self.estimate: Optional[Amount] = None
        self.in_flight = 0
        self.stopped: Optional[str] = None  # why no further call may start
        self._next: Amount = 0
        self._cond = threading.Condition()

    @property
    def budgeted(self) -> bool:
        return self.budget_tokens is not None or self.budget_usd is not None

    def _amount(self, usage: Usage) -> Amount:
        if self.budget_usd is not None:
            return cost(usage, self.model, self.prices or {})
        return usage.prompt + usage.completion

    def count(self, raw: Any, *, fresh: bool) -> None:
        """Count one answer used by the command (``fresh``: made by a call of this run)."""
        usage = _usage(raw)
        with self._cond:
            self.totals.add(usage, model=self.model, prices=self.prices)
            if usage is not None:
                self.seen = True
                amount = self._amount(usage) if self.budgeted else 0
                if self.estimate is None or amount > self.estimate:
                    self.estimate = amount
            if not fresh:
                self.reused += 1

    # -- the budget ---------------------------------------------------------
    def _limit(self) -> Amount:
        return self.budget_usd if self.budget_usd is not None else self.budget_tokens  # type: ignore[return-value]

    def _show(self, amount: Amount) -> str:
        return f"${format_usd(Fraction(amount), 6)}" if self.budget_usd is not None else f"{amount} tokens"

    def _name(self) -> str:
        if self.budget_usd is not None:
            return f"--budget-usd {format_usd(self.budget_usd, 6).rstrip('0').rstrip('.')}"
        return f"--budget-tokens {self.budget_tokens}"

    def reserve(self) -> Optional[Amount]:
        """Before a live call: the amount reserved for it, or ``None`` when it may not start (budget reached)."""
        if not self.budgeted:
            return 0
        with self._cond:
            while self.stopped is None and self.estimate is None and self.in_flight > 0:
                self._cond.wait(0.1)  # no usage known yet: one call at a time
            if self.stopped is not None:
                return None
            est = self.estimate if self.estimate is not None else 0
            unknown = self.estimate is None  # the first call: allowed while anything is left
            if (self.spent >= self._limit()) if unknown else (self.spent + self.reserved + est > self._limit()):
                self.stopped = "reached"
                self._next = est
                return None
            self.reserved += est
            self.in_flight += 1
            return est

    def stop_message(self) -> str:
        """Why the run stopped, with what was spent once the calls in flight ended (one line)."""
        with self._cond:
            if self.stopped == "reached":
                return (
                    f"judge budget {self._name()} reached: {self._show(self.spent)} spent by {self.live} call(s), "
                    f"the next call (estimated at {self._show(self._next)}) would exceed it"
                )
            return str(self.stopped)

    def settle(self, reserved: Amount, raw: Any) -> None:
        """After a live call that was answered: spend what it cost, release its reservation."""
        if not self.budgeted:
            return
        usage = _usage(raw)
        with self._cond:
            self.reserved -= reserved
            self.in_flight -= 1
            self.live += 1
            if usage is None:
                if self.stopped is None:
                    self.stopped = (
                        f"judge budget {self._name()}: the judge answered without usage, so it cannot be kept"
                    )
            else:
                self.spent += self._amount(usage)
            self._cond.notify_all()

    def release(self, reserved: Amount) -> None:
        """After a live call that failed: release its reservation (a failed call is not counted)."""
        if not self.budgeted:
            return
        with self._cond:
            self.reserved -= reserved
            self.in_flight -= 1
            self._cond.notify_all()

    def note(self) -> Optional[str]:
        """What to say on stderr when counted answers were not paid by this run (cache or replay)."""
        if self.reused == 0 or not self.metrics():
            return None
        return (
            f"judge usage: {self.reused} of {self.totals.answers} answer(s) came from the cache or a replay; "
            "their tokens (and cost) are what they cost when they were made"
        )

    def metrics(self) -> Dict[str, Any]:
        """The usage metrics, when any answer reported usage or a price table or budget was given; else none."""
        if not (self.seen or self.always):
            return {}
        return self.totals.metrics()
