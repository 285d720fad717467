"""rageval-min pairwise prompts|score: round trip, output files, gates, exit codes."""

import csv
import json
import os

import pytest
from conftest import DATA, ROOT, item_rows, need, run_cli, run_subprocess

from rageval_min import pairwise as pw
from rageval_min._xlsx import read_xlsx_rows

PW = os.path.join(DATA, "pairwise")
EXAMPLE = os.path.join(PW, "examples", "DevBench_projects_example.xlsx")
RUN35 = os.path.join(PW, "output", "DevBench_projects_example_infer_input_2680_record0_gpt-3.5-turbo-1106_2")
SYN = os.path.join(PW, "synthetic", "nopt2")
SYNRUN = os.path.join(SYN, "synthetic_meta_infer_input_2680_record0_fakejudge_2")
SYNREC = os.path.join(SYNRUN, "record_fakejudge_2.tsv")
SCORE_SYN = ["pairwise", "score", "--record", SYNREC, "--nopt", "2"]
REFM = "gpt-3.5-turbo-1106"
SHIPPED_ORDER = [
    "gpt-4-0613",
    "gpt-4-1106-preview",
    "gpt-4-0125-preview",
    "codellama-7b-instruct",
    "codellama-13b-instruct",
    "codellama-34b-instruct",
    "deepseek-coder-1.3b-instruct",
    "deepseek-coder-6.7b-instruct",
    "deepseek-coder-33b-instruct",
    REFM,
]


def check_against_expected(result, expected):
    """Differences between a score result and a reference ``expected_values.json``
    (old tables compared as maps by model, new rates as maps with their types, log lines exactly)."""
    problems = []
    if pw.log_lines(result["counts"]) != expected["log_lines"]:
        problems.append("log lines differ")
    for name, et in expected["old_version"].items():
        got = result["old_version"][name]
        if got["columns"] != et["columns"]:
            problems.append(f"{name}: columns differ")
        if {r[0]: r[1:] for r in got["rows"]} != {r[0]: r[1:] for r in et["rows"]}:
            problems.append(f"{name}: rows differ")
    if isinstance(expected["new_version"], dict):
        for k, ev in expected["new_version"].items():
            gv = result["new_version"][k]
            if dict(gv) != ev or any(type(gv[x]) is not type(ev[x]) for x in ev):
                problems.append(f"new_version {k} differs")
    return problems


