"""Pipeline step: the accumulators of the SAFE commands (``f1k``, ``safe``, ``judge``) and what they declare.

Each accumulator follows the contract of ``docs/adding-a-family.md``: item rows
in, exact merges (``--emit-partial``, ``rageval-min merge``), one
:class:`~rageval_min.report.Report` out, and ``METRICS`` / ``INPUTS``
declarations (:mod:`rageval_min._metrics`).  The other commands' accumulators
sit next to their references (``factscorer``, ``veriscore_metric``,
``correlation``).

Accumulators keep, in input order, the values that numpy's pairwise sums,
Python's sequential sums, ranks and the bootstrap need (their state grows with
the input: 8 bytes per scored line for ``f1k``), and integer counts otherwise.
"""

import json
from array import array
from typing import (
    Any,
    Dict,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
)

from .._contract import Accumulator, ItemRow, register_accumulator
from .._metrics import Input, InputField, Metric
from .._state_schema import Count, Fields, Flag, Integer, Items, Maybe, Schema, Table, Text, ValueAt
from .._state_schema import Number as FiniteNumber
from .._stats import np_mean, np_std
from ..errors import ScoringError
from ..judges.stats_metrics import TRUST_METRICS
from ..report import Report
from ._common import (
    COMMAND_VARIANTS,
    DEFAULT_MAX_CLAIMS,
    FAMILY,
    Number,
    _clean,
    _nan_none,
    check_variants,
    signature,
)
from .bootstrap import K_RULE_PATTERN, Bootstrap, _ci_dict, k_rule_param
from .bootstrap import STATE_PARAMS as BOOTSTRAP_STATE_PARAMS


