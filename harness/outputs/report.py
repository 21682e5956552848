"""`harness report SWEEP_DIR`: one static HTML page of a sweep.

The page needs no server and no network: every figure is embedded as a
base64 PNG. It holds the operating-boundary map and the sweep's other
figures (harness.outputs.plots.plot_sweep), the summary table, a drill-down per cell
(FCT CDFs, iteration-time distribution, host-uplink utilisation: the figures
`harness plot` draws of a run, harness.outputs.plots.draw_run) and the manifest: versions,
seeds, digests and cost. The page is a jinja2 template
(harness/outputs/templates/report.html.j2).
"""

from __future__ import annotations

import base64
import html
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness.analysis import services, stats
from harness.analysis.tables import optional_table, read_record
from harness.io import outdir
from harness.outputs.plots import registry
from harness.analysis.summary import MEASURED, STALLED, with_status_reasons
from harness.config.errors import ConfigError

GENERATOR = "ddnn-harness report"   # <meta name="generator">: marks our own pages
SWEEP_FILES = ("sweep.json", "summary.parquet")
# a cell's figures: shown at their drawn size (Shown), at the CSS pixel's
# dpi, the lightest that keeps their text as drawn
CELL_DPI = 96
MAP_STEM = "operating-boundary"
# shown first, in the registry's order (a grid without R x background axes
# has a comparison figure instead of the map)
SWEEP_FIGURES = registry.report_order()
SUMMARY_COLUMNS = {  # summary.parquet column -> (header, scale)
    "mean_iteration_s": ("iteration mean ms", 1e3),
    "p99_iteration_s": ("iteration p99 ms", 1e3),
    "fct_small_mean_s": ("small FCT mean ms", 1e3),
    "fct_small_p99_s": ("small FCT p99 ms", 1e3),
    "fct_large_mean_s": ("large FCT mean ms", 1e3),
    "u_training": ("U training %", 100),
    "u_background": ("U background %", 100),
    "completion_ratio": ("completion", 1),
}


#: The lossless fabric's columns, shown where the cells ran it.
LOSSLESS_COLUMNS = {
    "max_pause_share": ("most paused egress %", 100),
    "lossless_drops": ("lossless drops", 1),
    "lossy_drops": ("lossy drops", 1),
    "cnps": ("CNPs", 1),
}


def _summary_columns(summary: pd.DataFrame) -> dict[str, tuple[str, float]]:
    """SUMMARY_COLUMNS, the services' tails and the lossless fabric's
    columns the cells have."""
    return {**SUMMARY_COLUMNS, **services.summary_columns(summary.columns),
            **{c: v for c, v in LOSSLESS_COLUMNS.items() if c in summary.columns}}


def check_sweep_dir(sweep_dir: Path) -> None:
    missing = [name for name in SWEEP_FILES if not (Path(sweep_dir) / name).is_file()]
    if missing:
        raise ConfigError("SWEEP_DIR", f"{sweep_dir} is not a sweep directory: missing "
                          f"{', '.join(missing)} (run `harness sweep` first)")


def estimated_bytes(sweep_dir: Path) -> int:
    """A rough size of the page, for the free-space check made before it is
    drawn: the sweep's figures and three small PNGs per cell, in base64."""
    try:
        cells = sum(1 for _ in (Path(sweep_dir) / "cells").iterdir())
    except OSError:
        cells = 0
    return 2_000_000 + 150_000 * cells


