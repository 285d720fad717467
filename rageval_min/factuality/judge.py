"""Mirrors google-deepmind/long-form-factuality@9d27158:eval/safe/*: ``factuality judge``, a search-free SAFE.

For every response: split it into sentences (a stdlib rule standing in for NLTK's
``sent_tokenize``), ask the judge for the atomic facts of each sentence (step 1),
make each fact self-contained (step 2), decide whether it is relevant to the
prompt (step 3), and rate each relevant fact as Supported / Not Supported against
the record's own passages instead of Google results (step 4, a
search-free adapter of the project).  The parse rules and their failure semantics are
the reference's:

* step 1: split the output on ``"- "`` and drop the first chunk, cut every item at
  its first newline and strip it, add ``.`` to the last item if it lacks one;
  with nothing parsed, split on ``"* "`` instead;
* step 2: the first code block; when there is none, the original fact is kept;
* step 3: the first ``[...]`` must be ``Foo`` or ``Not Foo``; when it is neither,
  the fact counts as **relevant**; ``Not Foo`` gives ``Irrelevant`` and no rating;
* step 4: the first ``[...]`` with ``[^\\w\\s]`` removed and stripped must be exactly
  ``Supported`` or ``Not Supported``; otherwise the fact is **dropped** (counted in
  ``judge_unparseable`` and ``dropped``).

Output: one line per response ``{"id", "supported", "not_supported", "irrelevant",
"num_claims", "dropped", "facts"}``, ready for ``rageval-min factuality f1k``
(``num_claims`` counts every extracted fact, irrelevant ones included, as SAFE's
result).  A judge call that fails after the retries makes the whole response an
error line ``{"id", "error"}``, which ``f1k`` reports and skips; nothing is guessed.

This module is library code (prompts, parsing, :func:`judge_responses`, the
file-level :func:`judge_file` and the report's :class:`JudgeAccumulator`); the
``factuality judge`` command line is in ``factuality/cli.py``.  The judge calls
run with the runner's own concurrency (``--concurrency``), not through the
``--jobs`` engine: there is no per-item work worth sending to other processes
once the answers are in.
"""

import re
from typing import Any, Callable, ContextManager, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .. import judges
from .._contract import ItemRow, finish
from .._io import dumps, iter_records
from .._output import atomic_writer
from ..errors import ScoringError
from ..judges import JudgeStats, PromptTemplate, UnparseableAnswer, template_signature
from ..judges.options import judge_model, with_judge_stats
from ..judges.stats_metrics import TRUST_METRIC_NAMES
from ..report import Report
from ._common import REF_SAFE
from .accumulators import JUDGE_COUNTS, JudgeAccumulator

__all__ = [
    "FACT_PARAMS",
    "JUDGE_METRICS",
    "JudgeAccumulator",
    "RATER_PARAMS",
    "TEMPLATES",
    "TEMPLATE_STEPS",
    "judge_file",
    "judge_responses",
    "judge_run",
    "parse_facts",
    "read_judge_input",
    "parse_rating",
    "parse_relevance",
    "parse_revised",
    "split_sentences",
]

REF = REF_SAFE
FACT_PARAMS: Dict[str, Any] = {"temperature": 0, "max_tokens": 512}
RATER_PARAMS: Dict[str, Any] = {"temperature": 0.1, "max_tokens": 512}
TEMPLATE_STEPS = ("facts", "revise", "relevance", "rate")

_FACTS = """\
List the separate facts stated in the sentence below. Write each fact as a short, complete sentence on its \
own line starting with "- ". Do not add anything the sentence does not say.

Sentence: The Halden bridge, finished in 1931, crosses the Rell river and is 310 metres long.
- The Halden bridge was finished in 1931.
- The Halden bridge crosses the Rell river.
- The Halden bridge is 310 metres long.

Sentence: {sentence}
"""

_REVISE = """\
Rewrite the fact so that it can be understood without the response around it: replace pronouns and vague \
references ("he", "the company", "this film") by the names the response uses. Do not add any other \
information. Explain in one sentence, then give the rewritten fact inside a markdown code block.

Response:
{response}

Fact: {fact}
"""

_RELEVANCE = """\
A user asked a question and received a response. Decide whether the fact below is relevant to answering \
the question: it is relevant if it is about the subject of the question, or about something the response \
explicitly connects to that subject. Explain briefly, then answer with [Foo] if it is relevant or \
[Not Foo] if it is not.

Question: {prompt}

Response:
{response}

Fact: {fact}
"""

_RATE = """\
Decide whether the statement is supported by the knowledge below. A statement that the knowledge strongly \
implies counts as supported. Summarise the relevant knowledge, reason step by step, restate the statement, \
and finish with [Supported] or [Not Supported].

Knowledge:
{knowledge}

Statement: {fact}
"""

