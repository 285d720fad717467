"""One way to read a number: declared readers for the numeric fields of inputs and options.

A JSON document can hold numbers no computation is ready for: an integer of 401 digits (valid
JSON; ``float()`` of it raises ``OverflowError``), ``1e400`` (Python's ``json`` reads it as
infinity), ``NaN`` and ``Infinity`` (accepted by Python's ``json``), a boolean where a number is
meant (``True == 1``).  Each reader here takes a value as decoded from JSON (or the text of a
command-line option) and either returns a value of the declared kind or raises
:class:`~rageval_min.errors.ScoringError` with the location it is given, so the message reads
``file:line: field: problem``:

=====================  ==========================================================================
reader                 accepts
=====================  ==========================================================================
:func:`as_float`       an int or float whose float exists (NaN and infinities pass through: the
                       caller's reference decides what they mean)
:func:`finite_float`   an int or float with a finite float value
:func:`count`          a non-negative int (bounded by ``MAX_COUNT``; ``bool`` refused)
:func:`option_int`     the text of an integer option, ``low <= n <= high``
:func:`option_float`   the text of a finite number option, ``low <= x <= high``
:func:`int_text`       the text of an integer read from a file or an option (``int()``'s syntax),
                       at most ``max_len`` characters, or None
:func:`float_text`     the text of a number (``float()``'s syntax), at most ``max_len`` characters
                       when given, or None; ``finite=True`` also refuses NaN and the infinities
:func:`decimal_fault`  (a check, not a reader) why a :class:`~decimal.Decimal` is not an exact
                       amount ``>= 0`` a :class:`~fractions.Fraction` can hold cheaply, or None
:func:`integer_fault`  (a check, not a reader) why a value is not an int in ``[lo, hi]``, or None
:func:`number_fault`   (a check, not a reader) why a value is not a finite number in a range, or None
=====================  ==========================================================================

The two checks give a reason code rather than a message, for callers that word their own
(partial-state validation, :mod:`rageval_min._state_schema`).

Booleans are numbers to Python but not to these readers, except :func:`as_float` with
``bools=True`` (a 0/1 flag written as ``true``/``false``).

The module is kernel code: it names no family, uses only the standard library and keeps no state.
"""

from __future__ import annotations

import math

from .errors import ScoringError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from decimal import Decimal  # costs every command a few milliseconds of start-up; only judges use it
    from typing import Any, Callable, Optional, Union

__all__ = [
    "MAX_COUNT",
    "MAX_DECIMAL_EXPONENT",
    "MAX_NUMBER_TEXT",
    "MAX_OPTION_DIGITS",
    "as_float",
    "count",
    "decimal_fault",
    "finite_float",
    "float_text",
    "int_text",
    "integer_fault",
    "number_fault",
    "option_float",
    "option_int",
]

#: The largest count a reader accepts (2**53: every count up to it is exact as a float).
MAX_COUNT = 2**53
#: The longest integer option accepted, in characters (longer text is refused before ``int()``).
MAX_OPTION_DIGITS = 30
#: The largest power of ten either side of the point :func:`decimal_fault` lets through (``1e9999999``
#: is a valid decimal whose exact fraction takes seconds to build and megabytes to hold).
MAX_DECIMAL_EXPONENT = 300
#: The longest number text :func:`int_text` and :func:`float_text` read by default (CPython's own
#: default limit on ``int()`` of a string, ``sys.get_int_max_str_digits()``, on every Python).
MAX_NUMBER_TEXT = 4300


