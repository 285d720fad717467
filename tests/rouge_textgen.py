"""Deterministic generators of adversarial ROUGE inputs (shared by tests and data scripts).

Not a test module.  Texts mix a tiny vocabulary (so that LCS ties are common and
rougeLsum's backtrack tie-break matters), words whose Porter stems collide,
punctuation, digits, non-ASCII letters and scripts, characters whose lower-case
form is ASCII, and every kind of line break, including empty and blank lines.
"""

import random
from typing import List, Tuple

SMALL = ["a", "b", "c", "the", "cat", "sat", "on", "mat", "dog", "is", "it"]
STEMMY = [
    "running",
    "runs",
    "run",
    "ran",
    "runner",
    "generalization",
    "generalize",
    "general",
    "happily",
    "happy",
    "happiness",
    "skies",
    "sky",
    "dying",
    "die",
    "lying",
    "news",
    "innings",
    "caresses",
    "ponies",
    "ties",
    "cats",
    "agreed",
    "hopping",
    "hoped",
    "controlling",
    "rational",
    "relational",
    "conditional",
    "electricity",
    "electrical",
    "adjustable",
    "replacement",
    "adoption",
    "communism",
    "effective",
    "geology",
    "archaeology",
    "fully",
    "succeed",
    "proceeding",
    "exceeded",
    "outings",
    "cannings",
    "howe",
    "Running",
    "CATS",
]
WEIRD = [
    "don't",
    "U.S.A.",
    "e-mail",
    "3.14",
    "1,000",
    "x_y",
    "Café",
    "naïve",
    "résumé",
    "Straße",
    "北京",
    "首都",
    "Москва",
    "مرحبا",
    "\u212a",
    "\u0130stanbul",
    "ﬁnance",
    "x²",
    "٣",
    "🙂",
    "<b>bold</b>",
    "&amp;",
    "\t",
    "  ",
    "...",
    "--",
    "(",
    ")",
    "'",
    '"',
    "naïve-café",
]
BREAKS = ["\n", "\n\n", "\r\n", "\r", " \n ", "\n \n", "\n\t\n"]


def gen_text(rng: random.Random) -> str:
    """One text of 0 to ~120 tokens."""
    r = rng.random()
    if r < 0.03:
        return ""
    if r < 0.05:
        return rng.choice(["   ", "\n", "\n\n", "北京 首都", "...", "\r\n"])
    n = rng.choice([1, 2, 3, 5, 8, 13, 25, 40, 70, 120])
    pools = [SMALL] * 6 + [STEMMY] * 3 + [WEIRD]
    if rng.random() < 0.3:
        pools = [SMALL[:4]]  # very small alphabet: many LCS ties
    parts: List[str] = []
    for _ in range(n):
        parts.append(rng.choice(rng.choice(pools)))
        parts.append(rng.choice(BREAKS) if rng.random() < 0.12 else " ")
    return "".join(parts[: rng.randrange(1, len(parts) + 1)])


def gen_pairs(n: int, seed: int) -> List[Tuple[str, str]]:
    """``n`` (target, prediction) pairs; some predictions are edits of their target."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        target = gen_text(rng)
        if target and rng.random() < 0.4:
            words = target.split(" ")
            keep = [w for w in words if rng.random() < 0.7]
            if rng.random() < 0.5:
                keep.insert(rng.randrange(len(keep) + 1), rng.choice(SMALL))
            prediction = " ".join(keep)
        else:
            prediction = gen_text(rng)
        pairs.append((target, prediction))
    return pairs


SUFFIXES = [
    "s",
    "es",
    "ies",
    "sses",
    "ss",
    "ed",
    "eed",
    "ied",
    "ing",
    "y",
    "ational",
    "tional",
    "enci",
    "anci",
    "izer",
    "bli",
    "abli",
    "alli",
    "entli",
    "eli",
    "ousli",
    "ization",
    "ation",
    "ator",
    "alism",
    "iveness",
    "fulness",
    "ousness",
    "aliti",
    "iviti",
    "biliti",
    "fulli",
    "logi",
    "icate",
    "ative",
    "alize",
    "iciti",
    "ical",
    "ful",
    "ness",
    "al",
    "ance",
    "ence",
    "er",
    "ic",
    "able",
    "ible",
    "ant",
    "ement",
    "ment",
    "ent",
    "sion",
    "tion",
    "ion",
    "ou",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
    "e",
    "ll",
    "l",
    "at",
    "bl",
    "iz",
    "ated",
    "ating",
    "ling",
    "lled",
    "zzed",
    "ssing",
]


def gen_words(n: int, seed: int) -> List[str]:
    """Synthetic words built to hit every Porter rule (stem + one to three suffixes)."""
    rng = random.Random(seed)
    letters = "aeiouybcdfghlmnprstvwxz"
    out = []
    for _ in range(n):
        stem = "".join(rng.choice(letters) for _ in range(rng.randint(0, 6)))
        for _ in range(rng.randint(1, 3)):
            stem += rng.choice(SUFFIXES)
        if rng.random() < 0.05:
            stem += str(rng.randint(0, 99))
        out.append(stem)
    return out
