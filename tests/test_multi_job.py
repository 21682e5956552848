"""Several training jobs per scenario ([[training]]): validation naming the
job's field, placement on a leaf-spine, per-job tables and summary, and
(real ns-3, 1 Gbit/s) jobs sharing a spine uplink slow each other down
while jobs under separate leaves do not."""

from __future__ import annotations

import pytest

from harness.sweeps import alone
from harness.config.scenario import ConfigError, load_scenario, read_scenario_dict, scenario_from_dict
from harness.engine.planning import plan

PACKED = ['training.0.placement="packed"', 'training.1.placement="packed"']


def raw_two_jobs(**job1) -> dict:
    data = read_scenario_dict("two-jobs")
    data["training"][1].update(job1)
    if "hosts" in job1 and job1.get("placement", "") is None:   # both jobs on given hosts
        data["training"][0] = {**data["training"][0], "hosts": [0, 4]}
        del data["training"][0]["placement"]
    return data


@pytest.mark.parametrize("job1, field, says", [
    ({"placement": None, "hosts": [4, 0]}, "training[1].hosts", "share hosts"),
    ({"port": 5000}, "training[1].port", "overlap training[0]"),
    ({"name": "a"}, "training[1].name", "training[0] too"),
    ({"ratio": 0}, "training[1].ratio", "> 0"),
    ({"placement": "diagonal"}, "training[1].placement", "packed, spread"),
    ({"workers": 8}, "training[1].workers", "free"),
    ({"start": 5.0}, "training[1].start", "inside the run"),
    ({"hosts": [2, 3]}, "training[1].placement", "either hosts or placement"),
    ({"slowdowns": [{"worker": 5, "start": 0.1, "end": 0.2, "factor": 2}]},
     "training[1].slowdowns[0].worker", "0-1"),
])
def test_errors_name_the_jobs_field(job1, field, says):
    data = raw_two_jobs(**job1)
    data["training"][1] = {k: v for k, v in data["training"][1].items() if v is not None}
    with pytest.raises(ConfigError) as err:
        plan(scenario_from_dict(data))
    assert err.value.field == field, str(err.value)
    assert says in str(err.value)


def test_one_table_and_a_list_of_one_plan_alike():
    one = plan(load_scenario("thesis-training-alone"))
    assert len(one.jobs) == 1 and one.job.index == 0 and "jobs" not in one.resolved()
    with pytest.raises(ConfigError, match="training.0: unknown key"):  # one table: no index
        load_scenario("thesis-training-alone", ["training.ratio=2", "training.0.ratio=2"])


def test_placement_packs_under_one_leaf_or_spreads_over_leaves_and_ports_are_assigned():
    spread = plan(load_scenario("two-jobs"))
    assert [j.hosts for j in spread.jobs] == [(0, 4), (1, 5)]
    assert [j.ports for j in spread.jobs] == [(5000, 5000), (5010, 5010)]
    packed = plan(load_scenario("two-jobs", PACKED + ["training.0.workers=3"]))
    assert [j.hosts for j in packed.jobs] == [(0, 1, 2), (4, 5)]  # b fits leaf 1 whole
    assert [j["name"] for j in packed.resolved()["jobs"]] == ["a", "b"]
    off = plan(load_scenario("two-jobs", ["training.0.enabled=false"]))
    assert [(j.index, j.hosts) for j in off.jobs] == [(1, (1, 5))]


@pytest.mark.slow
def test_jobs_sharing_a_spine_uplink_slow_each_other_down_separate_leaves_do_not(run_plan):
    runs = {}

    def summary(scenario):
        r = run_plan(plan(scenario))
        runs[scenario.digest()] = r
        return r.summary

    shared = alone.slowdowns("two-jobs", run=summary)
    assert list(shared["name"]) == ["a", "b"]
    assert (shared["slowdown"] > 1.3).all(), shared
    apart = alone.slowdowns("two-jobs", PACKED, run=summary)
    assert apart["slowdown"].tolist() == pytest.approx([1.0, 1.0], abs=0.01), apart
    # per-job tables: every table keyed by job, the summary per job
    together = runs[load_scenario("two-jobs").digest()]
    for table in (together.iterations, together.transfers, together.compute):
        assert set(table["job"]) == {0, 1}
    jobs = together.summary["jobs"]
    assert [j["name"] for j in jobs] == ["a", "b"] and all(j["iterations"] > 10 for j in jobs)
    assert jobs[1]["mean_iteration_s"] == pytest.approx(shared["together_ms"][1] / 1e3)


def test_a_later_start_delays_only_that_job(run_plan):
    r = run_plan(plan(load_scenario("two-jobs", PACKED + ["training.1.start=0.3"])))
    first = r.iterations.groupby("job")["start_ns"].min() / 1e9
    assert first[0] < 0.01 and first[1] == pytest.approx(0.3, abs=0.01)


def test_job_phases_merge_each_jobs_transfers_and_measure_the_overlap():
    import pandas as pd

    from harness.outputs.plots.run_figures import job_phases, overlap_share

    t = pd.DataFrame({"job": [0, 0, 0, 1, 1], "start_ns": [0, 5e6, 20e6, 8e6, 30e6],
                      "end_ns": [10e6, 12e6, 25e6, 15e6, -1]})
    phases = job_phases(t)
    assert phases.values.tolist() == [[0, 0, 12], [0, 20, 25], [1, 8, 15], [1, 30, 30]]
    # busy 0-15 and 20-25 (20 ms), both 8-12 (4 ms)
    assert overlap_share(phases, (0, 40)) == pytest.approx(0.2)
    assert overlap_share(phases[phases["job"] == 0], (0, 40)) == 0


def test_a_two_job_run_plots_its_phases_and_sweeps_get_columns_per_job(run_plan, tmp_path):
    from harness.analysis import metrics
    from harness.outputs.plots.run_figures import plot_run
    from harness.engine.simulation import write_run_dir

    r = run_plan(plan(load_scenario("two-jobs", ["run.duration=0.4", "run.warmup=0.1"])))
    out = write_run_dir(r, tmp_path / "run")
    written = {p.name for p in plot_run(out, formats=("png",))}
    assert {"job-phases.png", "training-timeline.png"} <= written
    row = metrics.flat_summary(r.summary)
    assert row["job_b_mean_iteration_s"] == r.summary["jobs"][1]["mean_iteration_s"]


def test_alone_command_refuses_an_existing_output_before_running(tmp_path):
    """`harness alone -o FILE` never overwrites a user's file, and says so
    before any simulation starts (exit 2, the field named)."""
    from click.testing import CliRunner

    from harness import cli

    mine = tmp_path / "notes.csv"
    mine.write_text("mine\n")
    result = CliRunner().invoke(cli.main, ["alone", "two-jobs", "-o", str(mine)],
                                prog_name="harness")
    assert result.exit_code == 2
    assert "-o:" in result.output and "exists" in result.output
    assert mine.read_text() == "mine\n"
