"""Mirrors google-research/google-research@61ce9f0:rouge/tokenize.py and rouge/tokenizers.py: ROUGE's tokens.

``tokenize.tokenize(text, stemmer)`` as ``tokenizers.DefaultTokenizer(use_stemmer)`` calls it from
``rouge_scorer.py`` (rouge-score 0.1.2), with NLTK 3.10.4's ``PorterStemmer`` in its default mode
as the stemmer.

Tokens (``tokenizer="reference"``)
    ``text.lower()`` (full Unicode lower-casing), then the maximal runs of
    ``[a-z0-9]``.  Everything else separates tokens: punctuation, ``_``,
    apostrophes, and *every non-ASCII character* (``"Café"`` -> ``caf``;
    ``"北京 is 首都"`` -> ``is``).  A few characters lower-case into ASCII
    (Kelvin sign -> ``k``; ``"İ"`` -> ``i`` + U+0307).  With ``use_stemmer``
    each token of more than 3 characters is Porter-stemmed
    (:func:`rageval_min.porter.porter_stem`, memoised per token type).

Variant ``unicode_tokens`` (``tokenizer="unicode"``, opt-in, not comparable
with reference scores): NFKC, ``str.casefold()``, then tokens are maximal runs
of Unicode letters and digits (``[^\\W_]+``), except that each CJK ideograph
and each Japanese kana is a token on its own.  Stemming then applies only to
ASCII ``[a-z0-9]`` tokens of more than 3 characters.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .._speedups_loader import kernels
from ..errors import ScoringError
from ..porter import porter_stem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, List, Optional

__all__ = ["TOKENIZERS", "UNICODE_VARIANT", "tokenize"]

#: Tokenizer names accepted by :func:`tokenize` and :func:`score`.
TOKENIZERS = ("reference", "unicode")

#: Variant name of the Unicode tokenizer (as it appears in signatures).
UNICODE_VARIANT = "unicode_tokens"

_REF_TOKEN = re.compile(r"[a-z0-9]+")
# Byte table mapping everything but [a-z0-9] to a space: with non-ASCII code
# points first encoded as "?", ``split()`` then yields exactly the maximal
# [a-z0-9] runs, i.e. ``_REF_TOKEN.findall`` -- about 3x faster.
_KEEP = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789")
_TO_SPACE = bytes(c if c in _KEEP else 0x20 for c in range(256))
# The same for ASCII text that was not lower-cased yet (A-Z -> a-z, as str.lower() does).
_LOWER_TO_SPACE = bytes(c + 32 if 65 <= c <= 90 else (c if c in _KEEP else 0x20) for c in range(256))


def _ref_bytes(text: str) -> bytes:
    """``text`` lower-cased, with every character outside [a-z0-9] as one space."""
    if text.isascii():
        return text.encode("ascii").translate(_LOWER_TO_SPACE)
    return text.lower().encode("ascii", "replace").translate(_TO_SPACE)


# The same two tables keeping "\n" (rougeLsum's sentence break) as it is.
_TO_SPACE_NL = _TO_SPACE[:10] + b"\n" + _TO_SPACE[11:]
_LOWER_TO_SPACE_NL = _LOWER_TO_SPACE[:10] + b"\n" + _LOWER_TO_SPACE[11:]


def _ref_bytes_nl(text: str) -> bytes:
    """:func:`_ref_bytes` with each ``"\n"`` kept."""
    if text.isascii():
        return text.encode("ascii").translate(_LOWER_TO_SPACE_NL)
    return text.lower().encode("ascii", "replace").translate(_TO_SPACE_NL)


_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")  # `$` also matches before a final "\n"

# CJK Unified Ideographs (+ Extension A, B..G, compatibility), Hiragana, Katakana.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f\U00030000-\U0003134f"


@lru_cache(maxsize=1)
def _uni_token() -> "re.Pattern[str]":
    """The unicode tokenizer's pattern, compiled on first use (about 3 ms: not at every start)."""
    return re.compile("[" + _CJK + "]|[^\\W_" + _CJK + "]+")


def _uni_split(text: str) -> List[str]:
    """The unicode tokenizer's tokens, before any stemming (unicodedata is imported here: no
    other tokenizer needs it)."""
    import unicodedata

    return _uni_token().findall(unicodedata.normalize("NFKC", text).casefold())


_STEM_CACHE_MAX = 1 << 17


