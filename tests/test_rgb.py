"""RGB family: conformance vectors and our own cases for the pure module."""

import hashlib
import json
import math
import os
import random
from pathlib import Path

import pytest
from conftest import RGB_FACT_KEYS, ROOT

from rageval_min import rgb
from rageval_min.errors import ScoringError

DATA = Path(__file__).parent / "data" / "rgb"


def _load(name):
    with open(DATA / name, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


LABEL_VECTORS = _load("label_vectors.jsonl")
AGG_VECTORS = _load("aggregate_vectors.jsonl")
MIX_VECTORS = _load("processdata_synthetic_vectors.jsonl")


def test_vector_files_match_readme_sha256():
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for name in ("label_vectors.jsonl", "aggregate_vectors.jsonl", "processdata_synthetic_vectors.jsonl"):
        digest = hashlib.sha256((DATA / name).read_bytes()).hexdigest()
        assert f"{digest}  {name}" in readme
    assert (len(LABEL_VECTORS), len(AGG_VECTORS), len(MIX_VECTORS)) == (30, 5, 16)


# ----------------------------------------------------------------- conformance


@pytest.mark.parametrize("vec", LABEL_VECTORS, ids=[v["name"] for v in LABEL_VECTORS])
def test_label_vectors(vec):
    got = rgb.label_prediction(vec["prediction"], vec["ground_truth"], dataset=vec["dataset"])
    assert got.label == vec["expected_labels"]
    assert all(type(x) is int for x in got.label)
    assert got.prediction == vec["expected_prediction_after_norm"]
    assert got.factlabel == vec["expected_factlabel"]
    assert type(got.factlabel) is int


@pytest.mark.parametrize("vec", AGG_VECTORS, ids=[v["name"] for v in AGG_VECTORS])
def test_aggregate_vectors(vec):
    got = rgb.score(vec["results"], dataset=vec["dataset"], noise_rate=vec["noise_rate"]).to_dict()
    expected = vec["expected_scores"]
    # same keys, order, values and JSON types (0 is not 0.0, 1 is not 1.0)
    assert list(got) == list(expected)
    assert json.dumps(got) == json.dumps(expected)
    assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]
    # the reference's _result.json text
    assert rgb.format_result_json(got) == json.dumps(expected, indent=4, ensure_ascii=False)


@pytest.mark.parametrize("vec", MIX_VECTORS, ids=[f"{v['name']}-{i}" for i, v in enumerate(MIX_VECTORS)])
def test_mix_vectors(vec):
    kwargs = dict(
        dataset=vec["dataset_arg"],
        noise_rate=vec["noise_rate"],
        passage_num=vec["passage_num"],
        correct_rate=vec["correct_rate"],
        seed=vec["seed"],
    )
    before = json.dumps(vec["instance"])
    if "expected_error" in vec:
        assert vec["expected_error"].startswith("ValueError")
        with pytest.raises(rgb.InstanceSkipped) as err:
            rgb.mix_documents(vec["instance"], **kwargs)
        assert "negative positive count at passage_num 5" in str(err.value)
        assert f"id={vec['instance']['id']}" in str(err.value)
    else:
        assert rgb.mix_documents(vec["instance"], **kwargs) == vec["expected_docs"]
    assert json.dumps(vec["instance"]) == before  # not mutated (the reference shuffles groups in place)


def test_mix_with_existing_generator_equals_seed():
    vec = next(v for v in MIX_VECTORS if v["name"] == "int_groups")
    r = random.Random()
    r.seed(2333)
    got = rgb.mix_documents(vec["instance"], dataset="en_int", noise_rate=0.0, passage_num=5, rng=r)
    assert got == vec["expected_docs"]


# ----------------------------------------------------------------- labels: own cases


def test_zh_space_removal_and_ground_truth_untouched():
    got = rgb.label_prediction("北京 是 首都", ["北京 是"], dataset="zh_refine")
    assert got.prediction == "北京是首都"
    assert got.label == [0]  # ground truth keeps its space
    # zh keyword split by a space still counts after the space is removed
    assert rgb.label_prediction("信息 不足", "x", dataset="zh").label == [-1]


