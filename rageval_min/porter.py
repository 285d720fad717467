"""A Porter stemmer that agrees with NLTK's ``PorterStemmer`` (default mode).

Written for rageval_min from the published algorithm (M. F. Porter, "An
algorithm for suffix stripping", 1980) plus the documented behaviour of NLTK's
``NLTK_EXTENSIONS`` mode, which is what Google's ``rouge-score`` uses when
``use_stemmer=True``.  The project pins agreement with NLTK 3.10.4; the test
suite checks it word for word on a large vocabulary.

The NLTK extensions over the published algorithm, all reproduced here:

* an irregular-forms table consulted first (``skies``/``sky`` -> ``sky``,
  ``dying`` -> ``die``, ``lying`` -> ``lie``, ``tying`` -> ``tie``, ``news``,
  ``innings``/``inning``, ``outings``/``outing``, ``cannings``/``canning``,
  and ``howe``/``proceed``/``exceed``/``succeed`` unchanged);
* words of at most 2 characters are returned unchanged (lower-cased);
* step 1a: a 4-letter word ending in ``ies`` becomes ``..ie`` (``ties`` -> ``tie``);
* step 1b: ``ied`` becomes ``ie`` in a 4-letter word and ``i`` otherwise,
  whatever the measure;
* step 1c: ``y`` -> ``i`` only when the letter before it is a consonant and
  is not the first letter (``cry`` -> ``cri``, ``say`` and ``by`` unchanged);
* step 2: ``alli`` -> ``al`` is tried first and, when it fires, step 2 runs
  again on the result; ``bli`` -> ``ble`` replaces ``abli`` -> ``able``;
  ``fulli`` -> ``ful`` and ``logi`` -> ``log`` (the measure of ``logi`` is taken
  on the stem *with* its ``l``) are added;
* the "ends with consonant-vowel-consonant" test (``*o``) is also true of a
  2-letter word vowel + consonant.

Each step looks only at the *longest* listed suffix the word ends with: when
that suffix's condition fails, the step leaves the word alone instead of trying
a shorter suffix (as in Porter's own description).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Dict, List, Optional, Sequence, Tuple

__all__ = ["porter_stem", "STEMMER_ID"]

#: Which reference stemmer this module reproduces (recorded in signatures).
STEMMER_ID = "nltk-porter-3.10.4"

_VOWELS = frozenset("aeiou")

_IRREGULAR: Dict[str, str] = {
    "skies": "sky",
    "sky": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "news": "news",
    "innings": "inning",
    "inning": "inning",
    "outings": "outing",
    "outing": "outing",
    "cannings": "canning",
    "canning": "canning",
    "howe": "howe",
    "proceed": "proceed",
    "exceed": "exceed",
    "succeed": "succeed",
}


def _cv(word: str) -> List[bool]:
    """``True`` at every consonant position of ``word``.

    ``y`` is a consonant at the start of a word and after a vowel, and a vowel
    after a consonant; every character other than ``a e i o u y`` is a
    consonant (digits included).
    """
    flags: List[bool] = []
    prev_consonant = False
    for idx, ch in enumerate(word):
        if ch in _VOWELS:
            cons = False
        elif ch == "y":
            cons = idx == 0 or not prev_consonant
        else:
            cons = True
        flags.append(cons)
        prev_consonant = cons
    return flags


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-run -> consonant transitions."""
    m = 0
    prev_vowel = False
    for cons in _cv(stem):
        if cons and prev_vowel:
            m += 1
        prev_vowel = not cons
    return m


def _has_vowel(stem: str) -> bool:
    return not all(_cv(stem))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _cv(word)[-1]


def _cvc(word: str) -> bool:
    """Porter's ``*o`` condition, with NLTK's 2-letter extension."""
    n = len(word)
    if n >= 3:
        f = _cv(word)
        return f[-3] and not f[-2] and f[-1] and word[-1] not in "wxy"
    if n == 2:
        f = _cv(word)
        return (not f[0]) and f[1]
    return False


def _m_pos(stem: str) -> bool:
    return _measure(stem) > 0


def _m_gt1(stem: str) -> bool:
    return _measure(stem) > 1


if TYPE_CHECKING:
    _Rule = Tuple[str, str, Optional[Callable[[str], bool]]]


def _first_rule(word: str, rules: Sequence[_Rule]) -> str:
    """Apply the first rule whose suffix ends ``word`` (or leave ``word``)."""
    for suffix, repl, cond in rules:
        if word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
            if cond is None or cond(stem):
                return stem + repl
            return word
    return word


