"""The LLM-judged MT-RAG metrics behind ``mtrag judge`` (library code).

Reference: ``IBM/mt-rag-benchmark@cc5b1d4:scripts/evaluation/judge_wrapper.py`` and
``...:scripts/evaluation/judge_utils.py`` (structure, call settings and parsers; the prompt
wording here is the project's own).

Steps (``--steps``, default ``idk,rb_llm,rl_f``; ``underspecified`` on request):

``idk``
    ``idk_eval``: does the response say, in whole or in part, that it lacks the
    information?  Parsed with :func:`rageval_min.mtrag.first_token_idk` on the
    stripped output (``"unknown"`` is counted as unparseable).
``underspecified``
    ``underspecified_eval`` with :func:`rageval_min.mtrag.parse_underspecified`
    (0.5 fallback counted as unparseable when no JSON object was found).
``rb_llm``
    ``RB_llm``: a 1-10 rating of the answer against the reference answer and the
    passages, :func:`rageval_min.mtrag.extract_rating` (last matching pattern
    wins, /10); one judge, so the median is the rating itself.
``rl_f``
    ``RL_F`` (RAGAS-style faithfulness): the answer is split into statements by
    one call, then every statement is checked against the passages by one call
    each; ``supported / statements``, ``null`` when there is no statement or a
    call failed.

Prompts are the project's own wording (:data:`TEMPLATES`); ``--judge-template
STEP=FILE`` replaces one (steps ``idk``, ``underspecified``, ``rb_llm``,
``rl_f_statements``, ``rl_f_verdict``; fields as in :data:`TEMPLATES`).  Call
settings follow the reference: temperature 0, top_p 1, max_tokens 400, seed 100
and a one-sentence system message for idk / underspecified / rb_llm;
temperature 0.01 for the RAGAS steps.  A call that fails after the retries
leaves the metric ``[null]`` with a diagnostic; it is never guessed.  IDK
conditioning is the separate ``mtrag condition`` step, as in the reference.

Whatever order ``--steps`` lists them in, the steps run, and their keys are
added to ``metrics``, in the reference pipeline's order: ``underspecified_eval``,
``idk_eval``, ``RL_F``, ``RB_llm``.  ``idk_eval`` and ``underspecified_eval``
are written as the reference's pandas columns are: one 0.5 or null anywhere in
the file makes every ``1``/``0`` of that metric ``1.0``/``0.0`` (see
:class:`rageval_min.mtrag.ColumnTypes`).  Every record is validated (and every
prompt built) before the first judge call.
"""

import functools
import json
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .. import judges, mtrag
from .._contract import ItemRow, finish
from .._io import Problems, iter_jsonl
from .._output import atomic_writer
from .._parallel import accumulate_items
from ..errors import ScoringError
from ..judges import PromptTemplate, UnparseableAnswer
from ..judges import options as judge_options
from ..judges.stats_metrics import TRUST_METRIC_NAMES
from ..report import Report

__all__ = [
    "DEFAULT_STEPS",
    "STEPS",
    "TEMPLATES",
    "TEMPLATE_STEPS",
    "check_steps",
    "gate_names",
    "judge_file",
    "run_judge_step",
    "judge_records",
    "parse_steps",
    "read_judge_input",
    "split_conversation",
    "templates_for",
]

#: The steps, in the order the reference pipeline runs them (``run_generation_eval.py``).
STEPS = ("underspecified", "idk", "rl_f", "rb_llm")
DEFAULT_STEPS = ("idk", "rb_llm", "rl_f")
TEMPLATE_STEPS = ("idk", "underspecified", "rb_llm", "rl_f_statements", "rl_f_verdict")
_TEMPLATES_OF = {
    "idk": ("idk",),
    "underspecified": ("underspecified",),
    "rb_llm": ("rb_llm",),
    "rl_f": ("rl_f_statements", "rl_f_verdict"),
}