@register_accumulator
class F1kAccumulator(Accumulator):
    """``factuality f1k``: mean/std of F1@K, mean precision and recall, bootstrap CI of the mean F1.

    numpy's pairwise mean and the bootstrap need the values in input order, so
    the state keeps three float arrays (8 bytes per scored line; int ``0`` /
    ``1`` are summed as ``0.0`` / ``1.0``, which numpy does too) -- not the
    lines themselves.
    """

    FAMILY = FAMILY
    COMMAND = "f1k"
    METRICS = (
        Metric(
            "f1_at_k",
            "higher",
            "mean",
            "SAFE F1@K of the line: harmonic mean of precision and recall@K",
            True,
            lo=0.0,
            hi=1.0,
        ),
        Metric("precision", "higher", "rate", "S / (S + NS) of the line (null when both are 0)", True, lo=0.0, hi=1.0),
        Metric("recall_at_k", "higher", "rate", "min(1, S / K) of the line", True, lo=0.0, hi=1.0),
        Metric(
            "max_claims",
            "neither",
            "count",
            "K, the supported-claim count at which recall@K reaches 1 (per line: its own K)",
            True,
        ),
        Metric("n_lines", "neither", "count", "input lines read"),
        Metric("n_scored", "neither", "count", "lines scored (the rest are error lines)"),
        Metric("n_errors", "lower", "count", "lines that could not be scored"),
        Metric("f1_mean", "higher", "mean", "mean F1@K over the scored lines (numpy's pairwise mean)", lo=0.0, hi=1.0),
        Metric("f1_std", "neither", "statistic", "population standard deviation of F1@K over the scored lines"),
        Metric(
            "f1_mean_ci_low", "higher", "statistic", "lower bound of the bootstrap interval of f1_mean", lo=0.0, hi=1.0
        ),
        Metric(
            "f1_mean_ci_high", "higher", "statistic", "upper bound of the bootstrap interval of f1_mean", lo=0.0, hi=1.0
        ),
        Metric("precision_mean", "higher", "mean", "mean precision over the lines where S + NS > 0", lo=0.0, hi=1.0),
        Metric("recall_mean", "higher", "mean", "mean recall@K over the scored lines", lo=0.0, hi=1.0),
    )
    INPUTS = (
        Input(
            "--input",
            "per-response claim counts (JSONL, JSON, CSV or TSV)",
            "id",
            (
                InputField("id", ("string", "integer"), False, "the line is named by path:line"),
                InputField("supported", ("number", "string"), True, "an error line (expected a number), skipped"),
                InputField("not_supported", ("number", "string"), True, "an error line (expected a number), skipped"),
                InputField(
                    "max_claims", ("number", "string", "null"), False, "--max-claims; null or empty: SAFE's 100"
                ),
            ),
        ),
    )

    STATE_SCHEMA = Schema(
        params=Fields(
            {
                "max_claims": Maybe(Integer()),
                "k_rule": Text(pattern=K_RULE_PATTERN),
                **BOOTSTRAP_STATE_PARAMS,
            }
        ),
        data=Fields(
            {
                "n_lines": Count(),
                "f1": Items(FiniteNumber(lo=0, hi=1), max_len=ValueAt("data.n_lines")),
                "precision": Items(FiniteNumber(lo=0, hi=1), max_len=ValueAt("data.n_lines")),
                "recall": Items(FiniteNumber(lo=0, hi=1), max_len=ValueAt("data.n_lines")),
            }
        ),
    )

    def __init__(
        self,
        *,
        max_claims: int = DEFAULT_MAX_CLAIMS,
        k_rule: str = "fixed",
        bootstrap: int = 1000,
        confidence: float = 0.95,
        seed: int = 0,
    ) -> None:
        super().__init__(max_claims=max_claims, k_rule=k_rule, bootstrap=bootstrap, confidence=confidence, seed=seed)
        self.with_ci = True
        self.n_lines = 0
        self.f1 = array("d")
        self.precision = array("d")
        self.recall = array("d")

    @classmethod
    def metric_names(cls, **options: Any) -> List[str]:
        return [
            "max_claims",
            "n_lines",
            "n_scored",
            "n_errors",
            "f1_mean",
            "f1_std",
            "f1_mean_ci_low",
            "f1_mean_ci_high",
            "precision_mean",
            "recall_mean",
        ]

    def add(self, item: ItemRow) -> None:
        self.n_lines += 1
        if "error" in item:
            return
        self.f1.append(float(item["f1_at_k"]))
        self.recall.append(float(item["recall_at_k"]))
        if item.get("precision") is not None:
            self.precision.append(float(item["precision"]))

    def _data(self) -> Dict[str, Any]:
        return {
            "n_lines": self.n_lines,
            "f1": list(self.f1),
            "precision": list(self.precision),
            "recall": list(self.recall),
        }

    def _load(self, data: Mapping[str, Any]) -> None:
        self.n_lines = int(data["n_lines"])
        self.f1 = array("d", data["f1"])
        self.precision = array("d", data["precision"])
        self.recall = array("d", data["recall"])

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, F1kAccumulator)
        self.n_lines += other.n_lines
        self.f1.extend(other.f1)
        self.precision.extend(other.precision)
        self.recall.extend(other.recall)

    def finalize(self) -> Report:
        p = self.params
        f1s = self.f1
        ci = Bootstrap.of(p).interval(f1s, self.with_ci)
        summary: Dict[str, Any] = {
            "max_claims": p["max_claims"],
            "k_rule": p["k_rule"],
            "n_lines": self.n_lines,
            "n_scored": len(f1s),
            "n_errors": self.n_lines - len(f1s),
            "f1_mean": np_mean(f1s),
            "f1_std": np_std(f1s),
            "f1_mean_ci_low": ci.low,
            "f1_mean_ci_high": ci.high,
            "precision_mean": np_mean(self.precision),
            "recall_mean": np_mean(self.recall),
        }
        result = dict(_clean(summary))
        result["bootstrap"] = _clean(_ci_dict(ci))
        metrics = {k: _nan_none(v) for k, v in summary.items() if k != "k_rule"}
        sig = signature(
            command="f1k",
            params=[("K", p["max_claims"]), ("k_rule", k_rule_param(p["k_rule"]))] + Bootstrap.of(p).signature_params(),
        )
        return Report(FAMILY, sig, result, metrics, self.notes())


