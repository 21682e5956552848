"""The findings pages' own words: what a page says where its sweep is not
kept yet (the rest of the words are harness.outputs.words, the report's too)."""

from __future__ import annotations


def no_tables(key: str) -> str:
    """What a part says in place of its table before its sweep is kept."""
    return f"*(no kept tables for `{key}` yet: `harness findings run`)*"
