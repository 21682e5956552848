"""The scenario recipe's tokens (harness.engine.recipe; ScenarioRecipe reads them):
a directive's arguments are separated by spaces, so every value is one
token, and a list is one token, comma-separated ("-" when empty). A leaf
module: every concept writing its recipe lines uses it."""

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
