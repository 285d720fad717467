"""Pipeline step: K selection (``--max-claims median|max|pNN``) and the seeded bootstrap interval of a mean."""

import math
import random
import re
from typing import (
    Any,
    Dict,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from .._numbers import MAX_OPTION_DIGITS, int_text
from .._state_schema import Integer
from .._state_schema import Number as FiniteNumber
from .._stats import np_mean, pairwise_sum
from ..errors import ScoringError
from ._common import (
    _INT_RE,
    Number,
)

_K_RULE = re.compile(r"^p(\d{1,3})$")


def select_k(relevant_counts: Sequence[Number], rule: str) -> int:
    """Choose K from per-response relevant-fact counts (S + NS).

    ``median`` is the **upper** median ``sorted(v)[n // 2]`` (VeriScore's
    convention; the paper's K=64 was "the median number of relevant facts"
    without saying which), ``max`` the maximum, ``pNN`` the nearest-rank
    percentile ``sorted(v)[max(ceil(NN/100 * n), 1) - 1]``.  The result must be
    a positive integer.

    >>> select_k([10, 64, 3, 70], "median"), select_k([10, 64, 3, 70], "max")
    (64, 70)
    >>> select_k([10, 64, 3, 70], "p25")
    3
    """
    if not relevant_counts:
        raise ScoringError("no responses to choose K from", field="max_claims")
    ordered = sorted(relevant_counts)
    n = len(ordered)
    if rule == "median":
        k = ordered[n // 2]
    elif rule == "max":
        k = ordered[-1]
    else:
        match = _K_RULE.match(rule)
        if not match or int(match.group(1)) > 100:
            raise ScoringError(
                f"K rule must be an integer, median, max or pNN (0..100), got {rule!r}",
                field="max_claims",
            )
        pct = int(match.group(1))
        k = ordered[max(int(math.ceil(pct * n / 100.0)), 1) - 1]
    if k != int(k) or k <= 0:
        raise ScoringError(f"rule {rule!r} gives K = {k!r}; K must be a positive integer", field="max_claims")
    return int(k)


class BootstrapCI(NamedTuple):
    """Percentile bootstrap interval for a mean (pairwise-summed resample means)."""

    mean: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    seed: int


def bootstrap_mean_ci(
    values: Sequence[Number],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapCI:
    """Seeded percentile bootstrap CI for the mean.

    ``random.Random(seed)`` draws ``n_resamples`` resamples of size n with
    replacement (``Random.choices``); the bounds are the nearest-rank quantiles
    ``floor(alpha/2 * B)`` and ``ceil((1 - alpha/2) * B) - 1`` of the sorted
    resample means.  Deterministic for a given seed on every Python >= 3.2.
    Empty input gives nan bounds.
    """
    if n_resamples < 1:
        raise ScoringError("must be >= 1", field="bootstrap")
    if not 0.0 < confidence < 1.0:
        raise ScoringError("must be between 0 and 1", field="confidence")
    n = len(values)
    mean = np_mean(values)
    if n == 0:
        return BootstrapCI(mean, math.nan, math.nan, confidence, n_resamples, seed)
    rng = random.Random(seed)
    floats = [float(v) for v in values]
    means = []
    for _ in range(n_resamples):
        means.append(pairwise_sum(rng.choices(floats, k=n), 0, n) / n)
    means.sort()
    alpha = 1.0 - confidence
    lo = int(math.floor(alpha / 2.0 * n_resamples))
    hi = min(int(math.ceil((1.0 - alpha / 2.0) * n_resamples)) - 1, n_resamples - 1)
    return BootstrapCI(mean, means[lo], means[max(hi, lo)], confidence, n_resamples, seed)


#: The K rules ``--max-claims`` names (besides an integer, ``fixed``), as a regular expression.
K_RULE_PATTERN = r"fixed|median|max|p[0-9]{1,3}"


def parse_max_claims(text: Union[str, int], field: str = "max_claims") -> Tuple[Optional[int], str]:
    """A ``--max-claims`` value: ``(K, "fixed")`` for an integer, ``(None, rule)`` for median, max, pNN.

    >>> parse_max_claims("64"), parse_max_claims("p25")
    ((64, 'fixed'), (None, 'p25'))
    """
    raw = str(text).strip()
    if _INT_RE.match(raw):
        k = int_text(raw, MAX_OPTION_DIGITS)  # int() of 5,000 digits raises; far fewer are already absurd
        if k is None:
            raise ScoringError(f"--max-claims: an integer of {len(raw)} digits is too large", field=field)
        return k, "fixed"
    if raw in ("median", "max") or re.match(r"^p\d{1,3}$", raw):
        select_k([1], raw)  # validates pNN <= 100
        return None, raw
    raise ScoringError(f"--max-claims {raw!r}: expected an integer, median, max or pNN", field=field)


def k_rule_param(rule: str) -> str:
    """The signature value of a K rule (``fixed``, ``upper_median_of_S+NS``, ...)."""
    if rule == "median":
        return "upper_median_of_S+NS"
    if rule == "max":
        return "max_of_S+NS"
    if rule.startswith("p"):
        return f"nearest_rank_{rule}_of_S+NS"
    return rule


#: Upper bound of ``--bootstrap`` (resamples); the cost is B times the number of responses.
MAX_BOOTSTRAP = 1_000_000

#: What a partial state's params hold of the :class:`Bootstrap` options (f1k, safe and factscore
#: states alike; see :mod:`rageval_min._state_schema`).
STATE_PARAMS = {
    "bootstrap": Integer(lo=0, hi=MAX_BOOTSTRAP),
    "confidence": FiniteNumber(lo=0, hi=1, exclusive=True),
    "seed": Integer(),
}


class Bootstrap(NamedTuple):
    """The bootstrap options of the factuality commands, as one object.

    ``resamples`` (``--bootstrap``; 0 disables the interval), ``confidence`` and
    ``seed``.  Accumulators keep them as three JSON parameters of their state;
    everything else passes this object.
    """

    resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0

    @classmethod
    def of(cls, params: Mapping[str, Any]) -> "Bootstrap":
        """The options held in an accumulator's parameters."""
        return cls(params["bootstrap"], params["confidence"], params["seed"])

    def checked(self) -> "Bootstrap":
        """These options, if in bounds; else a ScoringError (exit 2)."""
        b, c, seed = self
        if isinstance(b, bool) or not isinstance(b, int) or not 0 <= b <= MAX_BOOTSTRAP:
            raise ScoringError(
                f"--bootstrap must be an integer from 0 (disabled) to {MAX_BOOTSTRAP}, got {b!r}", field="bootstrap"
            )
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0.0 < c < 1.0:
            raise ScoringError(f"--confidence must be a number between 0 and 1, got {c!r}", field="confidence")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ScoringError(f"--seed must be an integer, got {seed!r}", field="seed")
        return self

    def signature_params(self) -> List[Tuple[str, object]]:
        """The options as signature parameters, in their fixed order."""
        return [("bootstrap", self.resamples), ("confidence", self.confidence), ("seed", self.seed)]

    def interval(self, values: Sequence[Number], with_ci: bool) -> BootstrapCI:
        """The mean's interval (NaN bounds when disabled or when it is neither written nor gated)."""
        if self.resamples == 0 or not with_ci:
            return BootstrapCI(np_mean(values), math.nan, math.nan, self.confidence, self.resamples, self.seed)
        return bootstrap_mean_ci(values, n_resamples=self.resamples, confidence=self.confidence, seed=self.seed)


def check_bootstrap(bootstrap: Any, confidence: Any, seed: Any) -> None:
    """Bounds of the bootstrap options (a ScoringError, exit 2, otherwise)."""
    Bootstrap(bootstrap, confidence, seed).checked()


def _ci_dict(ci: BootstrapCI) -> Dict[str, Any]:
    return {"confidence": ci.confidence, "low": ci.low, "high": ci.high, "n_resamples": ci.n_resamples, "seed": ci.seed}
