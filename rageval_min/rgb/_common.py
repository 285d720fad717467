"""Pipeline step: none (the helpers every rgb step shares): names, variants, prompt filling, the signature.

The constants and small predicates every step of ``chen700564/RGB@65ec39e`` needs: which
branch a dataset name selects, which variants exist, how a record is named in a
diagnostic, how a prompt template is filled, and the family's signature.

Where the reference crashes, the steps either skip the instance exactly as the reference's
catch-all does (raising :class:`InstanceSkipped`, which batch callers turn into a
diagnostic naming the record) or return the spec's defined value with a diagnostic.
"""

import hashlib
import re
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple, Union

from .._signature import make_signature
from ..errors import ScoringError

__all__ = [
    "FAMILY",
    "InstanceSkipped",
    "JUDGED",
    "Number",
    "REF",
    "REFERENCE",
    "VARIANTS",
    "check_variants",
    "dataset_branch",
    "result_metrics",
    "signature",
    "template_id",
]

Number = Union[int, float]

FAMILY = "rgb"
#: The reference, as written in the signature.
REFERENCE = "chen700564/RGB@65ec39e"
#: Former name of :data:`REFERENCE`.
REF = REFERENCE


#: Opt-in variants (names fixed by the spec).  None is on by default.
VARIANTS = (
    "fact_correct_requires_hit",
    "match_casefold_nfkc",
    "noise1_reject_only",
    "reject_casefold",
    "zh_strip_unicode_space",
)


class InstanceSkipped(ScoringError):
    """An instance the reference drops in its catch-all ``try/except`` (so ``nums`` shrinks).

    Batch callers catch this, leave the instance out (parity) and record ``str(exc)`` as a
    diagnostic naming the record.  It is a :class:`ScoringError`, so single-record callers
    that do not catch it still get a clear error.
    """


def check_variants(variants: Iterable[str]) -> Tuple[str, ...]:
    """Validate variant names; return them sorted and de-duplicated.

    >>> check_variants(["reject_casefold", "reject_casefold"])
    ('reject_casefold',)
    """
    names = sorted(set(variants))
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        raise ScoringError(
            f"unknown rgb variant {', '.join(unknown)}; known: {', '.join(VARIANTS)}",
            field="variant",
        )
    return tuple(names)


def _who(record_id: Any) -> Optional[str]:
    return None if record_id is None else f"id={record_id}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def dataset_branch(dataset: str) -> str:
    """The reference's branch for a dataset name, chosen by substring.

    ``'_int' in dataset`` wins over ``'_fact' in dataset``; anything else is the default
    branch (``en``, ``zh``, ``en_refine``, ``zh_refine``, ...).

    >>> [dataset_branch(d) for d in ("en", "zh_int", "en_fact", "zh_refine")]
    ['default', 'int', 'fact', 'default']
    """
    if "_int" in dataset:
        return "int"
    if "_fact" in dataset:
        return "fact"
    return "default"


def _is_zh(dataset: str) -> bool:
    return "zh" in dataset


def _is_fact(dataset: str) -> bool:
    return "_fact" in dataset


#: The judged modes: ``reject`` = ``reject_evalue.py`` (Rej*), ``fact`` = ``fact_evalue.py`` (ED*, CR).
JUDGED = ("reject", "fact")


def signature(*, variants: Iterable[str] = (), params: Sequence[Tuple[str, object]] = ()) -> str:
    """The rgb signature: ``make_signature("rgb", REFERENCE, variants, params)``.

    >>> signature(params=[("dataset", "en")])
    'rageval_min:0.1.0|family=rgb|ref=chen700564/RGB@65ec39e|variants=none|dataset=en'
    """
    return make_signature(FAMILY, REFERENCE, check_variants(variants), params)


_PLACEHOLDER_RE = re.compile(r"\{(QUESTION|ANSWER|DOCS|QUERY)\}")


def _fill(template: str, values: Mapping[str, str], required: Sequence[str], what: str) -> str:
    missing = [name for name in required if "{" + name + "}" not in template]
    if missing:
        raise ScoringError(
            f"{what} template lacks the placeholder(s) {', '.join('{' + m + '}' for m in missing)}",
            field="judge_template",
        )
    # One pass, so text substituted for one placeholder is never scanned again.
    return _PLACEHOLDER_RE.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def template_id(template: Optional[str]) -> str:
    """``builtin``, or the first 12 hex digits of the template's UTF-8 sha256 (for the signature)."""
    if template is None:
        return "builtin"
    return hashlib.sha256(template.encode("utf-8")).hexdigest()[:12]


def result_metrics(result: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    """The gateable values of a score object: every number (and ``None``) under its key."""
    return {
        prefix + k: v
        for k, v in result.items()
        if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
    }


def _record_who(rec: Mapping[str, Any]) -> Optional[str]:
    return f"id={rec['id']}" if "id" in rec else None


def _note(path: Optional[str], line: Optional[int], rec: Mapping[str, Any], msg: str) -> str:
    who = _record_who(rec)
    return (f"{path}:{line}: " if path is not None else "") + (f"{who}: " if who else "") + msg
