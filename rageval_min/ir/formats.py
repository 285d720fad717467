"""Mirrors the input formats of trec_eval 10.0 (``usnistgov/trec_eval@f425365:get_trec_results.c``,
``get_qrels.c``), BEIR/MTEB qrels (``beir-cellar/beir``), ranx/BEIR JSON, and the JSON Lines of
RAGAS, the grounding family and MT-RAG.

Runs (``--run``):

``trec``
    ``qid Q0 docno rank score tag`` lines, fields separated by ASCII white
    space (C ``isspace``), extra fields ignored, fewer than six an error.  A
    line whose first non-blank character is ``#`` is a comment (as 10.0 reads
    runs; 9.0.8 has no comments), so a docno may contain ``#``; blank lines are
    skipped.  The rank column is ignored.  The scores must be finite numbers
    (trec_eval's ``atof`` would read ``abc`` as 0; here it is an input error).
    The runid is the tag of the last line, as trec_eval keeps it.
``json``
    ``{qid: {docno: score}}`` (ranx, BEIR results).
``jsonl``
    one topic per line; the topic id is the first of ``qid``, ``q_id``,
    ``query_id``, ``task_id``, ``id`` present (else the line number); the
    documents are ``retrieved_context_ids`` (RAGAS), ``retrieved_ids`` (the
    grounding trace) or ``contexts[].document_id`` with ``contexts[].score``
    (MT-RAG).  A list given without scores is a ranking: the document at
    1-based rank ``r`` of ``n`` gets score ``n - r``, which keeps the list order
    under trec_eval's sort (``list_scores=n-rank`` in the signature).

Qrels (``--qrels``): ``trec`` (``qid iter docno grade``), ``tsv`` (BEIR/MTEB
``query-id<TAB>corpus-id<TAB>score`` with a header line), ``json``
(``{qid: {docno: grade}}``), ``jsonl`` (``reference_context_ids`` or
``gold_citations``: grade 1 each).  A JSON Lines run that carries
``reference_context_ids`` is its own qrels when ``--qrels`` is omitted.

``auto`` chooses by extension (``.jsonl``/``.ndjson``, ``.json``, ``.tsv``),
then by content.  A document that appears twice in one topic, in the run or in
the qrels, is an input error naming the file and line (trec_eval exits 4
there); ``duplicates="first"`` keeps the first occurrence instead.  Docnos are
kept as UTF-8 bytes so that ties break in trec_eval's byte order.
"""

import csv
import json
import math
import os
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

from .._numbers import as_float, float_text, int_text
from ..errors import ScoringError

__all__ = [
    "DUPLICATES",
    "Qrels",
    "RUN_FORMATS",
    "QRELS_FORMATS",
    "RunNotGrouped",
    "RunTopic",
    "TrecRun",
    "detect_format",
    "open_run",
    "read_qrels",
]

RUN_FORMATS = ("auto", "trec", "json", "jsonl")
QRELS_FORMATS = ("auto", "trec", "tsv", "json", "jsonl")
DUPLICATES = ("error", "first")
_ID_KEYS = ("qid", "q_id", "query_id", "task_id", "id")
_JSONL_KEYS = {"retrieved_context_ids", "retrieved_ids", "contexts", "reference_context_ids", "gold_citations"}
_JSONL_KEYS.update(_ID_KEYS)


class RunTopic(NamedTuple):
    """One topic of a run: its documents and scores in file order, and where it starts."""

    qid: str
    docnos: List[bytes]
    scores: List[float]
    line: int
    #: the run tag of the topic's last line (TREC runs), else the run file's name without extension
    tag: str = ""


#: qid -> docno -> grade, in first-appearance order of the qids.
Qrels = Dict[str, Dict[bytes, int]]


