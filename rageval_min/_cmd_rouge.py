"""``rageval-min rouge``: ROUGE over a file of prediction/reference pairs."""

import argparse
import json
import os
from typing import Any, Callable, Dict, Iterator, List, Optional, TextIO, Tuple

from . import rouge
from ._cli_common import (
    CliIO,
    add_report_options,
    emit_report,
    gold_samples_dir,
    parse_gates,
    selected_variants,
    stream_output_path,
)
from ._extras import load_extra
from ._io import Problems, iter_records, open_output
from ._report import Report, render_text
from .errors import ScoringError
from .gates import check_gate_names, evaluate_gates

DEFAULT_TYPES = "rouge1,rouge2,rougeL,rougeLsum"
BACKENDS = ("stdlib", "rapidfuzz", "rouge-score")

ScoreFn = Callable[[List[str], str], Dict[str, rouge.Score]]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "rouge",
        help="ROUGE-N/L/Lsum exactly as rouge-score 0.1.2 (one JSON line per pair, or --summary)",
        description="Score each record's 'prediction' against its 'reference' (a string) or "
        "'references' (a list: the best by F-measure wins, first on ties) exactly as Google's "
        "rouge-score 0.1.2 does. Writes one JSON line per record, "
        '{TYPE: {"precision": P, "recall": R, "fmeasure": F}, ...}; with --summary, the means '
        "in --format instead. Gate names: TYPE.precision, TYPE.recall, TYPE.fmeasure (means), records.",
    )
    p.add_argument("--input", required=True, metavar="PAIRS.jsonl", help="records with prediction and reference(s)")
    p.add_argument(
        "--rouge-types",
        default=DEFAULT_TYPES,
        metavar="TYPES",
        help=f"comma-separated: rouge1..rouge9, rougeL, rougeLsum (default: {DEFAULT_TYPES})",
    )
    p.add_argument("--use-stemmer", action="store_true", help="Porter-stem tokens longer than 3 characters")
    p.add_argument(
        "--tokenizer",
        choices=rouge.TOKENIZERS,
        default="reference",
        help="reference: ASCII [a-z0-9] runs (default); unicode: letters/digits of every script, "
        "CJK one character per token (variant unicode_tokens)",
    )
    p.add_argument("--summary", action="store_true", help="print the means over all records instead of one line each")
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="stdlib",
        help="stdlib: the built-in engine (default); rapidfuzz: the same scores with rougeL's LCS "
        "length in compiled code (pip install 'rageval-min[fast]'); rouge-score: the official "
        "package (pip install 'rageval-min[rouge]')",
    )
    add_report_options(p, variants=(rouge.UNICODE_VARIANT,))
    p.set_defaults(func=run)


def _tokenizer(args: argparse.Namespace) -> str:
    if rouge.UNICODE_VARIANT in selected_variants(args):
        return "unicode"
    return str(args.tokenizer)


def parse_types(text: str) -> List[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise ScoringError("no rouge type given", field="--rouge-types")
    try:
        return rouge.validate_rouge_types(names)
    except ScoringError as exc:
        raise ScoringError(exc.msg, field="--rouge-types") from None


def make_score_fn(
    types: List[str], *, use_stemmer: bool, tokenizer: str, backend: str, lcs: Optional[rouge.LcsFn] = None
) -> ScoreFn:
    """The scoring function of ``backend``; ``lcs`` (from :func:`rouge.lcs_backend`) for the built-in engine."""
    if backend == "rouge-score":
        if tokenizer != "reference":
            raise ScoringError("the rouge-score backend has no unicode tokenizer", field="--backend")
        fn: ScoreFn = load_extra("rouge").make_scorer(types, use_stemmer=use_stemmer)
        return fn

    def stdlib(targets: List[str], prediction: str) -> Dict[str, rouge.Score]:
        if len(targets) == 1:
            return rouge.score(
                targets[0], prediction, rouge_types=types, use_stemmer=use_stemmer, tokenizer=tokenizer, lcs=lcs
            )
        return rouge.score_multi(
            targets, prediction, rouge_types=types, use_stemmer=use_stemmer, tokenizer=tokenizer, lcs=lcs
        )

    return stdlib


def _pair(rec: Dict[str, Any], path: str, line: int, problems: Problems) -> Optional[Tuple[List[str], str]]:
    pred = rec.get("prediction")
    if not isinstance(pred, str):
        what = "missing" if "prediction" not in rec else f"expected a string, got {type(pred).__name__}"
        problems.add(what, path=path, line=line, field="prediction")
        return None
    if "references" in rec and "reference" in rec:
        problems.add("give either reference or references, not both", path=path, line=line, field="references")
        return None
    if "references" in rec:
        refs = rec["references"]
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) for r in refs):
            problems.add("references must be a non-empty list of strings", path=path, line=line, field="references")
            return None
        return list(refs), pred
    ref = rec.get("reference")
    if not isinstance(ref, str):
        what = (
            "missing (give reference, a string, or references, a list)"
            if "reference" not in rec
            else f"expected a string, got {type(ref).__name__}"
        )
        problems.add(what, path=path, line=line, field="reference")
        return None
    return [ref], pred


