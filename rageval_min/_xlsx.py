"""A small stdlib reader (and writer) for ``.xlsx`` workbooks.

Only what evaluation tables need: the cell values of one worksheet, no styles,
formulas or dates.  Reading uses :mod:`zipfile` and :mod:`xml.etree.ElementTree`
and understands

* shared strings (``t="s"``, including rich-text runs ``<r><t>..</t></r>``;
  phonetic runs ``<rPh>`` are ignored as Excel does),
* inline strings (``t="inlineStr"``, as written by openpyxl/pandas),
* formula results stored as strings (``t="str"``), booleans (``t="b"``) and
  error values (``t="e"``, returned as their text such as ``#N/A``),
* numbers (no ``t`` or ``t="n"``): an ``int`` when the stored text is an
  integer literal, otherwise a ``float`` (the same rule openpyxl applies),
* sparse rows and cells (positions come from the ``r="B7"`` references; gaps
  are ``None``).

Empty cells are ``None``.  Cell text is returned exactly as stored (no strip,
no NA-token conversion): callers decide what "missing" means.

The writer produces a minimal, valid single-sheet workbook with inline strings
and numeric cells; floats are written with ``repr`` so they read back exactly.
"""

import posixpath
import re
import zipfile
from typing import Any, Dict, List, Optional, Sequence, Tuple
from xml.etree import ElementTree as ET
from xml.sax.saxutils import escape

from .errors import ScoringError

__all__ = ["read_xlsx_rows", "read_xlsx_records", "write_xlsx", "sheet_names"]

_NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_NS_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_M = "{%s}" % _NS_MAIN
_CELL_REF = re.compile(r"^([A-Z]+)([0-9]+)$")
_INT_LITERAL = re.compile(r"^[+-]?[0-9]+$")


def _col_index(letters: str) -> int:
    """``A`` -> 0, ``Z`` -> 25, ``AA`` -> 26.

    >>> [_col_index(c) for c in ("A", "Z", "AA", "AB")]
    [0, 25, 26, 27]
    """
    n = 0
    for ch in letters:
        n = n * 26 + (ord(ch) - 64)
    return n - 1


def _col_letters(index: int) -> str:
    """Inverse of :func:`_col_index`.

    >>> [_col_letters(i) for i in (0, 25, 26, 27)]
    ['A', 'Z', 'AA', 'AB']
    """
    out = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        out = chr(65 + rem) + out
    return out


def _text_of(elem: Optional[ET.Element]) -> str:
    """Concatenated ``<t>`` text of a string item, skipping phonetic runs."""
    if elem is None:
        return ""
    parts: List[str] = []
    for child in elem:
        tag = child.tag
        if tag == _M + "t":
            parts.append(child.text or "")
        elif tag == _M + "r":
            for t in child.iter(_M + "t"):
                parts.append(t.text or "")
    return "".join(parts)


def _parse_number(text: str) -> Any:
    if _INT_LITERAL.match(text):
        return int(text)
    return float(text)


