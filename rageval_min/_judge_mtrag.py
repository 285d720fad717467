"""``mtrag judge``: the LLM-judged MT-RAG metrics (spec ``mtrag.md`` 8, 9, 11, 12, 13).

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
"""

import argparse
import json
import math
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _cli_judge, judges, mtrag
from ._io import atomic_writer, iter_records
from ._report import Report
from .errors import ScoringError
from .judges import PromptTemplate, UnparseableAnswer

__all__ = ["TEMPLATES", "STEPS", "register_mtrag_judge", "run_mtrag_judge", "judge_records", "split_conversation"]

STEPS = ("idk", "underspecified", "rb_llm", "rl_f")
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
    value = mtrag.first_token_idk(text.strip())
    if value == "unknown":
        raise UnparseableAnswer("unknown")
    return value


def parse_rating(text: str) -> float:
    cleaned = mtrag._FOR_EXAMPLE.sub("", text)
    value = mtrag.extract_rating(text)
    if not any(p.search(cleaned) for p in mtrag._RATING_PATTERNS):
        raise UnparseableAnswer(value)
    return mtrag.median_rating([value])


def parse_underspecified(text: str) -> Any:
    value = mtrag.parse_underspecified(text)
    if "{" not in text:
        raise UnparseableAnswer(value)
    return value


# --------------------------------------------------------------------------- the judged step


def judge_records(
    records: List[Dict[str, Any]],
    runner: judges.JudgeRunner,
    *,
    steps: Sequence[str] = DEFAULT_STEPS,
    templates: Optional[Dict[str, PromptTemplate]] = None,
) -> List[str]:
    """Fill ``metrics`` of every record for the chosen steps; return diagnostics."""
    tpl = dict(TEMPLATES)
    tpl.update(templates or {})
    diags: List[str] = []
    rids: List[str] = []
    convs: List[str] = []
    preds: List[str] = []
    for pos, rec in enumerate(records, 1):
        rid = mtrag._record_id(rec, f"record {pos}")
        preds_list = rec.get("predictions")
        if (
            not isinstance(preds_list, list)
            or not preds_list
            or not isinstance(preds_list[0], dict)
            or not isinstance(preds_list[0].get("text"), str)
        ):
            raise ScoringError("missing predictions[0].text", record=rid, field="predictions")
        rids.append(rid)
        convs.append(conversation(rec, rid))
        preds.append(preds_list[0]["text"])
        if not isinstance(rec.get("metrics"), dict):
            rec["metrics"] = {}

    def put(name: str, values: Sequence[Any], errors: Sequence[Optional[str]]) -> None:
        for rec, rid, v, e in zip(records, rids, values, errors):
            if name in rec["metrics"]:
                diags.append(f"{rid}: {name} was already present and is replaced")
            rec["metrics"][name] = [v]
            if e is not None:
                diags.append(f"{rid}: {name}: judge call failed ({e}); value null")

    if "idk" in steps:
        prompts = [tpl["idk"].render(inquiry=c, response=p) for c, p in zip(convs, preds)]
        res = runner.run(prompts, params=JUDGE_PARAMS, parse=parse_idk, label="mtrag idk")
        put("idk_eval", res.parsed, res.errors)
    if "underspecified" in steps:
        prompts = [tpl["underspecified"].render(response=p) for p in preds]
        res = runner.run(prompts, params=JUDGE_PARAMS, parse=parse_underspecified, label="mtrag underspecified")
        put("underspecified_eval", res.parsed, res.errors)
    if "rb_llm" in steps:
        prompts = []
        for rec, rid, c, p in zip(records, rids, convs, preds):
            targets = mtrag._texts(rec, "targets", rid, required=True) or []
            if not targets:
                raise ScoringError("RB_llm needs a reference answer (targets[0].text)", record=rid, field="targets")
            passages = mtrag._texts(rec, "contexts", rid, required=False) or []
            previous, question = split_conversation(c)
            prompts.append(
                tpl["rb_llm"].render(
                    previous_conversation=previous,
                    question=question,
                    reference_answer=targets[0],
                    answer=p,
                    document="\n\n".join(passages),
                )
            )
        res = runner.run(prompts, params=JUDGE_PARAMS, parse=parse_rating, label="mtrag rb_llm")
        put("RB_llm", res.parsed, res.errors)
    if "rl_f" in steps:
        res = runner.run(
            [tpl["rl_f_statements"].render(question=c, answer=p) for c, p in zip(convs, preds)],
            params=RAGAS_PARAMS,
            parse=parse_statements,
            label="mtrag rl_f statements",
        )
        jobs: List[Tuple[int, str]] = []
        for i, (rec, rid, statements) in enumerate(zip(records, rids, res.parsed)):
            if not statements:
                continue
            passages = mtrag._texts(rec, "contexts", rid, required=False) or []
            context = "\n".join(passages)
            jobs += [(i, tpl["rl_f_verdict"].render(context=context, statement=s)) for s in statements]
        ver = runner.run([p for _, p in jobs], params=RAGAS_PARAMS, parse=parse_verdict, label="mtrag rl_f verdicts")
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
                diags.append(f"{rids[i]}: RL_F: no statements in the answer (NaN, written as null)")
            elif any(v is None for v in per[i]):
                values.append(None)
                errors.append("a statement verdict failed or was unreadable")
            else:
                vs = [v for v in per[i] if v is not None]
                values.append(sum(vs) / len(vs))
                errors.append(None)
        put("RL_F", values, errors)
    return diags