def test_reject_beats_answer_and_bad_ground_truth_is_not_looked_at():
    # a non-string ground truth does not matter when the prediction is a rejection
    assert rgb.label_prediction("insufficient information", 42, dataset="en").label == [-1]
    assert rgb.label_prediction("信息不足", None, dataset="zh").label == [-1]


@pytest.mark.parametrize(
    "gt,what",
    [
        (42, "element 0 is int"),
        ([1.5], "element 0 is float"),
        (None, "element 0 is NoneType"),
        (["ok", ["a", 3]], "element 1 alternative 1 is int"),
        ({"a": 1}, "element 0 is dict"),
    ],
)
def test_non_string_ground_truth_skips_instance(gt, what):
    with pytest.raises(rgb.InstanceSkipped) as err:
        rgb.label_prediction("ok a", gt, dataset="en")
    assert what in str(err.value)
    assert isinstance(err.value, ScoringError)


def test_bad_alternative_raises_even_after_a_match():
    # the reference lower-cases every alternative before testing any
    with pytest.raises(rgb.InstanceSkipped):
        rgb.check_answer("abc", [["abc", None]])


def test_non_string_prediction_skips():
    with pytest.raises(rgb.InstanceSkipped):
        rgb.label_prediction(None, "a", dataset="zh")
    with pytest.raises(rgb.InstanceSkipped):
        rgb.label_prediction(3, "a", dataset="en")


def test_empty_inner_alternatives_is_not_found():
    assert rgb.check_answer("anything", [[]]) == [0]


def test_variant_reject_casefold():
    v = ["reject_casefold"]
    assert rgb.label_prediction("Insufficient Information.", "x", dataset="en", variants=v).label == [-1]
    # zh dataset: English keyword checked before the space removal
    got = rgb.label_prediction("Insufficient information", "x", dataset="zh", variants=v)
    assert got.label == [-1] and got.prediction == "Insufficientinformation"
    got = rgb.label_prediction("There are Factual Errors. 12人", ["12人"], dataset="zh_fact", variants=v)
    assert got.factlabel == 1 and got.label == [1]
    assert rgb.label_prediction("Insufficient information", "x", dataset="zh").label == [0]


def test_variant_match_casefold_nfkc():
    v = ["match_casefold_nfkc"]
    assert rgb.label_prediction("Straße", "STRASSE", dataset="en", variants=v).label == [1]
    assert rgb.label_prediction("答案是１２人", ["12人"], dataset="zh", variants=v).label == [1]
    assert rgb.label_prediction("答案是１２人", ["12人"], dataset="zh").label == [0]


def test_variant_zh_strip_unicode_space():
    v = ["zh_strip_unicode_space"]
    got = rgb.label_prediction("12\u3000人\t。\u00a0", ["12人"], dataset="zh", variants=v)
    assert got.prediction == "12人。" and got.label == [1]
    # no effect on en datasets
    assert rgb.label_prediction("a\u3000b", "a b", dataset="en", variants=v).prediction == "a\u3000b"


def test_unknown_variant_is_an_error():
    with pytest.raises(ScoringError, match="unknown rgb variant"):
        rgb.label_prediction("a", "a", dataset="en", variants=["nope"])


def test_ground_truth_of():
    assert rgb.ground_truth_of({"ans": "a", "answer": "b"}) == "a"
    assert rgb.ground_truth_of({"answer": ["b"]}) == ["b"]
    with pytest.raises(ScoringError, match="neither 'ans' nor 'answer'"):
        rgb.ground_truth_of({"prediction": "x"})


# ----------------------------------------------------------------- aggregates: own cases


def test_noise1_empty_label_is_defined_with_diagnostic():
    s = rgb.score([{"id": 7, "label": []}, {"id": 8, "label": [-1]}], dataset="en", noise_rate=1.0)
    assert (s.tt, s.nums, s.all_rate) == (1, 2, 0.5)
    assert any("id=7" in d and "label[0]" in d for d in s.diagnostics)


def test_empty_label_below_noise1_is_silent_and_not_counted():
    s = rgb.score([{"label": []}, {"label": [1]}], dataset="en", noise_rate=0.2)
    assert (s.tt, s.nums, s.diagnostics) == (1, 2, ())


