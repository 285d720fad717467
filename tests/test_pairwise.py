"""pairwise (DevBench SubEval): conformance on the shipped runs and the synthetic run."""

import csv
import io
import json
import os

import pytest
from conftest import DATA, need

from rageval_min import pairwise as pw
from rageval_min._xlsx import read_xlsx_rows
from rageval_min.errors import ScoringError

PW = os.path.join(DATA, "pairwise")
RUN35 = os.path.join(PW, "output", "DevBench_projects_example_infer_input_2680_record0_gpt-3.5-turbo-1106_2")
RUN4 = os.path.join(PW, "output", "DevBench_projects_example_infer_input_2680_record0_gpt-4-1106-preview_2")
SYN = os.path.join(PW, "synthetic", "nopt2")
SYNRUN = os.path.join(SYN, "synthetic_meta_infer_input_2680_record0_fakejudge_2")
EXAMPLE = os.path.join(PW, "examples", "DevBench_projects_example.xlsx")

RUNS = {
    "gpt35": (
        os.path.join(RUN35, "record_gpt-3.5-turbo-1106_2.tsv"),
        os.path.join(PW, "derived", "expected_values_DevBench_example_gpt-3.5-turbo-1106_judge.json"),
        RUN35,
    ),
    "gpt4": (
        os.path.join(RUN4, "record_gpt-4-1106-preview_2.tsv"),
        os.path.join(PW, "derived", "expected_values_DevBench_example_gpt-4-1106-preview_judge.json"),
        RUN4,
    ),
    "synthetic": (os.path.join(SYNRUN, "record_fakejudge_2.tsv"), os.path.join(SYNRUN, "expected_values.json"), SYNRUN),
}


def _load(name):
    record, expected, _ = RUNS[name]
    with open(expected, encoding="utf-8") as fh:
        exp = json.load(fh)
    recs = [r for _, r in pw.read_table(record)]
    return recs, exp


def _as_map(table):
    return {row[0]: row[1:] for row in table["rows"]}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_counts_and_log_lines_match_reference(name):
    recs, exp = _load(name)
    res = pw.score(recs, nopt=2, refm=exp["refm"])
    assert res.result["judge_column"] == exp["judge_column"]
    assert pw.log_lines(res.result["counts"]) == exp["log_lines"]


@pytest.mark.parametrize("name", sorted(RUNS))
def test_old_version_tables_bit_exact(name):
    recs, exp = _load(name)
    res = pw.score(recs, nopt=2, refm=exp["refm"])
    for table in ("win+halfdraw", "win+bothgood"):
        got, want = res.result["old_version"][table], exp["old_version"][table]
        assert got["columns"] == want["columns"]
        assert _as_map(got) == _as_map(want)
        # emitted in sorted model order (the reference order depends on the hash seed)
        assert [r[0] for r in got["rows"]] == sorted(r[0] for r in want["rows"])
        for row in got["rows"]:
            assert all(type(v) is float for v in row[1:])


@pytest.mark.parametrize("name", ["gpt35", "synthetic"])
def test_new_version_rates_exact_with_int_zero(name):
    recs, exp = _load(name)
    res = pw.score(recs, nopt=2, refm=exp["refm"])
    for key in ("with_tie", "without_tie"):
        got, want = res.result["new_version"][key], exp["new_version"][key]
        assert list(got) == sorted(want)
        assert dict(got) == want
        assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in want.items()}
    assert res.diagnostics == []


def test_gpt4_run_new_version_defined_where_reference_asserts():
    recs, exp = _load("gpt4")
    assert isinstance(exp["new_version"], str) and "AssertionError" in exp["new_version"]
    res = pw.score(recs, nopt=2, refm=exp["refm"])
    assert any("no inconsistent rows" in d for d in res.diagnostics)
    assert dict(res.result["new_version"]["with_tie"]) == {
        "faithfulness;gpt-3.5-turbo-1106;gpt-4-0125-preview": 0.0,
        "faithfulness;gpt-4-0125-preview;gpt-3.5-turbo-1106": 1.0,
        "general;gpt-3.5-turbo-1106;gpt-4-0125-preview": 0.0,
        "general;gpt-4-0125-preview;gpt-3.5-turbo-1106": 1.0,
    }


