"""Records written from inputs holding NaN or infinities are strict JSON (issue #23 item 5): the judge
records of rgb, pairwise and factuality, rgb mix/label, mtrag condition's typed records; the documented
exception is the MT-RAG records that keep the reference scripts' own bytes (docs/security.md)."""

import json
import math

from rageval_min._io import dumps, write_jsonl


def _strict(text: str) -> bool:
    def refuse(token: str) -> None:
        raise ValueError(token)

    for line in text.splitlines():
        json.loads(line, parse_constant=refuse)
    return True


def test_the_shared_record_writers_are_strict(tmp_path):
    path = tmp_path / "r.jsonl"
    write_jsonl(str(path), [{"a": math.nan, "b": [math.inf, 1.5], "c": "x"}])
    assert _strict(path.read_text(encoding="utf-8")) and json.loads(path.read_text())["a"] is None
    assert dumps({"v": -math.inf}) == '{"v": null}'


def test_mtrag_condition_typed_records_write_nan_as_pandas_does(tmp_path):
    from rageval_min.mtrag import files

    line = files._json_pandas({"task_id": "t/1", "metrics": {"RB_llm": [math.nan]}})
    assert line == '{"task_id":"t\\/1","metrics":{"RB_llm":[null]}}' and _strict(line)
