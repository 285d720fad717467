"""factuality on the engine (issue #16): --jobs, --emit-partial + merge, the family's report formats.

tests/test_engine.py covers every contract case generically (jobs 1/2/4, shards of the JSON Lines
input, Dask); this file covers what it cannot: ``safe`` (one JSON document, not lines), inputs large
enough for several chunks, the order of errors and diagnostics across workers, the ``jsonl`` and
``safe`` formats under ``merge``, and the table and study modes of ``correlate``.
"""

import json
import os

from conftest import DATA, ROOT, run_cli

from rageval_min import factuality as F
from rageval_min._contract import accumulator_from_state

FDATA = os.path.join(DATA, "factuality")
GOLD = os.path.join(ROOT, "gold_samples", "factuality")
FIXTURE = os.path.join(FDATA, "run_eval_fixture.input.json")


def _write(path, lines):
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return str(path)


def _same_for_jobs(argv, engines, tmp_path, *, per_item=True):
    runs = []
    for jobs in ("1", "3"):
        extra = ["--jobs", jobs]
        if per_item:
            extra += ["--per-item", str(tmp_path / f"items{jobs}.jsonl")]
        r = run_cli(argv + extra)
        items = (tmp_path / f"items{jobs}.jsonl").read_bytes() if per_item else b""
        runs.append((r.code, r.out, r.err, items))
        if jobs != "1":
            assert engines[-1].name == "processes" and engines[-1].chunks_run > 1, "several chunks in the pool"
    assert runs[0] == runs[1]
    return runs[0]


# --- f1k ---------------------------------------------------------------------------


def test_f1k_many_chunks_same_lines_and_notes_for_any_jobs(engines, tmp_path):
    lines = [{"id": f"r{i}", "supported": (i * 7) % 90, "not_supported": i % 13} for i in range(700)]
    lines[5] = {"supported": -1, "not_supported": 1}  # no id: named by path and line
    lines[600] = {"id": "late", "supported": "x", "not_supported": 1}
    path = _write(tmp_path / "c.jsonl", lines)
    code, out, _, items = _same_for_jobs(
        ["factuality", "f1k", "--input", path, "--max-claims", "64"], engines, tmp_path
    )
    assert code == 0 and len(out.splitlines()) == 700 and len(items.splitlines()) == 700
    r = run_cli(["factuality", "f1k", "--input", path, "--max-claims", "median", "--format", "json", "--jobs", "2"])
    diags = json.loads(r.out)["diagnostics"]
    assert diags[0] == f"{path}:6: Cannot have negative numbers of claims."
    assert diags[1].startswith("id='late': supported: expected a number")


def test_f1k_gated_jsonl_from_workers_ends_with_the_gate_line(tmp_path):
    path = os.path.join(GOLD, "counts.jsonl")
    one = run_cli(["factuality", "f1k", "--input", path, "--max-claims", "64", "--gate", "f1_mean>=0.5"])
    two = run_cli(["factuality", "f1k", "--input", path, "--max-claims", "64", "--gate", "f1_mean>=0.5", "--jobs", "2"])
    assert one == two
    assert json.loads(two.out.splitlines()[-1])["gates"][0]["name"] == "f1_mean"


def test_f1k_merge_cannot_write_jsonl(tmp_path):
    state = tmp_path / "s.json"
    r = run_cli(["factuality", "f1k", "--input", os.path.join(GOLD, "counts.jsonl"), "--emit-partial", str(state)])
    assert r.code == 0, r.err
    r = run_cli(["merge", str(state), "--format", "jsonl"])
    assert r.code == 2 and "f1k writes its lines while it scores" in r.err and r.out == ""


def test_a_shard_without_a_valid_line_is_accepted_only_with_emit_partial(tmp_path):
    bad = _write(tmp_path / "bad.jsonl", [{"id": "b", "supported": -1, "not_supported": 0}])
    good = _write(tmp_path / "good.jsonl", [{"id": "g", "supported": 3, "not_supported": 1}])
    whole = _write(
        tmp_path / "whole.jsonl",
        [{"id": "g", "supported": 3, "not_supported": 1}, {"id": "b", "supported": -1, "not_supported": 0}],
    )
    assert run_cli(["factuality", "f1k", "--input", bad]).code == 2
    states = []
    for name, path in (("g", good), ("b", bad)):
        states.append(str(tmp_path / f"{name}.state"))
        r = run_cli(["factuality", "f1k", "--input", path, "--emit-partial", states[-1], "--format", "json"])
        assert r.code == 0, r.err
    merged = run_cli(["merge"] + states)
    one = run_cli(["factuality", "f1k", "--input", whole, "--format", "json"])
    assert merged.out == one.out and "id='b'" in one.out