def test_no_records():
    s = rgb.score([], dataset="en", noise_rate=0.4)
    assert s.to_dict() == {"all_rate": None, "noise_rate": 0.4, "tt": 0, "nums": 0}
    assert s.diagnostics == ("no scorable records: all_rate is null",)
    f = rgb.score([], dataset="zh_fact", noise_rate=0.0).to_dict()
    assert list(f) == RGB_FACT_KEYS
    assert f["fact_check_rate"] is None and f["correct_rate"] == 0 and type(f["correct_rate"]) is int


def test_correct_tt_quirk_and_variant():
    res = [
        {"label": [-1], "factlabel": 1},
        {"label": [], "factlabel": 1},
        {"label": [1], "factlabel": 1},
        {"label": [0], "factlabel": 1},
    ]
    s = rgb.score(res, dataset="en_fact", noise_rate=0.0)
    assert (s.fact_tt, s.correct_tt, s.correct_rate, s.fact_check_rate) == (4, 3, 0.75, 1.0)
    s = rgb.score(res, dataset="en_fact", noise_rate=0.0, variants=["fact_correct_requires_hit"])
    assert (s.correct_tt, s.correct_rate) == (1, 0.25)


def test_variant_noise1_reject_only():
    res = [{"label": [-1]}, {"label": [1]}, {"label": [0]}]
    assert rgb.score(res, dataset="en", noise_rate=1.0).tt == 2
    assert rgb.score(res, dataset="en", noise_rate=1.0, variants=["noise1_reject_only"]).tt == 1
    # no effect below noise 1
    assert rgb.score(res, dataset="en", noise_rate=0.8, variants=["noise1_reject_only"]).tt == 1


def test_non_fact_dataset_ignores_factlabel():
    s = rgb.score([{"label": [1]}], dataset="en_int", noise_rate=0.0)
    assert list(s.to_dict()) == ["all_rate", "noise_rate", "tt", "nums"]


@pytest.mark.parametrize(
    "rec,field",
    [
        ({"label": "1"}, "label"),
        ({"label": [2]}, "label"),
        ({"label": [True]}, "label"),
        ({"label": [1], "factlabel": None}, "factlabel"),
        ({"label": [1]}, "factlabel"),
        ({"id": 3}, "label"),
    ],
)
def test_bad_stored_labels_are_errors(rec, field):
    with pytest.raises(ScoringError) as err:
        rgb.score([rec], dataset="en_fact", noise_rate=0.0)
    assert err.value.field == field


def test_score_rejects_bad_noise_rate():
    with pytest.raises(ScoringError):
        rgb.score([], dataset="en", noise_rate="0.4")


# ----------------------------------------------------------------- mixer: own cases


INST = {
    "id": 9,
    "query": "q",
    "answer": "a",
    "positive": [f"p{i}" for i in range(30)],
    "negative": [f"n{i}" for i in range(30)],
}


def test_ceil_of_float_product():
    # 25 * 0.28 == 7.000000000000001 -> 8 negatives
    docs = rgb.mix_documents(INST, dataset="en", noise_rate=0.28, passage_num=25)
    assert sum(d.startswith("n") for d in docs) == 8 and len(docs) == 25


def test_default_branch_takes_first_items_and_one_shuffle():
    docs = rgb.mix_documents(INST, dataset="zh_refine", noise_rate=0.4, passage_num=5)
    assert sorted(docs) == ["n0", "n1", "p0", "p1", "p2"]
    expected = ["p0", "p1", "p2", "n0", "n1"]
    random.Random(2333).shuffle(expected)
    assert docs == expected


def test_passage_num_zero_gives_no_docs_in_every_branch():
    for ds in ("en", "en_int", "en_fact"):
        # even where processdata would fail (no groups, pos_num < 0), it is not called
        assert rgb.mix_documents({"id": 1}, dataset=ds, noise_rate=0.8, passage_num=0, correct_rate=0.4) == []


def test_seed_option_changes_order():
    a = rgb.mix_documents(INST, dataset="en", noise_rate=0.4, passage_num=10)
    b = rgb.mix_documents(INST, dataset="en", noise_rate=0.4, passage_num=10, seed=1)
    assert sorted(a) == sorted(b) and a != b