TEMPLATES: Dict[str, PromptTemplate] = {
    "facts": PromptTemplate(_FACTS, ("sentence",)),
    "revise": PromptTemplate(_REVISE, ("response", "fact")),
    "relevance": PromptTemplate(_RELEVANCE, ("prompt", "response", "fact")),
    "rate": PromptTemplate(_RATE, ("knowledge", "fact")),
}

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_INITIALS = re.compile(r"\b[A-Z]\.$")


def split_sentences(response: str) -> List[str]:
    """Paragraphs (non-empty stripped lines), each split into sentences.

    A stand-in for NLTK's ``sent_tokenize``: a break after ``.``/``!``/``?``
    followed by whitespace and an upper-case letter, digit or opening quote,
    except after a single capital initial (``J. Smith``); one-word pieces and
    pieces starting in lower case are merged into the previous sentence, as SAFE does.

    >>> split_sentences("Ada was born in 1815. She wrote notes.\\nJ. R. Smith met her. ok")
    ['Ada was born in 1815.', 'She wrote notes.', 'J. R. Smith met her. ok']
    """
    out: List[str] = []
    for para in (p.strip() for p in response.split("\n")):
        if not para:
            continue
        pieces: List[str] = []
        for piece in _SENTENCE_END.split(para):
            if pieces and (_INITIALS.search(pieces[-1]) or len(piece.split()) <= 1 or piece[:1].islower()):
                pieces[-1] = pieces[-1] + " " + piece
            else:
                pieces.append(piece)
        out.extend(p for p in pieces if p.strip())
    return out


def parse_facts(text: str) -> List[str]:
    """Step 1's parse (``- `` items, else ``* `` items)."""
    for marker in ("- ", "* "):
        items = [chunk.split("\n", 1)[0].strip() for chunk in text.split(marker)[1:]]
        items = [i for i in items if i]
        if items:
            if not items[-1].endswith("."):
                items[-1] = items[-1] + "."
            return items
    return []


_CODE_BLOCK = re.compile(r"```(?:\w+\n)?(.*?)```", re.DOTALL)
_BRACKET = re.compile(r"\[(.*?)\]", re.DOTALL)


def parse_revised(text: str) -> str:
    m = _CODE_BLOCK.search(text)
    if m is None or not m.group(1).strip():
        raise UnparseableAnswer(None)
    return m.group(1).strip()


def parse_relevance(text: str) -> bool:
    m = _BRACKET.search(text)
    answer = m.group(1) if m else ""
    if answer == "Foo":
        return True
    if answer == "Not Foo":
        return False
    raise UnparseableAnswer(True)  # the reference treats an unreadable relevance as relevant


def _supported(rating: Any) -> bool:
    """``--samples``: a rating's pass/fail vote (Supported passes)."""
    return rating == "Supported"


def parse_rating(text: str) -> str:
    m = _BRACKET.search(text)
    answer = re.sub(r"[^\w\s]", "", m.group(1)).strip() if m else ""
    if answer in ("Supported", "Not Supported"):
        return answer
    raise UnparseableAnswer(None)  # the reference drops the fact


class _Responses(NamedTuple):
    """The checked input of :func:`judge_responses`, one entry per record."""

    ids: List[Any]
    responses: List[str]
    prompts: List[str]
    knowledge: List[str]


def _responses(
    records: Sequence[Dict[str, Any]],
    response_field: str,
    prompt_field: str,
    passages_field: str,
    path: Optional[str] = None,
) -> _Responses:
    """Check every record (before any judge call) and gather its id, response, prompt and passages."""
    out = _Responses([], [], [], [])
    lines = getattr(records, "lines", None)  # the input lines, when read by read_judge_input
    for pos, rec in enumerate(records, 1):
        rid = rec.get("id", pos)
        at: Dict[str, Any] = {"path": path, "line": lines[pos - 1] if lines and path else None, "record": f"id={rid}"}
        for name in (response_field, prompt_field):
            if not isinstance(rec.get(name), str):
                raise ScoringError("missing or not a string", field=name, **at)
        passages = rec.get(passages_field, [])
        if isinstance(passages, str):
            passages = [passages]
        if not isinstance(passages, list) or not all(isinstance(p, str) for p in passages):
            raise ScoringError("must be a list of strings", field=passages_field, **at)
        out.ids.append(rid)
        out.responses.append(rec[response_field])
        out.prompts.append(rec[prompt_field])
        out.knowledge.append("\n".join(passages))
    return out


