"""`python -m bench --quick`: the report is complete and well-formed, and the
native program replays the harness's scenario exactly (no timing asserts)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SECTIONS = ("overhead", "startup", "memory", "sweep", "speed", "scaling", "references")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("bench") / "report.json"
    # scaling: the smallest fabric only (--quick's 128 hosts take a minute more);
    # references: one check (test_references runs each check's cheap points)
    proc = subprocess.run([sys.executable, "-m", "bench", "--quick", "--scaling-hosts", "32",
                           "--reference", "ecmp", "-o", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=900)   # a guard against a hang, not a timing
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "simulation phase vs native" in proc.stdout   # the printed table
    assert not list(out.parent.glob(".report.json.*")), "temporary file left behind"
    return json.loads(out.read_text())


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


@pytest.mark.slow
def test_report_has_every_section_and_target(report):
    assert report["bench"]["quick"] is True
    assert set(report["sections"]) == set(SECTIONS)
    assert {t["section"] for t in report["targets"]} == {"overhead", "startup", "memory", "sweep",
                                                         "speed"}
    for t in report["targets"]:
        assert t["value"] is not None and t["met"] in (True, False), t


@pytest.mark.slow
def test_the_reference_suite_writes_one_row_per_check(report):
    # --quick runs each reference check's cheap points; the row's fields are the issue's
    rows = report["references"]
    assert rows and report["sections"]["references"]["cheap"] is True
    assert {r["check"] for r in rows} == {"ecmp"}   # the one asked for
    for row in rows:
        for key in ("reference", "source", "expected", "measured", "tolerance", "within"):
            assert key in row, (key, row)
        assert row["source"], row


@pytest.mark.slow
def test_native_and_harness_agree(report):
    overhead = report["sections"]["overhead"]
    assert overhead["agree"] is True
    for a in overhead["agreement"]:
        assert a["harness_events"] == a["native_events"] > 0
        assert a["flows"]["identical"] and a["flows"]["native_completed"] > 0
        assert a["iterations"]["identical"] and a["iterations"]["native"] > 0
        assert a["queues_identical"]
        assert a["link_bytes"]["harness"] == a["link_bytes"]["native"] > 0


@pytest.mark.slow
def test_costs_are_positive(report):
    s = report["sections"]
    for pair in s["overhead"]["pairs"]:
        for side in ("harness", "native"):
            assert _positive(pair[side]["process"]["wall_s"])
            assert _positive(pair[side]["process"]["user_s"])
            assert _positive(pair[side]["phase"]["wall_s"])
            assert pair[side]["phase"]["events"] == pair["native"]["phase"]["events"]
    assert _positive(s["startup"]["warm_startup_s"]["median"])
    assert _positive(s["memory"]["manifest_peak_rss_mib"])
    for run in s["sweep"]["runs"].values():
        assert run["failed"] == 0 and run["cells"] > 0 and _positive(run["cells_per_hour"])
    for scenario in s["speed"]["scenarios"].values():
        for key in ("events_per_s", "sim_s_per_wall_s", "events_per_payload_mb"):
            assert _positive(scenario[key]["median"]), key
    tcp = s["speed"]["tcp_fastpath"]
    assert tcp["identical_tables"] is True
    assert tcp["fast"]["tcp_fastpath"]["mode"] == "fast"
    assert tcp["stock"]["tcp_fastpath"]["mode"] == "stock"
    assert tcp["fast"]["events"] == tcp["stock"]["events"] > 0
    assert _positive(tcp["speedup"])
    assert _positive(s["speed"]["jumbo"]["wall_speedup"])
    assert _positive(s["speed"]["jumbo"]["events_ratio"])
    row = s["scaling"]["sizes"]["32"]
    assert (row["hosts"], row["nodes"], row["links"]) == (32, 38, 40)
    for key in ("events", "simulation_cpu_s", "events_per_cpu_s", "network_build_s",
                "peak_rss_mib"):
        assert _positive(row[key]), key
    assert row["events_per_cpu_s_ratio"] == 1.0
    assert 0 < row["network_build_s"] < row["startup_s"]


def test_scaling_ratios_are_over_the_smallest_size_that_ran():
    from bench.sections import scaling_ratios

    sizes = {"32": {"hosts": 32, "events_per_cpu_s": 400.0},
             "128": {"hosts": 128, "events_per_cpu_s": 300.0},
             "512": {"hosts": 512, "error": "RuntimeError: out of memory"}}
    scaling_ratios(sizes)
    assert sizes["32"]["events_per_cpu_s_ratio"] == 1.0
    assert sizes["128"]["events_per_cpu_s_ratio"] == 0.75
    assert "events_per_cpu_s_ratio" not in sizes["512"]


def test_callgrind_ratios_are_events_per_instruction_over_the_smallest_counted_size():
    from bench.sections import scaling_callgrind_ratios

    sizes = {"32": {"hosts": 32, "callgrind": {"instructions_per_event": 15000.0}},
             "128": {"hosts": 128, "callgrind": {"error": "RuntimeError: no valgrind"}},
             "512": {"hosts": 512, "callgrind": {"instructions_per_event": 20000.0}},
             "1024": {"args": [], "error": "MemoryError"}}
    scaling_callgrind_ratios(sizes)
    assert sizes["32"]["callgrind"]["events_per_instruction_ratio"] == 1.0
    assert sizes["512"]["callgrind"]["events_per_instruction_ratio"] == 0.75
    assert "events_per_instruction_ratio" not in sizes["128"]["callgrind"]


def test_callgrind_totals_are_read_by_event_name(tmp_path):
    from bench.sections import _collected, _collected_events

    log = tmp_path / "valgrind.log"
    log.write_text("==1== Events    : Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n"
                   "==1== Collected : 4918 1560 982 185 80 4 5 143 21\n")
    counts = _collected_events(log)
    assert counts["Ir"] == 4918 and counts["D1mr"] == 80 and counts["DLmw"] == 21
    assert _collected(log) == 4918
    log.write_text("==1== nothing counted\n")
    with pytest.raises(RuntimeError, match="Collected"):
        _collected_events(log)


def test_cache_geometry_for_valgrind_comes_from_sysfs():
    from bench.sections import cache_options

    options = cache_options()
    if not Path("/sys/devices/system/cpu/cpu0/cache/index0").exists():
        assert options == []
        return
    for option in options:
        name, value = option.split("=")
        assert name in ("--D1", "--I1", "--LL")
        size, ways, line = (int(v) for v in value.split(","))
        assert size > 0 and ways > 0 and line in (32, 64, 128)


def test_scaling_targets_are_checked_only_where_512_hosts_ran():
    from bench.__main__ import targets

    ran = {"scaling": {"sizes": {"512": {"events_per_cpu_s_ratio": 0.7,
                                         "network_build_s": 4.0}}}}
    met = {t["metric"]: t["met"] for t in targets(ran)}
    assert met == {"sizes.512.events_per_cpu_s_ratio": False, "sizes.512.network_build_s": True}
    assert targets({"scaling": {"sizes": {"32": {"events_per_cpu_s_ratio": 1.0}}}}) == []


def test_scaling_scenario_is_the_issues_fabric():
    from bench.config import scaling_run

    args = scaling_run(512).args()
    for value in ("topology.file=leaf-spine", "topology.leaves=32", "topology.spines=4",
                  "topology.hosts_per_leaf=16", "topology.fabric_link_rate=40Gbps",
                  "background.load=0.2", "run.duration=0.06", "run.warmup=0.01",
                  "run.cooldown=0.01"):
        assert value in args, value


@pytest.mark.parametrize("value", ["20,32", "x", "", "32,48,100", "-32"])
def test_bad_scaling_hosts_is_one_line_naming_the_option(value):
    proc = subprocess.run([sys.executable, "-m", "bench", "--only", "scaling",
                           "--scaling-hosts", value], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    last = proc.stderr.splitlines()[-1]
    assert "--scaling-hosts" in last and "multiple of 16 and >= 32" in last, proc.stderr


def test_recipe_lists_the_plan_in_order():
    from harness.engine import recipe
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan

    p = plan(load_scenario("thesis", ["scale=10", "run.duration=0.05", "run.warmup=0.01",
                                      "run.cooldown=0.01"]))
    lines = recipe.text(p).splitlines()
    directives = [line.split()[0] for line in lines if not line.startswith("#")]
    assert lines[0] == recipe.FORMAT
    order = ["default", "seed", "run", "nodes", "link", "queue-disc", "assign", "host", "route",
             "utilization", "app-ports", "track", "job", "job-layers", "job-install",
             "flow-apps", "flow-host", "flow", "stop"]
    firsts = [directives.index(d) for d in order]
    assert firsts == sorted(firsts)
    assert directives.count("flow") == len(p.flows)
    assert directives.count("queue-disc") == 2 * len(p.topology.links)
    assert directives.count("default") == len(p.tcp_defaults)
    assert directives.count("job-install") == 1


def test_a_ps_job_with_two_shards_is_in_the_recipe_with_its_servers():
    from harness.engine import recipe
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan

    p = plan(load_scenario("ps-small", ["run.duration=0.05", "training.servers=2",
                                        "training.server_placement=colocated"]))
    lines = recipe.text(p).splitlines()
    assert "job ps ns3::PsJob" in lines
    install = next(line for line in lines if line.startswith("job-install "))
    workers, servers = install.split()[1:]
    assert [int(h) for h in workers.split(",")] == list(p.job.hosts)
    assert [int(h) for h in servers.split(",")] == list(p.job.server_hosts)
    assert [line.split()[1] for line in lines if line.startswith("job-scheduler")] == \
        ["push", "pull"]


@pytest.mark.slow
def test_native_main_builds_what_the_harness_builds_from_one_recipe(tmp_path):
    """The one build sequence: a parameter-server job with two shards, DRR
    queues, a link slowed mid-run and background flows, built by
    bench/native/main.cc from the recipe file and by the harness from the
    same text, agree event for event and table for table."""
    from bench import compare, native
    from harness.engine import recipe
    from harness.config.scenario import load_scenario
    from harness.engine.simulation import execute, write_run_dir
    from harness.engine.planning import plan

    p = plan(load_scenario("ps-small", [
        "run.duration=0.2", "run.warmup=0.02", "run.cooldown=0.02", "training.servers=2",
        "training.server_placement=colocated", 'network.qdisc="drr"',
        'network.link_changes=[{at=0.1, rate="500Mbps", hosts=[0]}]']))
    assert p.job.config.architecture == "ps" and p.network.qdisc == "drr"
    run_dir = write_run_dir(execute(p, quiet=True), tmp_path / "harness")
    tables = tmp_path / "native"
    tables.mkdir()
    proc = subprocess.run(native.command(native.build(), recipe.write(p, tmp_path / "r.recipe"),
                                         tables), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    agreement = compare.agreement(run_dir, native.parse_output(proc.stdout), tables)
    assert agreement["agree"], agreement
    assert agreement["iterations"]["native"] > 0
    assert agreement["flows"]["native_completed"] > 0


@pytest.mark.slow
def test_native_window_counts_the_events_between_its_ends_and_stops_there(tmp_path):
    """--window-from/--window-to: the events inside the window are counted
    and the run ends at the window's end (what --scaling-callgrind relies on)."""
    from bench import native
    from harness.config.scenario import load_scenario
    from harness.engine import recipe
    from harness.engine.planning import plan

    p = plan(load_scenario(None, ["run.duration=0.1", "run.warmup=0.01", "run.cooldown=0.01"]))
    path = recipe.write(p, tmp_path / "r.recipe")

    def run(*extra: str) -> dict:
        proc = subprocess.run([*native.command(native.build(), path), *extra],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return native.parse_output(proc.stdout)

    whole = run()
    first, second = run("--window-from=0.02", "--window-to=0.04"), \
        run("--window-from=0.04", "--window-to=0.06")
    assert first["simulated_ns"] == 40_000_000 and second["simulated_ns"] == 60_000_000
    assert 0 < first["window_events"] < first["events"] < whole["events"]
    # the two windows together are the events between 0.02 and 0.06 s
    both = run("--window-from=0.02", "--window-to=0.06")
    assert abs(both["window_events"] - first["window_events"] - second["window_events"]) <= 2
    proc = subprocess.run([*native.command(native.build(), path), "--window-from=0.05"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "--window-from and --window-to go together" in proc.stderr