def test_int_noise1_not_special_cased_and_never_truncated():
    inst = {"id": 2, "positive": [["a0", "a1"], ["b0"], ["c0"]], "negative": ["n0", "n1", "n2", "n3"]}
    d08 = rgb.mix_documents(inst, dataset="zh_int", noise_rate=0.8, passage_num=5)
    d10 = rgb.mix_documents(inst, dataset="zh_int", noise_rate=1.0, passage_num=5)
    assert d08 == d10 and len([d for d in d10 if not d.startswith("n")]) == 3
    # 3 groups, passage_num 2: one per group, no negative
    d = rgb.mix_documents(inst, dataset="en_int", noise_rate=0.0, passage_num=2)
    assert len(d) == 3 and not any(x.startswith("n") for x in d)


def test_int_no_groups():
    inst = {"id": 4, "positive": [], "negative": ["n0", "n1"]}
    assert sorted(rgb.mix_documents(inst, dataset="en_int", noise_rate=1.0, passage_num=2)) == ["n0", "n1"]
    with pytest.raises(rgb.InstanceSkipped, match="no groups"):
        rgb.mix_documents(inst, dataset="en_int", noise_rate=0.5, passage_num=2)


@pytest.mark.parametrize(
    "inst,ds,match",
    [
        ({"id": 1, "negative": []}, "en", "no 'positive'"),
        ({"id": 1, "positive": "abc", "negative": []}, "en", "not a list"),
        ({"id": 1, "positive": [["a"], []], "negative": []}, "en_int", "group 1 is empty"),
        ({"id": 1, "positive": ["a", "b"], "negative": []}, "en_int", "group 0 is str"),
        ({"id": 1, "positive": ["c0", "c1"], "positive_wrong": ["w0"], "negative": ["n"]}, "en_fact", "shorter"),
        ({"id": 1, "positive": ["c0"], "negative": ["n"]}, "en_fact", "no 'positive_wrong'"),
        ({"id": 1, "positive": [1, 2], "negative": []}, "en", "not a string"),
    ],
)
def test_mix_skip_paths(inst, ds, match):
    with pytest.raises(rgb.InstanceSkipped, match=match) as err:
        rgb.mix_documents(inst, dataset=ds, noise_rate=0.0, passage_num=2)
    assert "id=1" in str(err.value)


def test_fact_noise1_without_correct_rate_is_all_negatives():
    inst = {"id": 1, "positive": ["c0"], "negative": ["n0", "n1", "n2"]}  # positive_wrong never read
    assert sorted(rgb.mix_documents(inst, dataset="zh_fact", noise_rate=1.0, passage_num=3)) == ["n0", "n1", "n2"]


@pytest.mark.parametrize(
    "kw",
    [
        dict(noise_rate=1.2),
        dict(noise_rate=-0.1),
        dict(noise_rate=math.nan),
        dict(correct_rate=2),
        dict(passage_num=-1),
        dict(passage_num=2.0),
        dict(noise_rate=True),
    ],
)
def test_mix_bad_parameters(kw):
    args = dict(dataset="en", noise_rate=0.2, passage_num=5)
    args.update(kw)
    with pytest.raises(ScoringError) as err:
        rgb.mix_documents(INST, **args)
    assert not isinstance(err.value, rgb.InstanceSkipped)


# ----------------------------------------------------------------- judges


def test_judge_prompts_builtin_and_template():
    p = rgb.build_reject_judge_prompt("谁赢了？", "信息不足")
    assert p.rstrip().endswith("Verdict:") and "Question: 谁赢了？\nAnswer: 信息不足" in p
    p = rgb.build_fact_judge_prompt("There are factual errors.")
    assert "Answer: There are factual errors.\nVerdict:" in p
    # literal one-pass replacement; other braces untouched; substituted text not rescanned
    t = "{QUESTION}|{ANSWER}|{x}|{}"
    assert rgb.build_reject_judge_prompt("{ANSWER}", "b", template=t) == "{ANSWER}|b|{x}|{}"
    assert rgb.build_fact_judge_prompt("b", template="R: {ANSWER} Q: {QUESTION}") == "R: b Q: "
    with pytest.raises(ScoringError, match=r"\{QUESTION\}"):
        rgb.build_reject_judge_prompt("q", "a", template="{ANSWER}")
    with pytest.raises(ScoringError, match=r"\{ANSWER\}"):
        rgb.build_fact_judge_prompt("a", template="nothing")
    assert rgb.template_id(None) == "builtin"
    assert rgb.template_id("x") == hashlib.sha256(b"x").hexdigest()[:12]


