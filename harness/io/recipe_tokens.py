"""The scenario recipe's tokens (harness.engine.recipe; ScenarioRecipe reads them):
a directive's arguments are separated by spaces, so every value is one
token, and a list is one token, comma-separated ("-" when empty). A leaf
module: every concept writing its recipe lines uses it.

A component configured the ns-3 way (ns3-modules/core/recipe-component.h)
is a TypeId and its attributes, `TypeId Name=Value ...`: component() writes
one from a dict, so a new ns-3 attribute is one more entry."""

from __future__ import annotations


def token(value: str, what: str) -> str:
    """`value` as one token; ValueError (naming `what`) if empty or with spaces."""
    if not value or any(c.isspace() for c in value):
        raise ValueError(f"recipe: {what} {value!r} is empty or has spaces")
    return value


def token_list(values) -> str:
    """A list as one token: comma-separated ("-" when empty); floats as
    repr, which C++ reads back to the same double."""
    return ",".join(repr(float(v)) if isinstance(v, float) else str(int(v))
                    for v in values) or "-"


def attribute_value(value, what: str) -> str:
    """A value as ns-3's attribute checkers read it: bools as true/false,
    floats as repr (the same double back), a list comma-separated (one value
    per object of a component that makes several, or an ns-3 list, whose
    spaces the comma stands for)."""
    if isinstance(value, (list, tuple)):
        return ",".join(attribute_value(v, what) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    if "=" in text or "," in text:
        raise ValueError(f"recipe: {what} {text!r} has '=' or ','")
    return token(text, what)


def component(type_id: str, attributes: dict) -> str:
    """`TypeId Name=Value ...`: the attributes in order, those whose value is
    None or an empty list left out (the attribute keeps its default)."""
    parts = [token(type_id, "TypeId")]
    for name, value in attributes.items():
        if value is None or (isinstance(value, (list, tuple)) and not value):
            continue
        if not name.isidentifier():
            raise ValueError(f"recipe: {type_id} attribute name {name!r}")
        parts.append(f"{name}={attribute_value(value, f'{type_id}::{name}')}")
    return " ".join(parts)
