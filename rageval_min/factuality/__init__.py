"""Long-form factuality: SAFE F1@K, FActScore, VeriScore and correlations.

The public face of the factuality family: every name below is importable as
``rageval_min.factuality.NAME``.  User documentation: ``docs/factuality.md``.

The family follows the contract of ``docs/adding-a-family.md``: per scoring
command (``f1k``, ``safe``, ``factscore``, ``veriscore``, ``correlate``) an item
scorer (``<command>_item``), a registered accumulator with exact merges and a
file-level function (``<command>_file``).  One module per upstream reference:

* ``metric_utils`` -- SAFE's ``eval/metric_utils.py`` (F1@K; ``f1k``);
* ``safe`` -- SAFE's ``eval/run_eval.py`` aggregation (``safe``);
* ``correlation`` -- SAFE's ``eval/correlation_vs_factscore.py`` (``correlate``),
  with ``scipy_stats`` for scipy 1.12's ``pearsonr`` / ``spearmanr``;
* ``factscorer`` -- FActScore's ``FactScorer.get_score`` (``factscore``);
* ``veriscore_metric`` -- VeriScore's per-domain K and F1@K (``veriscore``);
* ``judge`` -- a search-free SAFE rater (``judge``);

and the pipeline steps ``bootstrap`` (K rules, bootstrap intervals),
``accumulators`` (the SAFE commands' states), ``formats`` (the ``jsonl`` and
``safe`` report formats), ``_common`` (names, variants, signature), ``cli``
(the command line) and ``charts`` (the HTML section).
"""

from .._stats import betainc, np_mean, np_std, np_sum
from ._common import (
    COMMAND_VARIANTS,
    DEFAULT_MAX_CLAIMS,
    FAMILY,
    IRRELEVANT_LABEL,
    NOT_SUPPORTED_LABEL,
    REF_FACTSCORE,
    REF_SAFE,
    REF_VERISCORE,
    REFERENCE,
    REFERENCES,
    SUPPORTED_LABEL,
    VARIANTS,
    check_variants,
    parse_number,
    record_name,
    signature,
)
from .accumulators import JUDGE_COUNTS, F1kAccumulator, JudgeAccumulator, SafeAccumulator
from .bootstrap import (
    MAX_BOOTSTRAP,
    Bootstrap,
    BootstrapCI,
    bootstrap_mean_ci,
    check_bootstrap,
    k_rule_param,
    parse_max_claims,
    select_k,
)
from .correlation import (
    CORRELATE_MODES,
    CorrelateAccumulator,
    StudyResult,
    correlate_file,
    correlate_item,
    correlate_table_file,
    correlation_study,
    labeled_files,
    study_file,
    study_metrics_human,
    study_metrics_safe,
)
from .factscorer import (
    FactScoreAccumulator,
    FactScoreResult,
    factscore,
    factscore_file,
    factscore_item,
    human_label_counts,
    labeled_decisions,
    length_penalty,
)
from .formats import REPORT_FORMATS, gate_trailer, render_jsonl, render_safe
from .metric_utils import F1AtK, calculate_metrics, f1_at_k, f1k_file, f1k_item, f1k_output_line, round_to_sigfigs
from .safe import (
    SafeEvalResult,
    count_labels,
    dumps_reference,
    run_eval_aggregate,
    safe_evaluate,
    safe_file,
    safe_items,
)
from .scipy_stats import CorrelationResult, pearson, pearson_tolerance, spearman
from .veriscore_metric import (
    VeriScoreAccumulator,
    VeriScoreResult,
    VeriScoreRow,
    veriscore,
    veriscore_f1,
    veriscore_file,
    veriscore_item,
    veriscore_k,
)

__all__ = [
    "Bootstrap",
    "BootstrapCI",
    "COMMAND_VARIANTS",
    "CORRELATE_MODES",
    "CorrelateAccumulator",
    "CorrelationResult",
    "DEFAULT_MAX_CLAIMS",
    "F1AtK",
    "F1kAccumulator",
    "FAMILY",
    "FactScoreAccumulator",
    "FactScoreResult",
    "IRRELEVANT_LABEL",
    "JUDGE_COUNTS",
    "JudgeAccumulator",
    "MAX_BOOTSTRAP",
    "NOT_SUPPORTED_LABEL",
    "REFERENCE",
    "REFERENCES",
    "REF_FACTSCORE",
    "REF_SAFE",
    "REF_VERISCORE",
    "REPORT_FORMATS",
    "SUPPORTED_LABEL",
    "SafeAccumulator",
    "SafeEvalResult",
    "StudyResult",
    "VARIANTS",
    "VeriScoreAccumulator",
    "VeriScoreResult",
    "VeriScoreRow",
    "betainc",
    "bootstrap_mean_ci",
    "calculate_metrics",
    "check_bootstrap",
    "check_variants",
    "correlate_file",
    "correlate_item",
    "correlate_table_file",
    "correlation_study",
    "count_labels",
    "dumps_reference",
    "f1_at_k",
    "f1k_file",
    "f1k_item",
    "f1k_output_line",
    "factscore",
    "factscore_file",
    "factscore_item",
    "gate_trailer",
    "human_label_counts",
    "k_rule_param",
    "labeled_decisions",
    "labeled_files",
    "length_penalty",
    "np_mean",
    "np_std",
    "np_sum",
    "parse_max_claims",
    "parse_number",
    "pearson",
    "pearson_tolerance",
    "record_name",
    "render_jsonl",
    "render_safe",
    "round_to_sigfigs",
    "run_eval_aggregate",
    "safe_evaluate",
    "safe_file",
    "safe_items",
    "select_k",
    "signature",
    "spearman",
    "study_file",
    "study_metrics_human",
    "study_metrics_safe",
    "veriscore",
    "veriscore_f1",
    "veriscore_file",
    "veriscore_item",
    "veriscore_k",
]
