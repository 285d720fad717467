"""A seeded generator of hostile command lines for the fuzz test (tests/test_fuzz.py).

Every case starts from a command line that works on the gold samples (the ``cases.json`` of each
``gold_samples/<command>/`` folder, plus a few commands those do not cover: ``compare --family``,
``merge``, ``demo --samples``, ``judge agreement``, ``mtrag retrieval``, ``factuality judge``) and
changes one thing, drawn with :class:`random.Random` from the case's seed:

* one input file: a JSON value replaced by a hostile one (integers of hundreds or thousands of
  digits, ``1e400``, ``-1``, ``NaN``/``Infinity``, a string, list, object, null or boolean where a
  number is expected and the other way round, deep nesting, control characters, lone surrogates,
  empty strings), a field dropped or renamed, a line truncated, dropped, doubled or blank, JSON
  Lines rewritten as one JSON array, a text/TSV field replaced, an empty file, binary garbage, a
  cut or damaged xlsx;
* or one option: a numeric option given a 5,000-digit integer, a negative or non-numeric value,
  ``inf``, ``nan``, ``1e400``; a gate with such a threshold.

Nothing here runs a command: :func:`make_case` returns the argv (paths under a case folder it
fills) and what was changed, so a failure can print a reproducer.
"""

import json
import os
import random
import re
import shutil
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLD = os.path.join(ROOT, "gold_samples")
DATA = os.path.join(ROOT, "tests", "data")

#: Where a base command line names an input file (copied to the case folder) or an output (kept
#: apart, so that "no output left behind" can be checked): ``@in:<source path>`` and ``@out:<name>``.
IN, OUT = "@in:", "@out:"


class Base(NamedTuple):
    """A working command line: words, with ``@in:``/``@out:`` placeholders."""

    name: str
    argv: Tuple[str, ...]
    #: the exit codes of the unchanged command line
    exits: Tuple[int, ...] = (0, 1)


class Where(NamedTuple):
    """What one change touched, for the oracle's location check (tests/test_fuzz.py).

    ``kind`` is one of: ``file`` (the whole file: empty, garbage, cut bytes, bad UTF-8, JSON Lines
    as one array), ``document`` (a value inside a whole-file JSON document: no line numbers),
    ``value`` / ``dropped`` / ``renamed`` / ``doubled`` (a JSON Lines record's value at ``keys``,
    on ``line``), ``line-cut`` / ``line-dropped`` / ``line-doubled`` / ``line-junk`` /
    ``line-field`` (one physical line of a text, TSV or JSON Lines file), ``option``, ``gate``.
    """

    kind: str
    line: Optional[int] = None  # 1-based, in the file as written
    keys: Tuple[str, ...] = ()  # the string keys on the path of the changed JSON value
    option: Optional[str] = None  # the changed option
    text: str = ""  # the new value or line (JSON text), or the cut line
    document: bool = False  # a line change in a whole-file JSON document (the parser names a line)
    span: Tuple[int, int] = (0, 0)  # a TSV file: the lines of the record holding ``line``, before the change


class Case(NamedTuple):
    """One fuzz case, ready to run."""

    base: str
    argv: List[str]
    change: str  # what was changed, for the failure message
    mutated: Optional[str]  # the input file that was changed, if the change was in a file
    inputs: List[str]  # every input file of the command line
    outdir: str
    records_raw: bool  # its records keep the reference's NaN bytes (MT-RAG), not strict JSON
    where: Optional[Where] = None  # what the change touched (None: nothing changed)


def _gold_bases() -> List[Base]:
    bases = []
    for family in sorted(os.listdir(GOLD)):
        path = os.path.join(GOLD, family, "cases.json")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as fh:
            for case in json.load(fh):
                words = []
                for word in case["argv"]:
                    src = os.path.join(GOLD, family, word)
                    if word.startswith("{tmp}/"):
                        words.append(OUT + word[len("{tmp}/") :])
                    elif word.startswith("replay:"):
                        words.append("replay:" + IN + os.path.join(GOLD, family, word[len("replay:") :]))
                    elif os.path.isfile(src):
                        words.append(IN + src)
                    else:
                        words.append(word)
                bases.append(Base(f"{family}: {case['name']}", tuple(words)))
    return bases


