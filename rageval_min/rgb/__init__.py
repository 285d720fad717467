"""RGB (Retrieval-Augmented Generation Benchmark): answer labels, robustness rates, document mixing.

The public face of the rgb family: every name below is importable as
``rageval_min.rgb.NAME``.  Inside, one module per upstream reference or step:

``evalue``
    ``chen700564/RGB@65ec39e:evalue.py``: mixing, labels, the score object, file names;
``reject_evalue`` / ``fact_evalue``
    ``reject_evalue.py`` (Rej*) and ``fact_evalue.py`` (ED*, CR): judge prompts, verdicts,
    the judged score objects;
``judged``
    the judged item rows (``rgb score --judged``);
``accumulators``
    the counters of ``rgb score`` and ``rgb judge``;
``files``
    ``rgb mix``, ``rgb label``, ``rgb score`` over files;
``judge``
    the judge orchestration of ``rgb judge``;
``abilities``
    ``rgb report``: the four abilities;
``_common``
    the helpers they share.
"""

from ._common import (
    FAMILY,
    JUDGED,
    REF,
    REFERENCE,
    VARIANTS,
    InstanceSkipped,
    check_variants,
    dataset_branch,
    result_metrics,
    signature,
    template_id,
)
from .abilities import (
    REPORT_FORMATS,
    STDOUT_SUFFIX,
    abilities_table,
    ability_rows,
    format_abilities,
    report_files,
    report_metric_names,
    report_runs,
)
from .accumulators import (
    JudgeAccumulator,
    ScoreAccumulator,
    score,
)
from .evalue import (
    BUILTIN_ANSWER_INSTRUCTION,
    BUILTIN_ANSWER_SYSTEM,
    DEFAULT_SEED,
    FACT_KEYWORDS,
    REJECT_KEYWORDS,
    Label,
    RunName,
    Scores,
    build_answer_prompt,
    check_answer,
    format_result_json,
    format_result_text,
    ground_truth_of,
    has_fact_flag,
    is_rejection,
    label_prediction,
    label_row,
    mix_documents,
    normalize_prediction,
    parse_prediction_filename,
    skipped_row,
    validate_stored_label,
)
from .fact_evalue import (
    BUILTIN_FACT_TEMPLATE,
    FactJudgeScores,
    build_fact_judge_prompt,
    parse_fact_judgement,
)
from .files import (
    StepSummary,
    check_noise_rate,
    label_file,
    label_records,
    labelled_record,
    mix_file,
    read_records,
    resolve_dataset,
    resolve_noise_rate,
    score_file,
    score_item,
)
from .judge import (
    judge_prompts_file,
    score_judged_records,
)
from .judged import (
    judged_row,
    score_fact_judged,
    score_reject_judged,
)
from .reject_evalue import (
    BUILTIN_REJECT_TEMPLATE,
    RejectJudgeScores,
    build_reject_judge_prompt,
    parse_reject_judgement,
)

__all__ = [
    "BUILTIN_ANSWER_INSTRUCTION",
    "BUILTIN_ANSWER_SYSTEM",
    "BUILTIN_FACT_TEMPLATE",
    "BUILTIN_REJECT_TEMPLATE",
    "DEFAULT_SEED",
    "FACT_KEYWORDS",
    "FAMILY",
    "FactJudgeScores",
    "InstanceSkipped",
    "JUDGED",
    "JudgeAccumulator",
    "Label",
    "REF",
    "REFERENCE",
    "REJECT_KEYWORDS",
    "REPORT_FORMATS",
    "RejectJudgeScores",
    "RunName",
    "STDOUT_SUFFIX",
    "ScoreAccumulator",
    "Scores",
    "StepSummary",
    "VARIANTS",
    "abilities_table",
    "ability_rows",
    "build_answer_prompt",
    "build_fact_judge_prompt",
    "build_reject_judge_prompt",
    "check_answer",
    "check_noise_rate",
    "check_variants",
    "dataset_branch",
    "format_abilities",
    "format_result_json",
    "format_result_text",
    "ground_truth_of",
    "has_fact_flag",
    "is_rejection",
    "judge_prompts_file",
    "judged_row",
    "label_file",
    "label_prediction",
    "label_records",
    "label_row",
    "labelled_record",
    "mix_documents",
    "mix_file",
    "normalize_prediction",
    "parse_fact_judgement",
    "parse_prediction_filename",
    "parse_reject_judgement",
    "read_records",
    "report_files",
    "report_metric_names",
    "report_runs",
    "resolve_dataset",
    "resolve_noise_rate",
    "result_metrics",
    "score",
    "score_fact_judged",
    "score_file",
    "score_item",
    "score_judged_records",
    "score_reject_judged",
    "signature",
    "skipped_row",
    "template_id",
    "validate_stored_label",
]
