"""Partial states are untrusted input (issue #23 item 2): every accumulator declares the schema of its
state, and ``merge`` checks each state against it before anything is built from it.

For every registered accumulator, a real state is made by running the command on its gold sample with
``--emit-partial``.  Then:

* the untampered state merges into the report the command printed, byte for byte (JSON);
* every field of it is tampered with, one at a time -- a value of another JSON type, a NaN, an
  integer of 400 digits, deep nesting, an object where a scalar is, a negative count, a fraction
  where an integer is, a word outside an enumeration, a key removed, a key added, a list item of the
  wrong type -- and the digest recomputed (a careful forger would): every such state is exit 2
  with exactly one stderr line naming the file and the field path, never 0, 1 or 3;
* the cases issue #23 names are checked by their message: a negative count, a NaN count, ``k: 1.5``,
  a backend that never ran.
"""

import json
import math
import os
import sys

import pytest
from conftest import ROOT, absolute_argv, contract_cases, run_cli

from rageval_min import _state_schema as S
from rageval_min import registry
from rageval_min._contract import _REGISTRY, accumulator_class, state_digest

G = os.path.join(ROOT, "gold_samples")
sys.path.insert(0, os.path.dirname(__file__))


def _factuality_judge_argv(tmp_path):
    from judge_server import ChatServer
    from test_judges_factuality import RECORDS, scripted

    inp = tmp_path / "responses.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    server = ChatServer(answer=scripted).__enter__()
    argv = ["factuality", "judge", "--input", str(inp), "--judge", server.base_url, "--judge-model", "scripted"]
    return argv + ["--records", str(tmp_path / "judged.jsonl")], server


def _mtrag_retrieval_argv(tmp_path):
    from test_ir_mtrag import QARGS, predictions

    inp = tmp_path / "predictions.jsonl"
    inp.write_text("".join(json.dumps(x) + "\n" for x in predictions(0)), encoding="utf-8")
    return ["mtrag", "retrieval", "--input", str(inp)] + [a for q in QARGS for a in ("--qrels", q)], None


def _gold_case_argv(family, name_prefix):
    def make(tmp_path):
        with open(os.path.join(G, family, "cases.json"), encoding="utf-8") as fh:
            case = next(c for c in json.load(fh) if c["argv"][:2] == name_prefix)
        argv = [
            a.replace("{tmp}", str(tmp_path)).replace("replay:", "replay:" + G + "/" + family + "/")
            for a in case["argv"]
        ]
        return [os.path.join(G, family, a) if os.path.exists(os.path.join(G, family, a)) else a for a in argv], None

    return make


def _judge_argv(prefix, replay, rest):
    def make(tmp_path):
        return prefix + ["--judge", "replay:" + os.path.join(G, replay)] + rest(tmp_path), None

    return make


#: (family, command) -> a function of tmp_path giving the argv of a run on a gold sample (and a server to stop).
SOURCES = {
    (c["family"], c["command"]): (lambda tmp_path, argv=c["argv"]: (absolute_argv(argv), None))
    for c in reversed(contract_cases())  # the first case of each command wins
}
SOURCES[("factuality", "judge")] = _factuality_judge_argv
SOURCES[("mtrag", "retrieval")] = _mtrag_retrieval_argv
SOURCES[("pairwise", "judge")] = _gold_case_argv("pairwise", ["pairwise", "judge"])
SOURCES[("mtrag", "judge")] = _judge_argv(
    ["mtrag", "judge", "--input", os.path.join(G, "mtrag", "tasks.jsonl"), "--steps", "underspecified,idk,rl_f,rb_llm"],
    "mtrag/judge_cache.jsonl",
    lambda tmp_path: ["--records", str(tmp_path / "judged.jsonl")],
)


def _registered():
    for name in registry.family_names():
        registry.package_module(name)
    return sorted(_REGISTRY)


ACCUMULATORS = _registered()


def test_every_accumulator_declares_a_schema_and_has_a_source():
    assert len(ACCUMULATORS) >= 18
    for key in ACCUMULATORS:
        assert _REGISTRY[key].STATE_SCHEMA is not None, key
        assert key in SOURCES, key


_STATES = {}


