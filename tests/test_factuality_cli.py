"""CLI tests for ``rageval-min factuality ...`` (in-process and as a subprocess)."""

import json
import math
import os
import shutil

import pytest
from conftest import DATA, ROOT, run_cli, run_subprocess

FDATA = os.path.join(DATA, "factuality")
GOLD = os.path.join(ROOT, "gold_samples", "factuality")
FIXTURE = os.path.join(FDATA, "run_eval_fixture.input.json")
SAFE = ["factuality", "safe", "--input", FIXTURE]


def _expected_text(k):
    with open(os.path.join(FDATA, f"run_eval_fixture.expected.max_claim_{k}.json"), encoding="utf-8") as fh:
        return json.load(fh)["output_json_text"]


def _write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return str(path)


# --- f1k -----------------------------------------------------------------------


def test_f1k_gold_jsonl():
    r = run_cli(["factuality", "f1k", "--input", os.path.join(GOLD, "counts.jsonl"), "--max-claims", "64"])
    assert r.code == 0, r.err
    with open(os.path.join(GOLD, "expected_f1k.jsonl"), encoding="utf-8") as fh:
        assert r.out == fh.read()


def test_f1k_per_line_errors_do_not_abort(tmp_path):
    path = _write(
        tmp_path,
        "c.jsonl",
        [
            {"supported": 10, "not_supported": 8},
            {"supported": 10, "not_supported": 8, "max_claims": 0},
            {"supported": 0, "not_supported": -1},
            {"supported": 5},
            {"supported": 64, "not_supported": 0, "max_claims": None},
        ],
    )
    r = run_cli(["factuality", "f1k", "--input", path])
    assert r.code == 0, r.err
    lines = [json.loads(x) for x in r.out.splitlines()]
    assert len(lines) == 5
    assert lines[0]["f1_at_k"] == 0.16949152542372883 and lines[0]["max_claims"] == 100
    assert lines[1] == {"error": "max_claims must be positive."}
    assert lines[2] == {"error": "Cannot have negative numbers of claims."}
    assert "not_supported" in lines[3]["error"]
    assert lines[4]["max_claims"] == 100 and lines[4]["recall_at_k"] == 0.64
    assert list(lines[0]) == ["precision", "recall_at_k", "f1_at_k", "max_claims"]


def test_f1k_int_zero_written_as_int(tmp_path):
    path = _write(tmp_path, "c.jsonl", [{"supported": 0, "not_supported": 3}])
    r = run_cli(["factuality", "f1k", "--input", path])
    assert '"f1_at_k": 0,' in r.out


def test_f1k_k_rules_in_signature(tmp_path):
    path = _write(
        tmp_path,
        "c.jsonl",
        [{"supported": s, "not_supported": n} for s, n in [(10, 2), (50, 14), (3, 0), (70, 8), (30, 4)]],
    )
    report = str(tmp_path / "report.json")
    for rule, k in (("median", 34), ("max", 78), ("p25", 12), ("p100", 78)):
        argv = ["factuality", "f1k", "--input", path, "--max-claims", rule]
        r = run_cli(argv + ["--output", "json:" + report, "--output", "jsonl:-"])
        assert r.code == 0, r.err
        with open(report, encoding="utf-8") as fh:
            out = json.load(fh)
        assert out["result"]["max_claims"] == k
        assert f"|K={k}|k_rule=" in out["signature"]
        # the per-line results are the JSONL stream (and --per-item), not part of the JSON report
        assert all(json.loads(line)["max_claims"] == k for line in r.out.splitlines())
    r = run_cli(["factuality", "f1k", "--input", path, "--max-claims", "median", "--format", "json"])
    assert "k_rule=upper_median_of_S+NS" in json.loads(r.out)["signature"]
    r = run_cli(["factuality", "f1k", "--input", path, "--max-claims", "p200"])
    assert r.code == 2 and "pNN" in r.err
    r = run_cli(["factuality", "f1k", "--input", path, "--max-claims", "banana"])
    assert r.code == 2


