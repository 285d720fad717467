"""Pipeline step: prompt templates -- ``{name}`` fields, ``--judge-template [STEP=]FILE`` and their signature.

Prompt templates (:class:`PromptTemplate`) are plain text with ``{name}`` fields
for the placeholders a step defines; other braces are left alone and ``{{`` /
``}}`` give a literal brace.  The signature records ``judge_template=builtin`` or
the first 12 hex digits of the template file's sha256.
"""

import hashlib
import os
import re
from typing import (
    Any,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
)

from .._io import read_text
from ..errors import ScoringError

__all__ = ["PromptTemplate", "template_fields", "template_signature", "templates_from_args"]

_FIELD_RE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


class PromptTemplate:
    """A prompt with ``{name}`` placeholders.

    Only ``{identifier}`` is a placeholder, and it must be one of ``fields``;
    every other brace (JSON examples in a published prompt) is kept as is;
    ``{{`` and ``}}`` give a literal ``{`` and ``}``.

    >>> t = PromptTemplate("Q: {question}\\nOut: {\\"label\\": ...}", ["question"])
    >>> t.render(question="why?")
    'Q: why?\\nOut: {"label": ...}'
    >>> t.signature_value
    'builtin'
    """

    def __init__(self, text: str, fields: Iterable[str], *, source: Optional[str] = None, step: str = "") -> None:
        self.text = text
        self.fields = tuple(fields)
        self.source = source
        allowed = set(self.fields)
        unknown = sorted({m.group(1) for m in _FIELD_RE.finditer(text) if m.group(1) and m.group(1) not in allowed})
        if unknown:
            where = f" for step {step}" if step else ""
            raise ScoringError(
                f"unknown placeholder(s) {', '.join('{' + u + '}' for u in unknown)}{where}; "
                f"allowed: {', '.join('{' + f + '}' for f in self.fields) or 'none'}",
                path=source,
            )
        self.signature_value = "builtin" if source is None else hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    @classmethod
    def from_file(cls, path: str, fields: Iterable[str], *, step: str = "") -> "PromptTemplate":
        # The signature is the sha256 prefix of the file's bytes (``text`` encodes back to them).
        return cls(read_text(path, what="judge template"), fields, source=path, step=step)

    def render(self, **values: Any) -> str:
        missing = [f for f in self.fields if f not in values and "{" + f + "}" in self.text]
        if missing:
            raise ScoringError(f"template value(s) missing: {', '.join(missing)}")

        def sub(m: "re.Match[str]") -> str:
            tok = m.group(0)
            if tok == "{{":
                return "{"
            if tok == "}}":
                return "}"
            return str(values[m.group(1)])

        return _FIELD_RE.sub(sub, self.text)


def template_fields(text: str) -> List[str]:
    """The sorted placeholder names of a template text.

    >>> template_fields("{b} and {a}, not {{c}} or {1}")
    ['a', 'b']
    """
    return sorted({m.group(1) for m in _FIELD_RE.finditer(text) if m.group(1)})


def template_signature(templates: Mapping[str, PromptTemplate]) -> str:
    """The ``judge_template=`` value for a signature.

    ``builtin`` when every step uses its built-in prompt, the sha256 prefix
    when there is one step, else ``step:value`` pairs joined by ``,``.

    >>> template_signature({"idk": PromptTemplate("{x}", ["x"])})
    'builtin'
    """
    vals = {k: t.signature_value for k, t in templates.items()}
    if all(v == "builtin" for v in vals.values()):
        return "builtin"
    if len(vals) == 1:
        return next(iter(vals.values()))
    return ",".join(f"{k}:{vals[k]}" for k in sorted(vals))


def templates_from_args(values: Optional[Sequence[str]], steps: Sequence[str] = ()) -> Dict[str, str]:
    """Parse repeated ``--judge-template [STEP=]FILE`` into ``{step: path}``.

    A value without ``STEP=`` applies to the only step (key ``""``).

    >>> templates_from_args(["idk=a.txt", "rb_llm=b.txt"], ["idk", "rb_llm"])
    {'idk': 'a.txt', 'rb_llm': 'b.txt'}
    >>> templates_from_args(["t.txt"], ["prompt"])
    {'': 't.txt'}
    """
    out: Dict[str, str] = {}
    for v in values or ():
        step, sep, path = v.partition("=")
        if sep and step in steps:
            key = step
        elif sep and steps and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", step) and not os.path.exists(v):
            raise ScoringError(f"--judge-template: unknown step {step!r} (steps: {', '.join(steps)})")
        else:
            key, path = "", v
            if len(steps) > 1:
                raise ScoringError(f"--judge-template: name the step, STEP=FILE (steps: {', '.join(steps)})")
        if key in out:
            raise ScoringError(f"--judge-template given twice for {key or 'the step'}")
        out[key] = path
    return out