class _Steps:
    """Runs the judge steps; a failed call fails its owner's response (the first error kept in ``failed``)."""

    def __init__(self, runner: judges.JudgeRunner) -> None:
        self.runner = runner
        self.failed: Dict[int, str] = {}

    def run(
        self,
        prompts: List[str],
        owners: Sequence[int],
        params: Dict[str, Any],
        parse: Callable[[str], Any],
        name: str,
        vote: Optional[Callable[[Any], Any]] = None,
    ) -> List[Any]:
        """One step; with ``vote`` (a pass/fail vote of the parsed answer) it is sampled under ``--samples``."""
        res = self.runner.run(prompts, params=params, parse=parse, label=name, vote=vote, kind="bool")
        for o, e in zip(owners, res.errors):
            if e is not None and o not in self.failed:
                self.failed[o] = e
        return res.parsed


class _Rated(NamedTuple):
    """Every extracted fact: ``(owner, sentence, fact)``, its revision and its label (None: dropped)."""

    facts: List[Tuple[int, str, str]]
    revised: List[str]
    label: Dict[int, Optional[str]]


def _rate(rs: _Responses, steps: _Steps, tpl: Mapping[str, PromptTemplate]) -> _Rated:
    """SAFE steps 1-4 over every response at once (one runner call per step)."""
    sent_owner: List[int] = []
    sentences: List[str] = []
    for i, resp in enumerate(rs.responses):
        for s in split_sentences(resp):
            sent_owner.append(i)
            sentences.append(s)
    # step 1: facts per sentence
    render = tpl["facts"].render
    parsed = steps.run(
        [render(sentence=s) for s in sentences], sent_owner, FACT_PARAMS, parse_facts, "factuality facts"
    )
    facts = [(owner, sentence, f) for owner, sentence, items in zip(sent_owner, sentences, parsed) for f in items or []]
    fact_owner = [o for o, _, _ in facts]
    # step 2: self-contained revision (unreadable -> the original fact)
    render = tpl["revise"].render
    prompts = [render(response=rs.responses[o], fact=f) for o, _, f in facts]
    parsed = steps.run(prompts, fact_owner, RATER_PARAMS, parse_revised, "factuality revise")
    revised = [rv if isinstance(rv, str) else f for (_, _, f), rv in zip(facts, parsed)]
    # step 3: relevance (unreadable -> relevant)
    render = tpl["relevance"].render
    prompts = [render(prompt=rs.prompts[o], response=rs.responses[o], fact=rf) for o, rf in zip(fact_owner, revised)]
    relevance = steps.run(prompts, fact_owner, RATER_PARAMS, parse_relevance, "factuality relevance", vote=bool)
    relevant = [k for k, rel in enumerate(relevance) if rel is not False]
    # step 4: rating against the record's passages
    render = tpl["rate"].render
    prompts = [render(knowledge=rs.knowledge[fact_owner[k]], fact=revised[k]) for k in relevant]
    ratings = steps.run(
        prompts, [fact_owner[k] for k in relevant], RATER_PARAMS, parse_rating, "factuality rate", vote=_supported
    )
    label: Dict[int, Optional[str]] = {k: "Irrelevant" for k, rel in enumerate(relevance) if rel is False}
    for k, rating in zip(relevant, ratings):
        label[k] = rating
    return _Rated(facts, revised, label)


def _judged_lines(
    ids: Sequence[Any], rated: _Rated, failed: Mapping[int, str]
) -> Tuple[List[Dict[str, Any]], List[str]]:
    """The output line of every response (its counts and facts, or its error) and the diagnostics."""
    facts, revised, label = rated
    by_owner: List[List[int]] = [[] for _ in ids]  # each response's fact indices, in order
    for k, (o, _, _) in enumerate(facts):
        by_owner[o].append(k)
    lines: List[Dict[str, Any]] = []
    diags: List[str] = []
    for i, rid in enumerate(ids):
        if i in failed:
            lines.append({"id": rid, "error": f"judge call failed: {failed[i]}"})
            diags.append(f"id={rid}: judge call failed ({failed[i]}); no counts")
            continue
        mine = by_owner[i]
        labels = [label.get(k) for k in mine]
        dropped = sum(1 for lab in labels if lab is None)
        if dropped:
            diags.append(f"id={rid}: {dropped} fact(s) dropped: the rating could not be read")
        lines.append(
            {
                "id": rid,
                "supported": labels.count("Supported"),
                "not_supported": labels.count("Not Supported"),
                "irrelevant": labels.count("Irrelevant"),
                "num_claims": len(mine),
                "dropped": dropped,
                "facts": [
                    {
                        "sentence": facts[k][1],
                        "atomic_fact": facts[k][2],
                        "self_contained_atomic_fact": revised[k],
                        "annotation": label.get(k),
                    }
                    for k in mine
                ],
            }
        )
    return lines, diags


