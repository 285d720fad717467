"""``rageval-min factuality f1k|safe|factscore|veriscore|correlate``."""

import argparse
import json
import math
import os
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import factuality as F
from ._cli_common import CliIO, add_report_options, emit_report, gold_samples_dir, selected_variants
from ._io import iter_records, read_json, read_text
from ._report import Report
from .errors import ScoringError

_FAMILY = "factuality"
_INT_RE = re.compile(r"^[+-]?\d+$")


# --------------------------------------------------------------------------- helpers


def _clean(value: Any) -> Any:
    """nan/inf -> None, recursively (for JSON envelopes and per-line outputs)."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _number(value: Any, field: str) -> Any:
    """A JSON number, or a numeric CSV/TSV cell; raises ValueError with a reason."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{field}: expected a number, got {json.dumps(value)}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError(f"{field}: expected a finite number, got {value!r}")
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            parsed: Any = int(text) if _INT_RE.match(text) else float(text)
        except ValueError:
            raise ValueError(f"{field}: expected a number, got {value!r}") from None
        if isinstance(parsed, float) and not math.isfinite(parsed):
            raise ValueError(f"{field}: expected a finite number, got {value!r}")
        return parsed
    raise ValueError(f"{field}: expected a number, got {type(value).__name__}")


def _parse_k(text: str) -> Tuple[Optional[int], str]:
    """``--max-claims`` value: an integer K or a rule (median, max, pNN)."""
    text = text.strip()
    if _INT_RE.match(text):
        return int(text), "fixed"
    if text in ("median", "max") or re.match(r"^p\d{1,3}$", text):
        F.select_k([1], text)  # validates pNN <= 100
        return None, text
    raise ScoringError(f"--max-claims {text!r}: expected an integer, median, max or pNN", field="max_claims")


def _k_rule_param(rule: str) -> str:
    if rule == "median":
        return "upper_median_of_S+NS"
    if rule == "max":
        return "max_of_S+NS"
    if rule.startswith("p"):
        return f"nearest_rank_{rule}_of_S+NS"
    return rule


def _boot_params(args: argparse.Namespace) -> List[Tuple[str, object]]:
    return [("bootstrap", args.bootstrap), ("confidence", args.confidence), ("seed", args.seed)]


def _add_boot_options(p: argparse.ArgumentParser, what: str) -> None:
    g = p.add_argument_group("confidence interval")
    g.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="B",
        help=f"bootstrap resamples for the CI of {what} (default: 1000; 0 disables it; "
        "the cost grows with B times the number of responses)",
    )
    g.add_argument("--confidence", type=float, default=0.95, help="CI level (default: 0.95)")
    g.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")


def _ci(values: Sequence[Any], args: argparse.Namespace) -> F.BootstrapCI:
    if args.bootstrap == 0:  # disabled: no interval
        return F.BootstrapCI(F.np_mean(values), math.nan, math.nan, args.confidence, 0, args.seed)
    if args.bootstrap < 0:
        raise ScoringError("--bootstrap must be >= 0 (0 disables the interval)")
    return F.bootstrap_mean_ci(values, n_resamples=args.bootstrap, confidence=args.confidence, seed=args.seed)


def _ci_dict(ci: F.BootstrapCI) -> Dict[str, Any]:
    return {"confidence": ci.confidence, "low": ci.low, "high": ci.high, "n_resamples": ci.n_resamples, "seed": ci.seed}


def _jsonl(report: Report, outcomes: Any) -> str:
    lines = report.result.get("lines", [])
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def _read_json_object(path: str) -> Dict[str, Any]:
    data = read_json(path)
    if not isinstance(data, dict):
        raise ScoringError("expected a JSON object (an experiment result)", path=path)
    return data


def _no_subcommand(args: argparse.Namespace, io: CliIO) -> int:
    raise ScoringError("factuality: choose a subcommand: f1k, safe, factscore, veriscore, correlate (see --help)")


# --------------------------------------------------------------------------- register


