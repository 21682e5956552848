"""`harness report SWEEP_DIR`: one static HTML page of the tiny sweep; a
headless Chromium renders it and the screenshot shows the map."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from html import unescape

import pandas as pd
import pytest
from click.testing import CliRunner

from harness import cli
from harness.outputs import plots
from harness.analysis import summary as sweep_summary
from harness.outputs import report as reports
from harness.outputs.plots import BOUNDARY_COLORS


@pytest.fixture(scope="module")
def page(local_sweep, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    r = CliRunner().invoke(cli.main, ["report", str(local_sweep.out), "-o", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_the_page_holds_map_cells_and_manifest(page, local_sweep):
    html = page.read_text()
    assert reports.is_report(page)
    m = re.search(r'id="map-image"[^>]*src="data:image/png;base64,([^"]+)"', html)
    assert m and base64.b64decode(m.group(1)).startswith(b"\x89PNG")
    summary = local_sweep.tables["summary"]
    cells = re.findall(r'<details id="cell-([0-9a-f]+)">(.*?)</details>', html, re.S)
    assert sorted(c for c, _ in cells) == sorted(summary["cell"])
    for _, body in cells:  # FCT CDF, iteration distribution, utilisation
        assert body.count('src="data:image/png;base64,') == 3
        assert "iteration-time distribution" in body
    manifest = unescape(html[html.index('<section id="manifest">'):])
    assert "<th>ns3</th><td>3.44.post0</td>" in manifest  # every cell ran with it
    assert all(cell in manifest for cell in summary["cell"])  # digests
    assert 'name = "tiny"' in manifest and "simulation CPU time" in manifest
    assert not re.search(r'(src|href)="https?://', html)  # nothing fetched: no server
    # every n/a of the cells' table says why, as a tooltip
    table = html[html.index('<section id="summary">'):html.index('<section id="cells">')]
    assert table.count("n/a") == len(re.findall(r'<span class="na" title="[^"]+">n/a</span>',
                                                table))


def test_the_page_answers(page, local_sweep):
    """Issue 46: the map first and large, every metric's change with its
    interval and verdict, captions that say what a figure shows, plain numbers."""
    html = page.read_text()
    assert (html.index('id="map-image"') < html.index('<section id="changes">')
            < html.index('<section id="figures">') < html.index('<section id="summary">'))
    # the map a panel per image, each shown at its drawn size (the page wraps them)
    panels = re.findall(r'<img[^>]*class="map-panel"[^>]*width="(\d+)" '
                        r'src="data:image/png;base64,([^"]+)"', html)
    assert len(panels) == 3
    for width, png in panels:
        assert int(width) == round(reports._png_width(png) * 96 / reports.FIGURE_DPI)
        assert int(width) <= reports.PAGE_WIDTH_PX
    changes = html[html.index('<section id="changes">'):html.index('<section id="figures">')]
    means = local_sweep.tables["deltas_mean"]
    from harness.analysis.metrics import delta_metric_words

    for metric in set(means["metric"]):   # every metric, the tails included
        assert unescape(changes).count(delta_metric_words(metric) + "<") == \
            (means["metric"] == metric).sum(), metric
    assert "too few samples: " in changes and " of 368 pairs" in changes
    for stem in reports.SWEEP_FIGURES:   # captions in words, not file names
        assert f"<figcaption>{stem}" not in html and f'alt="{stem}"' not in html
    tables = re.findall(r"<table.*?</table>", html, re.S)
    assert tables and not any(re.search(r"\d\.?\d*e[+-]\d", t) for t in tables)


def test_every_figure_on_the_page_reads_at_its_drawn_size(local_sweep):
    """The page shows each figure at its drawn size (96 CSS px an inch),
    no wider than the page: the sweep's (the map a panel each) and a cell's
    all have text at least style.MIN_TEXT_PX high there."""
    from harness.outputs.plots import style, sweep_figures

    figs = [fig for _, group in sweep_figures.page_figures(
        local_sweep.out, reports.PAGE_WIDTH_PX / style.CSS_PX_PER_IN) for fig in group]
    cell = local_sweep.tables["summary"]["cell"].iloc[0]
    run = plots.load_run(local_sweep.out / "cells" / cell)
    figs += [fig for _, fig in plots.draw_run(run, cell, stems=tuple(
        stem for stem, _ in reports.CELL_FIGURES)) if fig is not None]
    figs.append(plots.iteration_figure(run.iterations, f"{cell}: iteration times"))
    assert len(figs) >= 8
    for fig in figs:
        style.fit_text(fig)
        px = style.shown_text_px(fig, style.CSS_PX_PER_IN, reports.PAGE_WIDTH_PX)
        assert px >= style.MIN_TEXT_PX, (fig._suptitle.get_text() if fig._suptitle else "", px)


def test_the_page_says_the_answer_in_words(page, local_sweep):
    """The map in words before the map: each compared arm's training
    verdicts (how many decided, which class where) and the background's
    significant changes, as the findings pages' "In short" says them."""
    from harness.outputs import words

    html = page.read_text()
    answer = unescape(html[html.index('<section id="answer">'):html.index('<section id="map">')])
    means = local_sweep.tables["deltas_mean"]
    training = means[means["metric"] == "iteration_time"]
    for arm in set(training["arm"]):
        decided = int(training[(training["arm"] == arm)]["decided"].eq(True).sum())
        assert f"Training</strong> (<code>{arm}</code> vs" in answer
        assert f"{decided} of {len(training[training['arm'] == arm])} verdicts decided" in answer
    assert "<strong>Small flows' mean FCT</strong>: significantly faster at" in answer
    assert "**" not in answer and "`" not in answer   # the summary's Markdown made HTML
    assert reports.answer_html({"reference": None}, means) == ""
    assert words.map_summary  # one summary for the pages and the report


