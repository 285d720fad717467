"""The registry: the one place in shared code that names the commands and the families.

Every shared layer derives from :data:`COMMANDS`, one row per top-level command:

* the CLI parser: ``--help`` lists each row's ``summary`` without importing
  anything, and a run imports only the ``cli`` module of its own command (which
  has ``register(subparsers)``);
* the public face: ``rageval_min.<name>`` for every row with a ``package``;
* ``demo`` and the contract tests: the rows with ``family=True`` (scoring
  families, each with gold samples in ``gold_samples/<name>/cases.json``);
* ``merge``: the package of a partial state's family;
* the HTML report: the row's ``charts`` module, whose ``section(ctx)`` draws
  the family's charts (a row without one gets the generic section).

Adding a family is one row here and nothing else in shared code (see
``docs/adding-a-family.md``).

>>> [c.name for c in COMMANDS if c.family]
['grounding', 'rgb', 'pairwise', 'factuality', 'rouge', 'mtrag', 'ir']
>>> command("rouge").summary
"ROUGE exactly as Google's rouge-score computes it"
"""

from __future__ import annotations

import importlib
from types import ModuleType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple, Optional, Tuple
else:
    from ._namedtuple import NamedTuple

__all__ = [
    "COMMANDS",
    "Command",
    "charts_module",
    "cli_module",
    "command",
    "family_formats",
    "family_names",
    "package_module",
]


class Command(NamedTuple):
    """One top-level command of ``rageval-min``."""

    #: the word on the command line; for a family also its name in reports, states and signatures
    name: str
    #: one line for ``rageval-min --help`` (read without importing the command)
    summary: str
    #: the module, relative to ``rageval_min``, whose ``register(subparsers)`` adds the command
    cli: str
    #: the public package or module (``rageval_min.<package>``), or "" for a command that has none
    package: str = ""
    #: a scoring family: gold samples that ``demo`` runs, the family contract, a public face
    family: bool = False
    #: the family's own report formats (its package's ``REPORT_FORMATS``), which ``merge`` offers too
    formats: Tuple[str, ...] = ()
    #: the module whose ``section(ctx) -> str`` draws the family's HTML charts, or ""
    charts: str = ""


#: Every command, in the order ``--help`` and ``demo`` show them.
COMMANDS: Tuple[Command, ...] = (
    Command(
        "grounding",
        "answered precision, citation hit rate, under/over-refusal, recall@k (WFGY score_eval)",
        cli="grounding.cli",
        package="grounding",
        family=True,
        charts="grounding.charts",
        formats=("wfgy",),
    ),
    Command(
        "rgb",
        "RGB: answer labels, the four robustness abilities, seeded document mixing, judged rates",
        cli="rgb.cli",
        package="rgb",
        family=True,
        charts="rgb.charts",
        formats=("rgb", "abilities"),
    ),
    Command(
        "pairwise",
        "DevBench SubEval pairwise LLM-judge win rates (both orders, consistency)",
        cli="pairwise.cli",
        package="pairwise",
        family=True,
        charts="pairwise.charts",
    ),
    Command(
        "factuality",
        "SAFE / LongFact F1@K, FActScore, VeriScore, correlation with human labels",
        cli="factuality.cli",
        package="factuality",
        family=True,
        charts="factuality.charts",
        formats=("safe", "jsonl"),
    ),
    Command(
        "rouge",
        "ROUGE exactly as Google's rouge-score computes it",
        cli="rouge.cli",
        package="rouge",
        family=True,
        charts="rouge.charts",
    ),
    Command(
        "mtrag",
        "MT-RAG generation metrics: Recall, ROUGE-L, extractiveness, RB_agg, IDK conditioning",
        cli="mtrag.cli",
        package="mtrag",
        family=True,
        charts="mtrag.charts",
    ),
    Command(
        "ir",
        "retrieval quality exactly as trec_eval computes it: nDCG, MAP, MRR, P/R@k, success, R-prec, bpref",
        cli="ir.cli",
        package="ir",
        family=True,
        charts="ir.charts",
        formats=("trec_eval",),
    ),
    Command(
        "judge",
        "ask an LLM judge (OpenAI-compatible server, openai:, cmd:, replay:) with cache and retries",
        cli="judges.cli",
        package="judges",
    ),
    Command(
        "compare",
        "is the candidate worse than the baseline? paired per-item statistics as CI gates",
        cli="compare.cli",
        package="compare",
        charts="compare.charts",
    ),
    Command(
        "merge",
        "one report from the partial states of shards (--emit-partial), byte for byte",
        cli="_merge",
    ),
    Command("demo", "run every family on the bundled gold samples", cli="_demo"),
)

_BY_NAME = {c.name: c for c in COMMANDS}


def command(name: str) -> Command:
    """The row of command ``name`` (a ``KeyError`` for an unknown one)."""
    return _BY_NAME[name]


def family_names() -> Tuple[str, ...]:
    """The scoring families, in registry order."""
    return tuple(c.name for c in COMMANDS if c.family)


def family_formats() -> Tuple[str, ...]:
    """Every family's own report formats, without duplicates, in registry order."""
    return tuple(dict.fromkeys(f for c in COMMANDS for f in c.formats))


def _module(relative: str) -> ModuleType:
    return importlib.import_module(f"{__package__}.{relative}")


def cli_module(name: str) -> ModuleType:
    """Import and return the module that registers command ``name``."""
    return _module(command(name).cli)


def package_module(name: str) -> Optional[ModuleType]:
    """The public package of command or family ``name`` (imported), or None when it has none."""
    row = _BY_NAME.get(name)
    return _module(row.package) if row is not None and row.package else None


def charts_module(name: str) -> Optional[ModuleType]:
    """The module drawing the HTML charts of the report family ``name``, or None (generic charts)."""
    row = _BY_NAME.get(name)
    return _module(row.charts) if row is not None and row.charts else None