def register(sub: Any) -> None:
    top = sub.add_parser(
        "factuality",
        help="long-form factuality: SAFE F1@K, FActScore, VeriScore, correlations",
        description="Long-form factuality metrics with reference parity: SAFE (google-deepmind/"
        "long-form-factuality), FActScore and VeriScore aggregation, and the SAFE-vs-human "
        "correlation study. The LLM claim splitting/rating is not run here.",
    )
    top.set_defaults(func=_no_subcommand)
    fs = top.add_subparsers(dest="factuality_command", metavar="SUBCOMMAND")

    p = fs.add_parser(
        "f1k",
        help="SAFE precision, recall@K and F1@K per line of counts",
        description="One output line per input line {supported, not_supported, "
        "max_claims?}, exactly as SAFE's calculate_metrics. A per-line max_claims "
        "overrides --max-claims (null = SAFE's default 100). Bad lines get an "
        "'error' key instead of aborting. Default output: JSON Lines.",
    )
    p.add_argument("--input", required=True, metavar="COUNTS.jsonl", help="counts (JSONL, JSON, CSV or TSV)")
    p.add_argument(
        "--max-claims",
        default=str(F.DEFAULT_MAX_CLAIMS),
        metavar="K|median|max|pNN",
        help="K (default: 100, SAFE's code default) or a rule over the lines' S+NS: "
        "median (upper median), max, pNN (nearest-rank percentile)",
    )
    _add_boot_options(p, "the mean F1@K")
    add_report_options(p, extra_formats=("jsonl",), default_format="jsonl")
    p.set_defaults(func=run_f1k)

    p = fs.add_parser(
        "safe",
        help="SAFE run_eval aggregation (f1_<K>, side*_avg_*, side*_std_*)",
        description="Reproduce eval/run_eval.py's aggregation of an experiment result "
        "that already holds SAFE ratings; the default output is the exact JSON text "
        "run_eval writes.",
    )
    p.add_argument("--input", required=True, metavar="SAFE_RESULTS.json", help="experiment result JSON")
    p.add_argument(
        "--max-claim",
        "--max-claims",
        dest="max_claim",
        default="-1",
        metavar="K|median|max|pNN",
        help="run_eval's --max_claim (default: -1, i.e. K=100 with key f1_-1), or a rule over the rated prompts' S+NS",
    )
    p.add_argument("--no-eval-side1", dest="eval_side1", action="store_false", help="do not aggregate side 1")
    p.add_argument("--no-eval-side2", dest="eval_side2", action="store_false", help="do not aggregate side 2")
    _add_boot_options(p, "each side's mean F1@K")
    add_report_options(
        p, extra_formats=("safe",), default_format="safe", variants=("f1_key_effective_k", "aggregate_all_rated")
    )
    p.set_defaults(func=run_safe)

    p = fs.add_parser(
        "factscore",
        help="FActScore with length penalty, init score, respond ratio",
        description="FActScore (FactScorer.get_score) from per-fact labels: FActScore's "
        'labelled format (annotations -> human-atomic-facts labels) or {"labels": '
        '["S","NS","IR",...]}. S counts as supported, NS and IR as not.',
    )
    p.add_argument("--input", required=True, metavar="LABELED.jsonl", help="labelled responses")
    p.add_argument("--gamma", type=int, default=10, help="length-penalty gamma; 0 disables it (default: 10)")
    _add_boot_options(p, "the score")
    add_report_options(p, variants=("factscore_excl_ir",))
    p.set_defaults(func=run_factscore)

    p = fs.add_parser(
        "veriscore",
        help="VeriScore per-domain K (upper median, max) and F1@K",
        description="VeriScore from per-response counts {model?, domain (or "
        "prompt_source), supported, total_claims, abstained?}.",
    )
    p.add_argument("--input", required=True, metavar="COUNTS.jsonl", help="per-response counts")
    add_report_options(p, variants=("veriscore_py312_sum",))
    p.set_defaults(func=run_veriscore)

    p = fs.add_parser(
        "correlate",
        help="Pearson/Spearman with two-sided p-values (scipy parity)",
        description="Per line of {x: [...], y: [...]}: Pearson and Spearman with p-values "
        "(null where undefined); or two columns of a table (--x COL --y COL); or the "
        "SAFE-vs-human study (--labeled ... --safe SAFE.jsonl). Default output: JSON Lines.",
    )
    p.add_argument("--input", metavar="PAIRS.jsonl", help="pairs per line, or a table with --x/--y")
    p.add_argument("--x", metavar="COL", help="column for x (table mode; passed first, like FActScore)")
    p.add_argument("--y", metavar="COL", help="column for y (table mode)")
    p.add_argument(
        "--labeled",
        action="append",
        default=[],
        metavar="PATH",
        help="FActScore labelled file, or a folder of them (names without '_', *.jsonl); repeatable",
    )
    p.add_argument(
        "--safe",
        metavar="SAFE.jsonl",
        help="SAFE per-response metrics {model_name, line|topic, Supported/supported, ...}",
    )
    add_report_options(p, extra_formats=("jsonl",), default_format="jsonl", variants=("pearson_fsum",))
    p.set_defaults(func=run_correlate)

    from ._judge_factuality import register_factuality_judge

    register_factuality_judge(fs)


