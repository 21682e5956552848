"""What every figure shares: the palette, a figure not tied to pyplot, fitting
its text to it, and writing it (each format whole, through harness.io.outdir's
writer)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.category import StrCategoryFormatter
from matplotlib.figure import Figure
from matplotlib.ticker import FixedFormatter

from harness.io import outdir

#: seaborn "deep", in its order.
PALETTE = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3",
           "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd"]

#: rounds of fit_text: each lays the figure out once (two or three suffice:
#: breaking lines, then growing the figure for what still does not fit)
FIT_ROUNDS = 5
#: fit_text grows a figure for labels it cannot break up to this many times
#: its drawn width: past that, a label too long for any page overlaps
MAX_GROWTH = 4.0

# where a figure is shown: a browser draws an image at its pixel size (an
# <img> without a width), or at the width its page gives it in CSS pixels
#: CSS pixels per inch of an image shown at its drawn size (the report's)
CSS_PX_PER_IN = 96
#: the least height of a figure's text on its page, in CSS pixels
MIN_TEXT_PX = 11
#: the documentation's content column in CSS pixels (mkdocs-material at a
#: 1,280-px window, both side bars shown): the docs' figures are drawn for it
DOCS_PAGE_PX = 688
#: the documentation's figures' dpi (harness.findings.figures)
DOCS_DPI = 110


def new_figure(width: float, height: float, **subplots) -> tuple[Figure, np.ndarray]:
    """A Figure not tied to pyplot (no display, no global state), seaborn-styled."""
    import matplotlib
    import seaborn as sns

    with matplotlib.rc_context({**sns.axes_style("whitegrid"),
                                **sns.plotting_context("notebook", font_scale=0.85)}):
        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(fig)   # its canvas: laid out and measured without pyplot
        axes = fig.subplots(squeeze=False, **subplots)
    return fig, axes


def save_figure(fig: Figure, out_dir: Path, stem: str, formats: tuple[str, ...]) -> list[Path]:
    """Write fig as out_dir/stem.<fmt> for each format, each atomically, its
    text fitted first (fit_text)."""
    fit_text(fig)
    written = []
    for fmt in formats:
        # "tight": whatever fit_text could not bring inside is still written whole
        written.append(outdir.write_from(out_dir / f"{stem}.{fmt}", lambda tmp: fig.savefig(
            tmp, format=fmt, dpi=150, bbox_inches="tight", pad_inches=0.05)))
    return written


def shown_text_px(fig: Figure, px_per_in: float, shown_px: float) -> float:
    """The height of fig's smallest text, in CSS pixels, on a page that shows
    it px_per_in CSS pixels an inch (its dpi where the image is shown at its
    pixel size), narrowed to at most shown_px wide (as saved: bbox tight)."""
    fig.draw_without_rendering()
    width_in = fig.get_tightbbox(fig.canvas.get_renderer()).width
    scale = min(1.0, shown_px / (width_in * px_per_in))
    sizes = [t.get_fontsize() for t in drawn_texts(fig)]
    return min(sizes) / 72 * px_per_in * scale if sizes else float("inf")


def drawn_texts(fig: Figure) -> list:
    """Every text the figure shows: visible, not empty, and not the label of
    a tick outside its axis's view (such ticks are kept, but not drawn)."""
    from matplotlib.text import Text

    hidden = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                loc = tick.get_loc()
                if loc is not None and not low - 1e-9 <= loc <= high + 1e-9:
                    hidden |= {id(tick.label1), id(tick.label2)}
    return [t for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and id(t) not in hidden]


# --------------------------------------------------------------------------
# fitting text


def fit_text(fig: Figure, rounds: int = FIT_ROUNDS) -> Figure:
    """Fit every text of fig inside it, none over another, at any grid size.

    Constrained layout alone does not: it leaves the width of titles and
    x labels (and the height of y labels) out of the margins it makes
    (Axes.get_tightbbox(for_layout_only=True)), so a title wider than its
    panel runs into the next one, and it never breaks a line, so a legend or
    caption wider than the figure is cut at its edges. Each round lays the
    figure out, breaks long text at spaces (or after the "=" of
    "field=value") to the room it has (a panel title or x label: its panel's
    width; a y label: its height; x tick labels: the distance between ticks;
    the figure's title and its legends' titles: the figure's width; a map
    cell's text: fit_in_data_width), then grows the figure by whatever still
    does not fit (a legend wider than the panels, a word longer than its
    room; up to MAX_GROWTH times its width for the latter)."""
    if not hasattr(fig.canvas, "get_renderer"):   # a bare Figure(): give it one to measure with
        FigureCanvasAgg(fig)
    originals: dict = {}   # each round breaks the text as drawn, not as last broken
    widest = fig.get_size_inches()[0] * MAX_GROWTH
    for _ in range(rounds):
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
        broken = [_break_text(text, room, renderer, originals) for text, room in _rooms(fig)]
        broken += [_break_ticks(ax, renderer, originals) for ax in fig.axes if ax.get_visible()]
        if any(broken):
            fig.draw_without_rendering()   # lay out again with the new line breaks
            renderer = fig.canvas.get_renderer()
        if not _grow(fig, renderer, widest) and not any(broken):
            break
    return fig


def fit_in_data_width(text, width: float):
    """Have fit_text break text (drawn in an axes' data coordinates, such as
    a map cell's) to `width` x units of its axes."""
    text._fit_data_width = width
    return text


