"""ROUGE engine: conformance vectors, pinned rouge-score outputs, edge cases, properties."""

import json
import os
import random
import re
from collections import Counter
from typing import Any, Dict, List

import pytest
from rouge_textgen import gen_pairs

from rageval_min.errors import ScoringError
from rageval_min.porter import porter_stem
from rageval_min.rouge import (
    Score,
    lcs_indices,
    lcs_length,
    lcs_lengths,
    rouge_l_many,
    score,
    score_multi,
    score_tokens,
    tokenize,
)
from rageval_min.rouge import rouge_scorer as rouge

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "rouge")


def _jsonl(name: str) -> List[Dict[str, Any]]:
    with open(os.path.join(DATA, name), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _same(got: Score, want: List[Any]) -> bool:
    """Equal values *and* equal int/float types."""
    return list(got) == list(want) and [type(x) for x in got] == [type(x) for x in want]


# --------------------------------------------------------------- conformance

MTRAG = _jsonl("mtrag_rougeL.jsonl")


def test_mtrag_vectors_count() -> None:
    by_source: Dict[str, int] = {}
    for r in MTRAG:
        by_source[r["source"]] = by_source.get(r["source"], 0) + 1
    assert by_source == {
        "edge_cases.jsonl": 16,
        "responses10_algorithmic.jsonl": 10,
        "subset_flat.jsonl": 477,
        "inspectorraget_flat.jsonl": 400,
    }


@pytest.mark.parametrize(
    "source", ["edge_cases.jsonl", "responses10_algorithmic.jsonl", "subset_flat.jsonl", "inspectorraget_flat.jsonl"]
)
def test_mtrag_rougeL_fmeasure(source: str) -> None:
    bad = []
    for r in MTRAG:
        if r["source"] != source:
            continue
        f = score(r["target"], r["prediction"], rouge_types=["rougeL"])["rougeL"].fmeasure
        if f != r["fmeasure"] or type(f) is not type(r["fmeasure"]):
            bad.append((r["id"], f, r["fmeasure"]))
    assert bad == []


GOLDEN = _jsonl("golden_rouge_score.jsonl")


def test_golden_rouge_score_all_types() -> None:
    """Outputs of rouge-score 0.1.2 (nltk 3.10.4) pinned in the repository."""
    n = 0
    for r in GOLDEN:
        if "target" not in r:
            continue
        types = list(r["scores"])
        got = score(r["target"], r["prediction"], rouge_types=types, use_stemmer=r["use_stemmer"])
        assert list(got) == types
        for k in types:
            assert _same(got[k], r["scores"][k]), (r, k, got[k])
            n += 1
    assert n == 400 * 11


def test_golden_score_multi() -> None:
    n = 0
    for r in GOLDEN:
        if "targets" not in r:
            continue
        got = score_multi(r["targets"], r["prediction"], rouge_types=list(r["scores"]))
        for k, want in r["scores"].items():
            assert _same(got[k], want), (r, k)
        n += 1
    assert n == 50


# ------------------------------------------------------------ exact semantics


def test_zero_cases_int_vs_float() -> None:
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    for t, p in [("", "a b"), ("a b", ""), ("", ""), ("北京", "a"), ("...", "!!!"), ("\n\n", "a")]:
        s = score(t, p, rouge_types=types)
        assert _same(s["rouge1"], [0.0, 0.0, 0.0])
        assert _same(s["rouge2"], [0.0, 0.0, 0.0])
        assert _same(s["rougeL"], [0, 0, 0])
        assert _same(s["rougeLsum"], [0, 0, 0])
    # non-empty sides without overlap: floats everywhere
    s = score("a b", "c d", rouge_types=types)
    for k in types:
        assert _same(s[k], [0.0, 0.0, 0.0])
    # rougeN with too few tokens for an n-gram but overlap elsewhere
    assert _same(score("a", "a", rouge_types=["rouge2"])["rouge2"], [0.0, 0.0, 0.0])


def test_rougeLsum_whitespace_sentence_counts_but_has_no_tokens() -> None:
    # the blank line is kept as a sentence and tokenizes to []
    s = score("a b\n \nc", "a c", rouge_types=["rougeLsum"])["rougeLsum"]
    assert _same(s, [1.0, 2 / 3, 2 * 1.0 * (2 / 3) / (1.0 + 2 / 3)])


def test_carriage_return_is_not_a_sentence_break() -> None:
    a = score("a b\rc d", "c d a b", rouge_types=["rougeLsum"])["rougeLsum"]
    b = score("a b\nc d", "c d a b", rouge_types=["rougeLsum"])["rougeLsum"]
    assert a.fmeasure == 0.5 and b.fmeasure == 1.0


def test_fmeasure_operation_order() -> None:
    p, r = 0.1, 0.7
    assert rouge._fmeasure(p, r) == ((2 * p) * r) / (p + r)
    assert rouge._fmeasure(0, 0) == 0.0 and type(rouge._fmeasure(0, 0)) is float


def test_type_names() -> None:
    assert list(score("a", "a", rouge_types=["rouge1\n"])) == ["rouge1\n"]  # `$` quirk
    with pytest.raises(ScoringError, match="rougen requires positive n: rouge0"):
        score("a", "a", rouge_types=["rouge0"])
    for bad in ["rouge10", "rougel", "ROUGE1", "rougeLSum", "rouge-1", ""]:
        with pytest.raises(ScoringError, match="invalid rouge type"):
            score("a", "a", rouge_types=[bad])
    with pytest.raises(ScoringError, match="not a string"):
        score("a", "a", rouge_types="rougeL")
    for bad_item in (3, ["rougeL"], None):
        with pytest.raises(ScoringError, match="invalid rouge type"):
            score("a", "a", rouge_types=["rougeL", bad_item])  # type: ignore[list-item]
    assert score("a", "a", rouge_types=[]) == {}
    assert list(score("a", "a", rouge_types=("rougeL",))) == ["rougeL"]  # any sequence
    # order of the request is kept; a repeated name keeps its first position
    assert list(score("a", "a", rouge_types=["rougeL", "rouge1", "rougeL"])) == ["rougeL", "rouge1"]


def test_bad_inputs() -> None:
    with pytest.raises(ScoringError, match="target: expected a string, got int"):
        score(3, "a", rouge_types=["rougeL"])  # type: ignore[arg-type]
    with pytest.raises(ScoringError, match="prediction: expected a string, got NoneType"):
        score("a", None, rouge_types=["rougeL"])  # type: ignore[arg-type]
    with pytest.raises(ScoringError, match="unknown tokenizer"):
        score("a", "a", rouge_types=["rougeL"], tokenizer="nltk")
    with pytest.raises(ScoringError, match="at least one target"):
        score_multi([], "a", rouge_types=["rougeL"])


def test_score_multi_first_max_wins_whole_score() -> None:
    # both targets give F = 2/3 for rouge1 but different P/R: the first is kept
    s = score_multi(["a b c d", "a"], "a b", rouge_types=["rouge1"])["rouge1"]
    assert _same(s, [1.0, 0.5, 2 / 3])
    s = score_multi(["a", "a b c d"], "a b", rouge_types=["rouge1"])["rouge1"]
    assert _same(s, [0.5, 1.0, 2 / 3])
    # int zero of an empty target loses to a later float zero? No: 0 == 0.0, first wins
    s = score_multi(["", "x"], "a", rouge_types=["rougeL"])["rougeL"]
    assert _same(s, [0, 0, 0])


def test_symmetry_of_f() -> None:
    for t, p in gen_pairs(200, seed=11):
        a = score(t, p, rouge_types=["rougeL", "rouge1"])
        b = score(p, t, rouge_types=["rougeL", "rouge1"])
        for k in a:
            assert a[k].fmeasure == b[k].fmeasure
            assert a[k].precision == b[k].recall


# --------------------------------------------------------------- tokenizer


def test_tokenizer_examples() -> None:
    assert tokenize("don't U.S.A. e-mail 3.14") == "don t u s a e mail 3 14".split()
    assert tokenize("Café naïve résumé") == ["caf", "na", "ve", "r", "sum"]
    assert tokenize("Straße") == ["stra", "e"]
    assert tokenize("北京 is 首都") == ["is"]
    assert tokenize("x² ٣ 3") == ["x", "3"]
    assert tokenize("ﬁnance") == ["nance"]
    assert tokenize("\u212a") == ["k"]  # Kelvin sign lower-cases to ASCII k
    assert tokenize("\u0130stanbul") == ["i", "stanbul"]
    assert tokenize("snake_case") == ["snake", "case"]
    assert tokenize("") == []


def test_tokenizer_matches_reference_regex_pipeline() -> None:
    """The fast byte-translate tokenizer equals the reference's regex pipeline."""
    non_alnum = re.compile(r"[^a-z0-9]+")
    spaces = re.compile(r"\s+")
    valid = re.compile(r"^[a-z0-9]+$")
    rng = random.Random(5)
    alphabet = "aZ09 _-.'\n\r\t\u00e9\u00df\u212a\u0130\u4e00\u0663\ufb01\U0001f642\ud800\x00\x85\u2028\u00a0"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    texts += [t for pair in gen_pairs(300, seed=2) for t in pair]
    for text in texts:
        want = [x for x in spaces.split(non_alnum.sub(" ", text.lower())) if valid.match(x)]
        assert tokenize(text) == want, repr(text)
        stemmed = [porter_stem(x) if len(x) > 3 else x for x in spaces.split(non_alnum.sub(" ", text.lower()))]
        assert tokenize(text, stemmer=porter_stem) == [x for x in stemmed if valid.match(x)]


def test_custom_stemmer_is_filtered_like_the_reference() -> None:
    assert tokenize("abcd efgh ab", stemmer=lambda w: w.upper()) == ["ab"]
    assert tokenize("abcd efgh", stemmer=lambda w: w + "\n") == ["abcd\n", "efgh\n"]  # `$` quirk


def test_unicode_tokenizer_variant() -> None:
    assert tokenize("Café naïve 北京 is 首都", tokenizer="unicode") == ["café", "naïve", "北", "京", "is", "首", "都"]
    assert tokenize("Straße ﬁnance Ｆｕｌｌ x²", tokenizer="unicode") == ["strasse", "finance", "full", "x2"]
    assert tokenize("Москва и Питер", tokenizer="unicode") == ["москва", "и", "питер"]
    assert tokenize("ひらがなカタカナ漢字abc", tokenizer="unicode") == list("ひらがなカタカナ漢字") + ["abc"]
    assert tokenize("running café", stemmer=porter_stem, tokenizer="unicode") == ["run", "café"]
    s = score("北京是首都", "首都是北京", rouge_types=["rouge1", "rougeL"], tokenizer="unicode")
    assert s["rouge1"].fmeasure == 1.0 and s["rougeL"].precision == 0.4
    # the reference tokenizer sees nothing here
    assert score("北京是首都", "首都是北京", rouge_types=["rougeL"])["rougeL"] == (0, 0, 0)


# ---------------------------------------------------------------------- LCS


def _lcs_table(a: List[str], b: List[str]) -> List[List[int]]:
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            t[i][j] = t[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(t[i - 1][j], t[i][j - 1])
    return t


def _table_backtrack(a: List[str], b: List[str]) -> List[int]:
    """The reference's tie-break, on the full table (written here for the test)."""
    t = _lcs_table(a, b)
    i, j, out = len(a), len(b), []
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            out.insert(0, i - 1)
            i, j = i - 1, j - 1
        elif t[i][j - 1] > t[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return out


def test_lcs_against_table() -> None:
    rng = random.Random(9)
    for _ in range(1500):
        k = rng.choice([2, 3, 5, 20])
        k2 = k + rng.choice([0, 0, 1, 3])  # letters of b missing from a: runs of unmatched columns
        a = [rng.choice("abcdefghijklmnopqrstuvw"[:k]) for _ in range(rng.randint(0, 70))]
        b = [rng.choice("abcdefghijklmnopqrstuvw"[:k2]) for _ in range(rng.randint(0, 70))]
        assert lcs_length(a, b) == _lcs_table(a, b)[-1][-1] == lcs_length(b, a)
        assert lcs_indices(a, b) == _table_backtrack(a, b)


def test_lcs_lengths_and_rouge_l_many_against_one_pair_at_a_time() -> None:
    rng = random.Random(16)
    for _ in range(400):
        k = rng.choice([2, 4, 20])
        seq = [rng.choice("abcdefghijklmnopqrstu"[:k]) for _ in range(rng.choice([0, 1, 5, 70, 200]))]
        others = [
            [rng.choice("abcdefghijklmnopqrstuvwxyz"[: k + 2]) for _ in range(rng.choice([0, 1, 9, 90, 300]))]
            for _ in range(rng.randint(0, 6))
        ]
        assert lcs_lengths(seq, others) == [_lcs_table(seq, o)[-1][-1] for o in others]
        one_by_one = [score_tokens(o, seq, rouge_types=["rougeL"])["rougeL"] for o in others]
        for lcs in (None, lcs_length):
            got = rouge_l_many(others, seq, lcs=lcs)
            assert [tuple(map(repr, g)) for g in got] == [tuple(map(repr, w)) for w in one_by_one]  # ints stay ints


def test_lcs_long_sequences() -> None:
    rng = random.Random(4)
    a = [rng.choice("abcd") for _ in range(5000)]  # beyond the cached powers of two
    b = [rng.choice("abcd") for _ in range(300)]
    assert lcs_length(a, b) == _lcs_table(b, a)[-1][-1]


def _summary_level_table(ref_sents: List[List[str]], can_sents: List[List[str]]) -> Any:
    """The reference's ``_summary_level_lcs`` on the full tables (written here for the test):
    the union tokens in visiting order, and the hits of its count-and-decrement loop."""
    ref_count: "Counter[str]" = Counter(t for s in ref_sents for t in s)
    can_count: "Counter[str]" = Counter(t for s in can_sents for t in s)
    visited, hits = [], 0
    for ref in ref_sents:
        union = set()
        for can in can_sents:
            union.update(_table_backtrack(ref, can))
        for idx in sorted(union):
            tok = ref[idx]
            visited.append(tok)
            if can_count[tok] > 0 and ref_count[tok] > 0:
                hits += 1
                can_count[tok] -= 1
                ref_count[tok] -= 1
    return visited, hits


def _random_sentences(rng: random.Random, letters: str) -> List[List[str]]:
    longest = rng.choice([1, 3, 8, 25, 70])
    return [[rng.choice(letters) for _ in range(rng.randint(1, longest))] for _ in range(rng.randint(1, 7))]


@pytest.mark.parametrize("pack_bits", [1 << 24, 2048, 256, 1, 0])
def test_rougeLsum_union_against_table(monkeypatch: pytest.MonkeyPatch, pack_bits: int) -> None:
    """The packed union LCS (every sentence pair at once, bit-reversed columns) visits exactly the
    tokens of the reference's table backtrack, in the same order, and gives the same hits;
    ``pack_bits`` forces one packed run, several runs, and sentences walked alone; 0: the
    walk of each sentence pair (chosen for few pairs)."""
    monkeypatch.setattr(rouge, "_PACK_BITS", pack_bits or 1 << 24)
    monkeypatch.setattr(rouge, "_walk_pairs", lambda n_refs, can_lens: pack_bits == 0)
    rng = random.Random(pack_bits)
    for _ in range(1500):
        k = rng.choice([2, 3, 5, 20])
        k2 = k + rng.choice([0, 0, 1, 3])  # candidate letters missing from the reference
        refs = _random_sentences(rng, "abcdefghijklmnopqrstuvw"[:k])
        cans = _random_sentences(rng, "abcdefghijklmnopqrstuvw"[:k2])
        visited, hits = _summary_level_table(refs, cans)
        assert rouge._union_tokens(refs, cans) == visited, (refs, cans)  # type: ignore[arg-type]
        can_count = Counter(t for s in cans for t in s)
        m, n = sum(map(len, refs)), sum(map(len, cans))
        got = rouge._score_lsum(refs, cans, m, n, can_count)  # type: ignore[arg-type]
        assert got == (hits / n, hits / m, rouge._fmeasure(hits / n, hits / m))


# ---------------------------------------------------------------- signature


def test_signature() -> None:
    sig = rouge.signature(params=rouge.signature_params(rouge_types=["rouge1", "rougeL"], use_stemmer=False))
    assert sig.split("|")[1:] == [
        "family=rouge",
        "ref=google-research/google-research@61ce9f0",
        "variants=none",
        "rouge_score=0.1.2",
        "types=rouge1,rougeL",
        "stem=false",
        "tokenizer=reference",
    ]
    sig = rouge.signature(
        variants=rouge.rouge_variants(tokenizer="unicode"),
        params=rouge.signature_params(use_stemmer=True, tokenizer="unicode"),
    )
    assert "variants=unicode_tokens" in sig and "stemmer=nltk-porter-3.10.4" in sig
