"""``rageval-min rgb mix|label|score|report``: the RGB benchmark (see :mod:`rageval_min.rgb`).

All input files are JSON Lines (the reference's ``.json`` files are JSON Lines too).
Instances the reference would drop in its catch-all ``try`` are left out here as well, and
each one is named in a diagnostic; malformed input is a ScoringError (exit 2).
"""

import argparse
import json
import os
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from . import rgb
from ._cli_common import CliIO, add_report_options, emit_report, gold_samples_dir, selected_variants
from ._io import Problems, iter_records, open_output, read_text
from ._report import Report
from .errors import ScoringError

_FACTCHECKING_MSG = (
    "--factchecking is not offered: the reference's fact-checking mode reads "
    "config/instruction_fact.yaml, which the reference does not ship (it fails with FileNotFoundError)"
)

_RESULT_SUFFIXES = ("_result.json", "_chatgpt.json", "_chatgptresult.json")


# --------------------------------------------------------------------------- parsers


def _add_factchecking(p: argparse.ArgumentParser) -> None:
    p.add_argument("--factchecking", nargs="?", const="True", default=None, help=argparse.SUPPRESS)


def _add_dataset(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument(
        "--dataset",
        required=required,
        metavar="NAME",
        help="dataset name (en, zh, en_int, zh_int, en_fact, zh_fact, en_refine, zh_refine, ...); "
        "'zh' in NAME removes spaces from predictions, '_int'/'_fact' in NAME select the mixing "
        "branch, '_fact' adds the counterfactual keys"
        + ("" if required else "; default: parsed from the reference's prediction file name"),
    )


def register(sub: Any) -> None:
    p = sub.add_parser(
        "rgb",
        help="RGB benchmark: answer labels, noise robustness, negative rejection, integration, counterfactuals",
        description="RGB (chen700564/RGB@65ec39e) with bit-for-bit parity: seeded document mixing, "
        "per-answer labels and the reference's score object.",
    )
    rsub = p.add_subparsers(dest="rgb_command", metavar="SUBCOMMAND")
    rsub.required = True

    m = rsub.add_parser(
        "mix",
        help="pick and order the passages for each instance exactly as the reference does",
        description="Write one JSON line per instance, in input order: {id, query, answer, docs}. "
        "Reproduces random.seed(SEED) + processdata per instance bit for bit.",
    )
    m.add_argument(
        "--input",
        required=True,
        metavar="DATA.jsonl",
        help="dataset records (id, query, answer, positive, negative[, positive_wrong])",
    )
    _add_dataset(m, True)
    m.add_argument(
        "--noise-rate", type=float, default=0.0, metavar="R", help="share of negative passages (default: 0.0)"
    )
    m.add_argument("--passage-num", type=int, default=5, metavar="N", help="passages per instance (default: 5)")
    m.add_argument(
        "--correct-rate",
        type=float,
        default=0.0,
        metavar="C",
        help="share of correct passages in _fact sets (default: 0.0)",
    )
    m.add_argument(
        "--seed",
        type=int,
        default=rgb.DEFAULT_SEED,
        help=f"seed set before each instance (default: {rgb.DEFAULT_SEED})",
    )
    m.add_argument("--output", metavar="PATH", help="write to PATH atomically instead of stdout")
    _add_factchecking(m)
    m.set_defaults(func=run_mix)

    lab = rsub.add_parser(
        "label",
        help="label model outputs (1 found / 0 not found per answer, [-1] rejection) and the factual-error flag",
        description="Read records with 'prediction' and the ground truth ('ans' or 'answer'); write each "
        "record back with the normalized 'prediction', 'label' and 'factlabel'. A record the reference "
        "would drop is kept with label/factlabel null and 'rgb_skipped' giving the reason.",
    )
    lab.add_argument(
        "--input", required=True, metavar="PREDICTIONS.jsonl", help="records with prediction and ans/answer"
    )
    _add_dataset(lab, False)
    lab.add_argument(
        "--variant",
        action="append",
        default=[],
        choices=list(rgb.VARIANTS),
        metavar="NAME",
        help="opt-in variant; repeatable; one of: " + ", ".join(rgb.VARIANTS),
    )
    lab.add_argument(
        "--judge",
        choices=("reject", "fact"),
        help="also add 'judge_prompt' (and 'judge_template') for the LLM-judged evaluation",
    )
    lab.add_argument(
        "--judge-template",
        metavar="FILE",
        help="judge prompt template (placeholders {QUESTION} and {ANSWER}); default: the project's own wording",
    )
    lab.add_argument("--output", metavar="PATH", help="write to PATH atomically instead of stdout")
    _add_factchecking(lab)
    lab.set_defaults(func=run_label)

    sc = rsub.add_parser(
        "score",
        help="the reference's score object (all_rate, noise_rate, tt, nums[, fact_*])",
        description="Label the predictions (or use stored labels with --use-labels) and print the score "
        "object with the reference's keys, key order and value types. --format rgb prints the "
        "reference's _result.json text. With --judged, score stored judge outputs ('evaluation').",
    )
    sc.add_argument(
        "--input", required=True, metavar="PREDICTIONS.jsonl", help="records with prediction and ans/answer (or label)"
    )
    _add_dataset(sc, False)
    sc.add_argument(
        "--noise-rate",
        type=float,
        metavar="R",
        help="noise rate written to the output and deciding the noise-1 rule; default: the records' "
        "'noise_rate', else the file name",
    )
    sc.add_argument("--use-labels", action="store_true", help="use a record's stored 'label'/'factlabel' when present")
    sc.add_argument(
        "--judged",
        choices=("reject", "fact"),
        help="score stored judge outputs: reject = reject_evalue (Rej*), fact = fact_evalue (ED*, CR)",
    )
    add_report_options(sc, extra_formats=("rgb",), variants=rgb.VARIANTS)
    _add_factchecking(sc)
    sc.set_defaults(func=run_score)

    rp = rsub.add_parser(
        "report",
        help="the four RGB abilities from several prediction files, per model",
        description="Score several reference prediction files (prediction_{dataset}_{model}_temp{T}_noise{N}"
        "_passage{P}_correct{C}.json) and show noise robustness (accuracy per noise rate), negative "
        "rejection (noise 1.0), information integration (_int) and counterfactual robustness "
        "(_fact: error detection and correction rates) in one table.",
    )
    rp.add_argument(
        "--input",
        required=True,
        nargs="+",
        metavar="FILE",
        help="prediction files (names as the reference writes them)",
    )
    rp.add_argument("--use-labels", action="store_true", help="use stored 'label'/'factlabel' when present")
    add_report_options(rp, variants=rgb.VARIANTS, default_format="text")
    rp.set_defaults(func=run_report)

    from ._judge_families import register_rgb_judge

    register_rgb_judge(rsub)


# --------------------------------------------------------------------------- helpers


def _check_factchecking(args: argparse.Namespace) -> None:
    if getattr(args, "factchecking", None) is not None:
        raise ScoringError(_FACTCHECKING_MSG, field="--factchecking")


Row = Tuple[int, Dict[str, Any]]
Labelled = Tuple[int, Dict[str, Any], Optional[rgb.Label], Optional[str]]


def _read(path: str) -> Iterator[Row]:
    """Stream the records of a JSON Lines file (RGB's are named ``.json``).

    Problems are raised together at the end and nothing is yielded after the
    first, so a caller writing through :func:`atomic_writer` leaves no
    partial file behind.
    """
    return iter_records(path, fmt="jsonl")


def _who(rec: Dict[str, Any]) -> Optional[str]:
    return f"id={rec['id']}" if "id" in rec else None


def _note(path: str, line: int, rec: Dict[str, Any], msg: str) -> str:
    who = _who(rec)
    return f"{path}:{line}: " + (f"{who}: " if who else "") + msg


def _dataset(args: argparse.Namespace, path: str) -> str:
    if args.dataset:
        return str(args.dataset)
    try:
        return rgb.parse_prediction_filename(path).dataset
    except ScoringError:
        raise ScoringError(
            "--dataset is required (the file name is not a reference prediction file name)", path=path
        ) from None


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _label_rows(
    rows: Iterable[Row],
    path: str,
    notes: List[str],
    *,
    dataset: str,
    variants: Sequence[str],
    use_labels: bool,
) -> Iterator[Labelled]:
    """Label each row; yield ``(line, record, Label or None, skip reason or None)``.

    Skipped instances are appended to ``notes``; malformed records are collected and raised
    together at the end (nothing is yielded after the first).  With ``use_labels`` a
    record's stored ``label`` is used (``None`` = skipped earlier).
    """
    problems = Problems()
    fact = "_fact" in dataset

    def bad(msg: str, line: int, rec: Dict[str, Any], field: Optional[str]) -> None:
        problems.add(msg, path=path, line=line, record=_who(rec), field=field)

    for line, rec in rows:
        if problems.full:
            break
        if use_labels and "label" in rec:
            if rec["label"] is None:
                reason = str(rec.get("rgb_skipped") or "label is null")
                notes.append(_note(path, line, rec, f"skipped: {reason}"))
                if not problems:
                    yield line, rec, None, reason
                continue
            try:
                rgb.validate_stored_label(rec["label"], rec.get("factlabel"), fact=fact)
            except ScoringError as exc:
                bad(exc.msg, line, rec, exc.field)
                continue
            stored = rgb.Label(rec["label"], rec.get("factlabel", 0), rec.get("prediction", ""))
            if not problems:
                yield line, rec, stored, None
            continue
        if "prediction" not in rec:
            bad("record has no 'prediction'", line, rec, "prediction")
            continue
        if "ans" not in rec and "answer" not in rec:
            bad("record has neither 'ans' nor 'answer' (the ground truth)", line, rec, "ans")
            continue
        try:
            lab = rgb.label_prediction(rec["prediction"], rgb.ground_truth_of(rec), dataset=dataset, variants=variants)
        except rgb.InstanceSkipped as exc:
            notes.append(_note(path, line, rec, f"skipped (as the reference does): {exc.msg}"))
            if not problems:
                yield line, rec, None, exc.msg
            continue
        if not problems:
            yield line, rec, lab, None
    problems.raise_if_any()


def _noise_rate(args: argparse.Namespace, path: str) -> float:
    if args.noise_rate is not None:
        return float(args.noise_rate)
    seen = {
        rec["noise_rate"]
        for _, rec in _read(path)
        if "noise_rate" in rec
        and isinstance(rec["noise_rate"], (int, float))
        and not isinstance(rec["noise_rate"], bool)
    }
    if len(seen) == 1:
        return float(seen.pop())
    if len(seen) > 1:
        raise ScoringError(f"records have different noise_rate values {sorted(seen)}; pass --noise-rate", path=path)
    try:
        return rgb.parse_prediction_filename(path).noise_rate
    except ScoringError:
        raise ScoringError(
            "--noise-rate is required (no 'noise_rate' in the records or the file name)", path=path
        ) from None


def _metrics(obj: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    return {
        prefix + k: v for k, v in obj.items() if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
    }


# --------------------------------------------------------------------------- mix


def run_mix(args: argparse.Namespace, io: CliIO) -> int:
    _check_factchecking(args)
    # parameter errors first (before reading), as a usage error
    for name, value in (("--noise-rate", args.noise_rate), ("--correct-rate", args.correct_rate)):
        if not (0.0 <= value <= 1.0):
            raise ScoringError(f"must be in [0, 1], got {value}", field=name)
    if args.passage_num < 0:
        raise ScoringError(f"must be >= 0, got {args.passage_num}", field="--passage-num")
    notes: List[str] = []
    count = 0
    with open_output(args.output, io.stdout) as fh:
        for line, inst in _read(args.input):
            count += _mix_one(args, line, inst, fh, notes)
    params: List[Tuple[str, object]] = [
        ("dataset", args.dataset),
        ("noise_rate", args.noise_rate),
        ("passage_num", args.passage_num),
        ("correct_rate", args.correct_rate),
        ("seed", args.seed),
    ]
    io.stderr.write(f"rageval-min: rgb mix: {rgb.signature((), params)}: {count} instances, {len(notes)} skipped\n")
    for n in notes:
        io.stderr.write(f"rageval-min: rgb mix: note: {n}\n")
    return 0


def _mix_one(args: argparse.Namespace, line: int, inst: Dict[str, Any], fh: Any, notes: List[str]) -> int:
    try:
        missing = [k for k in ("id", "query", "answer") if k not in inst]
        if missing:
            raise rgb.InstanceSkipped(f"instance has no {', '.join(repr(k) for k in missing)}")
        docs = rgb.mix_documents(
            inst,
            dataset=args.dataset,
            noise_rate=args.noise_rate,
            passage_num=args.passage_num,
            correct_rate=args.correct_rate,
            seed=args.seed,
        )
    except rgb.InstanceSkipped as exc:
        notes.append(_note(args.input, line, inst, f"skipped (as the reference does): {exc.msg}"))
        return 0
    fh.write(_dumps({"id": inst["id"], "query": inst["query"], "answer": inst["answer"], "docs": docs}) + "\n")
    return 1


# --------------------------------------------------------------------------- label


def _read_template(path: Optional[str]) -> Optional[str]:
    return None if path is None else read_text(path, what="judge template")


def run_label(args: argparse.Namespace, io: CliIO) -> int:
    _check_factchecking(args)
    variants = rgb.check_variants(args.variant)
    if args.judge_template and not args.judge:
        raise ScoringError("--judge-template needs --judge reject|fact", field="--judge-template")
    template = _read_template(args.judge_template)
    dataset = _dataset(args, args.input)
    notes: List[str] = []
    labelled = _label_rows(_read(args.input), args.input, notes, dataset=dataset, variants=variants, use_labels=False)
    with open_output(args.output, io.stdout) as fh:
        for line, rec, lab, reason in labelled:
            fh.write(_dumps(_labelled_record(args, line, rec, lab, reason, template)) + "\n")
    io.stderr.write(
        "rageval-min: rgb label: "
        + rgb.signature(
            variants,
            [("dataset", dataset)]
            + ([("judge", args.judge), ("judge_template", rgb.template_id(template))] if args.judge else []),
        )
        + "\n"
    )
    for n in notes:
        io.stderr.write(f"rageval-min: rgb label: note: {n}\n")
    return 0


def _labelled_record(
    args: argparse.Namespace,
    line: int,
    rec: Dict[str, Any],
    lab: Optional[rgb.Label],
    reason: Optional[str],
    template: Optional[str],
) -> Dict[str, Any]:
    out = dict(rec)
    if lab is None:
        out["label"] = None
        out["factlabel"] = None
        out["rgb_skipped"] = reason
    else:
        out["prediction"] = lab.prediction
        out["label"] = lab.label
        out["factlabel"] = lab.factlabel
        if args.judge:
            query = rec.get("query")
            if not isinstance(query, str):
                raise ScoringError(
                    "record has no string 'query' (needed by the judge prompt)",
                    path=args.input,
                    line=line,
                    record=_who(rec),
                    field="query",
                )
            if args.judge == "reject":
                out["judge_prompt"] = rgb.build_reject_judge_prompt(query, lab.prediction, template=template)
            else:
                out["judge_prompt"] = rgb.build_fact_judge_prompt(lab.prediction, query=query, template=template)
            out["judge_template"] = rgb.template_id(template)
    return out


# --------------------------------------------------------------------------- score


def compute_score(
    path: str,
    *,
    dataset: Optional[str] = None,
    noise_rate: Optional[float] = None,
    use_labels: bool = False,
    judged: Optional[str] = None,
    variants: Sequence[str] = (),
) -> Report:
    """Score one prediction file into a :class:`Report` (``result`` = the reference's object)."""
    return _score_path(
        path, dataset=dataset, noise_rate=noise_rate, use_labels=use_labels, judged=judged, variants=variants
    )[0]


def _score_path(
    path: str,
    *,
    dataset: Optional[str],
    noise_rate: Optional[float],
    use_labels: bool,
    judged: Optional[str],
    variants: Sequence[str],
) -> Tuple[Report, Any, Set[str]]:
    """Score one file in one streaming pass (two when the noise rate comes from the records).

    Returns the report, the family's score object and the records' ``noise_rate`` values
    (as strings).
    """
    ns = argparse.Namespace(dataset=dataset, noise_rate=noise_rate)
    variants = rgb.check_variants(variants)
    ds = _dataset(ns, path)
    nr = _noise_rate(ns, path)
    notes: List[str] = []
    template_ids: Set[str] = set()
    record_rates: Set[str] = set()

    def results() -> Iterator[Dict[str, Any]]:
        for line, rec, lab, _ in _label_rows(
            _read(path), path, notes, dataset=ds, variants=variants, use_labels=use_labels
        ):
            if "noise_rate" in rec:
                record_rates.add(str(rec["noise_rate"]))
            if lab is None:
                continue
            item: Dict[str, Any] = {"label": lab.label, "factlabel": lab.factlabel}
            if "id" in rec:
                item["id"] = rec["id"]
            if judged:
                if "evaluation" not in rec:
                    raise ScoringError(
                        "record has no 'evaluation' (the stored judge output)",
                        path=path,
                        line=line,
                        record=_who(rec),
                        field="evaluation",
                    )
                if not isinstance(rec["evaluation"], str):
                    raise ScoringError(
                        "'evaluation' is not a string", path=path, line=line, record=_who(rec), field="evaluation"
                    )
                item["evaluation"] = rec["evaluation"]
                template_ids.add(str(rec.get("judge_template", "unrecorded")))
            yield item

    params: List[Tuple[str, object]] = [("dataset", ds), ("noise_rate", nr), ("use_labels", use_labels)]
    if judged:
        scored: Any = (
            rgb.score_reject_judged(results())
            if judged == "reject"
            else rgb.score_fact_judged(results(), noise_rate=nr)
        )
        ids = sorted(template_ids)
        params += [("judged", judged), ("judge_template", "+".join(ids) if ids else "unrecorded")]
    else:
        scored = rgb.score(results(), dataset=ds, noise_rate=nr, variants=variants)
    result = scored.to_dict()
    report = Report(
        family="rgb",
        signature=rgb.signature(variants, params),
        result=result,
        metrics=_metrics(result),
        diagnostics=notes + list(scored.diagnostics),
    )
    return report, scored, record_rates


def run_score(args: argparse.Namespace, io: CliIO) -> int:
    _check_factchecking(args)
    report = compute_score(
        args.input,
        dataset=args.dataset,
        noise_rate=args.noise_rate,
        use_labels=args.use_labels,
        judged=args.judged,
        variants=selected_variants(args),
    )

    def _rgb(rep: Report, outcomes: Any) -> str:
        # the exact _result.json text (no trailing newline in a file, as the reference writes it)
        return rgb.format_result_json(rep.result)

    if args.format == "rgb":
        for d in report.diagnostics:
            io.stderr.write(f"rageval-min: rgb score: note: {d}\n")
    return emit_report(report, args, io, formatters={"rgb": _rgb}, stdout_suffix={"rgb": "\n"})


# --------------------------------------------------------------------------- report


def compute_report(paths: Sequence[str], *, use_labels: bool = False, variants: Sequence[str] = ()) -> Report:
    """Score every prediction file and group the runs into the four abilities."""
    variants = rgb.check_variants(variants)
    runs: List[Tuple[rgb.RunName, rgb.Scores]] = []
    run_items: List[Dict[str, Any]] = []
    metrics: Dict[str, Any] = {}
    diagnostics: List[str] = []
    seen: Dict[rgb.RunName, str] = {}
    names: List[rgb.RunName] = []
    for path in paths:
        if os.path.basename(path).endswith(_RESULT_SUFFIXES):
            raise ScoringError("give prediction files, not score or judge files", path=path)
        names.append(rgb.parse_prediction_filename(path))
    temps: Dict[str, Set[float]] = {}
    for n in names:
        temps.setdefault(n.model, set()).add(n.temp)
    for path, name in zip(paths, names):
        if len(temps[name.model]) > 1:  # keep runs at different temperatures apart
            name = name._replace(model=f"{name.model}@temp{name.temp}")
        if name in seen:
            raise ScoringError(f"the same run as {seen[name]}", path=path)
        seen[name] = path
        rep, sc, rows_nr = _score_path(
            path,
            dataset=name.dataset,
            noise_rate=name.noise_rate,
            use_labels=use_labels,
            judged=None,
            variants=variants,
        )
        if rows_nr and rows_nr != {str(name.noise_rate)}:
            diagnostics.append(
                f"{path}: records' noise_rate {', '.join(sorted(rows_nr))} differs from the file name "
                f"({name.noise_rate}); the file name is used"
            )
        diagnostics += rep.diagnostics
        res = rep.result
        runs.append((name, sc))
        stem = (
            f"{name.model}/{name.dataset}/noise{name.noise_rate}_passage{name.passage_num}_correct{name.correct_rate}/"
        )
        metrics.update(_metrics(res, stem))
        run_items.append(
            {
                "file": path,
                "model": name.model,
                "dataset": name.dataset,
                "temp": name.temp,
                "noise_rate": name.noise_rate,
                "passage_num": name.passage_num,
                "correct_rate": name.correct_rate,
                "scores": res,
            }
        )
    if "noise1_reject_only" not in variants and any(
        rgb.dataset_branch(n.dataset) == "default" and n.noise_rate == 1 for n, _ in runs
    ):
        diagnostics.append(
            "negative rejection is the reference's 'rejected or correct' rate at noise 1.0 "
            "(--variant noise1_reject_only counts rejections only)"
        )
    table = rgb.abilities_table(runs)
    params: List[Tuple[str, object]] = [("files", len(paths)), ("use_labels", use_labels)]
    return Report(
        family="rgb",
        signature=rgb.signature(variants, params),
        result={"abilities": table, "runs": run_items},
        metrics=metrics,
        diagnostics=diagnostics,
    )


def _fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


def _table_lines(rows: Sequence[Sequence[str]]) -> List[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def render_report_text(report: Report, outcomes: Any) -> str:
    """The four abilities as one aligned table (values to 4 decimals; JSON has them unrounded)."""
    rows = [("model", "lang", "ability", "setting", "value")]
    rows += [(m, lang, ab, st, _fmt(v)) for m, lang, ab, st, v in rgb.ability_rows(report.result["abilities"])]
    lines = ["rageval-min rgb report", f"signature: {report.signature}", ""]
    lines += _table_lines(rows)
    if outcomes:
        lines.append("")
        lines += _table_lines(
            [("gate", "value", "status")] + [(o.text, _fmt(o.value), "pass" if o.passed else "FAIL") for o in outcomes]
        )
    lines += [f"note: {d}" for d in report.diagnostics]
    if outcomes:
        lines += ["", "result: " + ("PASS" if all(o.passed for o in outcomes) else "FAIL")]
    return "\n".join(lines) + "\n"


def render_report_markdown(report: Report, outcomes: Any) -> str:
    ok = all(o.passed for o in outcomes)
    lines = [
        f"### rageval-min rgb report: {'PASS' if ok else 'FAIL'}",
        "",
        "| model | lang | ability | setting | value |",
        "| --- | --- | --- | --- | ---: |",
    ]
    for m, lang, ab, st, v in rgb.ability_rows(report.result["abilities"]):
        lines.append(f"| {m.replace('|', '/')} | {lang} | {ab} | {st} | {_fmt(v)} |")
    if outcomes:
        lines += ["", "| gate | value | status |", "| --- | ---: | --- |"]
        lines += [f"| `{o.text}` | {_fmt(o.value)} | {'pass' if o.passed else 'FAIL'} |" for o in outcomes]
    lines.append("")
    lines += [f"- {d}" for d in report.diagnostics]
    lines.append(f"<sub>`{report.signature}`</sub>")
    return "\n".join(lines) + "\n"


def run_report(args: argparse.Namespace, io: CliIO) -> int:
    report = compute_report(args.input, use_labels=args.use_labels, variants=selected_variants(args))
    return emit_report(report, args, io, formatters={"text": render_report_text, "markdown": render_report_markdown})


# --------------------------------------------------------------------------- demo


def demo(io: CliIO) -> str:
    """Mix, score and report on gold_samples/rgb (synthetic); raise if anything differs."""
    base = gold_samples_dir("rgb")
    out: List[str] = []

    def _expect(got: str, name: str) -> None:
        with open(os.path.join(base, name), encoding="utf-8") as fh:
            if fh.read() != got:
                raise ScoringError(f"output differs from {name}", path=base)

    for src, ds, noise, passages, correct, expected in (
        ("data_en.jsonl", "en", 0.4, 3, 0.0, "expected_mix_en.jsonl"),
        ("data_zh_fact.jsonl", "zh_fact", 0.2, 4, 0.4, "expected_mix_zh_fact.jsonl"),
    ):
        got = []
        skipped = 0
        for _, inst in _read(os.path.join(base, src)):
            try:
                docs = rgb.mix_documents(inst, dataset=ds, noise_rate=noise, passage_num=passages, correct_rate=correct)
            except rgb.InstanceSkipped:
                skipped += 1
                continue
            got.append(
                _dumps({"id": inst["id"], "query": inst["query"], "answer": inst["answer"], "docs": docs}) + "\n"
            )
        _expect("".join(got), expected)
        out.append(
            f"mix {src} ({ds}, noise {noise}, {passages} passages, correct {correct}): "
            f"{len(got)} instances, {skipped} skipped; matches {expected}"
        )
    preds = sorted(f for f in os.listdir(base) if f.startswith("prediction_") and not f.endswith(_RESULT_SUFFIXES))
    for f in preds:
        rep = compute_score(os.path.join(base, f))
        expected = f[: -len(".json")] + "_result.json"
        _expect(rgb.format_result_json(rep.result), expected)
        out.append(f"score {f}: {_dumps(rep.result)}; matches {expected}")
    report = compute_report([os.path.join(base, f) for f in preds])
    _expect(json.dumps(report.result["abilities"], indent=2, ensure_ascii=False) + "\n", "expected_abilities.json")
    text = render_report_text(report, ())
    return "\n".join(out) + "\n\n" + text + "(matches gold_samples/rgb/expected_*)\n"