# --------------------------------------------------------------------------- f1k


def compute_f1k(path: str, args: argparse.Namespace) -> Report:
    fixed_k, rule = _parse_k(args.max_claims)
    parsed: List[Tuple[int, Dict[str, Any], Any]] = []  # (line, record, counts or error text)
    for lineno, rec in iter_records(path):
        try:
            s = _number(rec.get("supported"), "supported")
            n = _number(rec.get("not_supported"), "not_supported")
            k_override: Any = "flag"
            if "max_claims" in rec:
                raw_k = rec["max_claims"]
                # null (or an empty CSV cell) means SAFE's default K
                k_override = None if raw_k is None or raw_k == "" else _number(raw_k, "max_claims")
            parsed.append((lineno, rec, (s, n, k_override)))
        except ValueError as exc:
            parsed.append((lineno, rec, str(exc)))
    if fixed_k is None:
        pool = [c[0] + c[1] for _, _, c in parsed if not isinstance(c, str) and c[0] >= 0 and c[1] >= 0]
        try:
            flag_k = F.select_k(pool, rule)
        except ScoringError as exc:
            raise ScoringError(exc.msg, path=path, field="max_claims") from None
    else:
        flag_k = fixed_k
    lines: List[Dict[str, Any]] = []
    diagnostics: List[str] = []
    f1s: List[Any] = []
    precisions: List[float] = []
    recalls: List[Any] = []
    for lineno, rec, counts in parsed:
        out: Dict[str, Any] = {}
        if "id" in rec:
            out["id"] = rec["id"]
        if isinstance(counts, str):
            out["error"] = counts
        else:
            s, n, k_override = counts
            k = flag_k if k_override == "flag" else (F.DEFAULT_MAX_CLAIMS if k_override is None else k_override)
            try:
                res = F.f1_at_k(s, n, max_claims=k)
            except ScoringError as exc:
                out["error"] = exc.msg
            else:
                out.update(precision=res.precision, recall_at_k=res.recall_at_k, f1_at_k=res.f1_at_k, max_claims=k)
                f1s.append(res.f1_at_k)
                recalls.append(res.recall_at_k)
                if res.precision is not None:
                    precisions.append(res.precision)
        if "error" in out:
            diagnostics.append(f"{path}:{lineno}: {out['error']}")
        lines.append(out)
    ci = _ci(f1s, args)
    summary = {
        "max_claims": flag_k,
        "k_rule": rule,
        "n_lines": len(lines),
        "n_scored": len(f1s),
        "n_errors": len(lines) - len(f1s),
        "f1_mean": F.np_mean(f1s),
        "f1_std": F.np_std(f1s),
        "f1_mean_ci_low": ci.low,
        "f1_mean_ci_high": ci.high,
        "precision_mean": F.np_mean(precisions),
        "recall_mean": F.np_mean(recalls),
    }
    result = dict(_clean(summary))
    result["bootstrap"] = _clean(_ci_dict(ci))
    result["lines"] = _clean(lines)
    metrics: Dict[str, Any] = {
        k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in summary.items() if k != "k_rule"
    }
    sig = F.signature(F.REF_SAFE, (), [("K", flag_k), ("k_rule", _k_rule_param(rule))] + _boot_params(args))
    return Report(_FAMILY, sig, result, metrics, diagnostics)


