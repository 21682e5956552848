"""The code map's generated part: the packages of harness/ from the top layer
down, each module with its size and the first sentence of its docstring, and
which packages each package imports, read from the code itself (ast) and the
layers from pyproject.toml's import-linter contracts. Also the check that the
hand-written part of docs/architecture/code-map.md names only files that exist
and names every module (tests/test_code_map.py), so the map cannot drift."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "harness"
CPP = ROOT / "ns3-modules"
PAGE = ROOT / "docs" / "architecture" / "code-map.md"


def _first_sentence(doc: str | None) -> str:
    """Up to the first ":", ";" or ". X" outside parentheses (not at "e.g. a")."""
    text = " ".join((doc or "").split())
    for end in re.finditer(r"[:;]\s|\.\s+(?=[A-Z`(\[])|\.$", text):
        head = text[:end.start()]
        if head.count("(") == head.count(")") and head.count("[") == head.count("]"):
            return head + "."
    return text


def _unit(path: Path) -> str:
    """The room a module belongs to: its subpackage, or the top-level module."""
    return path.relative_to(PACKAGE).with_suffix("").parts[0]


def _imported_units(path: Path) -> set[str]:
    """The harness packages and top-level modules a module imports (any depth)."""
    tree = ast.parse(path.read_text())
    here = path.relative_to(ROOT).with_suffix("").parts
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                # level 1 is the module's package (for __init__.py too: its own folder)
                base = list(here[:len(here) - node.level]) + ([node.module] if node.module else [])
                targets = [".".join(base)]
                if not node.module:
                    targets = [".".join(base + [a.name]) for a in node.names]
            else:
                targets = [node.module or ""]
                if node.module == "harness":
                    targets = [f"harness.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            if parts[0] == "harness" and len(parts) > 1:
                found.add(parts[1])
    return found


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def layers() -> list[list[str]]:
    """The layers contract of pyproject.toml, top first, each layer's names
    without the `harness.` prefix (a `a | b` layer: independent siblings)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config.get("tool", {}).get("importlinter", {}).get("contracts", [])
    for contract in contracts:
        if contract.get("type") == "layers":
            return [[name.strip().removeprefix("harness.") for name in re.split(r"[|:]", layer)]
                    for layer in contract["layers"]]
    return []


def markdown() -> str:
    by_unit: dict[str, list[Path]] = {}
    for path in modules():
        by_unit.setdefault(_unit(path), []).append(path)
    contract = layers()  # top first
    ordered = [u for layer in contract for u in layer if u in by_unit]
    ordered += sorted(u for u in by_unit if u not in ordered)
    out = ["| layer | package or module | imports (harness) | modules: lines, what it is |",
           "|---|---|---|---|"]
    level = {u: i for i, layer in enumerate(contract) for u in layer}
    for unit in ordered:
        paths = by_unit[unit]
        imports = set().union(*(_imported_units(p) for p in paths)) - {unit, "__init__"}
        rows = []
        for p in paths:
            if p.name == "__init__.py" and len(paths) > 1:
                continue
            text = p.read_text()
            name = p.relative_to(PACKAGE).as_posix()
            rows.append(f"`{name}` {len(text.splitlines())}: "
                        f"{_first_sentence(ast.get_docstring(ast.parse(text)))}")
        layer = str(len(contract) - level[unit]) if unit in level else "-"
        out.append(f"| {layer} | `{unit}` | {', '.join(f'`{i}`' for i in sorted(imports)) or '-'} "
                   f"| {'<br>'.join(r.replace('|', '/') for r in rows)} |")
    return "\n".join(out) + "\n"


#: A path the hand-written map names: `pkg/module.py`, `pkg/`, or a C++ file
#: pair `folder/name` (`{a,b}` alternatives expanded) under ns3-modules/.
_CODE = re.compile(r"`([a-z0-9_./{},()-]+)`")


def _expand(text: str) -> list[str]:
    match = re.search(r"\{([^}]*)\}", text)
    if not match:
        return [text.replace("(", "").replace(")", "")]
    return [x for alt in match.group(1).split(",")
            for x in _expand(text[:match.start()] + alt + text[match.end():])]


def missing_references(page: str) -> list[str]:
    """The paths the page names that exist neither under harness/, ns3-modules/
    nor the repository root."""
    missing = []
    for raw in _CODE.findall(page):
        if "/" not in raw or raw.startswith(("../", "http")) or raw.endswith(".md"):
            continue
        for name in _expand(raw):
            candidates = [PACKAGE / name, ROOT / name, CPP / name, CPP / f"{name}.h",
                          CPP / f"{name}.cc"]
            if not any(c.exists() for c in candidates):
                missing.append(name)
    return missing


def unnamed_modules(page: str) -> list[str]:
    """The modules of harness/ (not __init__.py) that the hand-written page never names."""
    named = {n for raw in _CODE.findall(page) for n in _expand(raw)}
    # a subfolder named (config/schema/) names its modules; a package's own folder does not
    folders = {n for n in named if n.endswith("/") and n.count("/") >= 2}
    return [name for p in modules() if p.name != "__init__.py"
            for name in [p.relative_to(PACKAGE).as_posix()]
            if name not in named and not any(name.startswith(f) for f in folders)]
