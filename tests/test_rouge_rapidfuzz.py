"""The ``fast`` extra: rougeL's LCS length through rapidfuzz, exact (``--backend rapidfuzz``)."""

import json
import os
import random
import threading
from typing import Any, List

import pytest
from conftest import ROOT, need, run_cli, run_without_package
from rouge_textgen import gen_pairs

from rageval_min import rouge
from rageval_min._extras import load_extra
from rageval_min.errors import ScoringError

PAIRS = os.path.join(ROOT, "gold_samples", "rouge", "pairs.jsonl")


@pytest.fixture
def rf() -> Any:
    """``rageval_min_extras.rapidfuzz_lcs`` with a fresh vocabulary (rapidfuzz required in CI)."""
    need("rapidfuzz", "fast")
    mod = load_extra("fast")
    mod.check_backend()
    mod._reset_for_tests()
    yield mod
    mod._reset_for_tests()


class Clash:
    """A token equal only to itself whose hash is chosen: two of them collide."""

    def __init__(self, name: str, h: int) -> None:
        self.name, self.h = name, h

    def __hash__(self) -> int:
        return self.h

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Clash) and other.name == self.name

    def __repr__(self) -> str:
        return f"Clash({self.name!r})"


def test_random_sequences_match_the_stdlib_engine(rf: Any) -> None:
    rng = random.Random(7)
    alphabets: List[List[Any]] = [
        [b"a", b"b", b"c"],
        [b"the", b"cat", b"sat", b"on", b"mat", b"a"],
        ["a", "b", "ab", "ba", "c"],  # one-character str tokens are keyed by code point
        [str(i) for i in range(40)],
    ]
    for _ in range(3000):
        alpha = rng.choice(alphabets)
        a = [rng.choice(alpha) for _ in range(rng.randint(0, 90))]
        b = [rng.choice(alpha) for _ in range(rng.randint(0, 90))]
        assert rf.lcs_length(a, b) == rouge.lcs_length(a, b), (a, b)


def test_scores_are_identical_to_the_stdlib_engine(rf: Any) -> None:
    for target, prediction in gen_pairs(1500, 11):
        for stem in (False, True):
            want = rouge.score(target, prediction, rouge_types=["rougeL", "rougeLsum"], use_stemmer=stem)
            got = rouge.score(
                target, prediction, rouge_types=["rougeL", "rougeLsum"], use_stemmer=stem, lcs=rf.lcs_length
            )
            assert got == want
            # same types too (int zeros stay ints)
            assert [type(x) for s in got.values() for x in s] == [type(x) for s in want.values() for x in s]
    got = rouge.score("Café 北京 is big", "北京 is big", rouge_types=["rougeL"], tokenizer="unicode", lcs=rf.lcs_length)
    assert got == rouge.score("Café 北京 is big", "北京 is big", rouge_types=["rougeL"], tokenizer="unicode")


def test_a_hash_collision_falls_back_to_the_stdlib_engine(rf: Any) -> None:
    x, y = Clash("x", 12345), Clash("y", 12345)
    sim = rf.check_backend()
    assert sim([x], [y]) == 1  # rapidfuzz alone would count the collision as a match
    assert rf.lcs_length([x], [y]) == 0 == rouge.lcs_length([x], [y])
    assert rf.lcs_length([x, b"k"], [b"k", y, x]) == 1
    # bytes and str of the same text share a hash but are different tokens
    assert sim([b"ab"], ["ab"]) == 1
    assert rf.lcs_length([b"ab"], ["ab"]) == 0
    # a one-character str is keyed by its code point: a token hashing to 97 clashes with "a"
    assert rf.lcs_length(["a"], [Clash("z", 97)]) == 0
    # colliding tokens are never admitted; the rest of the pair's tokens are
    rf._reset_for_tests()
    assert rf.lcs_length([x, b"p"], [y, b"p"]) == 1
    assert rf._vocab_size() == 2  # x (first of its hash) and b"p"; y stays out
    assert rf.lcs_length([y], [y]) == 1  # y is scored, by the stdlib engine