def run_f1k(args: argparse.Namespace, io: CliIO) -> int:
    return emit_report(compute_f1k(args.input, args), args, io, formatters={"jsonl": _jsonl})


# --------------------------------------------------------------------------- safe


def _rated_relevant_counts(result: Mapping[str, Any], args: argparse.Namespace) -> List[Any]:
    pool: List[Any] = []
    prompts = result.get("per_prompt_data")
    if not isinstance(prompts, list):
        return pool
    for n, flag in ((1, args.eval_side1), (2, args.eval_side2)):
        if not flag or result.get(f"side_{n}") in ("none", "placeholder"):
            continue
        for prompt in prompts:
            data = prompt.get(f"side{n}_posthoc_eval_data") if isinstance(prompt, dict) else None
            if isinstance(data, dict):
                s, ns = data.get(F.SUPPORTED_LABEL), data.get(F.NOT_SUPPORTED_LABEL)
                if (
                    isinstance(s, (int, float))
                    and isinstance(ns, (int, float))
                    and F._is_number(s)
                    and F._is_number(ns)
                ):
                    pool.append(s + ns)
    return pool


def compute_safe(path: str, args: argparse.Namespace, variants: Sequence[str]) -> Tuple[Report, str]:
    data = _read_json_object(path)
    fixed_k, rule = _parse_k(args.max_claim)
    if fixed_k is None:
        try:
            max_claim = F.select_k(_rated_relevant_counts(data, args), rule)
        except ScoringError as exc:
            raise ScoringError(exc.msg, path=path, field="max_claim") from None
    else:
        max_claim = fixed_k
    try:
        res = F.run_eval_aggregate(
            data, max_claim=max_claim, eval_side1=args.eval_side1, eval_side2=args.eval_side2, variants=variants
        )
    except ScoringError as exc:
        raise ScoringError(exc.msg, path=path, record=exc.record, field=exc.field) from None
    text = F.dumps_reference(res.result)
    metrics: Dict[str, Any] = {}
    for key, value in res.added.items():
        metrics[key] = None if math.isnan(value) else value
    boots: Dict[str, Any] = {}
    aggregated = [s for s in res.rated_sides if any(k.startswith(f"{s}_avg_") for k in res.added)]
    for side in aggregated:
        f1s = [v for v in res.per_prompt_f1[side] if v is not None]
        ci = _ci(f1s, args)
        boots[side] = _ci_dict(ci)
        metrics[f"{side}_f1_mean_ci_low"] = None if math.isnan(ci.low) else ci.low
        metrics[f"{side}_f1_mean_ci_high"] = None if math.isnan(ci.high) else ci.high
        if len(aggregated) == 1:
            metrics["f1_mean"] = None if math.isnan(ci.mean) else ci.mean
            metrics["f1_mean_ci_low"] = metrics[f"{side}_f1_mean_ci_low"]
            metrics["f1_mean_ci_high"] = metrics[f"{side}_f1_mean_ci_high"]
    summary = {
        "max_claim": args.max_claim if fixed_k is not None else rule,
        "max_claims": res.max_claims,
        "f1_key": res.f1_key,
        "rated_sides": res.rated_sides,
        "aggregates": _clean(res.added),
        "per_prompt_f1": res.per_prompt_f1,
        "bootstrap": _clean(boots),
    }
    params: List[Tuple[str, object]] = [("max_claim", max_claim), ("K", res.max_claims)]
    if fixed_k is None:
        params.append(("k_rule", _k_rule_param(rule)))
    params += [("eval_side1", args.eval_side1), ("eval_side2", args.eval_side2)] + _boot_params(args)
    sig = F.signature(F.REF_SAFE, variants, params)
    return Report(_FAMILY, sig, summary, metrics, res.diagnostics), text


