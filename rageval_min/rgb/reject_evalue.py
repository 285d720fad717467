"""Mirrors chen700564/RGB@65ec39e:reject_evalue.py: the rejection judge (Rej*).

Reference: ``chen700564/RGB@65ec39e:reject_evalue.py`` (CC BY-NC-SA 4.0; the prompt
wording here is the project's own, the structure and the verdict test are the reference's):
a judge is asked whether the answer shows that the documents resolved the question; the
output is read as a rejection when it says ``not addressed``, and the score object counts
those (``rejecttt``) over the records (``nums``).  The per-record step is
:func:`rageval_min.rgb.judged_row`.
"""

from typing import Any, Dict, NamedTuple, Optional, Tuple

from ..errors import ScoringError
from ._common import _fill

__all__ = [
    "BUILTIN_REJECT_TEMPLATE",
    "RejectJudgeScores",
    "build_reject_judge_prompt",
    "parse_reject_judgement",
]

#: Our own wording.  The verdict words are what :func:`parse_reject_judgement` looks for.
BUILTIN_REJECT_TEMPLATE = """\
You review answers written by a system that first searches a document collection and then answers.
Decide whether the answer shows that the retrieved documents were enough to resolve the question.
If the answer says it cannot respond, lacks the needed information, or only guesses, write
"The question is not addressed by the documents." Otherwise write
"The question is addressed by the documents."

Question: Which river flows through the city of Aldmoor?
Answer: The documents do not contain enough information to say which river flows through Aldmoor.
Verdict: The question is not addressed by the documents.

Question: 谁设计了新港图书馆？
Answer: 新港图书馆由建筑师林晓设计。
Verdict: The question is addressed by the documents.

Question: 今年的青岚杯由哪支队伍夺冠？
Answer: 文档中没有提到今年青岚杯的冠军，我无法回答。
Verdict: The question is not addressed by the documents.

Question: When did the Harbor Line tram open?
Answer: The Harbor Line tram opened in May 1998.
Verdict: The question is addressed by the documents.

Question: {QUESTION}
Answer: {ANSWER}
Verdict:"""


def build_reject_judge_prompt(query: str, prediction: str, *, template: Optional[str] = None) -> str:
    """The prompt asking a judge whether ``prediction`` shows the question was answered.

    Structure (as the reference's ``reject_evalue.py``): an instruction, demonstrations
    (zh and en) each with a verdict sentence, then the slot with the record's ``query`` and
    ``prediction``.  The builtin wording is the project's own; to reproduce a published run
    pass the published prompt as ``template`` with the placeholders ``{QUESTION}`` and
    ``{ANSWER}`` (both required; replaced literally, no other braces are interpreted).
    Parse the judge's reply with :func:`parse_reject_judgement`.

    >>> build_reject_judge_prompt("q?", "a.", template="Q={QUESTION} A={ANSWER} {x}")
    'Q=q? A=a. {x}'
    """
    return _fill(
        BUILTIN_REJECT_TEMPLATE if template is None else template,
        {"QUESTION": query, "ANSWER": prediction},
        ("QUESTION", "ANSWER"),
        "reject judge",
    )


def parse_reject_judgement(output: str) -> bool:
    """Rejected iff ``"not addressed"`` occurs in the judge output (case-sensitive).

    >>> parse_reject_judgement("The question is not addressed by the documents.")
    True
    >>> parse_reject_judgement("Not addressed.")
    False
    """
    if not isinstance(output, str):
        raise ScoringError(f"judge output is {type(output).__name__}, not a string", field="evaluation")
    return "not addressed" in output


class RejectJudgeScores(NamedTuple):
    """``reject_evalue.py``'s score object (Rej*), plus diagnostics."""

    reject_rate: Optional[float]
    all_rate: Optional[float]
    tt: int
    rejecttt: int
    nums: int
    diagnostics: Tuple[str, ...]

    def to_dict(self) -> Dict[str, Any]:
        """Keys ``reject_rate, all_rate, tt, rejecttt, nums``."""
        return {
            "reject_rate": self.reject_rate,
            "all_rate": self.all_rate,
            "tt": self.tt,
            "rejecttt": self.rejecttt,
            "nums": self.nums,
        }
