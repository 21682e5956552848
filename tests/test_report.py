"""`harness report SWEEP_DIR`: one static HTML page of the tiny sweep; a
headless Chromium renders it and the screenshot shows the map."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
from html import unescape

import pytest
from click.testing import CliRunner

from harness import cli
from harness import report as reports
from harness.plots import BOUNDARY_COLORS


@pytest.fixture(scope="module")
def page(local_sweep, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    r = CliRunner().invoke(cli.main, ["report", str(local_sweep.out), "-o", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_the_page_holds_map_cells_and_manifest(page, local_sweep):
    html = page.read_text()
    assert reports.is_report(page)
    m = re.search(r'id="map-image" alt="operating-boundary" src="data:image/png;base64,([^"]+)"',
                  html)
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
    bare.write_text(re.sub(r'<img id="map-image"[^>]*>', "", page.read_text()))
    _screenshot(chromium, bare, tmp_path / "bare.png", tmp_path / "profile")
    assert with_map > 20_000, with_map
    assert _map_pixels(tmp_path / "bare.png") < with_map / 50
