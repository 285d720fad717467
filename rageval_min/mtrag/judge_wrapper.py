"""Mirrors IBM/mt-rag-benchmark@cc5b1d4:scripts/evaluation/judge_wrapper.py: parsers of the judges' answers.

Pure functions (no judge is called here: the prompts and calls are :mod:`rageval_min.mtrag.judge`),
and the ``judge`` step's item rows and accumulator.
"""

import json
import math
import re
from typing import (
    Any,
    List,
    Mapping,
    Optional,
    Sequence,
    Union,
)

from .._contract import ItemRow, register_accumulator
from .._metrics import Input, InputField, Metric
from .._state_schema import Count, Fields, Items, Schema, Table, Text
from ..errors import ScoringError
from ..judges.stats_metrics import TRUST_METRICS
from ..report import Report
from ._common import (
    ANSWERABILITY_FIELDS,
    FAMILY,
    MODEL_FIELD,
    OUTPUT_STATE,
    RECORDS_METRIC,
    TASK_ID_FIELD,
    ExactMean,
    Number,
    _MeansAccumulator,
    _model,
    _task_id,
    answerability_group,
    answerability_of,
    exact_mean_state,
    signature,
)

__all__ = [
    "JudgeAccumulator",
    "extract_rating",
    "first_token_idk",
    "judge_item",
    "median_rating",
    "parse_underspecified",
    "rating_text",
    "underspecified_json",
]

_FIRST_WORD = re.compile(r"\s*([A-Za-z]+)")


def first_token_idk(text: Any) -> Union[int, float, str, None]:
    """Parse an IDK judge output into ``idk_eval``.

    The first ASCII-alphabetic run after optional whitespace (``re.match``), lowercased:
    ``yes`` -> ``1``, ``no`` -> ``0``, **any other word** (including ``partial``) -> ``0.5``;
    no match (output starts with a quote, ``*``, digit, bracket ...) -> the string
    ``"unknown"``; a non-string -> ``None``.

    >>> [first_token_idk(t) for t in ["Yes.", " no", "Partial", "maybe", '"yes"', None]]
    [1, 0, 0.5, 0.5, 'unknown', None]
    """
    if not isinstance(text, str):
        return None
    match = _FIRST_WORD.match(text)
    if match is None:
        return "unknown"
    word = match.group(1).lower()
    if word == "yes":
        return 1
    if word == "no":
        return 0
    return 0.5


_FENCED_JSON = re.compile(r"```json\s*(.*?)\s*```", re.DOTALL)
_FIRST_OBJECT = re.compile(r"\{\s*(.*?)\s*\}", re.DOTALL)
_BAD_ESCAPE = re.compile(r"\\(?![\"\\/bfnrt]|u[0-9a-fA-F]{4})")


def underspecified_json(text: Any) -> Optional[str]:
    r"""The JSON text the underspecified parser reads (``extract_and_format_json``), None when nothing matches.

    If ```` ```json ```` occurs anywhere, only the fenced pattern
    ```` ```json\s*(.*?)\s*``` ```` is searched (an opening fence without a
    closing one is no match; there is no fallback to braces); otherwise
    ``\{\s*(.*?)\s*\}`` (non-greedy, up to the first ``}``).  Group 1 loses
    its invalid backslash escapes, then gets ``{`` prepended only if it does not
    start with ``{`` and ``}`` appended only if it does not end with ``}``.

    >>> underspecified_json('{{"decision": "yes"}}')
    '{"decision": "yes"}'
    >>> underspecified_json('```json\n{"decision": "no"}') is None
    True
    """
    if not isinstance(text, str):
        return None
    pattern = _FENCED_JSON if "```json" in text else _FIRST_OBJECT
    match = pattern.search(text)
    if match is None:
        return None
    body = _BAD_ESCAPE.sub("", match.group(1))
    if not body.startswith("{"):
        body = "{" + body
    if not body.endswith("}"):
        body = body + "}"
    return body


def parse_underspecified(text: Any) -> Number:
    r"""Parse an underspecified judge output into ``underspecified_eval`` (spec 11).

    :func:`underspecified_json`, then ``json.loads``; the ``decision`` is
    lower-cased: ``yes`` -> ``1``, ``no`` -> ``0``, any other string -> ``0.5``.
    No match, invalid JSON, a non-object or a non-string decision -> ``0.5``
    (the reference maps every exception to 0.5).

    >>> parse_underspecified('{"decision": "yes", "explanation": "x"}')
    1
    >>> parse_underspecified('```json\n{"decision": "NO"}\n```')
    0
    >>> parse_underspecified('{{"decision": "Yes"}}'), parse_underspecified('```json {"decision": "yes"}')
    (1, 0.5)
    >>> parse_underspecified("no json here")
    0.5
    """
    body = underspecified_json(text)
    if body is None:
        return 0.5
    try:
        data = json.loads(body)
        decision = data.get("decision", "").lower()
    except Exception:  # the reference maps every failure to 0.5
        return 0.5
    if decision == "yes":
        return 1
    if decision == "no":
        return 0
    return 0.5