def _state(key, tmp_path_factory):
    """The state of ``key``'s run on its gold sample, and the JSON report that run printed."""
    if key not in _STATES:
        tmp = tmp_path_factory.mktemp("state")
        argv, server = SOURCES[key](tmp)
        try:
            state, report = tmp / "state.json", tmp / "report.json"
            r = run_cli(argv + ["--emit-partial", str(state), "--output", f"json:{report}"])
        finally:
            if server is not None:
                server.__exit__(None, None, None)
        assert r.code in (0, 1), r.err
        _STATES[key] = (json.loads(state.read_text(encoding="utf-8")), report.read_text(encoding="utf-8"))
    return _STATES[key]


@pytest.mark.parametrize("key", ACCUMULATORS, ids=["-".join(k) for k in ACCUMULATORS])
def test_untampered_state_merges_to_the_printed_report(key, tmp_path, tmp_path_factory):
    state, report = _state(key, tmp_path_factory)
    path = tmp_path / "a.json"
    path.write_text(json.dumps(state), encoding="utf-8")
    merged = tmp_path / "merged.json"
    r = run_cli(["merge", str(path), "--output", f"json:{merged}"])
    assert r.code in (0, 1), r.err
    assert merged.read_text(encoding="utf-8") == report


# ---------------------------------------------------------------------------------------- tampering

NAN = object()  # written as the bare token NaN (Python's json reads it)
DEEP = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
HUGE = 10**400


def _leaves(value, path=()):
    """Every (path, value) of a JSON value, containers included (but not the top)."""
    if path:
        yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):  # the first items stand for the rest
            yield from _leaves(v, path + (i,))


def _node_at(node, path, state):
    """The declared schema node of the value at ``path`` (None where the schema allows anything)."""
    for step in path:
        node = _unwrap(node, state)
        if isinstance(node, S.Fields):
            node = node.fields.get(step, node.extra)
        elif isinstance(node, S.Items):
            node = node.node
        elif isinstance(node, S.Row):
            node = node.nodes[step]
        elif isinstance(node, S.Table):
            node = node.node
        else:
            return None
    return node


def _unwrap(node, state):
    while True:
        if isinstance(node, (S.Maybe, S.Conflict)):
            node = node.node
        elif isinstance(node, S.Switch):
            node = node.cases[state["params"]["mode"]]
        elif isinstance(node, S.Either):
            node = node.nodes[0] if len({type(n) for n in node.nodes}) == 1 else node
            return node
        else:
            return node


def _replacements(node, value, state):
    """Values the declared ``node`` (holding ``value`` in the real state) must refuse."""
    out = [NAN, HUGE, DEEP, {"an": "object"} if not isinstance(value, dict) else "object"]
    core = _unwrap(node, state)
    if isinstance(core, (S.Count, S.Integer)):
        lo, hi = (0, S.MAX_COUNT) if isinstance(core, S.Count) else (core.lo, core.hi)
        out += [1.5, "1", True] + ([lo - 1] if lo > -S.MAX_COUNT else []) + ([hi + 1] if hi < S.MAX_COUNT else [])
    elif isinstance(core, S.Number):
        out += ["0.5", True, [value], INF]
        out += [core.lo - max(1, abs(core.lo))] if core.lo > -math.inf else []
        out += [core.hi + max(1, abs(core.hi))] if core.hi < math.inf else []
    elif isinstance(core, S.Text):
        out += [7, [value], True] + (["no such value"] if core.choices or core.pattern else [])
    elif isinstance(core, S.Flag):
        out += ["true", 1]
    elif isinstance(core, S.OneOf):
        out += ["no such value", 99]
    elif isinstance(core, (S.Items, S.Row)):
        out += ["list", 3]
    elif isinstance(core, (S.Fields, S.Table)):
        out += [[1, 2], 3]
    return out