def run_safe(args: argparse.Namespace, io: CliIO) -> int:
    report, text = compute_safe(args.input, args, selected_variants(args))

    def _safe(rep: Report, outcomes: Any) -> str:
        return text

    return emit_report(report, args, io, formatters={"safe": _safe})


# --------------------------------------------------------------------------- factscore


def compute_factscore(path: str, args: argparse.Namespace, variants: Sequence[str]) -> Report:
    exclude_ir = "factscore_excl_ir" in variants
    decisions: List[Optional[List[bool]]] = []
    ids: List[str] = []
    for lineno, rec in iter_records(path):
        where = f"{path}:{lineno}"
        decisions.append(F.labeled_decisions(rec, exclude_ir=exclude_ir, where=where))
        label = rec.get("id", rec.get("topic"))
        ids.append(f"{where} ({label})" if label is not None else where)
    if args.gamma < 0:
        raise ScoringError("--gamma must be >= 0", field="gamma")
    res = F.factscore(decisions, gamma=args.gamma, ids=ids)
    ci = _ci(res.per_response_score, args)
    summary: Dict[str, Any] = {
        "score": res.score,
        "respond_ratio": res.respond_ratio,
        "num_facts_per_response": res.num_facts_per_response,
    }
    if args.gamma:
        summary["init_score"] = res.init_score
    summary["num_responses"] = res.num_responses
    summary["num_responding"] = res.num_responding
    summary["score_ci_low"] = ci.low
    summary["score_ci_high"] = ci.high
    metrics = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in summary.items()}
    result = dict(_clean(summary))
    result["bootstrap"] = _clean(_ci_dict(ci))
    labels = "S/(S+NS)" if exclude_ir else "S/(S+NS+IR)"
    sig = F.signature(F.REF_FACTSCORE, variants, [("gamma", args.gamma), ("score", labels)] + _boot_params(args))
    return Report(_FAMILY, sig, result, metrics, list(res.diagnostics))


def run_factscore(args: argparse.Namespace, io: CliIO) -> int:
    return emit_report(compute_factscore(args.input, args, selected_variants(args)), args, io)


# --------------------------------------------------------------------------- veriscore


def compute_veriscore(path: str, variants: Sequence[str]) -> Report:
    records: List[Dict[str, Any]] = []
    problems: List[str] = []
    for lineno, rec in iter_records(path):
        where = f"{path}:{lineno}"
        domain = rec.get("domain", rec.get("prompt_source"))
        if domain is None:
            raise ScoringError("missing 'domain' (or 'prompt_source')", path=path, line=lineno)
        abstained = rec.get("abstained", False)
        if abstained not in (True, False, None):
            raise ScoringError("expected true or false", path=path, line=lineno, field="abstained")
        try:
            s = _number(rec.get("supported"), "supported")
            total = _number(rec.get("total_claims"), "total_claims")
        except ValueError as exc:
            if abstained:
                s, total = 0, 0
            else:
                raise ScoringError(str(exc), path=path, line=lineno) from None
        if s < 0 or total < 0:
            raise ScoringError(f"counts must not be negative, got {s} and {total}", path=path, line=lineno)
        if s > total:
            problems.append(
                f"{where}: supported {s} > total_claims {total} (precision > 1; kept as the reference would)"
            )
        records.append(
            {
                "model": str(rec.get("model", rec.get("model_name", ""))),
                "domain": str(domain),
                "supported": s,
                "total_claims": total,
                "abstained": bool(abstained),
                "id": rec.get("id", where),
            }
        )
    res = F.veriscore(records, variants=variants)
    problems.extend(res.diagnostics)
    metrics: Dict[str, Any] = {}
    rows = []
    for row in res.rows:
        tag = ".".join(p for p in (row.model, row.domain) if p)
        metrics[f"veriscore.{tag}"] = row.veriscore
        metrics[f"f1_at_k_max.{tag}"] = row.f1_at_k_max
        rows.append(row._asdict())
    if len(res.rows) == 1:
        metrics["veriscore"] = res.rows[0].veriscore
        metrics["f1_at_k_max"] = res.rows[0].f1_at_k_max
    result = {
        "domains": {d: {"k_median": k[0], "k_max": k[1]} for d, k in res.domains.items()},
        "scores": rows,
    }
    sum_rule = "py312_compensated" if "veriscore_py312_sum" in variants else "sequential"
    sig = F.signature(F.REF_VERISCORE, variants, [("K", "upper_median,max"), ("mean", sum_rule)])
    return Report(_FAMILY, sig, result, metrics, problems)


