"""Exit-2 messages name the file, line and field they can name, on one printable line of bounded
length (issue #23; each test is a case the fuzz oracle of tests/test_fuzz.py found)."""

import io
import json
import os
import re

from rageval_min._io import iter_records
from rageval_min.cli import main, one_line
from rageval_min.errors import ScoringError
from rageval_min.rgb.files import resolve_noise_rate


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, err.getvalue()


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def _one_error_line(err):
    assert err.count("\n") == 1 and err.startswith("rageval-min: error: "), err
    return err


def test_one_line_describes_a_huge_number_and_escapes_control_characters():
    assert one_line("got " + "9" * 5000) == "got 99999999...9999 (5000 digits)"
    assert one_line("got " + "1" * 40) == "got " + "1" * 40  # 40 digits and fewer are echoed
    assert one_line("name a\x1b[2J\nb\ud800") == "name a\\x1b[2J\\x0ab\\ud800"
    long = one_line("label " + "a" * 2000)
    assert long.endswith("(2000 characters)") and len(long) < 200
    assert one_line("gold.jsonl:3: k: must be an integer, got '12'") == "gold.jsonl:3: k: must be an integer, got '12'"


def test_a_5000_digit_option_is_described_not_echoed():
    code, err = _run(["grounding", "--gold", "x", "--trace", "y", "--k", "9" * 5000])
    assert code == 2 and "(5000 digits)" in _one_error_line(err) and not re.search("[0-9]{41}", err), err


def test_a_control_character_in_a_path_is_escaped(tmp_path):
    code, err = _run(["grounding", "--gold", str(tmp_path / "a\x1b[31mb\rc.jsonl"), "--trace", "y"])
    assert code == 2 and "\\x1b[31mb\\x0dc.jsonl" in _one_error_line(err), err
    assert not any(ord(c) < 32 for c in err.rstrip("\n")), err


def test_demo_cases_json_names_the_line_where_the_json_breaks(tmp_path):
    folder = tmp_path / "samples" / "grounding"
    folder.mkdir(parents=True)
    _write(folder / "cases.json", ["[", '  {"name": "x",', '   "argv": [}', "]"])
    code, err = _run(["demo", "--samples", tmp_path / "samples"])
    assert code == 2 and re.search(r"cases\.json:3: cannot read the cases: .* at column", _one_error_line(err)), err


def test_a_tsv_record_is_named_by_the_line_it_starts_on(tmp_path):
    # line 2 opens a quoted cell that runs to line 4: the record has 3 columns, the header 2
    path = _write(tmp_path / "t.tsv", ["a\tb", '1\t"x', "y", 'z"\t3', "4\t5"])
    try:
        list(iter_records(path))
    except ScoringError as exc:
        assert str(exc).startswith(f"{path}:2: has 3 columns"), str(exc)
    else:
        raise AssertionError("no error")
    ok = _write(tmp_path / "ok.tsv", ["a\tb", '1\t"x', 'y"', "4\t5"])
    assert [line for line, _ in iter_records(ok)] == [2, 4]


def test_rgb_disagreeing_noise_rates_name_the_line_and_field(tmp_path):
    rows = [{"id": i, "noise_rate": nr} for i, nr in enumerate((0.4, 0.4, 1.0))]
    path = _write(tmp_path / "p.json", [json.dumps(r) for r in rows])
    try:
        resolve_noise_rate(path)
    except ScoringError as exc:
        assert str(exc) == (
            f"{path}:3: noise_rate: records have different noise_rate values [0.4 at line 1, 1.0]; pass --noise-rate"
        )
    else:
        raise AssertionError("no error")
    same = _write(tmp_path / "q.json", [json.dumps(r) for r in rows[:2]])
    assert resolve_noise_rate(same) == 0.4


def test_veriscore_negative_count_names_its_field(tmp_path):
    rows = ['{"model": "m", "domain": "bio", "supported": 3, "total_claims": 9}']
    rows.append('{"model": "m", "domain": "bio", "supported": 3, "total_claims": -1}')
    path = _write(tmp_path / "v.jsonl", rows)
    code, err = _run(["factuality", "veriscore", "--input", path])
    assert code == 2 and "v.jsonl:2: total_claims: counts must not be negative" in _one_error_line(err), err