SYSTEM = "You are an assistant that follows instructions carefully."
JUDGE_PARAMS: Dict[str, Any] = {"system": SYSTEM, "temperature": 0.0, "top_p": 1, "max_tokens": 400, "seed": 100}
RAGAS_PARAMS: Dict[str, Any] = {"temperature": 0.01}

_IDK = """\
Read a conversation and the reply an assistant gave to its last turn. Decide whether the reply says that \
the assistant does not have enough information to answer, either for the whole question or for part of it.
Use exactly one label:
yes - the reply says it cannot answer at all, or only points elsewhere;
no - the reply answers and does not say that information is missing;
partial - the reply answers part of the question and says that something else is unknown or not covered.
Write the label only.

[Inquiry]
user: What year did the Velt ferry line close?
[Response]
The sources I have do not mention the Velt ferry line, so I cannot tell you when it closed.
[Output]
yes

[Inquiry]
user: How tall is the Orrin tower?
[Response]
The Orrin tower is 212 metres tall.
[Output]
no

[Inquiry]
user: Who founded the Marle choir and when?
[Response]
It was founded by Ada Kerr; the documents do not say in which year.
[Output]
partial

[Inquiry]
user: hi
agent: Hello! How can I help?
user: what's the entry fee of the Daska museum?
[Response]
I'm sorry, I don't have that information.
[Output]
yes

[Inquiry]
{inquiry}
[Response]
{response}
[Output]
"""

_UNDERSPECIFIED = """\
An assistant replied to a request that may have been too vague to answer. Decide whether the reply \
recognises that the request is ambiguous or underspecified, for example by asking a clarifying question \
or by laying out the possible readings.
Answer with a JSON object only: {{"decision": "yes" or "no", "explanation": "<one sentence>"}}

[Response]
{response}
"""

_RB_LLM = """
[Instruction]
Act as a fair and careful judge of an assistant's answer to the current question of a conversation. \
You are given the earlier conversation, the question, a reference answer and the document the assistant \
could use. Judge three things:
[Faithfulness] the answer agrees with the document and does not add unsupported claims;
[Appropriateness] the answer addresses the question in the context of the conversation;
[Completeness] the answer covers what the reference answer covers.
Explain briefly, then rate the answer from 1 to 10 in exactly this format: "Rating: [[5]]".

[The Start of Previous Conversation]
{previous_conversation}
[The End of Previous Conversation]

[The Start of Current Turn Question]
{question}
[The End of Current Turn Question]

[The Start of Reference Answer]
{reference_answer}
[The End of Reference Answer]

[The Start of Assistant's Answer]
{answer}
[The End of Assistant's Answer]

[The Start of Document]
{document}
[The End of Document]
"""

_RL_F_STATEMENTS = """\
Break the answer below into short, self-contained statements: each one a single claim that can be \
checked on its own, with pronouns replaced by the names they refer to. Leave out greetings and \
statements about what the assistant can or cannot do.
Answer with a JSON object only: {{"statements": ["...", "..."]}}

Question:
{question}

Answer:
{answer}
"""

_RL_F_VERDICT = """\
Decide whether the statement can be inferred from the context alone.
Answer with a JSON object only: {{"reason": "<one sentence>", "verdict": 1}} if it can, \
{{"reason": "<one sentence>", "verdict": 0}} if it cannot.

Context:
{context}

Statement:
{statement}
"""

TEMPLATES: Dict[str, PromptTemplate] = {
    "idk": PromptTemplate(_IDK, ("inquiry", "response")),
    "underspecified": PromptTemplate(_UNDERSPECIFIED, ("response",)),
    "rb_llm": PromptTemplate(_RB_LLM, ("previous_conversation", "question", "reference_answer", "answer", "document")),
    "rl_f_statements": PromptTemplate(_RL_F_STATEMENTS, ("question", "answer")),
    "rl_f_verdict": PromptTemplate(_RL_F_VERDICT, ("context", "statement")),
}


# --------------------------------------------------------------------------- pure helpers