def _rooms(fig: Figure):
    """(text, width in pixels it may take) for each breakable text of fig."""
    width = fig.bbox.width
    if fig._suptitle is not None:
        yield fig._suptitle, width
    for legend in fig.legends:
        yield legend.get_title(), width
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        box = ax.get_window_extent()
        for title in (ax.title, ax._left_title, ax._right_title):
            yield title, box.width
        yield ax.xaxis.label, box.width
        yield ax.yaxis.label, box.height
        for text in ax.texts:
            width = getattr(text, "_fit_data_width", None)
            if width is not None:
                x0, x1 = ax.transData.transform([(0, 0), (width, 0)])[:, 0]
                yield text, 0.95 * abs(x1 - x0)   # a little space between neighbours


def _text_width(text, s: str, renderer) -> float:
    """Width of s set in text's font along its baseline, in pixels."""
    return renderer.get_text_width_height_descent(
        s, text.get_fontproperties(), ismath="TeX" if text.get_usetex() else False)[0]


def _break_lines(s: str, room: float, width) -> str:
    """s with its lines broken at spaces, or after the "=" of "field=value",
    so each fits `room` (a word longer than the room stays whole)."""
    out = []
    for line in s.split("\n"):
        pieces = [p for p in re.findall(r"[^ =]*[ =]?", line) if p]
        current = pieces[0] if pieces else ""
        for piece in pieces[1:]:
            if width((current + piece).rstrip()) <= room:
                current += piece
            else:
                out.append(current.rstrip())
                current = piece
        out.append(current.rstrip())
    return "\n".join(out)


def _break_text(text, room: float, renderer, originals: dict) -> bool:
    """Break text to room; True if its lines changed."""
    if not text.get_visible() or not text.get_text():
        return False
    original = originals.setdefault(id(text), text.get_text())
    broken = _break_lines(original, room, lambda s: _text_width(text, s, renderer))
    if broken == text.get_text():
        return False
    text.set_text(broken)
    return True


def _break_ticks(ax, renderer, originals: dict) -> bool:
    """Break an axes' x tick labels (text labels, unrotated: fixed or
    categorical, such as seaborn's) to the distance between ticks; True if
    any changed. Set through the axis, since each draw sets the labels' text
    from its formatter."""
    axis = ax.xaxis
    if not isinstance(axis.get_major_formatter(), (FixedFormatter, StrCategoryFormatter)):
        return False
    labels = [t for t in axis.get_ticklabels() if t.get_visible()]
    if not labels or any(t.get_rotation() % 180 for t in labels):
        return False
    ticks = axis.get_ticklocs()
    original = originals.setdefault(("xticks", id(ax)), [t.get_text() for t in
                                                         axis.get_ticklabels()])
    if len(original) != len(ticks):
        return False
    centres = np.sort(ax.transData.transform(np.c_[ticks, np.zeros(len(ticks))])[:, 0])
    room = float(np.diff(centres).min()) if len(ticks) > 1 else ax.get_window_extent().width
    room *= 0.95   # a little space between neighbours
    broken = [_break_lines(s, room, lambda s: _text_width(labels[0], s, renderer))
              for s in original]
    if broken == [t.get_text() for t in axis.get_ticklabels()]:
        return False
    axis.set_ticks(ticks, broken)
    return True


def _grow(fig: Figure, renderer, widest: float) -> bool:
    """Enlarge fig by what its content overruns: the canvas (a legend, a
    caption or a word wider than the figure), or the room of a title or tick
    label that could not be broken to it (its neighbours' room; not past
    `widest` inches). True if it grew."""
    content = fig.get_tightbbox(renderer)   # inches
    w, h = fig.get_size_inches()
    over_w = max(0.0, -content.x0) + max(0.0, content.x1 - w)
    over_h = max(0.0, -content.y0) + max(0.0, content.y1 - h)
    wider = max([_overrun(ax, renderer) for ax in fig.axes if ax.get_visible()] + [1.0])
    new_w = max(w + over_w, min(w * wider, widest))
    new_h = h + over_h
    if new_w - w < 0.01 and new_h - h < 0.01:
        return False
    slack = 0.05   # inches: a new layout rounds differently; do not land on the edge
    fig.set_size_inches(new_w + slack * (new_w > w), new_h + slack * (new_h > h))
    return True


def _overrun(ax, renderer) -> float:
    """How many times wider than its panel an axes' title is, or than their
    spacing its x tick labels are (1: they fit)."""
    box = ax.get_window_extent(renderer)
    ratio = 1.0
    for title in (ax.title, ax._left_title, ax._right_title):
        if title.get_visible() and title.get_text() and box.width > 0:
            ratio = max(ratio, title.get_window_extent(renderer).width / box.width)
    # rotated labels (the comparison's) are slanted past each other: their
    # upright boxes overlap where the labels do not
    labels = sorted((t.get_window_extent(renderer) for t in ax.xaxis.get_ticklabels()
                     if t.get_visible() and t.get_text() and not t.get_rotation() % 180),
                    key=lambda b: b.x0)
    for left, right in zip(labels, labels[1:]):
        gap = (right.x0 + right.x1) / 2 - (left.x0 + left.x1) / 2
        if gap > 0 and left.x1 > right.x0:
            ratio = max(ratio, (left.width + right.width) / 2 / gap)
    return ratio
