"""The code map (docs/architecture/code-map.md) cannot drift from the code:
its generated part is read from the code, and its hand-written part may name
only files that exist and must name every module (pure checks, no ns-3)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "hooks"))

import code_map  # noqa: E402


def test_every_named_file_exists():
    assert code_map.missing_references(code_map.PAGE.read_text()) == []


def test_every_module_is_named():
    assert code_map.unnamed_modules(code_map.PAGE.read_text()) == []


def test_the_page_takes_its_package_table_from_the_code():
    assert "<!-- generated: code-map -->" in code_map.PAGE.read_text()


def test_the_generated_table_follows_the_layers_contract():
    """Every harness package is in the table, in the contract's order, and a
    missing file or a stale name would show (the check is not vacuous)."""
    table = code_map.markdown()
    packages = {p.relative_to(code_map.PACKAGE).parts[0].removesuffix(".py")
                for p in code_map.modules()}
    for package in packages - {"__init__"}:
        assert f"| `{package}` |" in table
    order = [u for layer in code_map.layers() for u in layer]
    assert len(order) >= 5
    rows = [line.split("|")[2].strip(" `") for line in table.splitlines()[2:]]
    placed = [r for r in rows if r in order]
    assert placed == sorted(placed, key=order.index)
    assert code_map.missing_references("`analysis/no_such_module.py`") == ["analysis/no_such_module.py"]
    assert "analysis/stats.py" not in code_map.unnamed_modules("`analysis/stats.py`")
