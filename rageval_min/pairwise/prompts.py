"""Mirrors open-compass/DevBench@bb593c1:llm_judge/subeval/subjective/judge_util.py: the judge prompt of a comparison.

The reference builds one prompt per non-EM comparison (``build_prompt`` of
``prompt/subeval_prompts.py``): the evaluating guidance, the question, the two
responses in slot order and, only when the row has one, a reference-answer
block.  The slots are reproduced; the built-in wording is the project's own
(:func:`builtin_template`), and a template file can carry any other wording
(:func:`load_template`).  A missing question or answer reads as ``nan`` and a
missing guidance leaves the literal ``<Evaluating Guidance>`` placeholder in
the prompt, as in the reference.
"""

import hashlib
import re
from typing import Optional

from ..errors import ScoringError
from ._common import GUIDANCE_PLACEHOLDER, _as_text, is_missing
from .construct_util import Comparison

__all__ = ["builtin_template", "load_template", "render_prompt", "template_id"]


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