# --- safe --------------------------------------------------------------------------


def _safe_doc(n, *, broken=()):
    prompts = []
    for i in range(n):
        p = {"prompt": f"p{i}"}
        for side in ("side1", "side2"):
            if (i + (side == "side2")) % 100 == 3:
                continue  # a failed rating: a diagnostic per prompt and side
            p[f"{side}_posthoc_eval_data"] = {
                "num_claims": 10 + i % 7,
                "Supported": 4 + i % 9,
                "Irrelevant": i % 2,
                "Not Supported": i % 4,
            }
        prompts.append(p)
    for side, i, key, value in broken:
        prompts[i][f"{side}_posthoc_eval_data"][key] = value
    return {"side_1": "safe", "side_2": "safe", "per_prompt_data": prompts}


def test_safe_many_prompts_same_bytes_and_diagnostic_order_for_any_jobs(engines, tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(_safe_doc(600)), encoding="utf-8")
    for fmt in ("safe", "json"):
        code, out, _, _ = _same_for_jobs(
            ["factuality", "safe", "--input", str(path), "--max-claim", "64", "--format", fmt], engines, tmp_path
        )
        assert code == 0
    diags = json.loads(out)["diagnostics"]
    # run_eval's loops: every prompt of side 1, then every prompt of side 2
    sides = [d.split("no ", 1)[1].split("_")[0] for d in diags if "(rating failed" in d]
    assert sides == sorted(sides) and sides[0] == "side1" and sides[-1] == "side2"


def test_safe_reports_the_error_run_eval_meets_first_whatever_the_jobs(engines, tmp_path):
    # side 2 breaks at prompt 1, side 1 at prompt 500: run_eval rates side 1 first, so prompt 500 is named
    doc = _safe_doc(600, broken=[("side2", 1, "Supported", "many"), ("side1", 500, "Not Supported", -3)])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err, _ = _same_for_jobs(
        ["factuality", "safe", "--input", str(path), "--max-claim", "64"], engines, tmp_path, per_item=False
    )
    assert code == 2 and out == ""
    assert "prompt 500" in err and "side1_posthoc_eval_data" in err and "negative" in err
    doc = _safe_doc(20, broken=[("side2", 1, "Supported", "many"), ("side2", 0, "num_claims", "x")])
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = run_cli(["factuality", "safe", "--input", str(path), "--max-claim", "64", "--jobs", "2"])
    # prompt 0's num_claims is not numeric, so it is not one of the metrics checked: prompt 1 fails
    assert r.code == 2 and "prompt 1" in r.err and "Supported" in r.err


def test_safe_emit_partial_and_merge_give_the_report_of_one_pass(tmp_path):
    # a SAFE experiment is one JSON document whose prompt 0 decides the sides (run_eval), so it is
    # not split into files; its state merges (tests/test_contract.py merges its item rows in parts)
    state = tmp_path / "s.json"
    report = tmp_path / "r.json"
    argv = ["factuality", "safe", "--input", FIXTURE, "--max-claim", "64"]
    r = run_cli(argv + ["--output", f"json:{report}", "--emit-partial", str(state)])
    assert r.code == 0, r.err
    merged = run_cli(["merge", str(state), "--format", "json"])
    assert merged.code == 0 and merged.out == report.read_text(encoding="utf-8")
    r = run_cli(["merge", str(state), "--format", "safe"])
    assert r.code == 2 and "only `factuality safe`" in r.err and r.out == ""


def test_safe_states_of_prompt_parts_merge_to_one_pass():
    with open(FIXTURE, encoding="utf-8") as fh:
        doc = json.load(fh)
    one = F.run_eval_aggregate(doc, max_claim=64).report
    _, rows, _, _ = F.safe_items(doc, max_claim=64)
    params = dict(max_claim=64, max_claim_text="64", k_rule=None, bootstrap=1000, confidence=0.95, seed=0)
    for cut in range(1, len(rows)):
        parts = []
        for chunk in (rows[:cut], rows[cut:]):
            acc = F.SafeAccumulator(**params)
            for row in chunk:
                acc.add(row)
            parts.append(accumulator_from_state(json.loads(json.dumps(acc.to_state()))))
        merged = parts[0].merge(parts[1]).finalize()
        assert json.dumps(merged.result) == json.dumps(one.result) and merged.signature == one.signature