@register_accumulator
class SafeAccumulator(Accumulator):
    """``factuality safe``: run_eval's per-side mean/std of prompt 0's numeric metrics, plus a CI.

    Item rows come from :func:`safe_items` (one per prompt, in order).  numpy's
    pairwise mean/std need the values in prompt order, so the state keeps them
    (one list per side and metric) with the per-prompt F1 values.
    """

    FAMILY = FAMILY
    COMMAND = "safe"
    METRICS = (
        Metric(
            "side1_f1",
            "higher",
            "mean",
            "F1@K of the prompt's side 1 (null when side 1 is not rated)",
            True,
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "side2_f1",
            "higher",
            "mean",
            "F1@K of the prompt's side 2 (null when side 2 is not rated)",
            True,
            lo=0.0,
            hi=1.0,
        ),
        Metric("side1", "neither", "outcome", "1 when the prompt has side1_posthoc_eval_data (rated)", True),
        Metric("side2", "neither", "outcome", "1 when the prompt has side2_posthoc_eval_data (rated)", True),
        Metric(
            "{side}.{metric}",
            "neither",
            "mean",
            "a numeric value of the prompt's eval data (label counts, f1_<K>)",
            True,
        ),
        Metric(
            "{side}_avg_{metric}",
            "neither",
            "mean",
            "run_eval's numpy mean of prompt 0's eval-data metric over the side",
        ),
        Metric("{side}_std_{metric}", "neither", "statistic", "run_eval's population std of that metric over the side"),
        Metric(
            "{side}_f1_mean_ci_low",
            "higher",
            "statistic",
            "lower bound of the bootstrap interval of the side's mean F1@K",
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "{side}_f1_mean_ci_high",
            "higher",
            "statistic",
            "upper bound of the bootstrap interval of the side's mean F1@K",
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "f1_mean",
            "higher",
            "mean",
            "mean F1@K of the one aggregated side (only when exactly one is)",
            lo=0.0,
            hi=1.0,
        ),
        Metric(
            "f1_mean_ci_low", "higher", "statistic", "lower bound of the bootstrap interval of f1_mean", lo=0.0, hi=1.0
        ),
        Metric(
            "f1_mean_ci_high", "higher", "statistic", "upper bound of the bootstrap interval of f1_mean", lo=0.0, hi=1.0
        ),
    )
    INPUTS = (
        Input(
            "--input",
            "an experiment result holding SAFE ratings (main/pipeline.py + SAFE), one JSON object",
            "",
            (
                InputField("side_1", ("string",), True, "an input error (run_eval reads both method names)"),
                InputField("side_2", ("string",), True, "an input error (run_eval reads both method names)"),
                InputField("per_prompt_data", ("array",), True, "an input error"),
                InputField("per_prompt_data[].side1_posthoc_eval_data", ("object",), False, "side 1 not rated there"),
                InputField("per_prompt_data[].side2_posthoc_eval_data", ("object",), False, "side 2 not rated there"),
                InputField("<eval data>.Supported", ("integer", "number"), True, "no f1_<K> for that prompt"),
                InputField("<eval data>.Not Supported", ("integer", "number"), True, "no f1_<K> for that prompt"),
                InputField("<eval data>.Irrelevant", ("integer", "number"), True, "no f1_<K> for that prompt"),
            ),
        ),
    )

    STATE_SCHEMA = Schema(
        params=Fields(
            {
                "max_claim": Integer(lo=-1),
                "max_claim_text": Text(max_len=100),
                "k_rule": Maybe(Text(pattern=K_RULE_PATTERN)),
                "eval_side1": Flag(),
                "eval_side2": Flag(),
                **BOOTSTRAP_STATE_PARAMS,
                "variants": Items(Text(choices=COMMAND_VARIANTS["safe"]), unique=True),
            }
        ),
        data=Fields(
            {
                "n": Count(),
                "sides": Items(Text(choices=("side1", "side2")), unique=True),
                "first": Table(Maybe(Count()), keys="data.sides"),  # the index of the first rated prompt
                "metrics": Table(Items(Text(max_len=1000), unique=True), keys="data.sides"),
                "rated": Table(Count(at_most="data.n"), keys="data.sides"),
                "values": Table(Table(Items(FiniteNumber(), max_len=ValueAt("data.n"))), keys="data.sides"),
                "f1s": Table(Items(Maybe(FiniteNumber()), length=ValueAt("data.n")), keys="data.sides"),
            }
        ),
    )

    def __init__(
        self,
        *,
        max_claim: int = -1,
        max_claim_text: str = "-1",
        k_rule: Optional[str] = None,
        eval_side1: bool = True,
        eval_side2: bool = True,
        bootstrap: int = 1000,
        confidence: float = 0.95,
        seed: int = 0,
        variants: Sequence[str] = (),
    ) -> None:
        names = list(check_variants(variants, "safe"))
        super().__init__(
            max_claim=max_claim,
            max_claim_text=max_claim_text,
            k_rule=k_rule,
            eval_side1=eval_side1,
            eval_side2=eval_side2,
            bootstrap=bootstrap,
            confidence=confidence,
            seed=seed,
            variants=names,
        )
        self.with_ci = True
        self.n = 0
        self.sides: List[str] = []
        self.first: Dict[str, Optional[int]] = {}
        self.metrics: Dict[str, List[str]] = {}
        self.values: Dict[str, Dict[str, List[Number]]] = {}
        self.rated: Dict[str, int] = {}
        self.f1s: Dict[str, List[Optional[Number]]] = {}

    def _f1_key(self) -> str:
        k = self.params["max_claim"]
        effective = k if k > 0 else DEFAULT_MAX_CLAIMS
        return f"f1_{effective if 'f1_key_effective_k' in self.params['variants'] else k}"

    def add(self, item: ItemRow) -> None:
        if self.n == 0:
            self.sides = [s for s in ("side1", "side2") if s in item]
            for side in self.sides:
                self.first[side] = None
                self.metrics[side] = []
                self.values[side] = {}
                self.rated[side] = 0
                self.f1s[side] = []
        self.n += 1
        for side in self.sides:
            self.f1s[side].append(item.get(f"{side}_f1"))
            if not item.get(side):
                continue
            if self.first[side] is None:
                self.first[side] = int(item["prompt"])
                prefix = f"{side}."
                self.metrics[side] = [k[len(prefix) :] for k in item if k.startswith(prefix)]
            self.rated[side] = self.rated.get(side, 0) + 1
            # every metric of every rated prompt, in order: whether this side is aggregated (prompt 0
            # rated) and which metrics count (prompt 0's) is known only when the parts are merged
            for key, value in item.items():
                if key.startswith(f"{side}."):
                    self.values[side].setdefault(key[len(side) + 1 :], []).append(value)

    def _data(self) -> Dict[str, Any]:
        return {
            "n": self.n,
            "sides": self.sides,
            "first": self.first,
            "metrics": self.metrics,
            "rated": self.rated,
            "values": self.values,
            "f1s": self.f1s,
        }

    def _load(self, data: Mapping[str, Any]) -> None:
        self.n = int(data["n"])
        self.sides = list(data["sides"])
        self.first = dict(data["first"])
        self.metrics = {k: list(v) for k, v in data["metrics"].items()}
        self.rated = {k: int(v) for k, v in data["rated"].items()}
        self.values = {k: {m: list(x) for m, x in v.items()} for k, v in data["values"].items()}
        self.f1s = {k: list(v) for k, v in data["f1s"].items()}

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, SafeAccumulator)
        if other.n == 0:
            return
        if self.n == 0:
            self._load(json.loads(json.dumps(other._data())))
            return
        self.n += other.n
        for side in self.sides:
            self.f1s[side].extend(other.f1s.get(side, []))
            if other.first.get(side) is None:
                continue
            if self.first[side] is None:
                self.first[side] = other.first[side]
                self.metrics[side] = list(other.metrics.get(side, []))
            self.rated[side] = self.rated.get(side, 0) + other.rated.get(side, 0)
            for metric, values in other.values.get(side, {}).items():
                self.values[side].setdefault(metric, []).extend(values)

    def _aggregated(self) -> List[str]:
        all_rated = "aggregate_all_rated" in self.params["variants"]
        return [s for s in self.sides if self.first[s] == 0 or (all_rated and self.first[s] is not None)]

    def aggregates(self) -> Dict[str, float]:
        """The ``side{n}_avg_<metric>`` / ``side{n}_std_<metric>`` values run_eval adds, in order."""
        added: Dict[str, float] = {}
        for side in self._aggregated():
            for metric in self.metrics[side]:
                values = self.values[side].get(metric, [])
                if len(values) != self.rated.get(side, 0):  # run_eval: a KeyError
                    raise ScoringError(f"metric {metric!r} of prompt {self.first[side]} is missing in a rated prompt")
                added[f"{side}_avg_{metric}"] = np_mean(values)
                added[f"{side}_std_{metric}"] = np_std(values)
        return added

    def finalize(self) -> Report:
        p = self.params
        added = self.aggregates()
        metrics: Dict[str, Any] = {k: _nan_none(v) for k, v in added.items()}
        notes = self.notes()
        for side in self.sides:
            if side not in self._aggregated() and self.n:
                eval_key = f"{side}_posthoc_eval_data"
                if self.first[side] is None:
                    notes.append(f"{side}: no prompt has {eval_key}; side not aggregated")
                else:
                    notes.append(f"{side}: prompt 0 has no {eval_key}, so the reference skips the whole side")
        if not self.n:
            notes.append("per_prompt_data is empty; nothing aggregated")
        boots: Dict[str, Any] = {}
        aggregated = [s for s in self._aggregated() if any(k.startswith(f"{s}_avg_") for k in added)]
        for side in aggregated:
            f1s = [v for v in self.f1s[side] if v is not None]
            ci = Bootstrap.of(p).interval(f1s, self.with_ci)
            boots[side] = _ci_dict(ci)
            metrics[f"{side}_f1_mean_ci_low"] = _nan_none(ci.low)
            metrics[f"{side}_f1_mean_ci_high"] = _nan_none(ci.high)
            if len(aggregated) == 1:
                metrics["f1_mean"] = _nan_none(ci.mean)
                metrics["f1_mean_ci_low"] = metrics[f"{side}_f1_mean_ci_low"]
                metrics["f1_mean_ci_high"] = metrics[f"{side}_f1_mean_ci_high"]
        k = p["max_claim"]
        summary = {
            "max_claim": p["max_claim_text"] if p["k_rule"] is None else p["k_rule"],
            "max_claims": k if k > 0 else DEFAULT_MAX_CLAIMS,
            "f1_key": self._f1_key(),
            "rated_sides": list(self.sides),
            "aggregates": _clean(added),
            "per_prompt_f1": {side: list(self.f1s[side]) for side in self.sides},
            "bootstrap": _clean(boots),
        }
        params: List[Tuple[str, object]] = [("max_claim", k), ("K", summary["max_claims"])]
        if p["k_rule"] is not None:
            params.append(("k_rule", k_rule_param(p["k_rule"])))
        if "sides_by_flags" in p["variants"]:
            params += [("eval_side1", p["eval_side1"]), ("eval_side2", p["eval_side2"])]
        params += Bootstrap.of(p).signature_params()
        sig = signature(command="safe", variants=p["variants"], params=params)
        return Report(FAMILY, sig, summary, metrics, notes)


