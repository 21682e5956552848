"""The harness's own JSON records (sweep.json, reference.json) read through
one reader (harness.analysis.tables.read_record / read_sweep_record): a
damaged one is one CorruptRecordError (a ConfigError) naming the file and
what is wrong, from the Python API too; and the API's arguments checked as
the CLI's options are (issue 48). The CLI's cases: tests/test_bad_inputs.py
(RECORD_CASES)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

import harness
from harness import cli
from harness.analysis import claims, tables
from harness.config.errors import ConfigError, CorruptRecordError
from harness.sweeps import alone, cell_cache

GRID = """name = "g"
scenario = "default"
[set]
"run.duration" = 0.25
[axes]
"background.load" = [0.05]
"""

DAMAGED = [b"{", b"", b"[]", b"null", b'{"grid": "g"}', b'{"grid": 3, "cells": []}',
           b'{"grid": "g", "cells": [[]]}', b'{"grid": "g", "cells": [{"id": "x"}]}',
           b'{"grid": "g", "cells": [], "arms": "same"}',
           b'{"grid": "g", "cells": [], "reference": 1}', b"\xff", b"[" * 50_000]


def _sweep(d, record: bytes):
    d.mkdir(parents=True, exist_ok=True)
    (d / "sweep.json").write_bytes(record)
    pd.DataFrame({"cell": ["a"], "arm": ["same"], "status": ["ok"]}).to_parquet(
        d / "summary.parquet")
    return d


@pytest.mark.parametrize("record", DAMAGED, ids=range(len(DAMAGED)))
def test_every_reader_of_a_damaged_sweep_record_names_it(tmp_path, record):
    d = _sweep(tmp_path / "s", record)
    for read in (tables.read_sweep_record, harness.load_sweep, claims.runs, claims.references,
                 lambda d: harness.load_sweeps([d])):
        with pytest.raises(CorruptRecordError) as err:
            read(d)
        assert isinstance(err.value, ConfigError)
        assert str(err.value).startswith(f"{d / 'sweep.json'}: ") and "\n" not in str(err.value)


def test_a_record_the_harness_wrote_reads_back(tmp_path):
    cells = [{"id": "c1", "arm": None, "point": {"seed": 1}},
             {"id": "c2", "arm": "low", "point": {}, "reference": "same", "added": True}]
    record = {"grid": "g", "grid_file": "g.toml", "axes": ["seed"], "arms": [],
              "reference": None, "cells": cells}
    d = _sweep(tmp_path / "s", json.dumps(record).encode())
    assert tables.read_sweep_record(d) == record


@pytest.mark.parametrize("index", [b"{", b"[]", b'{"grid": "g", "cells": {}}',
                                   b'{"grid": "g", "scale": 1, "cells": {"x": 1}}',
                                   b'{"grid": "g", "scale": true, "cells": {}}'])
def test_a_damaged_reference_index_is_named(tmp_path, index):
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / cell_cache.INDEX).write_bytes(index)
    with pytest.raises(CorruptRecordError, match=r"ref/reference\.json: "):
        cell_cache.read_index(tmp_path / "ref")


def test_reference_of_a_damaged_sweep_is_a_config_error(tmp_path):
    d = _sweep(tmp_path / "s", b"[1]")
    (d / "grid.toml").write_text(GRID)
    with pytest.raises(CorruptRecordError, match="holds a list"):
        cell_cache.export(d, tmp_path / "ref")
    # grid.toml and sweep.json that disagree: a ConfigError, not SweepError
    _sweep(d, json.dumps({"grid": "g", "cells": [{"id": "x", "arm": None,
                                                  "point": {}}]}).encode())
    with pytest.raises(ConfigError, match="^SWEEP: the grid changed"):
        cell_cache.export(d, tmp_path / "ref")
    assert not (tmp_path / "ref").exists()


@pytest.mark.parametrize("jobs", [-1, 0, 2.5, True, "2"])
def test_the_api_refuses_bad_jobs_before_any_directory(tmp_path, jobs):
    (tmp_path / "g.toml").write_text(GRID)
    with pytest.raises(ConfigError, match="^jobs: ") as err:
        harness.sweep(tmp_path / "g.toml", tmp_path / "out", jobs=jobs)
    assert ">= 1" in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.toml"]


def test_alone_o_replaces_its_own_table_and_no_other_file(tmp_path, monkeypatch):
    """The output policy of `harness alone -o` (the simulations themselves
    stand aside: what is checked here is which file may be written)."""
    table = pd.DataFrame([{"job": 0, "name": "a", "together_ms": 2.0, "alone_ms": 1.0,
                           "slowdown": 2.0}], columns=list(alone.COLUMNS))
    monkeypatch.setattr(alone, "slowdowns", lambda *a, **k: table)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for _ in range(2):   # the second time over its own earlier table
        result = runner.invoke(cli.main, ["alone", "two-jobs", "-o", "t.csv"])
        assert result.exit_code == 0, result.output
        assert alone.is_alone_table(tmp_path / "t.csv")
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "t.csv"), table)
    (tmp_path / "mine.csv").write_text("job,name\n0,a\n")
    result = runner.invoke(cli.main, ["alone", "two-jobs", "-o", "mine.csv"])
    assert result.exit_code == 2 and "not written by the harness" in result.stderr
    assert (tmp_path / "mine.csv").read_text() == "job,name\n0,a\n"


def test_a_finished_cell_with_a_damaged_record_is_set_aside_on_resume(tmp_path):
    """sweepdir._readable, which --resume asks of every finished cell: a
    damaged summary.json (say) is named, so the cell is moved to corrupt/
    and runs again, as a cut-short table is (tests/test_sweep_recovery.py)."""
    from types import SimpleNamespace

    from harness.sweeps import sweepdir

    cell = SimpleNamespace(id="c1")
    d = tmp_path / "cells" / "c1"
    d.mkdir(parents=True)
    for name in ("summary", "manifest", "config"):
        (d / f"{name}.json").write_text("{}")
    assert sweepdir._readable(tmp_path, cell) is None
    (d / "summary.json").write_text('{"fct": ')
    assert sweepdir._readable(tmp_path, cell) == "summary.json is not JSON (Expecting value " \
                                                 "at line 1, column 9)"
    with pytest.raises(CorruptRecordError, match="summary.json: is not JSON"):
        harness.load_run(d)