def _json(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def test_prompts_to_score_round_trip_from_the_example_xlsx(tmp_path):
    cmp_path = str(tmp_path / "comparisons.jsonl")
    argv = ["pairwise", "prompts", "--input", EXAMPLE, "--refm", REFM, "--output", cmp_path]
    for m in SHIPPED_ORDER:
        argv += ["--model", m]
    r = run_cli(argv)
    assert r.code == 0, r.err
    assert "80 comparisons (8 exact matches" in r.err
    with open(cmp_path, encoding="utf-8") as fh:
        comps = [json.loads(line) for line in fh]
    assert len(comps) == 80
    judged = _json(os.path.join(RUN35, "tmp.pkl.as.json"))  # the reference's judge texts
    non_em = [c for c in comps if not c["exact_match"]]
    assert {c["cmp_index"] for c in non_em} == set(judged)
    assert all(c["prompt"] is None for c in comps if c["exact_match"])
    assert all(c["prompt"] and c["answer1"] in c["prompt"] for c in non_em)
    # an external judge fills one column; EM rows are never judged
    rec_path = str(tmp_path / "record.jsonl")
    with open(rec_path, "w", encoding="utf-8") as fh:
        for c in comps:
            if not c["exact_match"]:
                c["judge"] = judged[c["cmp_index"]]
            fh.write(json.dumps(c) + "\n")
    r = run_cli(["pairwise", "score", "--record", rec_path, "--nopt", "2", "--refm", REFM, "--judge-column", "judge"])
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["family"] == "pairwise"
    assert list(out["result"])[:7] == [
        "refm",
        "judge_column",
        "nopt",
        "counts",
        "old_version",
        "new_version",
        "length_stats",
    ]
    expected = _json(os.path.join(PW, "derived", "expected_values_DevBench_example_gpt-3.5-turbo-1106_judge.json"))
    assert check_against_expected(out["result"], expected) == []


def test_prompts_tsv_output_is_the_reference_infer_input(tmp_path):
    out = str(tmp_path / "infer.tsv")
    r = run_cli(
        [
            "pairwise",
            "prompts",
            "--input",
            os.path.join(SYN, "synthetic_meta.xlsx"),
            "--refm",
            "ref",
            "--model",
            "m1",
            "--model",
            "m2",
            "--model",
            "m3",
            "--model",
            "ref",
            "--output",
            out,
        ]
    )
    assert r.code == 0, r.err
    with (
        open(out, encoding="utf-8") as a,
        open(os.path.join(SYN, "synthetic_meta_infer_input_2680.tsv"), encoding="utf-8") as b,
    ):
        assert a.read() == b.read()


def test_prompts_with_a_user_template_and_dump(tmp_path):
    r = run_cli(["pairwise", "prompts", "--input", EXAMPLE, "--refm", REFM, "--dump-template", "--nopt", "4"])
    assert r.code == 0 and "D: Neither response is acceptable." in r.out
    tpl = tmp_path / "t.txt"
    tpl.write_text("[<Evaluating Guidance>]\nQ: {{question}}\n1: {{answer1}}\n2: {{answer2}}\n", encoding="utf-8")
    r = run_cli(
        [
            "pairwise",
            "prompts",
            "--input",
            EXAMPLE,
            "--refm",
            REFM,
            "--model",
            "gpt-4-0613",
            "--judge-template",
            str(tpl),
        ]
    )
    assert r.code == 0, r.err
    first = json.loads(r.out.splitlines()[0])
    assert first["prompt"].startswith("[- Cohesion and Decoupling")
    assert "\n1: # UML class" in first["prompt"]
    assert "template=" + pw.template_id(tpl.read_text(encoding="utf-8")) in r.err
    bad = tmp_path / "bad.txt"
    bad.write_text("{{question}}", encoding="utf-8")
    r = run_cli(["pairwise", "prompts", "--input", EXAMPLE, "--refm", REFM, "--judge-template", str(bad)])
    assert r.code == 2 and "bad.txt" in r.err and "{{answer1}}" in r.err


def test_random_mode_cli(tmp_path):
    r = run_cli(
        ["pairwise", "prompts", "--input", EXAMPLE, "--refm", REFM, "--model", "gpt-4-0613", "--mode", "random"]
    )
    assert r.code == 0, r.err
    rows = [json.loads(line) for line in r.out.splitlines()]
    # np.random.seed(2680): 0.0089, 0.967, 0.512, 0.699 -> normal, reversed, reversed, reversed
    assert [row["A"] == REFM for row in rows] == [True, False, False, False]


def test_score_output_dir_writes_the_reference_files(tmp_path):
    d = str(tmp_path / "out")
    record = os.path.join(RUN35, "record_gpt-3.5-turbo-1106_2.tsv")
    r = run_cli(["pairwise", "score", "--record", record, "--nopt", "2", "--output-dir", d, "--format", "text"])
    assert r.code == 0, r.err
    assert sorted(os.listdir(d)) == sorted(
        [
            "log.txt",
            "length_stats.csv",
            "consistent_cmp.tsv",
            "inconsistent_cmp.tsv",
            "win+halfdraw.xlsx",
            "win+bothgood.xlsx",
            "win_rate_with_tie.csv",
            "win_rate_without_tie.csv",
        ]
    )
    for name in ("consistent_cmp.tsv", "inconsistent_cmp.tsv"):
        with open(os.path.join(d, name), "rb") as a, open(os.path.join(RUN35, name), "rb") as b:
            assert a.read() == b.read(), name
    for name in ("win_rate_with_tie.csv", "win_rate_without_tie.csv"):
        with open(os.path.join(d, name), encoding="utf-8") as a, open(os.path.join(RUN35, name), encoding="utf-8") as b:
            ours, ref = a.read().splitlines(), b.read().splitlines()
        assert ours[0] == ref[0] and sorted(ours[1:]) == sorted(ref[1:])  # text, incl. 0.0 vs 0
    for name in ("win+halfdraw.xlsx", "win+bothgood.xlsx"):
        ours, ref = read_xlsx_rows(os.path.join(d, name)), read_xlsx_rows(os.path.join(RUN35, name))
        assert ours[0] == ref[0]
        assert {r_[0]: r_[1:] for r_ in ours[1:]} == {r_[0]: r_[1:] for r_ in ref[1:]}
    with open(os.path.join(d, "log.txt"), encoding="utf-8") as fh:
        log = fh.read().splitlines()
    with open(os.path.join(RUN35, "log.txt"), encoding="utf-8") as fh:
        ref_log = fh.read().splitlines()
    assert log[0] == "Reponse length"
    start = log.index("Total comparisons: 80. Failed to response: 0")
    assert start == ref_log.index(log[start]) == 15  # same length-table shape (units differ)
    assert log[start : start + 5] == ref_log[start : start + 5]  # count lines, first table title

    # the old-version tables print like the reference's, up to row order and the pandas index
    def cells(line):
        return "|".join(line.split("|")[2:]) if line.startswith("|") else line[6:]

    assert sorted(map(cells, log[start + 5 :])) == sorted(map(cells, ref_log[start + 5 :]))
    with open(os.path.join(d, "length_stats.csv"), encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["model", "mean", "std"] and rows[1][0] == REFM and len(rows) == 11


def test_gpt4_run_writes_no_consistency_tsvs(tmp_path):
    d = str(tmp_path / "out4")
    run4 = os.path.join(PW, "output", "DevBench_projects_example_infer_input_2680_record0_gpt-4-1106-preview_2")
    r = run_cli(
        [
            "pairwise",
            "score",
            "--record",
            os.path.join(run4, "record_gpt-4-1106-preview_2.tsv"),
            "--nopt",
            "2",
            "--refm",
            REFM,
            "--output-dir",
            d,
        ]
    )
    assert r.code == 0, r.err
    assert "consistent_cmp.tsv" not in os.listdir(d)
    out = json.loads(r.out)
    assert any("no inconsistent rows" in x for x in out["diagnostics"])


@pytest.mark.parametrize(
    "gate,code",
    [
        ("consistency_rate>=0.6", 0),
        ("consistency_rate>=0.9", 1),
        ("win+halfdraw;m3;Overall-lang>=0.6", 0),
        ("with_tie;general;m1;ref>0.5", 1),
        ("unparseable_share<=0.05", 1),
        ("no_such_metric>1", 2),
    ],
)
def test_gates_on_rates(gate, code):
    r = run_cli(SCORE_SYN + ["--refm", "ref", "--extra", "unparseable_share", "--gate", gate])
    assert r.code == code, r.err


def test_variant_and_extra_are_in_the_signature():
    r = run_cli(SCORE_SYN + ["--variant", "float64_tables", "--extra", "per_model_consistency"])
    assert r.code == 0, r.err
    sig = json.loads(r.out)["signature"]
    assert "variants=float64_tables" in sig and "extras=per_model_consistency" in sig and "refm=ref" in sig


def test_crash_path_names_the_cmp_index(tmp_path):
    p = tmp_path / "rec.jsonl"
    p.write_text(
        json.dumps(
            {
                "cmp_index": "only-one-part",
                "A": "r",
                "B": "m",
                "answer1": "a",
                "answer2": "b",
                "task": "t",
                "judge": "Choice: A",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    r = run_cli(["pairwise", "score", "--record", str(p), "--nopt", "2", "--refm", "r"])
    assert r.code == 2 and "cmp_index=only-one-part" in r.err and "Traceback" not in r.err


def test_tokens_without_a_tokenizer_says_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # importing either now raises ImportError
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    r = run_cli(SCORE_SYN + ["--lengths", "tokens"])
    assert r.code == 2
    assert "pip install 'rageval-min[tokens]'" in r.err


GOLD = os.path.join(ROOT, "gold_samples", "pairwise")


def test_gold_sample_expected_result_has_the_reference_values():
    """expected_score_result.json (what the demo cases compare with) holds the reference values (the old demo check)."""
    result = _json(os.path.join(GOLD, "expected_score_result.json"))
    assert check_against_expected(result, _json(os.path.join(GOLD, "expected_values.json"))) == []
    assert result["unparseable_share"] == {"unparseable": 7, "answered": 103, "share": 7 / 103}


def test_gold_sample_cases_cover_every_subcommand():
    from rageval_min import _demo
    from rageval_min.cli import main

    cases = _demo.load_cases(os.path.dirname(GOLD), "pairwise")
    assert {c["argv"][1] for c in cases} == {"score", "prompts", "judge"}
    for case in cases:
        res = _demo.run_case(os.path.dirname(GOLD), "pairwise", case, main)
        assert res.ok, res.detail


def test_subprocess_exit_codes(tmp_path):
    ok = run_subprocess(SCORE_SYN + ["--gate", "consistency_rate>=0.6"])
    assert ok.code == 0, ok.err
    assert json.loads(ok.out)["result"]["counts"]["consistent"] == 60
    fail = run_subprocess(SCORE_SYN + ["--gate", "consistency_rate>=0.9", "--format", "text"])
    assert fail.code == 1 and "FAIL" in fail.out
    missing = run_subprocess(["pairwise", "score", "--record", str(tmp_path / "nope.tsv"), "--nopt", "2"])
    assert missing.code == 2 and "Traceback" not in missing.err
    usage = run_subprocess(["pairwise", "score", "--record", SYNREC])
    assert usage.code == 2 and "--nopt" in usage.err


def test_tokens_lengths_use_the_extras_adapter(monkeypatch):
    """Wiring of --lengths tokens with a stand-in tiktoken (the real one downloads its BPE file)."""
    import importlib.util as iu
    import sys
    import types

    from conftest import ROOT

    fake = types.ModuleType("tiktoken")

    class Enc:
        def encode(self, text):
            return text.split()

    fake.get_encoding = lambda name: Enc() if name == "cl100k_base" else None
    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # force the tiktoken fallback
    monkeypatch.setitem(sys.modules, "tiktoken", fake)
    pkg = types.ModuleType("rageval_min_extras")
    pkg.__path__ = [os.path.join(ROOT, "extras")]
    monkeypatch.setitem(sys.modules, "rageval_min_extras", pkg)
    spec = iu.spec_from_file_location("rageval_min_extras.tokens", os.path.join(ROOT, "extras", "tokens.py"))
    mod = iu.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setitem(sys.modules, "rageval_min_extras.tokens", mod)
    r = run_cli(SCORE_SYN + ["--lengths", "tokens"])
    assert r.code == 0, r.err
    out = json.loads(r.out)
    ls = out["result"]["length_stats"]
    assert ls["unit"] == "tokens" and "lengths=tokens" in out["signature"]
    # 'ref answer for alpha/uml_class' is 4 whitespace tokens; every ref answer has that shape
    assert ls["rows"][0][:3] == ["ref", 4.0, 0.0]


@pytest.mark.parametrize("run", sorted(os.listdir(os.path.join(DATA, "pairwise", "output"))))
def test_token_lengths_reproduce_the_reference_length_stats(tmp_path, run):
    """cl100k lengths through the tokens extra (bpe-openai, offline) match the shipped CSVs byte for byte."""
    need("bpe_openai", "tokens")
    d = os.path.join(DATA, "pairwise", "output", run)
    record = next(os.path.join(d, f) for f in os.listdir(d) if f.startswith("record_"))
    out = tmp_path / "out"
    r = run_cli(
        [
            "pairwise",
            "score",
            "--record",
            record,
            "--nopt",
            "2",
            "--refm",
            "gpt-3.5-turbo-1106",
            "--lengths",
            "tokens",
            "--output-dir",
            str(out),
        ]
    )
    assert r.code == 0, r.err
    with open(os.path.join(d, "length_stats.csv"), "rb") as want, open(out / "length_stats.csv", "rb") as got:
        assert got.read() == want.read()


def test_score_per_item_rows_in_input_order(tmp_path):
    items = tmp_path / "items.jsonl"
    r = run_cli(SCORE_SYN + ["--refm", "ref", "--per-item", str(items)])
    assert r.code == 0, r.err
    rows = item_rows(items.read_text(encoding="utf-8"))
    recs = [rec for _, rec in pw.read_table(SYNREC)]
    assert [row["cmp_index"] for row in rows] == [rec["cmp_index"] for rec in recs]
    assert all(list(row) == list(pw.ITEM_FIELDS) for row in rows)
    for row in rows:
        for k in ("exact_match", "api_failed", "judge_missing"):
            assert type(row[k]) is int and row[k] in (0, 1)
        for k in ("win", "tie", "loss", "parsed", "unparseable"):
            assert row[k] is None or (type(row[k]) is int and row[k] in (0, 1))
    counts = json.loads(r.out)["result"]["counts"]
    assert sum(row["exact_match"] for row in rows) == counts["total"] - counts["non_exact"] == 40
    assert sum(row["api_failed"] for row in rows) == counts["failed"] == 1
    assert sum(row["choice"] is not None for row in rows) == counts["extracted"]
    assert sum(row["unparseable"] or 0 for row in rows) == 7
    assert {row["model"] for row in rows} == {"m1", "m2", "m3", None}  # None: the ref-vs-ref EM rows


@pytest.mark.parametrize("content", ["", "cmp_index\tA\tB\tanswer1\tanswer2\tjudge\n"])
def test_an_input_without_records_is_exit_2(tmp_path, content):
    p = tmp_path / "rec.tsv"
    p.write_text(content, encoding="utf-8")
    items = tmp_path / "items.jsonl"
    r = run_cli(["pairwise", "score", "--record", str(p), "--nopt", "2", "--per-item", str(items)])
    assert r.code == 2 and str(p) in r.err and len(r.err.splitlines()) == 1
    assert not items.exists()


def test_score_gate_name_checked_before_the_output_dir(tmp_path):
    d = tmp_path / "out"
    r = run_cli(SCORE_SYN + ["--gate", "nope>1", "--output-dir", str(d)])
    assert r.code == 2 and "unknown metric" in r.err
    assert not d.exists()
    r = run_cli(SCORE_SYN + ["--failure-limit", "0"])
    assert r.code == 2 and "--failure-limit" in r.err


def test_prompts_output_may_not_overwrite_the_input(tmp_path):
    table = tmp_path / "t.jsonl"
    table.write_text(json.dumps({"index": "p", "question": "q", "evaluating_guidance": "g", "answer-a": "x"}) + "\n")
    r = run_cli(["pairwise", "prompts", "--input", str(table), "--refm", "a", "--output", str(table)])
    assert r.code == 2 and "same file" in r.err
    assert table.read_text().startswith("{")


def test_intervals_are_wilson_on_the_count_ratios_only():
    argv = SCORE_SYN + ["--refm", "ref", "--extra", "unparseable_share"]
    r = run_cli(argv + ["--intervals"])
    assert r.code == 0, r.err
    out = json.loads(r.out)
    iv = out["intervals"]
    assert sorted(iv) == ["extraction_rate", "unparseable_share"]  # no count is read as a rate
    assert (iv["extraction_rate"]["n"], iv["unparseable_share"]["n"]) == (104, 103)
    values = {"extraction_rate": 96 / 104, "unparseable_share": 7 / 103}
    assert values["extraction_rate"] == out["result"]["counts"]["extraction_rate"]
    assert values["unparseable_share"] == out["result"]["unparseable_share"]["share"]
    assert all(v["method"] == "wilson" and v["low"] < values[k] < v["high"] for k, v in iv.items())
    assert out["result"] == json.loads(run_cli(argv).out)["result"]
