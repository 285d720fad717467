"""``rageval-min pairwise``: DevBench SubEval pairwise judge (prompts, score)."""

import argparse
import csv
import io as _stdio
import json
import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import pairwise
from ._cli_common import CliIO, add_report_options, emit_report, gold_samples_dir, selected_variants
from ._extras import load_extra, pip_hint
from ._io import atomic_writer, open_output, read_text
from ._report import Report, render_text
from .errors import ScoringError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "pairwise",
        help="pairwise LLM-judge win rates with swap consistency (DevBench SubEval)",
        description="Build pairwise judge inputs from an answer table, and score judge outputs "
        "exactly as DevBench SubEval does (old float32 tables and the paper's new win rates).",
    )
    psub = p.add_subparsers(dest="pairwise_command", metavar="SUBCOMMAND")
    psub.required = True

    pr = psub.add_parser(
        "prompts",
        help="write one judge input per comparison (cmp_index, both orders, EM rows marked)",
        description="Read the input table (question, index, evaluating_guidance, task, "
        "reference_answer, answer-{model}) and write one comparison per line. Exact-match rows "
        "are marked (exact_match: true, prompt: null) and must not be sent to a judge.",
    )
    pr.add_argument(
        "--input", required=True, metavar="TABLE", help="input table: .xlsx (first sheet), .csv, .tsv, .jsonl or .json"
    )
    pr.add_argument("--refm", required=True, metavar="MODEL", help="the reference model")
    pr.add_argument(
        "--model",
        action="append",
        default=None,
        metavar="MODEL",
        help="model to compare with refm; repeatable (default: every answer-* column except refm, in column order)",
    )
    pr.add_argument(
        "--nopt", type=int, choices=(2, 3, 4), default=2, help="number of answer options in the prompt (default: 2)"
    )
    pr.add_argument(
        "--mode",
        choices=("dual", "random"),
        default="dual",
        help="dual: both presentation orders (default); random: one order drawn "
        "with numpy's legacy generator (the reference's CLI default)",
    )
    pr.add_argument(
        "--seed", type=int, default=2680, help="seed of random mode; negative swaps model and refm (default: 2680)"
    )
    pr.add_argument(
        "--judge-template",
        metavar="FILE",
        help="judge prompt template (placeholders: <Evaluating Guidance>, "
        "{{question}}, {{answer1}}, {{answer2}}, {{reference_answer}}, "
        "{{#reference_answer}}...{{/reference_answer}}); default: our own wording",
    )
    pr.add_argument("--dump-template", action="store_true", help="print the built-in template for --nopt and exit")
    pr.add_argument(
        "--output",
        metavar="PATH",
        help="write here (atomically) instead of stdout; a .tsv path gets the "
        "reference's 9-column infer-input table instead of JSONL",
    )
    pr.add_argument(
        "--variant",
        action="append",
        default=[],
        choices=["strict_ids"],
        help="strict_ids: reject ';' inside index or model names",
    )
    pr.set_defaults(func=run_prompts)

    sc = psub.add_parser(
        "score",
        help="score judge outputs: counts, consistency, old tables, new win rates, lengths",
        description="Score a judge record (the reference's record TSV, or JSONL rows with the "
        "comparison columns and a judge column) exactly as DevBench SubEval does.",
    )
    sc.add_argument(
        "--record",
        required=True,
        metavar="RECORD",
        help="judge record: .tsv (the reference's), .csv, .jsonl, .json or .xlsx",
    )
    sc.add_argument("--nopt", type=int, choices=(2, 3, 4), required=True, help="number of options the judge was given")
    sc.add_argument("--refm", metavar="MODEL", help="reference model (default: the one model in every comparison)")
    sc.add_argument(
        "--judge-column",
        metavar="NAME",
        help="column holding the judge output (default: the only non-comparison column)",
    )
    sc.add_argument(
        "--extra",
        action="append",
        default=[],
        choices=list(pairwise.EXTRAS),
        metavar="NAME",
        help="opt-in extra output, repeatable: " + ", ".join(pairwise.EXTRAS),
    )
    sc.add_argument(
        "--lengths",
        choices=("chars", "tokens"),
        default="chars",
        help="answer length unit: chars (default) or tiktoken cl100k tokens as the "
        f"reference ({pip_hint('tokens')}; tiktoken downloads its BPE file on first use)",
    )
    sc.add_argument(
        "--failure-limit",
        type=int,
        default=5,
        metavar="N",
        help="error out when N or more judge calls failed (default: 5, the reference's)",
    )
    sc.add_argument(
        "--judge-template",
        metavar="FILE",
        help="the template the judge inputs were built with (recorded in the signature)",
    )
    sc.add_argument(
        "--output-dir",
        metavar="DIR",
        help="also write the reference's files: log.txt, length_stats.csv, "
        "consistent_cmp.tsv/inconsistent_cmp.tsv, win+halfdraw.xlsx, "
        "win+bothgood.xlsx, win_rate_with_tie.csv, win_rate_without_tie.csv",
    )
    add_report_options(sc, variants=pairwise.VARIANTS)
    sc.set_defaults(func=run_score)

    from ._judge_families import register_pairwise_judge

    register_pairwise_judge(psub)