def _mean(values: List[Any]) -> Optional[float]:
    nums = [
        float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(float(v))
    ]
    return math.fsum(nums) / len(nums) if nums else None


def register_mtrag_judge(msub: Any) -> None:
    """Add ``mtrag judge`` to the ``mtrag`` sub-parsers."""
    from ._judge_families import _add_report_options

    j = msub.add_parser(
        "judge",
        help="LLM-judged metrics: idk_eval, RB_llm, RL_F (and underspecified_eval)",
        description="Ask the judge for every record and write the records back with metrics.idk_eval, "
        "RB_llm, RL_F (and underspecified_eval) filled; then run 'mtrag condition'. Prompts are our "
        "own wording; --judge-template STEP=FILE (steps: " + ", ".join(TEMPLATE_STEPS) + ") for a published one.",
    )
    j.add_argument(
        "--input", required=True, metavar="IN.jsonl", help="records with input, predictions, targets, contexts"
    )
    j.add_argument("--output", required=True, metavar="OUT.jsonl", help="the records with the judged metrics")
    j.add_argument(
        "--steps",
        default=",".join(DEFAULT_STEPS),
        metavar="LIST",
        help=f"comma-separated, from {', '.join(STEPS)} (default: {','.join(DEFAULT_STEPS)})",
    )
    _cli_judge.add_judge_options(j)
    _add_report_options(j, variants=())
    j.set_defaults(func=run_mtrag_judge)


def run_mtrag_judge(args: argparse.Namespace, io: Any) -> int:
    from ._judge_families import _emit, _with_judge

    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    bad = [s for s in steps if s not in STEPS]
    if bad or not steps:
        raise ScoringError(f"--steps: unknown step(s) {', '.join(bad) or '(none)'}; choose from {', '.join(STEPS)}")
    runner = _cli_judge.judge_from_args(args, steps=TEMPLATE_STEPS, stderr=io.stderr)
    used = {t: runner.template(t, TEMPLATES[t]) for s in steps for t in _TEMPLATES_OF[s]}
    try:
        records = [rec for _, rec in iter_records(args.input, fmt="jsonl")]
        diags = judge_records(records, runner, steps=steps, templates=used)
    finally:
        runner.close()
    with atomic_writer(args.output) as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")
    names = {"idk": "idk_eval", "underspecified": "underspecified_eval", "rb_llm": "RB_llm", "rl_f": "RL_F"}
    means = {names[s]: _mean([r["metrics"][names[s]][0] for r in records]) for s in steps}
    report = Report(
        family="mtrag",
        signature=mtrag.signature(
            (), [("step", "judge"), ("steps", "+".join(steps)), ("judge_template", judges.template_signature(used))]
        ),
        result={"records": len(records), "output": args.output, "steps": steps, "means": means},
        metrics=dict([("records", len(records))] + list(means.items())),
        diagnostics=diags[:50],
    )
    return _emit(_with_judge(report, runner), args, io)