def detect_format(path: str, kind: str) -> str:
    """The format of ``path`` (``kind`` is ``run`` or ``qrels``): by extension, then by its first line."""
    ext = os.path.splitext(path)[1].lower()
    if ext in (".jsonl", ".ndjson"):
        return "jsonl"
    if ext == ".json":
        return "json"
    if ext == ".tsv" and kind == "qrels":
        return "tsv"
    try:
        with open(path, "rb") as fh:
            first = b""
            for raw in fh:
                if raw.strip():
                    first = raw.strip()
                    break
    except OSError as exc:
        raise ScoringError(f"cannot read: {exc.strerror}", path=path) from None
    if first.startswith(b"{"):
        try:
            obj = json.loads(first)
        except ValueError:
            return "json"
        return "jsonl" if isinstance(obj, dict) and _JSONL_KEYS.intersection(obj) else "json"
    if kind == "qrels" and b"\t" in first and len(first.split(b"\t")) == 3:
        return "tsv"
    return "trec"


def _utf8(raw: bytes, path: str, line: int, field: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScoringError("is not valid UTF-8", path=path, line=line, field=field) from None


def _content_line(path: str, start: int, nth: int) -> int:
    """The line number of the ``nth`` (0-based) content line from line ``start`` (error paths only)."""
    seen = -1
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            parts = raw.split()
            if lineno < start or not parts or parts[0][:1] == b"#":
                continue
            seen += 1
            if seen == nth:
                return lineno
    return start


class RunNotGrouped(Exception):
    """A topic reappears after another topic: the run is not grouped by topic (read it with ``whole()``)."""


class TrecRun:
    """A TREC run file read topic by topic (``iter``); ``runid`` is known once it is exhausted.

    A run grouped by topic (every topic's lines together, as ``sort -k1,1``
    or any retriever writes them) streams: one topic in memory at a time.  When
    a topic reappears later, iteration raises :class:`RunNotGrouped`; then
    :meth:`whole` reads the file again at once, topics in order of first
    appearance (the whole run in memory).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.runid = ""

    def __iter__(self) -> Iterator[RunTopic]:
        """The topics in file order; raises :class:`RunNotGrouped` when a topic reappears."""
        return self._stream(set())

    def _stream(self, seen: set) -> Iterator[RunTopic]:
        path = self.path
        qid: Optional[bytes] = None
        docs: List[bytes] = []
        raw_scores: List[bytes] = []
        start = 0
        last: List[bytes] = []
        with _open_bytes(path) as fh:
            for lineno, raw in enumerate(fh, 1):
                parts = raw.split()
                if not parts or parts[0][0] == 35:  # blank, or '#' comment
                    continue
                if len(parts) < 6:
                    raise ScoringError(
                        f"malformed run line: {len(parts)} fields, expected 'qid Q0 docno rank score tag'",
                        path=path,
                        line=lineno,
                    )
                if parts[0] != qid:
                    if qid is not None:
                        yield self._topic(qid, docs, raw_scores, start, last[5])
                    qid = parts[0]
                    if qid in seen:
                        raise RunNotGrouped()
                    seen.add(qid)
                    docs, raw_scores, start = [], [], lineno
                docs.append(parts[2])
                raw_scores.append(parts[4])
                last = parts
        if qid is None:
            raise ScoringError("holds no run lines", path=path)
        self.runid = _utf8(last[5], path, 0, "tag")
        yield self._topic(qid, docs, raw_scores, start, last[5])

    def _topic(self, qid: bytes, docs: List[bytes], raw: List[bytes], start: int, tag: bytes) -> RunTopic:
        try:
            scores = list(map(float, raw))
            if not all(map(math.isfinite, scores)):
                raise ValueError
        except ValueError:
            bad = next(i for i, s in enumerate(raw) if not _finite(s))
            line = _content_line(self.path, start, bad)
            raise ScoringError(f"not a finite number: {raw[bad]!r}", path=self.path, line=line, field="score") from None
        return RunTopic(_utf8(qid, self.path, start, "qid"), docs, scores, start, _utf8(tag, self.path, start, "tag"))

    def whole(self) -> Iterator[RunTopic]:
        """Every topic of an ungrouped run, read at once (the whole run in memory)."""
        topics: Dict[bytes, Tuple[List[bytes], List[bytes], int]] = {}
        path = self.path
        last: List[bytes] = []
        with _open_bytes(path) as fh:
            for lineno, raw in enumerate(fh, 1):
                parts = raw.split()
                if not parts or parts[0][0] == 35:
                    continue
                if len(parts) < 6:
                    raise ScoringError("malformed run line", path=path, line=lineno)
                entry = topics.get(parts[0])
                if entry is None:
                    entry = topics[parts[0]] = ([], [], lineno)
                entry[0].append(parts[2])
                entry[1].append(parts[4])
                last = parts
        if not last:
            raise ScoringError("holds no run lines", path=path)
        self.runid = _utf8(last[5], path, 0, "tag")
        for qid, (docs, raw_scores, start) in topics.items():
            yield self._topic(qid, docs, raw_scores, start, last[5])


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _finite(text: bytes) -> bool:
    return float_text(text, finite=True) is not None


def _open_bytes(path: str) -> Any:
    try:
        return open(path, "rb")
    except OSError as exc:
        raise ScoringError(f"cannot read: {exc.strerror}", path=path) from None


def _read_json(path: str) -> Any:
    def pairs(items: List[Tuple[str, Any]]) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise ScoringError(f"the key {key!r} appears twice in one object", path=path)
            out[key] = value
        return out

    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh, object_pairs_hook=pairs)
    except OSError as exc:
        raise ScoringError(f"cannot read: {exc.strerror}", path=path) from None
    except UnicodeDecodeError:
        raise ScoringError("is not valid UTF-8", path=path) from None
    except ValueError as exc:
        if isinstance(exc, ScoringError):
            raise
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else None  # where the JSON breaks
        raise ScoringError(f"not valid JSON: {exc}", path=path, line=line) from None


#: The largest grade magnitude (trec_eval reads grades as a C long).
MAX_GRADE = 2**63 - 1


def _number(value: Any, path: str, where: str, *, integer: bool) -> Any:
    ok = isinstance(value, int) and abs(value) <= MAX_GRADE if integer else isinstance(value, (int, float))
    if ok and not integer and isinstance(value, int):
        as_float(value, path=path, field=where)  # a score of 401 digits: an input error
    if isinstance(value, bool) or not ok or (isinstance(value, float) and not math.isfinite(value)):
        what = "an integer grade" if integer else "a finite number"
        raise ScoringError(f"must be {what}, got {json.dumps(value)}", path=path, record=where)
    return value


def _json_run(path: str) -> Iterator[RunTopic]:
    data = _read_json(path)
    if not isinstance(data, dict) or not data:
        raise ScoringError("must be a non-empty object {qid: {docno: score}}", path=path)
    for qid, docs in data.items():
        if not isinstance(docs, dict):
            raise ScoringError("must be an object {docno: score}", path=path, record=f"qid={qid!r}")
        scores = [float(_number(v, path, f"qid={qid!r} docno={d!r}", integer=False)) for d, v in docs.items()]
        yield RunTopic(qid, [d.encode("utf-8") for d in docs], scores, 0, _stem(path))


def _record_id(rec: Dict[str, Any], line: int) -> str:
    for key in _ID_KEYS:
        if key in rec and rec[key] is not None and not isinstance(rec[key], (dict, list, bool)):
            return str(rec[key])
    return str(line)


def _id_list(value: Any, path: str, line: int, field: str) -> List[bytes]:
    if not isinstance(value, list):
        raise ScoringError(f"must be a list of ids, got {json.dumps(value)[:60]}", path=path, line=line, field=field)
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise ScoringError(f"ids must be strings, got {json.dumps(v)[:60]}", path=path, line=line, field=field)
        out.append(str(v).encode("utf-8"))
    return out


def _jsonl_records(path: str) -> Iterator[Tuple[int, Dict[str, Any]]]:
    from .._io import iter_jsonl

    for line, rec in iter_jsonl(path):
        if not isinstance(rec, dict):
            raise ScoringError("each line must be a JSON object", path=path, line=line)
        yield line, rec


def _contexts(rec: Dict[str, Any], path: str, line: int) -> Tuple[List[bytes], Optional[List[float]]]:
    ctxs = rec["contexts"]
    if not isinstance(ctxs, list) or not all(isinstance(c, dict) and "document_id" in c for c in ctxs):
        raise ScoringError("must be a list of objects with document_id", path=path, line=line, field="contexts")
    docs = _id_list([c["document_id"] for c in ctxs], path, line, "contexts[].document_id")
    if ctxs and all("score" in c for c in ctxs):
        where = f"line {line}"
        return docs, [float(_number(c["score"], path, where, integer=False)) for c in ctxs]
    return docs, None


def _jsonl_run(path: str) -> Iterator[RunTopic]:
    seen: Dict[str, int] = {}
    for line, rec in _jsonl_records(path):
        qid = _record_id(rec, line)
        if qid in seen:
            raise ScoringError(f"topic {qid!r} appears again (first on line {seen[qid]})", path=path, line=line)
        seen[qid] = line
        scores: Optional[List[float]] = None
        if "retrieved_context_ids" in rec:
            docs = _id_list(rec["retrieved_context_ids"], path, line, "retrieved_context_ids")
        elif "retrieved_ids" in rec:
            docs = _id_list(rec["retrieved_ids"], path, line, "retrieved_ids")
        elif "contexts" in rec:
            docs, scores = _contexts(rec, path, line)
        else:
            raise ScoringError("has no retrieved_context_ids, retrieved_ids or contexts", path=path, line=line)
        if scores is None:
            n = len(docs)
            scores = [float(n - r) for r in range(1, n + 1)]
        yield RunTopic(qid, docs, scores, line, _stem(path))
    if not seen:
        raise ScoringError("holds no records", path=path)


def open_run(path: str, fmt: str = "auto") -> Tuple[Iterator[RunTopic], Optional[TrecRun]]:
    """The topics of a run file, and the :class:`TrecRun` reader when it is a TREC run (for its runid)."""
    fmt = detect_format(path, "run") if fmt == "auto" else fmt
    if fmt == "trec":
        reader = TrecRun(path)
        return iter(reader), reader
    if fmt == "json":
        return _json_run(path), None
    if fmt == "jsonl":
        return _jsonl_run(path), None
    raise ScoringError(f"unknown run format {fmt!r}; known: {', '.join(RUN_FORMATS)}", field="--run-format")


class _QrelsBuilder:
    def __init__(self, path: str, duplicates: str) -> None:
        self.path = path
        self.keep_first = duplicates == "first"
        self.qrels: Qrels = {}
        self.dropped = 0

    def add(self, qid: str, docno: bytes, grade: int, line: int) -> None:
        topic = self.qrels.setdefault(qid, {})
        if docno in topic:
            if self.keep_first:
                self.dropped += 1
                return
            first = _first_line(self.path, qid, docno) if line else None
            raise ScoringError(
                f"document {docno.decode('utf-8', 'replace')!r} is judged twice in topic {qid!r}"
                + (f" (first on line {first})" if first else "")
                + "; trec_eval refuses this (exit 4); --duplicates first keeps the first",
                path=self.path,
                line=line or None,
            )
        topic[docno] = grade


def _first_line(path: str, qid: str, docno: bytes) -> Optional[int]:
    """The line of the first judgment of ``docno`` in topic ``qid`` (error paths only: rereads the file)."""
    want = qid.encode("utf-8")
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            parts = raw.split(b"\t") if b"\t" in raw and len(raw.split()) < 4 else raw.split()
            if len(parts) >= 4 and parts[0] == want and parts[2] == docno:
                return lineno
            if len(parts) == 3 and parts[0].strip() == want and parts[1].strip() == docno:
                return lineno
    return None


def _grade(raw: bytes, path: str, line: int) -> int:
    grade = int_text(raw, 30)
    if grade is None or abs(grade) > MAX_GRADE:
        shown = repr(raw) if len(raw) <= 30 else f"a number of {len(raw)} characters"
        raise ScoringError(f"must be an integer grade, got {shown}", path=path, line=line, field="rel")
    return grade


def _trec_qrels(b: _QrelsBuilder) -> None:
    with _open_bytes(b.path) as fh:
        for lineno, raw in enumerate(fh, 1):
            parts = raw.split()
            if not parts or parts[0][:1] == b"#":
                continue
            if len(parts) < 4:
                raise ScoringError("malformed qrels line: expected 'qid iter docno rel'", path=b.path, line=lineno)
            b.add(_utf8(parts[0], b.path, lineno, "qid"), parts[2], _grade(parts[3], b.path, lineno), lineno)


def _tsv_qrels(b: _QrelsBuilder) -> None:
    try:
        fh = open(b.path, encoding="utf-8", newline="")
    except OSError as exc:
        raise ScoringError(f"cannot read: {exc.strerror}", path=b.path) from None
    with fh:
        try:
            for lineno, row in enumerate(csv.reader(fh, delimiter="\t"), 1):
                if not row or (lineno == 1 and not _is_int(row[-1])):
                    continue  # the header line (query-id, corpus-id, score)
                if len(row) < 3:
                    raise ScoringError("expected query-id<TAB>corpus-id<TAB>score", path=b.path, line=lineno)
                b.add(row[0], row[1].encode("utf-8"), _grade(row[2].encode(), b.path, lineno), lineno)
        except UnicodeDecodeError:
            raise ScoringError("is not valid UTF-8", path=b.path) from None


def _is_int(text: str) -> bool:
    return int_text(text) is not None


def _json_qrels(b: _QrelsBuilder) -> None:
    data = _read_json(b.path)
    if not isinstance(data, dict):
        raise ScoringError("must be an object {qid: {docno: grade}}", path=b.path)
    for qid, docs in data.items():
        if not isinstance(docs, dict):
            raise ScoringError("must be an object {docno: grade}", path=b.path, record=f"qid={qid!r}")
        for d, g in docs.items():
            b.add(qid, d.encode("utf-8"), _number(g, b.path, f"qid={qid!r} docno={d!r}", integer=True), 0)


def _jsonl_qrels(b: _QrelsBuilder) -> None:
    for line, rec in _jsonl_records(b.path):
        qid = _record_id(rec, line)
        for field in ("reference_context_ids", "gold_citations"):
            if field in rec:  # an empty list judges nothing: the topic has no qrels (as pytrec_eval drops it)
                for d in _id_list(rec[field], b.path, line, field):
                    b.add(qid, d, 1, line)
                break


def read_qrels(path: str, fmt: str = "auto", *, duplicates: str = "error") -> Qrels:
    """Read judgments into ``{qid: {docno bytes: grade}}``; an empty file is an input error."""
    fmt = detect_format(path, "qrels") if fmt == "auto" else fmt
    readers = {"trec": _trec_qrels, "tsv": _tsv_qrels, "json": _json_qrels, "jsonl": _jsonl_qrels}
    if fmt not in readers:
        raise ScoringError(f"unknown qrels format {fmt!r}; known: {', '.join(QRELS_FORMATS)}", field="--qrels-format")
    b = _QrelsBuilder(path, duplicates)
    readers[fmt](b)
    if not b.qrels:
        raise ScoringError("holds no judgments", path=path)
    return b.qrels
