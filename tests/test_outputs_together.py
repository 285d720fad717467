"""All the outputs of one run are committed together, or none (issue #23 item 5).

A command writes each output (``--output`` as many times as given, ``--per-item``, ``--emit-partial``,
``--records``) to a temporary next to it; the temporaries are renamed into place only when the whole
run has succeeded.  When one output cannot be written, the run is exit 2 with one line, no output of
the run appears, files already at those paths keep their bytes, and no temporary is left behind.
"""

import io
import os
import pathlib

import pytest
from conftest import ROOT, run_cli, run_subprocess

GOLD = os.path.join(ROOT, "gold_samples", "grounding", "gold.jsonl")
TRACE = os.path.join(ROOT, "gold_samples", "grounding", "trace.jsonl")
MTRAG_TASKS = os.path.join(ROOT, "gold_samples", "mtrag", "tasks.jsonl")
BASE = ["grounding", "--gold", GOLD, "--trace", TRACE, "--gate", "chr>=0"]


#: How an output can fail: found before any work (the first two), or only when it is written (the others).
HOW = ["missing directory", "parent is a file", "read-only directory", "a file system without new files"]


def _unwritable(tmp_path, how):
    if how == "missing directory":
        return tmp_path / "no_such_dir" / "b.xml"
    if how == "parent is a file":
        blocker = tmp_path / "a_file"
        blocker.write_text("not a directory\n", encoding="utf-8")
        return blocker / "b.xml"
    if how == "read-only directory":
        if os.geteuid() == 0:
            pytest.skip("a read-only directory does not stop root")
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        return locked / "b.xml"
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc file system here")
    return pathlib.Path("/proc/rageval-min-test-b.xml")  # the directory exists, but no file can be made there


def _leftovers(tmp_path):
    return sorted(p.name for p in tmp_path.rglob("*") if p.name.startswith(".rageval-"))


@pytest.mark.parametrize("how", HOW)
def test_second_output_unwritable_leaves_neither(tmp_path, how):
    first, second = tmp_path / "a.json", _unwritable(tmp_path, how)
    items, state = tmp_path / "items.jsonl", tmp_path / "state.json"
    argv = BASE + ["--per-item", str(items), "--emit-partial", str(state)]
    r = run_cli(argv + ["--output", f"json:{first}", "--output", f"junit:{second}"])
    assert r.code == 2 and r.err.count("\n") == 1 and str(second) in r.err, r.err
    assert not first.exists() and not second.exists() and not items.exists() and not state.exists()
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("how", HOW)
def test_files_already_there_keep_their_bytes(tmp_path, how):
    first, items = tmp_path / "a.json", tmp_path / "items.jsonl"
    first.write_text("old report\n", encoding="utf-8")
    items.write_text("old items\n", encoding="utf-8")
    second = _unwritable(tmp_path, how)
    r = run_cli(BASE + ["--per-item", str(items), "--output", f"json:{first}", "--output", f"junit:{second}"])
    assert r.code == 2 and r.err.count("\n") == 1
    assert first.read_text(encoding="utf-8") == "old report\n"
    assert items.read_text(encoding="utf-8") == "old items\n"
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("how", HOW)
def test_records_file_is_part_of_the_run(tmp_path, how):
    records, report = tmp_path / "records.jsonl", _unwritable(tmp_path, how)
    r = run_cli(["mtrag", "algorithmic", "--input", MTRAG_TASKS, "--records", str(records), "--output", str(report)])
    assert r.code == 2 and r.err.count("\n") == 1 and "b.xml" in r.err
    assert not records.exists() and _leftovers(tmp_path) == []


def test_a_run_that_succeeds_writes_every_output(tmp_path):
    paths = [tmp_path / n for n in ("a.json", "b.xml", "c.md", "items.jsonl", "state.json")]
    argv = BASE + ["--per-item", str(paths[3]), "--emit-partial", str(paths[4])]
    argv += ["--output", f"json:{paths[0]}", "--output", f"junit:{paths[1]}", "--output", f"markdown:{paths[2]}"]
    r = run_cli(argv)
    assert r.code == 0, r.err
    assert all(p.stat().st_size > 0 for p in paths)
    assert _leftovers(tmp_path) == []


def test_a_failed_gate_still_writes_its_outputs(tmp_path):
    report, items = tmp_path / "a.json", tmp_path / "items.jsonl"
    r = run_cli(BASE[:-2] + ["--gate", "chr>=1.01", "--output", f"json:{report}", "--per-item", str(items)])
    assert r.code == 1 and report.exists() and items.exists()


def test_in_a_real_process(tmp_path):
    first, second = tmp_path / "a.json", _unwritable(tmp_path, HOW[-1])
    r = run_subprocess(BASE + ["--output", f"json:{first}", "--output", f"junit:{second}"])
    assert r.code == 2 and r.err.count("\n") == 1 and not first.exists()


class _BrokenStdout(io.StringIO):
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


def test_standard_output_failing_writes_no_file(tmp_path):
    from rageval_min.cli import main

    report, items = tmp_path / "a.json", tmp_path / "items.jsonl"
    err = io.StringIO()
    code = main(
        BASE + ["--output", f"json:{report}", "--output", "text:-", "--per-item", str(items)],
        stdout=_BrokenStdout(),
        stderr=err,
    )
    assert code == 2 and err.getvalue().count("\n") == 1 and "standard output" in err.getvalue()
    assert not report.exists() and not items.exists() and _leftovers(tmp_path) == []