def test_f1k_gates_on_mean_and_ci(tmp_path):
    path = _write(tmp_path, "c.jsonl", [{"supported": 40 + i, "not_supported": i % 5} for i in range(30)])
    base = ["factuality", "f1k", "--input", path, "--max-claims", "64", "--format", "json", "--seed", "3"]
    r = run_cli(base + ["--gate", "f1_mean>=0.55"])
    assert r.code == 0, r.err
    out = json.loads(r.out)
    res = out["result"]
    assert res["f1_mean_ci_low"] <= res["f1_mean"] <= res["f1_mean_ci_high"]
    assert res["bootstrap"] == {
        "confidence": 0.95,
        "low": res["f1_mean_ci_low"],
        "high": res["f1_mean_ci_high"],
        "n_resamples": 1000,
        "seed": 3,
    }
    assert "|bootstrap=1000|confidence=0.95|seed=3" in out["signature"]
    high = res["f1_mean_ci_low"] + 1e-9
    r = run_cli(base + ["--gate", f"f1_mean_ci_low>={high}"])
    assert r.code == 1
    r = run_cli(base + ["--gate", "nope>=1"])
    assert r.code == 2 and "f1_mean_ci_low" in r.err


def test_f1k_csv_input(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("supported,not_supported\n70,6\n0,3\n", encoding="utf-8")
    r = run_cli(["factuality", "f1k", "--input", str(path)])
    lines = [json.loads(x) for x in r.out.splitlines()]
    assert lines[0]["f1_at_k"] == 0.7954545454545453 and lines[1]["f1_at_k"] == 0


# --- safe ----------------------------------------------------------------------


@pytest.mark.parametrize("k", [64, 178])
def test_safe_output_file_byte_for_byte(tmp_path, k):
    out = tmp_path / "out.json"
    r = run_cli(SAFE + ["--max-claim", str(k), "--output", str(out)])
    assert r.code == 0, r.err
    assert out.read_bytes() == _expected_text(k).encode("utf-8")
    assert r.out == ""
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temp file left


def test_safe_stdout_and_json_envelope():
    r = run_cli(SAFE + ["--max-claim", "64"])
    assert r.out == _expected_text(64)
    r = run_cli(
        SAFE
        + ["--max-claim", "64", "--format", "json", "--gate", "side2_avg_f1_64>=0.54", "--gate", "f1_mean_ci_high<=1"]
    )
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["signature"].startswith(
        "rageval_min:0.1.0|family=factuality|ref=google-deepmind/long-form-factuality@9d27158|variants=none|"
        "max_claim=64|K=64|"
    )
    assert out["result"]["f1_key"] == "f1_64"
    assert out["result"]["aggregates"]["side2_avg_f1_64"] == 0.5403676955631517
    assert out["result"]["per_prompt_f1"]["side2"][-1] is None
    assert any("prompt 6" in d for d in out["diagnostics"])
    r = run_cli(SAFE + ["--max-claim", "64", "--gate", "f1_mean_ci_low>=0.9"])
    assert r.code == 1 and r.out == _expected_text(64)


def test_safe_default_flag_and_variants():
    r = run_cli(SAFE + ["--format", "json"])
    out = json.loads(r.out)
    assert out["result"]["f1_key"] == "f1_-1" and out["result"]["max_claims"] == 100
    r = run_cli(SAFE + ["--variant", "f1_key_effective_k"])
    assert '"side2_avg_f1_100"' in r.out
    r = run_cli(SAFE + ["--max-claim", "median", "--format", "json"])
    out = json.loads(r.out)
    assert out["result"]["max_claims"] == 64  # upper median of S+NS: sorted [0, 4, 14, 64, 76, 210][3]
    assert "k_rule=upper_median_of_S+NS" in out["signature"]


def test_safe_crash_paths(tmp_path):
    with open(FIXTURE, encoding="utf-8") as fh:
        data = json.load(fh)
    del data["per_prompt_data"][4]["side2_posthoc_eval_data"]["num_claims"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    r = run_cli(["factuality", "safe", "--input", str(bad), "--max-claim", "64"])
    assert r.code == 2
    assert "bad.json" in r.err and "prompt 4" in r.err and "num_claims" in r.err
    broken = tmp_path / "broken.json"
    broken.write_text('{"side_1": ', encoding="utf-8")
    r = run_cli(["factuality", "safe", "--input", str(broken)])
    assert r.code == 2 and "broken.json:1" in r.err
    r = run_cli(["factuality", "safe", "--input", str(tmp_path / "missing.json")])
    assert r.code == 2 and "cannot open" in r.err
    out = tmp_path / "keep.json"
    out.write_text("old", encoding="utf-8")
    r = run_cli(["factuality", "safe", "--input", str(bad), "--max-claim", "64", "--output", str(out)])
    assert r.code == 2 and out.read_text(encoding="utf-8") == "old"


# --- factscore -------------------------------------------------------------------


def test_factscore_human_chatgpt():
    chatgpt = ["factuality", "factscore", "--input", os.path.join(FDATA, "ChatGPT.jsonl")]
    r = run_cli(chatgpt + ["--gamma", "0", "--format", "json", "--gate", "score>=0.58"])
    assert r.code == 0, r.err
    res = json.loads(r.out)["result"]
    assert "%.1f" % (100 * res["score"]) == "58.3"
    assert res["num_responding"] == 157 and res["num_responses"] == 183
    assert "init_score" not in res
    assert list(res)[:3] == ["score", "respond_ratio", "num_facts_per_response"]
    r = run_cli(chatgpt + ["--format", "json"])
    res = json.loads(r.out)["result"]
    assert res["score"] == float.fromhex("0x1.2a7dbf0a30a0ap-1") and "init_score" in res
    r = run_cli(chatgpt + ["--gamma", "0", "--variant", "factscore_excl_ir", "--format", "json"])
    out = json.loads(r.out)
    assert out["result"]["score"] > 0.583 and "variants=factscore_excl_ir" in out["signature"]


def test_factscore_simple_labels_and_errors(tmp_path):
    r = run_cli(["factuality", "factscore", "--input", os.path.join(GOLD, "labels.jsonl"), "--format", "text"])
    assert r.code == 0 and "init_score" in r.out
    path = _write(tmp_path, "l.jsonl", [{"labels": ["S", "S"]}, {"labels": ["S", "maybe"]}])
    r = run_cli(["factuality", "factscore", "--input", path])
    assert r.code == 2 and "l.jsonl:2" in r.err and "labels[1]" in r.err
    path = _write(tmp_path, "e.jsonl", [{"labels": ["S"] * 12}, {"labels": []}])
    r = run_cli(["factuality", "factscore", "--input", path, "--format", "json"])
    out = json.loads(r.out)
    assert out["result"]["respond_ratio"] == 0.5
    assert any("e.jsonl:2" in d and "abstained" in d for d in out["diagnostics"])


# --- veriscore -------------------------------------------------------------------


def test_veriscore_gold_and_errors(tmp_path):
    r = run_cli(
        [
            "factuality",
            "veriscore",
            "--input",
            os.path.join(GOLD, "veriscore.jsonl"),
            "--format",
            "json",
            "--gate",
            "veriscore.m1.bio>=0.5",
        ]
    )
    assert r.code == 0, r.err
    with open(os.path.join(GOLD, "expected_veriscore.json"), encoding="utf-8") as fh:
        assert json.loads(r.out)["result"] == json.load(fh)
    path = _write(tmp_path, "v.jsonl", [{"supported": 1, "total_claims": 2}])
    r = run_cli(["factuality", "veriscore", "--input", path])
    assert r.code == 2 and "domain" in r.err
    path = _write(tmp_path, "v.jsonl", [{"domain": "d", "supported": 0, "total_claims": 0}])
    r = run_cli(["factuality", "veriscore", "--input", path, "--format", "json"])
    out = json.loads(r.out)  # total_claims 0: F1 = 0 with a diagnostic (reference: ZeroDivisionError)
    assert r.code == 0 and out["result"]["scores"][0]["veriscore"] == 0.0
    assert any("total_claims is 0" in d for d in out["diagnostics"])
    path = _write(tmp_path, "v.jsonl", [{"domain": "d", "supported": 0, "total_claims": t} for t in (0, 0, 5)])
    r = run_cli(["factuality", "veriscore", "--input", path])
    assert r.code == 2 and "domain 'd'" in r.err and "K_median is 0" in r.err


# --- correlate ---------------------------------------------------------------------


def test_correlate_pairs_gold():
    r = run_cli(["factuality", "correlate", "--input", os.path.join(GOLD, "pairs.jsonl")])
    assert r.code == 0, r.err
    got = [json.loads(x) for x in r.out.splitlines()]
    with open(os.path.join(GOLD, "expected_correlate.jsonl"), encoding="utf-8") as fh:
        exp = [json.loads(x) for x in fh]
    assert len(got) == len(exp) == 7
    for g, e in zip(got, exp):
        assert g["id"] == e["id"]
        assert g["spearman"]["statistic"] == e["spearman"]["statistic"]
        for t in ("pearson", "spearman"):
            for k in ("statistic", "pvalue"):
                if e[t][k] is None:
                    assert g[t][k] is None
                else:
                    assert abs(g[t][k] - e[t][k]) <= 1e-12 * max(1.0, abs(e[t][k]))


def test_correlate_line_errors_and_table(tmp_path):
    path = _write(
        tmp_path,
        "p.jsonl",
        [{"x": [1, 2, 3], "y": [1, 2]}, {"x": "a", "y": []}, {"x": [1, 2, 3, 4], "y": [2, 1, 4, 3]}],
    )
    r = run_cli(["factuality", "correlate", "--input", path])
    assert r.code == 0
    lines = [json.loads(x) for x in r.out.splitlines()]
    assert "error" in lines[0] and "error" in lines[1] and "pearson" in lines[2]
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n2,1\n3,4\n4,3\n", encoding="utf-8")
    r = run_cli(
        [
            "factuality",
            "correlate",
            "--input",
            str(table),
            "--x",
            "a",
            "--y",
            "b",
            "--format",
            "json",
            "--gate",
            "spearman>=0.5",
        ]
    )
    out = json.loads(r.out)
    assert out["result"]["lines"][0] == lines[2]
    assert r.code == 0 and abs(out["gates"][0]["value"] - 0.6) < 1e-15
    r = run_cli(["factuality", "correlate", "--input", str(table), "--x", "a", "--y", "zzz"])
    assert r.code == 2 and "zzz" in r.err
    r = run_cli(["factuality", "correlate"])
    assert r.code == 2


def test_correlate_study(tmp_path):
    labeled = tmp_path / "labeled"
    labeled.mkdir()
    for name in ("ChatGPT.jsonl", "InstructGPT.jsonl", "PerplexityAI.jsonl"):
        shutil.copy(os.path.join(FDATA, name), labeled / name)
    (labeled / "ignored_file.jsonl").write_text("not json\n", encoding="utf-8")
    with open(os.path.join(FDATA, "factscore_human_per_response.jsonl"), encoding="utf-8") as fh:
        per = [json.loads(x) for x in fh]
    # a SAFE output that only identified facts: num_claims = the model-atomic-facts count
    safe = _write(
        tmp_path,
        "safe.jsonl",
        [{"model_name": p["model_name"], "line": p["line"], "num_claims": p["model_atomic_facts"]} for p in per],
    )
    r = run_cli(
        [
            "factuality",
            "correlate",
            "--labeled",
            str(labeled),
            "--safe",
            safe,
            "--format",
            "json",
            "--gate",
            "spearman.num_claims>=0.8",
        ]
    )
    assert r.code == 0, r.err
    out = json.loads(r.out)
    (line,) = out["result"]["lines"]
    with open(os.path.join(FDATA, "correlations.jsonl"), encoding="utf-8") as fh:
        vec = json.loads(fh.readline())
    assert line["metric"] == "num_claims" and line["n"] == 496
    assert line["spearman"]["statistic"] == float.fromhex(vec["spearman"]["statistic"]["hex"])
    assert abs(line["pearson"]["statistic"] - float.fromhex(vec["pearson"]["statistic"]["hex"])) <= 1e-12
    pv = float.fromhex(vec["pearson"]["pvalue"]["hex"])
    assert abs(line["pearson"]["pvalue"] - pv) <= 1e-12 * pv
    assert out["result"]["display"]["num_claims"]["pearson"][0] == 0.807
    # SAFE lines keyed by topic, full label counts (SAFE result names)
    safe2 = _write(
        tmp_path,
        "safe2.jsonl",
        [
            {
                "model_name": p["model_name"],
                "topic": p["topic"],
                "Supported": p["S"],
                "Not Supported": p["NS"],
                "Irrelevant": p["IR"],
                "num_claims": p["num_claims"],
            }
            for p in per
            if p["model_name"] == "ChatGPT"
        ],
    )
    r = run_cli(
        ["factuality", "correlate", "--labeled", str(labeled / "ChatGPT.jsonl"), "--safe", safe2, "--format", "json"]
    )
    out = json.loads(r.out)
    assert [x["metric"] for x in out["result"]["lines"]] == [
        "f1_100",
        "irrelevant",
        "not_supported",
        "num_claims",
        "supported",
    ]
    assert all(x["n"] == 157 for x in out["result"]["lines"])
    bad = _write(tmp_path, "bad.jsonl", [{"model_name": "Nope", "line": 0, "num_claims": 3}])
    r = run_cli(["factuality", "correlate", "--labeled", str(labeled), "--safe", bad])
    assert r.code == 2 and "bad.jsonl:1" in r.err


# --- misc --------------------------------------------------------------------------


def test_factuality_without_subcommand_is_usage_error():
    r = run_cli(["factuality"])
    assert r.code == 2 and "f1k" in r.err


def test_subprocess_exit_codes(tmp_path):
    r = run_subprocess(SAFE + ["--max-claim", "178", "--gate", "side2_avg_f1_178>=0.5"])
    assert r.code == 1 and r.out == _expected_text(178)
    r = run_subprocess(["factuality", "f1k", "--input", str(tmp_path / "none.jsonl")])
    assert r.code == 2 and "Traceback" not in r.err
    r = run_subprocess(["factuality", "correlate", "--input", os.path.join(GOLD, "pairs.jsonl")])
    assert r.code == 0 and len(r.out.splitlines()) == 7


def test_demo_includes_factuality():
    from rageval_min import _demo
    from rageval_min.cli import main

    results = _demo.run_family(os.path.join(ROOT, "gold_samples"), "factuality", main)
    assert len(results) == 5 and all(r.ok for r in results), [r.detail for r in results]
    assert any("byte-for-byte" in r.name for r in results)
    assert not math.isnan(0.0)


def test_bootstrap_can_be_disabled(tmp_path):
    path = _write(tmp_path, "c.jsonl", [{"supported": 5, "not_supported": 1}, {"supported": 9, "not_supported": 0}])
    r = run_cli(
        ["factuality", "f1k", "--input", path, "--bootstrap", "0", "--format", "json", "--gate", "f1_mean_ci_low>=0"]
    )
    out = json.loads(r.out)
    assert r.code == 1  # an undefined metric fails its gate
    assert out["result"]["f1_mean_ci_low"] is None and out["result"]["bootstrap"]["n_resamples"] == 0
    assert "|bootstrap=0|" in out["signature"]
    r = run_cli(["factuality", "f1k", "--input", path, "--bootstrap", "-1"])
    assert r.code == 2


# --- issue #13: f1k streams, bootstrap on demand, gated values visible, no valid record -> exit 2 ---


def test_f1k_every_line_invalid_is_exit_2(tmp_path):
    path = _write(tmp_path, "bad.jsonl", [{"supported": "x", "not_supported": 1}, {"supported": 1}])
    r = run_cli(["factuality", "f1k", "--input", path])
    assert r.code == 2 and r.out == "" and "no valid record" in r.err and "bad.jsonl" in r.err
    out = tmp_path / "out.jsonl"
    r = run_cli(["factuality", "f1k", "--input", path, "--output", str(out), "--per-item", str(tmp_path / "i.jsonl")])
    assert r.code == 2 and not out.exists() and not (tmp_path / "i.jsonl").exists()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    r = run_cli(["factuality", "f1k", "--input", str(empty)])
    assert r.code == 2 and r.out == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["factuality", "factscore", "--input", "{empty}"],
        ["factuality", "veriscore", "--input", "{empty}"],
        ["factuality", "correlate", "--input", "{empty}"],
        ["factuality", "correlate", "--input", "{badpairs}"],
        ["factuality", "correlate", "--input", "{empty}", "--x", "a", "--y", "b"],
        ["factuality", "veriscore", "--input", "{abstained}"],
        ["factuality", "safe", "--input", "{unrated}", "--max-claim", "median"],
    ],
)
def test_no_valid_record_is_exit_2(tmp_path, argv):
    files = {
        "empty": tmp_path / "empty.jsonl",
        "badpairs": tmp_path / "badpairs.jsonl",
        "abstained": tmp_path / "abstained.jsonl",
        "unrated": tmp_path / "unrated.json",
    }
    files["empty"].write_text("", encoding="utf-8")
    files["badpairs"].write_text(json.dumps({"x": [1, 2], "y": [1]}) + "\n", encoding="utf-8")
    files["abstained"].write_text(json.dumps({"domain": "d", "abstained": True}) + "\n", encoding="utf-8")
    files["unrated"].write_text(
        json.dumps({"side_1": "placeholder", "side_2": "x", "per_prompt_data": [{"prompt": "p"}]}), encoding="utf-8"
    )
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]
    r = run_cli(argv)
    assert r.code == 2 and r.out == "", r.err
    assert "no valid record" in r.err or "holds no records" in r.err, r.err