def run_veriscore(args: argparse.Namespace, io: CliIO) -> int:
    return emit_report(compute_veriscore(args.input, selected_variants(args)), args, io)


# --------------------------------------------------------------------------- correlate


def _corr_dict(res: F.CorrelationResult) -> Dict[str, Any]:
    return {"statistic": _clean(res.statistic), "pvalue": _clean(res.pvalue)}


def _labeled_files(paths: Sequence[str]) -> List[str]:
    files: List[str] = []
    for path in paths:
        if os.path.isdir(path):
            names = sorted(n for n in os.listdir(path) if n.endswith(".jsonl") and "_" not in n)
            if not names:
                raise ScoringError("no *.jsonl labelled files (without '_') here", path=path)
            files.extend(os.path.join(path, n) for n in names)
        else:
            files.append(path)
    return files


def compute_study(labeled: Sequence[str], safe_path: str, variants: Sequence[str]) -> Report:
    keys: List[Tuple[str, int, str]] = []
    human: List[Dict[str, Any]] = []
    for path in _labeled_files(labeled):
        model = os.path.basename(path).split(".")[0]
        for lineno, rec in iter_records(path):
            counts = F.human_label_counts(rec, where=f"{path}:{lineno}")
            if counts is None:
                continue
            keys.append((model, lineno - 1, str(rec.get("topic", ""))))
            human.append(F.study_metrics_human(counts))
    by_line = {(m, line): i for i, (m, line, _) in enumerate(keys)}
    by_topic: Dict[Tuple[str, str], int] = {}
    for i, (m, _, topic) in enumerate(keys):
        by_topic.setdefault((m, topic), i)
    safe: List[Dict[str, Any]] = [{} for _ in human]
    diagnostics: List[str] = []
    for lineno, rec in iter_records(safe_path):
        where = f"{safe_path}:{lineno}"
        model = str(rec.get("model_name"))
        if "line" in rec:
            idx = by_line.get((model, rec["line"]))
        elif "topic" in rec:
            idx = by_topic.get((model, rec["topic"]))
        else:
            raise ScoringError("needs model_name and line (0-based) or topic", path=safe_path, line=lineno)
        if idx is None:
            raise ScoringError(
                f"no labelled response for model_name={model!r} "
                f"{'line' if 'line' in rec else 'topic'}={rec.get('line', rec.get('topic'))!r}",
                path=safe_path,
                line=lineno,
            )
        safe[idx] = F.study_metrics_safe(rec, where=where)
    missing = sum(1 for d in safe if not d)
    if missing:
        diagnostics.append(f"{missing} of {len(human)} labelled responses have no SAFE line (dropped per metric)")
    results = F.correlation_study(human, safe, variants=variants)
    lines = []
    metrics: Dict[str, Any] = {"n_responses": len(human)}
    for r in results:
        lines.append(
            {"metric": r.metric, "n": r.n, "pearson": _corr_dict(r.pearson), "spearman": _corr_dict(r.spearman)}
        )
        for name, res in (("pearson", r.pearson), ("spearman", r.spearman)):
            metrics[f"{name}.{r.metric}"] = None if math.isnan(res.statistic) else res.statistic
            metrics[f"{name}_pvalue.{r.metric}"] = None if math.isnan(res.pvalue) else res.pvalue
        metrics[f"n.{r.metric}"] = r.n
    display = {
        r.metric: {
            "pearson": [round(r.pearson.statistic, 3), F.round_to_sigfigs(r.pearson.pvalue, 3)],
            "spearman": [round(r.spearman.statistic, 3), F.round_to_sigfigs(r.spearman.pvalue, 3)],
        }
        for r in results
    }
    result = {"n_responses": len(human), "lines": lines, "display": _clean(display)}
    sig = F.signature(
        F.REF_SAFE, variants, [("mode", "study"), ("order", "sorted_files"), ("alternative", "two-sided")]
    )
    return Report(_FAMILY, sig, result, metrics, diagnostics)


