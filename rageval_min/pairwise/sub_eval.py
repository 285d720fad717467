"""Pairwise LLM-judge win rates, as in DevBench SubEval.

Reference: ``open-compass/DevBench@bb593c1:llm_judge/subeval/subjective/`` (``sub_eval.py``
builds the comparisons and scores them with ``analyze_util.py``; ``calculate_winrate_new.py``
gives the paper's new win rates).  Two stages, both pure functions over plain rows
(``dict`` per table row):

1. **Comparisons** (:func:`build_comparisons`, :func:`render_prompt`): every
   question row of an input table is turned into judge inputs comparing a model
   with the reference model ``refm``.  ``cmp_index`` is
   ``"{index};{model in slot A};{model in slot B}"``.  ``dual`` mode emits both
   presentation orders (refm first), ``random`` mode one order chosen by
   numpy's legacy Mersenne Twister (``np.random.seed(seed)`` per model,
   ``random() < 0.5`` keeps the normal order), emulated here with the stdlib.
   Rows whose two answers are equal after ``strip()`` are exact matches (EM):
   they are marked and never sent to a judge.
2. **Scoring** (:func:`score`): judge outputs are parsed with the reference
   regex ``(?:选择：|Choice: )([ABCD])`` (first match, A-D for every ``nopt``),
   each row is paired with its swapped partner ``idx;Y;X``, and the reference's
   two result families are computed:

   * ``old_version``: ``win+halfdraw`` = (win + (C + D)/2) / total and
     ``win+bothgood`` = (win + C) / total per model against refm, over
     *consistent* rows only, per column ``Overall-lang``, ``EN`` (always equal
     to ``Overall-lang``), each super task and each task, with numpy float32
     arithmetic and float32 ``round(4)`` reproduced bit for bit;
   * ``new_version``: per metric (text after the last ``-`` of the index) the
     rate with ties ``(win + tie/2) / total`` and without ties
     ``win / (total - tie)``, where an inconsistent row is a tie for both
     sides and ``D`` is a loss for both (plain float64, int ``0`` on a zero
     denominator);

   plus answer-length statistics (numpy pairwise mean and population std).

Reference quirks reproduced by default:

* a row whose partner is absent (partner unparseable, failed, random mode) is
  *consistent* (an "orphan") and counts as one decisive vote;
* C or D from a 2-option judge is accepted and scored;
* EM rows disappear from every rate (they are not ties);
* duplicate ``cmp_index``: the last prediction wins for the partner look-up;
* a task filter is a substring test, so ``uml_class`` matches both
  ``uml_class-general`` and ``uml_class-faithfulness``;
* old-version cells where the pair has no comparison are ``0.0``, not NaN;
* a missing answer becomes the text ``"nan"``; a missing guidance leaves the
  literal ``<Evaluating Guidance>`` placeholder in the prompt.

Where the reference crashes, :func:`score` returns the spec's defined value and
a diagnostic (judge text that pandas would read as NaN, no consistent or no
inconsistent rows, refm without consistent rows, no non-EM rows) or raises
:class:`~rageval_min.errors.ScoringError` naming the ``cmp_index``
(malformed ``cmp_index``, too many API failures).

Missing values follow pandas' reading rule on every input format: ``None``,
float NaN, the empty string and pandas' default NA tokens (``NA``, ``nan``,
``NULL``, ``N/A``, ...) are "missing".  Other cells are kept as text: pandas
would re-type a cell that is a bare number (``1.50`` -> ``1.5``) when the
reference re-reads its own TSV; that difference is not emulated.

The family contract (``docs/adding-a-family.md``): :func:`score_item` turns one
judged comparison into an item row (``cmp_index``, the models, task and metric,
the extracted choice, 0/1 outcomes); :class:`PairwiseAccumulator` turns item
rows into the report.  Its state keeps the rows themselves, in input order,
because every aggregate needs whole columns: the partner look-up (the last
prediction of a ``cmp_index`` wins), first-appearance model order, the float32
tables over the consistent rows and numpy's pairwise sums of the lengths.  The
state therefore grows with the input (ten fields per row); merging parts
concatenates their rows, which is exact.  :func:`score_file` is the file-level
entry point (``pairwise score``); :func:`score` works on records in memory.
"""

import csv
import functools
import hashlib
import random
import re
import struct
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from .._contract import Accumulator, ItemRow, finish, register_accumulator
from .._parallel import accumulate_items
from .._signature import make_signature
from .._stats import np_mean, np_std, np_sum
from ..errors import ScoringError
from ..report import Report

__all__ = [
    "FAMILY",
    "REFERENCE",
    "FAIL_MESSAGE",
    "EM_MARKER",
    "RECORD_COLUMNS",
    "REPORT_FORMATS",
    "ITEM_FIELDS",
    "LENGTH_UNITS",
    "VARIANTS",
    "EXTRAS",
    "Comparison",
    "PairwiseAccumulator",
    "PairwiseJudgeAccumulator",
    "PairwiseResult",
    "Partition",
    "TokenLength",
    "f32",
    "round4_f32",
    "np_sum",
    "np_mean",
    "np_std",
    "legacy_numpy_random",
    "is_missing",
    "read_table",
    "read_records",
    "build_comparisons",
    "infer_input_tsv",
    "builtin_template",
    "load_template",
    "template_id",
    "render_prompt",
    "extract_choice",
    "check_variants",
    "check_extras",
    "check_record_columns",
    "candidate_outcomes",
    "score_item",
    "guess_refm",
    "row_diagnostics",
    "check_failures",
    "pair_both_orders",
    "find_consistency",
    "count_summary",
    "old_version_tables",
    "new_version_rates",
    "length_stats",
    "table_metrics",
    "add_extras",
    "log_lines",
    "signature",
    "signature_params",
    "score",
    "score_record_file",
    "score_file",
    "consistency_partitions",
    "possible_metric_names",
]

FAMILY = "pairwise"
REFERENCE = "open-compass/DevBench@bb593c1"
FAIL_MESSAGE = "Failed to obtain answer via API."
EM_MARKER = "EM"
RECORD_COLUMNS = (
    "cmp_index",
    "question",
    "answer1",
    "answer2",
    "A",
    "B",
    "reference_answer",
    "evaluating_guidance",
    "task",
)
#: Columns that are never the judge column when it is guessed.
_NOT_JUDGE = set(RECORD_COLUMNS) | {"extracted", "prompt", "exact_match"}
VARIANTS = ("choice_lenient", "letters_by_nopt", "orphans_excluded", "float64_tables", "macro_average", "strict_ids")
EXTRAS = ("conservative_win_rate", "per_model_consistency", "unparseable_share")
#: Units of the answer lengths (``tokens``: cl100k, through the tokens extra).
LENGTH_UNITS = ("chars", "tokens")
GUIDANCE_PLACEHOLDER = "<Evaluating Guidance>"

#: pandas' default NA tokens (``read_csv``/``read_excel`` with ``keep_default_na``).
PANDAS_NA_TOKENS = frozenset(
    [
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    ]
)

_CHOICE_RE = re.compile("(?:选择：|Choice: )([ABCD])")
_CHOICE_LENIENT_RE = re.compile(r"(?:选择\s*[：:]|choice\s*[:：])\s*[*_`]*\s*([abcd])\b", re.IGNORECASE)
_LETTERS_BY_NOPT = {2: "AB", 3: "ABC", 4: "ABCD"}
_CONSISTENT_PAIRS = frozenset([("A", "B"), ("B", "A"), ("C", "C"), ("D", "D")])


# --------------------------------------------------------------------------- numerics

_F32 = struct.Struct("f")


def f32(x: float) -> float:
    """Round a double to the nearest float32 (ties to even) and widen it back.

    >>> f32(0.1)
    0.10000000149011612
    """
    value: float = _F32.unpack(_F32.pack(x))[0]
    return value


def round4_f32(x: float) -> float:
    """numpy's ``round(4)`` on a float32 value: ``f32(rint(f32(x*10000)) / 10000)``.

    Differs from float64 ``round(x, 4)`` on ties such as 1/160:

    >>> round4_f32(f32(f32(1 / 80) / 2)), round(1 / 160, 4)
    (0.006200000178068876, 0.0063)
    """
    y = f32(x * 10000.0)
    return f32(float(round(y)) / 10000.0)


