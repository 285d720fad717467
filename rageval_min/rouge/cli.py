"""``rageval-min rouge``: ROUGE over a file of prediction/reference pairs (thin CLI over :mod:`rageval_min.rouge`)."""

from __future__ import annotations

import argparse
import json
from operator import itemgetter

from .. import rouge
from .._cli_common import (
    CliIO,
    add_report_options,
    emit_report,
    item_sink,
    prepare,
    report_gates,
    selected_variants,
    stream_output_path,
)
from .._contract import ItemRow
from .._output import open_output
from .._speedups_loader import kernels
from ..errors import ScoringError
from ..gates import evaluate_gates
from ..report import Report
from .accumulator import _row_spec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, List, Optional

DEFAULT_TYPES = "rouge1,rouge2,rougeL,rougeLsum"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "rouge",
        help="ROUGE-N/L/Lsum exactly as rouge-score 0.1.2 (one JSON line per pair, or --summary)",
        description="Score each record's 'prediction' against its 'reference' (a string) or "
        "'references' (a list: the best by F-measure wins, first on ties) exactly as Google's "
        "rouge-score 0.1.2 does. Writes one JSON line per record, "
        '{TYPE: {"precision": P, "recall": R, "fmeasure": F}, ...}; with --summary, the means '
        "in --format instead. Gate names: TYPE.precision, TYPE.recall, TYPE.fmeasure (means), records. "
        "--per-item PATH writes one flat row per record: its id (or line), then TYPE.precision, ...",
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
        choices=rouge.BACKENDS,
        default="stdlib",
        help="stdlib: the built-in engine (default); rapidfuzz: the same scores with rougeL's LCS "
        "length in compiled code (pip install 'rageval-min[fast]'); rouge-score: the official "
        "package (pip install 'rageval-min[rouge]')",
    )
    add_report_options(p, variants=rouge.VARIANTS, per_item=True)
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


#: Lines per write of the JSON Lines output.
_BATCH = 64


def _line_writer(types: List[str], backend: str) -> Callable[[ItemRow], str]:
    """The JSON line of one item row: ``json.dumps(rouge.reference_json(row, types),
    ensure_ascii=False)``.  The built-in engine's scores are plain floats and int zeros, always
    finite, which ``json.dumps`` writes as their ``repr``: one format string with the names
    written once does the same (any other value takes ``json.dumps``), or the C kernels'
    ``join_reprs`` of the same parts and values (the same text, repr's digits made faster)."""

    def dumped(row: ItemRow) -> str:
        return json.dumps(rouge.reference_json(row, types), ensure_ascii=False) + "\n"

    if backend == "rouge-score":
        return dumped
    spec = _row_spec(tuple(types))
    keys = [k for _, kp, kr, kf in spec for k in (kp, kr, kf)]
    values_of = itemgetter(*keys)  # a tuple: there are at least three keys
    head = ", ".join(
        json.dumps(raw, ensure_ascii=False) + ': {"precision": %r, "recall": %r, "fmeasure": %r}' for raw, *_ in spec
    )
    template = "{" + head + "}\n"
    parts = tuple(template.split("%r"))  # the names hold no "%" (validated rouge types)
    c = kernels()
    join = c.join_reprs if c is not None and len(parts) == len(keys) + 1 else None
    finite = frozenset((float, int))

    def line(row: ItemRow) -> str:
        values = values_of(row)
        if finite.issuperset(map(type, values)):
            try:
                total = sum(values)  # finite exactly when every value is (NaN and inf carry over)
            except OverflowError:  # an int too large for a float: json.dumps decides
                return dumped(row)
            if total - total == 0:
                text = join(parts, values) if join is not None else None
                return text if text is not None else template % values  # type: ignore[no-any-return]
        return dumped(row)

    return line


def run(args: argparse.Namespace, io: CliIO) -> int:
    types = parse_types(args.rouge_types)
    gates = prepare(args, inputs=[args.input], metric_names=rouge.metric_names(types))
    tokenizer = _tokenizer(args)
    if args.backend == "rouge-score" and tokenizer != "reference":
        raise ScoringError("the rouge-score backend has no unicode tokenizer", field="--backend")

    def score(on_item: Optional[Callable[[ItemRow], None]]) -> Report:
        return rouge.score_file(
            args.input,
            rouge_types=types,
            use_stemmer=args.use_stemmer,
            tokenizer=tokenizer,
            backend=args.backend,
            on_item=on_item,
        )

    if args.summary:
        with item_sink(args.per_item) as on_item:
            report = score(on_item)
        return emit_report(report, args, io)
    if args.format != "json":
        raise ScoringError("--format applies to --summary; without it the output is JSON Lines", field="--format")
    # Without --summary the output is one rouge-score-shaped JSON line per record; gates apply to the means.
    line = _line_writer(types, args.backend)
    with item_sink(args.per_item) as sink, open_output(stream_output_path(args), io.stdout) as fh:
        lines: List[str] = []  # written _BATCH at a time: one write per batch, not per record

        def on_item(row: ItemRow) -> None:
            if sink is not None:
                sink(row)
            lines.append(line(row))
            if len(lines) == _BATCH:
                fh.write("".join(lines))
                lines.clear()

        try:
            report = score(on_item)
        finally:  # what was scored is written whatever stops the run, as when written line by line
            if lines:
                fh.write("".join(lines))
    return report_gates(report, evaluate_gates(gates, report.metrics), io)
