"""Differential test against the real rouge-score 0.1.2 (skipped when it is not installed).

A few thousand generated pairs (tiny alphabets for LCS ties, stem collisions,
non-ASCII, every line-break kind, empty texts), every rouge type, with and
without the stemmer: zero mismatches in value or int/float type.
"""

from typing import Any, List

import pytest
from conftest import need
from rouge_textgen import gen_pairs

from rageval_min.rouge import score, score_multi

rouge_scorer = need("rouge_score.rouge_scorer", "rouge")

TYPES = [f"rouge{n}" for n in range(1, 10)] + ["rougeL", "rougeLsum"]  # every type rouge-score offers


def _key(s: Any) -> List[Any]:
    return [(type(x).__name__, x) for x in s]


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_every_type_matches_rouge_score(use_stemmer: bool) -> None:
    ref = rouge_scorer.RougeScorer(TYPES, use_stemmer=use_stemmer)
    mismatches = []
    pairs = gen_pairs(1500, seed=1000 + use_stemmer)
    for t, p in pairs:
        want = ref.score(t, p)
        got = score(t, p, rouge_types=TYPES, use_stemmer=use_stemmer)
        assert list(got) == list(want)
        for k in TYPES:
            if _key(got[k]) != _key(want[k]):
                mismatches.append((t, p, k, got[k], want[k]))
    assert mismatches[:5] == [] and len(pairs) == 1500


def test_single_types_and_rougeLsum_only_path() -> None:
    """The reference skips whole-text tokenization when rougeLsum is alone."""
    for types in (["rougeLsum"], ["rougeL"], ["rouge2", "rougeLsum"]):
        ref = rouge_scorer.RougeScorer(types, use_stemmer=True)
        for t, p in gen_pairs(200, seed=55):
            assert ref.score(t, p) == score(t, p, rouge_types=types, use_stemmer=True)


def test_score_multi_matches_rouge_score() -> None:
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    ref = rouge_scorer.RougeScorer(types)
    pairs = gen_pairs(600, seed=321)
    for j in range(0, 600, 4):
        targets = [pairs[j][0], pairs[j + 1][0], pairs[j + 2][0], pairs[j][0]]
        p = pairs[j + 3][1]
        want = ref.score_multi(targets, p)
        got = score_multi(targets, p, rouge_types=types)
        for k in types:
            assert _key(got[k]) == _key(want[k]), (targets, p, k)
