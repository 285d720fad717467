"""Ctrl-C or SIGTERM while ``cmd:`` judges run (issue #23 item 6): one stderr line, exit 130 (SIGTERM:
128 + 15, as for every command), no traceback, and no judge process left -- neither the program the
judge started nor what that program started itself.

The run is a real ``rageval-min`` process in a session of its own, judging with a real program that
records its pid and its child's, then sleeps.  The signal goes to the whole process group (what a
terminal's Ctrl-C does) or to the rageval-min process alone (``kill -INT``, ``kill -TERM``).
"""

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups and signals are POSIX")

SLEEPER = """\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
with open(os.path.join(sys.argv[1], f"{os.getpid()}.pids"), "w") as fh:
    fh.write(f"{os.getpid()} {child.pid}\\n")
sys.stdin.read()
time.sleep(300)
"""

#: Upper bound of every wait below (not a speed check: a run that hangs fails instead of blocking).
PATIENCE = 60.0


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (killed, not yet reaped by its new parent) is not running
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _wait_for(predicate):
    end = time.monotonic() + PATIENCE
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _start(tmp_path, concurrency):
    pids = tmp_path / "pids"
    pids.mkdir()
    script = tmp_path / "sleepy_judge.py"
    script.write_text(SLEEPER, encoding="utf-8")
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(f'{{"id": "q{i}", "prompt": "question {i}"}}\n' for i in range(4)), encoding="utf-8")
    judge = f"cmd:{sys.executable} {script} {pids}"
    argv = [sys.executable, "-m", "rageval_min", "judge", "run", "--input", str(prompts)]
    argv += ["--records", str(tmp_path / "answers.jsonl"), "--judge", judge, "--concurrency", str(concurrency)]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("RAGEVAL_MIN_TRACEBACK", None)
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(tmp_path), start_new_session=True
    )
    assert _wait_for(lambda: len(list(pids.iterdir())) >= concurrency), "the judge programs never started"
    started = []
    for f in pids.iterdir():
        started += [int(p) for p in f.read_text(encoding="ascii").split()]
    return proc, started


@pytest.mark.parametrize(
    "target,signum,code",
    [
        ("group", signal.SIGINT, 130),
        ("process", signal.SIGINT, 130),
        ("process", signal.SIGTERM, 128 + signal.SIGTERM),
    ],
)
@pytest.mark.parametrize("concurrency", [1, 2])
def test_interrupt_leaves_no_judge_process(tmp_path, target, signum, code, concurrency):
    proc, started = _start(tmp_path, concurrency)
    try:
        if target == "group":
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        out, err = proc.communicate(timeout=PATIENCE)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = err.decode("utf-8", "replace")
    assert proc.returncode == code, text
    assert text.count("\n") == 1 and "Traceback" not in text, text
    assert text.startswith("rageval-min: interrupted" if signum == signal.SIGINT else "rageval-min: terminated")
    assert _wait_for(lambda: not any(_alive(pid) for pid in started)), [p for p in started if _alive(p)]
    assert not (tmp_path / "answers.jsonl").exists()
