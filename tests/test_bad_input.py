"""Every input-taking command: bad files give one line on stderr, exit 2, and no output file."""

import os

import pytest
from conftest import ROOT, run_cli

GOLD = os.path.join(ROOT, "gold_samples", "grounding")

COMMANDS = {
    "grounding --gold": lambda f, o: [
        "grounding",
        "--gold",
        f,
        "--trace",
        os.path.join(GOLD, "trace.jsonl"),
        "--output",
        o,
    ],
    "grounding --trace": lambda f, o: [
        "grounding",
        "--gold",
        os.path.join(GOLD, "gold.jsonl"),
        "--trace",
        f,
        "--output",
        o,
    ],
    "rgb mix": lambda f, o: [
        "rgb",
        "mix",
        "--input",
        f,
        "--dataset",
        "en",
        "--noise-rate",
        "0.2",
        "--passage-num",
        "3",
        "--output",
        o,
    ],
    "rgb label": lambda f, o: ["rgb", "label", "--input", f, "--dataset", "en", "--output", o],
    "rgb score": lambda f, o: ["rgb", "score", "--input", f, "--dataset", "en", "--noise-rate", "0.2", "--output", o],
    "pairwise prompts": lambda f, o: ["pairwise", "prompts", "--input", f, "--refm", "m", "--output", o],
    "pairwise score": lambda f, o: ["pairwise", "score", "--record", f, "--nopt", "2", "--output", o],
    "factuality f1k": lambda f, o: ["factuality", "f1k", "--input", f, "--output", o],
    "factuality safe": lambda f, o: ["factuality", "safe", "--input", f, "--max-claim", "64", "--output", o],
    "factuality factscore": lambda f, o: ["factuality", "factscore", "--input", f, "--output", o],
    "factuality veriscore": lambda f, o: ["factuality", "veriscore", "--input", f, "--output", o],
    "factuality correlate": lambda f, o: ["factuality", "correlate", "--input", f, "--output", o],
    "rouge": lambda f, o: ["rouge", "--input", f, "--output", o],
    "mtrag algorithmic": lambda f, o: ["mtrag", "algorithmic", "--input", f, "--records", o],
    "mtrag condition": lambda f, o: ["mtrag", "condition", "--input", f, "--records", o],
    "mtrag summarize": lambda f, o: ["mtrag", "summarize", "--input", f, "--output", o],
    "judge run": lambda f, o: ["judge", "run", "--input", f, "--records", o, "--judge", "replay:" + f + ".cache"],
}

BAD_FILES = {
    "missing": None,
    "empty": b"",
    "not-utf8": b"\xff\xfe\n",
    "truncated": b'{"a": 1}\n{"a": ',
    "not-objects": b'[1, 2]\n"x"\n',
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_file_is_one_line_exit_2_and_no_output(tmp_path, command, kind):
    path = tmp_path / "input.jsonl"
    if BAD_FILES[kind] is not None:
        path.write_bytes(BAD_FILES[kind])
    out = tmp_path / "out.txt"
    r = run_cli(COMMANDS[command](str(path), str(out)))
    assert r.code == 2, (r.out, r.err)
    assert len(r.err.strip().splitlines()) == 1 and r.err.startswith("rageval-min: error: ")
    assert "Traceback" not in r.err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if BAD_FILES[kind] is None else ["input.jsonl"])