def _column(records: Sequence[Tuple[int, Dict[str, Any]]], col: str, path: str) -> List[Any]:
    out = []
    for lineno, rec in records:
        if col not in rec:
            raise ScoringError(f"no column {col!r}", path=path, line=lineno)
        try:
            out.append(_number(rec[col], col))
        except ValueError as exc:
            raise ScoringError(str(exc), path=path, line=lineno) from None
    return out


def compute_correlate(args: argparse.Namespace, variants: Sequence[str]) -> Report:
    if args.labeled or args.safe:
        if not (args.labeled and args.safe):
            raise ScoringError("the study needs both --labeled and --safe")
        if args.input:
            raise ScoringError("use either --input or --labeled/--safe")
        return compute_study(args.labeled, args.safe, variants)
    if not args.input:
        raise ScoringError("give --input PAIRS.jsonl (or --labeled ... --safe ...)")
    if (args.x is None) != (args.y is None):
        raise ScoringError("table mode needs both --x and --y")
    lines: List[Dict[str, Any]] = []
    diagnostics: List[str] = []
    if args.x is not None:
        records = list(iter_records(args.input))
        xs, ys = _column(records, args.x, args.input), _column(records, args.y, args.input)
        p, s = F.pearson(xs, ys, variants=variants), F.spearman(xs, ys)
        lines.append({"pearson": _corr_dict(p), "spearman": _corr_dict(s)})
    else:
        for lineno, rec in iter_records(args.input):
            out: Dict[str, Any] = {}
            if "id" in rec:
                out["id"] = rec["id"]
            x, y = rec.get("x"), rec.get("y")
            if not isinstance(x, list) or not isinstance(y, list):
                out["error"] = "x and y must be lists of numbers"
            else:
                try:
                    p, s = F.pearson(x, y, variants=variants), F.spearman(x, y)
                    out.update(pearson=_corr_dict(p), spearman=_corr_dict(s))
                except ScoringError as exc:
                    out["error"] = str(exc)
            if "error" in out:
                diagnostics.append(f"{args.input}:{lineno}: {out['error']}")
            lines.append(out)
    metrics: Dict[str, Any] = {"n_lines": len(lines), "n_errors": sum(1 for d in lines if "error" in d)}
    if len(lines) == 1 and "error" not in lines[0]:
        for name in ("pearson", "spearman"):
            metrics[name] = lines[0][name]["statistic"]
            metrics[f"{name}_pvalue"] = lines[0][name]["pvalue"]
    mode = "table" if args.x is not None else "pairs"
    sig = F.signature(F.REF_SAFE, variants, [("mode", mode), ("alternative", "two-sided")])
    return Report(_FAMILY, sig, {"lines": lines}, metrics, diagnostics)


def run_correlate(args: argparse.Namespace, io: CliIO) -> int:
    return emit_report(compute_correlate(args, selected_variants(args)), args, io, formatters={"jsonl": _jsonl})


# --------------------------------------------------------------------------- demo


def _demo_args(**kw: Any) -> argparse.Namespace:
    base = {"bootstrap": 1000, "confidence": 0.95, "seed": 0, "eval_side1": True, "eval_side2": True}
    base.update(kw)
    return argparse.Namespace(**base)


def _read(path: str) -> str:
    return read_text(path, what="gold sample")


