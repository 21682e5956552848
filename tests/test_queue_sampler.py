"""The queue sampler (ns3-modules/trackers/queue-sampler, run.queue_samples)
on the real simulator: a run that asks for it gets a queue_samples table,
one row per sample and band of the egresses it names, every `interval` from
`start` to `stop`, never above the band's largest backlog (the queue
tracker's); a run that does not ask has no sampler and no table."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from harness.config.scenario import apply_values, read_scenario_dict, scenario_from_dict
from harness.engine import planning, recipe, simulation
from harness.usecases.references import REFERENCES_DIR

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("cppyy") is None or importlib.util.find_spec("ns3") is None,
    reason="needs the ns3 wheel and cppyy",
)


def _plan(**values):
    data = read_scenario_dict(REFERENCES_DIR / "dctcp.toml")   # 2 DCTCP flows into host 2
    data = apply_values(data, [(["run", "duration"], 0.03), (["run", "warmup"], 0.01),
                               *((k.split("."), v) for k, v in values.items())])
    return planning.plan(scenario_from_dict(data))


def test_a_run_that_asks_gets_its_samples_and_one_that_does_not_none(tmp_path):
    p = _plan(**{"run.queue_samples": {"interval": "100us", "hosts": [2], "direction": "both",
                                       "start": 0.01, "stop": 0.02}})
    assert [line for line in recipe.text(p).splitlines() if "queue" in line][-3:] == [
        "queue-sampler 100000 10000000 20000000",
        "sample-queue 2 0 2 3 -", "sample-queue 2 1 3 2 -"]
    run = simulation.execute(p, quiet=True)
    s = run.queue_samples
    assert list(s.columns) == ["link", "from_node", "to_node", "band", "time_s",
                               "backlog_packets", "backlog_bytes", "traffic_class"]
    # both egresses of host 2's link, every band, 101 samples each: 10..20 ms
    assert set(zip(s["from_node"], s["to_node"])) == {(2, 3), (3, 2)}
    per_band = s.groupby(["from_node", "band"])["time_s"]
    assert (per_band.count() == 101).all() and per_band.ngroups == 6
    times = s[(s["from_node"] == 3) & (s["band"] == 0)]["time_s"].to_numpy()
    assert times[0] == pytest.approx(0.01) and times[-1] == pytest.approx(0.02)
    assert np.diff(times) == pytest.approx(np.full(100, 1e-4))
    # the bottleneck's band is busy; no sample above the largest backlog the tracker saw
    port = s[(s["from_node"] == 3) & (s["band"] == 0)]
    assert port["backlog_packets"].max() > 0
    assert (port["backlog_bytes"] >= port["backlog_packets"] * 1000).all()
    q = run.queues
    top = q[(q["from_node"] == 3) & (q["to_node"] == 2) & (q["band"] == 0)]
    assert port["backlog_packets"].max() <= int(top["max_backlog_packets"].iloc[0])
    # written with the run, and exported with every column described
    from harness.outputs import export

    run.save(tmp_path / "run")
    assert (tmp_path / "run" / "queue_samples.parquet").is_file()
    dictionary = export.dictionary(export.tables_of(tmp_path / "run", "run")[0])
    described = dictionary[dictionary["table"] == "queue_samples"]
    assert list(described["column"]) == list(s.columns)
    assert (described["meaning"] != "(not described)").all()

    data = read_scenario_dict(REFERENCES_DIR / "dctcp.toml")
    del data["run"]["queue_samples"]
    data["run"]["duration"], data["run"]["warmup"] = 0.005, 0.001
    p = planning.plan(scenario_from_dict(data))
    assert "queue-sampler" not in recipe.text(p) and p.queue_samples == ()
    assert simulation.execute(p, quiet=True).queue_samples is None


def test_switch_egresses_are_sampled_by_name_or_as_the_fabric(tmp_path):
    """run.queue_samples.egresses: a switch's egress towards another switch,
    named [from, to], or every one ("fabric"), both ways; a pair that names
    no link is refused naming the entry."""
    from harness.config.errors import ConfigError
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan

    base = ['topology.file="leaf-spine"', "background.enabled=false", "run.duration=0.2"]

    def sampled(q):
        p = plan(load_scenario(None, base + [f"run.queue_samples={q}"]))
        return [(a, b) for _, _, a, b, _ in p.queue_samples]

    # leaf-spine: hosts 0-7, leaves s0, s1 (nodes 8, 9), spines s2, s3 (10, 11)
    assert sampled('{interval="1ms", egresses=[["s0", "s2"]]}') == [(8, 10)]
    # host 1's link as before (leaf s0 towards it), then spine s2 towards leaf s0
    assert sampled('{interval="1ms", egresses=[["s2", "s0"]], hosts=[1]}') == [(8, 1), (10, 8)]
    assert sorted(sampled('{interval="1ms", egresses="fabric"}')) == [
        (8, 10), (8, 11), (9, 10), (9, 11), (10, 8), (10, 9), (11, 8), (11, 9)]
    with pytest.raises(ConfigError, match=r"egresses\[0\]: no link joins s0 and s1"):
        sampled('{interval="1ms", egresses=[["s0", "s1"]]}')
    with pytest.raises(ConfigError, match=r"egresses\[0\]: no node 's9'"):
        sampled('{interval="1ms", egresses=[["s0", "s9"]]}')


def test_a_fabric_egress_is_sampled_in_ns3(tmp_path):
    """The samples of a switch-to-switch egress come back from ns-3: a host
    behind one switch sending to a host behind the other fills it."""
    from harness.config.scenario import load_scenario
    from harness.engine.planning import plan
    from harness.engine.simulation import execute

    topo = tmp_path / "two.toml"
    topo.write_text('kind = "custom"\nhosts = 2\nswitches = 2\nlink_rate = "1Gbps"\n'
                    'link_delay = "10us"\nlinks = [["h0", "s0"], ["h1", "s1"], '
                    '["s0", "s1", "100Mbps", "10us"]]\n')
    run = execute(plan(load_scenario(None, [
        f'topology.file="{topo}"', "background.enabled=false", "run.duration=0.05",
        "run.warmup=0", "run.cooldown=0",
        'service=[{kind="bulk", sources=[0], destination=1}]',
        'run.queue_samples={interval="1ms", egresses=[["s0", "s1"]]}'])),
        progress=False, quiet=True)
    q = run.queue_samples
    assert set(zip(q["from_node"], q["to_node"])) == {(2, 3)}
    assert q["backlog_packets"].max() > 10   # the 100 Mbit/s link between the switches queues


def test_egresses_left_out_keep_a_sampled_scenario_s_digest():
    """run.queue_samples.egresses is newer than the digests: left out, it is
    not hashed (a kept result sampling its hosts' queues stays current),
    given, it is."""
    from harness.config.scenario import load_scenario

    plain = load_scenario(None, ['run.queue_samples={interval="1ms"}']).digest_data()
    fabric = load_scenario(None, ['run.queue_samples={interval="1ms", egresses="fabric"}'])
    assert "egresses" not in plain["run"]["queue_samples"]
    assert fabric.digest_data()["run"]["queue_samples"]["egresses"] == "fabric"
