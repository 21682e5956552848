"""The TCP fast path (ns3-modules/tcp-fastpath): in force when the harness
loads ns-3, refused when it cannot be, and the same simulation as the wheel's
own TcpTxBuffer/TcpRxBuffer: whole runs compared table by table, and the
debug build compared call by call."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from conftest import REPO, assert_same_tables, lossy_run
from harness.engine import ns3


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fast") / "run"
    lossy_run(out)
    return out


def test_lossy_scenario_loses_packets(fast_run):
    queues = pd.read_parquet(fast_run / "queues.parquet")
    assert queues["dropped_packets"].sum() > 100   # so TCP recovers: the replaced paths run


def test_fast_path_is_in_force_and_recorded(fast_run):
    tcp = json.loads((fast_run / "manifest.json").read_text())["tcp_fastpath"]
    assert tcp["mode"] == "fast" and tcp["members"] == 11 and tcp["in_force"] == 11


def test_same_tables_as_the_wheels_tcp(fast_run, tmp_path):
    stock = tmp_path / "stock"
    proc = lossy_run(stock, **{ns3.STOCK_TCP_ENV: "1"})
    assert "wheel's own TcpTxBuffer" in proc.stderr   # said loudly
    assert json.loads((stock / "manifest.json").read_text())["tcp_fastpath"]["mode"] == "stock"
    assert_same_tables(fast_run, stock)


def test_crosscheck_build_compares_every_call(fast_run, tmp_path):
    checked = tmp_path / "checked"
    lossy_run(checked, **{ns3.CROSSCHECK_TCP_ENV: "1"})
    tcp = json.loads((checked / "manifest.json").read_text())["tcp_fastpath"]
    assert tcp["crosscheck"] and tcp["in_force"] == tcp["members"]
    assert tcp["checked_calls"] > 10_000      # every call, none differing (else it aborts)
    # the buffers' hints were checked at each use, and each kind was used
    assert all(n > 0 for n in tcp["hint_uses"].values()), tcp["hint_uses"]
    assert_same_tables(fast_run, checked)


def test_refused_when_ns3_was_loaded_first(tmp_path):
    script = textwrap.dedent("""
        import ctypes
        from harness.engine import engines, ns3
        ctypes.CDLL(str(engines.wheel().library("internet")), mode=ctypes.RTLD_GLOBAL)
        try:
            ns3.load(quiet=True)
        except ns3.Ns3LoadError as e:
            print("REFUSED", e)
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert "REFUSED" in proc.stdout and ns3.STOCK_TCP_ENV in proc.stdout, proc.stderr


def test_not_in_force_when_loaded_after_the_wheel(tmp_path):
    # What the start-up check guards against: loaded after the wheel's
    # libraries, the replacement is silently ignored by the dynamic linker.
    library = ns3.build_tcp_fastpath(crosscheck=False, quiet=True)
    script = textwrap.dedent(f"""
        import ctypes
        from harness.engine import engines, ns3
        ctypes.CDLL(str(engines.wheel().library("internet")), mode=ctypes.RTLD_GLOBAL)
        lib = ctypes.CDLL({str(library)!r}, mode=ctypes.RTLD_GLOBAL)
        total = ctypes.c_int(0)
        print("IN_FORCE", lib.ddnn_tcp_fastpath_in_force(ctypes.byref(total)), total.value)
        try:
            ns3._check_tcp_fastpath(ns3.Path({str(library)!r}))
        except ns3.Ns3LoadError as e:
            print("REFUSED", e)
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert "IN_FORCE 0 11" in proc.stdout, proc.stdout + proc.stderr
    assert "REFUSED the TCP fast path is not in force" in proc.stdout
