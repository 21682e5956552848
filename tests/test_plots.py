"""Figures of a run directory: the data behind them, and the files written."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from conftest import small_plan
from harness.outputs import plots
from harness.engine.simulation import execute, write_run_dir

LAYERS, WORKERS = 20, 4


@pytest.fixture(scope="module")
def result(make_profile):
    """One small real run: a 4-worker job (layers 0-4 high, the rest low)
    next to light background traffic."""
    model = make_profile(LAYERS, 2_000_000, 10.0, name="small-model")
    p = small_plan("training.enabled=true", f'training.profile="{model}"',
                   f"training.workers={WORKERS}", "training.ratio=2",
                   'training.priority="low"', 'training.layer_classes.high="0-4"',
                   "background.load=0.1", "run.duration=0.3", "run.warmup=0.05",
                   "run.cooldown=0.05")
    return execute(p, progress=False, quiet=True)


@pytest.fixture(scope="module")
def run_dir(result, tmp_path_factory):
    return write_run_dir(result, tmp_path_factory.mktemp("runs") / "training")


@pytest.fixture(scope="module")
def run(run_dir):
    return plots.load_run(run_dir)


def test_timeline_shows_worker0_compute_of_iterations_in_the_window(run):
    window = plots.measurement_window(run.config)
    assert window == pytest.approx((0.05, 0.25))
    chosen = plots.pick_iterations(run.iterations, window)
    assert len(chosen) == 3
    starts = run.iterations.set_index(["worker", "iteration"])["start_ns"]
    assert all(starts[0, i] >= 0.05e9 for i in chosen)
    assert not any(starts[0, i] >= 0.05e9 for i in range(min(chosen)))  # the first ones

    rows, spans = plots.timeline_frames(run.compute, run.transfers, run.iterations, window)
    assert len(rows) == 2 * LAYERS * len(chosen)
    assert sorted(rows["iteration"].unique()) == chosen
    assert set(rows["phase"]) == {"fp", "bp"}
    assert (rows["end_ms"] >= rows["start_ms"]).all()


def test_buffer_spans_cover_all_workers_partitions(run):
    window = plots.measurement_window(run.config)
    chosen = plots.pick_iterations(run.iterations, window)
    _, spans = plots.timeline_frames(run.compute, run.transfers, run.iterations, window)
    shown = run.transfers[run.transfers["iteration"].isin(chosen)]
    n_buffers = shown["buffer"].nunique()
    assert len(spans) == n_buffers * len(chosen)
    assert spans["finished"].all()  # complete iterations have synchronised every buffer
    assert (spans["end_ms"] >= spans["start_ms"]).all()
    # the span is the earliest send to the latest arrival over all workers
    one = shown[(shown["iteration"] == chosen[0]) & (shown["buffer"] == 0)]
    first = spans[(spans["iteration"] == chosen[0]) & (spans["buffer"] == 0)].iloc[0]
    assert first["start_ms"] == one["start_ns"].min() / 1e6
    assert first["end_ms"] == one["end_ns"].max() / 1e6
    assert set(one["worker"]) == set(range(WORKERS))
    # coloured by the classes the transfers were sent in: both layer classes show
    assert set(spans["traffic_class"]) == set(shown["traffic_class"]) == {"high", "low"}
    # buffer labels are the layer ranges, e.g. the last buffer holds layer 0
    assert spans.groupby("buffer")["layers"].nunique().eq(1).all()
    assert spans.loc[spans["buffer"].idxmax(), "layers"].endswith("-0")


def test_unfinished_partitions_mark_the_span():
    t = pd.DataFrame({"iteration": [0, 0], "buffer": [0, 0], "layers": ["9-0"] * 2,
                      "start_ns": [1_000_000, 2_000_000], "end_ns": [3_000_000, -1],
                      "traffic_class": ["low"] * 2})
    span = plots.buffer_spans(t).iloc[0]
    assert not span["finished"]
    assert (span["start_ms"], span["end_ms"]) == (1.0, 3.0)


def test_fct_cdf_per_size_class(run):
    cdf = plots.fct_cdf_frame(run.flows)
    done = run.flows[run.flows["measured"] & run.flows["completed"]]
    assert len(cdf) == len(done) > 0
    for _, rows in cdf.groupby("size_class"):
        assert rows["fct_ms"].is_monotonic_increasing
        assert rows["cdf"].iloc[-1] == 1.0


def test_uplink_utilization_is_the_mean_over_host_uplinks(run):
    n_hosts = run.config["topology"]["hosts"]
    frame = plots.uplink_utilization(run.utilization, n_hosts)
    assert set(frame["app"]) == {"background", "training"}
    up = run.utilization[run.utilization["from_node"] < n_hosts]
    assert frame["utilization"].sum() * n_hosts == pytest.approx(up["utilization"].sum())
    # every (app, class) has a value in every interval, zeros included
    assert frame.groupby(["app", "traffic_class"]).size().nunique() == 1
    assert frame.groupby("t_s")["utilization"].sum().between(0, 1).all()


def test_plot_run_writes_every_figure(run_dir):
    written = plots.plot_run(run_dir)
    names = {p.name for p in written}
    assert names == {f"{stem}.{fmt}" for stem in ("training-timeline", "fct-cdf", "utilization")
                     for fmt in ("png", "pdf")}
    assert all(p.parent == run_dir / "plots" and p.stat().st_size > 0 for p in written)
    assert not [p for p in (run_dir / "plots").iterdir() if p.name.startswith(".")]  # no temps


def test_a_run_in_memory_draws_as_its_directory_does(result, run, tmp_path):
    """One run type (harness.analysis.tables.Run): the figures of a run just
    run, never written, are those of its directory, title and data alike."""
    memory = dataclasses.replace(result, dir=None)
    drawn, read = dict(plots.draw_run(memory)), dict(plots.draw_run(run))
    assert list(drawn) == list(read)
    assert set(drawn) == {"training-timeline", "fct-cdf", "utilization"}
    for stem in drawn:
        assert drawn[stem].texts[0].get_text() == read[stem].texts[0].get_text()
    with pytest.raises(TypeError, match="in memory only"):
        plots.plot_run(memory)
    written = plots.plot_run(memory, tmp_path / "figs", formats=("png",))
    assert {p.name for p in written} == {f"{stem}.png" for stem in drawn}


def test_a_run_without_training_has_no_timeline(result, tmp_path):
    # what write_run_dir writes for a run without a job: no training tables
    plain = dataclasses.replace(result, iterations=None, transfers=None, compute=None)
    run_dir = write_run_dir(plain, tmp_path / "plain")
    written = plots.plot_run(run_dir, tmp_path / "figs", formats=("png",))
    assert {p.name for p in written} == {"fct-cdf.png", "utilization.png"}


def test_not_a_run_directory(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match=r"not a run directory: missing summary\.json"):
        plots.plot_run(tmp_path)


def test_a_comparison_redrawn_from_the_same_table_is_the_same_figure():
    """The bars' 95 % intervals are bootstrapped with a fixed seed: two draws
    of one table give the same PNG (unseeded, each redraw of a kept finding's
    comparison moved its error bars)."""
    import io

    import numpy as np
    import pandas as pd

    from harness.outputs.plots.sweep_data import COMPARISON_PANELS
    from harness.outputs.plots.sweep_draw import draw_comparison

    rng = np.random.default_rng(1)
    frame = pd.DataFrame([{"point": p, "arm": arm, "metric": metric, "value_ms": v}
                          for p in ("R=2", "R=4") for arm in ("same", "low")
                          for _, metric in COMPARISON_PANELS
                          for v in rng.exponential(10, size=6)])
    grid = {"axes": ["training.ratio", "seed"]}

    def png() -> bytes:
        out = io.BytesIO()
        draw_comparison(frame, grid, "t").savefig(out, format="png")
        return out.getvalue()
    assert png() == png()
