"""Services in a sweep (issue 49): a tiny grid of the `services` scenario,
training `same` against `low`, over real ns-3. The two arms send the very
same requests; each service's tails reach summary.parquet, deltas.parquet
and deltas_mean.parquet with 95 % intervals paired request by request; the
same cells give the same intervals again, in compare as in the sweep; the
frontier, export and the map carry them. Pure logic (names, the difference
of a fraction, the fan-out's draws) is checked without ns-3 below."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from harness.analysis import services, stats
from harness.traffic.services.requests import REQUEST_IDENTITY

GRID = """
name = "tiny-services"
scenario = "services"
timeout = "10min"
[set]
"run.duration" = 0.4
"run.warmup" = 0.1
"run.cooldown" = 0.05
"service.0.fanout" = 4
"service.1.qps" = 1000     # 2 clients x 0.25 s: ~500 requests, enough pairs for a p99's interval
[axes]
seed = [1]
[arms]
reference = "same"
same = { "training.priority" = "same" }
low = { "training.priority" = "low" }
"""

#: the changed statistics of the scenario's three services (one of each kind)
METRICS = ("query_p99", "query_mean", "query_deadline_miss", "rpc_p99", "rpc_mean",
           "rpc_slo_attainment", "stream_delay_p99", "stream_jitter")


@pytest.fixture(scope="module")
def service_sweep(tmp_path_factory):
    from harness.sweeps import sweeping
    from harness.sweeps.grid import load_grid

    d = tmp_path_factory.mktemp("service-sweep")
    (d / "grid.toml").write_text(GRID)
    grid = load_grid(d / "grid.toml")
    report = sweeping.run_sweep(grid, d / "out", jobs=2, progress=False)
    assert not report.failed
    return grid, report


def _cells(report) -> tuple[str, str]:
    s = report.tables["summary"].set_index("arm")
    return s.loc["same", "cell"], s.loc["low", "cell"]


def test_both_arms_send_the_same_requests(service_sweep):
    _, report = service_sweep
    same, low = (report.out / "cells" / c for c in _cells(report))
    a, b = (pd.read_parquet(d / "services.parquet") for d in (same, low))
    assert len(a) > 0
    key = list(REQUEST_IDENTITY)
    assert a[key].sort_values("id").reset_index(drop=True).equals(
        b[key].sort_values("id").reset_index(drop=True))
    # four of the six workers per query, as fanout says
    queries = a[a["kind"] == "query"].groupby("query")["server"]
    assert (queries.nunique() == 4).all()
    sa, sb = (pd.read_parquet(d / "streams.parquet").set_index("seq")["sent_ns"]
              for d in (same, low))
    common = sa.index.intersection(sb.index)
    assert len(common) > 0 and sa.loc[common].equals(sb.loc[common])


def test_the_deltas_carry_each_service_with_intervals(service_sweep):
    _, report = service_sweep
    summary = report.tables["summary"]
    for metric in METRICS:
        assert services.stat_of(metric).column(metric) in summary
    deltas = report.tables["deltas"].set_index("metric")
    m = report.tables["deltas_mean"].set_index("metric")
    assert set(METRICS) <= set(m.index) and set(METRICS) <= set(deltas.index)
    # a fraction changes by its difference; a time by its ratio
    attain = deltas.loc["rpc_slo_attainment"]
    assert math.isclose(attain["change"], attain["value"] - attain["reference"])
    mean = deltas.loc["query_mean"]
    assert math.isclose(mean["change"], mean["value"] / mean["reference"] - 1)
    # the pooled changes with enough pairs have an interval around them and a verdict
    decided = ("query_mean", "query_deadline_miss", "rpc_p99", "rpc_mean",
               "rpc_slo_attainment", "stream_jitter")
    for metric in decided:
        row = m.loc[metric]
        need = stats.min_pairs_of(metric)
        assert row["samples"] >= need, (metric, row["samples"], need)
        assert row["change_low"] <= row["change"] <= row["change_high"], metric
        assert row["verdict"] in (stats.LOWER, stats.HIGHER, stats.NOT_SIGNIFICANT)
        assert bool(row["decided"]) == (row["change_low"] > 0 or row["change_high"] < 0)
    # a query p99 from fewer queries than its interval needs says so
    p99 = m.loc["query_p99"]
    if p99["samples"] < stats.min_pairs_of("query_p99"):
        assert p99["verdict"] == stats.TOO_FEW and math.isnan(p99["change_low"])


def test_the_same_cells_give_the_same_intervals_in_compare(service_sweep):
    from harness.analysis import comparing
    from harness.sweeps.grid import load_grid

    _, report = service_sweep
    same, low = _cells(report)
    table = comparing.compare(report.out / "cells" / same, report.out / "cells" / low,
                              load_grid).table.set_index("metric")
    assert table["paired"].all()
    m = report.tables["deltas_mean"].set_index("metric")
    for metric in METRICS:
        for column in ("change", "change_low", "change_high", "samples", "verdict"):
            a, b = table.loc[metric, column], m.loc[metric, column]
            assert a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), \
                (metric, column, a, b)


def test_aggregating_again_gives_identical_tables(service_sweep):
    from harness.sweeps import aggregate
    from harness.sweeps.grid import expand

    grid, report = service_sweep
    again = aggregate.compare(report.out, grid, expand(grid))
    for name in ("summary", "deltas", "deltas_mean"):
        columns = [c for c in again[name].columns if c not in aggregate.TIMING_COLUMNS]
        pd.testing.assert_frame_equal(again[name][columns].reset_index(drop=True),
                                      report.tables[name][columns].reset_index(drop=True))


def test_a_sweep_kept_in_parts_goes_on_to_the_same_tables(service_sweep, tmp_path):
    """harness reference of a grid without a scale axis keeps the finished
    cells of an unfinished sweep, services' tables whole; a sweep that takes
    them runs only the rest and gives the full sweep's paired intervals."""
    import json
    import shutil

    from click.testing import CliRunner

    from harness.cli import main
    from harness.sweeps import aggregate, cell_cache, sweeping

    grid, report = service_sweep
    part = tmp_path / "part"
    shutil.copytree(report.out, part)
    same, low = _cells(report)
    shutil.rmtree(part / "cells" / low)   # the low arm did not finish
    made = CliRunner().invoke(main, ["reference", str(part), "-o", str(tmp_path / "ref")])
    assert made.exit_code == 0, made.output
    index = json.loads((tmp_path / "ref" / cell_cache.INDEX).read_text())
    assert list(index["cells"]) == [same] and index["of"] == 2 and index["scale"] == 1
    kept = tmp_path / "ref" / "cells" / same
    for name in cell_cache.SERVICE_TABLES:
        assert pd.read_parquet(kept / name).equals(pd.read_parquet(report.out / "cells"
                                                                     / same / name))
    again = sweeping.run_sweep(grid, tmp_path / "again", jobs=1, progress=False,
                               cached=tmp_path / "ref")
    assert not again.failed and again.ran == 1 and again.cells == 2   # the low arm only
    for name in ("deltas", "deltas_mean"):
        columns = [c for c in report.tables[name].columns if c not in aggregate.TIMING_COLUMNS]
        pd.testing.assert_frame_equal(again.tables[name][columns].reset_index(drop=True),
                                      report.tables[name][columns].reset_index(drop=True))


