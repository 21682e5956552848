"""The wheel ships everything the package reads at run time.

The data folders stay at the top of the repository and pyproject.toml maps
each of their folders into the wheel by name; a folder added later and not
listed there would be missing from every install but an editable one.
(.ci/wheel-smoke installs the wheel and runs it from outside the checkout.)
"""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from harness.config import paths

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not (REPO / ".git").exists(), reason="needs the git checkout")

SHIPPED = {"ns3-modules": "harness/ns3_modules", "topologies": "harness/topologies",
           "workloads": "harness/workloads", "harness/outputs/templates": "harness/outputs/templates",
           "harness/config/schema": "harness/config/schema"}


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> set[str]:
    # built from a clean copy of the tracked files: a checkout's leftover
    # build/ or *.egg-info would hand setuptools files that pyproject.toml
    # does not list, and hide exactly what this test is for
    source = tmp_path_factory.mktemp("source")
    for name in _tracked("."):
        if not name.startswith(("tests/", "bench/")):  # docs/: shipped (harness docs)
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q",
                    "-w", str(out)], check=True, capture_output=True)
    (wheel,) = out.glob("ddnn_harness-*.whl")
    return set(zipfile.ZipFile(wheel).namelist())


def _tracked(folder: str) -> list[str]:
    return subprocess.run(["git", "ls-files", folder], cwd=REPO, capture_output=True,
                          text=True, check=True).stdout.split()


@pytest.mark.parametrize("folder", sorted(SHIPPED))
def test_every_data_file_is_in_the_wheel(folder, wheel_names):
    tracked = [p for p in _tracked(folder) if not p.endswith(".py")]
    assert tracked, f"nothing tracked under {folder}"
    missing = [p for p in tracked
               if SHIPPED[folder] + p[len(folder):] not in wheel_names]
    assert not missing, f"not in the wheel (list their folders in pyproject.toml): {missing}"


def test_every_python_module_is_in_the_wheel(wheel_names):
    modules = [p for p in _tracked("harness") if p.endswith(".py")]
    missing = [m for m in modules if m not in wheel_names]
    assert not missing, f"not in the wheel (add the package to pyproject.toml): {missing}"


def test_a_checkout_reads_its_own_data_folders():
    # in a checkout (this test's case) the package holds no copies of the data
    assert paths.MODULES_DIR == REPO / "ns3-modules"
    assert paths.WORKLOADS_DIR == REPO / "workloads"
    assert paths.TOPOLOGIES_DIR == REPO / "topologies"
