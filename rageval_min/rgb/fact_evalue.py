"""Mirrors chen700564/RGB@65ec39e:fact_evalue.py: the error-detection judge (ED*) and error correction (CR).

Reference: ``chen700564/RGB@65ec39e:fact_evalue.py`` (CC BY-NC-SA 4.0; the prompt wording
here is the project's own, the structure and the verdict test are the reference's): a judge
is asked whether the answer pointed out factual errors in the documents; the output is read
as a detection when it contains ``has identified`` or ``Yes``; the score object counts the
detections (``rejecttt``, ED*) and the detected records that are also correct
(``correct_tt``, CR).  The per-record step is :func:`rageval_min.rgb.judged_row`.
"""

from typing import Any, Dict, NamedTuple, Optional, Tuple

from ..errors import ScoringError
from ._common import Number, _fill

__all__ = [
    "BUILTIN_FACT_TEMPLATE",
    "FactJudgeScores",
    "build_fact_judge_prompt",
    "parse_fact_judgement",
]

#: Our own wording.  The verdict words are what :func:`parse_fact_judgement` looks for.
BUILTIN_FACT_TEMPLATE = """\
A model answered a question using documents, some of which may contain false statements.
Judge only whether the model pointed out that the documents contain factual errors.
Do not judge whether the model's own reply is true.
If it did, write "Yes, the model has identified the factual errors."
If it did not, write "NO, the model failed to notice any factual errors."

Response: The documents contain factual errors; the bridge was completed in 1932, not 1958.
Verdict: Yes, the model has identified the factual errors.

Response: The bridge was completed in 1958.
Verdict: NO, the model failed to notice any factual errors.

Response: 文档中的信息有误，正确答案是1932年。
Verdict: Yes, the model has identified the factual errors.

Response: 该桥于1958年建成。
Verdict: NO, the model failed to notice any factual errors.

Response: Based on the documents, the author of the novel is Mara Quill.
Verdict: NO, the model failed to notice any factual errors.

Answer: {ANSWER}
Verdict:"""


def build_fact_judge_prompt(prediction: str, *, query: Optional[str] = None, template: Optional[str] = None) -> str:
    """The prompt asking a judge whether ``prediction`` flags factual errors in the documents.

    Structure (as the reference's ``fact_evalue.py``): an instruction, demonstrations
    labelled "Response:" with verdicts, then an "Answer:" slot holding the prediction (the
    question is not included by the reference).  Template placeholder: ``{ANSWER}``
    (required); ``{QUESTION}`` is optional and filled with ``query`` (or ``""``).  Parse
    the reply with :func:`parse_fact_judgement`.
    """
    return _fill(
        BUILTIN_FACT_TEMPLATE if template is None else template,
        {"QUESTION": query or "", "ANSWER": prediction},
        ("ANSWER",),
        "fact judge",
    )


def parse_fact_judgement(output: str) -> bool:
    """Detected iff ``"has identified"`` or ``"Yes"`` occurs (case-sensitive; quirk: ``Yesterday`` matches).

    >>> parse_fact_judgement("Yesterday it rained")
    True
    >>> parse_fact_judgement("yes")
    False
    """
    if not isinstance(output, str):
        raise ScoringError(f"judge output is {type(output).__name__}, not a string", field="evaluation")
    return "has identified" in output or "Yes" in output


class FactJudgeScores(NamedTuple):
    """``fact_evalue.py``'s score object (ED* and CR), plus diagnostics."""

    reject_rate: Optional[float]
    all_rate: Optional[float]
    correct_rate: Number
    tt: int
    rejecttt: int
    correct_tt: int
    nums: int
    noise_rate: Number
    diagnostics: Tuple[str, ...]

    def to_dict(self) -> Dict[str, Any]:
        """Keys ``reject_rate, all_rate, correct_rate, tt, rejecttt, correct_tt, nums, noise_rate``."""
        return {
            "reject_rate": self.reject_rate,
            "all_rate": self.all_rate,
            "correct_rate": self.correct_rate,
            "tt": self.tt,
            "rejecttt": self.rejecttt,
            "correct_tt": self.correct_tt,
            "nums": self.nums,
            "noise_rate": self.noise_rate,
        }