def test_builtin_demonstrations_parse_as_intended():
    # every demonstration verdict in our own prompts parses to what it says
    for line in rgb.BUILTIN_REJECT_TEMPLATE.splitlines():
        if line.startswith("Verdict: "):
            assert rgb.parse_reject_judgement(line) == ("not addressed" in line)
    verdicts = [ln for ln in rgb.BUILTIN_FACT_TEMPLATE.splitlines() if ln.startswith("Verdict: ")]
    assert [rgb.parse_fact_judgement(v) for v in verdicts] == [True, False, True, False, False]


def test_parse_rules():
    assert rgb.parse_reject_judgement("... is not addressed by ...")
    assert not rgb.parse_reject_judgement("NOT ADDRESSED")
    assert rgb.parse_fact_judgement("The model has identified it")
    assert rgb.parse_fact_judgement("Yesterday")  # quirk kept
    assert not rgb.parse_fact_judgement("yes, it has Identified")
    with pytest.raises(ScoringError):
        rgb.parse_fact_judgement(None)


def test_judged_scores():
    recs = [
        {"id": 0, "label": [-1], "evaluation": "not addressed"},
        {"id": 1, "label": [1], "evaluation": "addressed"},
        {"id": 2, "label": [0], "evaluation": "It is not addressed."},
    ]
    r = rgb.score_reject_judged(recs)
    assert r.to_dict() == {"reject_rate": 2 / 3, "all_rate": 1 / 3, "tt": 1, "rejecttt": 2, "nums": 3}
    recs = [
        {"label": [1], "evaluation": "Yes"},
        {"label": [-1], "evaluation": "has identified"},
        {"label": [1], "evaluation": "NO"},
        {"label": [1, 0], "evaluation": "Yes"},
    ]
    f = rgb.score_fact_judged(recs, noise_rate=0.2).to_dict()
    assert list(f) == ["reject_rate", "all_rate", "correct_rate", "tt", "rejecttt", "correct_tt", "nums", "noise_rate"]
    assert f == {
        "reject_rate": 0.75,
        "all_rate": 0.5,
        "correct_rate": 1 / 3,
        "tt": 2,
        "rejecttt": 3,
        "correct_tt": 1,
        "nums": 4,
        "noise_rate": 0.2,
    }
    z = rgb.score_fact_judged([], noise_rate=0.0)
    assert z.reject_rate is None and z.correct_rate == 0 and type(z.correct_rate) is int and z.diagnostics
    assert rgb.score_reject_judged([]).to_dict()["all_rate"] is None
    with pytest.raises(ScoringError, match="evaluation"):
        rgb.score_reject_judged([{"id": 5, "label": [1]}])
    with pytest.raises(ScoringError, match="id=5"):
        rgb.score_reject_judged([{"id": 5, "label": [1], "evaluation": 3}])


def test_answer_prompt():
    system, user = rgb.build_answer_prompt("Who?", ["d1", "d2"], dataset="en_fact")
    assert "insufficient information" in system and "factual errors" in system
    assert user == "Documents:\nd1\nd2\n\nQuestion: Who?"
    system, user = rgb.build_answer_prompt("谁？", ["文1"], dataset="zh")
    assert "信息不足" in system and "事实性错误" in system and user.endswith("问题：谁？")
    with pytest.raises(ScoringError):
        rgb.build_answer_prompt("q", [], dataset="fr")


# ----------------------------------------------------------------- file names and report table


def test_parse_prediction_filename():
    r = rgb.parse_prediction_filename("prediction_zh_int_Qwen-7B_chat_temp0.2_noise1.0_passage10_correct0.0.json")
    assert r == rgb.RunName("zh_int", "Qwen-7B_chat", 0.2, 1.0, 10, 0.0)
    r = rgb.parse_prediction_filename("x/prediction_en_chatgpt_temp0.7_noise0.4_passage5_correct0.0_result.json")
    assert (r.dataset, r.noise_rate) == ("en", 0.4)
    with pytest.raises(ScoringError, match="file name"):
        rgb.parse_prediction_filename("preds.jsonl")


