"""Pipeline step: the declarations of the judge statistics that sampling and usage add to a judge command's report.

Every judge command appends :data:`TRUST_METRICS` to its own judge statistics
(``judge_calls``, ...), so gates, ``compare`` and ``--help`` know each name and
its direction.  The sampling ones are reported with ``--samples N`` > 1; the
usage ones when any answer reported usage or a price table or budget was
given; ``judge_cost`` only with ``--price-table``.
"""

from .._metrics import Metric

__all__ = ["SAMPLING_METRICS", "TRUST_METRICS", "TRUST_METRIC_NAMES", "USAGE_METRICS"]

SAMPLING_METRICS = (
    Metric("judge_samples", "neither", "count", "samples asked per judged item (--samples)"),
    Metric(
        "judge_self_consistency",
        "higher",
        "rate",
        "items whose samples all agree / items with two or more votes",
        lo=0.0,
        hi=1.0,
    ),
    Metric(
        "judge_flip_rate",
        "lower",
        "rate",
        "items whose first sample disagrees with the pass rule's verdict / items with a verdict",
        lo=0.0,
        hi=1.0,
    ),
    Metric("judge_undetermined", "lower", "count", "items whose samples tie with --tie undetermined (or labels tie)"),
)

USAGE_METRICS = (
    Metric("judge_prompt_tokens", "lower", "count", "prompt tokens of the answers used (cached tokens included)"),
    Metric("judge_completion_tokens", "lower", "count", "completion tokens of the answers used"),
    Metric("judge_cached_tokens", "neither", "count", "prompt tokens the server read from its prompt cache"),
    Metric("judge_usage_missing", "lower", "count", "answers without usage (counted here, not as zero tokens)"),
    Metric("judge_cost", "lower", "statistic", "US dollars of the answers used, at the --price-table prices"),
)

TRUST_METRICS = SAMPLING_METRICS + USAGE_METRICS
TRUST_METRIC_NAMES = tuple(m.name for m in TRUST_METRICS)
