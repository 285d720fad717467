"""The optional C kernels (``rageval_min._speedups``) against the pure Python path.

Every test computes the same thing twice in this process, once with the C kernels and once
with the pure code (the loader's decision swapped for the duration of one call), and wants
the same values and the same int/float types: on every conformance vector the rouge and
mtrag tests use, the gold samples, and seeded random texts (small alphabets for LCS ties,
Unicode, characters that lower-case into ASCII, non-BMP characters, empty texts, very long
texts and sentences longer than one 64-bit word). Without the built extension these tests
skip, or fail when ``RAGEVAL_MIN_REQUIRE_EXTRAS`` names ``speedups``. They run the C kernels
whatever ``RAGEVAL_MIN_PURE`` says (that variable only changes what the other tests run).
"""

import contextlib
import gzip
import json
import os
import random
import subprocess
import sys
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from conftest import DATA, ROOT, need
from rouge_textgen import gen_pairs

from rageval_min import _speedups_loader, mtrag, rouge
from rageval_min.mtrag import run_algorithmic
from rageval_min.rouge import rouge_scorer

C: Any = None  # the C kernels module, set by _kernels_built before every test


@pytest.fixture(autouse=True, scope="module")
def _kernels_built() -> None:
    """Skip every test here without the built extension (fail when ``speedups`` is required)."""
    global C
    C = need("rageval_min._speedups", "speedups", "build it in place: python setup.py build_ext --inplace")


TYPES = [f"rouge{n}" for n in range(1, 10)] + ["rougeL", "rougeLsum"]
FOUR = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


@contextlib.contextmanager
def kernels(module: Optional[Any]) -> Iterator[None]:
    """Run the body with ``module`` as the loader's decision (None: the pure path)."""
    saved = _speedups_loader._kernels
    _speedups_loader._kernels = module
    try:
        yield
    finally:
        _speedups_loader._kernels = saved


def both(fn: Any, *args: Any, **kwargs: Any) -> Tuple[Any, Any]:
    """``fn(*args, **kwargs)`` with the C kernels, then with the pure path."""
    with kernels(C):
        fast = fn(*args, **kwargs)
    with kernels(None):
        pure = fn(*args, **kwargs)
    return fast, pure


