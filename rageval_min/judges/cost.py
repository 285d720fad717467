"""Pipeline step: token usage of judge answers and what they cost, from a price table the user keeps.

Two answer shapes are understood, as the servers return them:

* OpenAI-compatible (chat completions): ``usage.prompt_tokens`` (cached tokens
  included), ``usage.completion_tokens`` and, when present,
  ``usage.prompt_tokens_details.cached_tokens``;
* Anthropic (messages): ``usage.input_tokens`` (cached tokens *not*
  included), ``usage.output_tokens``, ``usage.cache_read_input_tokens`` and
  ``usage.cache_creation_input_tokens``.

Both become one :class:`Usage` whose buckets do not overlap: ``uncached``
prompt tokens, ``cached`` (cache reads), ``cache_write`` (cache creation) and
``completion``.  An answer without ``usage`` gives ``None``: it is counted as
*missing*, never as zero tokens (:class:`UsageTotals`).

Prices are never shipped: a price table is a JSON object the user writes,
``{"models": {"<model>": {"prompt": P, "completion": C, "cached": R,
"cache_write": W}}}``, each price in US dollars per 1,000,000 tokens.  Numbers
are read as decimals (``json`` with ``parse_float=Decimal``; strings such as
``"0.15"`` are accepted too), and costs are computed with
:class:`fractions.Fraction`, so sums are exact; rounding happens once, when a
cost is shown (:func:`format_usd`: exact to 10 decimal places, rounded half-even)
or turned into the float of a gate (``float(Fraction)``, correctly rounded).
"""

import json
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Dict, Mapping, NamedTuple, Optional

from .._io import read_text
from .._numbers import MAX_DECIMAL_EXPONENT, decimal_fault
from ..errors import ScoringError

__all__ = [
    "PRICE_FIELDS",
    "PER_TOKENS",
    "Usage",
    "UsageTotals",
    "cost",
    "extract_usage",
    "format_usd",
    "load_price_table",
    "parse_price_table",
]

#: Prices are per this many tokens.
PER_TOKENS = 1_000_000
#: The price of each usage bucket, by its name in the price table.
PRICE_FIELDS = ("prompt", "completion", "cached", "cache_write")

PriceTable = Dict[str, Dict[str, Fraction]]


class Usage(NamedTuple):
    """The tokens of one answer, in non-overlapping buckets."""

    uncached: int
    cached: int
    cache_write: int
    completion: int
    shape: str

    @property
    def prompt(self) -> int:
        """All prompt tokens: uncached + cached + cache_write (OpenAI's ``prompt_tokens``)."""
        return self.uncached + self.cached + self.cache_write


def _count(usage: Mapping[str, Any], *path: str) -> Optional[int]:
    value: Any = usage
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ScoringError(f"usage.{'.'.join(path)}: expected a token count (integer >= 0), got {value!r}")
    return value


def extract_usage(answer: Mapping[str, Any]) -> Optional[Usage]:
    """The :class:`Usage` of one server answer (the parsed JSON body), or ``None`` without ``usage``.

    The shape is Anthropic's when ``usage`` holds ``input_tokens``, OpenAI's when
    it holds ``prompt_tokens``; a ``usage`` with neither counts as missing.  An
    absent cache field is 0 cached tokens (the server reported usage, with no
    cache).  OpenAI cached tokens larger than ``prompt_tokens`` are an error.

    >>> extract_usage({"usage": {"prompt_tokens": 120, "completion_tokens": 8,
    ...                          "prompt_tokens_details": {"cached_tokens": 100}}})
    Usage(uncached=20, cached=100, cache_write=0, completion=8, shape='openai')
    >>> extract_usage({"usage": {"input_tokens": 20, "output_tokens": 8, "cache_read_input_tokens": 100,
    ...                          "cache_creation_input_tokens": 5}}).prompt
    125
    >>> extract_usage({"choices": []}) is None
    True
    """
    usage = answer.get("usage") if isinstance(answer, Mapping) else None
    if not isinstance(usage, Mapping):
        return None
    if "input_tokens" in usage:
        uncached = _count(usage, "input_tokens")
        output = _count(usage, "output_tokens")
        if uncached is None or output is None:
            return None
        read = _count(usage, "cache_read_input_tokens") or 0
        write = _count(usage, "cache_creation_input_tokens") or 0
        return Usage(uncached, read, write, output, "anthropic")
    if "prompt_tokens" in usage:
        prompt = _count(usage, "prompt_tokens")
        completion = _count(usage, "completion_tokens")
        if prompt is None or completion is None:
            return None
        cached = _count(usage, "prompt_tokens_details", "cached_tokens") or 0
        if cached > prompt:
            raise ScoringError(f"usage: cached_tokens {cached} exceed prompt_tokens {prompt}")
        return Usage(prompt - cached, cached, 0, completion, "openai")
    return None


