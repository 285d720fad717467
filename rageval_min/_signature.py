"""The reproducibility signature carried by every result.

Format (one line, ``|``-separated)::

    rageval_min:<version>|family=<family>|ref=<owner/repo>@<commit7>|variants=<names or none>|<k=v>...

Variants are sorted and comma-joined (``none`` when empty: the result then claims
reference parity).  Family parameters follow in the order the family gives them,
each as ``name=value``; booleans are written ``true``/``false`` and ``None`` as
``none``.  Every option that can change a number must be in the signature.
"""

from __future__ import annotations

from ._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Sequence, Tuple

__all__ = ["make_signature"]


def _fmt(value: object) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "none"
    return str(value)


def make_signature(
    family: str,
    ref: str,
    variants: Iterable[str] = (),
    params: Sequence[Tuple[str, object]] = (),
) -> str:
    """Build the signature string.

    >>> make_signature("grounding", "onestardao/WFGY@25aaa9d", [], [("k", 5)])
    'rageval_min:0.1.0|family=grounding|ref=onestardao/WFGY@25aaa9d|variants=none|k=5'
    >>> make_signature("rouge", "google-research/rouge@0.1.2", ["unicode", "a"], [("stem", False)])
    'rageval_min:0.1.0|family=rouge|ref=google-research/rouge@0.1.2|variants=a,unicode|stem=false'
    """
    names = sorted(set(variants))
    parts = [
        f"rageval_min:{__version__}",
        f"family={family}",
        f"ref={ref}",
        "variants=" + (",".join(names) if names else "none"),
    ]
    parts.extend(f"{k}={_fmt(v)}" for k, v in params)
    return "|".join(parts)