JUDGE_COUNTS = ("supported", "not_supported", "irrelevant", "num_claims", "dropped")
"""The per-response label counts of ``factuality judge`` (summed in its report)."""
_COUNTS = JUDGE_COUNTS


@register_accumulator
class JudgeAccumulator(Accumulator):
    """``factuality judge``'s report: response and error counts and the summed label counts.

    Item rows are the judged lines without their ``facts``:
    ``{"id", "supported", "not_supported", "irrelevant", "num_claims", "dropped"}``
    or ``{"id", "error"}``; the state is integer sums (exact merges).
    """

    FAMILY = FAMILY
    COMMAND = "judge"
    METRICS = (
        Metric("supported", "higher", "count", "facts rated Supported (summed in the report)", True),
        Metric("not_supported", "lower", "count", "facts rated Not Supported (summed in the report)", True),
        Metric("irrelevant", "neither", "count", "facts judged irrelevant to the prompt (not rated)", True),
        Metric("num_claims", "neither", "count", "facts extracted, irrelevant ones included", True),
        Metric("dropped", "lower", "count", "facts whose rating could not be read (dropped, as SAFE)", True),
        Metric("responses", "neither", "count", "responses judged"),
        Metric("errors", "lower", "count", "responses whose judge calls failed (error lines, no counts)"),
        Metric("judge_calls", "neither", "count", "prompts sent to the judge"),
        Metric("judge_cache_hits", "neither", "count", "prompts answered from the cache"),
        Metric("judge_failures", "lower", "count", "judge calls that failed after the retries"),
        Metric("judge_unparseable", "lower", "count", "judge answers the step's parser could not read"),
    ) + TRUST_METRICS
    INPUTS = (
        Input(
            "--input",
            "responses to judge (field names set by --response-field, --prompt-field, --passages-field)",
            "id",
            (
                InputField("id", ("string", "integer"), False, "the record's position (1-based)"),
                InputField("response", ("string",), True, "an input error before any judge call"),
                InputField("prompt", ("string",), True, "an input error before any judge call"),
                InputField("passages", ("array", "string"), False, "no passages: every fact rated against nothing"),
            ),
        ),
    )

    #: ``records`` is the shard's own ``--records`` file: shards that wrote different files merge
    LOCAL_PARAMS = ("records",)

    STATE_SCHEMA = Schema(
        params=Fields({"judge_model": Text(max_len=10_000), "judge_template": Text(max_len=10_000), "records": Text()}),
        data=Fields(
            {
                "responses": Count(),
                "errors": Count(at_most="data.responses"),
                "totals": Fields({name: Count() for name in JUDGE_COUNTS}),
            }
        ),
    )

    def __init__(self, *, judge_model: str = "none", judge_template: str = "builtin", records: str = "") -> None:
        super().__init__(judge_model=judge_model, judge_template=judge_template, records=records)
        self.responses = 0
        self.errors = 0
        self.totals = {k: 0 for k in _COUNTS}

    def add(self, item: ItemRow) -> None:
        self.responses += 1
        if "error" in item:
            self.errors += 1
            return
        for k in _COUNTS:
            self.totals[k] += int(item[k])

    def _data(self) -> Dict[str, Any]:
        return {"responses": self.responses, "errors": self.errors, "totals": self.totals}

    def _load(self, data: Mapping[str, Any]) -> None:
        self.responses = int(data["responses"])
        self.errors = int(data["errors"])
        self.totals = {k: int(data["totals"][k]) for k in _COUNTS}

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, JudgeAccumulator)
        self.responses += other.responses
        self.errors += other.errors
        for k in _COUNTS:
            self.totals[k] += other.totals[k]

    def finalize(self) -> Report:
        p = self.params
        result: Dict[str, Any] = {"responses": self.responses, "errors": self.errors, "output": p["records"]}
        result.update(self.totals)
        sig = signature(
            command="judge",
            params=[
                ("step", "judge"),
                ("search", "passages"),
                ("judge_template", p["judge_template"]),
                ("judge_model", p["judge_model"]),
            ],
        )
        metrics: Dict[str, Any] = {k: v for k, v in result.items() if isinstance(v, int)}
        return Report(FAMILY, sig, result, metrics, self.notes())