def legacy_numpy_random(seed: int) -> random.Random:
    """A :class:`random.Random` in the state of ``np.random.seed(seed)``.

    numpy's legacy seeding runs the classic MT19937 ``init_genrand`` on the
    32-bit seed, and ``np.random.random()`` is the same 53-bit draw as the
    stdlib's ``random()``, so the stdlib generator can be put in that state.

    >>> round(legacy_numpy_random(0).random(), 12)
    0.548813503927
    """
    if seed < 0 or seed > 0xFFFFFFFF:
        raise ScoringError(f"seed must be in 0..2**32-1 for numpy's legacy generator, got {seed}")
    mt = [0] * 624
    mt[0] = seed
    for i in range(1, 624):
        prev = mt[i - 1]
        mt[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF
    rng = random.Random()
    rng.setstate((3, tuple(mt) + (624,), None))
    return rng


# --------------------------------------------------------------------------- tables


def is_missing(value: Any) -> bool:
    """pandas' NA rule: None, NaN, or a string that is one of the default NA tokens.

    >>> [is_missing(v) for v in (None, float("nan"), "", "NA", "n/a", " NA", "0")]
    [True, True, True, True, True, False, False]
    """
    if value is None:
        return True
    if isinstance(value, float):
        return value != value
    if isinstance(value, str):
        return value in PANDAS_NA_TOKENS
    return False


def _as_text(value: Any) -> str:
    """``str()`` of a cell as the reference sees it after pandas: missing -> ``"nan"``."""
    if is_missing(value):
        return "nan"
    return str(value)


def read_table(path: str) -> List[Tuple[int, Dict[str, Any]]]:
    """Read an input table or a record: ``.xlsx`` (first sheet, stdlib reader),
    or ``.csv`` / ``.tsv`` / ``.jsonl`` / ``.json`` (the shared readers).

    Returns ``[(line or sheet row, {column: value})]``.  Cell text is kept as
    is; missing values are decided later with :func:`is_missing`.
    """
    if path.lower().endswith(".xlsx"):
        from .._xlsx import read_xlsx_records

        return read_xlsx_records(path)
    from .._io import iter_records

    return list(iter_records(path))


# --------------------------------------------------------------------------- comparisons


class Comparison(NamedTuple):
    """One judge input: the reference's 9 infer-input columns plus the EM mark.

    ``reference_answer`` and ``evaluating_guidance`` are kept as read (``None``
    when missing); ``question`` and the answers are stripped strings.
    """

    cmp_index: str
    question: str
    answer1: str
    answer2: str
    A: str
    B: str
    reference_answer: Optional[str]
    evaluating_guidance: Optional[str]
    task: Optional[str]
    exact_match: bool

    def as_record(self) -> "OrderedDict[str, Any]":
        """The 9 reference columns plus ``exact_match`` (JSON-ready)."""
        d: "OrderedDict[str, Any]" = OrderedDict()
        for k in RECORD_COLUMNS:
            d[k] = getattr(self, k)
        d["exact_match"] = self.exact_match
        return d


def _cell_str(value: Any) -> Optional[str]:
    if is_missing(value):
        return None
    return _as_text(value)


def _check_id(part: str, what: str, record: str) -> None:
    if ";" in part:
        raise ScoringError(f"{what} contains ';', which breaks cmp_index parsing (strict_ids)", record=record)


def build_comparisons(
    rows: Sequence[Mapping[str, Any]],
    *,
    refm: str,
    models: Optional[Sequence[str]] = None,
    mode: str = "dual",
    seed: int = 2680,
    strict_ids: bool = False,
    diagnostics: Optional[List[str]] = None,
) -> List[Comparison]:
    """Comparisons of every model in ``models`` against ``refm``, reference order.

    ``rows`` are the input-table rows (columns ``question``, ``index``,
    ``evaluating_guidance``, optional ``task``, ``reference_answer`` and one
    ``answer-{model}`` per model).  ``models`` defaults to every answer column
    except refm, in column order (the reference requires ``--model``; passing
    refm itself, as its README example does, yields EM rows).  Per model, in
    table order: ``dual`` gives the normal row (refm in slot A) then the
    reversed one; ``random`` gives one of them (numpy legacy generator seeded
    with ``seed`` again for every model).  A negative ``seed`` swaps model and
    refm and uses ``abs(seed)``, as the reference does.  Answers are
    ``str()``-ed before the missing test (a missing answer is ``"nan"``) and
    stripped, as is the question.
    """
    if mode not in ("dual", "random"):
        raise ScoringError(f"mode must be 'dual' or 'random', got {mode!r}")
    if not rows:
        raise ScoringError("the input table has no rows")
    columns: List[str] = []
    for r in rows:
        for k in r:
            if k not in columns:
                columns.append(k)
    for need in ("question", "index", "evaluating_guidance"):
        if need not in columns:
            raise ScoringError(f"the input table has no {need!r} column", field=need)
    if "reference_answer" not in columns and diagnostics is not None:
        diagnostics.append("input has no 'reference_answer' column: treated as empty (the reference raises KeyError)")
    available = [c[7:] for c in columns if c.startswith("answer-")]
    if refm not in available:
        raise ScoringError(f"no 'answer-{refm}' column for the reference model", field="refm")
    if models is None:
        models = [m for m in available if m != refm]
    for m in models:
        if m not in available:
            raise ScoringError(f"no 'answer-{m}' column", field="model")
    out: List[Comparison] = []
    for model in models:
        m, ref, s = model, refm, seed
        if s < 0:
            s = -s
            m, ref = ref, m
        rng = legacy_numpy_random(s) if mode == "random" else None
        for line_no, row in enumerate(rows, start=1):
            index_v = row.get("index")
            if is_missing(index_v):
                raise ScoringError("missing 'index'", record=f"row {line_no}", field="index")
            index = _as_text(index_v)
            if strict_ids:
                _check_id(index, "index", f"index={index}")
                _check_id(m, "model name", f"index={index}")
                _check_id(ref, "model name", f"index={index}")
            q = row.get("question")
            if is_missing(q):
                raise ScoringError(
                    "missing 'question' (the reference fails on .strip())", record=f"index={index}", field="question"
                )
            question = _as_text(q).strip()
            ans_ref = _as_text(row.get("answer-" + ref)).strip()
            ans_m = _as_text(row.get("answer-" + m)).strip()
            refa = _cell_str(row.get("reference_answer"))
            guid = _cell_str(row.get("evaluating_guidance"))
            task = _cell_str(row.get("task"))
            normal = Comparison(
                f"{index};{ref};{m}", question, ans_ref, ans_m, ref, m, refa, guid, task, ans_ref == ans_m
            )
            reverse = Comparison(
                f"{index};{m};{ref}", question, ans_m, ans_ref, m, ref, refa, guid, task, ans_ref == ans_m
            )
            if rng is None:
                out.append(normal)
                out.append(reverse)
            else:
                out.append(normal if rng.random() < 0.5 else reverse)
    return out


def infer_input_tsv(comparisons: Iterable[Comparison], fh: Any) -> None:
    """Write the reference's infer-input TSV (pandas ``to_csv(sep='\\t', index=False)``):
    the 9 columns, minimal quoting, missing values as empty cells."""
    w = csv.writer(fh, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    w.writerow(RECORD_COLUMNS)
    for c in comparisons:
        w.writerow(["" if getattr(c, k) is None else getattr(c, k) for k in RECORD_COLUMNS])


# --------------------------------------------------------------------------- prompts

_OUR_OPTIONS = {
    2: ("Pick exactly one option:\nA: Response 1 is the better of the two.\nB: Response 2 is the better of the two.\n"),
    3: (
        "Pick exactly one option:\n"
        "A: Response 1 is the better of the two.\n"
        "B: Response 2 is the better of the two.\n"
        "C: Neither is better; they are of equal quality.\n"
    ),
    4: (
        "Pick exactly one option:\n"
        "A: Response 1 is acceptable and Response 2 is not.\n"
        "B: Response 2 is acceptable and Response 1 is not.\n"
        "C: Both responses are acceptable.\n"
        "D: Neither response is acceptable.\n"
        "When both are acceptable but one is stronger, still pick C and name the stronger one "
        "in your reasons; pick A or B only when one of them is not acceptable.\n"
    ),
}

_OUR_HEAD = (
    "You are reviewing two candidate responses to the same software-design request. "
    "Judge them only against the criteria below.\n\n"
    "Criteria:\n<Evaluating Guidance>\n"
    "Also apply these rules: a response that leaves out required parts is weak; needless "
    "length or repetition counts against a response; clear, well-organised formatting is a "
    "plus.\n\n"
    "Be fair and neutral: the order in which the responses are shown, their length and the "
    "names used in them must not influence you.\n\n"
)

_OUR_TAIL = (
    "\nGive your verdict first and then explain it, weighing both responses equally. "
    "Answer in exactly this format:\n"
    "Choice: <one letter>\n"
    "Reason:\n1. <first reason>\n2. <second reason>\n...\n\n"
    "Request:\n<<<\n{{question}}\n>>>\n\n"
    "Response 1:\n<<<\n{{answer1}}\n>>>\n\n"
    "Response 2:\n<<<\n{{answer2}}\n>>>\n"
    "{{#reference_answer}}\nReference answer:\n<<<\n{{reference_answer}}\n>>>\n"
    "{{/reference_answer}}"
)


class TokenLength:
    """The number of cl100k_base tokens of a text, through the ``tokens`` extra; picklable.

    The tokenizer is loaded on first use in each process (a pickled copy sent to a
    worker loads it there), so ``--lengths tokens`` runs on any engine.  Call
    :meth:`load` first to fail early when the extra is missing.
    """

    def __init__(self) -> None:
        self._fn: Optional[Callable[[str], int]] = None

    def load(self) -> Callable[[str], int]:
        """The extra's counter (a :class:`ScoringError` with the pip command when it is missing)."""
        if self._fn is None:
            from .._extras import load_extra

            self._fn = load_extra("tokens").cl100k_length()
        return self._fn

    def __call__(self, text: str) -> int:
        return self.load()(text)

    def __getstate__(self) -> Dict[str, Any]:
        return {}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self._fn = None


def builtin_template(nopt: int = 2) -> str:
    """The project's own judge prompt for ``nopt`` 2, 3 or 4, in template syntax."""
    if nopt not in _OUR_OPTIONS:
        raise ScoringError(f"nopt must be 2, 3 or 4, got {nopt}", field="nopt")
    return _OUR_HEAD + _OUR_OPTIONS[nopt] + _OUR_TAIL


_SECTION_RE = re.compile(r"\{\{#reference_answer\}\}(.*?)\{\{/reference_answer\}\}", re.DOTALL)
_SLOT_RE = re.compile(r"<Evaluating Guidance>|\{\{(question|answer1|answer2|reference_answer)\}\}")
_ANY_MUSTACHE = re.compile(r"\{\{[#/]?([^{}]*)\}\}")


def load_template(text: str, *, path: Optional[str] = None) -> str:
    """Validate a judge template and return it.

    Placeholders (replaced in one pass, so inserted text is never re-scanned):

    * ``<Evaluating Guidance>``: the row's guidance; when the guidance is
      missing the placeholder is left in the prompt, as the reference does;
    * ``{{question}}``, ``{{answer1}}`` (Response 1 = slot A),
      ``{{answer2}}`` (Response 2 = slot B), ``{{reference_answer}}``;
    * ``{{#reference_answer}} ... {{/reference_answer}}``: kept only when the
      row has a reference answer (the reference appends that block only then).

    ``{{question}}``, ``{{answer1}}`` and ``{{answer2}}`` are required; any
    other ``{{...}}`` is an error.  To reproduce a published DevBench run,
    write the published prefix, option block and suffix with the appended
    Question / Response / Reference blocks into one file using these slots.
    """
    known = {"question", "answer1", "answer2", "reference_answer"}
    for m in _ANY_MUSTACHE.finditer(text):
        if m.group(1) not in known:
            raise ScoringError(f"unknown placeholder {m.group(0)!r} in the judge template", path=path)
    for need in ("{{question}}", "{{answer1}}", "{{answer2}}"):
        if need not in text:
            raise ScoringError(f"the judge template has no {need} placeholder", path=path)
    if text.count("{{#reference_answer}}") != text.count("{{/reference_answer}}"):
        raise ScoringError("unbalanced {{#reference_answer}} section in the judge template", path=path)
    return text


def template_id(template: Optional[str]) -> str:
    """``builtin`` or the first 12 hex digits of the template's sha256 (for the signature)."""
    if template is None:
        return "builtin"
    return hashlib.sha256(template.encode("utf-8")).hexdigest()[:12]


def render_prompt(comparison: Comparison, *, nopt: int = 2, template: Optional[str] = None) -> str:
    """The judge prompt of one comparison.

    Values are taken as the reference sees them after re-reading its
    infer-input TSV with pandas: a missing question or answer reads as
    ``nan``, a missing guidance keeps the placeholder, a missing reference
    answer drops the reference block.
    """
    tpl = builtin_template(nopt) if template is None else template
    refa = comparison.reference_answer
    has_ref = not is_missing(refa)
    tpl = _SECTION_RE.sub((lambda m: m.group(1)) if has_ref else "", tpl)
    guidance = comparison.evaluating_guidance
    values = {
        "question": _as_text(comparison.question),
        "answer1": _as_text(comparison.answer1),
        "answer2": _as_text(comparison.answer2),
        "reference_answer": _as_text(refa),
    }

    def fill(m: "re.Match[str]") -> str:
        if m.group(1) is None:
            return GUIDANCE_PLACEHOLDER if is_missing(guidance) else str(guidance)
        return values[m.group(1)]

    return _SLOT_RE.sub(fill, tpl)


# --------------------------------------------------------------------------- extraction


def extract_choice(text: Any, *, nopt: int = 2, lenient: bool = False, letters_by_nopt: bool = False) -> Optional[str]:
    """The judge's choice letter, or ``None``.

    Reference rule: the first match of ``(?:选择：|Choice: )([ABCD])``
    anywhere in the text; A-D are accepted whatever ``nopt`` is.

    >>> extract_choice("Reason first.\\nChoice: B\\nChoice: A")
    'B'
    >>> [extract_choice(s) for s in ("Choice:A", "choice: A", "Choice: **A**", "选择：C")]
    [None, None, None, 'C']
    >>> extract_choice("Choice: **a**", lenient=True)
    'A'
    >>> extract_choice("Choice: D", nopt=2, letters_by_nopt=True) is None
    True
    """
    if not isinstance(text, str):
        return None
    if lenient:
        m = _CHOICE_LENIENT_RE.search(text)
        letter = m.group(1).upper() if m else None
    else:
        m = _CHOICE_RE.search(text)
        letter = m.group(1) if m else None
    if letter is not None and letters_by_nopt and letter not in _LETTERS_BY_NOPT.get(nopt, "ABCD"):
        return None
    return letter


# --------------------------------------------------------------------------- item rows (one judged comparison)


#: The keys of an item row, in order (see :func:`score_item`).
ITEM_FIELDS = (
    "cmp_index",
    "model",
    "A",
    "B",
    "task",
    "metric",
    "choice",
    "parsed",
    "exact_match",
    "api_failed",
    "unparseable",
    "judge_missing",
    "win",
    "tie",
    "loss",
    "length_a",
    "length_b",
)


class _Row(NamedTuple):
    """One item row as the aggregates use it (``cmp_index`` split into its three parts)."""

    pos: int
    cmp_index: str
    idx: str
    part1: str
    part2: str
    A: str
    B: str
    task: Optional[str]
    len1: int
    len2: int
    exact_match: bool
    failed: bool
    judge_missing: bool
    choice: Optional[str]


def _split_cmp(cmp_index: str, *, strict: bool = False, where: Optional[Mapping[str, Any]] = None) -> List[str]:
    """``cmp_index.split(';')``, checked: at least 3 parts (``strict``: exactly 3)."""
    parts = cmp_index.split(";")
    if len(parts) < 3 or (strict and len(parts) > 3):
        msg = (
            "cmp_index must look like '{index};{model A};{model B}'"
            if len(parts) < 3
            else "cmp_index has more than 3 ';'-separated parts (strict_ids)"
        )
        raise ScoringError(msg, record=f"cmp_index={cmp_index}", field="cmp_index", **dict(where or {}))
    return parts


def check_record_columns(records: Sequence[Mapping[str, Any]], *, judge_column: Optional[str] = None) -> str:
    """Check that a judge record has the columns scoring needs; return the judge column.

    ``judge_column`` defaults to the only column besides the comparison
    columns (and ``extracted``, ``prompt``, ``exact_match``).
    """
    if not records:
        raise ScoringError("the record has no rows")
    columns: List[str] = []
    seen: Set[str] = set()
    for rec in records:
        for k in rec:
            if k not in seen:
                seen.add(k)
                columns.append(k)
    for need in ("cmp_index", "A", "B", "answer1", "answer2"):
        if need not in seen:
            raise ScoringError(f"the record has no {need!r} column", field=need)
    jcol = judge_column if judge_column is not None else _guess_judge_column(columns)
    if jcol not in seen:
        raise ScoringError(f"the record has no judge column {jcol!r}", field="judge_column")
    return jcol


def _judge_text(record: Mapping[str, Any], judge_column: str) -> Tuple[Optional[str], bool]:
    """The judge text of a record and whether it was missing (pandas' NA rule).

    A missing text with ``exact_match`` true is the EM marker; any other
    missing text is ``None`` (the reference raises TypeError on it).
    """
    judgment = record.get(judge_column)
    if is_missing(judgment):
        if record.get("exact_match") is True and judgment is None:
            return EM_MARKER, False
        return None, True
    return (judgment if isinstance(judgment, str) else str(judgment)), False


def candidate_outcomes(a: str, b: str, choice: Optional[str], refm: Optional[str]) -> Dict[str, Any]:
    """``model`` (the candidate: the slot model that is not refm) and its 0/1 ``win``, ``tie``, ``loss``.

    One verdict, read for the candidate: the letter of its slot is a win, the
    letter of refm's slot a loss, ``C`` (both good) or ``D`` (neither) a tie.
    All three are ``None`` without a choice; ``model`` and the outcomes are
    ``None`` when refm is unknown or not exactly one of the two slots.

    >>> candidate_outcomes("ref", "m1", "B", "ref")
    {'model': 'm1', 'win': 1, 'tie': 0, 'loss': 0}
    >>> candidate_outcomes("m1", "ref", "B", "ref")
    {'model': 'm1', 'win': 0, 'tie': 0, 'loss': 1}
    """
    if refm is None or (a == refm) == (b == refm):
        return {"model": None, "win": None, "tie": None, "loss": None}
    model = b if a == refm else a
    if choice is None:
        return {"model": model, "win": None, "tie": None, "loss": None}
    if choice in ("C", "D"):
        return {"model": model, "win": 0, "tie": 1, "loss": 0}
    win = int((a if choice == "A" else b) == model)
    return {"model": model, "win": win, "tie": 0, "loss": 1 - win}


def _item(
    record: Mapping[str, Any],
    *,
    judge_column: str,
    nopt: int,
    refm: Optional[str],
    variants: Sequence[str],
    length: Optional[Callable[[str], int]],
    row: int,
    path: Optional[str] = None,
) -> ItemRow:
    where: Dict[str, Any] = {} if path is None else {"path": path, "line": row}
    ci = record.get("cmp_index")
    if not isinstance(ci, str) or is_missing(ci):
        raise ScoringError("missing or non-text cmp_index", record=f"row {row}", field="cmp_index", **where)
    parts = _split_cmp(ci, strict="strict_ids" in variants, where=where)
    a, b = record.get("A"), record.get("B")
    if is_missing(a) or is_missing(b):
        raise ScoringError("missing model name in column A or B", record=f"cmp_index={ci}", **where)
    judgment, judge_missing = _judge_text(record, judge_column)
    em = judgment == EM_MARKER
    failed = isinstance(judgment, str) and FAIL_MESSAGE in judgment
    choice = None
    if not em:
        choice = extract_choice(
            judgment, nopt=nopt, lenient="choice_lenient" in variants, letters_by_nopt="letters_by_nopt" in variants
        )
    fn = len if length is None else length
    outcome = candidate_outcomes(str(a), str(b), choice, refm)
    item: ItemRow = OrderedDict()
    item["cmp_index"] = ci
    item["model"] = outcome["model"]
    item["A"] = str(a)
    item["B"] = str(b)
    item["task"] = _cell_str(record.get("task"))
    item["metric"] = _metric_of(parts[0])
    item["choice"] = choice
    item["parsed"] = None if em else int(choice is not None)
    item["exact_match"] = int(em)
    item["api_failed"] = int(failed)
    item["unparseable"] = None if em or failed else int(choice is None)
    item["judge_missing"] = int(judge_missing)
    item["win"] = outcome["win"]
    item["tie"] = outcome["tie"]
    item["loss"] = outcome["loss"]
    item["length_a"] = fn(_as_text(record.get("answer1")))
    item["length_b"] = fn(_as_text(record.get("answer2")))
    return item


def score_item(
    record: Mapping[str, Any],
    *,
    judge_column: str,
    nopt: int = 2,
    refm: Optional[str] = None,
    variants: Sequence[str] = (),
    length: Optional[Callable[[str], int]] = None,
) -> ItemRow:
    """The item row of one judged comparison (a record row: comparison columns + the judge column).

    Keys (:data:`ITEM_FIELDS`): ``cmp_index``; ``model`` (the candidate, see
    :func:`candidate_outcomes`), ``A``, ``B``, ``task``, ``metric`` (text after
    the last ``-`` of the index); ``choice`` (the extracted letter or
    ``None``); ``parsed`` (1 when a choice was read; ``None`` for an EM row:
    its mean is ``extraction_rate``); 0/1 ``exact_match`` (the EM marker:
    never judged) and ``api_failed`` (the API fail message); ``unparseable``
    (1 when the judge answered but no choice could be read; ``None`` for EM
    and failed rows: its mean is ``unparseable_share``); 0/1
    ``judge_missing`` (an empty or NA judge text); the candidate's 0/1
    ``win``/``tie``/``loss`` for this one verdict (``None`` without a
    choice); ``length_a``/``length_b``, the answer lengths (``len`` or
    ``length``).  Swap consistency needs the partner row: it is decided by
    the accumulator.  Item names differ from the count metrics (``failed``,
    ``extracted``), so a count is never read as a rate.

    >>> row = score_item({"cmp_index": "p1-general;ref;m1", "A": "ref", "B": "m1", "answer1": "ab",
    ...                   "answer2": "abc", "task": "api-general", "judge": "Choice: B"},
    ...                  judge_column="judge", refm="ref")
    >>> row["choice"], row["win"], row["loss"], row["metric"], row["length_b"]
    ('B', 1, 0, 'general', 3)
    """
    return _item(
        record,
        judge_column=judge_column,
        nopt=_check_nopt(nopt),
        refm=refm,
        variants=check_variants(variants),
        length=length,
        row=1,
    )


def _row_of(pos: int, item: Mapping[str, Any]) -> _Row:
    parts = item["cmp_index"].split(";")
    return _Row(
        pos,
        item["cmp_index"],
        parts[0],
        parts[1],
        parts[2],
        item["A"],
        item["B"],
        item["task"],
        item["length_a"],
        item["length_b"],
        bool(item["exact_match"]),
        bool(item["api_failed"]),
        bool(item["judge_missing"]),
        item["choice"],
    )


def find_consistency(rows: Sequence[Tuple[str, str]], *, orphans_excluded: bool = False) -> List[Optional[bool]]:
    """Swap-consistency of ``(cmp_index, choice)`` rows (extracted, non-EM rows).

    Reference rule: ``pred`` maps cmp_index to its choice (last one wins); the
    partner of ``idx;X;Y`` is ``idx;Y;X``.  Without a partner a row is
    consistent (``orphans_excluded``: ``None``, i.e. neither).  Otherwise it
    is consistent iff the pair of letters is (A,B), (B,A), (C,C) or (D,D).

    >>> find_consistency([("q;r;m", "A"), ("q;m;r", "B"), ("p;r;m", "A"), ("p;m;r", "A"),
    ...                   ("o;r;m", "C")])
    [True, True, False, False, True]
    """
    pred: Dict[str, str] = {}
    for k, o in rows:
        pred[k] = o
    out: List[Optional[bool]] = []
    for k, o in rows:
        parts = k.split(";")
        if len(parts) < 3:
            raise ScoringError(
                "cmp_index must look like '{index};{model A};{model B}'", record=f"cmp_index={k}", field="cmp_index"
            )
        kct = f"{parts[0]};{parts[2]};{parts[1]}"
        if kct not in pred:
            out.append(None if orphans_excluded else True)
        else:
            out.append((pred[k], pred[kct]) in _CONSISTENT_PAIRS)
    return out


# --------------------------------------------------------------------------- old version


def _task_columns(rows: Sequence[_Row]) -> Tuple[List[str], List[str]]:
    tasks: Set[str] = set()
    for r in rows:
        if r.task is None:
            continue
        for piece in r.task.split(", "):
            if piece:
                tasks.add(piece)
    suptasks = sorted({t.split("-")[0] for t in tasks})
    return suptasks, sorted(tasks)


def old_version_tables(
    rows: Sequence[_Row], *, refm: str, float64_tables: bool = False, diagnostics: Optional[List[str]] = None
) -> "OrderedDict[str, Any]":
    """``win+halfdraw`` and ``win+bothgood`` tables over consistent rows.

    Mirrors the reference's old-version table loop step by step (filters,
    counts, float32 operations in its order), so it stays in one piece.

    For model ``m`` against refm and a column filter, with counts over both
    presentation orders: ``wr = win/T``, ``wff = C/T``, ``lff = D/T``;
    ``win+halfdraw = wr + (wff + lff)/2`` and ``win+bothgood = wr + wff`` (D
    stays in the denominator), every operation in float32, then numpy float32
    ``round(4)``; ``0.0`` where ``T = 0``.  Columns: ``model``,
    ``Overall-lang``, ``EN`` (same rows as Overall-lang), the sorted super tasks
    (task text before the first ``-``), the sorted tasks; filters are substring
    tests on the row's task string.  Rows are sorted by model name (the
    reference order depends on the hash seed).  ``float64_tables``: plain
    float64 and ``round(x, 4)``.
    """
    suptasks, tasks = _task_columns(rows)
    columns = ["model", "Overall-lang", "EN"] + suptasks + tasks
    models: Set[str] = set()
    for r in rows:
        models.add(r.A)
        models.add(r.B)
    tables: "OrderedDict[str, Any]" = OrderedDict()
    names = ("win+halfdraw", "win+bothgood")
    if refm not in models:
        if diagnostics is not None:
            diagnostics.append(
                "old version: the reference model has no consistent rows; "
                "tables have no model rows (the reference fails an assertion)"
            )
        for n in names:
            tables[n] = OrderedDict([("columns", columns), ("rows", [])])
        return tables
    filters: List[Optional[str]] = [None, None]
    filters.extend(suptasks + tasks)
    others = sorted(m for m in models if m != refm)
    out_rows: Dict[str, List[List[Any]]] = {n: [] for n in names}
    for m in others:
        mine = [r for r in rows if (r.A == m and r.B == refm) or (r.A == refm and r.B == m)]
        hd: List[Any] = [m]
        bg: List[Any] = [m]
        for flt in filters:
            sel = mine if flt is None else [r for r in mine if r.task is not None and flt in r.task]
            win = sum(1 for r in sel if (r.choice == "A" and r.A == m) or (r.choice == "B" and r.B == m))
            both = sum(1 for r in sel if r.choice == "C")
            neither = sum(1 for r in sel if r.choice == "D")
            tot = len(sel)
            if tot == 0:
                hd.append(0.0)
                bg.append(0.0)
                continue
            if float64_tables:
                wr, wff, lff = win / tot, both / tot, neither / tot
                hd.append(round(wr + (wff + lff) / 2.0, 4))
                bg.append(round(wr + wff, 4))
            else:
                wr, wff, lff = f32(win / tot), f32(both / tot), f32(neither / tot)
                hd.append(round4_f32(f32(wr + f32(f32(wff + lff) / 2.0))))
                bg.append(round4_f32(f32(wr + wff)))
        out_rows["win+halfdraw"].append(hd)
        out_rows["win+bothgood"].append(bg)
    for n in names:
        tables[n] = OrderedDict([("columns", list(columns)), ("rows", out_rows[n])])
    return tables


# --------------------------------------------------------------------------- new version


def _metric_of(idx: str) -> str:
    return idx.rsplit("-", 1)[-1]


def _count_new(
    consistent: Sequence[_Row], inconsistent: Sequence[_Row]
) -> Tuple[Dict[str, int], Dict[str, int], Dict[str, int]]:
    cnt: Dict[str, int] = {}
    tie: Dict[str, int] = {}
    tot: Dict[str, int] = {}

    def add(d: Dict[str, int], k: str) -> None:
        d[k] = d.get(k, 0) + 1

    for r in consistent:
        k12 = f"{r.idx};{r.A};{r.B}"
        k21 = f"{r.idx};{r.B};{r.A}"
        if r.choice == "A":
            add(cnt, k12)
        elif r.choice == "B":
            add(cnt, k21)
        elif r.choice == "C":
            add(tie, k12)
            add(tie, k21)
        add(tot, k12)
        add(tot, k21)
    for r in inconsistent:
        k12 = f"{r.idx};{r.A};{r.B}"
        k21 = f"{r.idx};{r.B};{r.A}"
        add(tie, k12)
        add(tie, k21)
        add(tot, k12)
        add(tot, k21)
    return cnt, tie, tot


def _rates(
    cnt: Mapping[str, float], tie: Mapping[str, float], tot: Mapping[str, float], keys: Iterable[str]
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    wt: Dict[str, Any] = {}
    wo: Dict[str, Any] = {}
    for k in keys:
        c, t, n = cnt.get(k, 0), tie.get(k, 0), tot.get(k, 0)
        wt[k] = (c + 0.5 * t) / n if n > 0 else 0
        wo[k] = c / (n - t) if n - t > 0 else 0
    return wt, wo


def new_version_rates(
    consistent: Sequence[_Row],
    inconsistent: Sequence[_Row],
    *,
    refm: str,
    macro_average: bool = False,
    diagnostics: Optional[List[str]] = None,
) -> "OrderedDict[str, Any]":
    """DevBench paper rates ``{"with_tie": {...}, "without_tie": {...}}``.

    Mirrors ``calculate_winrate_new.py`` step by step (its assertions become
    diagnostics), so it stays in one piece.

    Per row (keys ``idx;X;Y``): a consistent row adds 1 to ``tot`` in both
    directions and a win (A: slot A, B: slot B) or, for C, a tie in both
    directions; D adds nothing else (a loss for both).  An inconsistent row is
    a tie in both directions.  Counts are summed per ``metric;X;Y`` (metric =
    text after the last ``-`` of the index) and reported for every key
    containing refm as a substring: with tie ``(cnt + tie/2)/tot``, without
    tie ``cnt/(tot - tie)``, int ``0`` on a zero denominator.  Keys sorted.
    ``macro_average``: the per-index rates (where defined) are averaged
    uniformly instead of summing counts.
    """
    if diagnostics is not None:
        if not consistent and not inconsistent:
            diagnostics.append(
                "new version: no consistent and no inconsistent rows; rate maps "
                "are empty (the reference fails an assertion)"
            )
        elif not inconsistent:
            diagnostics.append(
                "new version: no inconsistent rows; rates come from the "
                "consistent rows alone (the reference fails an assertion)"
            )
        elif not consistent:
            diagnostics.append(
                "new version: no consistent rows; rates come from the "
                "inconsistent rows alone (the reference fails an assertion)"
            )
    cnt, tie, tot = _count_new(consistent, inconsistent)
    if not macro_average:
        mc: Dict[str, int] = {}
        mt: Dict[str, int] = {}
        mn: Dict[str, int] = {}
        for src, dst in ((cnt, mc), (tie, mt), (tot, mn)):
            for k, v in src.items():
                prefix, model_part = k.split(";", 1)
                nk = f"{_metric_of(prefix)};{model_part}"
                dst[nk] = dst.get(nk, 0) + v
        keys = sorted(k for k in mn if refm in k)
        wt, wo = _rates(mc, mt, mn, keys)
    else:
        per_wt, per_wo = _rates(cnt, tie, tot, tot.keys())
        groups: Dict[str, List[str]] = {}
        for k in tot:
            prefix, model_part = k.split(";", 1)
            groups.setdefault(f"{_metric_of(prefix)};{model_part}", []).append(k)
        keys = sorted(k for k in groups if refm in k)
        wt, wo = {}, {}
        for nk in keys:
            a = [per_wt[k] for k in groups[nk] if tot[k] > 0]
            b = [per_wo[k] for k in groups[nk] if tot[k] - tie.get(k, 0) > 0]
            wt[nk] = sum(a) / len(a) if a else 0
            wo[nk] = sum(b) / len(b) if b else 0
    return OrderedDict(
        [("with_tie", OrderedDict((k, wt[k]) for k in keys)), ("without_tie", OrderedDict((k, wo[k]) for k in keys))]
    )


# --------------------------------------------------------------------------- lengths


def length_stats(rows: Sequence[_Row]) -> List[List[Any]]:
    """``[[model, mean, std], ...]`` of answer lengths over every record row.

    Each row adds its ``length_a`` to model A and ``length_b`` to model B
    (EM, failed and unparseable rows included; a missing answer is ``"nan"``).
    Mean and population std follow numpy's pairwise summation.  Model order is
    first appearance, A before B.  Lengths are characters by default; the
    reference counts tiktoken cl100k tokens.
    """
    lens: "OrderedDict[str, List[int]]" = OrderedDict()
    for r in rows:
        lens.setdefault(r.A, []).append(r.len1)
        lens.setdefault(r.B, []).append(r.len2)
    return [[m, np_mean(v), np_std(v)] for m, v in lens.items()]


# --------------------------------------------------------------------------- extras


def _conservative(rows: Sequence[_Row], refm: str) -> "OrderedDict[str, Any]":
    # FastChat / MT-Bench: one outcome per complete swapped pair; the second
    # verdict is mapped back to model names; disagreement or C/D -> tie.
    by_key: Dict[str, _Row] = {}
    for r in rows:
        by_key[r.cmp_index] = r
    tallies: Dict[str, List[int]] = {}
    seen: Set[str] = set()
    for k, r in by_key.items():
        if r.A != refm and r.B != refm:
            continue
        partner = f"{r.idx};{r.part2};{r.part1}"
        if k in seen or partner not in by_key or partner == k:
            continue
        seen.add(k)
        seen.add(partner)
        p = by_key[partner]

        def winner(x: _Row) -> Optional[str]:
            return x.A if x.choice == "A" else x.B if x.choice == "B" else None

        g1, g2 = winner(r), winner(p)
        model = r.B if r.A == refm else r.A
        t = tallies.setdefault(model, [0, 0, 0])
        if g1 is None or g1 != g2:
            t[2] += 1
        elif g1 == model:
            t[0] += 1
        else:
            t[1] += 1
    out: "OrderedDict[str, Any]" = OrderedDict()
    for model in sorted(tallies):
        w, lo, ti = tallies[model]
        n = w + lo + ti
        out[model] = OrderedDict(
            [
                ("win", w),
                ("loss", lo),
                ("tie", ti),
                ("win_rate", w / n if n else None),
                ("win_rate_adjusted", (w + 0.5 * ti) / n if n else None),
            ]
        )
    return out


def _per_model_consistency(
    rows: Sequence[_Row], status: Sequence[Optional[bool]], refm: str
) -> "OrderedDict[str, Any]":
    acc: Dict[str, List[int]] = {}
    for r, s in zip(rows, status):
        if s is None:
            continue
        for m in {r.A, r.B}:
            if m == refm:
                continue
            a = acc.setdefault(m, [0, 0])
            a[1] += 1
            if s:
                a[0] += 1
    return OrderedDict(
        (m, OrderedDict([("consistent", c), ("extracted", t), ("consistency_rate", c / t if t else None)]))
        for m, (c, t) in sorted(acc.items())
    )


# --------------------------------------------------------------------------- aggregation steps


def log_lines(counts: Mapping[str, Any]) -> List[str]:
    """The reference's count lines (log lines 2-5), exactly.

    >>> log_lines({"total": 8, "failed": 0, "non_exact": 8, "extracted": 8,
    ...            "consistent": 8})[1]
    'Total comparisons: 8. Non exact matches:  8'
    """
    n, f, m, s, c = (counts["total"], counts["failed"], counts["non_exact"], counts["extracted"], counts["consistent"])
    rate = f"{s / m * 100:.2f}" if m else "nan"
    out = [
        f"Total comparisons: {n}. Failed to response: {f}",
        f"Total comparisons: {n}. Non exact matches:  {m}",
        f"Extracted {s} answers from the responses (extraction success rate {rate}%)",
    ]
    t = counts.get("consistency_total", s)
    if c != t:
        out.append(
            f"{c} out of {t} answers are consistent. (A vs. B <-> B vs. A) The consistent rate is {c / t * 100:.2f}%"
        )
    return out


def _guess_judge_column(columns: Sequence[str]) -> str:
    cands = [c for c in columns if c not in _NOT_JUDGE]
    if len(cands) == 1:
        return cands[0]
    if not cands:
        raise ScoringError(
            f"the record has no judge column (a column besides the {len(RECORD_COLUMNS)} comparison columns)",
            field="judge_column",
        )
    raise ScoringError(
        f"cannot tell which column holds the judge output (candidates: {', '.join(cands)}); pass --judge-column",
        field="judge_column",
    )


def guess_refm(pairs: Iterable[Tuple[str, str]]) -> str:
    """The one model present in every ``(A, B)`` pair (the reference model when ``--refm`` is not given)."""
    common: Optional[Set[str]] = None
    for a, b in pairs:
        pair = {a, b}
        common = pair if common is None else common & pair
    if common and len(common) == 1:
        return next(iter(common))
    raise ScoringError(
        "cannot infer the reference model (no single model is in every comparison); pass --refm", field="refm"
    )


def row_diagnostics(rows: Sequence[_Row]) -> List[str]:
    """Per-row notes in input order (extra ``;`` parts, NA judge text), then the missing-task count."""
    out: List[str] = []
    missing_task = 0
    for r in rows:
        if r.cmp_index.count(";") > 2:
            out.append(
                f"cmp_index={r.cmp_index}: more than 3 ';'-separated parts; "
                "parsed as the reference does (parts 0, 1 and 2)"
            )
        if r.judge_missing:
            out.append(
                f"cmp_index={r.cmp_index}: judge text is empty or an NA token; counted as "
                "unparseable (the reference raises TypeError)"
            )
        if r.task is None:
            missing_task += 1
    if missing_task:
        out.append(
            f"{missing_task} row(s) have no task: in the old version they count in "
            "Overall-lang/EN only, the new version counts them by index "
            "(the reference fails on them)"
        )
    return out


def check_failures(rows: Sequence[_Row], *, limit: int, judge_column: str) -> List[str]:
    """The ``cmp_index`` of every failed judge call; a ScoringError when there are ``limit`` or more."""
    failed = [r.cmp_index for r in rows if r.failed]
    if len(failed) >= limit:
        raise ScoringError(
            f"{len(failed)} judge calls failed (limit {limit}; the reference exits): " + ", ".join(failed),
            field=judge_column,
        )
    return failed


class Partition(NamedTuple):
    """The non-EM rows split as the reference splits them."""

    non_em: List[_Row]
    extracted: List[_Row]
    status: List[Optional[bool]]  # per extracted row: consistent, inconsistent, None (orphans_excluded)
    consistent: List[_Row]
    inconsistent: List[_Row]


def pair_both_orders(rows: Sequence[_Row], *, orphans_excluded: bool = False) -> Partition:
    """Non-EM rows, the extracted ones, and their swap consistency (see :func:`find_consistency`)."""
    non_em = [r for r in rows if not r.exact_match]
    extracted = [r for r in non_em if r.choice is not None]
    status = find_consistency([(r.cmp_index, r.choice or "") for r in extracted], orphans_excluded=orphans_excluded)
    consistent = [r for r, s in zip(extracted, status) if s is True]
    inconsistent = [r for r, s in zip(extracted, status) if s is False]
    return Partition(non_em, extracted, status, consistent, inconsistent)


def count_summary(total: int, failed: int, part: Partition) -> "OrderedDict[str, Any]":
    """The ``counts`` object: N, F, M, S, S/M, C, C/T (T = consistent + inconsistent)."""
    m_count, s_count = len(part.non_em), len(part.extracted)
    c_count = len(part.consistent)
    t_count = c_count + len(part.inconsistent)
    return OrderedDict(
        [
            ("total", total),
            ("failed", failed),
            ("non_exact", m_count),
            ("extracted", s_count),
            ("extraction_rate", s_count / m_count if m_count else None),
            ("consistent", c_count),
            ("consistency_rate", c_count / t_count if t_count else None),
        ]
    )


def table_metrics(
    counts: Mapping[str, Any], old: Mapping[str, Any], new: Mapping[str, Any], lstats: Sequence[Sequence[Any]]
) -> "OrderedDict[str, Any]":
    """The gateable metrics: counts, ``TABLE;model;column``, ``RATES;key``, ``length_mean;model``/``length_std``."""
    metrics: "OrderedDict[str, Any]" = OrderedDict()
    for k, v in counts.items():
        if v is not None:
            metrics[k] = v
    for name, table in old.items():
        cols = table["columns"]
        for row in table["rows"]:
            for c, v in zip(cols[1:], row[1:]):
                metrics[f"{name};{row[0]};{c}"] = v
    for name, rates in new.items():
        for k, v in rates.items():
            metrics[f"{name};{k}"] = v
    for m, mean, std in lstats:
        metrics[f"length_mean;{m}"] = mean
        metrics[f"length_std;{m}"] = std
    return metrics


def add_extras(
    result: "OrderedDict[str, Any]",
    metrics: "OrderedDict[str, Any]",
    *,
    extras: Sequence[str],
    part: Partition,
    failed: int,
    refm: str,
) -> None:
    """Append the requested extras to ``result`` and their gateable values to ``metrics``."""
    if "conservative_win_rate" in extras:
        cons = _conservative(part.extracted, refm)
        result["conservative_win_rate"] = cons
        for m, d in cons.items():
            for k in ("win_rate", "win_rate_adjusted"):
                if d[k] is not None:
                    metrics[f"conservative_{k};{m}"] = d[k]
    if "per_model_consistency" in extras:
        pmc = _per_model_consistency(part.extracted, part.status, refm)
        result["per_model_consistency"] = pmc
        for m, d in pmc.items():
            if d["consistency_rate"] is not None:
                metrics[f"consistency_rate;{m}"] = d["consistency_rate"]
    if "unparseable_share" in extras:
        unparseable = sum(1 for r in part.non_em if r.choice is None and not r.failed)
        answered = len(part.non_em) - failed
        share = unparseable / answered if answered else None
        result["unparseable_share"] = OrderedDict(
            [("unparseable", unparseable), ("answered", answered), ("share", share)]
        )
        if share is not None:
            metrics["unparseable_share"] = share


# --------------------------------------------------------------------------- the contract


def check_variants(variants: Iterable[str]) -> Tuple[str, ...]:
    """The sorted, de-duplicated variant names; an unknown one is a ScoringError.

    >>> check_variants(["strict_ids", "float64_tables", "strict_ids"])
    ('float64_tables', 'strict_ids')
    """
    names = tuple(sorted(set(variants)))
    bad = [v for v in names if v not in VARIANTS]
    if bad:
        raise ScoringError(f"unknown variant(s) {', '.join(bad)}; known: {', '.join(VARIANTS)}", field="variant")
    return names


def check_extras(extras: Iterable[str]) -> Tuple[str, ...]:
    """The sorted, de-duplicated extra names; an unknown one is a ScoringError."""
    names = tuple(sorted(set(extras)))
    bad = [e for e in names if e not in EXTRAS]
    if bad:
        raise ScoringError(f"unknown extra(s) {', '.join(bad)}; known: {', '.join(EXTRAS)}", field="extra")
    return names


def _check_nopt(nopt: int) -> int:
    if isinstance(nopt, bool) or nopt not in (2, 3, 4):
        raise ScoringError(f"nopt must be 2, 3 or 4, got {nopt}", field="nopt")
    return nopt


def _check_lengths(lengths: str) -> str:
    if lengths not in LENGTH_UNITS:
        raise ScoringError(f"lengths must be one of {', '.join(LENGTH_UNITS)}, got {lengths!r}", field="lengths")
    return lengths


def signature(*, variants: Sequence[str] = (), params: Sequence[Tuple[str, object]] = ()) -> str:
    """The reproducibility signature; ``params`` come from :func:`signature_params`.

    >>> signature(params=signature_params(nopt=2, refm="ref"))
    'rageval_min:0.1.0|family=pairwise|ref=open-compass/DevBench@bb593c1|variants=none|nopt=2|refm=ref|\
lengths=chars|judge_template=builtin|extras=none'
    """
    return make_signature(FAMILY, REFERENCE, check_variants(variants), params)


def signature_params(
    *,
    nopt: int,
    refm: str,
    lengths: str = "chars",
    judge_template: str = "builtin",
    extras: Sequence[str] = (),
    judge_model: Optional[str] = None,
) -> List[Tuple[str, object]]:
    """The signature parameters in the family's order; ``judge_model`` only for judged runs."""
    params: List[Tuple[str, object]] = [
        ("nopt", nopt),
        ("refm", refm),
        ("lengths", lengths),
        ("judge_template", judge_template),
        ("extras", ",".join(check_extras(extras)) or "none"),
    ]
    if judge_model is not None:
        params.append(("judge_model", judge_model))
    return params


#: The item-row fields an accumulator keeps per row, in this order.
_STATE_FIELDS = (
    "cmp_index",
    "A",
    "B",
    "task",
    "choice",
    "exact_match",
    "api_failed",
    "judge_missing",
    "length_a",
    "length_b",
)


@register_accumulator
class PairwiseAccumulator(Accumulator):
    """``pairwise score``: the item rows, kept in input order; the report is built in :meth:`finalize`.

    The reference's aggregates need whole columns in input order (the partner
    look-up where the last prediction of a ``cmp_index`` wins, first-appearance
    model order, numpy pairwise sums of the lengths, float32 tables over the
    consistent rows), so the state is the rows themselves (ten fields each):
    it grows with the input, and merging concatenates, which is exact.

    ``judge_template`` is the template id (:func:`template_id`) and
    ``judge_model`` the judge's model name for a judged run (both only go
    into the signature); ``refm`` None is inferred at :meth:`finalize`.

    ``DIRECTIONS`` read the item rows for the candidate model: ``win`` is
    better high, ``loss`` low; ``tie`` (C or D) has no direction; the
    judge-side outcomes (``failed``, ``unparseable``, ``judge_missing``) are
    better low.
    """

    FAMILY = "pairwise"
    COMMAND = "score"
    #: --intervals: the rates that are count ratios of item fields (None: the rows where the field is not null)
    RATES = {"extraction_rate": ("parsed", None), "unparseable_share": ("unparseable", None)}
    DIRECTIONS = {
        "win": "higher",
        "loss": "lower",
        "parsed": "higher",
        "unparseable": "lower",
        "api_failed": "lower",
        "judge_missing": "lower",
    }

    def __init__(
        self,
        *,
        nopt: int = 2,
        refm: Optional[str] = None,
        judge_column: str = "judge",
        variants: Sequence[str] = (),
        extras: Sequence[str] = (),
        lengths: str = "chars",
        failure_limit: int = 5,
        judge_template: str = "builtin",
        judge_model: Optional[str] = None,
    ) -> None:
        super().__init__(
            nopt=_check_nopt(nopt),
            refm=refm,
            judge_column=judge_column,
            variants=list(check_variants(variants)),
            extras=list(check_extras(extras)),
            lengths=_check_lengths(lengths),
            failure_limit=failure_limit,
            judge_template=judge_template,
            judge_model=judge_model,
        )
        self.variants = tuple(self.params["variants"])
        self.extras = tuple(self.params["extras"])
        self.rows: List[List[Any]] = []

    def add(self, item: ItemRow) -> None:
        self.rows.append([item[k] for k in _STATE_FIELDS])

    def _data(self) -> Dict[str, Any]:
        return {"fields": list(_STATE_FIELDS), "rows": [list(r) for r in self.rows]}

    def _load(self, data: Mapping[str, Any]) -> None:
        if list(data["fields"]) != list(_STATE_FIELDS):
            raise ValueError("unexpected row fields")
        self.rows = [list(r) for r in data["rows"]]
        if any(len(r) != len(_STATE_FIELDS) for r in self.rows):
            raise ValueError("a row has the wrong number of fields")

    def _merge(self, other: Accumulator) -> None:
        assert isinstance(other, PairwiseAccumulator)
        self.rows.extend(list(r) for r in other.rows)

    def scoring_rows(self) -> List[_Row]:
        """The rows as the aggregation steps read them, in input order."""
        return [_row_of(pos, dict(zip(_STATE_FIELDS, r))) for pos, r in enumerate(self.rows)]

    def analyse(self) -> Tuple[str, List[_Row], Partition]:
        """``(refm, rows, partition)``: refm (given or inferred) and the consistency split."""
        rows = self.scoring_rows()
        refm = self.params["refm"]
        if refm is None:
            refm = guess_refm((r.A, r.B) for r in rows)
        return refm, rows, pair_both_orders(rows, orphans_excluded="orphans_excluded" in self.variants)

    def finalize(self) -> Report:
        report, status = self.finalize_with_consistency()
        self._last = (len(self.rows), status)
        return report

    def last_consistency(self) -> List[Optional[bool]]:
        """:meth:`consistency` as the last :meth:`finalize` found it (computed again if rows came since)."""
        last: Optional[Tuple[int, List[Optional[bool]]]] = getattr(self, "_last", None)
        if last is None or last[0] != len(self.rows):
            return self.consistency()
        return last[1]

    def finalize_with_consistency(self) -> Tuple[Report, List[Optional[bool]]]:
        """:meth:`finalize` and :meth:`consistency` from one analysis of the rows."""
        p = self.params
        refm, rows, part = self.analyse()
        diags = self.notes() + row_diagnostics(rows)
        failed = check_failures(rows, limit=p["failure_limit"], judge_column=p["judge_column"])
        counts = count_summary(len(rows), len(failed), part)
        if not part.non_em:
            diags.append("no non-EM rows: extraction rate is null and the tables are empty (the reference fails)")
        old = old_version_tables(
            part.consistent, refm=refm, float64_tables="float64_tables" in self.variants, diagnostics=diags
        )
        new = new_version_rates(
            part.consistent,
            part.inconsistent,
            refm=refm,
            macro_average="macro_average" in self.variants,
            diagnostics=diags,
        )
        lstats = length_stats(rows)
        result: "OrderedDict[str, Any]" = OrderedDict()
        result["refm"] = refm
        result["judge_column"] = p["judge_column"]
        result["nopt"] = p["nopt"]
        result["counts"] = counts
        result["old_version"] = old
        result["new_version"] = new
        result["length_stats"] = OrderedDict(
            [("unit", p["lengths"]), ("columns", ["model", "mean", "std"]), ("rows", lstats)]
        )
        metrics = table_metrics(counts, old, new, lstats)
        add_extras(result, metrics, extras=self.extras, part=part, failed=len(failed), refm=refm)
        sig = signature(
            variants=self.variants,
            params=signature_params(
                nopt=p["nopt"],
                refm=refm,
                lengths=p["lengths"],
                judge_template=p["judge_template"],
                extras=self.extras,
                judge_model=p["judge_model"],
            ),
        )
        report = Report(family=FAMILY, signature=sig, result=result, metrics=dict(metrics), diagnostics=diags)
        return report, _status(rows, part)

    def consistency(self) -> List[Optional[bool]]:
        """Per row, in input order: True consistent, False inconsistent, None not in either partition."""
        _, rows, part = self.analyse()
        return _status(rows, part)


def _status(rows: Sequence[_Row], part: Partition) -> List[Optional[bool]]:
    status: List[Optional[bool]] = [None] * len(rows)
    for r, s in zip(part.extracted, part.status):
        status[r.pos] = s
    return status


@register_accumulator
class PairwiseJudgeAccumulator(PairwiseAccumulator):
    """``pairwise judge``: the same item rows and report; ``judge_model`` is in its params."""

    COMMAND = "judge"


#: Output formats of a pairwise report besides the common ones (none: the reference's files are
#: written by ``pairwise score --output-dir``), for the CLI and ``merge``.
REPORT_FORMATS: Dict[str, Callable[[Report, Any], str]] = {}


# --------------------------------------------------------------------------- file level


class PairwiseResult(NamedTuple):
    """What :func:`score` returns: the report's parts, the consistency partitions, the report."""

    signature: str
    result: Dict[str, Any]
    metrics: "OrderedDict[str, Any]"
    diagnostics: List[str]
    consistent_rows: List[Mapping[str, Any]]
    inconsistent_rows: List[Mapping[str, Any]]
    report: Report


def _numbered_item(
    numbered: Tuple[int, Mapping[str, Any]],
    *,
    judge_column: str,
    nopt: int,
    refm: Optional[str],
    variants: Sequence[str],
    length: Optional[Callable[[str], int]],
    path: Optional[str],
) -> ItemRow:
    """The item row of ``(row number, record)``: the per-item work (module-level, so workers can run it)."""
    row, record = numbered
    return _item(
        record,
        judge_column=judge_column,
        nopt=nopt,
        refm=refm,
        variants=variants,
        length=length,
        row=row,
        path=path,
    )


def _accumulate(
    acc: PairwiseAccumulator,
    records: Sequence[Mapping[str, Any]],
    *,
    lines: Optional[Sequence[int]],
    path: Optional[str],
    length: Optional[Callable[[str], int]],
    on_item: Optional[Callable[[ItemRow], None]],
) -> List[ItemRow]:
    """Score ``records`` on the current engine into ``acc``; returns the item rows (input order).

    With refm inferred, the item rows' ``model``/``win``/``tie``/``loss`` need every
    row first: the rows reach ``on_item`` after the inference (the accumulator's
    state does not hold those fields, so it takes each row as it comes).
    """
    p = acc.params
    fn = functools.partial(
        _numbered_item,
        judge_column=p["judge_column"],
        nopt=p["nopt"],
        refm=p["refm"],
        variants=acc.variants,
        length=length,
        path=path,
    )
    numbered = ((pos + 1 if lines is None else lines[pos], rec) for pos, rec in enumerate(records))
    items: List[ItemRow] = []
    deferred = p["refm"] is None
    keep = items.append

    def keep_and_pass(item: ItemRow) -> None:
        items.append(item)
        if on_item is not None:
            on_item(item)

    accumulate_items(acc, fn, numbered, on_item=keep if deferred else keep_and_pass)
    if deferred:
        inferred = guess_refm((it["A"], it["B"]) for it in items)
        for it in items:
            it.update(candidate_outcomes(it["A"], it["B"], it["choice"], inferred))
            if on_item is not None:
                on_item(it)
    return items


def score(
    records: Sequence[Mapping[str, Any]],
    *,
    nopt: int = 2,
    refm: Optional[str] = None,
    judge_column: Optional[str] = None,
    variants: Sequence[str] = (),
    extras: Sequence[str] = (),
    length: Optional[Callable[[str], int]] = None,
    length_unit: str = "chars",
    failure_cnt: int = 5,
    judge_template: Optional[str] = None,
    judge_model: Optional[str] = None,
    command: str = "score",
    notes: Sequence[str] = (),
    lines: Optional[Sequence[int]] = None,
    path: Optional[str] = None,
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> PairwiseResult:
    """Score judge records (the reference's ``record_{judge}_{nopt}.tsv`` rows).

    ``records`` hold the 9 comparison columns and a judge column (raw judge
    text, ``EM``, or the API fail message); a row with ``exact_match`` true and
    no judge text is taken as ``EM``.  ``refm`` defaults to the one model
    present in every comparison; ``judge_column`` to the only extra column.
    ``on_item`` gets each item row (:func:`score_item`) in input order;
    ``notes`` are diagnostics that come first (e.g. from building the
    comparisons); ``lines``/``path`` locate a bad record in errors.  The item
    rows are computed on the current engine (``--jobs``, ``--engine dask``;
    ``length`` must then be picklable, e.g. :class:`TokenLength`), the report
    is the same for any engine.

    Result keys, in order: ``refm``, ``judge_column``, ``nopt``, ``counts``
    (``total`` N incl. EM, ``failed`` F, ``non_exact`` M, ``extracted`` S,
    ``extraction_rate`` S/M, ``consistent`` C, ``consistency_rate`` C/T with T
    the extracted rows), ``old_version``, ``new_version``, ``length_stats``,
    then the requested ``extras``: ``conservative_win_rate`` (FastChat rule per
    complete swapped pair), ``per_model_consistency``, ``unparseable_share``
    (rows the judge answered but whose choice could not be read, over the
    non-EM rows that are not API failures).

    Raises :class:`ScoringError` when ``failed >= failure_cnt`` (the reference
    exits), naming the failed ``cmp_index`` values, or for a malformed
    ``cmp_index``.
    """
    variants = check_variants(variants)
    extras = check_extras(extras)
    nopt = _check_nopt(nopt)
    jcol = check_record_columns(records, judge_column=judge_column)
    cls = PairwiseJudgeAccumulator if command == "judge" else PairwiseAccumulator
    acc = cls(
        nopt=nopt,
        refm=refm,
        judge_column=jcol,
        variants=variants,
        extras=extras,
        lengths=length_unit,
        failure_limit=failure_cnt,
        judge_template=template_id(judge_template),
        judge_model=judge_model,
    )
    for text in notes:
        acc.note(text)
    items = _accumulate(acc, records, lines=lines, path=path, length=length, on_item=on_item)
    report = finish(acc)
    consistent, inconsistent = consistency_partitions(records, items, acc.last_consistency())
    return PairwiseResult(
        report.signature,
        report.result,
        OrderedDict(report.metrics),
        list(report.diagnostics),
        consistent,
        inconsistent,
        report,
    )


def consistency_partitions(
    records: Sequence[Mapping[str, Any]], items: Sequence[Mapping[str, Any]], status: Sequence[Optional[bool]]
) -> Tuple[List[Mapping[str, Any]], List[Mapping[str, Any]]]:
    """The reference's ``consistent_cmp.tsv`` and ``inconsistent_cmp.tsv`` rows.

    Each is the record with every column of the record file plus
    ``extracted`` (the item's choice), in input order; ``status`` is
    :meth:`PairwiseAccumulator.consistency`.
    """
    columns: List[str] = []
    for rec in records:
        for k in rec:
            if k not in columns:
                columns.append(k)
    out: Dict[bool, List[Mapping[str, Any]]] = {True: [], False: []}
    for rec, it, s in zip(records, items, status):
        if s is not None:
            row: "OrderedDict[str, Any]" = OrderedDict((k, rec.get(k)) for k in columns)
            row["extracted"] = it["choice"]
            out[s].append(row)
    return out[True], out[False]


def read_records(path: str) -> Tuple[List[int], List[Dict[str, Any]]]:
    """The rows of a judge record file and their line (or sheet row) numbers; see :func:`read_table`."""
    pairs = read_table(path)
    return [n for n, _ in pairs], [r for _, r in pairs]


def score_record_file(
    path: str,
    *,
    nopt: int,
    refm: Optional[str] = None,
    judge_column: Optional[str] = None,
    variants: Sequence[str] = (),
    extras: Sequence[str] = (),
    length: Optional[Callable[[str], int]] = None,
    lengths: str = "chars",
    failure_limit: int = 5,
    judge_template: Optional[str] = None,
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> PairwiseResult:
    """:func:`score` on a record file (``.tsv``, ``.csv``, ``.jsonl``, ``.json``, ``.xlsx``); errors name it."""
    lines, records = read_records(path)
    if not records:
        raise ScoringError("holds no records", path=path)
    try:
        return score(
            records,
            nopt=nopt,
            refm=refm,
            judge_column=judge_column,
            variants=variants,
            extras=extras,
            length=length,
            length_unit=lengths,
            failure_cnt=failure_limit,
            judge_template=judge_template,
            lines=lines,
            path=path,
            on_item=on_item,
        )
    except ScoringError as exc:
        if exc.path is None:
            raise ScoringError(exc.msg, path=path, field=exc.field, record=exc.record) from None
        raise


def score_file(
    path: str,
    *,
    nopt: int,
    refm: Optional[str] = None,
    judge_column: Optional[str] = None,
    variants: Sequence[str] = (),
    extras: Sequence[str] = (),
    length: Optional[Callable[[str], int]] = None,
    lengths: str = "chars",
    failure_limit: int = 5,
    judge_template: Optional[str] = None,
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """The ``pairwise score`` command: score a judge record file into a Report.

    ``length`` counts an answer (default ``len``; ``lengths`` names its unit
    for the result and the signature, e.g. ``"tokens"`` with the tokens
    extra's cl100k counter); ``judge_template`` is the template text the
    prompts were built with (its id goes into the signature).  ``on_item``
    receives each item row (:func:`score_item`) in input order.
    """
    return score_record_file(
        path,
        nopt=nopt,
        refm=refm,
        judge_column=judge_column,
        variants=variants,
        extras=extras,
        length=length,
        lengths=lengths,
        failure_limit=failure_limit,
        judge_template=judge_template,
        on_item=on_item,
    ).report


def possible_metric_names(comparisons: Sequence[Comparison], *, refm: str, extras: Sequence[str] = ()) -> List[str]:
    """Every gateable name a report on judged ``comparisons`` can have.

    A superset: which models, tasks and rate keys the report holds depends on
    the judge's answers (only consistent rows enter the old tables), but no
    name outside this list can appear, so a ``--gate`` naming one is an error
    before any judge call.
    """
    extras = check_extras(extras)
    names = ["total", "failed", "non_exact", "extracted", "extraction_rate", "consistent", "consistency_rate"]
    models: List[str] = []
    tasks: Set[str] = set()
    keys: Set[str] = set()
    for c in comparisons:
        for m in (c.A, c.B):
            if m not in models:
                models.append(m)
        for piece in (c.task or "").split(", "):
            if piece:
                tasks.add(piece)
        metric = _metric_of(c.cmp_index.split(";")[0])
        keys.update(k for k in (f"{metric};{c.A};{c.B}", f"{metric};{c.B};{c.A}") if refm in k)
    columns = ["Overall-lang", "EN"] + sorted({t.split("-")[0] for t in tasks}) + sorted(tasks)
    others = sorted(m for m in models if m != refm)
    names += [f"{table};{m};{col}" for table in ("win+halfdraw", "win+bothgood") for m in others for col in columns]
    names += [f"{rates};{k}" for rates in ("with_tie", "without_tie") for k in sorted(keys)]
    for m in models:
        names += [f"length_mean;{m}", f"length_std;{m}"]
    if "conservative_win_rate" in extras:
        names += [f"conservative_{k};{m}" for m in others for k in ("win_rate", "win_rate_adjusted")]
    if "per_model_consistency" in extras:
        names += [f"consistency_rate;{m}" for m in others]
    if "unparseable_share" in extras:
        names.append("unparseable_share")
    return names