def _g(*parts: str) -> str:
    return IN + os.path.join(GOLD, *parts)


_COLLECTIONS = (("mt-rag-clapnq-elser-512-100-20240503", "clapnq"), ("mt-rag-fiqa-beir-elser-512-100-20240501", "fiqa"))


def _extra_bases() -> List[Base]:
    c, j = ("compare",), ("judge",)
    qrels = [f"--qrels={name}={IN}{os.path.join(DATA, 'ir', 'mtrag', short + '.tsv')}" for name, short in _COLLECTIONS]
    return [
        Base(
            "compare --family grounding (rows the family does not have)",
            ("compare", "--baseline", _g(*c, "baseline.jsonl"), "--candidate", _g(*c, "candidate.jsonl"))
            + (
                "--key",
                "qid",
                "--family",
                "grounding",
                "--higher-is-better",
                "f1",
                "--resamples",
                "50",
                "--min-n",
                "1",
            ),
            (2,),
        ),
        Base(
            "compare --format html",
            ("compare", "--baseline", _g(*c, "baseline.jsonl"), "--candidate", _g(*c, "candidate.jsonl"))
            + ("--key", "qid", "--higher-is-better", "correct", "--higher-is-better", "f1", "--resamples", "50")
            + ("--format", "html", "--output", OUT + "c.html"),
        ),
        Base(
            "judge agreement --human",
            (
                "judge",
                "agreement",
                "--judge",
                _g(*j, "agreement_judge.jsonl"),
                "--human",
                _g(*j, "agreement_human.jsonl"),
            )
            + ("--level", "ordinal", "--labels", "no,partial,yes", "--resamples", "50"),
        ),
        Base(
            "judge agreement --ratings",
            ("judge", "agreement", "--judge", _g(*j, "agreement_judge.jsonl"))
            + ("--ratings", _g(*j, "agreement_ratings.jsonl"), "--resamples", "50"),
        ),
        Base(
            "mtrag retrieval",
            ("mtrag", "retrieval", "--input", IN + "@retrieval-predictions", *qrels),
        ),
        Base(
            "factuality judge (replay of an empty cache)",
            ("factuality", "judge", "--input", IN + "@responses", "--records", OUT + "j.jsonl")
            + ("--judge", "replay:" + IN + "@empty-cache"),
            (2,),
        ),
        Base(
            "compare --family grounding (item rows of grounding)",
            ("compare", "--baseline", IN + "@items:grounding", "--candidate", IN + "@items:grounding")
            + ("--family", "grounding", "--resamples", "30", "--min-n", "1"),
        ),
        Base("merge (two grounding states)", ("merge", IN + "@state:grounding:0", IN + "@state:grounding:1")),
        Base("merge (two rouge states)", ("merge", IN + "@state:rouge:0", IN + "@state:rouge:1")),
        Base("merge (two factuality f1k states)", ("merge", IN + "@state:f1k:0", IN + "@state:f1k:1")),
        Base("demo --samples (grounding only)", ("demo", "--samples", IN + "@samples"), (2,)),
    ]


def bases() -> List[Base]:
    """Every base command line."""
    return _gold_bases() + _extra_bases()


# ---------------------------------------------------------------------------------------------
# Generated sources (the files no gold sample holds)

_STATE_RUNS = {
    "grounding": (("grounding", "--gold", os.path.join(GOLD, "grounding", "gold.jsonl"), "--trace"), "trace.jsonl"),
    "rouge": (("rouge", "--summary", "--input"), "pairs.jsonl"),
    "f1k": (("factuality", "f1k", "--max-claims", "64", "--input"), "counts.jsonl"),
}
_STATE_DIRS = {"grounding": "grounding", "rouge": "rouge", "f1k": "factuality"}


