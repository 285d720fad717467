"""The fast paths of ``mtrag algorithmic`` (issue #16) give the literal reference computations' values.

* ``clean_for_extractiveness`` (one translate over the UTF-8 bytes, then each distinct
  non-ASCII character) against the literal regex + ``lower()`` of the reference, on every
  code point and on random strings mixing the awkward ones (capital sigma, dotted I, marks,
  lone surrogates);
* ``normalize_answer`` (punctuation deleted from the UTF-8 bytes, articles dropped from
  the split when every character is a word character or whitespace) against the literal
  ``translate`` + ``re.sub``;
* ``score_record`` (the response normalised, cleaned and tokenized once per record) against
  the pair-by-pair public functions, values and int/float types.
"""

import random
import re
import string

from rageval_min import mtrag

_NON_WORD = re.compile(r"[^\w\s]")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = {ord(ch): None for ch in string.punctuation}


def literal_clean(text):
    text = _NON_WORD.sub("", text.replace("\n", " ")).lower()
    return text.replace("\r", "\n").lstrip(" \t\n\r\x0c")


def literal_normalize(text):
    text = _ARTICLES.sub(" ", text.lower().translate(_PUNCT))
    return " ".join(text.split())


_AWKWARD = ["\u03a3", "\u0130", "\u0307", "\u212a", "\u2019", "\u00a0", "\x1c", "\ud800", "\U0001f600", "\r", "\n"]
_POOL = [chr(c) for c in range(0, 0x800)] + _AWKWARD * 20 + [" a ", " an ", " the ", "a", "the"] * 20


def _random_texts(seed, n, length=14):
    rng = random.Random(seed)
    for _ in range(n):
        yield "".join(rng.choice(_POOL) for _ in range(rng.randint(0, length)))


def test_clean_every_code_point():
    for c in range(0x110000):
        ch = chr(c)
        text = ch + "A" + ch.upper() + "b\r"
        assert mtrag.clean_for_extractiveness(text) == literal_clean(text), hex(c)


def test_clean_random_strings():
    for text in _random_texts(1, 20000):
        assert mtrag.clean_for_extractiveness(text) == literal_clean(text), repr(text)


def test_normalize_every_code_point_and_random_strings():
    for c in list(range(0x30000)) + [0xE0001, 0x10FFFF]:
        text = "The " + chr(c) + "a an" + chr(c) + " the U.S."
        assert mtrag.normalize_answer(text) == literal_normalize(text), hex(c)
    for text in _random_texts(2, 20000):
        assert mtrag.normalize_answer(text) == literal_normalize(text), repr(text)


def test_score_record_equals_the_pairwise_functions():
    rng = random.Random(3)
    words = "the a an cat sat on mat U.S. don't e-mail 3.5% _x Caf\u00e9 na\u00efve \u5317\u4eac \u03a3\u03b1 \n \r ! ?"
    vocab = words.split(" ")

    def text(n):
        return " ".join(rng.choice(vocab) for _ in range(rng.randint(0, n)))

    for _ in range(800):
        pred = text(20)
        targets = [text(12) for _ in range(rng.randint(0, 2))]
        passages = [text(15) for _ in range(rng.randint(0, 4))] + (
            [pred[: len(pred) // 2]] if rng.random() < 0.3 else []
        )
        record = {
            "predictions": [{"text": pred}],
            "targets": [{"text": t} for t in targets],
            "contexts": [{"text": p} for p in passages],
        }
        for tokenizer, variants in (("reference", []), ("unicode", ["unicode_tokens"])):
            got = mtrag.score_record(record, variants=variants).record["metrics"]
            want = {}
            if targets:
                want["Recall"] = [mtrag.recall(pred, t) for t in targets]
                want["RougeL_stemFalse"] = [mtrag.rouge_l_stem_false(pred, t, tokenizer=tokenizer) for t in targets]
            if passages:
                want["Extractiveness_RougeL"] = [
                    mtrag.extractiveness_rouge_l(pred, p, tokenizer=tokenizer) for p in passages
                ]
            if targets:
                want["Length"] = [len(pred)] * len(targets)
            assert repr(got) == repr(want), (record, tokenizer)
