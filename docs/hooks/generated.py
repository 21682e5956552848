"""mkdocs hook: the parts of the documentation that are generated from the
code, so that they are written once.

A page asks for one with a marker line, replaced when the site is built:

- ``<!-- generated: scenario-keys -->``: every scenario key with its type,
  default and description (harness.config.keys.markdown, from harness/config/schema/);
- ``<!-- generated: policy-parameters -->``: each scheduling policy's
  ``[training.scheduler]`` parameters (harness/traffic/schedulers.py);
- ``<!-- generated: cli -->``: ``harness --help`` and every command's help;
- ``<!-- generated: adaptive-seeds -->``, ``<!-- generated: decided -->``: how
  added seeds are ordered and what a budget does (harness/sweeps/adaptive_text.py),
  what a decided verdict is (harness/analysis/stats.py), said once;
- ``<!-- generated: finding NAME -->`` and the other findings markers
  (``finding-map``, ``finding-table``, ``finding-frontier``, ...: their list is
  harness.findings.markers.MARKERS): a finding's provenance and tables,
  from its kept results
  (harness/findings/, workloads/findings/);
- ``<!-- generated: references -->``: the reference suite's kept rows
  (harness/findings/reference_page.py, workloads/findings/references/);
- ``<!-- generated: code-map -->``: the packages, their layers, modules and
  imports, read from the code (docs/hooks/code_map.py).

An unknown marker stops the build.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))

from harness.findings import markers  # after the checkout is on the path

MARKER = re.compile(r"^<!-- generated: ([a-z-]+)((?: [A-Za-z0-9_.:=-]+)*) -->$", re.MULTILINE)
WIDTH = 88


def _cli() -> str:
    import click

    from harness.cli import main

    root = click.Context(main, info_name="harness", terminal_width=WIDTH,
                         max_content_width=WIDTH)
    parts = ["## harness", "", "```text", main.get_help(root), "```", ""]
    for name in main.list_commands(root):
        command = main.get_command(root, name)
        if command.hidden:   # an old name kept for scripts (harness reference)
            continue
        ctx = click.Context(command, info_name=name, parent=root, terminal_width=WIDTH,
                            max_content_width=WIDTH)
        parts += [f"## harness {name}", "", "```text", command.get_help(ctx), "```", ""]
    return "\n".join(parts)


def _scenario_keys() -> str:
    from harness.config import keys

    return keys.markdown()


def _policy_parameters() -> str:
    from harness.config import keys

    return keys.policies_markdown()


def _adaptive_seeds() -> str:
    from harness.sweeps import adaptive_text

    return f"{adaptive_text.SEED_ORDER}\n\n{adaptive_text.BUDGET_MEANING}\n"


def _decided() -> str:
    from harness.analysis import stats

    return stats.DECIDED_MEANING + "\n"


def _code_map() -> str:
    sys.path.insert(0, str(Path(__file__).parent))
    import code_map

    return code_map.markdown()


def _references() -> str:
    from harness.findings import reference_page

    return reference_page.references_table()


GENERATORS = {"scenario-keys": _scenario_keys, "policy-parameters": _policy_parameters,
              "cli": _cli, "code-map": _code_map, "references": _references,
              "adaptive-seeds": _adaptive_seeds, "decided": _decided,
              **markers.MARKERS}


def on_page_markdown(markdown: str, page, config, files) -> str:
    def fill(match: re.Match) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            from mkdocs.exceptions import PluginError

            raise PluginError(f"{page.file.src_path}: unknown generated part {name!r}; "
                             f"known: {', '.join(GENERATORS)}")
        return GENERATORS[name](*match.group(2).split())

    return MARKER.sub(fill, markdown)