def _tamperings(key, state):
    """(label, tampered copy) pairs, each a state no run can have written: per declared field."""
    schema = accumulator_class(*key).STATE_SCHEMA
    top = S.Fields({"params": schema.params, "data": schema.data})
    for path, value in list(_leaves({"params": state["params"], "data": state["data"]})):
        node = _node_at(top, path, state)
        where = ".".join(map(str, path))
        for new in _replacements(node, value, state):
            yield f"{where}={'NaN' if new is NAN else repr(new)[:20]}", _changed(state, path, new)
        core = _unwrap(node, state)
        if isinstance(value, dict):
            yield f"{where} + extra key", _changed(state, path + ("no_such_field",), 1)
            for k in list(value)[:12]:
                if not (isinstance(core, S.Fields) and k in core.optional):
                    how = TABLE_KEY_REMOVED if isinstance(core, S.Table) else " removed"
                    yield f"{where}.{k}{how}", _changed(state, path + (k,), DELETE)
        if isinstance(value, list) and value:
            yield f"{where}[-1] wrong type", _changed(state, path + (len(value) - 1,), {"wrong": "type"})
            if isinstance(core, S.Row) or (isinstance(core, S.Items) and core.length is not None):
                yield f"{where} one item more", _changed(state, path + (len(value),), value[-1])
    yield "diagnostics_total=-1", _changed(state, ("diagnostics_total",), -1)
    yield "envelope + extra key", _changed(state, ("extra_envelope_key",), 1)
    yield "family removed", _changed(state, ("family",), DELETE)


DELETE = object()
TABLE_KEY_REMOVED = " removed from its table"
INF = object()


def _changed(state, path, new):
    copy = json.loads(json.dumps(state))
    node = copy
    for p in path[:-1]:
        node = node[p]
    if new is DELETE:
        del node[path[-1]]
    elif isinstance(node, list) and path[-1] == len(node):
        node.append(new)
    else:
        node[path[-1]] = new
    return copy


def _write(path, state):
    if "digest" in state:
        state = dict(state)
        del state["digest"]
        text = json.dumps(state)
        if "__NAN__" not in text and "__INF__" not in text:
            try:
                state["digest"] = state_digest(json.loads(text))
            except Exception:
                pass
    text = json.dumps(state, default=lambda o: None)
    path.write_text(text.replace('"__NAN__"', "NaN").replace('"__INF__"', "Infinity"), encoding="utf-8")


def _nan_marked(value):
    if value is NAN:
        return "__NAN__"
    if value is INF:
        return "__INF__"
    if isinstance(value, dict):
        return {k: _nan_marked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nan_marked(v) for v in value]
    return value


@pytest.mark.parametrize("key", ACCUMULATORS, ids=["-".join(k) for k in ACCUMULATORS])
def test_tampered_states_are_exit_2_with_one_line(key, tmp_path, tmp_path_factory):
    state, _ = _state(key, tmp_path_factory)
    path = tmp_path / "a.json"
    bad = []
    count = 0
    for label, tampered in _tamperings(key, state):
        count += 1
        _write(path, _nan_marked(tampered))
        r = run_cli(["merge", str(path), "--format", "json"])
        # the field path is named, but for a key removed from a table: a state that lacks a metric in
        # one rated prompt is possible (a data error the reference also stops at), named by its file
        want = f"rageval-min: error: {path}: " + ("" if label.endswith(TABLE_KEY_REMOVED) else "state")
        if r.code != 2 or r.err.count("\n") != 1 or not r.err.startswith(want):
            bad.append(f"{label}: exit {r.code}: {r.err.strip()[:300]}")
    assert count > 20
    assert not bad, f"{len(bad)} of {count} tamperings not refused properly:\n" + "\n".join(bad[:20])


def _refused(tmp_path, state, field):
    path = tmp_path / "a.json"
    _write(path, _nan_marked(state))
    r = run_cli(["merge", str(path)])
    assert r.code == 2 and r.err.count("\n") == 1, r.err
    assert f"{path}: {field}: " in r.err, r.err
    return r.err


def test_the_cases_issue_23_names(tmp_path, tmp_path_factory):
    grounding, _ = _state(("grounding", "score"), tmp_path_factory)
    s = json.loads(json.dumps(grounding))
    s["data"]["counts"]["correct"] = -1
    err = _refused(tmp_path, s, "state.data.counts.correct")
    assert "must be a non-negative integer, got -1" in err
    s = json.loads(json.dumps(grounding))
    s["data"]["counts"]["answered"] = NAN
    assert "got nan" in _refused(tmp_path, s, "state.data.counts.answered")
    s = json.loads(json.dumps(grounding))
    s["params"]["k"] = 1.5
    assert "must be a positive integer, got 1.5" in _refused(tmp_path, s, "state.params.k")
    s = json.loads(json.dumps(grounding))
    s["data"]["counts"]["correct"] = s["data"]["counts"]["answered"] + 1  # precision above 1
    assert "must be at most data.counts.answered" in _refused(tmp_path, s, "state.data.counts.correct")

    rouge, _ = _state(("rouge", "score"), tmp_path_factory)
    for backend in ("gpu-magic", "rapidfuzz-9.9 with extras", "rouge_score"):
        s = json.loads(json.dumps(rouge))
        s["params"]["backend"] = backend
        _refused(tmp_path, s, "state.params.backend")
    s = json.loads(json.dumps(rouge))
    s["params"]["backend"], s["params"]["tokenizer"] = "rouge-score", "unicode"  # never ran together
    assert "no unicode tokenizer" in _refused(tmp_path, s, "state.params.backend")
    s = json.loads(json.dumps(rouge))
    s["data"]["values"][0].append(0.5)  # one value more than the count
    _refused(tmp_path, s, "state.data.values.0")

    mtrag, _ = _state(("mtrag", "algorithmic"), tmp_path_factory)
    s = json.loads(json.dumps(mtrag))
    s["params"]["backend"] = "rouge-score"  # not an mtrag backend
    _refused(tmp_path, s, "state.params.backend")