def is_report(path: Path) -> bool:
    """A page this module wrote (it may be replaced)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return False
    return f'<meta name="generator" content="{GENERATOR}">' in head


# --------------------------------------------------------------------------
# figures


# what each sweep figure shows (its caption and alt text), by stem: the
# registry's (the map's own is the template's)
FIGURE_CAPTIONS = registry.captions()
FIGURE_DPI = 150     # style.save_figure's: the sweep's figures as `harness plot` writes them
#: the page's widest content (the body's max-width less its padding), CSS
#: pixels: wider figures are drawn wrapped to it (the map a panel per image)
PAGE_WIDTH_PX = 1200


@dataclass(frozen=True)
class Shown:
    """A figure on the page: its PNG (base64) and the width it is shown at,
    in CSS pixels: its drawn size (style.CSS_PX_PER_IN an inch), so its text
    is as large as drawn (at least style.MIN_TEXT_PX) where the window
    allows; a narrower window shrinks it (max-width)."""
    png: str
    width: int


def _png_width(png_b64: str) -> int:
    """The width in pixels of a base64 PNG (its IHDR chunk); 0 if unreadable."""
    head = base64.b64decode(png_b64[:64])
    return int.from_bytes(head[16:20], "big") if head[:8] == b"\x89PNG\r\n\x1a\n" else 0


def _shown(fig, dpi: int) -> Shown:
    from harness.outputs.plots.style import CSS_PX_PER_IN, fit_text

    buf = io.BytesIO()
    fit_text(fig)
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", pad_inches=0.05)
    png = base64.b64encode(buf.getvalue()).decode("ascii")
    return Shown(png, round(_png_width(png) * CSS_PX_PER_IN / dpi))


def _sweep_figures(sweep_dir: Path, deltas_mean: pd.DataFrame | None
                   ) -> dict[str, list[Shown]]:
    """The sweep's figures drawn for the page (plots.page_figures: the map a
    panel per image, which the page wraps) and the map of each service's
    tail (services.MAPPED: query p99, RPC p99 and SLO attainment, stream
    delay p99), and where the sweep's flows timed out, the cause layer's map
    of every flow's RTO back-off (fct_all_rto: harness.analysis.cause_changes),
    and where training's connections did, of its iteration time's back-off
    part (iteration_time_rto), by stem."""
    from harness.outputs.plots.style import CSS_PX_PER_IN
    from harness.outputs.plots.sweep_figures import page_figures

    mapped = (services.mapped_metrics(deltas_mean["metric"])
              if deltas_mean is not None and "metric" in deltas_mean else [])
    causes = optional_table(sweep_dir, "causes")
    if causes is not None and len(causes) and (causes["reference_timeouts"].sum()
                                               + causes["arm_timeouts"].sum()) > 0:
        mapped.append("fct_all_rto")   # the cause layer, where a timeout happened
    training = optional_table(sweep_dir, "training_causes")
    if training is not None and len(training) and (
            training["reference_training_tcp_timeouts"].fillna(0).sum()
            + training["arm_training_tcp_timeouts"].fillna(0).sum()) > 0:
        mapped.append("iteration_time_rto")   # and training's, where its connections timed out
    drawn = page_figures(sweep_dir, PAGE_WIDTH_PX / CSS_PX_PER_IN, tuple(mapped))
    return {stem: [_shown(fig, FIGURE_DPI) for fig in figs] for stem, figs in drawn}


# a cell's figures on the page: those `harness plot` draws of a run
# (harness.outputs.plots.draw_run) and the iteration-time distribution
CELL_FIGURES = (("fct-cdf", "FCT CDF per size class"),
                ("service-latency", "each service's latency CDF"),
                ("iteration-times", "iteration-time distribution"),
                ("utilization", "host-uplink utilisation"))


def _cell_figures(cell_dir: Path, label: str) -> list[tuple[str, Shown]]:
    """(caption, base64 PNG) of one cell: FCT CDFs, service latencies,
    iterations, utilisation."""
    from harness.outputs import plots

    run = plots.load_run(cell_dir)
    drawn = dict(plots.draw_run(run, label, stems=tuple(stem for stem, _ in CELL_FIGURES)))
    if run.iterations is not None:
        drawn["iteration-times"] = plots.iteration_figure(run.iterations,
                                                          f"{label}: iteration times")
    return [(caption, _shown(drawn[stem], CELL_DPI)) for stem, caption in CELL_FIGURES
            if drawn.get(stem) is not None]


# --------------------------------------------------------------------------
# page data


@dataclass
class CellView:
    id: str
    label: str
    status: str
    reason: str | None                      # why it is not ok
    metrics: list[tuple[str, str, str]]     # header, value, why n/a ("" with a value)
    figures: list[tuple[str, Shown]] = field(default_factory=list)
    manifest: dict = field(default_factory=dict)


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and pd.isna(value))


def _fmt(value, scale: float = 1) -> str:
    if _missing(value):
        return "n/a"
    if isinstance(value, (int, float)):
        return plain(value * scale)
    return str(value)


def plain(value: float, digits: int = 3) -> str:
    """A number as people write it, never in exponent notation: `digits`
    significant digits, but every digit left of the point (1,610, not
    1.61e+03; 0.0123; 12.3)."""
    import math

    if not math.isfinite(value):
        return "stalled" if value == math.inf else "n/a" if value != value else "-inf"
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:,.{decimals}f}"


def _reason(row: pd.Series) -> str | None:
    reason = row.get("reason")
    return None if _missing(reason) else str(reason)


def na_reason(row: pd.Series, column: str) -> str:
    """Why a summary row has no value in `column`: the cell's own reason
    where it has no tables (failed, not run) or its training stalled (the
    iteration columns); else what the cell lacked to measure it."""
    status = row.get("status")
    if status not in MEASURED:
        return _reason(row) or str(status)
    if column.endswith("iteration_s"):
        if status == STALLED:
            return _reason(row) or "training stalled"
        return "no training job in this cell"
    if column.startswith("fct_"):
        size = column.split("_")[1]
        return f"no measured {size} flow completed"
    if column == "u_training":
        return "no training job in this cell"
    if column == "u_background":
        return "no background traffic in this cell"
    if column == "completion_ratio":
        return "no measured background flow"
    if services.stat_of(column.removesuffix("_s")) is not None:
        return ("too few requests for this tail (a p99 needs 100), or the service sets no "
                "deadline or SLO")
    return "not measured"


def _cell_html(value, scale: float, row: pd.Series, column: str) -> str:
    """A summary-table value; n/a with its reason as a tooltip."""
    if _missing(value):
        return (f'<span class="na" title="{html.escape(na_reason(row, column))}">'
                "n/a</span>")
    return html.escape(_fmt(value, scale))


def _status_html(row: pd.Series) -> str:
    status, reason = str(row["status"]), _reason(row)
    if status == "ok":
        return status
    title = f' title="{html.escape(reason)}"' if reason else ""
    return f'<span class="{html.escape(status)}"{title}>{html.escape(status)}</span>'


def _label(row: pd.Series, fields: list[str]) -> str:
    parts = [f"{f.split('.')[-1]}={row[f]:g}" if isinstance(row[f], float) else
             f"{f.split('.')[-1]}={row[f]}" for f in fields if f in row]
    if row.get("arm") is not None and not pd.isna(row.get("arm")):
        parts.append(f"arm {row['arm']}")
    return ", ".join(parts) or str(row["cell"])


def _summary_table(summary: pd.DataFrame, fields: list[str]) -> str:
    """The cells' table (HTML: escaped here, written unescaped); a status
    other than ok and every n/a carry their reason as a tooltip."""
    cols = ["cell", "arm", *fields, "status"]
    table = summary[[c for c in cols if c in summary]].copy()
    for col in table.columns:   # axis values and arms are the grid's text
        table[col] = [v if _missing(v) else html.escape(str(v)) for v in table[col]]
    table["cell"] = [f'<a href="#cell-{c}">{c[:8]}</a>' for c in summary["cell"]]
    table["status"] = [_status_html(row) for _, row in summary.iterrows()]
    for col, (header, scale) in _summary_columns(summary).items():
        if col in summary:
            table[header] = [_cell_html(row[col], scale, row, col)
                             for _, row in summary.iterrows()]
    return table.to_html(index=False, escape=False, classes="summary", border=0, na_rep="")


def _pct(value: float) -> str:
    return ("stalled" if value == float("inf") else "n/a" if _missing(value)
            else f"{100 * value:+.2f}" if abs(value) < stats.GREEN_MAX else f"{100 * value:+.1f}")


def changes_table(deltas_mean: pd.DataFrame | None, fields: list[str]) -> str:
    """Every metric's change per point and compared arm (deltas_mean): change
    in %, its 95 % interval, the verdict (harness.analysis.stats) and the
    pairs and seeds it rests on; HTML, escaped here."""
    from harness.analysis.metrics import delta_metric_words

    if deltas_mean is None or deltas_mean.empty or "change" not in deltas_mean:
        return ""
    head = [*(f.rsplit(".", 1)[-1] for f in fields), "arm", "metric", "change %",
            "95 % interval", "verdict", "pairs", "seeds"]
    out = ['<table class="changes"><thead><tr>'
           + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    previous = None
    for r in deltas_mean.to_dict("records"):
        point = tuple(r.get(f) for f in [*fields, "arm"])
        shown = [("" if point == previous else html.escape(
            f"{v:g}" if pd.api.types.is_number(v) and not isinstance(v, bool)
            else _fmt(v))) for v in point]
        previous = point
        change, low, high = r.get("change"), r.get("change_low"), r.get("change_high")
        verdict = r.get("verdict") if isinstance(r.get("verdict"), str) else stats.NOT_APPLICABLE
        if verdict == stats.TOO_FEW:
            verdict = stats.too_few_words(r["metric"], r.get("samples", 0))
        interval = ("" if _missing(low) or _missing(high) else
                    f"[{_pct(low)}, {_pct(high)}]")
        samples, seeds = r.get("samples"), r.get("seeds")
        cells = [*shown, html.escape(delta_metric_words(r["metric"])),
                 html.escape(_pct(change)), html.escape(interval),
                 f'<span class="verdict">{html.escape(verdict)}</span>',
                 "" if _missing(samples) else f"{int(samples):,}",
                 "" if _missing(seeds) else f"{int(seeds)}"]
        first = ' class="first"' if any(shown) else ""
        out.append(f"<tr{first}>" + "".join(
            f'<td class="m">{c}</td>' if k == len(shown) else f"<td>{c}</td>"
            for k, c in enumerate(cells)) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _manifest(sweep_dir: Path, summary: pd.DataFrame, cells: list[CellView]) -> dict:
    manifests = [c.manifest for c in cells if c.manifest]
    versions: dict[str, set] = {}
    for m in manifests:
        for pkg, version in m.get("versions", {}).items():
            versions.setdefault(pkg, set()).add(version)
    seeds = sorted({m["seed"] for m in manifests if "seed" in m})

    def total(key: str) -> float:
        return float(sum(m.get(key) or 0 for m in manifests))

    return {
        "versions": {pkg: ", ".join(sorted(v)) for pkg, v in sorted(versions.items())},
        "seeds": ", ".join(map(str, seeds)) or "n/a",
        "digests": [(c.id, c.label, c.manifest.get("digest", c.id) if c.manifest else c.id,
                     c.manifest.get("seed", "") if c.manifest else "") for c in cells],
        "cost": [("cells run", f"{len(manifests)} of {len(cells)}"),
                 ("events", f"{total('events'):,.0f}"),
                 ("wall time of the cells", f"{total('run_wall_s'):,.1f} s"),
                 ("simulation CPU time", f"{total('simulation_cpu_s'):,.1f} s"),
                 ("largest peak RSS", f"{max((m.get('peak_rss_mib') or 0 for m in manifests), default=0):,.0f} MiB")],
        "grid_toml": _read(sweep_dir / "grid.toml"),
    }


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def answer_html(grid: dict, deltas_mean: pd.DataFrame | None) -> str:
    """The map in words (harness.outputs.words.map_summary: where training's
    verdicts are decided and in which class, where each FCT mean gained or
    lost significantly) as HTML: a list per facet; "" without arms."""
    from harness.outputs import words

    if deltas_mean is None or not len(deltas_mean) or not grid.get("reference"):
        return ""
    out, items = [], []

    def close() -> None:
        if items:
            out.append("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
            items.clear()

    for line in words.map_summary(grid, deltas_mean).splitlines():
        text = html.escape(line.strip())
        # the summary's own Markdown: **bold** and `code`, nothing else
        text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
        text = re.sub(r"`(.+?)`", r"<code>\1</code>", text)
        if text.startswith("- "):
            items.append(text[2:])
        elif text:
            close()
            out.append(f"<p>{text}</p>")
    close()
    return "\n".join(out)


def render(sweep_dir: Path) -> str:
    """The report page of a sweep directory, as HTML text."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    from harness.analysis.tables import SEED_AXIS, load_sweep

    sweep_dir = Path(sweep_dir)
    check_sweep_dir(sweep_dir)
    sweep = load_sweep(sweep_dir)
    grid, summary = sweep.grid, with_status_reasons(sweep.summary)
    fields = [f for f in grid.get("axes", []) if f in summary]
    figures = _sweep_figures(sweep_dir, sweep.deltas_mean)
    ordered = [(stem, figures[stem]) for stem in SWEEP_FIGURES if stem in figures]
    ordered += [(stem, png) for stem, png in sorted(figures.items()) if stem not in SWEEP_FIGURES]

    columns = _summary_columns(summary)
    cells = []
    for _, row in summary.iterrows():
        label = _label(row, fields)
        metrics = [(header, _fmt(row.get(col), scale),
                    na_reason(row, col) if _missing(row.get(col)) else "")
                   for col, (header, scale) in columns.items() if col in row]
        view = CellView(row["cell"], label, row["status"], _reason(row), metrics)
        cell_dir = sweep_dir / "cells" / row["cell"]
        if row["status"] in MEASURED and cell_dir.is_dir():   # a stalled cell has its tables
            view.figures = _cell_figures(cell_dir, label)
            view.manifest = read_record(cell_dir / "manifest.json", what="the cell's manifest")
        cells.append(view)

    counts = summary["status"].value_counts().to_dict()
    env = Environment(loader=PackageLoader("harness.outputs", "templates"),
                      autoescape=select_autoescape(["html", "j2"]),
                      trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2").render(
        generator=GENERATOR, name=grid.get("grid", sweep_dir.name), sweep_dir=str(sweep_dir),
        class_meaning=stats.CLASS_MEANING,
        grid=grid, counts=counts, n_cells=len(summary), figures=ordered,
        map_stem=MAP_STEM if MAP_STEM in figures else ("comparison" if "comparison" in figures
                                                       else None),
        summary_table=_summary_table(summary, fields), cells=cells,
        changes_table=changes_table(sweep.deltas_mean, [f for f in fields if f != SEED_AXIS]),
        answer=answer_html(grid, sweep.deltas_mean),
        captions=FIGURE_CAPTIONS,
        manifest=_manifest(sweep_dir, summary, cells))


def write_report(sweep_dir: Path, out: Path | None = None) -> Path:
    """Write the page (default SWEEP_DIR/report.html) atomically; returns its path."""
    out = Path(out) if out is not None else Path(sweep_dir) / "report.html"
    outdir.write_file(out, render(sweep_dir))
    return out