def _where(path: Optional[str], line: Optional[int], field: Optional[str]) -> Any:
    return {"path": path, "line": line, "field": field}


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def as_float(
    value: Any,
    *,
    path: Optional[str] = None,
    line: Optional[int] = None,
    field: Optional[str] = None,
    bools: bool = False,
) -> float:
    """``float(value)`` for a JSON number, an input error for anything else.

    >>> as_float(3), as_float(0.25), as_float(True, bools=True)
    (3.0, 0.25, 1.0)
    >>> as_float(float("nan")) != as_float(float("nan"))  # NaN passes through
    True
    >>> as_float(10**400, path="a.jsonl", line=2, field="score")
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: a.jsonl:2: score: an integer of 401 digits is beyond the float range
    >>> as_float("1", field="score")
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: score: expected a number, got str
    """
    if isinstance(value, bool):
        if bools:
            return float(value)
    elif isinstance(value, float):
        return value
    elif isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            digits = len(str(abs(value))) if abs(value) < 10**4300 else "thousands of"
            raise ScoringError(
                f"an integer of {digits} digits is beyond the float range", **_where(path, line, field)
            ) from None
    raise ScoringError(f"expected a number, got {_type_name(value)}", **_where(path, line, field))


def finite_float(
    value: Any,
    *,
    path: Optional[str] = None,
    line: Optional[int] = None,
    field: Optional[str] = None,
    bools: bool = False,
    limit: float = math.inf,
) -> float:
    """:func:`as_float`, refusing NaN and the infinities (``1e400`` is read by ``json`` as infinity),
    and magnitudes above ``limit``.

    >>> finite_float(2)
    2.0
    >>> finite_float(-1e300, limit=1e150, field="f1")
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: f1: -1e+300 is beyond the supported magnitude 1e+150
    >>> finite_float(float("inf"), path="x.json", field="f1")
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: x.json: f1: expected a finite number, got inf
    """
    out = as_float(value, path=path, line=line, field=field, bools=bools)
    if not math.isfinite(out):
        raise ScoringError(f"expected a finite number, got {out!r}", **_where(path, line, field))
    if abs(out) > limit:
        raise ScoringError(f"{out!r} is beyond the supported magnitude {limit!r}", **_where(path, line, field))
    return out


def count(
    value: Any,
    *,
    path: Optional[str] = None,
    line: Optional[int] = None,
    field: Optional[str] = None,
) -> int:
    """A non-negative integer up to :data:`MAX_COUNT` (an integral float such as ``3.0`` is 3).

    >>> count(12), count(4.0)
    (12, 4)
    >>> count(-1, field="supported")
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: supported: expected a count (an integer >= 0), got -1
    >>> count(10**400, field="n")
    Traceback (most recent call last):
    ...
    rageval_min.errors.ScoringError: n: a count above 2**53 (9007199254740992) is not supported
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    fault = integer_fault(value, 0, MAX_COUNT)
    if fault in ("type", "low"):
        shown = _type_name(value) if not isinstance(value, (int, float)) or isinstance(value, bool) else value
        raise ScoringError(f"expected a count (an integer >= 0), got {shown}", **_where(path, line, field))
    if fault == "high":
        raise ScoringError(f"a count above 2**53 ({MAX_COUNT}) is not supported", **_where(path, line, field))
    return int(value)


def int_text(text: Union[str, bytes], max_len: int = MAX_NUMBER_TEXT) -> Optional[int]:
    """``int(text)`` (surrounding whitespace, a sign and ``_`` between digits allowed, as ``int()``
    allows them) for text of at most ``max_len`` characters; ``None`` for anything else.  The caller
    words its own error.

    >>> int_text(" 12 "), int_text(b"-3"), int_text("1.0"), int_text("9" * 31, max_len=30)
    (12, -3, None, None)
    """
    if len(text) > max_len:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def float_text(text: Union[str, bytes], max_len: Optional[int] = None, *, finite: bool = False) -> Optional[float]:
    """``float(text)`` for text of at most ``max_len`` characters when given (``float()`` is linear in
    its text, so no bound is needed for time) (``"nan"``, ``"inf"`` and
    ``"1e400"``, read as infinity, pass unless ``finite``); ``None`` for anything else.

    >>> float_text("0.25"), float_text(b" 1e3"), float_text("1e400"), float_text("1e400", finite=True)
    (0.25, 1000.0, inf, None)
    >>> float_text("x") is None, float_text("1" * 65, max_len=64) is None
    (True, True)
    """
    if max_len is not None and len(text) > max_len:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return None if finite and not math.isfinite(value) else value


def decimal_fault(value: "Decimal") -> Optional[str]:
    """Why ``value`` is not an amount for exact arithmetic: ``None`` when it is, else ``"nonfinite"``
    (NaN or an infinity), ``"negative"`` or ``"size"`` (a power of ten beyond
    :data:`MAX_DECIMAL_EXPONENT` either side of the point).

    >>> from decimal import Decimal
    >>> [decimal_fault(Decimal(t)) for t in ("0.15", "-1", "Infinity", "1e9999999", "1e-400", "0")]
    [None, 'negative', 'nonfinite', 'size', 'size', None]
    """
    if not value.is_finite():
        return "nonfinite"
    if value < 0:
        return "negative"
    if value and abs(value.adjusted()) > MAX_DECIMAL_EXPONENT:
        return "size"
    return None


def integer_fault(value: Any, lo: int, hi: int) -> Optional[str]:
    """Why ``value`` is not an integer in ``[lo, hi]``: ``None`` when it is, else ``"type"`` (not an
    ``int``, or a ``bool``; an integral float is not an integer here), ``"low"`` or ``"high"``.

    >>> [integer_fault(v, 0, 10) for v in (3, -1, 11, 2.0, True, "3")]
    [None, 'low', 'high', 'type', 'type', 'type']
    """
    if not isinstance(value, int) or isinstance(value, bool):
        return "type"
    if value < lo:
        return "low"
    return "high" if value > hi else None


def number_fault(
    value: Any, lo: float = -math.inf, hi: float = math.inf, *, exclusive: bool = False, int_limit: int = MAX_COUNT
) -> Optional[str]:
    """Why ``value`` is not a finite number in ``[lo, hi]`` (``(lo, hi)`` when ``exclusive``):
    ``None`` when it is, else ``"type"`` (not a float or an int, a ``bool``, or an int of magnitude
    above ``int_limit``), ``"nonfinite"`` (NaN or an infinity) or ``"range"``.

    >>> [number_fault(v, 0, 1) for v in (0.5, 1, 1.5, float("nan"), 10**400, False, None)]
    [None, None, 'range', 'nonfinite', 'type', 'type', 'type']
    >>> number_fault(0.0, 0, 1, exclusive=True)
    'range'
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "type"
    if isinstance(value, int) and abs(value) > int_limit:
        return "type"
    if not math.isfinite(value):
        return "nonfinite"
    inside = lo < value < hi if exclusive else lo <= value <= hi
    return None if inside else "range"