def test_the_vocabulary_is_bounded(rf: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(rf, "VOCAB_MAX", 50)
    rng = random.Random(3)
    words = [f"w{i}".encode() for i in range(400)]
    for _ in range(300):
        a = rng.sample(words, 30)
        b = rng.sample(words, 25)
        assert rf.lcs_length(a, b) == rouge.lcs_length(a, b)
        assert rf._vocab_size() <= 50 + 55


def test_threads_share_the_vocabulary_safely(rf: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(rf, "VOCAB_MAX", 200)
    pairs = [
        ([w.encode() for w in t.lower().split()], [w.encode() for w in p.lower().split()]) for t, p in gen_pairs(400, 5)
    ]
    want = [rouge.lcs_length(a, b) for a, b in pairs]
    bad: List[int] = []

    def work() -> None:
        for i, (a, b) in enumerate(pairs):
            if rf.lcs_length(a, b) != want[i]:
                bad.append(i)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []


def test_check_backend_refuses_a_rapidfuzz_that_compares_differently(rf: Any, monkeypatch: Any) -> None:
    real = rf.check_backend()

    class Fake:
        @staticmethod
        def similarity(a: Any, b: Any) -> int:  # keys truncated to 32 bits
            return int(real([hash(x) & 0xFFFFFFFF for x in a], [hash(x) & 0xFFFFFFFF for x in b]))

    monkeypatch.setattr(rf, "_SIMILARITY", None)
    monkeypatch.setattr(rf, "_import", lambda: Fake)
    with pytest.raises(ScoringError, match="compares sequence elements differently"):
        rf.check_backend()


def test_core_option_validation() -> None:
    with pytest.raises(ScoringError, match="lcs must be a function"):
        rouge.score("a b", "a", rouge_types=["rougeL"], lcs="fast")  # type: ignore[arg-type]
    calls: List[int] = []

    def counting(a: Any, b: Any) -> int:
        calls.append(1)
        return rouge.lcs_length(a, b)

    s = rouge.score_multi(["a b c", "b c"], "b c d", rouge_types=["rouge1", "rougeL", "rougeLsum"], lcs=counting)
    assert s == rouge.score_multi(["a b c", "b c"], "b c d", rouge_types=["rouge1", "rougeL", "rougeLsum"])
    assert len(calls) == 2  # rougeL once per target; rouge1 and rougeLsum never
    t = rouge.score_tokens(["a", "b"], ["b"], rouge_types=["rougeL"], lcs=counting)
    assert t["rougeL"].recall == 0.5 and len(calls) == 3


def test_cli_backend_gives_the_same_output(rf: Any) -> None:
    plain = run_cli(["rouge", "--input", PAIRS])
    fast = run_cli(["rouge", "--input", PAIRS, "--backend", "rapidfuzz"])
    assert fast.code == 0 and fast.out == plain.out
    s1 = json.loads(run_cli(["rouge", "--input", PAIRS, "--summary"]).out)
    s2 = json.loads(run_cli(["rouge", "--input", PAIRS, "--summary", "--backend", "rapidfuzz"]).out)
    assert s1["result"] == s2["result"]
    assert "backend" not in s1["signature"]
    assert f"|backend=rapidfuzz-{rf.rapidfuzz_version()}" in s2["signature"]


def test_cli_backend_missing_package_names_the_install(tmp_path: Any) -> None:
    r = run_without_package("rapidfuzz", ["rouge", "--input", PAIRS, "--backend", "rapidfuzz"], tmp_path)
    assert r.code == 2
    assert "pip install 'rageval-min[fast]'" in r.err and "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "src",
    [
        os.path.join(ROOT, "tests", "data", "mtrag", "responses-10.jsonl"),
        os.path.join(ROOT, "gold_samples", "mtrag", "tasks.jsonl"),
    ],
)
def test_mtrag_algorithmic_backend_writes_the_same_records(rf: Any, tmp_path: Any, src: str) -> None:
    plain, fast = tmp_path / "plain.jsonl", tmp_path / "fast.jsonl"
    r1 = run_cli(["mtrag", "algorithmic", "--input", src, "--records", str(plain)])
    r2 = run_cli(["mtrag", "algorithmic", "--input", src, "--records", str(fast), "--backend", "rapidfuzz"])
    assert (r1.code, r2.code) == (0, 0), r1.err + r2.err
    assert fast.read_bytes() == plain.read_bytes()
    a, b = json.loads(r1.out), json.loads(r2.out)
    assert a["result"].pop("output") == str(plain) and b["result"].pop("output") == str(fast)
    assert a["result"] == b["result"]
    assert b["signature"] == a["signature"] + f"|backend=rapidfuzz-{rf.rapidfuzz_version()}"
