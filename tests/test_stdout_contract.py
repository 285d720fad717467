"""Exit codes that never lie about standard output (issue #23 item 4): a failed gate is exit 1 whatever
happens to stdout; a write error on stdout (its reader gone, closed, full) is exit 2 with one line."""

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

GOLD = os.path.join(ROOT, "gold_samples", "grounding", "gold.jsonl")
TRACE = os.path.join(ROOT, "gold_samples", "grounding", "trace.jsonl")
CMD = [sys.executable, "-m", "rageval_min"]
ENV = dict(os.environ, PYTHONPATH=ROOT)


def _big_pairs(tmp_path):
    path = tmp_path / "pairs.jsonl"
    words = "the cat sat on a mat with some other words here and there".split()
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(4000):
            text = " ".join(words[(i + j) % len(words)] for j in range(25))
            fh.write(json.dumps({"id": i, "prediction": text, "reference": text[::-1]}) + "\n")
    return str(path)


def _shell(command: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=ENV)


@pytest.mark.parametrize("summary", [True, False])
@pytest.mark.parametrize("gate,code", [("rougeL.fmeasure>=0", 2), ("rougeL.fmeasure>=2", 1)])
def test_a_reader_that_goes_away(tmp_path, gate, code, summary):
    """The output (an HTML report, or the per-pair stream) is far larger than a pipe's buffer and the
    reader reads nothing: the run still reaches its verdict."""
    fmt = "--summary --format html" if summary else ""
    argv = " ".join(CMD + ["rouge", "--input", _big_pairs(tmp_path), "--gate", f"'{gate}'", fmt])
    r = _shell(f"set -o pipefail; {argv} | true; echo $? >&2")
    *lines, status = r.stderr.strip().splitlines()
    assert int(status) == code, r.stderr
    assert len(lines) == 1 and ("cannot write to standard output: Broken pipe" in lines[0]) == (code == 2), lines


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("gate,code", [("chr>=0", 2), ("chr>=0.99", 1)])
def test_a_full_stdout(gate, code):
    with open("/dev/full", "w") as full:
        r = subprocess.run(
            CMD + ["grounding", "--gold", GOLD, "--trace", TRACE, "--gate", gate],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
    assert r.returncode == code, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and ("cannot write to standard output" in lines[0]) == (code == 2), lines


def test_a_closed_stdout():
    base = " ".join(CMD + ["grounding", "--gold", GOLD, "--trace", TRACE])
    r = _shell(f"{base} --gate 'chr>=0' >&-")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "standard output is closed" in r.stderr
    r = _shell(f"{base} --gate 'chr>=0.99' >&-")
    assert r.returncode == 1, r.stderr
    r = _shell(f"{base} --gate 'chr>=0' --output /dev/null >&-")  # stdout not needed: not an error
    assert r.returncode == 0, r.stderr


def test_ctrl_c_with_jobs_is_one_line_exit_130_and_no_worker_is_left(tmp_path):
    """Ctrl-C reaches the whole process group (as from a terminal): the workers leave it to the main
    process, which stops the pool and says so in one line (issue #23 item 6)."""
    import signal
    import time

    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        CMD + ["rouge", "--input", str(fifo), "--summary", "--jobs", "2"],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    with open(fifo, "w", encoding="utf-8") as w:
        for i in range(600):  # more than two chunks: the workers are started and have worked
            w.write(json.dumps({"id": i, "prediction": "a b c d", "reference": "a b d"}) + "\n")
        w.flush()
        time.sleep(1.5)
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(30)
    err = proc.stderr.read()
    assert code == 130 and err == "rageval-min: interrupted\n", err
    left = subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert not left, left