def test_abilities_table():
    def sc(ds, noise, all_rate, **kw):
        s = rgb.score([{"label": [1], "factlabel": 1}] * 0, dataset=ds, noise_rate=noise)
        return s._replace(all_rate=all_rate, **kw)

    runs = [
        (rgb.RunName("en", "m", 0.2, 0.4, 5, 0.0), sc("en", 0.4, 0.9)),
        (rgb.RunName("en", "m", 0.2, 0.0, 5, 0.0), sc("en", 0.0, 1.0)),
        (rgb.RunName("en", "m", 0.2, 1.0, 5, 0.0), sc("en", 1.0, 0.3)),
        (rgb.RunName("en_int", "m", 0.2, 0.2, 5, 0.0), sc("en_int", 0.2, 0.5)),
        (rgb.RunName("en_fact", "m", 0.2, 0.0, 5, 0.0), sc("en_fact", 0.0, 0.1, fact_check_rate=0.2, correct_rate=0.5)),
        (rgb.RunName("zh", "m2", 0.2, 0.0, 5, 0.0), sc("zh", 0.0, 0.7)),
    ]
    t = rgb.abilities_table(runs)
    assert t["m"]["en"]["noise_robustness"] == {"0.0": 1.0, "0.4": 0.9}
    assert list(t["m"]["en"]["noise_robustness"]) == ["0.0", "0.4"]
    assert t["m"]["en"]["negative_rejection"] == {"1.0": 0.3}
    assert t["m"]["en"]["information_integration"] == {"0.2": 0.5}
    assert t["m"]["en"]["counterfactual_robustness"] == {
        "noise0.0_correct0.0": {"accuracy": 0.1, "error_detection_rate": 0.2, "error_correction_rate": 0.5}
    }
    assert t["m2"]["zh"]["noise_robustness"] == {"0.0": 0.7}
    # the same dataset at two passage counts is keyed apart
    runs.append((rgb.RunName("en", "m", 0.2, 0.4, 10, 0.0), sc("en", 0.4, 0.8)))
    t = rgb.abilities_table(runs)
    assert t["m"]["en"]["noise_robustness"] == {"0.0@passage5": 1.0, "0.4@passage5": 0.9, "0.4@passage10": 0.8}
    rows = rgb.ability_rows(t)
    assert ("m", "en", "negative rejection", "noise 1.0@passage5", 0.3) in rows
    assert ("m", "en", "counterfactual: error correction rate", "noise0.0_correct0.0", 0.5) in rows


def test_signature_names_variants():
    s = rgb.signature(variants=["reject_casefold"], params=[("dataset", "zh")])
    assert "|family=rgb|ref=chen700564/RGB@65ec39e|variants=reject_casefold|dataset=zh" in s
    assert "variants=none" in rgb.signature()


# --------------------------------------------------------------------------- contract: item rows and accumulators


def _through_json(acc):
    from rageval_min._contract import accumulator_from_state

    return accumulator_from_state(json.loads(json.dumps(acc.to_state())))


def _split_merge(cls, params, rows, cuts, skips=()):
    """Accumulate ``rows`` in the parts cut at ``cuts`` (skip notes before row i), merge in order."""
    bounds = [0] + list(cuts) + [len(rows)]
    merged = None
    for a, b in zip(bounds, bounds[1:]):
        acc = cls(**params)
        for i in range(a, b):
            if i in skips:
                acc.skip(f"note before row {i}")
            acc.add(rows[i])
        acc = _through_json(acc)
        merged = acc if merged is None else merged.merge(acc)
    return merged.finalize()


def _one_pass(cls, params, rows, skips=()):
    acc = cls(**params)
    for i, row in enumerate(rows):
        if i in skips:
            acc.skip(f"note before row {i}")
        acc.add(row)
    return acc.finalize()