def test_a_state_of_an_accumulator_without_a_schema_is_refused(tmp_path, tmp_path_factory, monkeypatch):
    grounding, _ = _state(("grounding", "score"), tmp_path_factory)
    monkeypatch.setattr(_REGISTRY[("grounding", "score")], "STATE_SCHEMA", None)
    path = tmp_path / "a.json"
    path.write_text(json.dumps(grounding), encoding="utf-8")
    r = run_cli(["merge", str(path)])
    assert r.code == 2 and r.err.count("\n") == 1 and "declares no state schema" in r.err


def test_very_deep_nesting_and_huge_integers_in_a_state_file(tmp_path, tmp_path_factory):
    grounding, _ = _state(("grounding", "score"), tmp_path_factory)
    text = json.dumps(grounding)
    assert '"k": 5' in text
    path = tmp_path / "a.json"
    for bad in ("[" * 100_000 + "]" * 100_000, "1" * 5000, "-" + "9" * 400):
        path.write_text(text.replace('"k": 5', f'"k": {bad}'), encoding="utf-8")
        r = run_cli(["merge", str(path)])
        assert r.code == 2 and r.err.count("\n") == 1 and str(path) in r.err, r.err


def _plausible(value, rng):
    """Another value of the same look (a count changed, a list cut, a number moved): what a state may
    hold that no run wrote, but that a type check alone accepts."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([0, 1, 2, value + 1, value * 3, 1000])
    if isinstance(value, float):
        return rng.choice([0.0, 1.0, 0.5, -0.5, 2.0, 1e300, -1e300, value * 10])
    if value is None:
        return rng.choice([0, 1, 0.5, "x"])
    if isinstance(value, str):
        return rng.choice(["", "x", value + value, "a;b;c"])
    if isinstance(value, list):
        return rng.choice([[], value[:1], value + value[:1], value[1:]])
    return rng.choice([{}, value])


@pytest.mark.parametrize("key", ACCUMULATORS, ids=["-".join(k) for k in ACCUMULATORS])
def test_plausible_looking_states_never_crash(key, tmp_path, tmp_path_factory):
    """Seeded: 40 states per accumulator with one to three values changed to values of the same look.
    Whatever merge makes of them, it is never exit 3, and exit 2 is one line naming the file."""
    import random

    rng = random.Random(f"{key}")
    state, _ = _state(key, tmp_path_factory)
    paths = [p for p, _ in _leaves({"params": state["params"], "data": state["data"]})]
    path = tmp_path / "a.json"
    bad = []
    for trial in range(40):
        s = json.loads(json.dumps(state))
        s.pop("digest", None)
        for where in rng.sample(paths, min(len(paths), rng.randint(1, 3))):
            node = s
            try:
                for p in where[:-1]:
                    node = node[p]
                new = None if rng.random() < 0.15 else _plausible(node[where[-1]], rng)
                node[where[-1]] = new
            except (KeyError, IndexError, TypeError):  # an earlier change removed the place
                continue
        path.write_text(json.dumps(s), encoding="utf-8")
        r = run_cli(["merge", str(path), "--format", "json"])
        if r.code not in (0, 1, 2) or (r.code == 2 and (r.err.count("\n") != 1 or str(path) not in r.err)):
            bad.append(f"trial {trial}: exit {r.code}: {r.err.strip()[:200]}")
    assert not bad, "\n".join(bad)
