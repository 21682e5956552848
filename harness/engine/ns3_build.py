"""`harness engine build SRC`: configure and build a checked-out ns-3.44
source with exactly the modules the harness loads, in the optimized (or
release) profile, into a folder of the harness's own making; the result is
an engine (harness.engine.engines.find_build). Nothing is downloaded: ns-3
builds these modules from its source alone."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from harness.config.errors import ConfigError, Ns3LoadError, shown_path
from harness.engine import engines
from harness.engine.pch_key import NS3_LIBRARIES, NS3_MODULES
from harness.io import outdir

#: Written first into an output folder this command makes: the sign that a
#: later build may go on in it (any other non-empty folder is refused).
MARKER = ".ddnn-harness-ns3-build"
PROFILE_FLAGS = {  # as ns-3's own `ns3 configure --build-profile=...` sets them
    "optimized": ("-DCMAKE_BUILD_TYPE=release", "-DNS3_NATIVE_OPTIMIZATIONS=ON"),
    "release": ("-DCMAKE_BUILD_TYPE=release", "-DNS3_NATIVE_OPTIMIZATIONS=OFF"),
}
COMMON_FLAGS = (
    "-DNS3_ASSERT=OFF", "-DNS3_LOG=OFF", "-DNS3_WARNINGS_AS_ERRORS=OFF",
    "-DNS3_EXAMPLES=OFF", "-DNS3_TESTS=OFF", "-DNS3_PYTHON_BINDINGS=OFF",
    # ns-3 brings in the modules these depend on (stats, bridge) itself
    f"-DNS3_ENABLED_MODULES={';'.join(NS3_MODULES)}",
)
_STEP = re.compile(rb"^\[(\d+)/(\d+)\]")


def check_source(src: Path) -> Path:
    """`src` is a checked-out ns-3.44 source tree (its VERSION file says so)."""
    version_file = Path(src) / "VERSION"
    if not (Path(src) / "CMakeLists.txt").is_file() or not version_file.is_file():
        raise ConfigError("SRC", f"{shown_path(src)} is not an ns-3 source tree (no "
                          f"CMakeLists.txt and VERSION); give a checkout of ns-{engines.VERSION}")
    version = version_file.read_text(errors="replace").strip()
    if version != engines.VERSION:
        raise ConfigError("SRC", f"{shown_path(src)} is ns-{version[:20]}; the harness needs "
                          f"ns-{engines.VERSION} (git checkout ns-{engines.VERSION})")
    return Path(src).resolve()


#: what a build folder takes while it builds, roughly: the libraries (48 MB
#: measured) and cmake's objects beside them
BUILD_BYTES = 1_000_000_000


def check_output(out: Path) -> Path:
    """`out` is new, empty, or a folder this command made before (its
    marker), and it can be written with room for a build (outdir's checks: a
    dangling link, a read-only or full file system refused before cmake
    starts); its resolved path returned."""
    out = outdir.resolve(out, "--output")
    outdir.check_names(out / "cmake-cache", "--output", temporary=False)
    if out.exists() and not out.is_dir():
        raise ConfigError("--output", f"{shown_path(out)} is a file; give a new folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise ConfigError("--output", f"{shown_path(out)} is not empty and was not made by "
                          "`harness engine build`: nothing in it is touched; give a new or "
                          "empty folder")
    outdir.check_writable(out if out.is_dir() else out.parent, "--output")
    outdir.check_space(out, BUILD_BYTES, "--output", "an ns-3 build")
    return out


def _program(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise ConfigError(name, f"{name} not found on PATH: ns-3 builds with cmake and ninja; "
                          "install them")
    return found


def configure_command(src: Path, out: Path, profile: str) -> list[str]:
    return [_program("cmake"), "-S", str(src), "-B", str(out / "cmake-cache"), "-G", "Ninja",
            *PROFILE_FLAGS[profile], *COMMON_FLAGS, f"-DNS3_OUTPUT_DIRECTORY={out}"]


def build(src: Path, out: Path, profile: str = "optimized", jobs: int | None = None,
          progress: bool = True) -> engines.Engine:
    """Configure and build; return the engine it made. The log is out/build.log."""
    if profile not in PROFILE_FLAGS:
        raise ConfigError("--profile", f"expected one of {', '.join(PROFILE_FLAGS)}; got "
                          f"{profile!r}")
    src = check_source(src)
    out = check_output(Path(os.path.abspath(out)))
    ninja = _program("ninja")
    configure = configure_command(src, out, profile)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text(json.dumps({"source": str(src), "profile": profile}) + "\n")
    log_path = out / "build.log"
    with open(log_path, "wb") as log:
        if subprocess.run(configure, stdout=log, stderr=subprocess.STDOUT).returncode != 0:
            raise Ns3LoadError(f"configuring ns-3 failed (cmake): see {log_path}")
        jobs = jobs or os.cpu_count() or 1
        # the libraries only: not ns-3's scratch and utils programs
        suffix = {v: k for k, v in engines.PROFILES.items()}[profile]
        targets = [f"libns{engines.VERSION}-{m}{suffix}.so" for m in NS3_LIBRARIES]
        _run_ninja([ninja, "-C", str(out / "cmake-cache"), f"-j{jobs}", *targets], log, progress)
    return engines.find_build(out, where="--output")


def _run_ninja(command: list[str], log, progress: bool) -> None:
    """ninja, its `[done/total]` lines turned into a progress bar."""
    from tqdm import tqdm

    bar = tqdm(total=None, unit="step", desc="building ns-3", disable=not progress)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        for line in proc.stdout:
            log.write(line)
            step = _STEP.match(line)
            if step:
                bar.total = int(step.group(2))
                bar.update(int(step.group(1)) - bar.n)
        code = proc.wait()
    finally:
        bar.close()
        if proc.poll() is None:   # interrupted: stop ninja (and its compilers)
            proc.terminate()
            proc.wait()
    if code != 0:
        raise Ns3LoadError(f"building ns-3 failed (ninja, exit code {code}): see {log.name}")