def typed(value: Any) -> Any:
    """``value`` with the type of every number made part of it (0 and 0.0 differ)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [type(value).__name__] + [typed(v) for v in value]
    return (type(value).__name__, value)


def assert_same_scores(pairs: List[Tuple[str, str]], types: List[str] = TYPES) -> None:
    bad = []
    for t, p in pairs:
        fast, pure = both(rouge.score, t, p, rouge_types=types)
        if typed(fast) != typed(pure):
            bad.append((t, p))
    assert bad[:3] == [] and pairs


def _jsonl(path: str) -> List[Dict[str, Any]]:
    opener: Any = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# ------------------------------------------------------------------ the loader


def test_the_loader_uses_the_build_unless_told_not_to() -> None:
    code = "from rageval_min import _speedups_loader as s; k = s.kernels(); print(k is not None and k.__name__)"
    env = dict(os.environ)
    env.pop("RAGEVAL_MIN_PURE", None)
    run = lambda e: subprocess.run(  # noqa: E731
        [sys.executable, "-c", code], cwd=ROOT, env=e, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert run(env) == "rageval_min._speedups"
    assert run(dict(env, RAGEVAL_MIN_PURE="1")) == "False"
    assert run(dict(env, RAGEVAL_MIN_PURE="0")) == "rageval_min._speedups"


def test_the_build_matches_its_source() -> None:
    """A stale in-place build (another KERNEL_VERSION) would not be used: rebuild after changing the C file."""
    assert C.KERNEL_VERSION == _speedups_loader.KERNEL_VERSION
    source = os.path.join(os.path.dirname(_speedups_loader.__file__), "_speedups.c")
    if os.path.exists(source):  # a checkout (an installed wheel has no source)
        with open(source, encoding="utf-8") as fh:
            assert f"#define KERNEL_VERSION {C.KERNEL_VERSION}\n" in fh.read()


# ------------------------------------------------------------- conformance data


def test_golden_rouge_score_vectors() -> None:
    rows = _jsonl(os.path.join(DATA, "rouge", "golden_rouge_score.jsonl"))
    pairs = [(r["target"], r["prediction"]) for r in rows if "target" in r]
    assert len(pairs) == 400
    assert_same_scores(pairs)
    for r in rows:
        if "targets" in r:
            fast, pure = both(rouge.score_multi, r["targets"], r["prediction"], rouge_types=FOUR)
            assert typed(fast) == typed(pure)


def test_mtrag_rougeL_vectors() -> None:
    rows = _jsonl(os.path.join(DATA, "rouge", "mtrag_rougeL.jsonl"))
    assert len(rows) == 903
    assert_same_scores([(r["target"], r["prediction"]) for r in rows])


def test_rouge_gold_sample_file() -> None:
    path = os.path.join(ROOT, "gold_samples", "rouge", "pairs.jsonl")
    for types in (FOUR, TYPES):
        fast, pure = both(lambda: [dict(r) for r in _rows(path, types)])
        assert typed(fast) == typed(pure) and fast


def _rows(path: str, types: List[str]) -> List[Dict[str, Any]]:
    rows: List[Dict[str, Any]] = []
    rouge.score_file(path, rouge_types=types, on_item=rows.append)
    return rows


def _mtrag_texts() -> List[Tuple[str, str]]:
    """(prediction, target or passage) of every mtrag conformance file."""
    out: List[Tuple[str, str]] = []
    for c in _jsonl(os.path.join(DATA, "mtrag", "edge_cases.jsonl")):
        if "prediction" in c:
            out.append((c["prediction"], c["target_or_passage"]))
    for name in ("subset_flat.trimmed.jsonl.gz", "inspectorraget_flat.jsonl.gz"):
        for row in _jsonl(os.path.join(DATA, "mtrag", name)):
            out.append((row["prediction"], row["target"]))
            out.extend((row["prediction"], p) for p in row.get("passages", []))
    return out


def test_mtrag_metrics_on_the_conformance_texts() -> None:
    texts = _mtrag_texts()
    assert len(texts) > 1000
    for pred, other in texts:
        for fn in (mtrag.rouge_l_stem_false, mtrag.extractiveness_rouge_l, mtrag.recall):
            fast, pure = both(fn, pred, other)
            assert typed(fast) == typed(pure), (fn.__name__, pred, other)


def test_mtrag_records_and_gold_sample() -> None:
    records = _jsonl(os.path.join(DATA, "mtrag", "responses-10.jsonl"))
    records += _jsonl(os.path.join(ROOT, "gold_samples", "mtrag", "tasks.jsonl"))
    for rec in records:
        fast, pure = both(mtrag.score_record, rec)
        assert typed(fast.record) == typed(pure.record) and fast.diagnostics == pure.diagnostics


def test_mtrag_algorithmic_files_byte_for_byte(tmp_path: Any) -> None:
    """``algorithmic_file`` writes the same bytes with and without the kernels: lines in
    ``json.dumps`` form (the splice), written other ways (ASCII off, compact, indented), with
    integer ids (converted), with metrics already there (appended), and the pure path's."""
    records = _jsonl(os.path.join(DATA, "mtrag", "responses-10.jsonl"))
    records += _jsonl(os.path.join(ROOT, "gold_samples", "mtrag", "tasks.jsonl"))
    lines = []
    for i, rec in enumerate(records):
        lines.append(json.dumps(rec))
        lines.append(json.dumps(dict(rec, task_id=i)))
        lines.append(json.dumps(dict(rec, metrics={"Recall": [0.5]})))
        lines.append(json.dumps(dict(rec, note="caf\u00e9 \u2019"), ensure_ascii=False))
        lines.append(json.dumps(rec, separators=(",", ":")))
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outs = []
    for module in (C, None):
        out = tmp_path / f"out{len(outs)}.jsonl"
        with kernels(module):
            mtrag.algorithmic_file(str(path), str(out))
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0].count(b"\n") == len(lines)
    assert sum(C.dumps_form(line) for line in lines) >= len(records)  # the splice ran