def judge_responses(
    records: Sequence[Dict[str, Any]],
    runner: judges.JudgeRunner,
    *,
    templates: Optional[Dict[str, PromptTemplate]] = None,
    response_field: str = "response",
    prompt_field: str = "prompt",
    passages_field: str = "passages",
    path: Optional[str] = None,
) -> Tuple[List[Dict[str, Any]], List[str]]:
    """Rate every response; return the output lines and diagnostics (``path``: the input file, named
    by the error about a bad record)."""
    tpl = dict(TEMPLATES)
    tpl.update(templates or {})
    rs = _responses(records, response_field, prompt_field, passages_field, path)
    steps = _Steps(runner)
    rated = _rate(rs, steps, tpl)
    return _judged_lines(rs.ids, rated, steps.failed)


class _Records(List[Dict[str, Any]]):
    """The records of an input file, with the line of each (for errors that name it)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: List[int] = []


def read_judge_input(path: str) -> List[Dict[str, Any]]:
    """The records of a ``factuality judge`` input (checked before any judge call; none is an input error)."""
    records = _Records()
    for line, rec in iter_records(path):
        records.append(rec)
        records.lines.append(line)
    if not records:
        raise ScoringError("no valid record: the file holds no response", path=path)
    return records


def judge_file(
    path: str,
    runner: judges.JudgeRunner,
    *,
    records_path: str,
    templates: Optional[Dict[str, PromptTemplate]] = None,
    response_field: str = "response",
    prompt_field: str = "prompt",
    passages_field: str = "passages",
    judge_model: str = "none",
    records: Optional[Sequence[Dict[str, Any]]] = None,
    on_item: Optional[Callable[[ItemRow], None]] = None,
) -> Report:
    """``factuality judge``: judge every response of ``path`` and write the judged lines to ``records_path``.

    The lines (``{"id", "supported", "not_supported", "irrelevant",
    "num_claims", "dropped", "facts"}`` or ``{"id", "error"}``) are written
    atomically; the item rows are the same lines without ``facts``, and the
    report is :class:`JudgeAccumulator`'s (``output`` names ``records_path``).
    ``records`` are the input's records when the caller has already read them
    (:func:`read_judge_input`).  ``judge_model`` goes into the signature as a
    parameter; the runner's statistics are not part of the report (the CLI
    adds them as gateable metrics).
    """
    if records is None:
        records = read_judge_input(path)
    used = dict(TEMPLATES)
    used.update(templates or {})
    lines, diags = judge_responses(
        records,
        runner,
        templates=used,
        response_field=response_field,
        prompt_field=prompt_field,
        passages_field=passages_field,
        path=path,
    )
    acc = JudgeAccumulator(judge_model=judge_model, judge_template=template_signature(used), records=records_path)
    for text in diags:
        acc.note(text)
    with atomic_writer(records_path) as fh:
        for line in lines:
            fh.write(dumps(line, ensure_ascii=False) + "\n")
            row = {k: v for k, v in line.items() if k != "facts"}
            if on_item is not None:
                on_item(row)
            acc.add(row)
    return finish(acc)


#: What a ``factuality judge`` --gate can read: the summed counts and the judge statistics.
JUDGE_METRICS = ("responses", "errors") + JUDGE_COUNTS + tuple(JudgeStats().as_metrics()) + TRUST_METRIC_NAMES


def judge_run(
    path: str,
    runner: judges.JudgeRunner,
    *,
    records_path: str,
    records: Sequence[Dict[str, Any]],
    open_items: Callable[[], ContextManager[Optional[Callable[[ItemRow], None]]]],
    response_field: str = "response",
    prompt_field: str = "prompt",
    passages_field: str = "passages",
) -> Report:
    """``factuality judge`` as the command runs it, closing ``runner`` at the end.

    The templates are the runner's (``--judge-template STEP=FILE``, else
    :data:`TEMPLATES`), chosen before ``open_items()`` opens the per-item sink;
    the report is :func:`judge_file`'s with the runner's statistics added to its
    gateable metrics (``judge_calls``, ...).
    """
    try:
        used = {s: runner.template(s, TEMPLATES[s]) for s in TEMPLATE_STEPS}
        with open_items() as on_item:
            report = judge_file(
                path,
                runner,
                records_path=records_path,
                templates=used,
                response_field=response_field,
                prompt_field=prompt_field,
                passages_field=passages_field,
                judge_model=judge_model(runner),
                records=records,
                on_item=on_item,
            )
    finally:
        runner.close()
    return with_judge_stats(report, runner)