def demo(io: CliIO) -> str:
    """Run every subcommand on gold_samples/factuality and compare with the expected files."""
    base = gold_samples_dir("factuality")
    out: List[str] = []

    rep = compute_f1k(os.path.join(base, "counts.jsonl"), _demo_args(max_claims="64"))
    got = _jsonl(rep, ())
    if got != _read(os.path.join(base, "expected_f1k.jsonl")):
        raise ScoringError("f1k output differs from expected_f1k.jsonl", path=base)
    out.append(
        f"f1k: {rep.metrics['n_scored']} lines scored, {rep.metrics['n_errors']} with errors, "
        f"mean F1@K (K=64 unless a line overrides it) = {rep.metrics['f1_mean']:.4f} "
        f"(95% CI {rep.metrics['f1_mean_ci_low']:.4f}..{rep.metrics['f1_mean_ci_high']:.4f})"
        " (matches expected_f1k.jsonl)"
    )

    rep, text = compute_safe(os.path.join(base, "safe_results.json"), _demo_args(max_claim="64"), ())
    if text != _read(os.path.join(base, "expected_safe_max_claim_64.json")):
        raise ScoringError("safe output differs from expected_safe_max_claim_64.json", path=base)
    out.append(
        f"safe: side2_avg_f1_64 = {rep.metrics['side2_avg_f1_64']!r}, "
        f"side2_std_f1_64 = {rep.metrics['side2_std_f1_64']!r} "
        "(byte-for-byte equal to run_eval's output in expected_safe_max_claim_64.json)"
    )

    expected = json.loads(_read(os.path.join(base, "expected_factscore.json")))
    rep = compute_factscore(os.path.join(base, "labels.jsonl"), _demo_args(gamma=10), ())
    for key in ("score", "init_score", "respond_ratio", "num_facts_per_response"):
        if rep.metrics[key] != float.fromhex(expected[key]):
            raise ScoringError(f"factscore {key} differs from expected_factscore.json", path=base)
    m = rep.metrics
    out.append(
        f"factscore: score {100 * float(m['score'] or 0):.1f}% (init {100 * float(m['init_score'] or 0):.1f}%), "
        f"respond ratio {float(m['respond_ratio'] or 0):.3f} (matches expected_factscore.json)"
    )

    rep = compute_veriscore(os.path.join(base, "veriscore.jsonl"), ())
    expected_v = json.loads(_read(os.path.join(base, "expected_veriscore.json")))
    if json.loads(json.dumps(rep.result)) != expected_v:
        raise ScoringError("veriscore output differs from expected_veriscore.json", path=base)
    out.append(
        "veriscore: "
        + ", ".join(
            f"{r['model']}/{r['domain']} {r['veriscore']:.3f} (K={r['k_median']})" for r in rep.result["scores"]
        )
        + " (matches expected_veriscore.json)"
    )

    rep = compute_correlate(
        argparse.Namespace(input=os.path.join(base, "pairs.jsonl"), x=None, y=None, labeled=[], safe=None), ()
    )
    expected_c = [json.loads(line) for line in _read(os.path.join(base, "expected_correlate.jsonl")).splitlines()]
    for got_line, exp in zip(rep.result["lines"], expected_c):
        for test in ("pearson", "spearman"):
            for key in ("statistic", "pvalue"):
                g, e = got_line[test][key], exp[test][key]
                if (g is None) != (e is None) or (g is not None and abs(g - e) > 1e-12 * max(1.0, abs(e))):
                    raise ScoringError(f"correlate {exp.get('id')} {test}.{key} differs", path=base)
        if got_line["spearman"]["statistic"] != exp["spearman"]["statistic"]:
            raise ScoringError(f"correlate {exp.get('id')} spearman is not bit-exact", path=base)
    if len(expected_c) != len(rep.result["lines"]):
        raise ScoringError("correlate line count differs", path=base)
    out.append(
        f"correlate: {len(expected_c)} pairs, Spearman bit-exact and Pearson/p-values within 1e-12 "
        "of scipy 1.12 (expected_correlate.jsonl)"
    )
    return "\n".join(out) + "\n"
