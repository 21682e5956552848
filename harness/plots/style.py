"""What every figure shares: the palette, a figure not tied to pyplot, and
writing it (each format whole, through harness.outdir's writer)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from harness import outdir

#: seaborn "deep", in its order.
PALETTE = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3",
           "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd"]


def new_figure(width: float, height: float, **subplots) -> tuple[Figure, np.ndarray]:
    """A Figure not tied to pyplot (no display, no global state), seaborn-styled."""
    import matplotlib
    import seaborn as sns

    with matplotlib.rc_context({**sns.axes_style("whitegrid"),
                                **sns.plotting_context("notebook", font_scale=0.85)}):
        fig = Figure(figsize=(width, height), layout="constrained")
        axes = fig.subplots(squeeze=False, **subplots)
    return fig, axes


def save_figure(fig: Figure, out_dir: Path, stem: str, formats: tuple[str, ...]) -> list[Path]:
    """Write fig as out_dir/stem.<fmt> for each format, each atomically."""
    written = []
    for fmt in formats:
        written.append(outdir.write_from(out_dir / f"{stem}.{fmt}",
                                         lambda tmp: fig.savefig(tmp, format=fmt, dpi=150)))
    return written
