"""Bad input is refused before ns-3 starts, with the field named."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.config.scenario import ConfigError, load_scenario
from harness.engine.planning import plan


def plan_with(*overrides):
    return plan(load_scenario(None, list(overrides)))


@pytest.mark.parametrize("override, field, says", [
    ("background.rat=3", "background.rat", "allowed"),
    ("bogus=1", "bogus", "allowed"),
    ("run.duration=-1", "run.duration", "> 0"),
    ('run.duration="soon"', "run.duration", "duration"),
    ("run.warmup=2.5", "run.duration", "warmup"),
    ("background.rate=-5", "background.rate", "> 0"),
    ("background.load=0", "background.load", "> 0"),
    ("background.load=1.5", "background.load", "< 1"),
    ("background.enabled=1", "background.enabled", "true or false"),
    ("background.hosts=[0, 9]", "background.hosts[1]", "0..3"),
    ("background.hosts=[2]", "background.hosts", "at least 2"),
    ('background.class="urgent"', "background.class", "high"),
    ('background.workload="nosuchcdf"', "background.workload", "websearch"),
    ('network.qdisc="red"', "network.qdisc", "pfifo_fast"),
    ('network.ack_class="nope"', "network.ack_class", "allowed"),
    ("network.classes={high=0, low=5}", "network.classes.low", "bands 0..2"),
    ('network.qdisc="prio"', None, None),  # valid: prio with default bands
    ("network.bands=9", "network.bands", "<= 4"),
    ('tcp.congestion_control="bbr"', "tcp.congestion_control", "newreno"),
    ("tcp.segment_size=1480", "tcp.segment_size", "mtu"),
    ('topology.file="nosuchtopo"', "topology.file", "single-tor"),
    ("topology.hosts=1", "topology.hosts", ">= 2"),
    ("topology.spines=2", "topology.spines", "allowed"),
    ('topology.link_rate="fast"', "topology.link_rate", "Gbps"),
    ('topology.link_rate="-1Gbps"', "topology.link_rate", "> 0"),
    ("seed=-1", "seed", ">= 0"),
])
def test_bad_field_is_named(override, field, says):
    if field is None:
        plan_with(override)
        return
    with pytest.raises(ConfigError) as err:
        plan_with(override)
    assert err.value.field == field
    assert says in str(err.value)


def test_missing_scenario_file(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_scenario(tmp_path / "nope.toml")


def test_invalid_toml(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_scenario(bad)


@pytest.mark.parametrize("content, says", [
    ("bytes,cdf\n0,0\n100,0.5\n", "end at 1"),
    ("size,p\n0,0\n100,1\n", "columns"),
    ("bytes,cdf\n0,0\n100,0.7\n50,1\n", "increasing"),
    ("bytes,cdf\n0,0\n", "two points"),
    ("bytes,cdf\n0,0\nabc,1\n", "non-numeric"),
])
def test_bad_cdf_file(tmp_path, content, says):
    path = tmp_path / "cdf.csv"
    path.write_text(content)
    with pytest.raises(ConfigError, match=says) as err:
        plan_with(f'background.workload="{path}"')
    assert err.value.field == "background.workload"


def test_unreachable_host_in_custom_topology(tmp_path):
    topo = tmp_path / "islands.toml"
    topo.write_text('kind = "custom"\nhosts = 4\nswitches = 2\nlink_rate = "1Gbps"\n'
                    'link_delay = "10us"\nlinks = [["h0","s0"],["h1","s0"],["h2","s1"],["h3","s1"]]\n')
    with pytest.raises(ConfigError, match="cannot be reached") as err:
        plan_with(f'topology.file="{topo}"')
    assert err.value.field == "topology.links"


def test_cli_reports_bad_input_and_exits_nonzero():
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--set",
                           "background.rate=-3"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "background.rate" in proc.stderr and "> 0" in proc.stderr
    assert "Traceback" not in proc.stderr
