"""The notebooks in examples/: each one executes without error (nbclient, in a
temporary working directory, so nothing lands in the repository), shows
tables and figures, and is committed without outputs; the quickstart's
results are read back from the folder it wrote."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))
TIMEOUT_S = 900     # per cell; the quickstart's sweep cell simulates for about a minute
EARLIER = "quickstart-output/001/mine.txt"   # an earlier result the quickstart must keep


def outputs(nb, kind: str) -> list:
    """Every output of nb's code cells that carries the MIME type `kind`."""
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if kind in o.get("data", {})]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """path -> (the executed notebook, its working directory), each notebook
    run once, on first use, with one sweep cell at a time and output in its
    default place under a fresh working directory that already holds an
    earlier quickstart folder."""
    done: dict[Path, tuple] = {}

    def run(path: Path):
        if path not in done:
            work = tmp_path_factory.mktemp(path.stem)
            (work / EARLIER).parent.mkdir(parents=True)
            (work / EARLIER).write_text("earlier results")
            nb = nbformat.read(path, as_version=4)
            client = nbclient.NotebookClient(nb, timeout=TIMEOUT_S, kernel_name="python3",
                                             resources={"metadata": {"path": str(work)}})
            with pytest.MonkeyPatch.context() as mp:   # the kernel inherits os.environ
                mp.setenv("QUICKSTART_JOBS", "1")
                mp.delenv("QUICKSTART_OUTPUT", raising=False)
                mp.setenv("MPLBACKEND", "Agg")
                start = time.monotonic()
                client.execute()   # CellExecutionError, with the cell's traceback, on an error
            print(f"{path.name}: {time.monotonic() - start:.0f} s")
            done[path] = nb, work
        return done[path]

    return run


def test_there_is_a_quickstart():
    assert EXAMPLES / "quickstart.ipynb" in NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{path.name} has no code cell"
    assert all(not c.outputs and c.execution_count is None for c in code), \
        f"{path.name} has outputs: clear them before committing"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_and_shows_tables_and_figures(path, executed):
    before = sorted(p.name for p in EXAMPLES.iterdir())
    nb, work = executed(path)
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
                if o.output_type == "error"]
    assert all(c.execution_count for c in nb.cells if c.cell_type == "code")
    tables = [o for o in outputs(nb, "text/html") if "<table" in o["data"]["text/html"]]
    assert len(tables) >= 2, "expected DataFrames shown as HTML tables"
    images = outputs(nb, "image/png")
    assert len(images) >= 2 and all(len(o["data"]["image/png"]) > 1000 for o in images)
    # it wrote under the working directory it was given, not into examples/
    assert sorted(p.name for p in EXAMPLES.iterdir()) == before
    assert (work / EARLIER).read_text() == "earlier results"


@pytest.mark.slow
def test_quickstart_wrote_a_run_and_a_paired_sweep_in_a_new_folder(executed):
    import harness

    nb, work = executed(EXAMPLES / "quickstart.ipynb")
    out = work / "quickstart-output"
    assert sorted(p.name for p in out.iterdir()) == ["001", "002"]
    assert sorted(p.name for p in (out / "001").iterdir()) == ["mine.txt"]
    here = out / "002"
    run = harness.load_run(here / "run")
    assert run.summary["training"]["iterations"] > 0 and run.summary["measured_flows"] > 0
    assert (run.iterations["measured"]).any()
    assert (here / "run" / "plots" / "fct-cdf.png").is_file()
    sweep = harness.load_sweep(here / "sweep")
    assert len(sweep.summary) == 4 and (sweep.summary["status"] == "ok").all()
    assert (sweep.summary["iterations"] > 0).all()
    shown = [c for c in nb.cells if c.cell_type == "code" and "deltas_mean" in c.source]
    assert shown and any("iteration_time" in o["data"]["text/html"]
                         for o in shown[0].outputs if "text/html" in o.get("data", {}))
    # the deltas the notebook shows: low against same, with an interval for
    # the iteration time at both points and for the FCT of all flows
    d = sweep.deltas_mean.set_index(["metric", "background.load"])
    assert set(d["arm"]) == {"low"}
    for metric in ("iteration_time", "fct_all_mean"):
        rows = d.loc[metric]
        assert len(rows) == 2
        assert rows[["change", "change_low", "change_high"]].notna().all().all()
        assert ((rows["change_low"] <= rows["change"])
                & (rows["change"] <= rows["change_high"])).all()