def conversation(record: Dict[str, Any], rid: str) -> str:
    """``"\\n".join(f"{speaker}: {text}")`` over ``input``, speakers as stored."""
    turns = record.get("input")
    if not isinstance(turns, list) or not turns:
        raise ScoringError("missing or empty 'input' (the conversation)", record=rid, field="input")
    lines = []
    for i, t in enumerate(turns):
        if not isinstance(t, dict) or not isinstance(t.get("text"), str) or not isinstance(t.get("speaker"), str):
            raise ScoringError("turn needs string 'speaker' and 'text'", record=rid, field=f"input[{i}]")
        lines.append(f"{t['speaker']}: {t['text']}")
    return "\n".join(lines)


def split_conversation(conv: str) -> Tuple[str, str]:
    """``(previous, question)`` as the RB_llm prompt builder splits the conversation (spec 13).

    >>> split_conversation("user: hi")
    ('', 'hi')
    >>> split_conversation("user: a\\nagent: b\\nuser: c")
    ('user: a\\nagent: b', 'c')
    """
    lines = conv.split("\n")
    users = [line for line in lines if line.startswith("user:")]
    if len(users) == 1:
        return "", users[0].split("user: ", 1)[-1] if "user: " in users[0] else users[0][len("user:") :]
    if not users:
        return "\n".join(lines[:-1]), ""
    last = users[-1]
    after = last.split("user: ", 1)[1] if "user: " in last else last[len("user:") :]
    question = after.split("user: ", 1)[0]
    return "\n".join(lines[:-1]), question


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def _json_object(text: str) -> Any:
    m = _JSON_OBJECT.search(text)
    if m is None:
        raise ValueError("no JSON object")
    return json.loads(m.group(0))


def parse_statements(text: str) -> List[str]:
    """The statements of the first-step answer (``{"statements": [...]}``)."""
    try:
        data = _json_object(text)
        items = data["statements"]
    except (ValueError, KeyError, TypeError):
        raise UnparseableAnswer(None) from None
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
        raise UnparseableAnswer(None)
    return [s.strip() for s in items if s.strip()]


#: ``--samples``: the idk, underspecified and rb_llm values are numeric votes (majority = the most
#: frequent value, or median / mean); the rl_f verdicts are pass/fail votes; the statements are asked once.
_NUMBER: Dict[str, Any] = {"vote": float, "kind": "number"}


def parse_verdict(text: str) -> int:
    """1 or 0 from ``{"verdict": 1}``; unparseable otherwise."""
    try:
        v = _json_object(text)["verdict"]
    except (ValueError, KeyError, TypeError):
        m = re.search(r'"?verdict"?\s*[:=]\s*"?([01])', text)
        if m is None:
            raise UnparseableAnswer(None) from None
        return int(m.group(1))
    if v in (0, 1) and not isinstance(v, bool):
        return int(v)
    if v in ("0", "1"):
        return int(v)
    raise UnparseableAnswer(None)


def parse_idk(text: str) -> Any:
    """``idk_eval`` of one stripped judge answer (``"unknown"`` counts as unparseable)."""
    value = mtrag.first_token_idk(text.strip())
    if value == "unknown":
        raise UnparseableAnswer("unknown")
    return value


def parse_rating(text: str) -> float:
    if mtrag.rating_text(text) is None:
        raise UnparseableAnswer(0.5)
    return mtrag.median_rating([mtrag.extract_rating(text)])


def parse_underspecified(text: str) -> Any:
    value = mtrag.parse_underspecified(text)
    if mtrag.underspecified_json(text) is None:
        raise UnparseableAnswer(value)
    return value


# --------------------------------------------------------------------------- steps and templates


def parse_steps(text: str) -> List[str]:
    """``--steps`` (comma-separated) as a list, checked (see :func:`check_steps`)."""
    return check_steps([s.strip() for s in text.split(",") if s.strip()])


