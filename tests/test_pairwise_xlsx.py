"""The stdlib xlsx reader/writer used by pairwise (rageval_min/_xlsx.py)."""

import io
import os
import zipfile

import pytest
from conftest import DATA

from rageval_min._xlsx import read_xlsx_records, read_xlsx_rows, sheet_names, write_xlsx
from rageval_min.errors import ScoringError

PW = os.path.join(DATA, "pairwise")
EXAMPLE = os.path.join(PW, "examples", "DevBench_projects_example.xlsx")


def test_reads_the_shipped_devbench_example_workbook():
    assert sheet_names(EXAMPLE) == ["Sheet1"]
    recs = read_xlsx_records(EXAMPLE)
    assert [line for line, _ in recs] == [2, 3, 4, 5]
    header = list(recs[0][1])
    assert header[:5] == ["question", "index", "evaluating_guidance", "task", "reference_answer"]
    assert len([h for h in header if h.startswith("answer-")]) == 10
    assert [r["index"] for _, r in recs] == [
        "idcenter_uml_class-general",
        "idcenter_uml_class-faithfulness",
        "people_management_uml_class-general",
        "people_management_uml_class-faithfulness",
    ]
    assert [r["task"] for _, r in recs] == ["uml_class-general", "uml_class-faithfulness"] * 2
    assert all(r["reference_answer"] is None for _, r in recs)  # empty cells
    q = recs[0][1]["question"]
    assert q.startswith("According to the Product Requirement Document (PRD) below:\nPRD: <PRD starts>")
    # leading whitespace inside cells is preserved (the reference strips answers itself)
    assert recs[0][1]["answer-deepseek-coder-6.7b-instruct"].startswith(" # UML class")


def test_reads_the_shipped_result_workbook_numbers():
    path = os.path.join(
        PW, "synthetic", "nopt2", "synthetic_meta_infer_input_2680_record0_fakejudge_2", "win+halfdraw.xlsx"
    )
    rows = read_xlsx_rows(path)
    assert rows[0][:3] == ["model", "Overall-lang", "EN"]
    m3 = [r for r in rows if r[0] == "m3"][0]
    assert m3[1] == 0.6190000176429749 and type(m3[1]) is float
    assert m3[7] == 1 and type(m3[7]) is int  # openpyxl wrote '1'


def _workbook(sheet_xml, shared=None, rel_target="worksheets/sheet1.xml"):
    buf = io.BytesIO()
    ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(
            "xl/workbook.xml",
            f'<workbook xmlns="{ns}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
            '<sheets><sheet name="Data" sheetId="1" r:id="rId7"/></sheets></workbook>',
        )
        zf.writestr(
            "xl/_rels/workbook.xml.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId7" Type="x" Target="{rel_target}"/></Relationships>',
        )
        if shared is not None:
            zf.writestr("xl/sharedStrings.xml", f'<sst xmlns="{ns}">{shared}</sst>')
        zf.writestr(
            "xl/worksheets/sheet1.xml", f'<worksheet xmlns="{ns}"><sheetData>{sheet_xml}</sheetData></worksheet>'
        )
    return buf.getvalue()


def test_shared_strings_rich_text_sparse_cells_and_types(tmp_path):
    shared = (
        "<si><t>name</t></si><si><t>score</t></si>"
        '<si><r><t>Ri</t></r><r><rPr/><t xml:space="preserve">ch </t></r><rPh><t>x</t></rPh></si>'
        "<si><t>flag</t></si>"
    )
    sheet = (
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c>'
        '<c r="D1" t="s"><v>3</v></c></row>'
        '<row r="3"><c r="A3" t="s"><v>2</v></c><c r="B3"><v>2.5E-1</v></c>'
        '<c r="C3" t="e"><v>#N/A</v></c><c r="D3" t="b"><v>1</v></c></row>'
        '<row r="4"><c r="B4"><v>-7</v></c><c r="C4" t="str"><v>formula text</v></c></row>'
    )
    p = tmp_path / "s.xlsx"
    p.write_bytes(_workbook(sheet, shared))
    assert read_xlsx_rows(str(p)) == [
        ["name", "score", None, "flag"],
        [None, None, None, None],
        ["Rich ", 0.25, "#N/A", True],
        [None, -7, "formula text", None],
    ]
    assert sheet_names(str(p)) == ["Data"]
    recs = read_xlsx_records(str(p), sheet="Data")
    assert recs == [
        (3, {"name": "Rich ", "score": 0.25, "Unnamed: 2": "#N/A", "flag": True}),
        (4, {"name": None, "score": -7, "Unnamed: 2": "formula text", "flag": None}),
    ]


def test_absolute_relationship_target(tmp_path):
    p = tmp_path / "abs.xlsx"
    p.write_bytes(
        _workbook(
            '<row r="1"><c r="A1" t="inlineStr"><is><t>x</t></is></c></row>', rel_target="/xl/worksheets/sheet1.xml"
        )
    )
    assert read_xlsx_rows(str(p)) == [["x"]]


def test_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.xlsx"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ScoringError, match="bad.xlsx: cannot open as an xlsx workbook"):
        read_xlsx_rows(str(bad))
    with pytest.raises(ScoringError, match="no worksheet named 'Nope'"):
        read_xlsx_rows(EXAMPLE, sheet="Nope")
    dup = tmp_path / "dup.xlsx"
    dup.write_bytes(
        _workbook(
            '<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c>'
            '<c r="B1" t="inlineStr"><is><t>a</t></is></c></row>'
        )
    )
    with pytest.raises(ScoringError, match="duplicate column 'a'"):
        read_xlsx_records(str(dup))
    shared_bad = tmp_path / "sb.xlsx"
    shared_bad.write_bytes(_workbook('<row r="1"><c r="A1" t="s"><v>9</v></c></row>', "<si><t>a</t></si>"))
    with pytest.raises(ScoringError, match="A1: bad shared-string index"):
        read_xlsx_rows(str(shared_bad))


def test_writer_round_trip_is_exact_and_reproducible(tmp_path):
    rows = [["m1", 0.41179999709129333, 1, None, " padded ", "a<b & c"], ["m2", 0.0, -3, True, "x", ""]]
    out1, out2 = io.BytesIO(), io.BytesIO()
    write_xlsx(out1, ["model", "v", "n", "b", "s", "t"], rows)
    write_xlsx(out2, ["model", "v", "n", "b", "s", "t"], rows)
    assert out1.getvalue() == out2.getvalue()
    p = tmp_path / "w.xlsx"
    p.write_bytes(out1.getvalue())
    got = read_xlsx_rows(str(p))
    assert got[0] == ["model", "v", "n", "b", "s", "t"]
    assert got[1] == ["m1", 0.41179999709129333, 1, None, " padded ", "a<b & c"]
    assert got[2][:5] == ["m2", 0.0, -3, True, "x"]