def make_sources(folder: str, main: Callable[..., int]) -> Dict[str, str]:
    """The generated inputs (partial states of two shards, a samples folder, ...), in ``folder``."""
    import io

    out: Dict[str, str] = {}
    for key, (argv, name) in _STATE_RUNS.items():
        with open(os.path.join(GOLD, _STATE_DIRS[key], name), encoding="utf-8") as fh:
            lines = [line for line in fh if line.strip()]
        half = len(lines) // 2
        for k, part in enumerate((lines[:half], lines[half:])):
            shard = os.path.join(folder, f"{key}-shard{k}.jsonl")
            with open(shard, "w", encoding="utf-8") as fh:
                fh.writelines(part)
            state = os.path.join(folder, f"{key}-state{k}.json")
            words = list(argv) + [shard, "--emit-partial", state, "--output", os.devnull]
            code = main(words, stdout=io.StringIO(), stderr=io.StringIO())
            assert code in (0, 1) and os.path.exists(state), (words, code)
            out[f"@state:{key}:{k}"] = state
    items = os.path.join(folder, "grounding-items.jsonl")
    argv = ["grounding", "--gold", os.path.join(GOLD, "grounding", "gold.jsonl"), "--trace"]
    argv += [os.path.join(GOLD, "grounding", "trace.jsonl"), "--per-item", items, "--output", os.devnull]
    assert main(argv, stdout=io.StringIO(), stderr=io.StringIO()) in (0, 1)
    out["@items:grounding"] = items
    samples = os.path.join(folder, "samples")
    shutil.copytree(os.path.join(GOLD, "grounding"), os.path.join(samples, "grounding"))
    out["@samples"] = samples
    cache = os.path.join(folder, "empty-cache.jsonl")
    open(cache, "w").close()
    out["@empty-cache"] = cache
    preds = os.path.join(folder, "retrieval.jsonl")
    with open(preds, "w", encoding="utf-8") as fh:
        qrels = {}
        for name, short in _COLLECTIONS:
            with open(os.path.join(DATA, "ir", "mtrag", short + ".tsv"), encoding="utf-8") as q:
                rows = [line.rstrip("\n").split("\t") for line in q][1:4]
            qrels[name] = rows
        for collection, rows in qrels.items():
            task, docs = rows[0][0], [r[1] for r in rows] + ["other"]
            ctx = [{"document_id": d, "score": 3.0 - i} for i, d in enumerate(docs)]
            fh.write(json.dumps({"task_id": task, "Collection": collection, "contexts": ctx}) + "\n")
    out["@retrieval-predictions"] = preds
    responses = os.path.join(folder, "responses.jsonl")
    with open(responses, "w", encoding="utf-8") as fh:
        for i, text in enumerate(["The bridge opened in 1931. It is 310 metres long.", "Maybe it is unclear."]):
            fh.write(json.dumps({"id": f"r{i}", "prompt": "Tell me.", "response": text, "passages": ["1931."]}) + "\n")
    out["@responses"] = responses
    return out


# ---------------------------------------------------------------------------------------------
# Hostile values

HUGE = "9" * 401
HOSTILE_NUMBERS = [
    HUGE,
    "-" + HUGE,
    "9" * 5000,
    "1e400",
    "-1e400",
    "1e-400",
    "-1",
    "0",
    "-0.0",
    "1.5",
    "NaN",
    "Infinity",
    "-Infinity",
    "4294967297",
    "9223372036854775808",
    "1e308",
    "-1.7976931348623157e308",
]
HOSTILE_OTHER = [
    '"12"',
    '""',
    '"x\\u0000\\u001b[31my"',
    '"\\ud800"',
    '"\\u202e\\u00e9\\u4e2d"',
    '"NaN"',
    '"inf"',
    "[]",
    "{}",
    "null",
    "true",
    "false",
    "[1, 2]",
    '{"a": 1}',
    '[["x"]]',
    '"' + "a" * 2000 + '"',
]