def check_steps(steps: Sequence[str]) -> List[str]:
    """The steps as given; an unknown step or none at all is a :class:`ScoringError`."""
    bad = [s for s in steps if s not in STEPS]
    if bad or not steps:
        raise ScoringError(f"--steps: unknown step(s) {', '.join(bad) or '(none)'}; choose from {', '.join(STEPS)}")
    return list(steps)


def templates_for(runner: judges.JudgeRunner, steps: Sequence[str]) -> Dict[str, PromptTemplate]:
    """The prompt template of every template step the chosen steps use (the user's file or the built-in one)."""
    return {t: runner.template(t, TEMPLATES[t]) for s in steps for t in _TEMPLATES_OF[s]}


# --------------------------------------------------------------------------- the judged step


class _Prepared:
    """Everything a record's prompts need, checked before the first judge call."""

    def __init__(self, rid: str, conv: str, pred: str, targets: List[str], passages: List[str]) -> None:
        self.rid = rid
        self.conv = conv
        self.pred = pred
        self.targets = targets
        self.passages = passages


def _prepare(rec: Dict[str, Any], rid: str, steps: Sequence[str]) -> _Prepared:
    preds_list = rec.get("predictions")
    if (
        not isinstance(preds_list, list)
        or not preds_list
        or not isinstance(preds_list[0], dict)
        or not isinstance(preds_list[0].get("text"), str)
    ):
        raise ScoringError("missing predictions[0].text", record=rid, field="predictions")
    conv = conversation(rec, rid)
    targets: List[str] = []
    if "rb_llm" in steps:
        targets = mtrag.record_texts(rec, "targets", rid, required=True) or []
        if not targets:
            raise ScoringError("RB_llm needs a reference answer (targets[0].text)", record=rid, field="targets")
    passages: List[str] = []
    if "rb_llm" in steps or "rl_f" in steps:
        passages = mtrag.record_texts(rec, "contexts", rid, required=False) or []
    metrics = rec.get("metrics")
    if metrics is not None and not isinstance(metrics, dict):
        raise ScoringError("'metrics' must be an object", record=rid, field="metrics")
    return _Prepared(rid, conv, preds_list[0]["text"], targets, passages)


def judge_records(
    records: List[Dict[str, Any]],
    runner: judges.JudgeRunner,
    *,
    steps: Sequence[str] = DEFAULT_STEPS,
    templates: Optional[Dict[str, PromptTemplate]] = None,
    prepared: Optional[Sequence[_Prepared]] = None,
) -> List[str]:
    """Fill ``metrics`` of every record for the chosen steps (in the pipeline's order); return diagnostics.

    Every record is checked before the first judge call.  Values are as each
    record gets them; the file's column typing is :func:`judge_file`'s.
    """
    steps = check_steps(steps)
    tpl = dict(TEMPLATES)
    tpl.update(templates or {})
    if prepared is None:
        prepared = [_prepare(rec, mtrag.record_id(rec, f"record {pos}"), steps) for pos, rec in enumerate(records, 1)]
    for rec in records:
        if not isinstance(rec.get("metrics"), dict):
            rec["metrics"] = {}
    diags: List[str] = []
    rids = [p.rid for p in prepared]
    convs = [p.conv for p in prepared]
    preds = [p.pred for p in prepared]

    def put(name: str, values: Sequence[Any], errors: Sequence[Optional[str]]) -> None:
        for rec, rid, v, e in zip(records, rids, values, errors):
            if name in rec["metrics"]:
                diags.append(f"{rid}: {name} was already present and is replaced")
            rec["metrics"][name] = [v]
            if e is not None:
                diags.append(f"{rid}: {name}: judge call failed ({e}); value null")

    for step in STEPS:
        if step not in steps:
            continue
        if step == "underspecified":
            prompts = [tpl["underspecified"].render(response=p) for p in preds]
            res = runner.run(
                prompts, params=JUDGE_PARAMS, parse=parse_underspecified, label="mtrag underspecified", **_NUMBER
            )
            put("underspecified_eval", res.parsed, res.errors)
        elif step == "idk":
            prompts = [tpl["idk"].render(inquiry=c, response=p) for c, p in zip(convs, preds)]
            res = runner.run(prompts, params=JUDGE_PARAMS, parse=parse_idk, label="mtrag idk", **_NUMBER)
            put("idk_eval", res.parsed, res.errors)
        elif step == "rl_f":
            values, errors = _rl_f(prepared, runner, tpl, diags)
            put("RL_F", values, errors)
        else:  # rb_llm
            prompts = []
            for p in prepared:
                previous, question = split_conversation(p.conv)
                prompts.append(
                    tpl["rb_llm"].render(
                        previous_conversation=previous,
                        question=question,
                        reference_answer=p.targets[0],
                        answer=p.pred,
                        document="\n\n".join(p.passages),
                    )
                )
            res = runner.run(prompts, params=JUDGE_PARAMS, parse=parse_rating, label="mtrag rb_llm", **_NUMBER)
            put("RB_llm", res.parsed, res.errors)
    return diags