# --------------------------------------------------------------------------- prompts


def _read_template(path: Optional[str]) -> Optional[str]:
    if path is None:
        return None
    return pairwise.load_template(read_text(path, what="judge template"), path=path)


def run_prompts(args: argparse.Namespace, io: CliIO) -> int:
    if args.dump_template:
        with open_output(args.output, io.stdout) as fh:
            fh.write(pairwise.builtin_template(args.nopt))
        return 0
    template = _read_template(args.judge_template)
    rows = [r for _, r in pairwise.read_table(args.input)]
    diags: List[str] = []
    comps = pairwise.build_comparisons(
        rows,
        refm=args.refm,
        models=args.model,
        mode=args.mode,
        seed=args.seed,
        strict_ids="strict_ids" in (args.variant or []),
        diagnostics=diags,
    )
    n_em = sum(1 for c in comps if c.exact_match)
    with open_output(args.output, io.stdout) as fh:
        if args.output and args.output.lower().endswith(".tsv"):
            pairwise.infer_input_tsv(comps, fh)
        else:
            for c in comps:
                rec = c.as_record()
                rec["prompt"] = None if c.exact_match else pairwise.render_prompt(c, nopt=args.nopt, template=template)
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    for d in diags:
        io.stderr.write(f"note: {d}\n")
    io.stderr.write(
        f"{len(comps)} comparisons ({n_em} exact matches, not for the judge); "
        f"template={pairwise.template_id(template)}\n"
    )
    return 0


# --------------------------------------------------------------------------- score


def load_token_length() -> Callable[[str], int]:
    """The cl100k_base length adapter of the ``tokens`` extra."""
    fn: Callable[[], Callable[[str], int]] = getattr(load_extra("tokens"), "cl100k_length")
    return fn()


def compute(
    record: str,
    *,
    nopt: int,
    refm: Optional[str] = None,
    judge_column: Optional[str] = None,
    variants: Sequence[str] = (),
    extras: Sequence[str] = (),
    lengths: str = "chars",
    failure_limit: int = 5,
    judge_template: Optional[str] = None,
) -> Tuple[Report, pairwise.PairwiseResult]:
    recs = [r for _, r in pairwise.read_table(record)]
    length = load_token_length() if lengths == "tokens" else None
    res = pairwise.score(
        recs,
        nopt=nopt,
        refm=refm,
        judge_column=judge_column,
        variants=variants,
        extras=extras,
        length=length,
        length_unit=lengths,
        failure_cnt=failure_limit,
        judge_template=judge_template,
    )
    report = Report(
        family="pairwise",
        signature=res.signature,
        result=res.result,
        metrics=dict(res.metrics),
        diagnostics=list(res.diagnostics),
    )
    return report, res


