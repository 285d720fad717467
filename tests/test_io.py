"""Readers and writers: streaming, problem collection, atomic writes."""

import json
import math
import os
import re
import types

import pytest

from rageval_min._io import MAX_PROBLEMS, iter_jsonl, iter_records
from rageval_min._output import atomic_writer
from rageval_min.errors import ScoringError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_iter_jsonl_streams_and_skips_blank_lines(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text('{"a": 1}\n\n  \n{"a": 2}\r\n', encoding="utf-8")
    it = iter_jsonl(str(p))
    assert isinstance(it, types.GeneratorType)
    assert list(it) == [(1, {"a": 1}), (4, {"a": 2})]


def test_every_bad_line_is_reported_once(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_bytes(b'{"a": 1}\n{bad\n{"a": 2}\n\xff\n{"a": 3')
    with pytest.raises(ScoringError) as exc:
        list(iter_jsonl(str(p)))
    probs = exc.value.problems
    assert len(probs) == 3
    assert probs[0].startswith(f"{p}:2: invalid JSON")
    assert probs[1].startswith(f"{p}:4: not valid UTF-8 (byte 0xff")
    assert probs[2].startswith(f"{p}:5: truncated or invalid JSON")
    assert "and 2 more problems" in str(exc.value)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize(
    "line, column, byte",
    [
        (b'{"a": "caf\xc3\xa9 \xe9"}', 13, "e9"),  # valid non-ASCII before the bad byte
        (b'{"a": "\xed\xa0\x80"}', 8, "ed"),  # an encoded surrogate is not UTF-8
        (b'{"a": "\xf0\x9f\x98\x80\x80"}', 9, "80"),  # a stray continuation byte after an emoji
    ],
)
def test_bad_bytes_among_valid_non_ascii_are_named(tmp_path, line, column, byte):
    p = tmp_path / "a.jsonl"
    p.write_bytes(b'{"a": "\xc3\xa9"}\n' + line + b"\n")
    with pytest.raises(ScoringError) as exc:
        list(iter_jsonl(str(p)))
    assert str(exc.value) == f"{p}:2: not valid UTF-8 (byte 0x{byte} at column {column})"


def test_problem_collection_stops_at_the_limit(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text("x\n" * (MAX_PROBLEMS * 3), encoding="utf-8")
    with pytest.raises(ScoringError) as exc:
        list(iter_jsonl(str(p)))
    assert len(exc.value.problems) == MAX_PROBLEMS
    assert "stopped reading" in str(exc.value)


def test_bom(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_bytes('\ufeff{"a": 1}\n'.encode("utf-8"))
    with pytest.raises(ScoringError, match="byte order mark"):
        list(iter_jsonl(str(p)))
    assert list(iter_jsonl(str(p), bom_tolerant=True)) == [(1, {"a": 1})]


def test_empty_file(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text("")
    with pytest.raises(ScoringError, match="holds no records"):
        list(iter_jsonl(str(p)))


def test_iter_records_formats(tmp_path):
    (tmp_path / "a.csv").write_text('x,y\n1,hello\n\n2,"a,b"\n', encoding="utf-8")
    (tmp_path / "a.tsv").write_text("x\ty\n1\thello\n", encoding="utf-8")
    (tmp_path / "a.json").write_text(json.dumps([{"x": 1}, {"x": 2}]), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps({"records": [{"x": 1}]}), encoding="utf-8")
    assert list(iter_records(str(tmp_path / "a.csv"))) == [(2, {"x": "1", "y": "hello"}), (4, {"x": "2", "y": "a,b"})]
    assert list(iter_records(str(tmp_path / "a.tsv"))) == [(2, {"x": "1", "y": "hello"})]
    assert list(iter_records(str(tmp_path / "a.json"))) == [(1, {"x": 1}), (2, {"x": 2})]
    assert list(iter_records(str(tmp_path / "b.json"))) == [(1, {"x": 1})]


def test_iter_records_rejects_non_objects_and_ragged_rows(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"x": 1}\n[1]\n"s"\n', encoding="utf-8")
    with pytest.raises(ScoringError) as exc:
        list(iter_records(str(tmp_path / "a.jsonl")))
    assert [m.split(": ", 1)[0] for m in exc.value.problems] == [
        f"{tmp_path / 'a.jsonl'}:2",
        f"{tmp_path / 'a.jsonl'}:3",
    ]
    (tmp_path / "a.csv").write_text("x,y\n1\n", encoding="utf-8")
    with pytest.raises(ScoringError, match="a.csv:2: has 1 columns, the header has 2"):
        list(iter_records(str(tmp_path / "a.csv")))


def test_atomic_writer_keeps_old_file_on_error(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_writer(str(target)) as fh:
            fh.write("partial")
            raise RuntimeError("stop")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    with atomic_writer(str(target)) as fh:
        fh.write("new")
    assert target.read_text() == "new"


def test_large_jsonl_is_streamed(tmp_path):
    # Streaming: the first record arrives before the whole file is parsed.
    p = tmp_path / "big.jsonl"
    with open(p, "w", encoding="utf-8") as fh:
        for i in range(20000):
            fh.write(json.dumps({"i": i, "pad": "x" * 100}) + "\n")
        fh.write("{broken\n")
    it = iter_jsonl(str(p))
    assert next(it) == (1, {"i": 0, "pad": "x" * 100})
    with pytest.raises(ScoringError, match="big.jsonl:20001: invalid JSON"):
        for _ in it:
            pass


def test_overlong_line_is_reported_not_loaded(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_bytes(b'{"a": 1}\n' + b"x" * 5000 + b"\n" + b"y" * 3000 + b'\n{"a": 2}\n')
    with pytest.raises(ScoringError) as exc:
        list(iter_jsonl(str(p), max_line_bytes=1000))
    assert [m.split(": ", 1)[0] for m in exc.value.problems] == [f"{p}:2", f"{p}:3"]
    assert "line longer than 1000 bytes" in exc.value.problems[0]


def test_merged_errors_count_every_problem(tmp_path):
    from rageval_min._io import Problems

    p = tmp_path / "a.jsonl"
    p.write_text("x\ny\nz\n", encoding="utf-8")
    problems = Problems()
    problems.add("first", path="g.jsonl", line=1)
    with pytest.raises(ScoringError) as reader:
        list(iter_jsonl(str(p)))
    problems.add_error(reader.value)
    with pytest.raises(ScoringError) as exc:
        problems.raise_if_any()
    assert exc.value.count == 4 and "(and 3 more problems)" in str(exc.value)
    assert len(exc.value.problems) == 4


def test_iter_records_format_override(tmp_path):
    p = tmp_path / "prediction_en.json"  # JSON Lines under a .json name, as RGB's files are
    p.write_text('{"a": 1}\n{"a": 2}\n', encoding="utf-8")
    with pytest.raises(ScoringError, match="invalid JSON"):
        list(iter_records(str(p)))
    assert list(iter_records(str(p), fmt="jsonl")) == [(1, {"a": 1}), (2, {"a": 2})]


def test_read_text_names_the_file_and_its_purpose(tmp_path):
    from rageval_min._io import read_text

    good = tmp_path / "t.txt"
    good.write_text("héllo {x}\n", encoding="utf-8")
    assert read_text(str(good)) == "héllo {x}\n"
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\n")
    with pytest.raises(ScoringError, match=r"bad.txt:2: judge template is not valid UTF-8 \(byte 0xff\)"):
        read_text(str(bad), what="judge template")
    with pytest.raises(ScoringError, match="cannot open the judge template: No such file"):
        read_text(str(tmp_path / "missing.txt"), what="judge template")


def test_read_json_errors_name_file_and_line(tmp_path):
    from rageval_min._io import read_json

    p = tmp_path / "a.json"
    p.write_text('{"a":\n  [1,\n', encoding="utf-8")
    with pytest.raises(ScoringError, match=r"a.json:3: invalid JSON: Expecting value"):
        read_json(str(p))
    p.write_bytes('\ufeff{"a": 1}'.encode("utf-8"))
    with pytest.raises(ScoringError, match="a.json:1: starts with a UTF-8 byte order mark"):
        read_json(str(p))
    assert read_json(str(p), bom_tolerant=True) == {"a": 1}


# --------------------------------------------------------------------------- universal newlines (issue 18.1)


def _lines(tmp_path, data: bytes):
    from rageval_min._io import iter_jsonl

    p = tmp_path / "f.jsonl"
    p.write_bytes(data)
    return list(iter_jsonl(str(p)))


@pytest.mark.parametrize(
    "data,expected",
    [
        (b'{"a": 1}\r{"a": 2}\r', [(1, {"a": 1}), (2, {"a": 2})]),  # old-Mac line ends
        (b'{"a": 1}\r\n{"a": 2}\r\n', [(1, {"a": 1}), (2, {"a": 2})]),  # Windows
        (b'{"a": 1}\n{"a": 2}\r{"a": 3}\r\n\r{"a": 4}', [(1, {"a": 1}), (2, {"a": 2}), (3, {"a": 3}), (5, {"a": 4})]),
        # U+2028 / U+2029 (and other separators str.splitlines would use) do not end a record
        (
            '{"a": "x\u2028y"}\n{"a": "p\u2029q\x85rt"}\n'.encode(),
            [(1, {"a": "x\u2028y"}), (2, {"a": "p\u2029q\x85rt"})],
        ),
    ],
    ids=["cr", "crlf", "mixed", "separators-inside-strings"],
)
def test_jsonl_reads_universal_newlines(tmp_path, data, expected):
    assert _lines(tmp_path, data) == expected


def test_jsonl_line_numbers_under_cr(tmp_path):
    from rageval_min.errors import ScoringError

    with pytest.raises(ScoringError, match=r"f\.jsonl:3: invalid JSON"):
        _lines(tmp_path, b'{"a": 1}\r\n{"a": 2}\r{"a":\r')


def test_jsonl_cr_split_at_read_boundary(tmp_path):
    # a \r\n pair straddling the reader's internal buffer is still one line end
    from rageval_min._io import iter_jsonl

    first = b'{"pad": "' + b"x" * 8180 + b'"}'
    p = tmp_path / "f.jsonl"
    p.write_bytes(first + b"\r\n" + b'{"a": 2}\r\n')
    got = list(iter_jsonl(str(p)))
    assert [line for line, _ in got] == [1, 2]


def test_grounding_lone_cr_between_records_matches_crlf(tmp_path):
    from conftest import run_cli

    gold = os.path.join(ROOT, "gold_samples", "grounding", "gold.jsonl")
    trace = os.path.join(ROOT, "gold_samples", "grounding", "trace.jsonl")
    outs = []
    for sep in (b"\n", b"\r", b"\r\n"):
        g, t = tmp_path / f"g{len(outs)}.jsonl", tmp_path / f"t{len(outs)}.jsonl"
        g.write_bytes(open(gold, "rb").read().replace(b"\n", sep))
        t.write_bytes(open(trace, "rb").read().replace(b"\n", sep))
        r = run_cli(["grounding", "--gold", str(g), "--trace", str(t), "--format", "wfgy"])
        assert r.code == 1, r.err
        outs.append(r.out)
    assert outs[0] == outs[1] == outs[2]


# --------------------------------------------------------------------------- valid JSON that cannot be processed (14.6)


@pytest.mark.parametrize(
    "line,message",
    [
        (b'{"a": ' + b"9" * 5000 + b"}", "cannot read this JSON value"),
        (b'{"q": "\\ud800"}', "q: holds a lone UTF-16 surrogate"),
        (b'{"x": {"y": ["\\udfff"]}}', "x.y[0]: holds a lone UTF-16 surrogate"),
        (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    ],
    ids=["huge-int", "lone-surrogate", "nested-surrogate", "deep-nesting"],
)
def test_jsonl_edge_values_are_input_errors(tmp_path, line, message):
    from rageval_min.errors import ScoringError

    with pytest.raises(ScoringError, match=r"f\.jsonl:2: .*" + re.escape(message)):
        _lines(tmp_path, b'{"ok": 1}\n' + line + b"\n")


def test_paired_surrogate_escape_is_text(tmp_path):
    assert _lines(tmp_path, b'{"e": "\\ud83d\\ude00"}\n') == [(1, {"e": "\U0001f600"})]


def test_non_finite_numbers_are_read_and_written_as_null(tmp_path):
    from rageval_min._io import dumps

    rows = _lines(tmp_path, b'{"a": NaN, "b": 1e400, "c": -Infinity}\n')
    assert math.isnan(rows[0][1]["a"]) and rows[0][1]["b"] == math.inf
    assert dumps(rows[0][1]) == '{"a": null, "b": null, "c": null}'


def test_bom_hint_only_where_the_command_offers_it(tmp_path):
    from rageval_min._io import iter_jsonl
    from rageval_min.errors import ScoringError

    p = tmp_path / "b.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"a": 1}\n')
    with pytest.raises(ScoringError) as exc:
        list(iter_jsonl(str(p)))
    assert "variant" not in str(exc.value)
    with pytest.raises(ScoringError, match="bom_tolerant"):
        list(iter_jsonl(str(p), bom_hint="--variant bom_tolerant"))


# --------------------------------------------------------------------------- outputs (issue 14.9, 14.10)


def test_existing_output_keeps_its_mode_and_new_one_follows_umask(tmp_path):
    p = tmp_path / "out.txt"
    p.write_text("old")
    os.chmod(p, 0o640)
    with atomic_writer(str(p)) as fh:
        fh.write("new")
    assert p.read_text() == "new" and (os.stat(p).st_mode & 0o777) == 0o640
    old = os.umask(0o022)
    try:
        q = tmp_path / "fresh.txt"
        with atomic_writer(str(q)) as fh:
            fh.write("x")
        assert (os.stat(q).st_mode & 0o777) == 0o644
    finally:
        os.umask(old)


def test_special_files_are_written_directly_not_replaced(tmp_path):
    with atomic_writer("/dev/null") as fh:
        fh.write("discarded")
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    import threading

    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    with atomic_writer(str(fifo)) as fh:
        fh.write("through the pipe")
    reader.join(5)
    assert got == ["through the pipe"]
    import stat

    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_symlink_is_followed_and_kept(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    os.symlink(real, link)
    with atomic_writer(str(link)) as fh:
        fh.write("new")
    assert os.path.islink(link) and real.read_text() == "new"


def test_stale_temporaries_of_a_killed_run_are_removed(tmp_path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(proc.stdout)
    stale = tmp_path / f".rageval-out.json.{dead}.abc123.tmp"
    stale.write_text("partial")
    mine = tmp_path / f".rageval-out.json.{os.getpid()}.zzz.tmp"  # a live process: kept
    mine.write_text("in progress")
    other = tmp_path / f".rageval-other.json.{dead}.abc.tmp"  # another output's: kept
    other.write_text("x")
    with atomic_writer(str(tmp_path / "out.json")) as fh:
        fh.write("{}")
    assert not stale.exists() and mine.exists() and other.exists()


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_leave_no_temporary_file(tmp_path, signame):
    import signal
    import subprocess
    import sys
    import time

    # a command that writes its output slowly: stdin is a FIFO that never ends
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    out = tmp_path / "out.jsonl"
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONFAULTHANDLER="1")  # SIGABRT dumps its stacks
    proc = subprocess.Popen(
        [sys.executable, "-m", "rageval_min", "rouge", "--input", str(fifo), "--output", str(out)],
        env=env,
        stderr=subprocess.PIPE,
    )
    w = open(fifo, "w")
    w.write('{"target": "a b c", "prediction": "a b"}\n')
    w.flush()
    deadline = time.time() + 20
    while time.time() < deadline and not any(n.endswith(".tmp") for n in os.listdir(tmp_path)):
        time.sleep(0.05)
    assert any(n.endswith(".tmp") for n in os.listdir(tmp_path)), "the command never started writing"
    proc.send_signal(getattr(signal, signame))
    try:
        code = proc.wait(20)
    except subprocess.TimeoutExpired:  # say where it is stuck (the faulthandler's dump), then fail
        proc.send_signal(signal.SIGABRT)
        w.close()
        pytest.fail(f"no exit 20 s after {signame}; its stacks:\n{proc.communicate(timeout=20)[1].decode()}")
    w.close()
    assert code == 128 + getattr(signal, signame), proc.stderr.read()
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    assert not out.exists()


def test_inputs_that_never_end_or_are_too_large_are_bounded(tmp_path, monkeypatch):
    """A whole-file input has a size limit (raisable by environment variable), NUL bytes are not text,
    and a JSON Lines line that never ends stops the reading (issue #23 item 3)."""
    from conftest import run_cli

    r = run_cli(["merge", "/dev/zero"])
    assert r.code == 2 and "not a text file" in r.err and r.err.count("\n") == 1
    safe = os.path.join(ROOT, "gold_samples", "factuality", "safe_results.json")
    monkeypatch.setenv("RAGEVAL_MIN_MAX_FILE_BYTES", "100")
    r = run_cli(["factuality", "safe", "--input", safe])
    assert r.code == 2 and "larger than 100 bytes" in r.err and "RAGEVAL_MIN_MAX_FILE_BYTES" in r.err
    monkeypatch.delenv("RAGEVAL_MIN_MAX_FILE_BYTES")
    assert run_cli(["factuality", "safe", "--input", safe]).code == 0
    r = run_cli(["rouge", "--input", "/dev/zero"])
    assert r.code == 2 and "line longer than" in r.err and r.err.count("\n") == 1