# ------------------------------------------------------------------ seeded texts


def test_generated_adversarial_pairs() -> None:
    """The rouge differential test's generator: tiny vocabularies, line breaks, non-ASCII."""
    assert_same_scores(gen_pairs(1500, seed=27))


def test_generated_pairs_one_type_at_a_time() -> None:
    pairs = gen_pairs(300, seed=2727)
    for types in (["rougeL"], ["rougeLsum"], ["rouge2", "rougeLsum"], ["rouge3"], ["rougeLsum", "rougeL", "rouge1"]):
        assert_same_scores(pairs, types)


SPECIAL = [
    "",
    " ",
    "\n",
    "\n\n\n",
    "\r\n",
    "a\rb\nc",
    "...",
    "_",
    "a_b",
    "don't",
    "3.14 1,000 2nd",
    "Café naïve résumé",
    "北京 is 首都",
    "\u212a\u212b",  # KELVIN SIGN lower-cases to "k"; ANGSTROM SIGN to a non-ASCII letter
    "İstanbul İ",  # lower-cases to "i" + U+0307
    "ΣΑΣ σας",
    "\U0001f600 smile \U0001f600\U00010400x",  # non-BMP: an emoji and DESERET CAPITAL LONG I
    "ＡＢＣ full width",
    "a\u00a0b\u2028c\u2029d\x85e\x0bf\x0cg\x1ch",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "abcdefgh abcdefghi abcdefghij abcdefgh",  # tokens of 8, 9 and 10 characters
    "x" * 70 + " " + "x" * 69 + "y",
    "\u0130" * 300 + "x \u212a" * 40,  # lower() is longer than the text
]


def test_special_texts_every_pair() -> None:
    pairs = [(t, p) for t in SPECIAL for p in SPECIAL]
    assert_same_scores(pairs)


def _random_text(rng: random.Random, n_words: int, vocab: List[str], breaks: float) -> str:
    words = []
    for _ in range(n_words):
        w = rng.choice(vocab)
        if rng.random() < 0.2:
            w = w.upper()
        words.append(w)
        r = rng.random()
        words.append("\n" if r < breaks else (", " if r < breaks + 0.05 else " "))
    return "".join(words)


UNICODE_VOCAB = ["a", "b", "c", "ab", "é", "café", "\u212a", "İ", "北", "\U0001f600", "x1", "1", "the", "ß"]


@pytest.mark.parametrize("seed", range(4))
def test_random_unicode_texts(seed: int) -> None:
    rng = random.Random(seed)
    pairs = []
    for _ in range(300):
        n, m = rng.randint(0, 40), rng.randint(0, 40)
        pairs.append(
            (_random_text(rng, n, UNICODE_VOCAB, 0.15), _random_text(rng, m, UNICODE_VOCAB[: rng.randint(2, 14)], 0.1))
        )
    assert_same_scores(pairs)


def test_long_texts_and_long_sentences() -> None:
    """Several words per bit vector: sentences of 60-300 tokens and whole texts of thousands."""
    rng = random.Random(99)
    vocab = ["a", "b", "c", "d", "the", "of", "Ab"]
    pairs = []
    for n in (63, 64, 65, 127, 128, 129, 300, 2000):
        for breaks in (0.0, 0.01):
            pairs.append(
                (_random_text(rng, n, vocab, breaks), _random_text(rng, n + rng.randint(-5, 5), vocab, breaks))
            )
    pairs.append((_random_text(rng, 6000, vocab + ["e", "f"], 0.002), _random_text(rng, 5000, vocab, 0.003)))
    assert_same_scores(pairs, FOUR)


