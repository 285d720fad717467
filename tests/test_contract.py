"""The family contract, checked generically (docs/adding-a-family.md).

For every scoring command of every family: the gold sample is scored once by
the CLI with ``--per-item``; the item rows are then accumulated in one pass and
in 1, 2 and 7 consecutive parts, each part's state passed through JSON, and the
parts merged in order.  Every way must give byte-identical JSON, and the
one-pass report must equal what the CLI printed.
"""

import importlib
import json

import pytest
from conftest import absolute_argv, consecutive_parts, contract_cases, item_rows, run_cli

from rageval_min import registry
from rageval_min._contract import Accumulator, accumulator_class, accumulator_from_state
from rageval_min.report.render_json import render_json

FAMILIES = registry.family_names()

G = "gold_samples/"

#: One case per scoring command: family, command, the accumulator's params, CLI argv on a gold sample
#: (without --per-item/--output/--format), in tests/contract_cases/<family>.json.
CASES = [(c["id"], c["family"], c["command"], c["params"], c["argv"]) for c in contract_cases()]


def _through_json(acc: Accumulator) -> Accumulator:
    return accumulator_from_state(json.loads(json.dumps(acc.to_state())))


def _accumulate(cls, params, rows, notes_at=()):
    acc = cls(**params)
    for i, row in rows:
        acc.add(row)
        if i in notes_at:
            acc.note(f"note after item {i}")
    return acc


@pytest.mark.parametrize("case_id,family,command,params,argv", CASES, ids=[c[0] for c in CASES])
def test_partitions_merge_byte_identically(case_id, family, command, params, argv, tmp_path):
    items = tmp_path / "items.jsonl"
    out = tmp_path / "out.json"
    argv = absolute_argv(argv)
    r = run_cli(argv + ["--per-item", str(items), "--format", "json", "--output", str(out)])
    assert r.code in (0, 1), r.err
    rows = item_rows(items.read_text(encoding="utf-8"))
    assert rows, "--per-item wrote no rows"
    printed = json.loads(out.read_text(encoding="utf-8"))

    cls = accumulator_class(family, command)
    indexed = list(enumerate(rows))
    notes_at = {0, len(rows) // 2, len(rows) - 1}
    one = _accumulate(cls, params, indexed, notes_at).finalize()
    expected = render_json(one, ())
    for n in (1, 2, 7):
        merged = None
        for part in consecutive_parts(indexed, n):
            acc = _through_json(_accumulate(cls, params, part, notes_at))
            merged = acc if merged is None else merged.merge(acc)
        assert render_json(merged.finalize(), ()) == expected, f"{n} parts"
        assert render_json(merged.finalize(), ()) == expected, "finalize must not change the state"

    # The CLI's result is what the accumulator of its item rows gives.
    plain = _accumulate(cls, params, indexed).finalize()
    assert json.dumps(printed["result"]) == json.dumps(plain.result)
    assert printed["signature"] == plain.signature


@pytest.mark.parametrize("family", FAMILIES)
def test_family_module_names(family):
    mod = importlib.import_module(f"rageval_min.{family}")
    for name in ("FAMILY", "REFERENCE", "VARIANTS", "check_variants", "signature"):
        assert hasattr(mod, name), f"{family} lacks {name}"
    assert mod.FAMILY == family
    assert mod.check_variants(()) == ()
    with pytest.raises(Exception):
        mod.check_variants(["no_such_variant"])
    assert "|variants=none" in mod.signature(variants=(), params=())


def test_every_family_has_a_contract_case():
    assert {c[1] for c in CASES} == set(FAMILIES)


def test_merge_refuses_other_options():
    cls = accumulator_class("grounding", "score")
    a, b = cls(k=5), cls(k=3)
    with pytest.raises(Exception, match="different options"):
        a.merge(b)


def test_state_envelope_is_checked():
    from rageval_min.errors import ScoringError

    with pytest.raises(ScoringError, match="not a rageval-min partial state"):
        accumulator_from_state({"family": "grounding"})
    with pytest.raises(ScoringError, match="unknown family"):
        accumulator_from_state({"rageval_min_state": 1, "family": "nope", "command": "x", "params": {}, "data": {}})
