"""A small stdlib reader (and writer) for ``.xlsx`` workbooks.

Only what evaluation tables need: the cell values of one worksheet, no styles,
formulas or dates.  Reading streams each XML part out of the zip container
(:mod:`zipfile` + :mod:`xml.parsers.expat`, no tree is built) and understands

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

Security and limits
-------------------
A workbook is untrusted input.  Every problem below is a :class:`ScoringError`
naming the file and the zip part (and the cell when there is one), i.e. exit
status 2 from the CLI, never an internal error:

* **Part size**: at most :data:`MAX_PART_BYTES` (256 MiB) of uncompressed XML
  per part (``xl/workbook.xml``, its ``.rels``, ``xl/sharedStrings.xml``, the
  worksheet).  The size declared in the zip directory is checked before
  decompressing and the bytes actually produced are counted while streaming.
* **Compression ratio**: a part larger than :data:`RATIO_FLOOR_BYTES` (1 MiB)
  uncompressed may not exceed :data:`MAX_RATIO` (100) times its compressed
  size (zip bombs).
* **Container**: only the *stored* and *deflate* methods (the ones OOXML
  allows); encrypted members, bad CRCs, truncated or invalid deflate data, a
  file that is not a zip and missing parts are refused.
* **XML**: malformed XML and any ``<!DOCTYPE`` (hence any ``<!ENTITY``
  declaration: "billion laughs", external entities) are refused, and so is
  element nesting deeper than :data:`MAX_DEPTH` (256) levels.
* **Grid**: row numbers must be integers in 1..:data:`MAX_ROWS` (1,048,576)
  and columns within ``A``..``XFD`` (:data:`MAX_COLS`, 16,384), the format's
  limits; a cell reference beyond them (``XFE1``, ``A1048577``) is refused.
* **Memory**: cells are stored sparsely while parsing (memory follows the
  cells present, not the cell references).  The dense result (rows padded to
  the widest row) may hold at most ``max(DENSE_FLOOR_CELLS, MAX_EXPANSION *
  cells present)`` = ``max(1,048,576, 16 x stored cells)`` values, else the
  sheet is refused as too sparse to expand.  :func:`read_xlsx_records`
  materialises only the header row and the non-empty rows, so a sheet with a
  single cell at ``XFD1048576`` reads as one record; :func:`read_xlsx_rows`
  returns every row up to the last one and refuses such a sheet.
* Integer cell text longer than 4,300 digits is "not a number" (Python's
  default ``int`` conversion limit, applied on every Python version).
"""

import posixpath
import re
import struct
import zipfile
import zlib
from typing import Any, Dict, List, Optional, Sequence, Tuple
from xml.parsers import expat
from xml.sax.saxutils import escape

from ._numbers import int_text
from .errors import ScoringError

__all__ = ["read_xlsx_rows", "read_xlsx_records", "write_xlsx", "sheet_names"]

_NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_NS_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
# expat reports namespaced names as "<uri>}<local>" (namespace_separator="}").
_M = _NS_MAIN + "}"
_PKG = _NS_PKG_REL + "}"
_R_ID = _NS_REL + "}id"
_CELL_REF = re.compile(r"^([A-Z]+)([0-9]+)$")
_INT_LITERAL = re.compile(r"^[+-]?[0-9]+$")

#: The format's grid limits (ECMA-376, Excel): rows 1..1,048,576, columns A..XFD.
MAX_ROWS = 1048576
MAX_COLS = 16384
#: Largest uncompressed size of one XML part, in bytes.
MAX_PART_BYTES = 256 * 1024 * 1024
#: Largest uncompressed/compressed size ratio of a part ...
MAX_RATIO = 100
#: ... once the part is larger than this many uncompressed bytes.
RATIO_FLOOR_BYTES = 1024 * 1024
#: A dense result may always hold this many values ...
DENSE_FLOOR_CELLS = 1024 * 1024
#: ... or this many times the number of stored cells (and rows), if larger.
MAX_EXPANSION = 16
#: Deepest element nesting accepted in a part (a worksheet needs about 7).
MAX_DEPTH = 256
#: Longest integer literal converted (CPython's default ``int`` digit limit).
_MAX_INT_DIGITS = 4300
_CHUNK = 64 * 1024


