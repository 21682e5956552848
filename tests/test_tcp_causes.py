"""What delayed each background flow besides queueing, counted in ns-3 by
its sender's socket (TcpSocketDdnn's LossEvents, the flows table's
timeouts, spurious_timeouts, timeout_wait_s, fast_retransmits; issue 62,
deliverable 1 in part): none on an idle network, and on a congested one
counts that obey TCP's own arithmetic."""

from __future__ import annotations

import pandas as pd
import pytest

import harness

CAUSES = ["timeouts", "spurious_timeouts", "timeout_wait_s", "fast_retransmits"]


def _run(tmp_path_factory, name: str, overrides: dict):
    return harness.run(None, {"run.duration": 1.0, "run.warmup": 0.1, "run.cooldown": 0.3,
                              **overrides}, out=tmp_path_factory.mktemp(name) / "r")


@pytest.fixture(scope="module")
def congested(tmp_path_factory):
    """60 % web-search load into 20-packet bands: timeouts and recoveries."""
    return _run(tmp_path_factory, "congested", {"background.load": 0.6,
                                                "network.band_limit_packets": 20})


def test_an_idle_network_delays_no_flow(tmp_path_factory):
    r = _run(tmp_path_factory, "idle", {"background.load": 0.01})
    flows = r.flows[r.flows["measured"]]
    assert len(flows) and flows["completed"].all()
    assert (flows[CAUSES] == 0).all().all()


def test_congestion_s_timeouts_obey_tcp_s_arithmetic(congested):
    flows = congested.flows[congested.flows["measured"]]
    assert flows["timeouts"].sum() > 20 and flows["fast_retransmits"].sum() > 20
    assert (flows["spurious_timeouts"] <= flows["timeouts"]).all()
    # a timeout is waited for (from the last progress, after which the
    # timer ran out), and a flow waits no longer than it took
    timed_out = flows[flows["timeouts"] > 0]
    assert (timed_out["timeout_wait_s"] > 0).all()
    done = flows[flows["completed"]]
    assert (done["timeout_wait_s"] <= done["fct_s"]).all()
    # a flow with no timeout waited for none
    assert (flows.loc[flows["timeouts"] == 0, "timeout_wait_s"] == 0).all()
    # most waits are the timer's full length at least: the minimum RTO (the
    # timer restarts at progress, except in recovery after a partial ACK)
    attributes = congested.config["tcp_attributes"]
    floor = pd.Timedelta(attributes["ns3::TcpSocketBase::MinRto"]).total_seconds()
    per_timeout = timed_out["timeout_wait_s"] / timed_out["timeouts"]
    assert (per_timeout >= floor).mean() > 0.5


def test_the_causes_are_in_the_export_s_data_dictionary(congested, tmp_path):
    out = harness.export(congested.dir, tmp_path / "x")
    dictionary = pd.read_csv(out / "data-dictionary.csv")
    flows = dictionary[dictionary["table"] == "flows"]
    assert set(CAUSES) <= set(flows["column"])


def test_explain_says_per_size_class_what_the_flows_waited_for(congested):
    """`harness explain RUN`: a line per size class with measured flows, its
    numbers the flows table's own sums."""
    from click.testing import CliRunner

    from harness import cli
    from harness.analysis import causes

    r = CliRunner().invoke(cli.main, ["explain", str(congested.dir)])
    assert r.exit_code == 0, r.output
    table = causes.flow_delays(congested.flows).set_index("size_class")
    measured = congested.flows[congested.flows["measured"]]
    assert table.loc["all", "timeouts"] == measured["timeouts"].sum()
    assert table.loc["all", "flows"] == len(measured)
    done = measured[measured["completed"]]
    assert table.loc["all", "wait_share"] == pytest.approx(
        done["timeout_wait_s"].sum() / done["fct_s"].sum())
    lines = [line for line in r.stdout.strip().splitlines() if " flows (" in line]
    classes = [c for c in ("small", "medium", "large") if table.loc[c, "flows"]]
    assert [line.split(" flows")[0] for line in lines] == [*classes, "all"]
    # then each starved band's line, from the queues table's starved_s
    starved = congested.queues.groupby("band")["starved_s"].sum()
    bands = [line for line in r.stdout.splitlines() if line.startswith("band ")
             and " starved " in line]
    assert [int(line.split()[1]) for line in bands] == [b for b, s in starved.items() if s > 0]
    # and each place and band that dropped, from the queues table's drops
    lost = [line for line in r.stdout.splitlines() if " lost " in line]
    drops = congested.queues[congested.queues["dropped_packets"] > 0]
    assert len(lost) == len(drops.groupby(["place", "band"]))
    assert sum(int(line.split(" lost ")[1].split()[0].replace(",", "")) for line in lost) \
        == drops["dropped_packets"].sum() > 0
    all_line = lines[-1]
    assert f"{int(table.loc['all', 'timeouts']):,} timeouts" in all_line
    assert f"{100 * table.loc['all', 'wait_share']:.1f} % of their completion time" in all_line


def test_explain_refuses_what_it_cannot_read(tmp_path):
    from click.testing import CliRunner

    from harness import cli

    (tmp_path / "s").mkdir()
    for name in ("sweep.json", "summary.parquet"):
        (tmp_path / "s" / name).write_text("{}")
    from pathlib import Path

    old = next((Path(__file__).parent / "data" / "reference-sample" / "cells").iterdir())
    for argv, says in ((["explain", str(tmp_path / "nowhere")], "not a directory"),
                       (["explain", str(tmp_path / "s")], "has no causes.parquet"),
                       (["explain", str(old)], "run before they were counted")):
        r = CliRunner().invoke(cli.main, argv)
        assert r.exit_code == 2 and ("RUN" in r.stderr or "SWEEP" in r.stderr) \
            and says in r.stderr, r.output


def test_a_sweep_s_summary_row_carries_the_run_s_tcp_delays(congested):
    from harness.analysis.metrics import flat_summary

    row = flat_summary(congested.summary)
    delays = congested.summary["tcp_delays"]
    assert row["tcp_timeouts"] == delays["timeouts"] > 0
    assert row["tcp_timeout_wait_s"] == delays["timeout_wait_s"]
    assert row["tcp_flows_with_timeouts"] == delays["flows_with_timeouts"]
    measured = congested.flows[congested.flows["measured"]]
    assert delays["spurious_timeouts"] == measured["spurious_timeouts"].sum()
    assert delays["fast_retransmits"] == measured["fast_retransmits"].sum()


@pytest.mark.slow
def test_a_request_s_client_timeouts_are_its_own(tmp_path_factory):
    """Each request of a query or RPC service carries its client
    connection's timeouts while it waited, the time without progress before
    them at most its own latency; explain gives each service a line."""
    from click.testing import CliRunner

    from harness import cli

    r = harness.run("services", {"run.duration": 0.6, "background.load": 0.7,
                                 "network.band_limit_packets": 20},
                    out=tmp_path_factory.mktemp("svc") / "r", allow_short=True)
    requests = r.services[r.services["measured"]]
    assert requests["client_timeouts"].sum() > 0
    answered = requests[requests["answered"]]
    assert (answered["client_timeout_wait_ns"] / 1e9 <= answered["latency_s"] + 1e-9).all()
    assert (requests.loc[requests["client_timeouts"] == 0, "client_timeout_wait_ns"] == 0).all()
    out = CliRunner().invoke(cli.main, ["explain", str(r.dir)])
    assert out.exit_code == 0, out.output
    for name in requests["service_name"].unique():
        assert any(line.startswith(f"{name} (") for line in out.stdout.splitlines())