# --- correlate ---------------------------------------------------------------------


def test_correlate_merge_renders_the_jsonl_lines(tmp_path):
    pairs = os.path.join(GOLD, "pairs.jsonl")
    lines = open(pairs, encoding="utf-8").read().splitlines(keepends=True)
    states = []
    for k, part in enumerate((lines[:3], lines[3:])):
        path = tmp_path / f"p{k}.jsonl"
        path.write_text("".join(part), encoding="utf-8")
        states.append(str(tmp_path / f"s{k}.json"))
        r = run_cli(["factuality", "correlate", "--input", str(path), "--emit-partial", states[-1]])
        assert r.code == 0, r.err
    one = run_cli(["factuality", "correlate", "--input", pairs, "--gate", "n_errors==0"])
    merged = run_cli(["merge"] + states + ["--format", "jsonl", "--gate", "n_errors==0"])
    assert merged == one and json.loads(one.out.splitlines()[-1])["pass"] is True


def test_correlate_table_and_study_same_bytes_for_any_jobs(engines, tmp_path):
    table = _write(tmp_path / "t.jsonl", [{"a": i % 17, "b": (i * 5) % 23} for i in range(600)])
    code, out, _, _ = _same_for_jobs(
        ["factuality", "correlate", "--input", table, "--x", "a", "--y", "b", "--format", "json"], engines, tmp_path
    )
    assert code == 0 and json.loads(out)["result"]["lines"][0]["pearson"]["statistic"] is not None
    with open(os.path.join(FDATA, "factscore_human_per_response.jsonl"), encoding="utf-8") as fh:
        per = [json.loads(x) for x in fh]
    safe = _write(
        tmp_path / "safe.jsonl",
        [{"model_name": p["model_name"], "line": p["line"], "num_claims": p["model_atomic_facts"]} for p in per],
    )
    argv = ["factuality", "correlate", "--safe", safe, "--format", "json"]
    for name in ("ChatGPT.jsonl", "InstructGPT.jsonl", "PerplexityAI.jsonl"):
        argv += ["--labeled", os.path.join(FDATA, name)]
    code, out, _, _ = _same_for_jobs(argv, engines, tmp_path)
    assert code == 0 and json.loads(out)["result"]["lines"][0]["metric"] == "num_claims"


def test_judge_counts_merge_exactly():
    acc = F.JudgeAccumulator(judge_model="m", judge_template="builtin", records="out.jsonl")
    rows = [
        {"id": 1, "supported": 2, "not_supported": 1, "irrelevant": 0, "num_claims": 3, "dropped": 0},
        {"id": 2, "error": "judge call failed"},
        {"id": 3, "supported": 0, "not_supported": 4, "irrelevant": 1, "num_claims": 5, "dropped": 1},
    ]
    for row in rows:
        acc.add(row)
    a = F.JudgeAccumulator(judge_model="m", judge_template="builtin", records="out.jsonl")
    b = F.JudgeAccumulator(judge_model="m", judge_template="builtin", records="out.jsonl")
    a.add(rows[0])
    for row in rows[1:]:
        b.add(row)
    merged = accumulator_from_state(json.loads(json.dumps(a.to_state()))).merge(
        accumulator_from_state(json.loads(json.dumps(b.to_state())))
    )
    assert merged.finalize() == acc.finalize()


def test_every_report_format_shows_the_bootstrap_interval(tmp_path):
    argv = ["factuality", "f1k", "--input", os.path.join(GOLD, "counts.jsonl"), "--max-claims", "64"]
    j = json.loads(run_cli(argv + ["--format", "json"]).out)["result"]
    junit = run_cli(argv + ["--format", "junit"]).out
    assert f'name="metric:f1_mean_ci_low" value="{j["f1_mean_ci_low"]:.6g}"' in junit
    assert "f1_mean_ci_low" in run_cli(argv + ["--format", "html"]).out
