"""Our Porter stemmer against NLTK's PorterStemmer (NLTK_EXTENSIONS mode)."""

import os
import random
from typing import List

from conftest import need
from rouge_textgen import gen_words

from rageval_min.porter import porter_stem

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "rouge")


def test_pinned_nltk_stems() -> None:
    """13,793 words (MT-RAG vocabulary + synthetic rule-hitting words) stemmed by nltk 3.10.4."""
    bad = []
    n = 0
    with open(os.path.join(DATA, "porter_nltk.tsv"), encoding="utf-8") as fh:
        for line in fh:
            word, want = line.rstrip("\n").split("\t")
            n += 1
            if porter_stem(word) != want:
                bad.append((word, porter_stem(word), want))
    assert n == 13793
    assert bad == []


def test_irregular_forms_and_short_words() -> None:
    cases = {
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
        "Skies": "sky",
        "ab": "ab",
        "AB": "ab",
        "a": "a",
        "ties": "tie",
        "cries": "cri",
        "died": "die",
        "cried": "cri",
        "cry": "cri",
        "say": "say",
        "by": "by",
        "happily": "happili",
        "generalization": "gener",
        "geology": "geolog",
        "fully": "fulli",
        "hopefulli": "hope",
        "controlling": "control",
        "rolling": "roll",
    }
    got = {w: porter_stem(w) for w in cases}
    assert got == cases


def _vocabulary() -> List[str]:
    words = [line.split("\t")[0] for line in open(os.path.join(DATA, "mtrag_unigrams.tsv"), encoding="utf-8")]
    for path in ("/usr/share/dict/words", "/usr/share/dict/american-english"):
        if os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as fh:
                words += [w.strip() for w in fh]
            break
    words += gen_words(15000, seed=12345)
    rng = random.Random(77)
    letters = "abcdefghijklmnopqrstuvwxyz0123456789yyeeiiss"
    words += ["".join(rng.choice(letters) for _ in range(rng.randint(1, 14))) for _ in range(15000)]
    return sorted(set(words))


def test_agrees_with_nltk_on_large_vocabulary() -> None:
    nltk_porter = need("nltk.stem.porter", "rouge", "rouge-score brings nltk")
    stemmer = nltk_porter.PorterStemmer()  # default mode: NLTK_EXTENSIONS
    words = _vocabulary()
    assert len(words) > 35000
    bad = [(w, porter_stem(w), stemmer.stem(w)) for w in words if porter_stem(w) != stemmer.stem(w)]
    assert bad[:20] == []