def test_numbers_are_plain():
    assert reports.plain(1610.0) == "1,610" and reports.plain(1.61e3) == "1,610"
    assert reports.plain(12.345) == "12.3" and reports.plain(0.012345) == "0.0123"
    assert reports.plain(0.0) == "0" and reports.plain(float("nan")) == "n/a"
    assert reports._fmt(1.612, 1e3) == "1,612"


def test_report_replaces_its_own_page_only(page, local_sweep):
    r = CliRunner().invoke(cli.main, ["report", str(local_sweep.out), "-o", str(page)])
    assert r.exit_code == 0, r.output
    other = page.parent / "mine.html"
    other.write_text("<p>mine</p>")
    refused = CliRunner().invoke(cli.main, ["report", str(local_sweep.out), "-o", str(other)])
    assert refused.exit_code == 2 and other.read_text() == "<p>mine</p>"


def _map_pixels(png_path) -> int:
    """Pixels of the map's green/yellow/red cell colours."""
    import numpy as np
    from PIL import Image

    rgb = np.asarray(Image.open(png_path).convert("RGB")).astype(int)
    count = 0
    for name in ("green", "yellow", "red"):
        target = np.array([int(BOUNDARY_COLORS[name][i:i + 2], 16) for i in (1, 3, 5)])
        count += int((np.abs(rgb - target).max(axis=2) <= 8).sum())
    return count


def _screenshot(chromium: str, html_path, png_path, profile) -> None:
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={profile}", f"--screenshot={png_path}",
                    "--window-size=1280,1200", html_path.as_uri()],
                   check=True, capture_output=True, timeout=120)


