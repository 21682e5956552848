"""The valid inputs next to the bad-input matrix's cases of issue 48: each
class of refusal (tests/test_bad_inputs.py) has a neighbouring input that
must still be accepted, so a check cannot pass by refusing too much; and
the Python API refuses what the CLI refuses.

Searches are checked (harness.sweeps.searching.check_search: the cells
their probes may make) without running a cell; buffers and ECN through
`harness check` (the scenario planned, ns-3 not started); profiles through
`harness profile` and its reader; `harness alone` with its runs replaced
(the comparison's bookkeeping only).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import cli
from harness.config.errors import ConfigError
from tests.test_bad_inputs import GRID, MAP_RECORD, SEARCH, SEARCH_WORKERS, _parquet


@pytest.fixture
def no_ns3(monkeypatch, tmp_path):
    """ns-3 must not start; the current directory is an empty temporary one."""
    from harness.engine import ns3

    def refuse(*args, **kwargs):
        raise AssertionError("ns-3 was started")

    monkeypatch.setattr(ns3, "load", refuse)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DDNN_HARNESS_RESULTS", raising=False)
    return tmp_path


def _harness(*argv: str):
    return CliRunner().invoke(cli.main, list(argv), prog_name="harness")


def _grid(tmp_path: Path, text: str):
    from harness.sweeps.grid import load_grid

    (tmp_path / "b.toml").write_text(text)
    return load_grid(tmp_path / "b.toml")


# --------------------------------------------------------------------------
# class 2: what a search's probes make, checked before it starts


@pytest.mark.parametrize("text", [
    SEARCH,                                                   # background.load in (0, 1)
    SEARCH.replace("hi = 0.3", "hi = 0.95"),                  # an end near the field's bound
    SEARCH_WORKERS,                                           # an integer field, 2..4 hosts
    SEARCH.replace("seed = [1]", "seed = [9223372036854775801]"),   # max_seeds 6 still fits
    SEARCH.replace("seed = [1]", 'seed = [1]\n"training.ratio" = [1, 2]'),
], ids=["load", "load-near-1", "workers", "seed-near-max", "ratio-axis"])
def test_a_search_whose_every_probe_is_valid_is_accepted(no_ns3, text):
    from harness.sweeps import searching

    grid = _grid(no_ns3, text)
    searching.check_search(grid)     # no error
    values = searching.probe_values(grid)
    assert values[0] == grid.search.lo and values[-1] == grid.search.hi and len(values) >= 3
    assert all(grid.search.lo < v < grid.search.hi for v in values[1:-1])
    if grid.search.integral:
        assert all(isinstance(v, int) for v in values)


def test_a_map_with_the_searchs_verdicts_is_accepted(no_ns3):
    from harness.outputs.plots.boundary_figure import check_map

    (no_ns3 / "m").mkdir()
    (no_ns3 / "m/sweep.json").write_bytes(MAP_RECORD)
    (no_ns3 / "m/deltas_mean.parquet").write_bytes(_parquet({
        "arm": ["low"], "metric": ["iteration_time"], "background.load": [0.1],
        "change": [0.02], "change_low": [0.01], "change_high": [0.03], "decided": [True]}))
    check_map(no_ns3 / "m", [], "background.load", "low")   # no error


# --------------------------------------------------------------------------
# class 3: search grids that make sense


def test_a_tolerance_the_search_resolves_is_accepted(no_ns3):
    from harness.sweeps import boundary

    assert _grid(no_ns3, SEARCH.replace("tolerance = 0.05", "tolerance = 3e-7")).search
    assert _grid(no_ns3, SEARCH_WORKERS).search.integral          # 1 apart: whole numbers
    log = SEARCH_WORKERS.replace("tolerance = 1", "tolerance = 1.34") + 'spacing = "log"\n'
    assert _grid(no_ns3, log).search.tolerance == 1.34           # 4 / 3, the finest
    assert boundary.finest_tolerance(2, 4, integral=True, log=True) == pytest.approx(4 / 3)
    assert boundary.finest_tolerance(23, 184, log=True) == pytest.approx(1 + 1e-6)


def test_resuming_with_the_same_search_is_accepted(no_ns3):
    from harness.sweeps import searching
    from harness.sweeps.sweepdir import SweepError

    grid = _grid(no_ns3, SEARCH)
    out = no_ns3 / "s"
    out.mkdir()
    (out / "grid.toml").write_text(SEARCH + "# a comment changes nothing\n")
    (out / "sweep.json").write_text("{}")
    searching.check_resume(out, grid, resume=True)                # no error
    changed = _grid(no_ns3, SEARCH + "max_seeds = 3\n")
    with pytest.raises(SweepError, match="search.max_seeds: changed"):
        searching.check_resume(out, changed, resume=True)


def test_the_api_refuses_a_search_grid_and_still_runs_a_sweep(no_ns3, monkeypatch):
    import harness
    from harness.sweeps import sweeping

    (no_ns3 / "b.toml").write_text(SEARCH)
    with pytest.raises(ConfigError, match="boundary search.*harness boundary"):
        harness.sweep(no_ns3 / "b.toml", no_ns3 / "out")
    assert not (no_ns3 / "out").exists()
    # a grid without [search] is a sweep: it reaches run_sweep (replaced here)
    ran = []
    monkeypatch.setattr(sweeping, "run_sweep", lambda grid, out, *a, **k: ran.append(grid))
    monkeypatch.setattr(harness.api, "load_sweep", lambda out: out)
    (no_ns3 / "g.toml").write_text(GRID)
    harness.sweep(no_ns3 / "g.toml", no_ns3 / "out")
    assert [g.name for g in ran] == ["g"]


def test_the_api_boundary_refuses_what_harness_boundary_refuses(no_ns3):
    """The Python side of a search (harness.api.boundary, through
    harness.usecases.boundary) checks the probes' cells and the map itself,
    before anything is written."""
    import harness.api

    (no_ns3 / "hi.toml").write_text(SEARCH.replace("hi = 0.3", "hi = 1.5"))
    with pytest.raises(ConfigError, match="search.hi: background.load = 1.5"):
        harness.api.boundary(no_ns3 / "hi.toml", no_ns3 / "out")
    (no_ns3 / "m").mkdir()
    (no_ns3 / "b.toml").write_text(SEARCH)
    with pytest.raises(ConfigError, match="--map"):
        harness.api.boundary(no_ns3 / "b.toml", no_ns3 / "out", map_dir=no_ns3 / "m")
    assert not (no_ns3 / "out").exists()


# --------------------------------------------------------------------------
# class 7: harness alone with a job to compare


@pytest.mark.parametrize("scenario, overrides, jobs", [
    ("default", ["training.enabled=true"], 1),
    ("two-jobs", [], 2),
    ("two-jobs", ["training.1.enabled=false"], 1),
])
def test_alone_compares_every_enabled_job(no_ns3, scenario, overrides, jobs):
    from harness.sweeps import alone

    def fake_run(sc):   # a job is slower by 10 % per other job running
        running = [j for j in sc.jobs if j.enabled]
        return {"jobs": [{"name": j.name, "mean_iteration_s": 0.1 * (1 + 0.1 * (len(running) - 1))}
                         for j in running]}

    table = alone.slowdowns(scenario, overrides, run=fake_run)
    assert len(table) == jobs
    assert table["slowdown"].tolist() == pytest.approx([1 + 0.1 * (jobs - 1)] * jobs)


# --------------------------------------------------------------------------
# class 8: harness profile at its bounds


def test_a_profile_at_the_bounds_is_written_and_read_back(no_ns3):
    from harness.traffic import profiles

    result = _harness("profile", "--model-bytes", "9.2e18", "--compute-ms", "10", "-o", "big.csv")
    assert result.exit_code == 0, result.output
    big = profiles.load_profile(no_ns3 / "big.csv")
    assert big.model_bytes <= profiles.MAX_MODEL_BYTES < 2 * big.model_bytes
    assert _harness("profile", "--check", "big.csv").exit_code == 0
    wide = _harness("profile", "--layers", str(profiles.MAX_LAYERS), "--model-bytes", "1e9",
                    "--compute-ms", "10", "-o", "wide.csv")
    assert wide.exit_code == 0, wide.output
    assert profiles.load_profile(no_ns3 / "wide.csv").n_layers == profiles.MAX_LAYERS
    ring = _harness("profile", "--ratio", "4", "--workers", "2", "-o", "ring.csv")
    assert ring.exit_code == 0, ring.output


# --------------------------------------------------------------------------
# class 9: buffers, packet size and ECN in one unit


@pytest.mark.parametrize("sets", [
    ["network.mtu=9000", 'network.buffer.size="9000B"'],         # one jumbo frame
    ["network.mtu=9000", 'network.host_buffer.size="18KB"'],
    ["network.mtu=576", "tcp.segment_size=500", 'network.buffer.size="1000B"'],  # < 1500 B
    ['network.buffer.size="3MB"', "network.ecn_threshold=1500"],  # 2,000 packets of 1,500 B
    ['network.buffer.size="150KB"', "network.ecn_threshold=99"],
    ["network.band_limit_packets=100", "network.ecn_threshold=99"],
    ["network.host_buffer.size=100", "network.ecn_threshold={low=20}"],
    ['network.buffer={model="dynamic",alpha=0.05,size=1000}', "network.ecn_threshold=20"],
    ['network.buffer={model="dynamic",size=1000,alpha={low=0.05}}',
     "network.ecn_threshold={low=20}"],
    ['network.buffer.model="dynamic"', "network.ecn_threshold=499"],   # below half the pool
    ["scale=10", "network.band_limit_packets=100", "network.ecn_threshold=94"],   # 9 of 10
], ids=["jumbo", "jumbo-host", "mtu-576", "bytes-K-1500", "bytes-K-99", "packets-K-99",
        "host-K", "dynamic-alpha", "dynamic-class-alpha", "dynamic-default", "scaled"])
def test_a_buffer_that_holds_its_packets_and_marks_is_accepted(no_ns3, sets):
    result = _harness("check", *[a for s in sets for a in ("--set", s)])
    assert result.exit_code == 0, result.output
    assert "is valid" in result.output


# --------------------------------------------------------------------------
# an integer field's whole range


def test_an_integer_fields_whole_range_is_searched_in_whole_numbers(no_ns3):
    spec = _grid(no_ns3, SEARCH_WORKERS).search
    assert spec.integral and (spec.lo, spec.hi) == (2, 4)
    assert math.isclose(spec.tolerance, 1)