_FOR_EXAMPLE = re.compile(r"for example:.*?$", re.IGNORECASE | re.MULTILINE)
_RATING_PATTERNS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"Rating: \[\[(\d+)\]\]",
        r"Rating: (\d+)",
        r"\[\[(\d+)\]\]",
        r"\[(\d+)\]",
        r"Rating: \[\[([0-9]*\.?[0-9]+)\]\]",
        r"Overall Rating: ([0-9]*\.?[0-9]+)",
        r"Score: ([0-9]*\.?[0-9]+)/10",
        r"Score: ([0-9]*\.?[0-9]+)",
        r"\[Rating\]\n(\d+)",
        r"Rating: \[\[(\d+)/10\]\]",
        r"Rating: \[\[([-+]?\d*\.?\d+)",
        r"([-+]?\d*\.?\d+) out of 10",
    )
)


def rating_text(text: str) -> Optional[str]:
    """The number :func:`extract_rating` reads (the last matching pattern's first match), None if none matches.

    >>> rating_text("Rating: [[8]] but 6 out of 10"), rating_text("nothing")
    ('6', None)
    """
    text = _FOR_EXAMPLE.sub("", text)
    found: Optional[str] = None
    for pattern in _RATING_PATTERNS:
        match = pattern.search(text)
        if match is not None:
            found = match.group(1)
    return found


def extract_rating(text: str) -> float:
    """Parse one RB_llm judge output into a score in (0, 1].

    Delete ``for example:.*?$`` (IGNORECASE, MULTILINE); try 12 patterns in order, each
    taking its first match, and **the last pattern that matches wins**; the value is
    ``float(match) / 10``.  No match, or a value ``<= 0`` or ``> 1``, gives ``0.5``.

    >>> extract_rating("Good answer. Rating: [[8]]")
    0.8
    >>> extract_rating("I'd say 7 out of 10. Rating: [[9]]")
    0.7
    >>> extract_rating("Rating: [[0]]"), extract_rating("nothing")
    (0.5, 0.5)
    """
    if not isinstance(text, str):
        raise ScoringError("judge output is not a string", field="RB_llm")
    found = rating_text(text)
    if found is None:
        return 0.5
    value = float(found) / 10
    if value <= 0 or value > 1:
        return 0.5
    return value


def median_rating(values: Sequence[float]) -> float:
    """``RB_llm`` across judges: ``np.median`` (mean of the two middle values for an even
    count, computed as ``(a + b) / 2``).

    >>> median_rating([0.9, 0.8, 0.7, 1.0])
    0.8500000000000001
    """
    if not values:
        raise ScoringError("no judge ratings", field="RB_llm")
    ordered = sorted(float(v) for v in values)
    n = len(ordered)
    mid = n // 2
    if n % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


#: ``mtrag judge`` steps and the metric each writes, in the reference pipeline's order
#: (``run_generation_eval.py``: underspecified judge, IDK judge, RAGAS, RADBench).
JUDGE_METRICS = {"underspecified": "underspecified_eval", "idk": "idk_eval", "rl_f": "RL_F", "rb_llm": "RB_llm"}
#: The judged metrics that are built as pandas columns of 0 / 0.5 / 1 (see :class:`ColumnTypes`).
JUDGE_COLUMNS = ("underspecified_eval", "idk_eval")


def judge_item(record: Mapping[str, Any], *, steps: Sequence[str]) -> ItemRow:
    """The ``judge`` item row of a judged record: ``task_id``, the first value of each step's metric
    (as judged: ``"unknown"`` and None stay), ``group``, ``model``.

    >>> judge_item({"task_id": "t", "metrics": {"idk_eval": ["unknown"], "RB_llm": [0.8]}}, steps=["idk", "rb_llm"])
    {'task_id': 't', 'idk_eval': 'unknown', 'RB_llm': 0.8, 'group': 'Unknown', 'model': None}
    """
    metrics = record.get("metrics") or {}
    row: ItemRow = {"task_id": _task_id(record)}
    for step in steps:
        name = JUDGE_METRICS[step]
        value = metrics.get(name)
        first = value[0] if isinstance(value, list) and value else None
        row[name] = None if isinstance(first, float) and not math.isfinite(first) else first
    row["group"] = answerability_group(answerability_of(dict(record)))
    row["model"] = _model(record)
    return row