def _write_json(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_safe_file_with_no_rated_side_is_written_through_as_the_reference_does(tmp_path):
    """run_eval writes an experiment result whose prompts carry no eval data through unchanged; so does
    rageval-min under variants=none, with a diagnostic (issue #24 item 9)."""
    from rageval_min import factuality as F

    data = {"side_1": "placeholder", "side_2": "x", "per_prompt_data": [{"prompt": "p"}, {"prompt": "q"}]}
    path = _write_json(tmp_path, "unrated.json", data)
    r = run_cli(["factuality", "safe", "--input", path])
    assert r.code == 0 and r.out == F.dumps_reference(data), r.err
    report = json.loads(run_cli(["factuality", "safe", "--input", path, "--format", "json"]).out)
    assert any("written through unchanged" in d for d in report["diagnostics"])


def test_f1k_bootstrap_runs_only_when_written_or_gated(tmp_path, monkeypatch):
    from rageval_min.factuality import bootstrap as F

    calls = []
    real = F.bootstrap_mean_ci

    def counting(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(F, "bootstrap_mean_ci", counting)
    path = _write(tmp_path, "c.jsonl", [{"supported": 40 + i, "not_supported": i % 5} for i in range(30)])
    base = ["factuality", "f1k", "--input", path, "--max-claims", "64"]
    r = run_cli(base)  # JSONL only: the interval is neither written nor gated
    assert r.code == 0 and calls == []
    r = run_cli(base + ["--gate", "f1_mean>=0.5"])
    assert r.code == 0 and calls == []
    r = run_cli(base + ["--gate", "f1_mean_ci_low>=0.5"])
    assert r.code == 0 and len(calls) == 1
    r = run_cli(base + ["--format", "json"])
    assert r.code == 0 and len(calls) == 2 and json.loads(r.out)["result"]["f1_mean_ci_low"] is not None


def test_f1k_jsonl_shows_the_gated_values(tmp_path):
    path = _write(tmp_path, "c.jsonl", [{"supported": 40 + i, "not_supported": i % 5} for i in range(30)])
    base = ["factuality", "f1k", "--input", path, "--max-claims", "64"]
    plain = run_cli(base)
    assert len(plain.out.splitlines()) == 30
    r = run_cli(base + ["--gate", "f1_mean>=0.99"])
    assert r.code == 1 and "f1_mean>=0.99 failed" in r.err
    lines = r.out.splitlines()
    assert len(lines) == 31 and "\n".join(lines[:30]) + "\n" == plain.out
    last = json.loads(lines[-1])
    report = json.loads(run_cli(base + ["--format", "json"]).out)
    assert last["pass"] is False
    assert last["gates"] == [
        {
            "gate": "f1_mean>=0.99",
            "name": "f1_mean",
            "op": ">=",
            "threshold": 0.99,
            "value": report["result"]["f1_mean"],
            "passed": False,
        }
    ]
    r = run_cli(["factuality", "correlate", "--input", os.path.join(GOLD, "pairs.jsonl"), "--gate", "n_errors==0"])
    assert r.code == 0 and json.loads(r.out.splitlines()[-1]) == {
        "gates": [
            {"gate": "n_errors==0", "name": "n_errors", "op": "==", "threshold": 0.0, "value": 0, "passed": True}
        ],
        "pass": True,
    }


def test_f1k_output_file_and_report_in_one_run(tmp_path):
    counts = os.path.join(GOLD, "counts.jsonl")
    lines, rep = tmp_path / "l.jsonl", tmp_path / "r.json"
    r = run_cli(
        [
            "factuality",
            "f1k",
            "--input",
            counts,
            "--max-claims",
            "64",
            "--output",
            str(lines),
            "--output",
            f"json:{rep}",
        ]
    )
    assert r.code == 0 and r.out == ""
    with open(os.path.join(GOLD, "expected_f1k.jsonl"), encoding="utf-8") as fh:
        assert lines.read_text(encoding="utf-8") == fh.read()
    result = json.loads(rep.read_text(encoding="utf-8"))["result"]
    assert "lines" not in result and result["n_lines"] == len(lines.read_text().splitlines())


def test_f1k_state_holds_no_lines():
    from rageval_min import factuality as F

    acc = F.F1kAccumulator(max_claims=64)
    for i in range(1000):
        acc.add(F.f1k_item({"id": f"r{i}", "supported": i % 70, "not_supported": 3}, line=i + 1, max_claims=64))
    data = acc.to_state()["data"]
    assert set(data) == {"n_lines", "f1", "precision", "recall"}
    assert all(isinstance(v, float) for v in data["f1"])


# --- issue #14: bounded counts, finite numbers ---


@pytest.mark.parametrize(
    "extra",
    [
        ["--bootstrap", "1000000000"],
        ["--bootstrap", "-1"],
        ["--confidence", "nan"],
        ["--confidence", "inf"],
        ["--confidence", "1"],
        ["--seed", str(2**70)],
        ["--max-claims", "nan"],
        ["--max-claims", "inf"],
    ],
)
def test_out_of_bounds_options_are_exit_2(extra):
    r = run_cli(["factuality", "f1k", "--input", os.path.join(GOLD, "counts.jsonl")] + extra)
    assert r.code == 2 and r.out == "", r.err


@pytest.mark.parametrize(
    "argv",
    [
        SAFE + ["--bootstrap", "1000000000"],
        SAFE + ["--confidence", "nan"],
        ["factuality", "factscore", "--input", os.path.join(GOLD, "labels.jsonl"), "--bootstrap", "1000000000"],
        ["factuality", "factscore", "--input", os.path.join(GOLD, "labels.jsonl"), "--gamma", "10000000000"],
        ["factuality", "factscore", "--input", os.path.join(GOLD, "labels.jsonl"), "--gamma", "-1"],
    ],
)
def test_out_of_bounds_options_every_command(argv):
    r = run_cli(argv)
    assert r.code == 2 and r.out == "", r.err


def test_library_bootstrap_bounds():
    from rageval_min import factuality as F
    from rageval_min.errors import ScoringError

    counts = os.path.join(GOLD, "counts.jsonl")
    for kw in ({"bootstrap": 10**9}, {"confidence": float("nan")}, {"bootstrap": True}, {"seed": 1.5}):
        with pytest.raises(ScoringError):
            F.f1k_file(counts, **kw)


# --- issue #18 (4): run_eval sides as the reference ---


def test_safe_sides_as_the_reference(tmp_path):
    with open(FIXTURE, encoding="utf-8") as fh:
        data = json.load(fh)
    # the flags and the side names do not matter to print_results
    r = run_cli(SAFE + ["--max-claim", "64", "--no-eval-side2"])
    assert r.code == 0 and r.out == _expected_text(64) and "ignored" in r.err or r.out == _expected_text(64)
    r = run_cli(SAFE + ["--max-claim", "64", "--no-eval-side2", "--format", "json"])
    out = json.loads(r.out)
    assert out["result"]["rated_sides"] == ["side2"] and any("--no-eval-side2 ignored" in d for d in out["diagnostics"])
    r = run_cli(SAFE + ["--max-claim", "64", "--no-eval-side2", "--variant", "sides_by_flags"])
    assert '"side2_avg_f1_64"' not in r.out
    # prompt 0 failed: the side is left untouched (the output is the input, re-serialised)
    data["per_prompt_data"].insert(0, data["per_prompt_data"].pop())
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(data), encoding="utf-8")
    r = run_cli(["factuality", "safe", "--input", str(moved), "--max-claim", "64"])
    assert r.code == 0 and r.out == json.dumps(data)
    r = run_cli(["factuality", "safe", "--input", str(moved), "--max-claim", "64", "--variant", "sides_by_flags"])
    assert r.code == 0 and '"f1_64"' in r.out and "side2_avg" not in r.out
