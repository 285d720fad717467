"""`rageval-min judge agreement`: exit codes, min-n, gates on interval bounds, family records, calibration."""

import json
import os

import pytest
from conftest import ROOT, need, run_cli

from rageval_min.errors import ScoringError
from rageval_min.judges import agreement as ag
from rageval_min.judges.agreement_report import metric_names
from rageval_min.judges.calibration import check_calibration, template_hash

G = os.path.join(ROOT, "gold_samples")
JUDGE = os.path.join(G, "judge", "agreement_judge.jsonl")
HUMAN = os.path.join(G, "judge", "agreement_human.jsonl")
RATINGS = os.path.join(G, "judge", "agreement_ratings.jsonl")
ORDINAL = ["--level", "ordinal", "--labels", "no,partial,yes"]


def _lines(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _write(path, rows):
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    return str(path)


def _agreement(*argv):
    return run_cli(["judge", "agreement", *argv])


def test_gold_sample_report_matches_the_statistics():
    code, out, err = _agreement("--judge", JUDGE, "--human", HUMAN, *ORDINAL)
    assert code == 0, err
    report = json.loads(out)
    r = report["result"]
    judge = {x["id"]: x["label"] for x in _lines(JUDGE)}
    human = [(x["id"], x["label"]) for x in _lines(HUMAN)]
    a, b = [judge[i] for i, _ in human], [lab for _, lab in human]
    order = ["no", "partial", "yes"]
    assert r["status"] == "ok" and r["n"] == 40 and r["raters"] == 2
    assert r["kappa"] == ag.cohen_kappa(a, b, domain=order)
    assert r["kappa_quadratic"] == ag.cohen_kappa(a, b, weights="quadratic", domain=order)
    assert r["alpha"] == ag.krippendorff_alpha([[x, y] for x, y in zip(a, b)], "ordinal", order)
    assert r["confusion_matrix"]["counts"] == ag.confusion_matrix(a, b, order)
    assert sum(row["human"] for row in r["base_rates"]) == pytest.approx(1.0)
    for name in ("kappa", "alpha", "fleiss_kappa"):
        lo, hi = r["intervals"][name]["low"], r["intervals"][name]["high"]
        assert lo <= r[name] <= hi
    assert "NaN" not in out and "Infinity" not in out


def test_gold_sample_agrees_with_the_reference_packages():
    metrics = need("sklearn.metrics", "dev", "the test extra: pip install scikit-learn")
    code, out, _ = _agreement("--judge", JUDGE, "--human", HUMAN)
    r = json.loads(out)["result"]
    judge = {x["id"]: x["label"] for x in _lines(JUDGE)}
    human = [(x["id"], x["label"]) for x in _lines(HUMAN)]
    a, b = [judge[i] for i, _ in human], [lab for _, lab in human]
    assert r["kappa"] == metrics.cohen_kappa_score(a, b)
    assert r["raw_agreement"] == metrics.accuracy_score(a, b)


def test_gates_on_values_and_interval_bounds():
    base = ["--judge", JUDGE, "--human", HUMAN, *ORDINAL]
    code, _, err = _agreement(*base, "--gate", "kappa_quadratic>=0.6", "--gate", "kappa.ci_low>=0.5")
    assert code == 0, err
    code, _, err = _agreement(*base, "--gate", "alpha.ci_high>=0.999")
    assert code == 1 and "alpha.ci_high>=0.999" in err
    code, _, err = _agreement(*base, "--gate", "n>=41")
    assert code == 1 and "n>=41" in err
    code, _, err = _agreement(*base, "--gate", "kapa>=0.6")  # unknown name: usage error
    assert code == 2 and "kapa" in err
    assert "fleiss_kappa_randolph.ci_low" in metric_names()


def test_min_n_is_a_failed_status_never_a_pass(tmp_path):
    rows = _lines(HUMAN)[:12]
    human = _write(tmp_path / "h.jsonl", rows)
    code, out, err = _agreement("--judge", JUDGE, "--human", human, "--gate", "kappa>=-1")
    report = json.loads(out)
    assert code == 1 and report["result"]["status"] == "insufficient data" and report["pass"] is False
    assert "n>=30" in err
    code, out, err = _agreement("--judge", JUDGE, "--human", human, "--min-n", "12")
    assert code == 0, err


def test_several_raters_with_missing_ratings():
    code, out, err = _agreement("--judge", JUDGE, "--ratings", RATINGS, *ORDINAL)
    assert code == 0, err
    r = json.loads(out)["result"]
    judge = {x["id"]: x["label"] for x in _lines(JUDGE)}
    units = [[judge[x["id"]]] + x["labels"] for x in _lines(RATINGS)]
    assert r["raters"] == 4
    assert r["alpha"] == ag.krippendorff_alpha(units, "ordinal", ["no", "partial", "yes"])
    complete = [u for u in units if None not in u]
    assert r["fleiss_items"] == len(complete) < len(units)
    table = ag.fleiss_table(complete, ["no", "partial", "yes"])
    assert r["fleiss_kappa"] == ag.fleiss_kappa(table) and r["fleiss_kappa_randolph"] == ag.fleiss_kappa(
        table, "randolph"
    )
    assert r["no_reference"] == r["items"] - r["n"]


def test_bootstrap_is_seeded():
    base = ["--judge", JUDGE, "--human", HUMAN, "--resamples", "200"]
    one, two = _agreement(*base)[1], _agreement(*base)[1]
    other = _agreement(*base, "--seed", "1")[1]
    assert one == two and json.loads(one)["result"]["intervals"] != json.loads(other)["result"]["intervals"]


def test_family_records_rgb_mtrag_pairwise(tmp_path):
    rgb = os.path.join(G, "rgb", "expected_judged_reject.jsonl")
    labels = _write(tmp_path / "rgb_h.jsonl", [{"id": r["id"], "label": r["id"] < 2} for r in _lines(rgb)])
    code, out, err = _agreement("--judge", rgb, "--from", "rgb-reject", "--human", labels, "--min-n", "1")
    assert code == 0, err
    r = json.loads(out)["result"]
    assert r["labels"] == [0, 1] and r["raw_agreement"] == 1.0  # booleans are labels 0 and 1
    mtrag = os.path.join(G, "mtrag", "judged.jsonl")
    tasks = [x["task_id"] for x in _lines(mtrag)]
    labels = _write(tmp_path / "mt_h.jsonl", [{"id": t, "label": 1} for t in tasks])
    code, out, err = _agreement("--judge", mtrag, "--from", "mtrag-idk", "--human", labels, "--min-n", "1")
    assert code == 0, err
    assert json.loads(out)["result"]["labels"] == [0, 0.5, 1]
    pw = os.path.join(G, "pairwise", "record_fakejudge_2.tsv")
    ids = sorted({line.split("\t")[0].strip('"') for line in open(pw, encoding="utf-8") if ";" in line.split("\t")[0]})
    labels = _write(tmp_path / "pw_h.jsonl", [{"id": i, "label": "A"} for i in ids])
    code, out, err = _agreement(
        "--judge", pw, "--from", "pairwise", "--judge-label-field", "fakejudge", "--human", labels, "--min-n", "1"
    )
    assert code == 0, err
    r = json.loads(out)["result"]
    assert r["judge_missing"] > 0 and set(r["labels"]) <= {"A", "B", "C", "D"}


def test_input_errors_exit_2_naming_file_line_and_field(tmp_path):
    bad = _write(tmp_path / "bad.jsonl", [{"id": "r01", "label": "yes"}, {"id": "r02", "label": [1]}])
    code, _, err = _agreement("--judge", bad, "--human", HUMAN)
    assert code == 2 and err.count("\n") == 1 and "bad.jsonl:2: label" in err
    dup = _write(tmp_path / "dup.jsonl", [{"id": "r01", "label": "yes"}, {"id": "r01", "label": "no"}])
    code, _, err = _agreement("--judge", JUDGE, "--human", dup)
    assert code == 2 and "dup.jsonl:2: id: duplicate" in err
    other = _write(tmp_path / "other.jsonl", [{"id": "x", "label": "yes"}])
    code, _, err = _agreement("--judge", JUDGE, "--human", other)
    assert code == 2 and "no id of the labels file" in err
    code, _, err = _agreement("--judge", JUDGE, "--human", HUMAN, "--level", "interval")
    assert code == 2 and "numeric" in err
    code, _, err = _agreement("--judge", JUDGE, "--human", HUMAN, "--labels", "no,yes")
    assert code == 2 and "partial" in err
    mixed = _write(tmp_path / "mixed.jsonl", [{"id": "r01", "label": 1}, {"id": "r02", "label": "no"}])
    code, _, err = _agreement("--judge", JUDGE, "--human", mixed)
    assert code == 2 and "--labels" in err
    uneven = _write(tmp_path / "uneven.jsonl", [{"id": "r01", "labels": ["no", None]}, {"id": "r02", "labels": ["no"]}])
    code, _, err = _agreement("--judge", JUDGE, "--ratings", uneven)
    assert code == 2 and "uneven.jsonl:2: labels" in err
    code, _, err = _agreement("--judge", JUDGE, "--human", HUMAN, "--alpha", "1.5")
    assert code == 2


def test_calibration_record_and_check(tmp_path):
    cal = str(tmp_path / "cal.json")
    base = ["--judge", JUDGE, "--human", HUMAN, *ORDINAL, "--judge-spec", "http://127.0.0.1:9/v1"]
    code, _, err = _agreement(*base, "--emit-calibration", cal)
    assert code == 2 and "--judge-model" in err and not os.path.exists(cal)
    base += ["--judge-model", "m1", "--emit-calibration", cal]
    code, _, err = _agreement(*base, "--gate", "kappa_quadratic>=0.6")
    assert code == 0, err
    record = json.load(open(cal, encoding="utf-8"))
    assert record["judge"] == {"spec": "http://127.0.0.1:9/v1", "model": "m1", "template_hash": "builtin"}
    assert record["pass"] is True and record["status"] == "ok"
    assert [g["gate"] for g in record["gates"]] == ["n>=30", "kappa_quadratic>=0.6"]
    from rageval_min.judges.agreement_report import file_sha256

    sha = file_sha256(HUMAN)
    assert record["labels"]["sha256"] == sha
    ok = dict(spec="http://127.0.0.1:9/v1", model="m1", template_hash="builtin")
    check_calibration(cal, **ok, labels_sha256=sha, require=["kappa_quadratic>=0.9"])
    for change, field in (({"model": "m2"}, "judge.model"), ({"template_hash": "abc"}, "judge.template_hash")):
        with pytest.raises(ScoringError, match=field):
            check_calibration(cal, **dict(ok, **change))
    with pytest.raises(ScoringError, match="labels.sha256"):
        check_calibration(cal, **ok, labels_sha256="0" * 64)
    with pytest.raises(ScoringError, match="alpha>=0.99"):
        check_calibration(cal, **ok, require=["alpha>=0.99"])
    # an edited verdict does not count: the record's own gates are re-evaluated on its metrics
    record["gates"].append({"gate": "kappa>=0.95", "passed": True})
    json.dump(record, open(cal, "w", encoding="utf-8"))
    with pytest.raises(ScoringError, match="kappa>=0.95"):
        check_calibration(cal, **ok)


def test_calibration_of_a_failed_run_is_refused(tmp_path):
    cal = str(tmp_path / "cal.json")
    tpl = tmp_path / "t.txt"
    tpl.write_text("Judge {ANSWER}\n", encoding="utf-8")
    argv = ["--judge", JUDGE, "--human", HUMAN, "--judge-spec", "s", "--judge-model", "m", "--emit-calibration", cal]
    code, _, _ = _agreement(*argv, "--judge-template", str(tpl), "--gate", "kappa>=0.99")
    assert code == 1
    ok = dict(spec="s", model="m", template_hash=template_hash(str(tpl)))
    assert len(ok["template_hash"]) == 12
    with pytest.raises(ScoringError, match="did not pass"):
        check_calibration(cal, **ok)
    with pytest.raises(ScoringError, match="not a calibration record"):
        check_calibration(JUDGE, **ok)
    code, _, err = _agreement(*argv[:-1], JUDGE)
    assert code == 2 and "refusing" in err


def test_the_calibration_example_of_docs_judges_md_runs(tmp_path):
    import re
    import shlex

    with open(os.path.join(ROOT, "docs", "judges.md"), encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("## Calibrating a judge against human labels", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    commands = [c for c in block.replace("\\\n", " ").splitlines() if c.startswith("rageval-min ")]
    assert len(commands) == 2 and len(block.splitlines()) <= 10
    cal = str(tmp_path / "calibration.json")
    for command in commands:
        command = command.replace("$S", os.path.join(G, "judge")).replace("calibration.json", cal)
        code, out, err = run_cli(shlex.split(command)[1:])
        assert code == 0, (command, err)
    check_calibration(cal, spec="http://127.0.0.1:8000/v1", model="judge-small", template_hash="builtin")