def test_frontier_export_and_map_carry_the_services(service_sweep, tmp_path):
    from harness.analysis.frontier import frontier_table
    from harness.outputs import export
    from harness.outputs.plots.sweep_figures import plot_metric

    _, report = service_sweep
    m = report.tables["deltas_mean"]
    table = frontier_table(m, reference="same").set_index("arm")
    change = m.set_index("metric")
    assert table.loc["same", "query_mean_gain"] == 0
    assert math.isclose(table.loc["low", "query_mean_gain"], -change.loc["query_mean", "change"])
    # higher is better for an SLO attainment: its gain is its change
    assert math.isclose(table.loc["low", "rpc_slo_attainment_gain"],
                        change.loc["rpc_slo_attainment", "change"])

    out = export.export(report.out, "parquet", tmp_path / "export")
    requests = pd.read_parquet(out / "services.parquet")
    assert set(requests["cell"]) == set(_cells(report))
    dictionary = pd.read_csv(out / export.DICTIONARY)
    assert not (dictionary["meaning"] == "(not described)").any()

    written = plot_metric(report.out, "rpc_slo_attainment", tmp_path / "plots", ("png",))
    assert [p.name for p in written] == ["map-rpc_slo_attainment.png"]


def test_metric_given_twice_draws_both_maps_or_none(service_sweep, tmp_path):
    """`--metric` repeated: a map each, in the order given (only the last was
    drawn); one unknown among them: refused before any is drawn."""
    from harness.config.errors import ConfigError
    from harness.usecases import results

    _, report = service_sweep
    written = results.plot(str(report.out), tmp_path / "maps", ("png",), (),
                           ("query_p99", "rpc_p99", "query_p99"))
    assert [p.name for p in written] == ["map-query_p99.png", "map-rpc_p99.png"]
    with pytest.raises(ConfigError, match="fct_tiny_p99"):
        results.plot(str(report.out), tmp_path / "none", ("png",), (),
                     ("query_p99", "fct_tiny_p99"))
    assert not (tmp_path / "none").exists()