def _rl_f(
    prepared: Sequence[_Prepared], runner: judges.JudgeRunner, tpl: Dict[str, PromptTemplate], diags: List[str]
) -> Tuple[List[Optional[float]], List[Optional[str]]]:
    res = runner.run(
        [tpl["rl_f_statements"].render(question=p.conv, answer=p.pred) for p in prepared],
        params=RAGAS_PARAMS,
        parse=parse_statements,
        label="mtrag rl_f statements",
    )
    jobs: List[Tuple[int, str]] = []
    for i, (p, statements) in enumerate(zip(prepared, res.parsed)):
        if not statements:
            continue
        context = "\n".join(p.passages)
        jobs += [(i, tpl["rl_f_verdict"].render(context=context, statement=s)) for s in statements]
    ver = runner.run(
        [p for _, p in jobs], params=RAGAS_PARAMS, parse=parse_verdict, label="mtrag rl_f verdicts", vote=bool
    )
    per: Dict[int, List[Optional[int]]] = {}
    for (i, _), v, e in zip(jobs, ver.parsed, ver.errors):
        per.setdefault(i, []).append(None if e is not None else v)
    values: List[Optional[float]] = []
    errors: List[Optional[str]] = []
    for i, statements in enumerate(res.parsed):
        if res.errors[i] is not None:
            values.append(None)
            errors.append(res.errors[i])
        elif not statements:
            values.append(None)
            errors.append(None)
            diags.append(f"{prepared[i].rid}: RL_F: no statements in the answer (NaN, written as null)")
        elif any(v is None for v in per[i]):
            values.append(None)
            errors.append("a statement verdict failed or was unreadable")
        else:
            vs = [v for v in per[i] if v is not None]
            values.append(sum(vs) / len(vs))
            errors.append(None)
    return values, errors


def read_judge_input(path: str, steps: Sequence[str]) -> Tuple[List[Dict[str, Any]], List[_Prepared]]:
    """Every record of ``path``, each checked for the chosen steps; all problems are raised together."""
    steps = check_steps(steps)
    problems = Problems()
    records: List[Dict[str, Any]] = []
    prepared: List[_Prepared] = []
    try:
        for line_no, rec in iter_jsonl(path):
            if not isinstance(rec, dict):
                problems.add("expected a JSON object", path=path, line=line_no)
                continue
            rid = mtrag.record_id(rec, f"{path}:{line_no}")
            try:
                prepared.append(_prepare(rec, rid, steps))
            except ScoringError as exc:
                problems.add(
                    exc.msg,
                    path=path,
                    line=line_no,
                    field=exc.field,
                    record=rid if rid.startswith("task_id=") else None,
                )
                if problems.full:
                    break
                continue
            records.append(rec)
    except ScoringError as exc:
        problems.add_error(exc)
    problems.raise_if_any()
    return records, prepared