def _open(path: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise ScoringError(f"cannot open as an xlsx workbook: {exc}", path=str(path)) from None


def _sheet_targets(zf: zipfile.ZipFile, path: str) -> List[Tuple[str, str]]:
    """``[(sheet name, zip member)]`` in workbook order."""
    try:
        wb = ET.fromstring(zf.read("xl/workbook.xml"))
    except KeyError:
        raise ScoringError("not an xlsx workbook (no xl/workbook.xml)", path=str(path)) from None
    rels: Dict[str, str] = {}
    try:
        rel_root = ET.fromstring(zf.read("xl/_rels/workbook.xml.rels"))
        for rel in rel_root.iter("{%s}Relationship" % _NS_PKG_REL):
            target = rel.get("Target", "")
            if target.startswith("/"):
                member = target.lstrip("/")
            else:
                member = posixpath.normpath(posixpath.join("xl", target))
            rels[rel.get("Id", "")] = member
    except KeyError:
        pass
    out: List[Tuple[str, str]] = []
    for i, sheet in enumerate(wb.iter(_M + "sheet")):
        rid = sheet.get("{%s}id" % _NS_REL, "")
        member = rels.get(rid, "xl/worksheets/sheet%d.xml" % (i + 1))
        out.append((sheet.get("name", ""), member))
    if not out:
        raise ScoringError("xlsx workbook has no worksheet", path=str(path))
    return out


def sheet_names(path: str) -> List[str]:
    """Names of the worksheets, in workbook order."""
    with _open(path) as zf:
        return [name for name, _ in _sheet_targets(zf, path)]


def read_xlsx_rows(path: str, sheet: Optional[str] = None) -> List[List[Any]]:
    """All rows of one worksheet (the first one by default) as lists of values.

    Rows are padded with ``None`` to the widest row; fully missing rows in the
    middle of the sheet are returned as rows of ``None``.  Raises
    :class:`ScoringError` naming the file when it is not a readable workbook or
    the sheet does not exist.
    """
    with _open(path) as zf:
        targets = _sheet_targets(zf, path)
        if sheet is None:
            member = targets[0][1]
        else:
            found = [m for n, m in targets if n == sheet]
            if not found:
                names = ", ".join(n for n, _ in targets)
                raise ScoringError(f"no worksheet named {sheet!r} (have: {names})", path=str(path))
            member = found[0]
        shared: List[str] = []
        if "xl/sharedStrings.xml" in zf.namelist():
            sst = ET.fromstring(zf.read("xl/sharedStrings.xml"))
            shared = [_text_of(si) for si in sst.iter(_M + "si")]
        try:
            data = zf.read(member)
        except KeyError:
            raise ScoringError(f"worksheet part {member} is missing", path=str(path)) from None
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ScoringError(f"malformed worksheet XML: {exc}", path=str(path)) from None
    rows: Dict[int, Dict[int, Any]] = {}
    next_row = 0
    for row in root.iter(_M + "row"):
        r_attr = row.get("r")
        r = int(r_attr) - 1 if r_attr else next_row
        next_row = r + 1
        cells: Dict[int, Any] = {}
        next_col = 0
        for c in row.iter(_M + "c"):
            ref = c.get("r")
            if ref:
                m = _CELL_REF.match(ref)
                col = _col_index(m.group(1)) if m else next_col
            else:
                col = next_col
            next_col = col + 1
            t = c.get("t", "n")
            v = c.find(_M + "v")
            vtext = v.text if v is not None else None
            value: Any
            if t == "inlineStr":
                is_elem = c.find(_M + "is")
                value = _text_of(is_elem) if is_elem is not None else None
            elif t == "s":
                if vtext is None:
                    value = None
                else:
                    try:
                        value = shared[int(vtext)]
                    except (ValueError, IndexError):
                        raise ScoringError(f"cell {ref}: bad shared-string index {vtext!r}", path=str(path)) from None
            elif t in ("str", "e"):
                value = vtext if vtext is not None else None
            elif t == "b":
                value = None if vtext is None else vtext.strip() in ("1", "true")
            else:
                if vtext is None or vtext == "":
                    value = None
                else:
                    try:
                        value = _parse_number(vtext)
                    except ValueError:
                        raise ScoringError(f"cell {ref}: not a number: {vtext!r}", path=str(path)) from None
            cells[col] = value
        rows[r] = cells
    if not rows:
        return []
    width = max((max(c) + 1 for c in rows.values() if c), default=0)
    last = max(rows)
    out: List[List[Any]] = []
    for r in range(last + 1):
        cells = rows.get(r, {})
        out.append([cells.get(i) for i in range(width)])
    return out


def read_xlsx_records(path: str, sheet: Optional[str] = None) -> List[Tuple[int, Dict[str, Any]]]:
    """The first row is the header; returns ``[(sheet row number, {column: value})]``.

    Header cells are converted with ``str()``; an empty header cell becomes
    ``Unnamed: <i>`` (pandas' name).  Rows whose every cell is empty are
    skipped, as pandas does.  Duplicate column names raise
    :class:`ScoringError`.
    """
    rows = read_xlsx_rows(path, sheet)
    if not rows:
        return []
    header = [(f"Unnamed: {i}" if h is None else str(h)) for i, h in enumerate(rows[0])]
    seen = set()
    for h in header:
        if h in seen:
            raise ScoringError(f"duplicate column {h!r} in the header row", path=str(path), line=1)
        seen.add(h)
    out: List[Tuple[int, Dict[str, Any]]] = []
    for i, row in enumerate(rows[1:], start=2):
        if all(v is None for v in row):
            continue
        out.append((i, dict(zip(header, row))))
    return out


def _cell_xml(ref: str, value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return f'<c r="{ref}" t="b"><v>{int(value)}</v></c>'
    if isinstance(value, (int, float)):
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return f'<c r="{ref}" t="e"><v>#NUM!</v></c>'
        return f'<c r="{ref}" t="n"><v>{value!r}</v></c>'
    text = escape(str(value))
    space = ' xml:space="preserve"' if text != text.strip() else ""
    return f'<c r="{ref}" t="inlineStr"><is><t{space}>{text}</t></is></c>'


def write_xlsx(fileobj: Any, header: Sequence[Any], rows: Sequence[Sequence[Any]], *, sheet: str = "Sheet1") -> None:
    """Write one worksheet (header row + rows) to a binary file object.

    Strings become inline strings, ints and floats numeric cells (floats as
    their shortest ``repr``), ``None`` an empty cell.
    """
    lines = []
    for r, row in enumerate([list(header)] + [list(x) for x in rows], start=1):
        cells = "".join(_cell_xml(f"{_col_letters(c)}{r}", v) for c, v in enumerate(row))
        lines.append(f'<row r="{r}">{cells}</row>')
    sheet_xml = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        f'<worksheet xmlns="{_NS_MAIN}"><sheetData>' + "".join(lines) + "</sheetData></worksheet>"
    )
    workbook = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        f'<workbook xmlns="{_NS_MAIN}" xmlns:r="{_NS_REL}"><sheets>'
        f'<sheet name="{escape(sheet)}" sheetId="1" r:id="rId1"/></sheets></workbook>'
    )
    wb_rels = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        f'<Relationships xmlns="{_NS_PKG_REL}">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>'
    )
    root_rels = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        f'<Relationships xmlns="{_NS_PKG_REL}">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>'
    )
    content_types = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.'
        'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>'
    )
    # Fixed timestamps keep the output byte-reproducible.
    with zipfile.ZipFile(fileobj, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in (
            ("[Content_Types].xml", content_types),
            ("_rels/.rels", root_rels),
            ("xl/workbook.xml", workbook),
            ("xl/_rels/workbook.xml.rels", wb_rels),
            ("xl/worksheets/sheet1.xml", sheet_xml),
        ):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, text.encode("utf-8"))