def test_score_accumulator_merges_exactly_with_noise1_empty_labels_and_skips():
    params = dict(dataset="en_fact", noise_rate=1.0, use_labels=True, variants=[], judged=None)
    labels = [([], 1, None), ([-1], 1, 7), ([1, 0], 0, 8), ([], 0, None), ([1], 1, None), ([0], 0, 9)]
    rows = []
    for i, (label, fl, rid) in enumerate(labels):
        rows.append(rgb.label_row(rid, label, fl, dataset="en_fact", noise_rate=1.0))
        if i == 2:
            rows.append(rgb.skipped_row(10, "dropped"))
    one = _one_pass(rgb.ScoreAccumulator, params, rows, skips={3})
    for cuts in ([], [1], [2, 5], [1, 2, 3, 4, 5, 6]):
        assert _split_merge(rgb.ScoreAccumulator, params, rows, cuts, skips={3}) == one, cuts
    assert (
        one.result
        == rgb.score(
            [{"label": lab, "factlabel": fl, **({"id": rid} if rid is not None else {})} for lab, fl, rid in labels],
            dataset="en_fact",
            noise_rate=1.0,
        ).to_dict()
    )
    # "record N" counts the scored records before it, across parts
    assert [d for d in one.diagnostics if "label is []" in d] == [
        "record 1: label is [] at noise_rate 1 (the reference fails on label[0]); not counted",
        "record 4: label is [] at noise_rate 1 (the reference fails on label[0]); not counted",
    ]
    assert one.diagnostics[0] == "note before row 3"


@pytest.mark.parametrize("judged", ["reject", "fact"])
def test_judged_accumulators_merge_exactly(judged):
    evals = ["not addressed", "Yes", "has identified", "addressed", "No", "Yesterday"]
    labels = [[1], [0], [1, 1], [-1], [], [1]]
    rows = [
        rgb.judged_row(i, lab, ev, judged=judged, judge_template="builtin" if i % 2 else "abc123")
        for i, (lab, ev) in enumerate(zip(labels, evals))
    ]
    rows.insert(3, rgb.skipped_row(99, "dropped", judged=judged))
    for cls, params in (
        (rgb.ScoreAccumulator, dict(dataset="en", noise_rate=0.2, use_labels=True, variants=[], judged=judged)),
        (
            rgb.JudgeAccumulator,
            dict(dataset="en", noise_rate=0.2, judged=judged, judge_model="m", use_labels=True, variants=[]),
        ),
    ):
        one = _one_pass(cls, params, rows)
        for cuts in ([], [3], [1, 4], list(range(1, len(rows)))):
            assert _split_merge(cls, params, rows, cuts) == one
        assert "judge_template=abc123+builtin" in one.signature
        assert one.signature.endswith("judge_model=m") == (cls is rgb.JudgeAccumulator)
    recs = [{"id": i, "label": lab, "evaluation": ev} for i, (lab, ev) in enumerate(zip(labels, evals))]
    ref = rgb.score_reject_judged(recs) if judged == "reject" else rgb.score_fact_judged(recs, noise_rate=0.2)
    assert one.result == ref.to_dict()
    assert all(type(r[k]) is int for r in rows if r["skipped"] is None for k in ("correct", "all_rate", "reject_rate"))


def test_merge_refuses_other_judged_options():
    a = rgb.ScoreAccumulator(dataset="en", noise_rate=0.2, judged="reject")
    b = rgb.ScoreAccumulator(dataset="en", noise_rate=0.2, judged="fact")
    with pytest.raises(ScoringError, match="different options"):
        a.merge(b)


def test_score_item_and_metric_names():
    row = rgb.score_item({"id": "q", "ans": ["Ada", "Bob"], "prediction": "ada and bob"}, dataset="en", noise_rate=0.4)
    assert row == {
        "id": "q",
        "label": [1, 1],
        "correct": 1,
        "rejected": 0,
        "all_rate": 1,
        "fact_check_rate": None,
        "correct_rate": None,
        "skipped": None,
    }
    skipped = rgb.score_item({"id": "r", "ans": 3, "prediction": "3"}, dataset="en", noise_rate=0.4)
    assert skipped["skipped"] and skipped["all_rate"] is None
    assert rgb.ScoreAccumulator.metric_names(dataset="zh_fact") == RGB_FACT_KEYS
    assert rgb.JudgeAccumulator.metric_names(judged="reject") == ["reject_rate", "all_rate", "tt", "rejecttt", "nums"]


@pytest.mark.parametrize("value", [float("inf"), float("nan"), -0.1, 1.5, "0.4", True])
def test_check_noise_rate(value):
    with pytest.raises(ScoringError, match=r"\[0, 1\]"):
        rgb.check_noise_rate(value)


