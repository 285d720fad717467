"""Hostile workbooks for the stdlib xlsx reader (issue #14 items 1 and 2).

Every workbook is built here with :mod:`zipfile`; each must be refused as an
input error (:class:`ScoringError`, exit 2) quickly and with little memory.
"""

import io
import json
import os
import struct
import subprocess
import sys
import tracemalloc
import zipfile

import pytest
from conftest import ROOT, run_cli

from rageval_min import _xlsx
from rageval_min._xlsx import read_xlsx_records, read_xlsx_rows, sheet_names
from rageval_min.errors import ScoringError

NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
SHEET = "xl/worksheets/sheet1.xml"
SST = "xl/sharedStrings.xml"
WORKBOOK = (
    f'<workbook xmlns="{NS}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
RELS = (
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="x" Target="worksheets/sheet1.xml"/></Relationships>'
)
MiB = 1024 * 1024


def _sheet_xml(rows_xml):
    return f'<worksheet xmlns="{NS}"><sheetData>{rows_xml}</sheetData></worksheet>'


def _zip(parts, compression=zipfile.ZIP_DEFLATED):
    """``{member: str or bytes}`` -> zip bytes (workbook parts added unless given)."""
    full = {"xl/workbook.xml": WORKBOOK, "xl/_rels/workbook.xml.rels": RELS}
    full.update(parts)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in full.items():
            if data is None:
                continue
            zf.writestr(name, data.encode("utf-8") if isinstance(data, str) else data)
    return buf.getvalue()


def _write(tmp_path, data, name="bomb.xlsx"):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def _patch(data, member, **fields):
    """Overwrite header fields of ``member`` in both its local and central headers.

    fields: flag, method, crc, csize, usize (little-endian, as stored).
    """
    local = {"flag": (6, "<H"), "method": (8, "<H"), "crc": (14, "<I"), "csize": (18, "<I"), "usize": (22, "<I")}
    central = {"flag": (8, "<H"), "method": (10, "<H"), "crc": (16, "<I"), "csize": (20, "<I"), "usize": (24, "<I")}
    out = bytearray(data)
    name = member.encode()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        offset = zf.getinfo(member).header_offset
    cd = data.index(b"PK\x01\x02")
    while True:
        nlen, xlen, clen = struct.unpack("<HHH", data[cd + 28 : cd + 34])
        if data[cd + 46 : cd + 46 + nlen] == name:
            break
        cd = data.index(b"PK\x01\x02", cd + 46 + nlen + xlen + clen)
    for key, value in fields.items():
        for base, table in ((offset, local), (cd, central)):
            pos, fmt = table[key]
            struct.pack_into(fmt, out, base + pos, value)
    return bytes(out)


def _member_data_span(data, member):
    """(start, length) of the member's compressed bytes."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        info = zf.getinfo(member)
    off = info.header_offset
    nlen, xlen = struct.unpack("<HH", data[off + 26 : off + 30])
    return off + 30 + nlen + xlen, info.compress_size


def _refused(path, *needles, reader=read_xlsx_records):
    with pytest.raises(ScoringError) as ei:
        reader(path)
    msg = str(ei.value)
    assert msg.startswith(path + ": "), msg
    for needle in needles:
        assert needle in msg, msg
    assert "\n" not in msg
    return msg


def _refused_peak(path, *needles, reader=read_xlsx_records):
    """:func:`_refused` under tracemalloc: ``(message, peak bytes)``."""
    tracemalloc.start()
    try:
        msg = _refused(path, *needles, reader=reader)
        return msg, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _peak(fn, *args):
    tracemalloc.start()
    try:
        result = fn(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --------------------------------------------------------------------------- grid


def test_grid_bomb_row_one_billion_is_refused_naming_part_and_cell(tmp_path):
    sheet = _sheet_xml('<row r="1000000000"><c r="A1000000000"><v>1</v></c></row>')
    path = _write(tmp_path, _zip({SHEET: sheet}))
    assert len(open(path, "rb").read()) < 2048
    for reader in (read_xlsx_records, read_xlsx_rows):
        msg = _refused(path, SHEET, "A1000000000", "1048576", reader=reader)
        assert "1000000000" in msg


def test_a_single_cell_at_xfd1048576_reads_sparsely(tmp_path):
    sheet = _sheet_xml('<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>far</t></is></c></row>')
    path = _write(tmp_path, _zip({SHEET: sheet}))
    recs, peak = _peak(read_xlsx_records, path)
    assert len(recs) == 1
    line, rec = recs[0]
    assert line == 1048576 and len(rec) == 16384
    assert rec["Unnamed: 16383"] == "far" and rec["Unnamed: 0"] is None
    assert peak < 32 * MiB, peak
    # the dense row grid (1,048,576 x 16,384) is refused, without allocating it
    with pytest.raises(ScoringError, match="too sparse to expand") as ei:
        _peak(read_xlsx_rows, path)
    assert SHEET in str(ei.value) and "XFD1048576" in str(ei.value)


def test_sparse_wide_header_with_many_rows_is_bounded(tmp_path):
    # header cell at XFD1 and one value per row: 5,000 records x 16,384 columns would be 82M cells
    rows = '<row r="1"><c r="XFD1" t="inlineStr"><is><t>h</t></is></c></row>' + "".join(
        f'<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>' for r in range(2, 5002)
    )
    path = _write(tmp_path, _zip({SHEET: _sheet_xml(rows)}))
    _, peak = _refused_peak(path, SHEET, "too sparse to expand", "XFD1")
    assert peak < 64 * MiB, peak


@pytest.mark.parametrize(
    "rows_xml, needles",
    [
        ('<row r="1"><c r="XFE1"><v>1</v></c></row>', ["XFE1", "16384"]),
        ('<row r="1"><c r="AAAA1"><v>1</v></c></row>', ["AAAA1", "16384"]),
        ('<row r="1048577"><c r="A1048577"><v>1</v></c></row>', ["A1048577", "1048577"]),
        ('<row r="1"><c r="A1048577"><v>1</v></c></row>', ["A1048577", "1048576"]),
        ('<row r="1048577"/>', ["1048577"]),
        ('<row r="0"><c r="A0"><v>1</v></c></row>', ["A0"]),
        ('<row r="-3"><c><v>1</v></c></row>', ["-3", "outside"]),
        ("<row>" + "<c/>" * 16385 + "</row>", ["column", "16384"]),
        ('<row r="1048576"/><row><c><v>1</v></c></row>', ["A1048577", "1048577"]),
    ],
)
def test_references_beyond_the_format_limits_are_refused(tmp_path, rows_xml, needles):
    path = _write(tmp_path, _zip({SHEET: _sheet_xml(rows_xml)}))
    _refused(path, SHEET, *needles)


def test_non_integer_row_number(tmp_path):
    path = _write(tmp_path, _zip({SHEET: _sheet_xml('<row r="1x"><c r="A1"><v>1</v></c></row>')}))
    _refused(path, SHEET, "A1", 'r="1x"', "not an integer")


def test_huge_integer_text_is_not_a_number(tmp_path):
    path = _write(tmp_path, _zip({SHEET: _sheet_xml('<row r="1"><c r="A1"><v>' + "9" * 5000 + "</v></c></row>")}))
    _refused(path, SHEET, "A1", "not a number")


def test_missing_shared_strings_part(tmp_path):
    path = _write(tmp_path, _zip({SHEET: _sheet_xml('<row r="1"><c r="B1" t="s"><v>0</v></c></row>')}))
    _refused(path, SHEET, "B1", "no xl/sharedStrings.xml")


# --------------------------------------------------------------------------- zip bombs


def test_ratio_bomb_is_refused_before_decompressing(tmp_path):
    rows = '<row><c t="inlineStr"><is><t>aaaaaaaa</t></is></c></row>' * (4 * MiB // 52)
    data = _zip({SHEET: _sheet_xml(rows)})
    assert len(data) < 200 * 1024
    path = _write(tmp_path, data)
    _, peak = _refused_peak(path, SHEET, "compression ratio exceeds 100:1")
    assert peak < 8 * MiB, peak


def test_part_beyond_the_size_cap_is_refused(tmp_path, monkeypatch):
    # a highly compressible sheet beyond the cap (the cap lowered so the test stays small)
    monkeypatch.setattr(_xlsx, "MAX_PART_BYTES", 2 * MiB)
    monkeypatch.setattr(_xlsx, "MAX_RATIO", 10**6)
    rows = "".join(f'<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>' for r in range(1, 80001))
    path = _write(tmp_path, _zip({SHEET: _sheet_xml(rows)}))
    _refused(path, SHEET, "uncompressed size exceeds the limit of 2097152 bytes")


def test_declared_size_beyond_the_default_cap_is_refused_up_front(tmp_path):
    data = _zip({SHEET: _sheet_xml('<row r="1"><c r="A1"><v>1</v></c></row>')})
    path = _write(tmp_path, _patch(data, SHEET, usize=300 * MiB))
    _refused(path, SHEET, "uncompressed size exceeds the limit of 268435456 bytes")


def test_shared_strings_ratio_bomb(tmp_path):
    sst = f'<sst xmlns="{NS}">' + "<si><t>x</t></si>" * (4 * MiB // 17) + "</sst>"
    path = _write(tmp_path, _zip({SST: sst, SHEET: _sheet_xml('<row r="1"><c r="A1" t="s"><v>0</v></c></row>')}))
    _refused(path, SST, "compression ratio")


def test_defaults_are_documented():
    doc = _xlsx.__doc__
    assert _xlsx.MAX_PART_BYTES == 256 * MiB and "256 MiB" in doc
    assert _xlsx.MAX_RATIO == 100 and _xlsx.RATIO_FLOOR_BYTES == MiB
    assert (_xlsx.MAX_ROWS, _xlsx.MAX_COLS) == (1048576, 16384)
    assert "DOCTYPE" in doc and "XFD1048576" in doc


# --------------------------------------------------------------------------- corrupt containers


def _plain_sheet():
    return _sheet_xml('<row r="1"><c r="A1" t="inlineStr"><is><t>hello world</t></is></c></row>')


def test_bad_crc(tmp_path):
    data = _zip({SHEET: _plain_sheet()}, compression=zipfile.ZIP_STORED)
    path = _write(tmp_path, data.replace(b"hello world", b"hello wOrld"))
    _refused(path, SHEET, "corrupt zip member", "CRC")


def test_truncated_deflate_stream(tmp_path):
    data = _zip({SHEET: _plain_sheet() * 3})
    start, size = _member_data_span(data, SHEET)
    path = _write(tmp_path, _patch(data, SHEET, csize=size // 2))
    _refused(path, SHEET, "corrupt zip member")


def test_invalid_deflate_data(tmp_path):
    data = _zip({SHEET: _plain_sheet()})
    start, size = _member_data_span(data, SHEET)
    garbage = data[:start] + b"\xff" * size + data[start + size :]
    path = _write(tmp_path, garbage)
    msg = _refused(path, SHEET, "corrupt zip member")
    assert "invalid" in msg or "CRC" in msg


def test_encrypted_member(tmp_path):
    data = _zip({SHEET: _plain_sheet()})
    path = _write(tmp_path, _patch(data, SHEET, flag=0x1))
    _refused(path, SHEET, "encrypted")


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, 99])
def test_unsupported_compression_method(tmp_path, method):
    data = _zip({SHEET: _plain_sheet()})
    path = _write(tmp_path, _patch(data, SHEET, method=method))
    _refused(path, SHEET, f"unsupported compression method {method}")


def test_not_a_zip_and_missing_parts(tmp_path):
    _refused(_write(tmp_path, b"PK\x03\x04 but not really a zip"), "cannot open as an xlsx workbook")
    _refused(_write(tmp_path, b""), "cannot open as an xlsx workbook")
    whole = _zip({SHEET: _plain_sheet()})
    _refused(_write(tmp_path, whole[: len(whole) // 2]), "cannot open as an xlsx workbook")
    _refused(_write(tmp_path, _zip({"xl/workbook.xml": None})), "no xl/workbook.xml")
    _refused(_write(tmp_path, _zip({})), "worksheet part xl/worksheets/sheet1.xml is missing")
    # a zip whose every entry is fine but whose workbook lists no sheet
    _refused(_write(tmp_path, _zip({"xl/workbook.xml": f'<workbook xmlns="{NS}"/>'})), "has no worksheet")
    directory = tmp_path / "dir.xlsx"
    directory.mkdir()
    _refused(str(directory), "cannot open as an xlsx workbook")


@pytest.mark.parametrize(
    "member, xml",
    [
        (SHEET, f'<worksheet xmlns="{NS}"><sheetData><row r="1"><c r="A1"><v>1</v></c></sheetData></worksheet>'),
        (SHEET, "not xml at all"),
        (SHEET, f'<worksheet xmlns="{NS}"><sheetData><row r="1"><c r="A1"><v>&undefined;</v></c></row>'),
        (SST, f'<sst xmlns="{NS}"><si><t>x</si></sst>'),
        ("xl/workbook.xml", "<workbook"),
        ("xl/_rels/workbook.xml.rels", "<Relationships><"),
    ],
)
def test_malformed_xml(tmp_path, member, xml):
    parts = {SHEET: _plain_sheet(), member: xml}
    path = _write(tmp_path, _zip(parts))
    _refused(path, member, "malformed XML")


_LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(f'<!ENTITY lol{i} "{("&lol%s;" % (i - 1 if i > 1 else "")) * 10}">' for i in range(1, 10))
    + "]>"
)


@pytest.mark.parametrize("member", [SHEET, SST, "xl/workbook.xml", "xl/_rels/workbook.xml.rels"])
def test_doctype_entity_expansion_is_refused(tmp_path, member):
    bodies = {
        SHEET: f'<worksheet xmlns="{NS}"><sheetData><row r="1"><c r="A1" t="str"><v>&lol9;</v></c></row>'
        "</sheetData></worksheet>",
        SST: f'<sst xmlns="{NS}"><si><t>&lol9;</t></si></sst>',
        "xl/workbook.xml": WORKBOOK.replace("Data", "&lol9;"),
        "xl/_rels/workbook.xml.rels": RELS.replace('Type="x"', 'Type="&lol9;"'),
    }
    path = _write(tmp_path, _zip({SHEET: _plain_sheet(), member: _LAUGHS + bodies[member]}))
    _, peak = _refused_peak(path, member, "DOCTYPE")
    assert peak < 8 * MiB, peak
    with pytest.raises(ScoringError, match="DOCTYPE"):
        sheet_names(path) if member in ("xl/workbook.xml", "xl/_rels/workbook.xml.rels") else read_xlsx_rows(path)


def test_external_entity_doctype_is_refused(tmp_path):
    xml = '<?xml version="1.0"?><!DOCTYPE w [<!ENTITY x SYSTEM "file:///etc/passwd">]>' + _plain_sheet()
    path = _write(tmp_path, _zip({SHEET: xml}))
    _refused(path, SHEET, "DOCTYPE")


# --------------------------------------------------------------------------- valid files still read


def test_valid_workbook_still_reads_exactly(tmp_path):
    sst = f'<sst xmlns="{NS}"><si><t>name</t></si><si><r><t>a</t></r><r><t xml:space="preserve"> b</t></r></si></sst>'
    rows = (
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="C1" t="inlineStr"><is><t>x</t></is></c></row>'
        '<row r="3"><c r="A3" t="s"><v>1</v></c><c r="B3"><v>12</v></c><c r="E3" s="1"/></row>'
        '<row r="4"><c r="B4" t="str"><v></v></c></row>'
    )
    path = _write(tmp_path, _zip({SST: sst, SHEET: _sheet_xml(rows)}), name="ok.xlsx")
    assert read_xlsx_rows(path) == [
        ["name", None, "x", None, None],
        [None] * 5,
        ["a b", 12, None, None, None],
        [None] * 5,
    ]
    assert read_xlsx_records(path) == [
        (3, {"name": "a b", "Unnamed: 1": 12, "x": None, "Unnamed: 3": None, "Unnamed: 4": None})
    ]


# --------------------------------------------------------------------------- CLI


@pytest.mark.parametrize(
    "data, needle",
    [
        (_zip({SHEET: _sheet_xml('<row r="1000000000"><c r="A1000000000"><v>1</v></c></row>')}), "A1000000000"),
        (_zip({SHEET: _sheet_xml("<row><c/></row>" * (2 * MiB // 15))}), "compression ratio"),
        (_zip({SHEET: _LAUGHS + _plain_sheet()}), "DOCTYPE"),
        (b"not a zip", "cannot open"),
    ],
)
def test_cli_pairwise_score_exits_2_with_one_line(tmp_path, data, needle):
    path = _write(tmp_path, data, name="BOMB.xlsx")
    r = run_cli(["pairwise", "score", "--record", path, "--nopt", "2", "--refm", "r"])
    assert r.code == 2, r
    lines = r.err.splitlines()
    assert len(lines) == 1, r.err
    assert path in lines[0] and needle in lines[0] and "Traceback" not in r.err


def test_deep_nesting_is_refused(tmp_path):
    sheet = f'<worksheet xmlns="{NS}">' + "<a>" * 100000 + "</a>" * 100000 + "</worksheet>"
    path = _write(tmp_path, _zip({SHEET: sheet}))
    _, peak = _refused_peak(path, SHEET, "nested deeper than 256 levels")
    assert peak < 8 * MiB, peak


def test_subprocess_peak_rss_stays_small(tmp_path):
    """The real CLI in a fresh process: exit 2, one stderr line, small peak RSS."""
    # VmHWM: peak RSS of this process image (ru_maxrss would include a forked parent's)
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs /proc/self/status (Linux)")
    bombs = {
        "grid.xlsx": _zip({SHEET: _sheet_xml('<row r="1000000000"><c r="A1000000000"><v>1</v></c></row>')}),
        "xfd.xlsx": _zip({SHEET: _sheet_xml('<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>')}),
        "ratio.xlsx": _zip({SHEET: _sheet_xml("<row><c/></row>" * (8 * MiB // 15))}),
    }
    paths = [_write(tmp_path, data, name=name) for name, data in bombs.items()]
    script = (
        "import io, json, sys\n"
        "from rageval_min.cli import main\n"
        "out = []\n"
        "for p in sys.argv[1:]:\n"
        "    err = io.StringIO()\n"
        "    code = main(['pairwise', 'score', '--record', p, '--nopt', '2', '--refm', 'r'],"
        " stdout=io.StringIO(), stderr=err)\n"
        "    out.append([code, err.getvalue()])\n"
        "hwm = [x for x in open('/proc/self/status') if x.startswith('VmHWM:')][0].split()[1]\n"
        "print(json.dumps({'runs': out, 'rss': int(hwm) * 1024}))\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-c", script] + paths, env=env, capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    for path, (code, err) in zip(paths, report["runs"]):
        assert code == 2, err
        assert len(err.splitlines()) == 1 and path in err, err
    assert report["rss"] < 150 * MiB, report["rss"]