@pytest.mark.parametrize("vocab_size", [2, 5, 12, 60])
def test_rouge_lsum_texts_of_many_sentences(vocab_size: int) -> None:
    """rougeLsum over texts of 1-14 sentences of 1-64 tokens: the union's rows fill up as the
    candidate sentences go by, so the kernel's shortcuts (no walk, or a walk cut short, once it
    could mark no row not yet marked) are taken often, with few and many ties."""
    rng = random.Random(2700 + vocab_size)
    vocab = [f"w{i}" for i in range(vocab_size)]

    def text() -> str:
        n = rng.randint(1, 14)
        return "\n".join(" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 64))) for _ in range(n))

    pairs = [(text(), text()) for _ in range(250)]
    assert_same_scores(pairs, ["rougeLsum", "rouge2", "rouge3"])


def test_token_and_separator_runs_at_every_alignment() -> None:
    """The kernel reads the text 8 characters at a time: tokens and separator runs of 1-20
    characters (line breaks anywhere in a run, or at its ends) land at every offset of a word."""
    rng = random.Random(8)
    seps = [" ", "\n", ",", ".", "-", "\u00e9", "\t", "\r"]
    vocab = ["a", "Bc", "def", "g1h2", "ijklmno", "pqrstuvw", "xyz0123456789"]

    def text() -> str:
        parts = []
        for _ in range(rng.randint(0, 30)):
            parts.append(rng.choice(vocab))
            run = [rng.choice(seps[:1] * 6 + seps) for _ in range(rng.choice([1, 1, 2, 3, 8, 20]))]
            parts.append("".join(run))
        return rng.choice(["", " ", "\n"]) + "".join(parts)[: rng.randint(0, 400)]

    pairs = []
    for _ in range(300):
        t = text()
        pairs += [(t, text()), (t, t[rng.randint(0, 7) :])]
    assert_same_scores(pairs, ["rouge1", "rouge2", "rougeLsum"])


def test_tokenize_every_code_point() -> None:
    """One text of every code point (surrogates excepted), each between two tokens."""
    text = " ".join("a" + chr(cp) + "b" for cp in range(0x110000) if not 0xD800 <= cp < 0xE000)
    fast, pure = both(rouge.tokenize, text)
    assert fast == pure and len(fast) > 2 * 0x100000
    for cp in (0x212A, 0x130, 0x10400, 0x1E9E):
        one = "x" + chr(cp) + "y Z"
        assert both(rouge.tokenize, one)[0] == both(rouge.tokenize, one)[1]


def test_str_subclasses_take_the_pure_path() -> None:
    class Shout(str):
        def lower(self) -> str:  # type: ignore[override]
            return str.upper(self)

    assert C.ref_tokens(Shout("ab cd")) is None
    assert C.rouge_scores(Shout("a"), "a", rouge_scorer._parsed(["rouge1"])) is None
    fast, pure = both(rouge.score, Shout("Ab b"), "ab", rouge_types=FOUR)
    assert typed(fast) == typed(pure)


# ----------------------------------------------------------- LCS on any tokens


def test_rouge_scores_is_the_pure_scores_flat() -> None:
    """``rouge_scores`` gives precision, recall and fmeasure per type in turn, the pure path's
    floats bit for bit and its int zeros (an LCS type with an empty text); it declines only
    where C evaluates doubles wider than Python (x87), which no mainstream platform does."""
    import platform

    parsed = rouge_scorer._parsed(FOUR)
    pairs = gen_pairs(200, seed=4) + [("", "a b"), ("a b", ""), ("", ""), ("a\nb c", "b c\na")]
    for t, p in pairs:
        values = C.rouge_scores(t, p, parsed)
        if values is None:
            assert platform.machine().lower() not in ("x86_64", "amd64", "aarch64", "arm64"), "declined"
            continue
        with kernels(None):
            pure = rouge.score(t, p, rouge_types=FOUR)
        assert typed(list(values)) == typed([v for name in FOUR for v in pure[name]])


def test_lcs_indices_ties_against_the_pure_walk() -> None:
    """The backtrack's choice among equal-length LCSs, on tiny alphabets (many ties), 1-200 tokens."""
    rng = random.Random(5)
    for _ in range(3000):
        k = rng.randint(1, 4)
        ref = [rng.randrange(k) for _ in range(rng.choice((rng.randint(0, 12), rng.randint(50, 200))))]
        can = [rng.randrange(k + 1) for _ in range(rng.randint(0, 70))]
        fast, pure = both(rouge.lcs_indices, ref, can)
        assert fast == pure, (ref, can)
        assert both(rouge.lcs_length, ref, can)[0] == both(rouge.lcs_length, ref, can)[1]


def test_lcs_lengths_on_python_objects() -> None:
    """Tokens compare like dict keys (1 == 1.0 == True), as in the pure path's dict of masks."""
    seq = [1, "a", (1, 2), None, 2.0, b"x", True]
    others = [[1.0, "a"], [True, 1, 1], [], [(1, 2), None, 2, b"x"], ("a", "b"), iter([1, 2])]
    fast, pure = both(rouge.lcs_lengths, seq, list(others[:-1]))
    assert fast == pure
    assert both(rouge.lcs_lengths, [], others[:2]) == ([0, 0], [0, 0])
    for args in (([[1]], [[2]]), ([1], [[[1]]])):
        for mod in (C, None):
            with kernels(mod), pytest.raises(TypeError):
                rouge.lcs_lengths(args[0], args[1])


def test_rouge_l_many_and_score_tokens() -> None:
    rng = random.Random(8)
    for _ in range(200):
        pred = rouge.tokenize(_random_text(rng, rng.randint(0, 90), UNICODE_VOCAB, 0.0))
        targets = [rouge.tokenize(_random_text(rng, rng.randint(0, 90), UNICODE_VOCAB, 0.0)) for _ in range(3)]
        fast, pure = both(rouge.rouge_l_many, targets, pred)
        assert typed(fast) == typed(pure)
        fast, pure = both(rouge.score_tokens, targets[0], pred, rouge_types=["rougeL", "rouge2"])
        assert typed(fast) == typed(pure)


def test_rouge_l_texts() -> None:
    """The texts' rougeL in one C call (MT-RAG's response against its targets and passages)."""
    texts = _mtrag_texts()
    rng = random.Random(3)
    for i in range(0, len(texts), 3):
        pred = texts[i][0]
        targets = [t for _, t in texts[i : i + 3]] + ["", "\u212a"]
        fast, pure = both(rouge.rouge_l_texts, targets, pred)
        assert typed(fast) == typed(pure)
    for _ in range(300):
        pred = _random_text(rng, rng.randint(0, 140), UNICODE_VOCAB, 0.05)
        targets = [_random_text(rng, rng.randint(0, 140), UNICODE_VOCAB, 0.05) for _ in range(rng.randint(0, 4))]
        fast, pure = both(rouge.rouge_l_texts, targets, pred)
        assert typed(fast) == typed(pure)
    for special in SPECIAL:
        fast, pure = both(rouge.rouge_l_texts, SPECIAL, special)
        assert typed(fast) == typed(pure)


# ------------------------------------------------------------------ MT-RAG texts

AWKWARD = ["\u03a3", "\u0130", "\u0307", "\u212a", "\u2019", "\u00a0", "\x1c", "\ud800", "\U0001f600", "\r", "\n", "_"]
POOL = [chr(c) for c in range(0, 0x800)] + AWKWARD * 20 + [" a ", " an ", " the ", "a", "the", "The", "A."] * 20


def _pool_texts(seed: int, n: int, length: int = 14) -> Iterator[str]:
    rng = random.Random(seed)
    for _ in range(n):
        yield "".join(rng.choice(POOL) for _ in range(rng.randint(0, length)))


def test_extractiveness_cleaning_every_code_point() -> None:
    for start in range(0, 0x110000, 0x80):
        text = "".join(chr(c) + "A\r\n" + chr(c).upper() for c in range(start, start + 0x80))
        fast, pure = both(mtrag.clean_for_extractiveness, text)
        assert fast == pure, hex(start)
    for text in _pool_texts(11, 5000):
        fast, pure = both(mtrag.clean_for_extractiveness, text)
        assert fast == pure, repr(text)


def test_recall_counts_every_code_point_and_random_strings() -> None:
    """The C counts where every character is a word character or whitespace; the pure path otherwise."""
    declined = 0
    for c in list(range(0x30000)) + [0xE0001, 0x10FFFF]:  # the planes with assigned letters and marks
        pred = "The " + chr(c) + "a an" + chr(c) + " the U.S. cat"
        targets = ["the cat " + chr(c), chr(c) + "A", ""]
        fast, pure = both(run_algorithmic._recalls, pred, targets)
        assert typed(fast) == typed(pure), hex(c)
        declined += C.answer_overlaps(pred, targets) is None
    assert 0 < declined < 0x30000
    texts = list(_pool_texts(12, 6000))
    for i in range(0, len(texts) - 3, 3):
        fast, pure = both(run_algorithmic._recalls, texts[i], texts[i + 1 : i + 3])
        assert typed(fast) == typed(pure), texts[i : i + 3]


def test_drop_spaces_and_the_ascii_cleaning() -> None:
    """``drop_spaces`` is ``str.replace(" ", "")``; ASCII texts take the cleaning's table-only path."""
    rng = random.Random(14)
    ascii_pool = [chr(c) for c in range(128)] + [" ", " the ", "\r\n", "A."] * 8
    ascii_texts = ["".join(rng.choice(ascii_pool) for _ in range(rng.randint(0, 40))) for _ in range(4000)]
    special = ["", " ", "   ", "a b", " \U0001f600 x ", "\u0100 \u00e9 ", "\u00e9 a", "x" * 5000 + " " * 3000]
    for text in ascii_texts + list(_pool_texts(15, 4000)) + special:
        squeezed = C.drop_spaces(text)
        assert squeezed == text.replace(" ", "") and type(squeezed) is str, repr(text)
    for text in ascii_texts:
        fast, pure = both(mtrag.clean_for_extractiveness, text)
        assert fast == pure and type(fast) is str and fast.isascii(), repr(text)
    assert C.drop_spaces(type("S", (str,), {})("a b")) is None


def test_extractiveness_of_passages_with_and_without_spaces() -> None:
    """The space-free substring check of ``_extractiveness`` (a passage inside the response)."""
    texts = [t for pair in _mtrag_texts()[:400] for t in pair] + list(_pool_texts(16, 600, 30))
    rng = random.Random(17)
    for i in range(0, len(texts) - 4, 4):
        pred = texts[i]
        passages = [pred[: len(pred) // 2].replace(" ", ""), " ".join(pred.split()[1:4])] + texts[i + 1 : i + 4]
        rng.shuffle(passages)
        fast, pure = both(run_algorithmic._extractiveness, pred, passages, "reference", None)
        assert typed(fast) == typed(pure), (pred, passages)


def test_escape_hit_against_the_substring_searches() -> None:
    """The JSON readers' pre-check (``_io._escape_hit``) on every line of the JSON Lines data and on
    random texts of backslashes, ``u``, ``d``/``D`` and wide characters."""
    from rageval_min import _io

    rng = random.Random(18)
    alpha = ["\\", "u", "d", "D", "x", "\\u", "\\ud", "\\\\", "\u00e9", "\u2019", "\U0001f600"]
    texts = ["".join(rng.choice(alpha) for _ in range(rng.randint(0, 40))) for _ in range(20000)]
    for name in ("edge_cases.jsonl", "responses-10.jsonl"):
        with open(os.path.join(DATA, "mtrag", name), encoding="utf-8") as fh:
            texts += fh.read().splitlines()
    for text in texts:
        want = "\\ud" in text or "\\uD" in text
        fast, pure = both(_io._escape_hit, text)
        assert fast is want and pure is want, repr(text)
    assert C.escape_hit(type("S", (str,), {})("\\ud800")) is None


# --------------------------------------------- one-pass kernels (issue #27, second pass)

LATIN1 = [chr(c) for c in range(0x100)] + [" ", " a ", " the ", "A.", "don't", "\r\n", "\u00e9", "\u00c9"] * 16


def _latin1_texts(seed: int, n: int, length: int = 40) -> Iterator[str]:
    """Texts of one byte per character (the kernels' table-driven loops), ASCII or not."""
    rng = random.Random(seed)
    for _ in range(n):
        yield "".join(rng.choice(LATIN1) for _ in range(rng.randint(0, length)))


def test_extractiveness_counts_every_code_point() -> None:
    """``extractive_counts`` (cleaning, space-free substring, tokens and LCS in one call) against the
    pure path: each block of code points in the response and in the passages, upper and lower case."""
    declined = 0
    for start in range(0, 0x110000, 0x80):
        block = [chr(c) for c in range(start, start + 0x80)]
        pred = "The cat " + " ".join(block[:64]) + "\r\n sat " + "".join(block[64:]).upper()
        passages = ["".join(block[:64]), " ".join(block[64:]) + " cat", "the CAT sat", "", "  \t" + block[0]]
        fast, pure = both(run_algorithmic._extractiveness, pred, passages, "reference", None)
        assert typed(fast) == typed(pure), hex(start)
        declined += C.extractive_counts(pred, passages) is None
    assert 0 < declined < 100  # capital sigma, U+0130 and a few more take the pure path


@pytest.mark.parametrize("seed", range(3))
def test_one_byte_texts_take_the_table_loops(seed: int) -> None:
    """Recall, RougeL_stemFalse and Extractiveness_RougeL on texts of one byte per character."""
    texts = list(_latin1_texts(30 + seed, 3000)) + list(_pool_texts(40 + seed, 600, 40))
    rng = random.Random(50 + seed)
    for i in range(0, len(texts) - 4, 4):
        pred, others = texts[i], texts[i + 1 : i + 4]
        passages = others + [pred[rng.randrange(len(pred) + 1) :], pred.upper()]
        if i < 3000:  # one byte per character: the kernel never declines
            assert C.extractive_counts(pred, passages) is not None and C.lcs_texts(pred, others) is not None
        fast, pure = both(run_algorithmic._extractiveness, pred, passages, "reference", None)
        assert typed(fast) == typed(pure), (pred, passages)
        fast, pure = both(run_algorithmic._recalls, pred, others)
        assert typed(fast) == typed(pure), (pred, others)
        fast, pure = both(rouge_scorer.rouge_l_texts, others, pred)
        assert typed(fast) == typed(pure), (pred, others)


def test_brackets_is_the_two_counts() -> None:
    from rageval_min import _io

    rng = random.Random(19)
    alpha = ["[", "{", "]", "x", '"', "\u00e9", "\u2019", "\U0001f600"]
    texts = ["".join(rng.choice(alpha) for _ in range(rng.randint(0, 300))) for _ in range(3000)]
    for text in texts + ["", "[" * 1000]:
        want = text.count("[") + text.count("{")
        assert C.brackets(text) == want
        fast, pure = both(_io._brackets, text)
        assert fast == pure == want
    assert C.brackets(type("S", (str,), {})("[")) is None