def _col_index(letters: str) -> int:
    """``A`` -> 0, ``Z`` -> 25, ``AA`` -> 26.

    >>> [_col_index(c) for c in ("A", "Z", "AA", "AB", "XFD")]
    [0, 25, 26, 27, 16383]
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


def _parse_number(text: str) -> Any:
    if _INT_LITERAL.match(text):
        if len(text.lstrip("+-")) > _MAX_INT_DIGITS:
            raise ValueError("integer literal too long")
        return int(text)
    return float(text)


# --------------------------------------------------------------------------- container


def _open(path: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (OSError, EOFError, ValueError, NotImplementedError, struct.error, zipfile.BadZipFile) as exc:
        raise ScoringError(f"cannot open as an xlsx workbook: {exc}", path=str(path)) from None


def _refuse_doctype(*_args: Any) -> None:
    raise ScoringError("<!DOCTYPE>/<!ENTITY> declarations are not allowed in xlsx XML")


class _Handler:
    """Base of the streaming part readers: an element stack and text capture.

    ``_capture(kind)`` collects the text directly inside the element being
    started, up to its first child (ElementTree's ``.text``); ``_captured`` is
    called with it when that element ends.
    """

    def __init__(self) -> None:
        self.stack: List[str] = []
        self._cap: Optional[List[str]] = None
        self._cap_depth = -1
        self._cap_blocked = False
        self._cap_kind = ""

    def start(self, name: str, attrs: Dict[str, str]) -> None:
        if self._cap is not None and len(self.stack) == self._cap_depth:
            self._cap_blocked = True  # a child: later text is its tail, not our text
        if len(self.stack) >= MAX_DEPTH:
            raise ScoringError(f"XML elements nested deeper than {MAX_DEPTH} levels")
        self.stack.append(name)
        self.on_start(name, attrs)

    def end(self, name: str) -> None:
        if self._cap is not None and len(self.stack) == self._cap_depth:
            text = "".join(self._cap)
            self._cap = None
            self._captured(self._cap_kind, text)
        self.on_end(name, len(self.stack) - 1)
        self.stack.pop()

    def data(self, text: str) -> None:
        if self._cap is not None and not self._cap_blocked and len(self.stack) == self._cap_depth:
            self._cap.append(text)

    def _capture(self, kind: str) -> None:
        if self._cap is None:
            self._cap = []
            self._cap_depth = len(self.stack)
            self._cap_blocked = False
            self._cap_kind = kind

    def on_start(self, name: str, attrs: Dict[str, str]) -> None:
        """An element started (it is ``self.stack[-1]``)."""

    def on_end(self, name: str, index: int) -> None:
        """The element at ``self.stack[index]`` ends."""

    def _captured(self, kind: str, text: str) -> None:
        """The text of a captured element, when it ends."""


class _StringItems(_Handler):
    """String items (``<si>`` of the shared strings, ``<is>`` of a cell).

    Text is the concatenated ``<t>`` text of the item's ``<t>`` children and of
    the ``<t>`` elements inside its ``<r>`` runs; phonetic runs are skipped.
    """

    def __init__(self) -> None:
        super().__init__()
        self.item_index = -1
        self.item_parts: List[str] = []

    def _begin_item(self) -> None:
        self.item_index = len(self.stack) - 1
        self.item_parts = []

    def _item_start(self, name: str) -> None:
        if self.item_index < 0 or name != _M + "t":
            return
        parent = len(self.stack) - 2
        if parent == self.item_index or (parent > self.item_index and self.stack[self.item_index + 1] == _M + "r"):
            self._capture("t")

    def _captured(self, kind: str, text: str) -> None:
        if kind == "t":
            self.item_parts.append(text)

    def _end_item(self) -> str:
        self.item_index = -1
        return "".join(self.item_parts)


class _SharedStrings(_StringItems):
    def __init__(self) -> None:
        super().__init__()
        self.strings: List[str] = []

    def on_start(self, name: str, attrs: Dict[str, str]) -> None:
        if name == _M + "si" and self.item_index < 0:
            self._begin_item()
        else:
            self._item_start(name)

    def on_end(self, name: str, index: int) -> None:
        if index == self.item_index:
            self.strings.append(self._end_item())


class _Workbook(_Handler):
    def __init__(self) -> None:
        super().__init__()
        self.sheets: List[Tuple[str, str]] = []

    def on_start(self, name: str, attrs: Dict[str, str]) -> None:
        if name == _M + "sheet":
            self.sheets.append((attrs.get("name", ""), attrs.get(_R_ID, "")))


class _Rels(_Handler):
    def __init__(self) -> None:
        super().__init__()
        self.targets: Dict[str, str] = {}

    def on_start(self, name: str, attrs: Dict[str, str]) -> None:
        if name == _PKG + "Relationship":
            self.targets[attrs.get("Id", "")] = attrs.get("Target", "")


def _stream_part(zf: zipfile.ZipFile, info: zipfile.ZipInfo, handler: _Handler, path: str) -> None:
    """Parse one zip member with ``handler``, enforcing the limits."""
    part = info.filename
    where = str(path)
    if info.flag_bits & 0x1:
        raise ScoringError(f"{part}: the part is encrypted", path=where)
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ScoringError(f"{part}: unsupported compression method {info.compress_type}", path=where)

    def too_big(size: int) -> Optional[str]:
        if size > MAX_PART_BYTES:
            return f"{part}: uncompressed size exceeds the limit of {MAX_PART_BYTES} bytes"
        if size > RATIO_FLOOR_BYTES and size > MAX_RATIO * max(info.compress_size, 1):
            return (
                f"{part}: compression ratio exceeds {MAX_RATIO}:1 "
                f"({size} bytes from {info.compress_size} compressed; zip bomb?)"
            )
        return None

    problem = too_big(info.file_size)
    if problem:
        raise ScoringError(problem, path=where)
    parser = expat.ParserCreate(namespace_separator="}")
    parser.buffer_text = True
    parser.StartDoctypeDeclHandler = _refuse_doctype
    parser.EntityDeclHandler = _refuse_doctype
    parser.StartElementHandler = handler.start
    parser.EndElementHandler = handler.end
    parser.CharacterDataHandler = handler.data
    total = 0
    try:
        with zf.open(info) as fh:
            while True:
                chunk = fh.read(_CHUNK)
                if not chunk:
                    break
                total += len(chunk)
                problem = too_big(total)
                if problem:
                    raise ScoringError(problem, path=where)
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except ScoringError as exc:
        if exc.path is None:  # raised by a handler: add where it happened
            raise ScoringError(f"{part}: {exc.msg}", path=where) from None
        raise
    except expat.ExpatError as exc:
        msg = f"{part}: malformed XML: {expat.ErrorString(exc.code)} (line {exc.lineno}, column {exc.offset})"
        raise ScoringError(msg, path=where) from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError, ValueError) as exc:
        raise ScoringError(f"{part}: corrupt zip member: {exc or type(exc).__name__}", path=where) from None


def _read_part(zf: zipfile.ZipFile, member: str, handler: _Handler, path: str) -> bool:
    """Stream ``member`` through ``handler``; False when the part is absent."""
    try:
        info = zf.getinfo(member)
    except KeyError:
        return False
    _stream_part(zf, info, handler, path)
    return True


def _sheet_targets(zf: zipfile.ZipFile, path: str) -> List[Tuple[str, str]]:
    """``[(sheet name, zip member)]`` in workbook order."""
    wb = _Workbook()
    if not _read_part(zf, "xl/workbook.xml", wb, path):
        raise ScoringError("not an xlsx workbook (no xl/workbook.xml)", path=str(path))
    rels: Dict[str, str] = {}
    rel_handler = _Rels()
    if _read_part(zf, "xl/_rels/workbook.xml.rels", rel_handler, path):
        for rid, target in rel_handler.targets.items():
            if target.startswith("/"):
                member = target.lstrip("/")
            else:
                member = posixpath.normpath(posixpath.join("xl", target))
            rels[rid] = member
    out: List[Tuple[str, str]] = []
    for i, (name, rid) in enumerate(wb.sheets):
        out.append((name, rels.get(rid, "xl/worksheets/sheet%d.xml" % (i + 1))))
    if not out:
        raise ScoringError("xlsx workbook has no worksheet", path=str(path))
    return out


def sheet_names(path: str) -> List[str]:
    """Names of the worksheets, in workbook order."""
    with _open(path) as zf:
        return [name for name, _ in _sheet_targets(zf, path)]


# --------------------------------------------------------------------------- worksheet


class _Sheet(_StringItems):
    """Streaming worksheet reader: ``rows`` maps a 0-based row index to its
    cells ``{0-based column: value}`` (only the rows and cells present)."""

    def __init__(self, shared: Optional[List[str]]) -> None:
        super().__init__()
        self.shared = shared
        self.rows: Dict[int, Dict[int, Any]] = {}
        self.next_row = 0
        self.row_index = -1  # stack index of the open <row>, -1 when none
        self.row = 0
        self.row_error: Optional[str] = None
        self.cells: Dict[int, Any] = {}
        self.next_col = 0
        self.cell_index = -1  # stack index of the open <c>
        self.col = 0
        self.ref = ""
        self.t = "n"
        self.v_seen = False
        self.vtext: Optional[str] = None
        self.is_seen = False
        self.is_text: Optional[str] = None
        self.widest = (-1, "")  # (column, cell ref): for messages

    def on_start(self, name: str, attrs: Dict[str, str]) -> None:
        index = len(self.stack) - 1
        if name == _M + "row" and self.row_index < 0:
            self._start_row(index, attrs)
        elif name == _M + "c" and self.row_index >= 0 and self.cell_index < 0:
            self._start_cell(index, attrs)
        elif self.cell_index >= 0:
            parent = index - 1
            if name == _M + "v" and parent == self.cell_index and not self.v_seen:
                self.v_seen = True
                self._capture("v")
            elif name == _M + "is" and parent == self.cell_index and not self.is_seen:
                self.is_seen = True
                self._begin_item()
            else:
                self._item_start(name)

    def _start_row(self, index: int, attrs: Dict[str, str]) -> None:
        self.row_index = index
        self.row_error = None
        self.cells = {}
        self.next_col = 0
        r_attr = attrs.get("r")
        if r_attr:
            number = int_text(r_attr)
            if number is None:
                self.row_error = f'row number r="{r_attr}" is not an integer'
            elif not 1 <= number <= MAX_ROWS:
                self.row_error = f"row number {number} is outside the xlsx limits 1..{MAX_ROWS}"
            self.row = (number or 1) - 1
        else:
            self.row = self.next_row
            if self.row >= MAX_ROWS:
                self.row_error = f"row {self.row + 1} (counted) is beyond the xlsx limit of {MAX_ROWS} rows"

    def _start_cell(self, index: int, attrs: Dict[str, str]) -> None:
        ref = attrs.get("r") or ""
        col = self.next_col
        if ref:
            m = _CELL_REF.match(ref)
            if m:
                letters, digits = m.groups()
                col = _col_index(letters) if len(letters) <= 3 else MAX_COLS
                if col < MAX_COLS and not (len(digits) <= 7 and 1 <= int(digits) <= MAX_ROWS):
                    raise ScoringError(f"cell {ref}: row {digits} is outside the xlsx limits 1..{MAX_ROWS}")
        name = ref or (_col_letters(col) + str(self.row + 1) if col < MAX_COLS else f"#{col + 1} of row {self.row + 1}")
        if self.row_error is not None:
            raise ScoringError(f"cell {name}: {self.row_error}")
        if col >= MAX_COLS:
            raise ScoringError(f"cell {name}: column is beyond the xlsx limit of {MAX_COLS} columns (XFD)")
        self.next_col = col + 1
        self.cell_index = index
        self.col = col
        self.ref = name
        self.t = attrs.get("t", "n")
        self.v_seen = False
        self.vtext = None
        self.is_seen = False
        self.is_text = None
        if col > self.widest[0]:
            self.widest = (col, name)

    def _captured(self, kind: str, text: str) -> None:
        if kind == "v":
            self.vtext = text if text else None  # ElementTree's .text: None when empty
        else:
            super()._captured(kind, text)

    def on_end(self, name: str, index: int) -> None:
        if index == self.item_index:
            self.is_text = self._end_item()
        elif index == self.cell_index:
            self.cells[self.col] = self._value()
            self.cell_index = -1
        elif index == self.row_index:
            if self.row_error is not None:
                raise ScoringError(self.row_error)
            self.rows[self.row] = self.cells
            self.next_row = self.row + 1
            self.row_index = -1

    def _value(self) -> Any:
        t, vtext, ref = self.t, self.vtext, self.ref
        if t == "inlineStr":
            return self.is_text
        if t == "s":
            if vtext is None:
                return None
            if self.shared is None:
                raise ScoringError(
                    f"cell {ref}: shared string {vtext!r} but the workbook has no xl/sharedStrings.xml part"
                )
            index = int_text(vtext)
            if index is None or not -len(self.shared) <= index < len(self.shared):
                raise ScoringError(f"cell {ref}: bad shared-string index {vtext!r}")
            return self.shared[index]
        if t in ("str", "e"):
            return vtext
        if t == "b":
            return None if vtext is None else vtext.strip() in ("1", "true")
        if vtext is None:
            return None
        try:
            return _parse_number(vtext)
        except ValueError:
            raise ScoringError(f"cell {ref}: not a number: {vtext[:40]!r}") from None

    def present(self) -> int:
        """Stored cells and rows: the unit of the dense-expansion budget."""
        return len(self.rows) + sum(len(c) for c in self.rows.values())

    def width(self) -> int:
        return max((max(c) + 1 for c in self.rows.values() if c), default=0)

    def check_expansion(self, n_rows: int, width: int, path: str, member: str) -> None:
        cells = n_rows * width
        allowed = max(DENSE_FLOOR_CELLS, MAX_EXPANSION * self.present())
        if cells > allowed:
            raise ScoringError(
                f"{member}: sheet too sparse to expand: {n_rows} rows x {width} columns = {cells} cells "
                f"for {self.present()} stored cells and rows (limit {allowed}; widest cell {self.widest[1]}, "
                f"last row {max(self.rows) + 1})",
                path=str(path),
            )


def _read_sheet(path: str, sheet: Optional[str]) -> Tuple[_Sheet, str]:
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
        sst = _SharedStrings()
        shared = sst.strings if _read_part(zf, "xl/sharedStrings.xml", sst, path) else None
        reader = _Sheet(shared)
        if not _read_part(zf, member, reader, path):
            raise ScoringError(f"worksheet part {member} is missing", path=str(path))
    return reader, member


def read_xlsx_rows(path: str, sheet: Optional[str] = None) -> List[List[Any]]:
    """All rows of one worksheet (the first one by default) as lists of values.

    Rows are padded with ``None`` to the widest row; fully missing rows in the
    middle of the sheet are returned as rows of ``None``.  Raises
    :class:`ScoringError` naming the file when it is not a readable workbook,
    the sheet does not exist, or it breaks one of the limits in the module
    docstring (including a dense result far larger than the cells present).
    """
    reader, member = _read_sheet(path, sheet)
    rows = reader.rows
    if not rows:
        return []
    width = reader.width()
    last = max(rows)
    reader.check_expansion(last + 1, width, path, member)
    out: List[List[Any]] = []
    for r in range(last + 1):
        cells = rows.get(r, {})
        out.append([cells.get(i) for i in range(width)])
    return out


def read_xlsx_records(path: str, sheet: Optional[str] = None) -> List[Tuple[int, Dict[str, Any]]]:
    """The first row is the header; returns ``[(sheet row number, {column: value})]``.

    Header cells are converted with ``str()``; an empty header cell becomes
    ``Unnamed: <i>`` (pandas' name).  Columns run to the widest row of the
    sheet.  Rows whose every cell is empty are skipped, as pandas does.
    Duplicate column names raise :class:`ScoringError`.  Only the header and
    the non-empty rows are materialised (see the limits in the module
    docstring).
    """
    reader, member = _read_sheet(path, sheet)
    rows = reader.rows
    if not rows:
        return []
    width = reader.width()
    body = [r for r in sorted(rows) if r > 0 and any(v is not None for v in rows[r].values())]
    reader.check_expansion(len(body) + 1, width, path, member)
    first = rows.get(0, {})
    header = [(f"Unnamed: {i}" if first.get(i) is None else str(first[i])) for i in range(width)]
    seen = set()
    for h in header:
        if h in seen:
            raise ScoringError(f"duplicate column {h!r} in the header row", path=str(path), line=1)
        seen.add(h)
    out: List[Tuple[int, Dict[str, Any]]] = []
    for r in body:
        cells = rows[r]
        out.append((r + 1, {h: cells.get(i) for i, h in enumerate(header)}))
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