def option_int(
    low: Optional[int] = None,
    high: Optional[int] = None,
    *,
    what: str = "an integer",
    invalid: Optional[str] = None,
    outside: Optional[str] = None,
    plain: bool = False,
) -> Callable[[str], int]:
    """An argparse ``type=`` reading an integer option in ``[low, high]``.

    Text longer than :data:`MAX_OPTION_DIGITS` characters is refused before ``int()`` (a
    5,000-digit number is a usage error, not a slow conversion).  The message is
    ``expected {what} from {low} to {high}, got ...`` unless the option keeps a wording of its own:
    ``invalid`` for text that is not an integer and ``outside`` for an integer out of range, each a
    :meth:`str.format` template of ``text`` (the text as typed, or ``a number of N digits``
    when it is too long to show) and, for ``outside``, ``value`` (the integer).  ``plain`` reads as
    argparse's bare ``type=int`` does, message included (``invalid int value: 'x'``), for text of
    at most :data:`MAX_NUMBER_TEXT` characters.

    >>> read = option_int(1, 10**6)
    >>> read("64")
    64
    >>> read("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer from 1 to 1000000, got '0'
    >>> read("9" * 5000)
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer from 1 to 1000000, got a number of 5000 digits
    >>> own = option_int(1, invalid="not an integer: {text}", outside="must be at least 1, got {value}")
    >>> own("x1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: not an integer: 'x1'
    >>> own("-3")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be at least 1, got -3
    >>> option_int(plain=True)("-12"), option_int(plain=True)("1" * 40) == int("1" * 40)
    (-12, True)
    >>> option_int(plain=True)("x")
    Traceback (most recent call last):
    ...
    ValueError: invalid literal for int(): 'x'
    >>> own("1" * 40)
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: an integer of more than 30 digits is not supported, got a number of 40 digits
    >>> option_int(0, 9, outside="must be from 0 to 9, got {value}")("1" * 40)
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be from 0 to 9, got a number of 40 digits
    """
    import argparse

    span = _span(low, high)

    def read(text: str) -> int:
        value = int_text(text) if plain else int_text(text.strip(), MAX_OPTION_DIGITS)
        if value is None and plain:  # argparse words it: "invalid int value: 'x'"
            raise ValueError(f"invalid literal for int(): {text[:MAX_OPTION_DIGITS]!r}")
        shown = repr(text) if len(text) <= MAX_OPTION_DIGITS else f"a number of {len(text)} digits"
        digits = text.strip().lstrip("+-").replace("_", "")
        too_long = value is None and digits.isdigit() and digits.isascii()
        if value is None and invalid is not None and not too_long:
            raise argparse.ArgumentTypeError(invalid.format(text=shown))
        if too_long and high is None and outside is not None:
            raise argparse.ArgumentTypeError(
                f"an integer of more than {MAX_OPTION_DIGITS} digits is not supported, got {shown}"
            )
        if value is None or (low is not None and value < low) or (high is not None and value > high):
            if outside is not None:  # with a high end, an integer too long to read is above it
                raise argparse.ArgumentTypeError(outside.format(text=shown, value=shown if value is None else value))
            raise argparse.ArgumentTypeError(f"expected {what}{span}, got {shown}")
        return value

    read.__name__ = "int"
    return read