class _StemMap(dict):  # type: ignore[type-arg]
    """Memoised reference stemming of one token: ``_STEMS[token]``.

    Tokens of at most 3 characters map to themselves (the reference stems only
    longer ones); a stem that is not a valid ``[a-z0-9]+`` token maps to ``""``
    (the reference drops it).  Lookups of known tokens run in C through
    ``map(_STEMS.__getitem__, tokens)``; the cache is emptied when it holds
    2**17 tokens, so memory stays bounded.
    """

    def __missing__(self, tok: str) -> str:
        if len(tok) > 3:
            out = porter_stem(tok)
            if not _VALID_TOKEN.match(out):
                out = ""
        else:
            out = tok
        if len(self) >= _STEM_CACHE_MAX:
            self.clear()
        self[tok] = out
        return out


_STEMS = _StemMap()


def _check_tokenizer(tokenizer: str) -> None:
    if tokenizer not in TOKENIZERS:
        raise ScoringError(
            f"unknown tokenizer {tokenizer!r} (expected one of: {', '.join(TOKENIZERS)})",
            field="tokenizer",
        )


def _tokens(text: str, stem: bool, tokenizer: str) -> List[str]:
    """Tokens for :func:`score` (built-in stemmer only).

    Without a stemmer the reference tokens are returned as ASCII ``bytes``
    (equal exactly when the ``str`` tokens are equal, and a little cheaper to
    make); :func:`tokenize` decodes them.
    """
    if tokenizer == "reference":
        if not stem:
            return _ref_bytes(text).split()  # type: ignore[return-value]
        out = list(map(_STEMS.__getitem__, _ref_bytes(text).decode("ascii").split()))
        if "" in out:
            out = [t for t in out if t]
        return out
    toks = _uni_split(text)
    if not stem:
        return toks
    return [(_STEMS[t] or t) if t.isascii() and _VALID_TOKEN.match(t) else t for t in toks]


def tokenize(
    text: str,
    *,
    stemmer: Optional[Callable[[str], str]] = None,
    tokenizer: str = "reference",
) -> List[str]:
    """Tokenize like ``rouge_score.tokenize.tokenize(text, stemmer)``.

    ``stemmer`` is any ``str -> str`` function (pass :func:`porter_stem` for
    the reference's); it is applied to tokens longer than 3 characters and the
    results are then filtered like the reference (kept when
    ``re.match(r"^[a-z0-9]+$", token)``).  With ``tokenizer="unicode"`` see the
    module docstring (the stemmer only sees ASCII tokens).

    >>> tokenize("don't U.S.A. e-mail 3.14")
    ['don', 't', 'u', 's', 'a', 'e', 'mail', '3', '14']
    >>> tokenize("Café naïve 北京 is 首都")
    ['caf', 'na', 've', 'is']
    >>> tokenize("Café naïve 北京 is 首都", tokenizer="unicode")
    ['café', 'naïve', '北', '京', 'is', '首', '都']
    >>> tokenize("running dying skies", stemmer=porter_stem)
    ['run', 'die', 'sky']
    """
    if not isinstance(text, str):
        raise ScoringError(f"expected a string, got {type(text).__name__}")
    _check_tokenizer(tokenizer)
    if stemmer is None:
        if tokenizer == "reference":
            c = kernels()  # the C tokenizer, when built (the same tokens)
            toks = c.ref_tokens(text) if c is not None else None
            return toks if toks is not None else _ref_bytes(text).decode("ascii").split()
        return _tokens(text, False, tokenizer)
    if stemmer is porter_stem:
        return _tokens(text, True, tokenizer)
    if tokenizer == "reference":
        toks = _REF_TOKEN.findall(text.lower())
        stemmed = [stemmer(t) if len(t) > 3 else t for t in toks]
        return [t for t in stemmed if _VALID_TOKEN.match(t)]
    toks = _uni_split(text)
    return [stemmer(t) if len(t) > 3 and t.isascii() and _VALID_TOKEN.match(t) else t for t in toks]


def _sentences(text: str, stem: bool, tokenizer: str) -> List[List[Any]]:
    """rougeLsum's sentences: the tokens of each line of ``text.split("\\n")``, token-less ones dropped.

    (A sentence without tokens adds nothing to a rougeLsum score.)  With the
    reference tokenizer the whole text is mapped at once: lower-casing and the
    byte tables act on each character alone and ``"\\n"`` separates tokens,
    so each line gets the tokens it gets when tokenized alone.
    """
    if tokenizer != "reference":
        return [toks for toks in (_tokens(line, stem, tokenizer) for line in text.split("\n") if line) if toks]
    lines = _ref_bytes_nl(text).split(b"\n")
    if not stem:
        return [toks for toks in map(bytes.split, lines) if toks]
    get = _STEMS.__getitem__
    out: List[List[Any]] = []
    for line in lines:
        toks = list(map(get, line.decode("ascii").split()))
        if "" in toks:
            toks = [t for t in toks if t]
        if toks:
            out.append(toks)
    return out
