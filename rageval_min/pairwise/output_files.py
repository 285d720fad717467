"""Mirrors open-compass/DevBench@bb593c1:llm_judge/subeval/subjective/analyze_util.py: its output files.

``pairwise score --output-dir`` writes what the reference's ``analyze_pipe``
dumps next to its record: ``log.txt`` (the length table, the count lines and
the two old-version tables, as ``tabulate(tablefmt='pretty')`` prints them),
``length_stats.csv``, ``consistent_cmp.tsv``/``inconsistent_cmp.tsv`` (only
when some row is inconsistent, as the reference), ``win+halfdraw.xlsx``,
``win+bothgood.xlsx``, and the new win rates of ``calculate_winrate_new.py``
as ``win_rate_with_tie.csv``/``win_rate_without_tie.csv``.
"""

import csv
import io as _stdio
import os
from typing import Any, List, Mapping, Sequence

from .._output import atomic_writer
from ..errors import ScoringError
from .analyze_util import log_lines
from .sub_eval import PairwiseResult

__all__ = ["write_output_dir"]


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


def write_output_dir(directory: str, res: PairwiseResult) -> List[str]:
    """Write the reference's output files into ``directory``; returns the names written."""
    if not os.path.isdir(directory):
        try:
            os.makedirs(directory)
        except OSError as exc:
            raise ScoringError(f"cannot create the output directory: {exc}", path=directory) from None
    result = res.result
    written = [_write_log(directory, result), _write_length_stats(directory, result["length_stats"])]
    if res.inconsistent_rows:
        written += _write_partitions(directory, res)
    written += _write_tables(directory, result["old_version"])
    written += _write_rates(directory, result["new_version"])
    return written


def _write_log(directory: str, result: Mapping[str, Any]) -> str:
    refm = result["refm"]
    ls = result["length_stats"]
    log = ["Reponse length", _pretty(ls["columns"], ls["rows"])]
    log += log_lines(result["counts"])
    titles = {"win+halfdraw": f"(Win + Draw / 2) w. {refm}: ", "win+bothgood": f"(Win + Both Good) w. {refm}: "}
    for name, table in result["old_version"].items():
        log.append(titles[name])
        log.append(_pretty(table["columns"], table["rows"]))
    with atomic_writer(os.path.join(directory, "log.txt")) as fh:
        fh.write("\n".join(log) + "\n")
    return "log.txt"


def _write_length_stats(directory: str, ls: Mapping[str, Any]) -> str:
    with atomic_writer(os.path.join(directory, "length_stats.csv")) as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["model", "mean", "std"])
        for m, mean, std in ls["rows"]:
            w.writerow([m, repr(mean), repr(std)])
    return "length_stats.csv"


def _write_partitions(directory: str, res: PairwiseResult) -> List[str]:
    written: List[str] = []
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
    return written


def _write_tables(directory: str, old: Mapping[str, Any]) -> List[str]:
    from .._xlsx import write_xlsx

    written: List[str] = []
    for name, table in old.items():
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
    return written


def _write_rates(directory: str, new: Mapping[str, Any]) -> List[str]:
    written: List[str] = []
    heads = {"with_tie": "WinRateWithTie", "without_tie": "WinRateWithoutTie"}
    for key, rates in new.items():
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