def option_float(
    low: Optional[float] = None,
    high: Optional[float] = None,
    *,
    what: str = "a number",
    low_open: bool = False,
    high_open: bool = False,
    invalid: Optional[str] = None,
    outside: Optional[str] = None,
    plain: bool = False,
) -> Callable[[str], float]:
    """An argparse ``type=`` reading a finite number option in ``[low, high]`` (no ``inf``/``nan``);
    ``low_open`` / ``high_open`` leave an end out of the interval.  ``invalid`` (text that is not a
    number) and ``outside`` (a number out of range, ``nan`` and the infinities included) are the
    option's own wordings, as for :func:`option_int`.  ``plain`` reads as argparse's bare
    ``type=float`` does (``nan`` and ``inf`` accepted, left to the command's own checks), message
    included (``invalid float value: 'x'``).

    >>> option_float(0.0, 1.0)("0.05")
    0.05
    >>> option_float(0.0, 1.0)("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a number from 0.0 to 1.0, got 'nan'
    >>> option_float(0.0, 1.0, low_open=True, outside="must be in (0, 1], got {text}")("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be in (0, 1], got '0'
    >>> option_float(plain=True)("inf")
    inf
    >>> option_float(invalid="not a number: {text}")("1,5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: not a number: '1,5'
    """
    import argparse

    span = _span(low, high)

    def read(text: str) -> float:
        if plain:
            exact = float_text(text)
            if exact is None:  # argparse words it: "invalid float value: 'x'"
                raise ValueError(f"could not convert string to float: {text[:64]!r}")
            return exact
        shown = repr(text) if len(text) <= 64 else f"a number of {len(text)} characters"
        try:
            value = float(text) if len(text) <= 64 else math.nan
        except ValueError:
            if invalid is not None:
                raise argparse.ArgumentTypeError(invalid.format(text=shown)) from None
            value = math.nan
        below = low is not None and (value <= low if low_open else value < low)
        above = high is not None and (value >= high if high_open else value > high)
        if not math.isfinite(value) or below or above:
            if outside is not None:
                raise argparse.ArgumentTypeError(outside.format(text=shown, value=value))
            raise argparse.ArgumentTypeError(f"expected {what}{span}, got {shown}")
        return value

    read.__name__ = "float"
    return read


def _span(low: Optional[float], high: Optional[float]) -> str:
    if low is not None and high is not None:
        return f" from {low} to {high}"
    if low is not None:
        return f" >= {low}"
    return f" <= {high}" if high is not None else ""