_STEP2: Tuple[_Rule, ...] = (
    ("ational", "ate", _m_pos),
    ("tional", "tion", _m_pos),
    ("enci", "ence", _m_pos),
    ("anci", "ance", _m_pos),
    ("izer", "ize", _m_pos),
    ("bli", "ble", _m_pos),
    ("alli", "al", _m_pos),
    ("entli", "ent", _m_pos),
    ("eli", "e", _m_pos),
    ("ousli", "ous", _m_pos),
    ("ization", "ize", _m_pos),
    ("ation", "ate", _m_pos),
    ("ator", "ate", _m_pos),
    ("alism", "al", _m_pos),
    ("iveness", "ive", _m_pos),
    ("fulness", "ful", _m_pos),
    ("ousness", "ous", _m_pos),
    ("aliti", "al", _m_pos),
    ("iviti", "ive", _m_pos),
    ("biliti", "ble", _m_pos),
    ("fulli", "ful", _m_pos),
    # ``logi``: the condition is evaluated on stem + "l" (see _step2).
)

_STEP3: Tuple[_Rule, ...] = (
    ("icate", "ic", _m_pos),
    ("ative", "", _m_pos),
    ("alize", "al", _m_pos),
    ("iciti", "ic", _m_pos),
    ("ical", "ic", _m_pos),
    ("ful", "", _m_pos),
    ("ness", "", _m_pos),
)


def _ion_cond(stem: str) -> bool:
    return _measure(stem) > 1 and stem[-1:] in ("s", "t")


_STEP4: Tuple[_Rule, ...] = (
    ("al", "", _m_gt1),
    ("ance", "", _m_gt1),
    ("ence", "", _m_gt1),
    ("er", "", _m_gt1),
    ("ic", "", _m_gt1),
    ("able", "", _m_gt1),
    ("ible", "", _m_gt1),
    ("ant", "", _m_gt1),
    ("ement", "", _m_gt1),
    ("ment", "", _m_gt1),
    ("ent", "", _m_gt1),
    ("ion", "", _ion_cond),
    ("ou", "", _m_gt1),
    ("ism", "", _m_gt1),
    ("ate", "", _m_gt1),
    ("iti", "", _m_gt1),
    ("ous", "", _m_gt1),
    ("ive", "", _m_gt1),
    ("ize", "", _m_gt1),
)


def _step1a(w: str) -> str:
    if w.endswith("ies") and len(w) == 4:
        return w[:-1]  # "ties" -> "tie"
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith("ies"):
        return w[:-2]
    if w.endswith("ss"):
        return w
    if w.endswith("s"):
        return w[:-1]
    return w


def _step1b(w: str) -> str:
    if w.endswith("ied"):
        return w[:-1] if len(w) == 4 else w[:-2]
    if w.endswith("eed"):
        return w[:-1] if _measure(w[:-3]) > 0 else w
    if w.endswith("ed") and _has_vowel(w[:-2]):
        s = w[:-2]
    elif w.endswith("ing") and _has_vowel(w[:-3]):
        s = w[:-3]
    else:
        return w
    # Tidying of the stem left by -ed / -ing; the first matching case decides.
    if s.endswith("at") or s.endswith("bl") or s.endswith("iz"):
        return s + "e"
    if _double_consonant(s):
        return s[:-1] if s[-1] not in "lsz" else s
    if _measure(s) == 1 and _cvc(s):
        return s + "e"
    return s


def _step1c(w: str) -> str:
    if w.endswith("y") and len(w) > 2 and _cv(w[:-1])[-1]:
        return w[:-1] + "i"
    return w


def _step2(w: str) -> str:
    if w.endswith("alli") and _m_pos(w[:-4]):
        return _step2(w[:-2])
    for suffix, repl, cond in _STEP2:
        if w.endswith(suffix):
            stem = w[: len(w) - len(suffix)]
            return stem + repl if cond is not None and cond(stem) else w
    if w.endswith("logi"):
        return w[:-1] if _m_pos(w[:-3]) else w
    return w


def _step5a(w: str) -> str:
    if w.endswith("e"):
        s = w[:-1]
        m = _measure(s)
        if m > 1 or (m == 1 and not _cvc(s)):
            return s
    return w


def _step5b(w: str) -> str:
    if w.endswith("ll") and _measure(w[:-1]) > 1:
        return w[:-1]
    return w


def porter_stem(word: str) -> str:
    """Stem ``word`` exactly like NLTK's ``PorterStemmer().stem(word)``.

    The word is lower-cased first and the irregular-forms table is consulted
    with the lower-cased word; as in NLTK, the "at most 2 characters" shortcut
    measures the word *as given* (which only matters for the rare characters
    whose lower-case form is longer, such as ``"İ"``).

    >>> [porter_stem(w) for w in "running dying skies news lie cats caresses ponies ties".split()]
    ['run', 'die', 'sky', 'news', 'lie', 'cat', 'caress', 'poni', 'tie']
    >>> porter_stem("generalization"), porter_stem("happily"), porter_stem("geology")
    ('gener', 'happili', 'geolog')
    """
    stem = word.lower()
    irregular = _IRREGULAR.get(stem)
    if irregular is not None:
        return irregular
    if len(word) <= 2:
        return stem
    stem = _step1a(stem)
    stem = _step1b(stem)
    stem = _step1c(stem)
    stem = _step2(stem)
    stem = _first_rule(stem, _STEP3)
    stem = _first_rule(stem, _STEP4)
    stem = _step5a(stem)
    stem = _step5b(stem)
    return stem