# --------------------------------------------------------------------------
# pure logic, no ns-3


def test_metric_names_carry_the_service_where_a_kind_repeats():
    summary = {"a": {"kind": "rpc", "p99_latency_s": 0.002, "slo_attainment": 0.9},
               "b": {"kind": "rpc", "p99_latency_s": 0.004, "slo_attainment": 0.8},
               "q": {"kind": "query", "p99_qct_s": 0.01}}
    columns = services.flat_columns(summary)
    assert columns["rpc_a_p99_s"] == 0.002 and columns["rpc_b_slo_attainment"] == 0.8
    assert columns["query_p99_s"] == 0.01
    pairs = dict(services.delta_pairs(columns))
    assert pairs["rpc_a_p99_s"] == "rpc_a_p99" and pairs["query_p99_s"] == "query_p99"
    assert "rpc_a_p50_s" not in pairs   # in the summary only
    assert services.metric_words("rpc_b_slo_attainment").startswith("b: RPC SLO attainment")
    assert services.stat_of("fct_small_p99") is None


def test_a_fractions_change_is_its_difference():
    rng = np.random.default_rng(3)
    reference = [rng.random(400) < 0.9]
    arm = [rng.random(400) < 0.7]
    iv = stats.paired_change([r.astype(float) for r in reference],
                             [a.astype(float) for a in arm], "mean",
                             np.random.default_rng(1), difference=True)
    assert math.isclose(iv.change, arm[0].mean() - reference[0].mean())
    assert iv.low < iv.change < iv.high < 0
    assert stats.judge("rpc_slo_attainment", iv) == (stats.LOWER, True)


def test_fanout_draws_its_workers_apart_from_the_arrivals():
    from harness.traffic.services.query import query_requests

    workers = (1, 2, 3, 5, 6)
    every = query_requests(4, 0, (0,), workers, 500, 0.2, 100, 200)
    some = query_requests(4, 0, (0,), workers, 500, 0.2, 100, 200, fanout=2)
    starts = some.groupby("query")["start_ns"].first()
    assert starts.equals(every.groupby("query")["start_ns"].first())
    asked = some.groupby("query")["server"]
    assert (asked.nunique() == 2).all() and set(some["server"]) == set(workers)
    assert some.equals(query_requests(4, 0, (0,), workers, 500, 0.2, 100, 200, fanout=2))


def test_each_service_s_latency_change_is_split_into_back_off_and_the_rest(service_sweep):
    """service_causes.parquet (issue 62): per service of requests, its mean
    request latency's change split request by request into the client
    connection's RTO back-off and the rest, which add up to it; the RPC's
    relative change is deltas_mean's rpc_mean (the same pairs); explain
    prints a line per service."""
    from click.testing import CliRunner

    from harness import cli

    _, report = service_sweep
    causes = pd.read_parquet(report.out / "service_causes.parquet").set_index("service")
    assert set(causes["kind"]) == {"query", "rpc"}
    assert (causes["pairs"] > 0).all()
    assert np.allclose(causes["latency_change_s"],
                       causes["rto_change_s"] + causes["rest_change_s"])
    means = report.tables["deltas_mean"].set_index("metric")
    rpc = causes[causes["kind"] == "rpc"].iloc[0]
    assert rpc["latency_change_s"] / rpc["reference_latency_s"] == pytest.approx(
        means.loc["rpc_mean", "change"], rel=1e-9)
    same, low = (report.out / "cells" / c for c in _cells(report))
    requests = pd.read_parquet(low / "services.parquet")
    measured = requests[requests["measured"] & (requests["service_name"] == rpc.name)]
    assert rpc["arm_client_timeouts"] == measured["client_timeouts"].sum()
    said = CliRunner().invoke(cli.main, ["explain", str(report.out)])
    assert said.exit_code == 0, said.output
    assert f"{rpc.name} (rpc), {int(rpc['pairs']):,} request pairs: mean latency " in said.stdout
