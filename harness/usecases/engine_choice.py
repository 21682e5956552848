"""The ns-3 engine as a use case: which one runs (`harness engine show`,
`harness --version`), choosing one (`harness engine use DIR|wheel`, kept in
the harness's own settings file) and building one from ns-3's source
(`harness engine build`). The finding and checking is harness.engine.engines'."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.config.errors import ConfigError, shown_path
from harness.engine import engines, ns3_build
from harness.io import outdir



def current() -> tuple[engines.Engine, str]:
    """The engine this process runs on, and what chose it."""
    choice = engines.chosen()
    return engines.find_engine(), (choice[0] if choice else "the default")


def use(directory: str) -> engines.Engine:
    """Keep `directory` (a checked build) or the wheel as the choice. The
    settings file is the harness's own; one it did not write is left alone."""
    path = engines.settings_file()
    if path.exists():
        try:
            json.loads(path.read_text())["build"]
        except (OSError, ValueError, KeyError, TypeError):
            raise ConfigError(str(path), "exists and is not the file `harness engine use` "
                              "writes: it is left alone; move it away first") from None
    if directory == engines.WHEEL:
        engine, build = engines.wheel(), None
    else:
        engine = engines.find_build(directory, where="DIR")
        build = str(engine.root)
    # where the choice is kept: a folder of that name that is a file, or a
    # read-only one, is one line naming it (the variable that places it)
    where = "XDG_CONFIG_HOME" if os.environ.get("XDG_CONFIG_HOME") else "~/.config"
    for parent in (path.parent, *path.parent.parents):
        if os.path.lexists(parent):
            if not parent.is_dir():
                raise ConfigError(where, f"{shown_path(parent)} is a file, not a folder: the "
                                  f"choice is kept in {shown_path(path)}; move the file away or "
                                  "set XDG_CONFIG_HOME to another folder")
            break
    try:
        outdir.check_writable(path.parent, where)
        outdir.check_space(path.parent, 4096, where, "the engine choice")
        path.parent.mkdir(parents=True, exist_ok=True)
        outdir.write_file(path, json.dumps({"build": build}, indent=1) + "\n")
    except OSError as e:
        raise ConfigError(where, f"cannot keep the choice in {shown_path(path)}: "
                          f"{e.strerror or e}") from None
    return engine


def build(src: str, output: str | None, profile: str, jobs: int | None,
          progress: bool) -> engines.Engine:
    """Build ns-3 from `src` into `output` (default: SRC/build-<profile>)."""
    source = ns3_build.check_source(Path(src))
    out = Path(output) if output else source / f"build-{profile}"
    return ns3_build.build(source, out, profile, jobs, progress)
