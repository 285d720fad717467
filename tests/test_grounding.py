"""Grounding family: the reference's conformance vectors, crash paths, variants and gates."""

import json
import os

import pytest
from conftest import DATA, run_cli

from rageval_min import grounding
from rageval_min.errors import ScoringError

WFGY = os.path.join(DATA, "wfgy")


def _cases():
    with open(os.path.join(WFGY, "score_eval_edge_cases.jsonl"), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


CASES = _cases()


def _write_case(tmp_path, case):
    paths = []
    for name, key in (("gold.jsonl", "gold_lines"), ("trace.jsonl", "trace_lines")):
        lines = case[key]
        text = "\n".join(lines) + "\n" if lines else ""
        if case.get("gold_bytes_hex_prefix") and key == "gold_lines":
            text = "".join(lines)  # the BOM line already ends with a newline
        path = tmp_path / name
        path.write_bytes(text.encode("utf-8"))
        paths.append(str(path))
    return paths


def _argv(case, gold, trace, fmt="wfgy"):
    argv = ["grounding", "--gold", gold, "--trace", trace, "--format", fmt]
    if case["k"] is not None:
        argv += ["--k", str(case["k"])]
    if case["gates_arg"] is not None:
        argv += ["--gates", case["gates_arg"]]
    return argv


def test_vector_count():
    assert len(CASES) == 23


@pytest.mark.parametrize("case", [c for c in CASES if "expected_stdout" in c], ids=lambda c: c["name"])
def test_reference_stdout_byte_for_byte(tmp_path, case):
    gold, trace = _write_case(tmp_path, case)
    r = run_cli(_argv(case, gold, trace))
    assert r.out == case["expected_stdout"]
    # The reference always exits 0; we exit 1 when its own gates fail, naming the failed one on stderr.
    assert r.code == (0 if case["expected"]["pass"] else 1)
    if case["expected"]["pass"]:
        assert r.err == ""
    else:
        assert r.err.count("\n") == 1 and r.err.startswith("gate ") and " failed: " in r.err


# What each reference crash becomes: a one-line error naming the place (exit 2).
CRASH_MESSAGES = {
    "gate_missing_key_reached_raises": "--gates has no 'chr' gate",
    "gate_bad_pair_raises": "--gates item 'precision=0.8=1'",
    "claim_number_raises": "trace.jsonl:1: qid='a1': answer_json.claim: must be a string, got int",
    "gold_file_with_utf8_bom_raises": "gold.jsonl:1: starts with a UTF-8 byte order mark",
}


@pytest.mark.parametrize("case", [c for c in CASES if "expected_error" in c], ids=lambda c: c["name"])
def test_reference_crash_paths_are_clear_errors(tmp_path, case):
    gold, trace = _write_case(tmp_path, case)
    for fmt in ("wfgy", "json"):
        r = run_cli(_argv(case, gold, trace, fmt))
        assert r.code == 2
        assert r.out == ""
        assert CRASH_MESSAGES[case["name"]] in r.err
        assert "Traceback" not in r.err
        assert len(r.err.strip().splitlines()) == 1


def test_bom_tolerant_variant_reads_the_bom_case(tmp_path):
    case = next(c for c in CASES if c["name"] == "gold_file_with_utf8_bom_raises")
    gold, trace = _write_case(tmp_path, case)
    r = run_cli(_argv(case, gold, trace, "json") + ["--variant", "bom_tolerant"])
    assert r.code in (0, 1)
    out = json.loads(r.out)
    assert "variants=bom_tolerant" in out["signature"]


def test_page_sample_files(tmp_path):
    r = run_cli(
        [
            "grounding",
            "--gold",
            os.path.join(WFGY, "sample_gold.jsonl"),
            "--trace",
            os.path.join(WFGY, "sample_trace.jsonl"),
            "--k",
            "5",
            "--format",
            "wfgy",
        ]
    )
    with open(os.path.join(WFGY, "sample_expected_output.json"), encoding="utf-8") as fh:
        assert r.out == fh.read()
    assert r.code == 0


def _w(tmp_path, name, records):
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(p)


GOLD1 = {"qid": "q1", "answerable": True, "gold_claim_substr": ["paris"], "gold_citations": ["d1"]}
TRACE1 = {"qid": "q1", "retrieved_ids": ["d1"], "answer_json": {"claim": "Paris.", "citations": ["d1"]}}


@pytest.mark.parametrize(
    "gold,trace,needle",
    [
        ({"question": "no qid"}, TRACE1, "gold.jsonl:1: qid: missing"),
        ({"qid": ["x"], "answerable": True}, TRACE1, "gold.jsonl:1: qid: must be a string or number, got list"),
        (GOLD1, dict(TRACE1, answer_json=["x"]), "trace.jsonl:1: qid='q1': answer_json: must be an object, got list"),
        (
            dict(GOLD1, gold_claim_substr=["paris", 5]),
            dict(TRACE1, answer_json={"claim": "nope", "citations": ["d1"]}),
            "gold.jsonl:1: qid='q1': gold_claim_substr: must be a list of strings",
        ),
        (
            GOLD1,
            dict(TRACE1, answer_json={"claim": "Paris", "citations": [["d1"]]}),
            "trace.jsonl:1: qid='q1': answer_json.citations: element 0 is a list",
        ),
        (dict(GOLD1, gold_citations=[{"a": 1}]), TRACE1, "gold.jsonl:1: qid='q1': gold_citations: element 0 is a dict"),
        (GOLD1, dict(TRACE1, retrieved_ids=7), "trace.jsonl:1: qid='q1': retrieved_ids: expected a list, got int"),
        (GOLD1, [1, 2], "trace.jsonl:1: expected a JSON object, got list"),
    ],
)
def test_crash_table(tmp_path, gold, trace, needle):
    r = run_cli(
        ["grounding", "--gold", _w(tmp_path, "gold.jsonl", [gold]), "--trace", _w(tmp_path, "trace.jsonl", [trace])]
    )
    assert r.code == 2, r
    assert needle in r.err
    assert "Traceback" not in r.err


def test_gate_value_not_a_number_when_reached(tmp_path):
    g, t = _w(tmp_path, "g.jsonl", [GOLD1]), _w(tmp_path, "t.jsonl", [TRACE1])
    r = run_cli(["grounding", "--gold", g, "--trace", t, "--gates", "precision=high,chr=0,under=1,over=1"])
    assert r.code == 2 and "precision='high': not a number" in r.err
    # Not reached: precision fails first, so a bad later gate is no error (reference behaviour).
    bad = dict(TRACE1, answer_json={"claim": "London", "citations": ["d1"]})
    t2 = _w(tmp_path, "t2.jsonl", [bad])
    r = run_cli(["grounding", "--gold", g, "--trace", t2, "--gates", "precision=0.9,chr=x", "--format", "wfgy"])
    assert r.code == 1
    assert json.loads(r.out)["pass"] is False


def test_k_must_be_an_int(tmp_path):
    g, t = _w(tmp_path, "g.jsonl", [GOLD1]), _w(tmp_path, "t.jsonl", [TRACE1])
    r = run_cli(["grounding", "--gold", g, "--trace", t, "--k", "five"])
    assert r.code == 2 and "--k" in r.err and "invalid int value" in r.err


def test_negative_k_slices_from_the_end():
    gold = [dict(GOLD1, gold_citations=["d2"])]
    trace = [dict(TRACE1, retrieved_ids=["d2", "d1"], answer_json={"claim": "Paris", "citations": []})]
    assert grounding.score(gold, trace, k=-1).recall_at_k == 1.0  # ["d2","d1"][:-1] == ["d2"]
    assert grounding.score(gold, trace, k=0).recall_at_k == 0.0


def test_missing_trace_is_a_shipped_empty_answer_with_diagnostic():
    gold = [GOLD1, {"qid": "q2", "answerable": False, "gold_claim_substr": [], "gold_citations": []}]
    s = grounding.score(gold, [TRACE1])
    assert (s.answered, s.refused, s.under_refusal) == (2, 0, 1.0)
    assert s.precision == 0.5
    assert any("no trace" in d and "'q2'" in d for d in s.diagnostics)


def test_variant_chr_as_documented():
    gold = [GOLD1, {"qid": "q2", "answerable": False, "gold_claim_substr": [], "gold_citations": []}]
    trace = [TRACE1, {"qid": "q2", "retrieved_ids": [], "answer_json": {"claim": "made up", "citations": []}}]
    assert grounding.score(gold, trace).chr == 0.5
    assert grounding.score(gold, trace, variants=["chr_as_documented"]).chr == 1.0


def test_variant_refusal_relaxed():
    gold = [dict(GOLD1, answerable=False)]
    trace = [dict(TRACE1, answer_json={"claim": "Not  in context.", "citations": []})]
    assert grounding.score(gold, trace).refused == 0
    assert grounding.score(gold, trace, variants=["refusal_relaxed"]).refused == 1


def test_variant_answerable_strict(tmp_path):
    g = _w(tmp_path, "g.jsonl", [dict(GOLD1, answerable="false")])
    t = _w(tmp_path, "t.jsonl", [TRACE1])
    assert run_cli(["grounding", "--gold", g, "--trace", t]).code == 0
    r = run_cli(["grounding", "--gold", g, "--trace", t, "--variant", "answerable_strict"])
    assert r.code == 2 and "answerable: must be true or false" in r.err


def test_variant_gate_recall(tmp_path):
    trace = dict(TRACE1, retrieved_ids=["d9", "d1"], answer_json={"claim": "Paris", "citations": ["d1"]})
    g, t = _w(tmp_path, "g.jsonl", [GOLD1]), _w(tmp_path, "t.jsonl", [trace])
    base = [
        "grounding",
        "--gold",
        g,
        "--trace",
        t,
        "--k",
        "1",
        "--gates",
        "precision=0.8,chr=0.75,under=0.05,over=0.1,recall=0.9",
    ]
    assert run_cli(base).code == 0  # the reference never gates recall
    r = run_cli(base + ["--variant", "gate_recall", "--format", "json"])
    assert r.code == 1
    out = json.loads(r.out)
    assert out["result"]["pass"] is False
    assert "variants=gate_recall" in out["signature"]


def test_unknown_variant_is_usage_error(tmp_path):
    g, t = _w(tmp_path, "g.jsonl", [GOLD1]), _w(tmp_path, "t.jsonl", [TRACE1])
    r = run_cli(["grounding", "--gold", g, "--trace", t, "--variant", "nope"])
    assert r.code == 2 and "invalid choice" in r.err


def test_empty_files_are_input_errors(tmp_path):
    g = _w(tmp_path, "g.jsonl", [GOLD1])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    for argv in (["--gold", str(empty), "--trace", g], ["--gold", g, "--trace", str(empty)]):
        r = run_cli(["grounding"] + argv)
        assert r.code == 2 and "empty.jsonl: holds no records" in r.err


def test_api_score_matches_reference_rounding():
    gold = [dict(GOLD1, qid=f"q{i}") for i in range(3)]
    trace = [
        dict(TRACE1, qid="q0"),
        dict(TRACE1, qid="q1"),
        dict(TRACE1, qid="q2", answer_json={"claim": "Lyon", "citations": ["d1"]}),
    ]
    s = grounding.score(gold, trace)
    assert s.precision == 2 / 3
    out = grounding.reference_output(s, {"precision": "0.8"}, False)
    assert out["precision"] == 0.6667 and list(out)[-3:] == ["k", "gates", "pass"]
    with pytest.raises(ScoringError):
        grounding.score(gold, trace, k="5")


def test_unrelated_and_id_less_traces_are_ignored_with_diagnostics(tmp_path):
    traces = [TRACE1, dict(TRACE1, qid="other"), dict(TRACE1, qid="other2"), dict(TRACE1, qid=""), {"q": "no id"}]
    g, t = _w(tmp_path, "g.jsonl", [GOLD1]), _w(tmp_path, "t.jsonl", traces)
    r = run_cli(["grounding", "--gold", g, "--trace", t])
    out = json.loads(r.out)
    assert out["result"]["answered"] == 1 and out["result"]["precision"] == 1.0
    assert "2 trace line(s) have a qid that is not in the gold file" in " ".join(out["diagnostics"])
    assert "2 trace line(s) have no qid/q_id" in " ".join(out["diagnostics"])


def test_problems_in_both_files_are_reported_together(tmp_path):
    g = tmp_path / "g.jsonl"
    g.write_text('{"qid": "q1"}\n{"answerable": true}\n', encoding="utf-8")
    t = tmp_path / "t.jsonl"
    t.write_text('{"qid": "q1"}\nnot json\n', encoding="utf-8")
    r = run_cli(["grounding", "--gold", str(g), "--trace", str(t)])
    assert r.code == 2
    assert "g.jsonl:2: qid: missing" in r.err and "and 1 more problem" in r.err


def test_problem_count_includes_every_reader_problem(tmp_path):
    g = tmp_path / "g.jsonl"
    g.write_text('{"answerable": true}\n', encoding="utf-8")
    t = tmp_path / "t.jsonl"
    t.write_text("bad1\nbad2\nbad3\n", encoding="utf-8")
    r = run_cli(["grounding", "--gold", str(g), "--trace", str(t)])
    assert r.code == 2 and "(and 3 more problems)" in r.err and len(r.err.strip().splitlines()) == 1