@pytest.mark.parametrize("name", sorted(RUNS))
def test_shipped_xlsx_tables_equal_our_float32_values(name):
    recs, exp = _load(name)
    res = pw.score(recs, nopt=2, refm=exp["refm"])
    rundir = RUNS[name][2]
    for table in ("win+halfdraw", "win+bothgood"):
        rows = read_xlsx_rows(os.path.join(rundir, table + ".xlsx"))
        assert rows[0] == res.result["old_version"][table]["columns"]
        shipped = {r[0]: [float(v) for v in r[1:]] for r in rows[1:]}
        ours = {m: [float("%.16g" % v) for v in vals] for m, vals in _as_map(res.result["old_version"][table]).items()}
        assert ours == shipped


@pytest.mark.parametrize("name", ["gpt35", "synthetic"])
def test_shipped_new_version_csvs_as_maps(name):
    recs, exp = _load(name)
    res = pw.score(recs, nopt=2, refm=exp["refm"])
    rundir = RUNS[name][2]
    for key, head in (("with_tie", "WinRateWithTie"), ("without_tie", "WinRateWithoutTie")):
        with open(os.path.join(rundir, f"win_rate_{key}.csv"), encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == ["Metric;Model", head]
        assert {k: float(v) for k, v in rows[1:]} == dict(res.result["new_version"][key])
        assert len(rows) - 1 == len(res.result["new_version"][key])


@pytest.mark.parametrize("name", ["gpt35", "synthetic"])
def test_consistency_partitions_match_shipped_tsvs(name):
    recs, exp = _load(name)
    res = pw.score(recs, nopt=2, refm=exp["refm"])
    rundir = RUNS[name][2]
    for fname, rows in (("consistent_cmp.tsv", res.consistent_rows), ("inconsistent_cmp.tsv", res.inconsistent_rows)):
        shipped = [r for _, r in pw.read_table(os.path.join(rundir, fname))]
        assert [(r["cmp_index"], r["extracted"]) for r in rows] == [(r["cmp_index"], r["extracted"]) for r in shipped]
        assert [dict(r) for r in rows] == shipped


def test_synthetic_run_exercises_quirks():
    recs, _ = _load("synthetic")
    res = pw.score(recs, nopt=2, refm="ref", extras=["unparseable_share"])
    c = res.result["counts"]
    assert (c["total"], c["failed"], c["non_exact"], c["extracted"], c["consistent"]) == (144, 1, 104, 96, 60)
    assert res.result["unparseable_share"] == {"unparseable": 7, "answered": 103, "share": 7 / 103}
    # 选择： outputs and first-match-wins are in the extracted set
    by_idx = {r["cmp_index"]: r["extracted"] for r in res.consistent_rows + res.inconsistent_rows}
    texts = {r["cmp_index"]: r["fakejudge"] for r in recs}
    assert any(texts[k].startswith("选择：") for k in by_idx)
    later = [k for k, t in texts.items() if t.count("Choice: ") >= 2 and k in by_idx]
    assert later and all(by_idx[k] == pw.extract_choice(texts[k]) for k in later)


# --------------------------------------------------------------------------- construction


def test_dual_construction_reproduces_synthetic_infer_input_byte_for_byte():
    rows = [r for _, r in pw.read_table(os.path.join(SYN, "synthetic_meta.xlsx"))]
    comps = pw.build_comparisons(rows, refm="ref", models=["m1", "m2", "m3", "ref"])
    buf = io.StringIO()
    pw.infer_input_tsv(comps, buf)
    with open(os.path.join(SYN, "synthetic_meta_infer_input_2680.tsv"), encoding="utf-8", newline="") as fh:
        assert buf.getvalue() == fh.read()
    assert sum(c.exact_match for c in comps) == 40


def test_construction_from_example_xlsx_matches_shipped_record():
    rows = [r for _, r in pw.read_table(EXAMPLE)]
    record = [r for _, r in pw.read_table(RUNS["gpt35"][0])]
    models = []
    for r in record:
        m = r["B"] if r["A"] == "gpt-3.5-turbo-1106" else r["A"]
        if m not in models:
            models.append(m)
    comps = pw.build_comparisons(rows, refm="gpt-3.5-turbo-1106", models=models)
    # the reference writes non-EM rows first, EM rows last
    ordered = [c for c in comps if not c.exact_match] + [c for c in comps if c.exact_match]
    assert len(ordered) == len(record) == 80
    for c, r in zip(ordered, record):
        for k in pw.RECORD_COLUMNS:
            assert ("" if getattr(c, k) is None else getattr(c, k)) == r[k], (c.cmp_index, k)
        assert c.exact_match == (r["gpt-3.5-turbo-1106"] == "EM")


def test_default_models_exclude_refm_in_column_order():
    rows = [r for _, r in pw.read_table(EXAMPLE)]
    comps = pw.build_comparisons(rows, refm="gpt-3.5-turbo-1106")
    assert len(comps) == 9 * 4 * 2
    assert comps[0].cmp_index == "idcenter_uml_class-general;gpt-3.5-turbo-1106;codellama-7b-instruct"
    assert comps[1].cmp_index == "idcenter_uml_class-general;codellama-7b-instruct;gpt-3.5-turbo-1106"
    assert not any(c.exact_match for c in comps)


def test_random_mode_follows_numpy_legacy_generator():
    # np.random.seed(2680); [np.random.random() < 0.5 for _ in range(8)] (numpy 2.4.6)
    rng = pw.legacy_numpy_random(2680)
    assert [rng.random() for _ in range(4)] == [
        0.008946134271974326,
        0.9673514412750607,
        0.5122443732189818,
        0.6986705973852069,
    ]
    rows = [
        {
            "question": "q",
            "index": f"i{k}-general",
            "evaluating_guidance": "g",
            "task": "t-general",
            "reference_answer": "",
            "answer-r": "a",
            "answer-m": "b",
        }
        for k in range(8)
    ]
    comps = pw.build_comparisons(rows, refm="r", models=["m", "m"], mode="random")
    normal = [c.A == "r" for c in comps]
    expected = [True, False, False, False, False, False, True, False]
    assert normal == expected + expected  # the draw sequence restarts for every model


def test_random_mode_cross_checked_with_numpy_when_available():
    np = need("numpy", "dev", "the test extra brings numpy")
    for seed in (0, 1, 2680, 4294967295):
        np.random.seed(seed)
        want = [np.random.random() for _ in range(1000)]
        rng = pw.legacy_numpy_random(seed)
        assert [rng.random() for _ in range(1000)] == want


def test_negative_seed_swaps_model_and_refm():
    rows = [
        {
            "question": "q",
            "index": "i-general",
            "evaluating_guidance": "g",
            "reference_answer": None,
            "answer-r": "a",
            "answer-m": "b",
        }
    ]
    comps = pw.build_comparisons(rows, refm="r", models=["m"], seed=-3)
    assert [c.cmp_index for c in comps] == ["i-general;m;r", "i-general;r;m"]


def test_missing_answer_becomes_nan_text_and_strip_decides_em():
    rows = [
        {
            "question": "  q  ",
            "index": "i-general",
            "evaluating_guidance": None,
            "reference_answer": None,
            "answer-r": None,
            "answer-m": "NA",
            "answer-k": " same ",
            "answer-j": "same",
        }
    ]
    comps = pw.build_comparisons(rows, refm="r", models=["m"])
    assert comps[0].question == "q"
    assert comps[0].answer1 == comps[0].answer2 == "nan" and comps[0].exact_match
    comps = pw.build_comparisons(rows, refm="j", models=["k"])
    assert comps[0].exact_match


def test_construction_errors_name_the_problem():
    rows = [
        {
            "question": "q",
            "index": "i;x-general",
            "evaluating_guidance": "g",
            "reference_answer": "",
            "answer-r": "a",
            "answer-m": "b",
        }
    ]
    with pytest.raises(ScoringError, match="answer-zz"):
        pw.build_comparisons(rows, refm="r", models=["zz"])
    with pytest.raises(ScoringError, match="answer-nope"):
        pw.build_comparisons(rows, refm="nope")
    with pytest.raises(ScoringError, match=r"index=i;x-general.*strict_ids"):
        pw.build_comparisons(rows, refm="r", strict_ids=True)
    with pytest.raises(ScoringError, match="'question' column"):
        pw.build_comparisons([{"index": "i"}], refm="r")


# --------------------------------------------------------------------------- prompts


def _comp(**kw):
    base = dict(
        cmp_index="i-general;r;m",
        question="Q?",
        answer1="one",
        answer2="two",
        A="r",
        B="m",
        reference_answer=None,
        evaluating_guidance="be strict",
        task="t-general",
        exact_match=False,
    )
    base.update(kw)
    return pw.Comparison(**base)


@pytest.mark.parametrize("nopt,letters", [(2, "AB"), (3, "ABC"), (4, "ABCD")])
def test_builtin_prompt_has_options_and_output_format(nopt, letters):
    text = pw.render_prompt(_comp(), nopt=nopt)
    for letter in "ABCD":
        assert (f"\n{letter}: " in text) == (letter in letters)
    assert "Choice: <one letter>" in text
    assert "be strict" in text and "<Evaluating Guidance>" not in text
    assert text.index("<<<\nQ?\n>>>") < text.index("<<<\none\n>>>") < text.index("<<<\ntwo\n>>>")
    assert "Reference answer" not in text


def test_prompt_reference_quirks():
    text = pw.render_prompt(_comp(evaluating_guidance="NA", reference_answer="the ref", question="", answer2=None))
    assert "<Evaluating Guidance>" in text  # left in place when guidance is missing
    assert "Reference answer" in text
    assert "the ref" in text and text.index("Response 2") < text.index("the ref")
    assert "<<<\nnan\n>>>" in text  # a missing question reads as 'nan'


def test_user_template_placeholders_single_pass():
    tpl = pw.load_template(
        "G=<Evaluating Guidance>|Q={{question}}|1={{answer1}}|2={{answer2}}"
        "{{#reference_answer}}|R={{reference_answer}}{{/reference_answer}}"
    )
    c = _comp(question="{{answer1}} <Evaluating Guidance>")
    assert pw.render_prompt(c, template=tpl) == "G=be strict|Q={{answer1}} <Evaluating Guidance>|1=one|2=two"
    assert pw.render_prompt(c._replace(reference_answer="ref"), template=tpl).endswith("|R=ref")
    assert pw.template_id(tpl) != "builtin" and len(pw.template_id(tpl)) == 12
    assert pw.template_id(None) == "builtin"


@pytest.mark.parametrize(
    "text,msg",
    [
        ("{{question}} {{answer1}}", r"no \{\{answer2\}\}"),
        ("{{question}} {{answer1}} {{answer2}} {{guidance}}", "unknown placeholder"),
        ("{{question}} {{answer1}} {{answer2}} {{#reference_answer}}", "unbalanced"),
    ],
)
def test_bad_templates_are_rejected(text, msg):
    with pytest.raises(ScoringError, match=msg):
        pw.load_template(text, path="t.txt")


# --------------------------------------------------------------------------- extraction and numerics


@pytest.mark.parametrize(
    "text,choice",
    [
        ("Choice: A\nReason: x", "A"),
        ("preamble Choice: C later Choice: A", "C"),
        ("选择：D", "D"),
        ("Choice:A", None),
        ("choice: A", None),
        ("Choice: **A**", None),
        ("Choice - A", None),
        ("CHOICE: A", None),
        ("Choice:  A", None),
        ("Choice: a", None),
        ("", None),
        (None, None),
    ],
)
def test_reference_choice_regex(text, choice):
    assert pw.extract_choice(text) == choice


def test_lenient_and_by_nopt_extraction():
    assert pw.extract_choice("choice:  **b**", lenient=True) == "B"
    assert pw.extract_choice("Choice - A", lenient=True) is None
    assert pw.extract_choice("Choice: C", nopt=2, letters_by_nopt=True) is None
    assert pw.extract_choice("Choice: C", nopt=3, letters_by_nopt=True) == "C"
    assert pw.extract_choice("Choice: D", nopt=2) == "D"  # reference: A-D for every nopt


def test_float32_rounding_differs_from_float64_on_ties():
    # tot=80, one C: wd2 = 0.00625 -> 0.0062 on numpy's float32 path, 0.0063 in float64
    wd2 = pw.f32(pw.f32(0.0) + pw.f32(pw.f32(pw.f32(1 / 80) + 0.0) / 2.0))
    assert pw.round4_f32(wd2) == pw.f32(0.0062)
    assert round(0.5 / 80, 4) == 0.0063


def test_float32_tables_cross_checked_with_numpy_when_available():
    np = need("numpy", "dev", "the test extra brings numpy")
    for tot in range(1, 90, 7):
        for c in range(0, tot + 1, 3):
            for d in range(0, tot + 1 - c, 5):
                w = tot - c - d
                W, C, D, T = (np.float32(x) for x in (w, c, d, tot))
                wr, wff, lff = W / T, C / T, D / T
                wd2 = np.round(np.array([wr + (wff + lff) / 2.0], dtype=np.float32), 4)[0]
                wb = np.round(np.array([wr + wff], dtype=np.float32), 4)[0]
                a, b, e = pw.f32(w / tot), pw.f32(c / tot), pw.f32(d / tot)
                assert pw.round4_f32(pw.f32(a + pw.f32(pw.f32(b + e) / 2.0))) == float(wd2)
                assert pw.round4_f32(pw.f32(a + b)) == float(wb)


def test_numpy_mean_std_emulation_known_values():
    assert pw.np_sum([0.1] * 10) == 1.0  # pairwise, not sequential (0.9999999999999999)
    assert pw.np_mean([384, 385, 377, 392]) == 384.5
    assert pw.np_std([1, 2, 3, 4]) == 1.118033988749895


def test_numpy_mean_std_cross_checked_when_available():
    np = need("numpy", "dev", "the test extra brings numpy")
    import random

    rng = random.Random(7)
    for n in (1, 7, 8, 9, 127, 128, 129, 257, 1000, 9000, 17000):
        ints = [rng.randint(0, 5000) for _ in range(n)]
        floats = [rng.random() * 100 for _ in range(n)]
        assert pw.np_mean(ints) == float(np.mean(np.array(ints, dtype=np.int64)))
        assert pw.np_std(ints) == float(np.std(np.array(ints, dtype=np.int64)))
        assert pw.np_mean(floats) == float(np.mean(np.array(floats)))
        assert pw.np_std(floats) == float(np.std(np.array(floats)))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_score_file_items_merge_exactly_on_the_shipped_runs(name):
    from rageval_min._contract import accumulator_from_state
    from rageval_min.report.render_json import render_json

    record, expected, _ = RUNS[name]
    with open(expected, encoding="utf-8") as fh:
        refm = json.load(fh)["refm"]
    items = []
    report = pw.score_file(record, nopt=2, refm=refm, extras=list(pw.EXTRAS), on_item=items.append)
    assert report.result == pw.score([r for _, r in pw.read_table(record)], nopt=2, refm=refm, extras=pw.EXTRAS).result
    params = dict(nopt=2, refm=refm, judge_column=report.result["judge_column"], extras=list(pw.EXTRAS))
    merged = None
    for start in range(0, len(items), 17):
        acc = pw.PairwiseAccumulator(**params)
        for it in items[start : start + 17]:
            acc.add(it)
        part = accumulator_from_state(json.loads(json.dumps(acc.to_state())))
        merged = part if merged is None else merged.merge(part)
    assert render_json(merged.finalize(), ()) == render_json(report, ())


# --------------------------------------------------------------------------- metric and input declarations


def test_declarations_derive_todays_tables():
    from rageval_min._metrics import check_declarations

    directions = {
        "win": "higher",
        "loss": "lower",
        "parsed": "higher",
        "unparseable": "lower",
        "api_failed": "lower",
        "judge_missing": "lower",
    }
    rates = {"extraction_rate": ("parsed", None), "unparseable_share": ("unparseable", None)}
    for cls in (pw.PairwiseAccumulator, pw.PairwiseJudgeAccumulator):
        check_declarations(cls.METRICS, cls.INPUTS)
        assert dict(cls.DIRECTIONS) == directions
        assert dict(cls.RATES) == rates
    neither = {m.name for m in pw.PairwiseAccumulator.METRICS if m.per_item and m.direction == "neither"}
    assert neither == {"exact_match", "tie", "length_a", "length_b"}


def _gold_report(tmp_path, command):
    """The report and item rows of ``pairwise score`` / ``pairwise judge`` (replayed) on the gold sample, all extras."""
    from conftest import ROOT

    from rageval_min import judges
    from rageval_min.pairwise import judge
    from rageval_min.pairwise.construct_util import comparisons_from_file

    gold = os.path.join(ROOT, "gold_samples", "pairwise")
    items = []
    if command == "score":
        record = os.path.join(gold, "record_fakejudge_2.tsv")
        report = pw.score_file(record, nopt=2, refm="ref", extras=pw.EXTRAS, on_item=items.append)
        return report, items
    comps, notes = comparisons_from_file(
        os.path.join(gold, "synthetic_meta.xlsx"), refm="ref", models=["m1", "m2", "m3", "ref"]
    )
    replay = judges.judge_from_spec("replay:" + os.path.join(gold, "judge_cache.jsonl"))
    records, runner = judge.judge_records(
        comps,
        lambda: judges.JudgeRunner(replay),
        nopt=2,
        template=None,
        judge_column="fakejudge",
        path=str(tmp_path / "judged.jsonl"),
    )
    report = judge.score_judged(
        records,
        runner,
        nopt=2,
        refm="ref",
        judge_column="fakejudge",
        variants=(),
        extras=pw.EXTRAS,
        failure_limit=5,
        template=None,
        notes=notes,
        on_item=items.append,
    )
    return report, items


@pytest.mark.parametrize("command", ["score", "judge"])
def test_every_metric_of_a_gold_report_is_declared(tmp_path, command):
    from rageval_min._contract import accumulator_class
    from rageval_min._metrics import find_metric

    declared = accumulator_class("pairwise", command).METRICS
    report, items = _gold_report(tmp_path, command)
    names = set(report.metrics)
    assert any(n.startswith("with_tie;") for n in names) and any(n.startswith("conservative_") for n in names)
    missing = sorted(n for n in names if find_metric(declared, n) is None)
    assert missing == []
    per_item = {m.name for m in declared if m.per_item}
    numeric = {k for it in items for k, v in it.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    assert numeric <= per_item and per_item <= set(items[0])
    if command == "judge":
        assert {"judge_calls", "judge_failures"} <= names