def iter_scores(path: str, types: List[str], fn: ScoreFn) -> Iterator[Dict[str, rouge.Score]]:
    """Score every record of ``path``; bad records are reported together at the end."""
    problems = Problems()
    try:
        for line, rec in iter_records(path):
            pair = _pair(rec, path, line, problems)
            if problems:
                if problems.full:
                    break
                continue
            if pair is not None:
                try:
                    yield fn(pair[0], pair[1])
                except ScoringError as exc:
                    problems.add(exc.msg, path=path, line=line, field=exc.field)
    except ScoringError as exc:  # the reader's own problems (bad JSON, not an object, ...)
        if not problems:
            raise
        problems.add_error(exc)
    problems.raise_if_any()


def score_json(scores: Dict[str, rouge.Score]) -> Dict[str, Dict[str, Any]]:
    return {k: {"precision": s.precision, "recall": s.recall, "fmeasure": s.fmeasure} for k, s in scores.items()}


class _Means:
    """Running sums (left to right, then / count): constant memory."""

    def __init__(self, types: List[str]) -> None:
        self.types = types
        self.count = 0
        self.sums: Dict[str, List[float]] = {t: [0.0, 0.0, 0.0] for t in types}

    def add(self, scores: Dict[str, rouge.Score]) -> None:
        self.count += 1
        for t in self.types:
            acc = self.sums[t]
            s = scores[t]
            acc[0] += s.precision
            acc[1] += s.recall
            acc[2] += s.fmeasure

    def result(self) -> Dict[str, Any]:
        n = self.count
        means = {t: {"precision": v[0] / n, "recall": v[1] / n, "fmeasure": v[2] / n} for t, v in self.sums.items()}
        return {"records": n, "mean": means}

    def metrics(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"records": self.count}
        for t, v in self.sums.items():
            for i, key in enumerate(("precision", "recall", "fmeasure")):
                out[f"{t.strip()}.{key}"] = v[i] / self.count
        return out


def _signature(args: argparse.Namespace, types: List[str], tokenizer: str, backend_label: str) -> str:
    extra: List[Tuple[str, object]] = [("backend", backend_label)] if backend_label != "stdlib" else []
    return rouge.rouge_signature(
        rouge_types=types, use_stemmer=args.use_stemmer, tokenizer=tokenizer, extra_params=extra
    )


def compute_summary(path: str, types: List[str], fn: ScoreFn, signature: str) -> Report:
    means = _Means(types)
    for scores in iter_scores(path, types, fn):
        means.add(scores)
    if not means.count:
        raise ScoringError("no records", path=path)
    return Report(family="rouge", signature=signature, result=means.result(), metrics=means.metrics())


def write_lines(path: str, types: List[str], fn: ScoreFn, out: TextIO) -> _Means:
    means = _Means(types)
    for scores in iter_scores(path, types, fn):
        means.add(scores)
        out.write(json.dumps(score_json(scores), ensure_ascii=False) + "\n")
    return means


def run(args: argparse.Namespace, io: CliIO) -> int:
    types = parse_types(args.rouge_types)
    tokenizer = _tokenizer(args)
    lcs, label = rouge.lcs_backend(args.backend)
    fn = make_score_fn(types, use_stemmer=args.use_stemmer, tokenizer=tokenizer, backend=args.backend, lcs=lcs)
    signature = _signature(args, types, tokenizer, label)
    if args.summary:
        return emit_report(compute_summary(args.input, types, fn, signature), args, io)
    if args.format != "json":
        raise ScoringError("--format applies to --summary; without it the output is JSON Lines", field="--format")
    gates = parse_gates(args)
    with open_output(stream_output_path(args), io.stdout) as fh:
        means = write_lines(args.input, types, fn, fh)
    if not gates:
        return 0
    if not means.count:
        raise ScoringError("no records to gate on", path=args.input)
    metrics = means.metrics()
    check_gate_names(gates, metrics)
    failed = 0
    for o in evaluate_gates(gates, metrics):
        io.stderr.write(f"gate {o.text}: value {o.value!r}: {'PASS' if o.passed else 'FAIL'}\n")
        failed += o.passed is False
    return 1 if failed else 0


def demo(io: CliIO) -> str:
    base = gold_samples_dir("rouge")
    types = parse_types(DEFAULT_TYPES)
    fn = make_score_fn(types, use_stemmer=False, tokenizer="reference", backend="stdlib")
    pairs = os.path.join(base, "pairs.jsonl")
    lines = "".join(json.dumps(score_json(s), ensure_ascii=False) + "\n" for s in iter_scores(pairs, types, fn))
    with open(os.path.join(base, "expected.jsonl"), encoding="utf-8") as fh:
        expected = fh.read()
    if lines != expected:
        raise ScoringError("output differs from expected.jsonl", path=base)
    report = compute_summary(pairs, types, fn, rouge.rouge_signature(rouge_types=types))
    return render_text(report, ()) + "(per-pair output matches gold_samples/rouge/expected.jsonl)\n"