# --------------------------------------------------------------------------- metric and input declarations

#: ScoreAccumulator's DIRECTIONS literal before the declarations (RATES was empty: inherited).
_OLD_DIRECTIONS = {
    "correct": "higher",
    "all_rate": "higher",
    "fact_check_rate": "higher",
    "correct_rate": "higher",
    "reject_rate": "higher",
}


def test_declarations_are_well_formed_and_give_the_old_tables():
    from rageval_min import _metrics
    from rageval_min.rgb import abilities

    assert dict(rgb.ScoreAccumulator.DIRECTIONS) == _OLD_DIRECTIONS
    assert dict(rgb.ScoreAccumulator.RATES) == {}
    # rgb judge rows never carry fact_check_rate (judged rows have no such field); the rest is the inherited table
    assert dict(rgb.JudgeAccumulator.DIRECTIONS) == {k: v for k, v in _OLD_DIRECTIONS.items() if k != "fact_check_rate"}
    assert dict(rgb.JudgeAccumulator.RATES) == {}
    for cls in (rgb.ScoreAccumulator, rgb.JudgeAccumulator):
        _metrics.check_declarations(cls.METRICS, cls.INPUTS)
        assert cls.INPUTS and all(m.meaning for m in cls.METRICS)
    _metrics.check_declarations(abilities.REPORT_METRICS)


def _gold(name):
    return os.path.join(ROOT, "gold_samples", "rgb", name)


def _assert_declared(metrics, report, rows):
    from rageval_min import _metrics

    assert rows and report.metrics
    for key in report.metrics:
        assert _metrics.find_metric(metrics, key) is not None, key
    per_item = {m.name for m in metrics if m.per_item}
    for row in rows:
        for key, value in row.items():
            if key != "id" and isinstance(value, (int, float)) and not isinstance(value, bool):
                assert key in per_item, key


_GOLD_RUNS = (("en", "0.4"), ("en", "1.0"), ("en_fact", "0.0"), ("zh", "0.0"), ("zh_int", "0.2"))


@pytest.mark.parametrize("ds, nr", _GOLD_RUNS)
def test_every_metric_of_a_gold_score_report_is_declared(ds, nr):
    rows = []
    report = rgb.score_file(
        _gold(f"prediction_{ds}_demo_temp0.2_noise{nr}_passage5_correct0.0.json"), on_item=rows.append
    )
    _assert_declared(rgb.ScoreAccumulator.METRICS, report, rows)


@pytest.mark.parametrize("judged, ds, nr", [("reject", "en", 1.0), ("fact", "en_fact", 0.0)])
def test_every_metric_of_a_gold_judged_report_is_declared(judged, ds, nr):
    from rageval_min import judges
    from rageval_min.rgb import judge

    rows = []
    report = rgb.score_file(
        _gold(f"expected_judged_{judged}.jsonl"),
        dataset=ds,
        noise_rate=nr,
        judged=judged,
        use_labels=True,
        on_item=rows.append,
    )
    _assert_declared(rgb.ScoreAccumulator.METRICS, report, rows)
    path = _gold(f"prediction_{ds}_demo_temp0.2_noise{nr}_passage5_correct0.0.json")
    records, runner = judge.judge_file(
        path,
        judged=judged,
        dataset=ds,
        make_runner=lambda: judges.JudgeRunner(
            judges.judge_from_spec("replay:" + _gold(f"judge_cache_{judged}.jsonl"))
        ),
    )
    rows = []
    report = judge.score_judge_run(
        records, runner, path=path, dataset=ds, noise_rate=nr, judged=judged, on_item=rows.append
    )
    assert report.metrics["judge_cache_hits"] + report.metrics["judge_calls"] > 0
    _assert_declared(rgb.JudgeAccumulator.METRICS, report, rows)


def test_every_metric_of_the_gold_rgb_report_is_declared():
    from rageval_min import _metrics
    from rageval_min.rgb import abilities

    files = sorted(
        _gold(n) for n in os.listdir(_gold("")) if n.startswith("prediction_") and n.endswith("_correct0.0.json")
    )
    report = rgb.report_files(files)
    assert len(report.metrics) > 20
    for key in report.metrics:
        assert _metrics.find_metric(abilities.REPORT_METRICS, key) is not None, key
