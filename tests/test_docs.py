"""The documentation: every scenario key is described where it is declared
(harness/config/schema/, rendered by harness.config.keys into the key reference), the
grid keys and the README's test command are where the docs and CI expect
them, and the mkdocs site builds with --strict (skipped without mkdocs)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.config import keys
from harness.config.schema.grid import GridFile
from harness.traffic import schedulers

ROOT = Path(__file__).resolve().parent.parent


def test_every_section_key_has_a_description():
    """Each field of each model of the schema (harness.config.schema, and every
    architecture's settings) declares its description."""
    missing = [f"{model.__name__}.{name}" for model in keys.models()
               for name, info in model.model_fields.items() if not info.description]
    assert not missing, f"scenario keys without Field(description=...): {missing}"


def test_the_reference_lists_every_key_with_a_description():
    """Top level, sections and their sub-tables: every key in the generated
    reference, each with a description."""
    sections = keys.sections()
    undocumented = [f"{s.name}.{k.key}".lstrip(".") for s in sections for k in s.keys if not k.doc]
    assert undocumented == []
    listed = {(s.name.rstrip("[]"), k.key) for s in sections for k in s.keys}
    for section, models in keys._SECTIONS.items():
        for model in models:
            for name, info in model.model_fields.items():
                key = info.alias or name
                assert (section.rstrip("[]"), key) in listed, f"{section}.{key} is not listed"
    for key in ("name", "seed", "scale", "base"):
        assert ("", key) in listed


def test_the_reference_renders():
    text = keys.markdown()
    for heading in ("## `[run]`", "## `[network]`", "## `[training]`", "### Topology files",
                    "### `[training.scheduler]`"):
        assert heading in text
    assert "| `ecn_threshold` |" in text and "| `class` |" in text  # TOML keys, not fields


def test_every_policy_parameter_has_a_description():
    for policy in schedulers.POLICIES.values():
        for name, param in policy.params.items():
            assert param.doc, f"{policy.name}.{name}"


def test_the_sweeps_page_lists_every_grid_key():
    """The grid keys are documented by hand (docs/user-guide/sweeps.md): each
    key load_grid accepts has a row in its table."""
    page = (ROOT / "docs/user-guide/sweeps.md").read_text(encoding="utf-8")
    for key in GridFile.model_fields:   # the grid file's top level
        assert f"| `{key}` |" in page, f"grid key {key!r} missing from docs/user-guide/sweeps.md"
    for key in ("max_seeds", "budget", "label", "reference"):
        assert f"`{key}`" in page


def test_readme_test_command():
    """.ci/run takes the line after the README's test-command marker."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    at = [i for i, line in enumerate(lines) if "test-command" in line]
    assert len(at) == 1
    after = [line for line in lines[at[0] + 1:at[0] + 3] if "```" not in line]
    command = after[0].split()
    assert command[:4] == ["python", "-m", "pytest", "-q"]
    assert "--runslow" in command   # CI runs the slow ones too
    assert command[command.index("-n") + 1] == "auto"   # on every core CI has


def test_no_citations_of_files_outside_the_repository():
    """The model is described in docs/; nothing cites the design notes this
    project started from."""
    patterns = re.compile("|".join(re.escape(p) for p in (
        "SPEC" + " §", "../" + "shared", "DESIGN" + ".md", "SPEC" + ".md")))
    hits = []
    for folder in ("harness", "bench", "tests", "ns3-modules", "workloads", "topologies",
                   "docs"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".h", ".cc", ".toml", ".md", ".csv",
                                                  ".j2", ".sh", ".yml"):
                for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if patterns.search(line):
                        hits.append(f"{path.relative_to(ROOT)}:{n}")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    hits += ["README.md"] if patterns.search(readme) else []
    assert not hits, hits


def test_the_docs_link_nothing_outside_the_repository():
    """Every link of the README and the site stays inside the repository
    (the documentation is read offline, from a checkout or the site)."""
    web = re.compile(r"\]\((?:https?:|ftp:|//)|<https?:|(?<![\w/])https?://[^\s)>]*\.")
    hits = []
    for path in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), ROOT / "mkdocs.yml"]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if web.search(line.replace("http://127.0.0.1", "")):  # mkdocs serve's own
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    assert not hits, hits


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                        "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    # the generated parts were filled in
    page = (site / "user-guide/scenario-keys/index.html").read_text(encoding="utf-8")
    assert "band_limit_packets" in page and "generated: scenario-keys" not in page
    cli = (site / "user-guide/cli/index.html").read_text(encoding="utf-8")
    assert "Usage: harness sweep" in cli