def _deep(rng: random.Random) -> str:
    depth = rng.choice([60, 500, 3000, 200000])
    return rng.choice(["[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth])


def hostile_value(rng: random.Random) -> str:
    """One hostile JSON value, as JSON text (not always strict JSON: NaN, 1e400, ...)."""
    pick = rng.random()
    if pick < 0.55:
        return rng.choice(HOSTILE_NUMBERS)
    if pick < 0.93:
        return rng.choice(HOSTILE_OTHER)
    return _deep(rng)


class _Raw:
    def __init__(self, text: str) -> None:
        self.text = text


def _dump(value: Any) -> str:
    """JSON text of ``value``, with :class:`_Raw` parts written as they are."""
    if isinstance(value, _Raw):
        return value.text
    if isinstance(value, list):
        return "[" + ", ".join(_dump(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + _dump(v) for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)


def _nodes(value: Any, path: Tuple[Any, ...] = ()) -> List[Tuple[Any, ...]]:
    """The paths of every value inside ``value`` (not ``value`` itself), depth-first."""
    out: List[Tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, sub in items:
        out.append(path + (key,))
        if len(out) < 5000:
            out.extend(_nodes(sub, path + (key,)))
    return out


def _parent(doc: Any, path: Tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


def mutate_json(doc: Any, rng: random.Random) -> Tuple[Any, str, Where]:
    """``doc`` with one value replaced, dropped or renamed (a copy), what was done and where."""
    doc = json.loads(json.dumps(doc))
    paths = _nodes(doc)
    if not paths:
        text = hostile_value(rng)
        return _Raw(text), "the whole value replaced", Where("value", text=text)
    numeric = [p for p in paths if _is_number(_get(doc, p))]
    path = rng.choice(numeric if numeric and rng.random() < 0.5 else paths)
    parent, key = _parent(doc, path), path[-1]
    keys = tuple(k for k in path if isinstance(k, str))
    kind = rng.random()
    if kind < 0.7:
        text = hostile_value(rng)
        parent[key] = _Raw(text)
        what = f"{_show(path)} = {text[:60]}{'...' if len(text) > 60 else ''}"
        return doc, what, Where("value", keys=keys, text=text)
    if kind < 0.85:
        del parent[key]
        return doc, f"{_show(path)} dropped", Where("dropped", keys=keys)
    if isinstance(parent, dict):
        parent[key + "_renamed"] = parent.pop(key)
        return doc, f"{_show(path)} renamed", Where("renamed", keys=keys)
    parent.insert(key, parent[key])
    return doc, f"{_show(path)} doubled", Where("doubled", keys=keys)


def _get(doc: Any, path: Tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _show(path: Tuple[Any, ...]) -> str:
    return "".join(f"[{k!r}]" for k in path) or "(root)"


# ---------------------------------------------------------------------------------------------
# File mutations


def _garbage(rng: random.Random) -> bytes:
    return bytes(rng.randrange(256) for _ in range(rng.choice([1, 7, 300])))


def _jsonl_lines(text: str) -> Optional[List[Any]]:
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        return [json.loads(line) for line in lines] if lines else None
    except ValueError:
        return None


def _mutate_lines(lines: List[str], rng: random.Random, jsonish: bool) -> Tuple[List[str], str, Where]:
    i = rng.randrange(len(lines))
    kind = rng.random()
    if kind < 0.25:
        cut = rng.randrange(max(1, len(lines[i])))
        lines[i] = lines[i][:cut]
        return lines, f"line {i + 1} cut at {cut}", Where("line-cut", i + 1, text=lines[i])
    if kind < 0.35:
        del lines[i]
        return lines, f"line {i + 1} dropped", Where("line-dropped", i + 1)
    if kind < 0.45:
        lines.insert(i, lines[i])
        return lines, f"line {i + 1} doubled", Where("line-doubled", i + 1, text=lines[i])
    if kind < 0.55:
        lines.insert(i, rng.choice(["", "   ", "\x00", "\ufeff", "#", "[]", "null", "1", '"x"', "{}"]))
        return lines, f"junk line before line {i + 1}", Where("line-junk", i + 1, text=lines[i])
    sep = "\t" if "\t" in lines[i] else " "
    fields = lines[i].split(sep)
    f = rng.randrange(len(fields))
    if kind < 0.8:
        fields[f] = rng.choice(HOSTILE_NUMBERS + ["", "abc", "\x1b", "1,5", "é"])
    elif kind < 0.9:
        del fields[f]
    else:
        fields.insert(f, rng.choice(["x", "1"]))
    lines[i] = sep.join(fields)
    return lines, f"line {i + 1} field {f + 1} changed", Where("line-field", i + 1, text=lines[i])


def mutate_file(data: bytes, rng: random.Random) -> Tuple[bytes, str, Where]:
    """The bytes of an input file with one change, what was changed and where."""
    kind = rng.random()
    if kind < 0.04:
        return b"", "empty file", Where("file")
    if kind < 0.08:
        return _garbage(rng), "binary garbage", Where("file")
    if kind < 0.11:
        cut = rng.randrange(max(1, len(data)))
        return data[:cut], f"cut at byte {cut}", Where("file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:  # xlsx: damage some bytes
        pos = rng.randrange(max(1, len(data)))
        return data[:pos] + _garbage(rng) + data[pos + 8 :], f"bytes damaged at {pos}", Where("file")
    if kind < 0.13:
        return text.encode("utf-8") + b"\xff\xfe\x80", "invalid UTF-8 at the end", Where("file")
    records = _jsonl_lines(text)
    if records is not None and len(records) > 1:
        if kind < 0.16:
            return json.dumps(records).encode(), "JSON Lines written as one JSON array", Where("file")
        i = rng.randrange(len(records))
        if kind < 0.70:
            new, what, where = mutate_json(records[i], rng)
            lines = [json.dumps(r, ensure_ascii=False) for r in records]
            lines[i] = _dump(new)
            data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
            return data, f"line {i + 1}: {what}", where._replace(line=i + 1)
    elif records is not None:  # one JSON document
        if kind < 0.75:
            new, what, where = mutate_json(records[0], rng)
            return _dump(new).encode("utf-8", "surrogatepass"), what, where._replace(kind="document")
    lines = text.splitlines()
    if not lines:
        return b"x", "a file that was empty given one byte", Where("file")
    new_lines, what, where = _mutate_lines(lines, rng, records is not None)
    document = records is not None and len(records) == 1 or _is_document(text)
    span = record_span(text, where.line or 0) if records is None and "\t" in text else (0, 0)
    return ("\n".join(new_lines) + "\n").encode("utf-8"), what, where._replace(document=document, span=span)


def record_span(text: str, line: int) -> Tuple[int, int]:
    """The first and last line of the TSV record (a quoted cell may span lines) holding ``line``."""
    import csv
    import io

    end = 0
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t")
    try:
        for _ in reader:
            start, end = end + 1, reader.line_num
            if start <= line <= end:
                return start, end
    except csv.Error:
        pass
    return line, line


def _is_document(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _reseal(data: bytes) -> bytes:
    """A changed partial state with its digest recomputed (a tampered state that still looks sealed),
    when it is still a JSON object that can be digested; else ``data`` unchanged."""
    from rageval_min._contract import state_digest

    try:
        state = json.loads(data.decode("utf-8"))
        if isinstance(state, dict) and "digest" in state:
            state["digest"] = state_digest(state)
            return json.dumps(state).encode("utf-8")
    except (ValueError, TypeError, RecursionError, OverflowError):
        pass
    return data


# ---------------------------------------------------------------------------------------------
# Option mutations

HOSTILE_OPTION_VALUES = [
    "9" * 5000,
    "9" * 401,
    "-1",
    "0",
    "-0",
    "inf",
    "-inf",
    "nan",
    "1e400",
    "abc",
    "",
    "1.5",
    "1e-400",
]


def _actions(argv: List[str]) -> List[Any]:
    """The argparse actions of ``argv``'s (sub)command."""
    import argparse

    from rageval_min.cli import build_parser

    parser: Any = build_parser(argv[0], argv)
    for word in argv:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and word in subs[0].choices:
            parser = subs[0].choices[word]
    return list(parser._actions)


def numeric_options(argv: List[str]) -> List[str]:
    """The options of ``argv``'s command whose values are numbers (from its argparse parser)."""
    out = []
    for action in _actions(argv):
        if not action.option_strings or action.nargs == 0:
            continue
        typed = action.type in (int, float) or getattr(action.type, "__name__", "") not in ("", "str", "NoneType")
        numeric_default = isinstance(action.default, (int, float)) and not isinstance(action.default, bool)
        numeric_text = isinstance(action.default, str) and re.fullmatch(r"-?[0-9.]+", action.default) is not None
        given = [argv[i + 1] for i, w in enumerate(argv[:-1]) if w in action.option_strings]
        numeric_given = any(re.fullmatch(r"-?[0-9.]+", v) for v in given)
        if typed or numeric_default or numeric_text or numeric_given:
            out.append(action.option_strings[-1])
    return out


GATE_NAMES = ["precision", "chr", "rougeL.fmeasure", "f1", "nDCG", "kappa", "correct", "delta", "x"]


def mutate_options(argv: List[str], rng: random.Random) -> Tuple[List[str], str, Where]:
    """``argv`` with one numeric option (or a gate) given a hostile value."""
    argv = list(argv)
    options = numeric_options(argv) if argv[0] != "demo" else []
    value = rng.choice(HOSTILE_OPTION_VALUES)
    if not options or rng.random() < 0.2:
        op = rng.choice([">=", "<=", "==", ">", "<"])
        gate = f"{rng.choice(GATE_NAMES)}{op}{value}"
        return argv + ["--gate", gate], f"--gate {gate[:60]}", Where("gate", option="--gate", text=gate)
    option = rng.choice(options)
    if option in argv and rng.random() < 0.7:
        argv[argv.index(option) + 1] = value
    else:
        argv += [option, value]
    return argv, f"{option} {value[:40]}{'...' if len(value) > 40 else ''}", Where("option", option=option, text=value)


# ---------------------------------------------------------------------------------------------
# Cases


def _has_option(argv: List[str], option: str) -> bool:
    return any(w == option or w.startswith(option + "=") for w in argv)


def report_options(argv: List[str]) -> List[str]:
    """Extra outputs for a case: a JSON report and a JUnit report when the command writes reports."""
    if argv[0] in ("demo",) or _has_option(argv, "--output") or _has_option(argv, "--records") and argv[0] == "judge":
        return []
    streams = (["pairwise", "prompts"], ["rgb", "mix"], ["rgb", "label"])
    if argv[:2] in streams or argv[0] == "rouge" and "--summary" not in argv:
        return []
    return ["--output", OUT + "report.json", "--output", "junit:" + OUT + "report.xml"]


def make_case(base: Base, sources: Dict[str, str], folder: str, seed: int, change: bool = True) -> Case:
    """The fuzz case ``seed`` of ``base``: its files copied to ``folder/in``, one thing changed
    (nothing with ``change=False``)."""
    rng = random.Random(seed)
    indir, outdir = os.path.join(folder, "in"), os.path.join(folder, "out")
    os.makedirs(indir)
    os.makedirs(outdir)
    words = list(base.argv)
    words += report_options(words)
    known = {o for a in _actions(words) for o in a.option_strings} if words[0] != "demo" else set()
    for option, name in (("--emit-partial", "state.json"), ("--per-item", "items.jsonl")):
        if change and option in known and option not in words and rng.random() < 0.3:
            words += [option, OUT + name]
    inputs: Dict[int, str] = {}
    argv: List[str] = []
    for n, word in enumerate(words):
        head, sep, rest = word.rpartition(IN)
        if sep:
            src = sources.get(rest, rest)
            dst = os.path.join(indir, str(len(inputs)), os.path.basename(src))
            os.makedirs(os.path.dirname(dst))
            (shutil.copytree if os.path.isdir(src) else shutil.copyfile)(src, dst)
            inputs[n] = dst
            word = head + dst
        argv.append(word.replace(OUT, outdir + os.sep))
    files = [p for p in inputs.values() if os.path.isfile(p)]
    if base.argv[0] == "demo":
        files = [os.path.join(inputs[2], "grounding", "cases.json")]
    mutated: Optional[str] = None
    where: Optional[Where] = None
    if not change:
        what = "nothing changed"
    elif files and rng.random() < 0.7:
        mutated = rng.choice(files)
        with open(mutated, "rb") as fh:
            data, what, where = mutate_file(fh.read(), rng)
        if argv[0] == "merge" and rng.random() < 0.7:
            data, what = _reseal(data), what + " (digest recomputed)"
        if argv[0] == "merge" and where.kind != "file":
            where = where._replace(kind="document")  # _reseal rewrites it as one document
        with open(mutated, "wb") as fh:
            fh.write(data)
        what = f"{os.path.basename(mutated)}: {what}"
    else:
        argv, what, where = mutate_options(argv, rng)
    raw = argv[0] == "mtrag"
    return Case(base.name, argv, what, mutated, list(inputs.values()), outdir, raw, where)