def _pretty(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A ``tabulate(tablefmt='pretty')``-like table with the pandas index column."""
    cells = [[""] + list(header)] + [
        [str(i)] + [v if isinstance(v, str) else repr(v) for v in r] for i, r in enumerate(rows)
    ]
    widths = [max(len(r[c]) for r in cells) for c in range(len(cells[0]))]

    def line(r: Sequence[str]) -> str:
        out = []
        for text, w in zip(r, widths):
            left = (w - len(text)) // 2
            out.append(" " * (left + 1) + text + " " * (w - len(text) - left + 1))
        return "|" + "|".join(out) + "|"

    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    body = [sep, line(cells[0]), sep] + [line(r) for r in cells[1:]] + [sep]
    return "\n".join(body)


def write_output_dir(directory: str, res: pairwise.PairwiseResult, report: Report) -> List[str]:
    """Write the reference's output files into ``directory``; returns the names written."""
    from ._xlsx import write_xlsx

    if not os.path.isdir(directory):
        try:
            os.makedirs(directory)
        except OSError as exc:
            raise ScoringError(f"cannot create the output directory: {exc}", path=directory) from None
    result = res.result
    refm = result["refm"]
    written: List[str] = []
    ls = result["length_stats"]
    log = ["Reponse length", _pretty(ls["columns"], ls["rows"])]
    log += pairwise.log_lines(result["counts"])
    titles = {"win+halfdraw": f"(Win + Draw / 2) w. {refm}: ", "win+bothgood": f"(Win + Both Good) w. {refm}: "}
    for name, table in result["old_version"].items():
        log.append(titles[name])
        log.append(_pretty(table["columns"], table["rows"]))
    with atomic_writer(os.path.join(directory, "log.txt")) as fh:
        fh.write("\n".join(log) + "\n")
    written.append("log.txt")

    with atomic_writer(os.path.join(directory, "length_stats.csv")) as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["model", "mean", "std"])
        for m, mean, std in ls["rows"]:
            w.writerow([m, repr(mean), repr(std)])
    written.append("length_stats.csv")

    if res.inconsistent_rows:
        for name, rows in (
            ("consistent_cmp.tsv", res.consistent_rows),
            ("inconsistent_cmp.tsv", res.inconsistent_rows),
        ):
            with atomic_writer(os.path.join(directory, name)) as fh:
                w = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_ALL, lineterminator="\n")
                cols = list(rows[0].keys()) if rows else []
                w.writerow(cols)
                for r in rows:
                    w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
            written.append(name)

    for name, table in result["old_version"].items():
        buf = _stdio.BytesIO()
        write_xlsx(buf, table["columns"], table["rows"])
        path = os.path.join(directory, f"{name}.xlsx")
        try:
            tmp = path + ".tmp"
            with open(tmp, "wb") as bfh:
                bfh.write(buf.getvalue())
            os.replace(tmp, path)
        except OSError as exc:
            raise ScoringError(f"cannot write: {exc}", path=path) from None
        written.append(f"{name}.xlsx")

    heads = {"with_tie": "WinRateWithTie", "without_tie": "WinRateWithoutTie"}
    for key, rates in result["new_version"].items():
        name = f"win_rate_{key}.csv"
        with atomic_writer(os.path.join(directory, name)) as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["Metric;Model", heads[key]])
            # pandas gives the column one dtype: one float makes every int 0 print as 0.0.
            as_float = any(isinstance(v, float) for v in rates.values())
            for k, v in rates.items():
                w.writerow([k, repr(float(v) if as_float else v)])
        written.append(name)
    return written


def run_score(args: argparse.Namespace, io: CliIO) -> int:
    template = _read_template(args.judge_template)
    report, res = compute(
        args.record,
        nopt=args.nopt,
        refm=args.refm,
        judge_column=args.judge_column,
        variants=selected_variants(args),
        extras=sorted(set(args.extra or [])),
        lengths=args.lengths,
        failure_limit=args.failure_limit,
        judge_template=template,
    )
    if args.output_dir:
        write_output_dir(args.output_dir, res, report)
    return emit_report(report, args, io)


# --------------------------------------------------------------------------- demo


def check_against_expected(result: Mapping[str, Any], expected: Mapping[str, Any]) -> List[str]:
    """Differences between a score result and a reference ``expected_values.json``
    (old tables compared as maps by model, new rates as maps, log lines exactly)."""
    problems: List[str] = []
    if pairwise.log_lines(result["counts"]) != expected["log_lines"]:
        problems.append("log lines differ")
    for name, et in expected["old_version"].items():
        got = result["old_version"][name]
        if got["columns"] != et["columns"]:
            problems.append(f"{name}: columns differ")
        g: Dict[str, Any] = {r[0]: r[1:] for r in got["rows"]}
        e: Dict[str, Any] = {r[0]: r[1:] for r in et["rows"]}
        if g != e:
            problems.append(f"{name}: rows differ")
    if isinstance(expected["new_version"], dict):
        for k, ev in expected["new_version"].items():
            gv = result["new_version"][k]
            if dict(gv) != ev or any(type(gv[x]) is not type(ev[x]) for x in ev):
                problems.append(f"new_version {k} differs")
    return problems


def demo(io: CliIO) -> str:
    base = gold_samples_dir("pairwise")
    report, res = compute(
        os.path.join(base, "record_fakejudge_2.tsv"), nopt=2, refm="ref", extras=("unparseable_share",)
    )
    with open(os.path.join(base, "expected_values.json"), encoding="utf-8") as fh:
        expected = json.load(fh)
    problems = check_against_expected(res.result, expected)
    if problems:
        raise ScoringError("output differs from expected_values.json: " + "; ".join(problems), path=base)
    shown = {
        k: v
        for k, v in report.metrics.items()
        if ";" not in k or k.startswith("with_tie;") or (k.startswith("win+halfdraw;") and k.endswith(";Overall-lang"))
    }
    brief = report._replace(metrics=shown)
    return (
        render_text(brief, ()) + "(log lines, old-version tables and new-version rates match "
        "gold_samples/pairwise/expected_values.json)\n"
    )