@register_accumulator
class JudgeAccumulator(_MeansAccumulator):
    """``mtrag judge``: the exact mean of each judged metric (non-numeric answers left out)."""

    FAMILY = FAMILY
    COMMAND = "judge"
    METRICS = (
        RECORDS_METRIC,
        Metric(
            "underspecified_eval",
            "neither",
            "mean",
            "the judge finds the response asks for clarification (1, 0.5 partly, 0); good only on underspecified turns",
            True,
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "idk_eval",
            "neither",
            "mean",
            "the judge finds the response says it lacks the information (1, 0.5 partly, 0); good only on unanswerable",
            True,
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "RL_F",
            "higher",
            "mean",
            "RAGAS-style faithfulness: supported statements / statements",
            True,
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "RB_llm",
            "higher",
            "mean",
            "the judge's 1-10 rating against the reference answer, /10",
            True,
            lo=0.0,
            hi=1.0,
        ),
        Metric("judge_calls", "neither", "count", "judge calls made"),
        Metric("judge_cache_hits", "neither", "count", "judge answers taken from the cache"),
        Metric("judge_failures", "lower", "count", "judge calls that failed after the retries (value null)"),
        Metric("judge_unparseable", "lower", "count", "judge answers that could not be parsed"),
    ) + TRUST_METRICS
    INPUTS = (
        Input(
            "--input",
            "records with input, predictions, targets and contexts",
            "task_id",
            (
                TASK_ID_FIELD,
                InputField("input", ("array",), True, "an input error (the conversation: speaker and text per turn)"),
                InputField("predictions", ("array",), True, "an input error (predictions[0].text is the answer)"),
                InputField("targets", ("array",), False, "an input error for rb_llm (targets[0].text)"),
                InputField("contexts", ("array", "null"), False, "no passages"),
                InputField("metrics", ("object", "null"), False, "a new metrics object"),
            )
            + ANSWERABILITY_FIELDS
            + (MODEL_FIELD,),
        ),
    )

    STATE_SCHEMA = Schema(
        params=Fields(
            {
                "output": OUTPUT_STATE,
                "steps": Items(Text(choices=tuple(JUDGE_METRICS)), unique=True),
                "judge_template": Text(max_len=10_000),
                "judge_model": Text(max_len=10_000),
            }
        ),
        data=Fields(
            {
                "records": Count(),
                "means": Table(
                    exact_mean_state("data.records"),
                    key_pattern="|".join(JUDGE_METRICS.values()),
                    max_len=len(JUDGE_METRICS),
                ),
            }
        ),
    )

    def __init__(
        self,
        *,
        output: Optional[str] = None,
        steps: Sequence[str] = ("idk", "rb_llm", "rl_f"),
        judge_template: str = "builtin",
        judge_model: str = "none",
    ) -> None:
        bad = [s for s in steps if s not in JUDGE_METRICS]
        if bad or not steps:
            raise ScoringError(
                f"--steps: unknown step(s) {', '.join(bad) or '(none)'}; choose from {', '.join(JUDGE_METRICS)}"
            )
        super().__init__(output=output, steps=list(steps), judge_template=judge_template, judge_model=judge_model)
        self.records = 0
        self.means = {JUDGE_METRICS[s]: ExactMean() for s in steps}

    def add(self, item: ItemRow) -> None:
        self.records += 1
        for name, mean in self.means.items():
            mean.add(item.get(name))

    @classmethod
    def metric_names(cls, *, steps: Sequence[str]) -> List[str]:
        """The gateable names (before the runner's judge statistics are added)."""
        return ["records"] + [JUDGE_METRICS[s] for s in steps if s in JUDGE_METRICS]

    def finalize(self) -> Report:
        steps = self.params["steps"]
        means = {name: m.mean for name, m in self.means.items()}
        params = [
            ("step", "judge"),
            ("steps", "+".join(steps)),
            ("judge_template", self.params["judge_template"]),
            ("judge_model", self.params["judge_model"]),
        ]
        return Report(
            family=FAMILY,
            signature=signature(params=params),
            result={"records": self.records, "output": self.params["output"], "steps": list(steps), "means": means},
            metrics=dict([("records", self.records)] + list(means.items())),
            diagnostics=self.notes(),
        )