def test_factuality_judge_bad_record_names_its_line(tmp_path):
    rows = ['{"id": "r0", "prompt": "p", "response": "r"}', "", '{"id": "r1", "prompt": "p", "response": 3}']
    path = _write(tmp_path / "responses.jsonl", rows)
    cache = _write(tmp_path / "cache.jsonl", [])
    argv = ["factuality", "judge", "--input", path, "--records", tmp_path / "out.jsonl", "--judge", "replay:" + cache]
    code, err = _run(argv)
    assert code == 2 and "responses.jsonl:3: id=r1: response: missing or not a string" in _one_error_line(err), err
    assert not os.path.exists(tmp_path / "out.jsonl")


def test_judge_agreement_label_outside_the_order_names_its_line(tmp_path):
    judge = _write(tmp_path / "j.jsonl", ['{"id": "a", "label": "yes"}', '{"id": "b", "label": "no"}'])
    human = _write(tmp_path / "h.jsonl", ['{"id": "a", "label": "yes"}', "", '{"id": "b", "label": "maybe"}'])
    code, err = _run(["judge", "agreement", "--judge", judge, "--human", human, "--labels", "no,yes"])
    assert code == 2 and "h.jsonl:3: id='b': label 'maybe' is not in" in _one_error_line(err), err


def test_grounding_retrieved_ids_not_a_list_names_the_trace_line(tmp_path):
    gold = os.path.join(os.path.dirname(__file__), "..", "gold_samples", "grounding", "gold.jsonl")
    rows = ['{"qid": "g1", "retrieved_ids": {"a": 1}, "answer_json": {"claim": "x", "citations": []}}']
    trace = _write(tmp_path / "trace.jsonl", rows)
    code, err = _run(["grounding", "--gold", gold, "--trace", trace])
    assert code == 2 and "trace.jsonl:1: " in _one_error_line(err) and "retrieved_ids: must be a list" in err, err


def test_compare_provenance_errors_name_the_line_and_field(tmp_path):
    said = _write(tmp_path / "a.jsonl", ['{"qid": "q1", "_rageval_min": "grounding score 0123456789ab", "f1": 1}'])
    silent = _write(tmp_path / "b.jsonl", ["", '{"qid": "q1", "f1": 1}'])
    code, err = _run(["compare", "--baseline", said, "--candidate", silent, "--key", "qid"])
    assert code == 2 and "b.jsonl:2: _rageval_min: only one file says" in _one_error_line(err), err
    other = _write(tmp_path / "c.jsonl", ['{"qid": "q1", "_rageval_min": "rouge score 0123456789ab", "f1": 1}'])
    code, err = _run(["compare", "--baseline", said, "--candidate", other, "--key", "qid"])
    assert code == 2 and "c.jsonl:1: _rageval_min: the files were written by different commands" in err, err
    assert "a.jsonl:1)" in _one_error_line(err), err


def test_merge_of_states_with_different_options_names_the_state(tmp_path):
    gold = os.path.join(os.path.dirname(__file__), "..", "gold_samples", "grounding")
    states = []
    for k in ("3", "5"):
        state = str(tmp_path / f"s{k}.json")
        argv = ["grounding", "--gold", os.path.join(gold, "gold.jsonl"), "--trace", os.path.join(gold, "trace.jsonl")]
        assert _run(argv + ["--k", k, "--emit-partial", state, "--output", os.devnull])[0] in (0, 1)
        states.append(state)
    code, err = _run(["merge"] + states)
    assert code == 2 and "s5.json: cannot merge grounding states made with different options" in _one_error_line(err)
    assert "(merging it into " in err and "s3.json)" in err, err


def test_a_non_finite_value_that_reaches_a_partial_state_names_the_input(tmp_path):
    """correlate keeps each pair's id in its partial state, which is strict JSON: an id read as
    Infinity cannot be written there; the one error line names the input (it named no file)."""
    pairs = _write(tmp_path / "pairs.jsonl", ['{"id": Infinity, "x": [1, 2, 3], "y": [2, 1, 3]}'])
    state = tmp_path / "state.json"
    code, err = _run(["factuality", "correlate", "--input", pairs, "--emit-partial", state])
    assert code == 2 and f"{pairs}: a value read from it is NaN or infinity" in _one_error_line(err), err
    assert not state.exists()
    code, err = _run(["factuality", "correlate", "--input", pairs])  # without a state: as the reference reads it
    assert code == 0, err