@pytest.mark.browser  # skipped where chromium is not installed (conftest)
def test_chromium_renders_the_map(page, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    shot = tmp_path / "page.png"
    _screenshot(chromium, page, shot, tmp_path / "profile")
    with_map = _map_pixels(shot)
    # the same page without the map's image: its colours are gone
    bare = tmp_path / "bare.html"
    bare.write_text(re.sub(r'<img[^>]*class="map-panel"[^>]*>', "", page.read_text()))
    _screenshot(chromium, bare, tmp_path / "bare.png", tmp_path / "profile")
    assert with_map > 20_000, with_map
    assert _map_pixels(tmp_path / "bare.png") < with_map / 50


# --------------------------------------------------------------------------
# stalled and failed cells: their own status, and why


@pytest.fixture(scope="module")
def stalled_sweep(grid_file, tmp_path_factory):
    """The tiny grid at R = 200 on one row, a 1 x 2 map: the job computes
    ~200 times longer than it communicates, so none of its iterations fits in
    the 0.15 s window and every cell stalls (its background still runs)."""
    from harness.sweeps import sweeping
    from harness.sweeps.grid import load_grid

    d = tmp_path_factory.mktemp("stalled")
    grid = d / "stalled.toml"
    grid.write_text(grid_file.read_text().replace('"training.ratio" = [2, 1]',
                                                  '"training.ratio" = [200]'))
    return sweeping.run_sweep(load_grid(grid), d / "out", jobs=2, progress=False)


def test_a_stalled_cell_is_its_own_status_with_its_reason(stalled_sweep):
    out = stalled_sweep.out
    summary = pd.read_parquet(out / "summary.parquet")
    assert len(summary) == 4 and (summary["status"] == sweep_summary.STALLED).all()
    assert summary["error"].isna().all()   # it ran: not an error
    for row in summary.itertuples():
        run = json.loads((out / "cells" / row.cell / "config.json").read_text())["run"]
        assert row.reason == sweep_summary.stall_reason(run)
        assert f"({run['warmup']} s to {run['duration'] - run['cooldown']:g} s)" in row.reason
    # no iteration time, but the background was measured
    assert summary["mean_iteration_s"].isna().all() and (summary["u_background"] > 0).all()

    # the map: n/a, and why, in each training cell
    sweep = plots.load_sweep(out)
    table = plots.boundary_table(sweep.deltas_mean, sweep.summary, sweep.grid)
    assert list(table["stalled"]) == [2, 2] and list(table["failed"]) == [0, 0]
    assert list(table["iteration_reason"]) == ["both arms stalled"] * 2
    fig = plots.draw_boundary(table, sweep.grid, plots.background_labels(sweep.summary,
                                                                         sweep.grid), "map")
    assert [t.get_text() for t in fig.axes[0].texts] == ["n/a\nboth arms stalled"] * 2


def test_the_report_says_why_a_stalled_cell_has_no_value(stalled_sweep):
    out = stalled_sweep.out
    summary = pd.read_parquet(out / "summary.parquet")
    page = unescape(reports.render(out))
    assert re.search(r"4 cells:\s*4 stalled", page)
    table = page[page.index('<section id="summary">'):page.index('<section id="cells">')]
    for reason, n in summary["reason"].value_counts().items():
        # each row's status and its iteration mean and p99 carry the stall as a tooltip
        assert table.count(f'<span class="stalled" title="{reason}">stalled</span>') == n
        assert table.count(f'<span class="na" title="{reason}">n/a</span>') == 2 * n
    cell_pages = dict(re.findall(r'<details id="cell-([0-9a-f]+)">(.*?)</details>', page, re.S))
    assert sorted(cell_pages) == sorted(summary["cell"])
    for row in summary.itertuples():
        body = cell_pages[row.cell]
        head = body[:body.index("</summary>")]
        assert f"stalled: {row.reason}" in head   # the line of the cell's detail
        assert "(stalled: see above)" in body     # its n/a iteration times
        assert 'src="data:image/png;base64,' in body   # its tables were drawn


def test_summaries_read_with_their_status_reasons():
    """A summary written before stalled was a status ("ok", training_stalled,
    the stall in `error`) reads as stalled; failed cells' reason is their
    error, unfinished ones' that they did not run."""
    stall = "measured no complete training iteration ..."
    old = pd.DataFrame({"cell": ["a", "b", "c", "d"],
                        "status": ["ok", "ok", "failed", "unfinished"],
                        "error": [None, stall, "ns-3 exited with -9", None],
                        "training_stalled": [False, True, None, None]})
    new = sweep_summary.with_status_reasons(old)
    assert list(new["status"]) == ["ok", "stalled", "failed", "unfinished"]
    assert list(new["reason"]) == [None, stall, "ns-3 exited with -9", sweep_summary.NOT_RUN_REASON]
    assert list(old["status"]) == ["ok", "ok", "failed", "unfinished"]   # a copy
    # ran, error, training stalled -> status
    assert sweep_summary.cell_status(True, None) == "ok"
    assert sweep_summary.cell_status(True, None, training_stalled=True) == "stalled"
    assert sweep_summary.cell_status(False, "boom") == "failed"
    assert sweep_summary.cell_status(False, None) == "unfinished"
    row = new.iloc[1]
    assert reports.na_reason(row, "mean_iteration_s") == stall
    assert reports.na_reason(new.iloc[0], "fct_large_mean_s") == "no measured large flow completed"
    assert reports.na_reason(new.iloc[2], "fct_small_mean_s") == "ns-3 exited with -9"