def judge_file(
    path: str,
    output: Any,
    *,
    runner: judges.JudgeRunner,
    steps: Sequence[str] = DEFAULT_STEPS,
    templates: Optional[Dict[str, PromptTemplate]] = None,
    judge_model: str = "none",
    on_item: Optional[Callable[[ItemRow], None]] = None,
    output_name: Optional[str] = None,
    records: Optional[Tuple[List[Dict[str, Any]], List[_Prepared]]] = None,
) -> Report:
    """``mtrag judge``: judge every record of ``path``, write them with the judged metrics to
    ``output`` (a path, written atomically, or a text stream) and report the mean of each metric.

    ``templates`` are the prompts in use (their signature goes into the report);
    ``judge_model`` is the model name the signature records (``judge_model=``).
    ``records`` is :func:`read_judge_input`'s result when the caller has already read
    and checked the input.  The runner's statistics are not added here.
    """
    steps = check_steps(steps)
    used = dict(templates) if templates is not None else {t: TEMPLATES[t] for s in steps for t in _TEMPLATES_OF[s]}
    acc = mtrag.JudgeAccumulator(
        output=output_name if output_name is not None else (output if isinstance(output, str) else "-"),
        steps=steps,
        judge_template=judges.template_signature(used),
        judge_model=judge_model,
    )
    recs, prepared = records if records is not None else read_judge_input(path, steps)
    for d in judge_records(recs, runner, steps=steps, templates=used, prepared=prepared):
        acc.note(d)
    types = mtrag.ColumnTypes()
    columns = [c for c in mtrag.JUDGE_COLUMNS if any(mtrag.JUDGE_METRICS[s] == c for s in steps)]
    for rec in recs:
        for column in columns:
            types.add(column, rec["metrics"][column][0])
    fn = functools.partial(_judged_line, steps=list(steps), columns=columns, types=types)

    def write(fh: Any) -> None:
        accumulate_items(acc, fn, recs, on_item=on_item, on_result=fh.write)

    if isinstance(output, str):
        with atomic_writer(output) as fh:
            write(fh)
    else:
        write(output)
    return finish(acc)


def gate_names(steps: Sequence[str]) -> List[str]:
    """The gateable names of an ``mtrag judge`` report: ``records``, the judged metrics, then the
    runner's statistics (``judge_calls``, ...)."""
    names = mtrag.JudgeAccumulator.metric_names(steps=steps) + list(judges.JudgeStats().as_metrics())
    return names + list(TRUST_METRIC_NAMES)


def run_judge_step(
    path: str,
    output: Any,
    *,
    runner: judges.JudgeRunner,
    steps: Sequence[str],
    records: Optional[Tuple[List[Dict[str, Any]], List[_Prepared]]] = None,
    on_item: Optional[Callable[[ItemRow], None]] = None,
    output_name: Optional[str] = None,
) -> Report:
    """``mtrag judge`` as the command runs it: the prompts in use (the runner's
    ``--judge-template`` files or the built-in ones), every judge call and the records written
    (:func:`judge_file`), and the report with the runner's statistics added."""
    used = templates_for(runner, steps)
    report = judge_file(
        path,
        output,
        runner=runner,
        steps=steps,
        templates=used,
        judge_model=judge_options.judge_model(runner),
        on_item=on_item,
        output_name=output_name,
        records=records,
    )
    return judge_options.with_judge_stats(report, runner)


def _judged_line(
    rec: Dict[str, Any], *, steps: Sequence[str], columns: Sequence[str], types: mtrag.ColumnTypes
) -> Tuple[ItemRow, str]:
    """The item row (the values as judged) and the output line (each judged column typed as the
    reference's pandas column) of one judged record; the judge calls are already made."""
    row = mtrag.judge_item(rec, steps=steps)
    for column in columns:
        rec["metrics"][column] = [types.cast(column, rec["metrics"][column][0])]
    return row, json.dumps(rec) + "\n"  # the reference's bytes, NaN kept (docs/security.md)