def _price(value: Any, where: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, str, Decimal)):
        raise ScoringError(f"expected a price (a decimal number), got {value!r}", field=where)
    try:
        d = Decimal(value)
    except InvalidOperation:
        raise ScoringError(f"not a decimal number: {value!r}", field=where) from None
    fault = decimal_fault(d)
    if fault == "size":
        raise ScoringError(
            f"a price of more than {MAX_DECIMAL_EXPONENT} digits either side of the point is not supported", field=where
        )
    if fault is not None:
        raise ScoringError(f"a price must be a finite number >= 0, got {value!r}", field=where)
    return Fraction(d)


def parse_price_table(text: str, *, path: Optional[str] = None) -> PriceTable:
    """A price table (see the module docstring) as exact fractions of a dollar per :data:`PER_TOKENS` tokens.

    >>> t = parse_price_table('{"models": {"m": {"prompt": 0.15, "completion": "0.6"}}}')
    >>> t["m"]["prompt"], t["m"]["completion"]
    (Fraction(3, 20), Fraction(3, 5))
    """
    try:
        data = json.loads(text, parse_float=Decimal)
    except ValueError as exc:
        raise ScoringError(f"price table is not JSON: {exc}", path=path) from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict) or not models:
        raise ScoringError('expected {"models": {"<model>": {"prompt": ..., "completion": ...}}}', path=path)
    out: PriceTable = {}
    for model, prices in models.items():
        if not isinstance(prices, dict):
            raise ScoringError("expected an object of prices", path=path, field=f"models.{model}")
        unknown = [k for k in prices if k not in PRICE_FIELDS]
        if unknown:
            raise ScoringError(
                f"unknown price {unknown[0]!r} (known: {', '.join(PRICE_FIELDS)})", path=path, field=f"models.{model}"
            )
        out[model] = {k: _price(v, f"models.{model}.{k}") for k, v in prices.items()}
    return out


def load_price_table(path: str) -> PriceTable:
    """:func:`parse_price_table` of the file ``path``."""
    return parse_price_table(read_text(path, what="price table"), path=path)


def cost(usage: Usage, model: str, table: Mapping[str, Mapping[str, Fraction]]) -> Fraction:
    """The exact cost in dollars of ``usage`` at ``model``'s prices::

        (uncached * prompt + cached * cached_price + cache_write * write_price
         + completion * completion_price) / 1,000,000

    A bucket with tokens needs its price (a missing one is an error naming the
    model and the price, never a guess); a bucket with no tokens needs none.

    >>> table = parse_price_table('{"models": {"m": {"prompt": 0.15, "completion": 0.6, "cached": 0.075}}}')
    >>> cost(Usage(20, 100, 0, 8, "openai"), "m", table)
    Fraction(153, 10000000)
    """
    prices = table.get(model)
    if prices is None:
        raise ScoringError(f"the price table has no model {model!r}")
    total = Fraction(0)
    for tokens, name in (
        (usage.uncached, "prompt"),
        (usage.cached, "cached"),
        (usage.cache_write, "cache_write"),
        (usage.completion, "completion"),
    ):
        if tokens:
            if name not in prices:
                raise ScoringError(f"the price table has no {name!r} price for model {model!r}")
            total += tokens * prices[name]
    return total / PER_TOKENS


def format_usd(amount: Fraction, places: int = 10) -> str:
    """``amount`` as a decimal string with ``places`` decimals, rounded half-even (exact when it fits).

    >>> format_usd(Fraction(159, 10000000)), format_usd(Fraction(1, 3), 4)
    ('0.0000159000', '0.3333')
    """
    scaled = amount * 10**places
    q = round(scaled)  # Fraction.__round__ rounds half to even
    sign = "-" if q < 0 else ""
    digits = str(abs(q)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}" if places else f"{sign}{digits}"


class UsageTotals:
    """Usage and cost summed over answers; a missing usage is counted, not added as zero.

    >>> t = UsageTotals()
    >>> t.add(Usage(20, 100, 0, 8, "openai")); t.add(None)
    >>> t.metrics()
    {'judge_prompt_tokens': 120, 'judge_completion_tokens': 8, 'judge_cached_tokens': 100, 'judge_usage_missing': 1}
    """

    def __init__(self) -> None:
        self.answers = 0
        self.missing = 0
        self.prompt = 0
        self.completion = 0
        self.cached = 0
        self.cache_write = 0
        self.cost: Optional[Fraction] = None

    def add(
        self, usage: Optional[Usage], *, model: Optional[str] = None, prices: Optional[Mapping[str, Any]] = None
    ) -> None:
        """Count one answer; with ``prices`` (and the answer's ``model``) add its exact cost."""
        self.answers += 1
        if usage is None:
            self.missing += 1
            return
        self.prompt += usage.prompt
        self.completion += usage.completion
        self.cached += usage.cached
        self.cache_write += usage.cache_write
        if prices is not None:
            self.cost = (self.cost or Fraction(0)) + cost(usage, model or "", prices)

    def metrics(self) -> Dict[str, Any]:
        """The gateable totals (``judge_cost`` as a float, present once a cost was added)."""
        out: Dict[str, Any] = {
            "judge_prompt_tokens": self.prompt,
            "judge_completion_tokens": self.completion,
            "judge_cached_tokens": self.cached,
            "judge_usage_missing": self.missing,
        }
        if self.cost is not None:
            out["judge_cost"] = float(self.cost)
        return out
