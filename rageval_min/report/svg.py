"""Small inline-SVG plotting helpers for the HTML report (stdlib only, no script, no network).

Every function returns one ``<svg>`` element as a string.  Colours come from
CSS classes the page defines (so light and dark schemes both work); nothing
here references a file, a font or a URL.

Numbers drawn from the data carry their exact value: the element that shows a
value is wrapped in ``<g class="datum" data-v="EXACT">`` with a ``<title>``
holding the same exact text, where EXACT is what :func:`json.dumps` writes for
the value (``repr`` for floats).  Axis ticks are scale marks, not data, and
carry no ``data-v``.
"""

import json
import math
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from .model import format_number

__all__ = [
    "Bar",
    "Domain",
    "RefLine",
    "bar_chart",
    "clamp_axis",
    "dot_plot",
    "esc",
    "exact",
    "forest_plot",
    "heatmap",
    "is_number",
    "line_chart",
    "short",
    "stacked_bar",
]


def esc(text: Any) -> str:
    """Escape text for HTML/SVG content and double-quoted attributes.

    >>> esc('<script>"x"&\\'y\\'')
    '&lt;script&gt;&quot;x&quot;&amp;&#x27;y&#x27;'
    """
    return (
        str(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#x27;")
    )


def is_number(value: Any) -> bool:
    """True for a finite int or float (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not (isinstance(value, float) and (math.isnan(value) or math.isinf(value)))


def exact(value: Any) -> str:
    """The value as the JSON report writes it (``repr`` for floats).

    >>> exact(2 / 3), exact(3), exact(0.1 + 0.2)
    ('0.6666666666666666', '3', '0.30000000000000004')
    """
    return json.dumps(value)


def short(value: Any) -> str:
    """A short label (4 significant digits for floats); the exact value goes in a title.

    >>> short(2 / 3), short(12), short(35.666666666666664), short(None)
    ('0.6667', '12', '35.67', 'n/a')
    """
    return format_number(value, digits=4, exact_from=math.inf)


def _clip(text: Any, limit: int = 22) -> str:
    """Escaped label text, shortened to ``limit`` characters (the full text goes in a title)."""
    full = str(text)
    if len(full) <= limit:
        return esc(full)
    return f"<title>{esc(full)}</title>{esc(full[: limit - 1])}\u2026"


def _f(x: float) -> str:
    """A coordinate."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _datum(value: Any, inner: str, label: str = "") -> str:
    """Wrap ``inner`` (shapes/text showing ``value``) with its exact value."""
    if not is_number(value):
        return f"<g><title>{esc(label)}n/a</title>{inner}</g>"
    ex = exact(value)
    return f'<g class="datum" data-v="{esc(ex)}"><title>{esc(label)}{esc(ex)}</title>{inner}</g>'


#: A metric's declared range ``(lo, hi)`` (:class:`rageval_min._metrics.Metric`), None where open: an
#: axis drawn from data is clamped into it, and every mark drawn outside it is drawn at its edge
#: (the exact value stays in the mark's title and ``data-v``).
Domain = Tuple[Optional[float], Optional[float]]


class Bar(NamedTuple):
    """One bar: ``series`` indexes the legend; ``low``/``high`` draw an error bar; ``domain`` is its
    metric's declared range (the axis is not stretched past it for this bar's values)."""

    value: Optional[float]
    series: int = 0
    low: Optional[float] = None
    high: Optional[float] = None
    label: str = ""
    gate: Optional["RefLine"] = None
    domain: Domain = (None, None)


class RefLine(NamedTuple):
    """A threshold: drawn as a dashed line (``passed`` colours it)."""

    value: float
    label: str
    passed: Optional[bool] = None


#: How far past a round axis end a value may lie and still end there (rounding in the last bits,
#: as in a Wilson bound of 1.0000000000000002, must not double the axis).
_SLACK = 1e-9


def _nice(hi: float) -> float:
    """The round axis end at or above ``hi`` (1, 2, 2.5 or 5 times a power of ten).

    >>> _nice(0.4), _nice(1.0000000000000002), _nice(3.2), _nice(20.0000000001)
    (1.0, 1.0, 5, 20)
    """
    if hi <= 1.0 + _SLACK:
        return 1.0
    mag = 10 ** math.floor(math.log10(hi))
    for m in (1, 2, 2.5, 5, 10):
        if hi <= m * mag * (1 + _SLACK):
            return m * mag
    return 10 * mag


def _ticks(lo: float, hi: float, n: int = 5) -> List[float]:
    step = (hi - lo) / n
    return [lo + i * step for i in range(n + 1)]


def _tick_label(x: float) -> str:
    return f"{x:.3g}"


def _legend(names: Sequence[str], x: float, y: float, cls_prefix: str = "s") -> str:
    out = []
    for i, name in enumerate(names):
        yy = y + i * 16
        out.append(
            f'<rect class="{cls_prefix}{i % 8}" x="{_f(x)}" y="{_f(yy - 9)}" width="10" height="10"/>'
            f'<text x="{_f(x + 14)}" y="{_f(yy)}" class="lg">{_clip(name, 28)}</text>'
        )
    return "".join(out)


def _svg(width: float, height: float, body: str, title: str) -> str:
    return (
        f'<svg class="chart" role="img" viewBox="0 0 {_f(width)} {_f(height)}" width="{_f(width)}" '
        f'height="{_f(height)}" xmlns="http://www.w3.org/2000/svg"><title>{esc(title)}</title>{body}</svg>'
    )


def clamp_axis(lo: float, hi: float, domain: Domain) -> Tuple[float, float]:
    """The axis ``lo..hi`` drawn from the data, clamped into the declared ``domain``.

    >>> clamp_axis(-1.0, 2.0, (0.0, 1.0)), clamp_axis(-1.0, 1.0, (-1.0, 1.0)), clamp_axis(0.0, 5, (None, None))
    ((0.0, 1.0), (-1.0, 1.0), (0.0, 5))
    """
    dlo, dhi = domain
    if dlo is not None and lo < dlo:
        lo = dlo
    if dhi is not None and hi > dhi:
        hi = dhi
    if hi <= lo:
        hi = lo + 1.0
    return lo, hi


def _value_range(
    groups: Sequence[Tuple[str, Sequence[Bar]]],
    refs: Sequence[RefLine],
    ymax: Optional[float],
    domain: Domain = (None, None),
) -> Tuple[float, float]:
    vals: List[float] = []
    for _, bars in groups:
        for b in bars:
            dlo, dhi = b.domain
            for v in (b.value, b.low, b.high):
                if is_number(v):
                    fv = float(v)  # type: ignore[arg-type]
                    fv = fv if dlo is None else max(fv, dlo)
                    vals.append(fv if dhi is None else min(fv, dhi))
            if b.gate is not None:
                vals.append(b.gate.value)
    vals += [r.value for r in refs]
    lo = min([0.0] + vals)
    hi = ymax if ymax is not None else _nice(max([0.0] + vals))
    if lo < 0:
        lo = -_nice(-lo)
    if hi <= lo:
        hi = lo + 1.0
    return clamp_axis(lo, hi, domain)


def _bar(b: Bar, x: float, slot: float, y: Callable[[float], float], labelled: bool) -> str:
    """The rectangle of one bar and its value label (or ``n/a``)."""
    if not is_number(b.value):
        return f'<text class="val na" x="{_f(x + slot / 2)}" y="{_f(y(0) - 4)}" text-anchor="middle">n/a</text>'
    v = float(b.value)  # type: ignore[arg-type]
    y0, y1 = sorted((y(0), y(v)))
    inner = (
        f'<rect class="s{b.series % 8}" x="{_f(x + 3)}" y="{_f(y0)}" width="{_f(slot - 6)}" '
        f'height="{_f(max(y1 - y0, 0.5))}"/>'
    )
    ty = y(max(v, 0)) - 4
    if is_number(b.high):
        ty = min(ty, y(float(b.high)) - 4)  # type: ignore[arg-type]
    if labelled:
        inner += f'<text class="val" x="{_f(x + slot / 2)}" y="{_f(ty)}" text-anchor="middle">{short(b.value)}</text>'
    return inner


def _whisker(b: Bar, name: str, x: float, slot: float, y: Callable[[float], float]) -> str:
    cx = x + slot / 2
    yl, yh = y(float(b.low)), y(float(b.high))  # type: ignore[arg-type]
    whisk = (
        f'<line class="err" x1="{_f(cx)}" x2="{_f(cx)}" y1="{_f(yl)}" y2="{_f(yh)}"/>'
        f'<line class="err" x1="{_f(cx - 5)}" x2="{_f(cx + 5)}" y1="{_f(yl)}" y2="{_f(yl)}"/>'
        f'<line class="err" x1="{_f(cx - 5)}" x2="{_f(cx + 5)}" y1="{_f(yh)}" y2="{_f(yh)}"/>'
    )
    return (
        f'<g class="interval"><title>{esc(b.label or name)} interval: {esc(exact(b.low))} .. '
        f"{esc(exact(b.high))}</title>{whisk}"
        f'<g class="datum" data-v="{esc(exact(b.low))}"></g><g class="datum" data-v="{esc(exact(b.high))}">'
        "</g></g>"
    )


def _slot_gate(g: RefLine, x: float, slot: float, y: Callable[[float], float]) -> str:
    cls = {True: "gate-pass", False: "gate-fail", None: "gate-skip"}[g.passed]
    return (
        f'<g class="{cls}"><title>gate {esc(g.label)}</title><line class="halo" x1="{_f(x)}" '
        f'x2="{_f(x + slot)}" y1="{_f(y(g.value))}" y2="{_f(y(g.value))}"/><line class="gate" x1="{_f(x)}" '
        f'x2="{_f(x + slot)}" y1="{_f(y(g.value))}" y2="{_f(y(g.value))}"/></g>'
    )


def _group_label(name: str, cx: float, base: float, long_labels: bool) -> str:
    if long_labels:
        return (
            f'<text class="lbl" transform="translate({_f(cx)},{_f(base + 12)}) rotate(-35)" '
            f'text-anchor="end">{_clip(name)}</text>'
        )
    return f'<text class="lbl" x="{_f(cx)}" y="{_f(base + 16)}" text-anchor="middle">{_clip(name)}</text>'


def _plot_ref(r: RefLine, left: float, plot_w: float, y: Callable[[float], float]) -> str:
    cls = {True: "gate-pass", False: "gate-fail", None: "gate-skip"}[r.passed]
    return (
        f'<g class="{cls}"><line class="gate" x1="{_f(left)}" x2="{_f(left + plot_w)}" y1="{_f(y(r.value))}" '
        f'y2="{_f(y(r.value))}"/><text class="tick" x="{_f(left + plot_w)}" y="{_f(y(r.value) - 3)}" '
        f'text-anchor="end">{esc(r.label)}</text></g>'
    )


def bar_chart(
    groups: Sequence[Tuple[str, Sequence[Bar]]],
    *,
    title: str,
    series: Sequence[str] = (),
    refs: Sequence[RefLine] = (),
    ymax: Optional[float] = None,
    domain: Domain = (None, None),
) -> str:
    """Vertical bars in groups (one label under each group), optional error bars and gate marks.

    A bar's ``gate`` is drawn across its own slot; ``refs`` span the plot.  The axis holds the
    values (``ymax`` fixes its top), clamped into ``domain``, the metrics' declared range.
    """
    lo, hi = _value_range(groups, refs, ymax, domain)
    nbars = sum(max(len(b), 1) for _, b in groups)
    slot = 26.0 if nbars > 12 else max(34.0, min(80.0, 420.0 / max(nbars, 1)))
    gap = 14.0
    long_labels = any(len(g) > max(4, int(slot * max(len(b), 1) / 7)) for g, b in groups)
    first = min(len(groups[0][0]), 22) if groups else 0
    left, top = (max(46.0, first * 5.0 - 10) if long_labels else 46.0), 34.0
    legend_w = max([len(n) for n in series] + [0]) * 6.5 + 30 if series else 0.0
    plot_w = max(nbars * slot + len(groups) * gap, 200.0, len(title) * 7.5 - left)
    bottom = 90.0 if long_labels else 34.0
    plot_h = 200.0

    def y(v: float) -> float:
        return top + plot_h - (min(max(v, lo), hi) - lo) / (hi - lo) * plot_h

    parts = [f'<text x="{_f(left)}" y="14" class="ttl">{esc(title)}</text>']
    for t in _ticks(lo, hi):
        parts.append(
            f'<line class="grid" x1="{_f(left)}" x2="{_f(left + plot_w)}" y1="{_f(y(t))}" y2="{_f(y(t))}"/>'
            f'<text class="tick" x="{_f(left - 4)}" y="{_f(y(t) + 4)}" text-anchor="end">{_tick_label(t)}</text>'
        )
    parts.append(f'<line class="axis" x1="{_f(left)}" x2="{_f(left + plot_w)}" y1="{_f(y(0))}" y2="{_f(y(0))}"/>')
    x = left + gap / 2
    for name, bars in groups:
        gx = x
        for b in bars:
            parts.append(_datum(b.value, _bar(b, x, slot, y, slot >= 34 or len(series) < 2), f"{b.label or name}: "))
            if is_number(b.low) and is_number(b.high):
                parts.append(_whisker(b, name, x, slot, y))
            if b.gate is not None:
                parts.append(_slot_gate(b.gate, x, slot, y))
            x += slot
        if not bars:
            x += slot
        parts.append(_group_label(name, (gx + x) / 2, top + plot_h, long_labels))
        x += gap
    parts += [_plot_ref(r, left, plot_w, y) for r in refs]
    if series:
        parts.append(_legend(series, left + plot_w + 16, top + 10))
    return _svg(left + plot_w + 16 + legend_w, top + plot_h + bottom, "".join(parts), title)


def line_chart(
    series: Sequence[Tuple[str, Sequence[Tuple[float, Optional[float]]]]],
    *,
    title: str,
    xlabel: str,
    ylabel: str = "",
    ymax: Optional[float] = None,
    domain: Domain = (None, None),
) -> str:
    """Lines over a numeric x axis (one per series; single points are drawn as markers); the y axis
    is clamped into ``domain`` as in :func:`bar_chart`."""
    xs = sorted({float(px) for _, pts in series for px, _ in pts})
    ys = [float(py) for _, pts in series for _, py in pts if is_number(py)]  # type: ignore[arg-type]
    lo = min([0.0] + ys)
    hi = ymax if ymax is not None else _nice(max([0.0] + ys))
    lo, hi = clamp_axis(lo, hi, domain)
    xlo, xhi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if xhi - xlo < 1e-12:
        xlo, xhi = xlo - 0.5, xhi + 0.5
    if xlo > 0 and xhi <= 1.0:
        xlo = 0.0
    if xhi < 1.0 and xlo >= 0.0:
        xhi = 1.0
    left, top, plot_w, plot_h = 46.0, 24.0, 380.0, 200.0
    width = left + plot_w + 24 + 190
    height = top + plot_h + 44

    def px(v: float) -> float:
        return left + (v - xlo) / (xhi - xlo) * plot_w

    def py(v: float) -> float:
        return top + plot_h - (min(max(v, lo), hi) - lo) / (hi - lo) * plot_h

    parts = [f'<text x="{_f(left)}" y="14" class="ttl">{esc(title)}</text>']
    for t in _ticks(lo, hi):
        parts.append(
            f'<line class="grid" x1="{_f(left)}" x2="{_f(left + plot_w)}" y1="{_f(py(t))}" y2="{_f(py(t))}"/>'
            f'<text class="tick" x="{_f(left - 4)}" y="{_f(py(t) + 4)}" text-anchor="end">{_tick_label(t)}</text>'
        )
    for t in _ticks(xlo, xhi):
        parts.append(
            f'<text class="tick" x="{_f(px(t))}" y="{_f(top + plot_h + 14)}" text-anchor="middle">'
            f"{_tick_label(t)}</text>"
        )
    parts.append(
        f'<line class="axis" x1="{_f(left)}" x2="{_f(left + plot_w)}" y1="{_f(top + plot_h)}" y2="{_f(top + plot_h)}"/>'
        f'<text class="lbl" x="{_f(left + plot_w / 2)}" y="{_f(top + plot_h + 32)}" text-anchor="middle">'
        f"{esc(xlabel)}</text>"
    )
    if ylabel:
        parts.append(
            f'<text class="lbl" transform="translate(12,{_f(top + plot_h / 2)}) rotate(-90)" text-anchor="middle">'
            f"{esc(ylabel)}</text>"
        )
    for i, (name, pts) in enumerate(series):
        good = sorted((float(a), float(b)) for a, b in pts if is_number(b))  # type: ignore[arg-type]
        if len(good) > 1:
            d = " ".join(f"{_f(px(a))},{_f(py(b))}" for a, b in good)
            parts.append(f'<polyline class="ln l{i % 8}" points="{d}"/>')
        for a, b in pts:
            if not is_number(b):
                continue
            cx, cy = px(float(a)), py(float(b))  # type: ignore[arg-type]
            parts.append(
                _datum(
                    b,
                    f'<circle class="s{i % 8}" cx="{_f(cx)}" cy="{_f(cy)}" r="4.5"/>'
                    f'<text class="val" x="{_f(cx + 7)}" y="{_f(cy - 6)}">{short(b)}</text>',
                    f"{name} at {_tick_label(float(a))}: ",
                )
            )
    parts.append(_legend([n for n, _ in series], left + plot_w + 24, top + 10))
    return _svg(width, height, "".join(parts), title)


def heatmap(
    rows: Sequence[str],
    cols: Sequence[str],
    values: Dict[Tuple[str, str], Any],
    *,
    title: str,
    row_title: str = "",
    col_title: str = "",
) -> str:
    """A matrix of values in [0, 1] (cell shade = value); missing cells are blank."""
    cell_w, cell_h = 64.0, 30.0
    label_w = max([min(len(r), 22) for r in rows] + [6]) * 7.0 + 16
    top = 42.0
    width = label_w + cell_w * len(cols) + 10
    height = top + cell_h * len(rows) + 24
    parts = [f'<text x="4" y="14" class="ttl">{esc(title)}</text>']
    if col_title:
        parts.append(f'<text class="tick" x="{_f(label_w)}" y="28">{esc(col_title)}</text>')
    for j, c in enumerate(cols):
        parts.append(
            f'<text class="lbl" x="{_f(label_w + (j + 0.5) * cell_w)}" y="{_f(top - 4)}" text-anchor="middle">'
            f"{_clip(c, 9)}</text>"
        )
    for i, r in enumerate(rows):
        yy = top + i * cell_h
        parts.append(
            f'<text class="lbl" x="{_f(label_w - 6)}" y="{_f(yy + cell_h / 2 + 4)}" text-anchor="end">{_clip(r)}</text>'
        )
        for j, c in enumerate(cols):
            xx = label_w + j * cell_w
            v = values.get((r, c))
            if v is None and (r, c) not in values:
                parts.append(
                    f'<rect class="cell-empty" x="{_f(xx + 1)}" y="{_f(yy + 1)}" width="{_f(cell_w - 2)}" '
                    f'height="{_f(cell_h - 2)}"/>'
                )
                continue
            op = min(max(float(v), 0.0), 1.0) if is_number(v) else 0.0  # type: ignore[arg-type]
            inner = (
                f'<rect class="cell" x="{_f(xx + 1)}" y="{_f(yy + 1)}" width="{_f(cell_w - 2)}" '
                f'height="{_f(cell_h - 2)}" '
                f'fill-opacity="{op * 0.85 + 0.08:.3f}"/><text class="val cellv" x="{_f(xx + cell_w / 2)}" '
                f'y="{_f(yy + cell_h / 2 + 4)}" text-anchor="middle">{short(v)}</text>'
            )
            parts.append(_datum(v, inner, f"{r} vs {c}: "))
    if row_title:
        parts.append(f'<text class="tick" x="4" y="{_f(height - 6)}">{esc(row_title)}</text>')
    return _svg(width, height, "".join(parts), title)


def stacked_bar(
    segments: Sequence[Tuple[str, float, Any]],
    *,
    title: str,
    rate: Any = None,
    rate_label: str = "",
) -> str:
    """One horizontal bar split into segments ``(name, size, shown_value)``; ``shown_value`` None shows no number."""
    total = sum(max(float(s), 0.0) for _, s, _ in segments) or 1.0
    left, top, w, h = 10.0, 26.0, 520.0, 28.0
    parts = [f'<text x="{_f(left)}" y="14" class="ttl">{esc(title)}</text>']
    x = left
    for i, (name, size, shown) in enumerate(segments):
        sw = max(float(size), 0.0) / total * w
        rect = f'<rect class="s{i % 8}" x="{_f(x)}" y="{_f(top)}" width="{_f(sw)}" height="{_f(h)}"/>'
        txt = esc(name) if shown is None else f"{esc(name)} {short(shown)}"
        label = f'<text class="val inbar" x="{_f(x + 6)}" y="{_f(top + h / 2 + 4)}">{txt}</text>' if sw > 60 else ""
        if shown is None:
            parts.append(f"<g><title>{esc(name)}</title>{rect}{label}</g>")
        else:
            parts.append(_datum(shown, rect + label, f"{name}: "))
        x += sw
    if rate is not None:
        parts.append(
            _datum(
                rate,
                f'<text class="lbl" x="{_f(left)}" y="{_f(top + h + 18)}">{esc(rate_label)} {short(rate)}</text>',
                f"{rate_label}: ",
            )
        )
    return _svg(left + w + 10, top + h + 28, "".join(parts), title)


#: Dots a bin of :func:`dot_plot` stacks before the plot becomes a histogram.
MAX_STACK = 25


def dot_plot(
    values: Sequence[Tuple[str, Any]],
    *,
    title: str,
    lo: float = 0.0,
    hi: float = 1.0,
    bins: int = 20,
) -> str:
    """A distribution as stacked dots: one dot per value (its id and exact value in its title).

    When a bin would stack more than ``MAX_STACK`` dots, the bins are drawn as
    histogram bars instead (each bar's title gives its range and count).
    """
    left, plot_w = 30.0, 480.0
    r = 6.0
    counts: Dict[int, int] = {}
    placed: List[Tuple[float, int, str, Any]] = []
    for ident, v in values:
        if not is_number(v):
            continue
        fv = min(max(float(v), lo), hi)
        b = min(int((fv - lo) / (hi - lo) * bins), bins - 1)
        k = counts.get(b, 0)
        counts[b] = k + 1
        placed.append((left + (b + 0.5) * plot_w / bins, k, ident, v))
    stack = max(counts.values()) if counts else 1
    top = 26.0
    histogram = stack > MAX_STACK
    base = top + (MAX_STACK if histogram else stack) * 2 * r + 4
    parts = [f'<text x="{_f(left)}" y="14" class="ttl">{esc(title)}</text>']
    parts.append(f'<line class="axis" x1="{_f(left)}" x2="{_f(left + plot_w)}" y1="{_f(base)}" y2="{_f(base)}"/>')
    for t in _ticks(lo, hi):
        tx = left + (t - lo) / (hi - lo) * plot_w
        parts.append(
            f'<text class="tick" x="{_f(tx)}" y="{_f(base + 14)}" text-anchor="middle">{_tick_label(t)}</text>'
        )
    if histogram:
        bw = plot_w / bins
        for b in sorted(counts):
            h = counts[b] / stack * (base - top)
            b_lo, b_hi = lo + b * (hi - lo) / bins, lo + (b + 1) * (hi - lo) / bins
            parts.append(
                f"<g><title>{counts[b]} values in [{_tick_label(b_lo)}, {_tick_label(b_hi)}"
                f'{"]" if b == bins - 1 else ")"}</title><rect class="s0" x="{_f(left + b * bw + 1)}" '
                f'y="{_f(base - h)}" width="{_f(bw - 2)}" height="{_f(h)}"/></g>'
            )
    else:
        for cx, k, ident, v in placed:
            cy = base - r - k * 2 * r
            dot = f'<circle class="s0" cx="{_f(cx)}" cy="{_f(cy)}" r="{_f(r - 0.8)}"/>'
            parts.append(_datum(v, dot, f"{ident}: "))
    missing = [ident for ident, v in values if not is_number(v)]
    if missing:
        parts.append(
            f'<text class="tick" x="{_f(left)}" y="{_f(base + 30)}">undefined (not drawn): '
            f"{esc(', '.join(missing[:8]))}"
            f"{' ...' if len(missing) > 8 else ''}</text>"
        )
    return _svg(left + plot_w + 20, base + (40 if missing else 24), "".join(parts), title)


def forest_plot(rows: Sequence[Tuple[str, Any, Any, Any, str]], *, title: str) -> str:
    """Deltas with intervals around a zero line: rows of ``(name, delta, low, high, status)``.

    ``status`` is ``"improved"``, ``"regressed"`` or ``""`` (colours the marker).
    """
    nums = [float(v) for _, d, lo_, hi_, _ in rows for v in (d, lo_, hi_) if is_number(v)]
    ext = max([abs(v) for v in nums] + [1e-9])
    ext = ext * 1.1
    label_w = max([min(len(n), 28) for n, *_ in rows] + [6]) * 7.0 + 16
    plot_w, row_h, top = 360.0, 26.0, 30.0
    width = label_w + plot_w + 130
    height = top + row_h * len(rows) + 26

    def px(v: float) -> float:
        return label_w + (v + ext) / (2 * ext) * plot_w

    parts = [f'<text x="4" y="14" class="ttl">{esc(title)}</text>']
    parts.append(
        f'<line class="axis" x1="{_f(px(0))}" x2="{_f(px(0))}" y1="{_f(top - 6)}" y2="{_f(top + row_h * len(rows))}"/>'
    )
    for t in (-ext, -ext / 2, 0.0, ext / 2, ext):
        parts.append(
            f'<text class="tick" x="{_f(px(t))}" y="{_f(top + row_h * len(rows) + 14)}" text-anchor="middle">'
            f"{_tick_label(t)}</text>"
        )
    for i, (name, d, lo_, hi_, status) in enumerate(rows):
        cy = top + i * row_h + row_h / 2
        parts.append(
            f'<text class="lbl" x="{_f(label_w - 8)}" y="{_f(cy + 4)}" text-anchor="end">{_clip(name, 28)}</text>'
        )
        if is_number(lo_) and is_number(hi_):
            parts.append(
                f'<g class="interval"><title>{esc(name)} delta interval: {esc(exact(lo_))} .. {esc(exact(hi_))}</title>'
                f'<line class="err" x1="{_f(px(float(lo_)))}" x2="{_f(px(float(hi_)))}" y1="{_f(cy)}" y2="{_f(cy)}"/>'
                f'<g class="datum" data-v="{esc(exact(lo_))}"></g><g class="datum" data-v="{esc(exact(hi_))}"></g></g>'
            )
        if is_number(d):
            cls = {"improved": "gate-pass", "regressed": "gate-fail"}.get(status, "")
            parts.append(
                _datum(
                    d,
                    f'<circle class="dm {cls}" cx="{_f(px(float(d)))}" cy="{_f(cy)}" r="5"/>'
                    f'<text class="val" x="{_f(label_w + plot_w + 10)}" y="{_f(cy + 4)}">{short(d)}'
                    f"{(' ' + status) if status else ''}</text>",
                    f"{name} delta: ",
                )
            )
    return _svg(width, height, "".join(parts), title)
