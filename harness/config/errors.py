"""The harness's errors (one home: config, units, the CLI and the API import
them from here, without loading what raises them)."""

from __future__ import annotations

#: the most characters of one user value echoed in a message
SHOWN_CHARS = 80

#: the exit status of the `harness` program on bad input (harness.cli, and
#: harness.launcher before it imports the command line)
EXIT_BAD_INPUT = 2


def shorten(value: object, limit: int = SHOWN_CHARS) -> str:
    """A user's value as echoed in a message: its repr, or for a long one its
    start and its length ('xxxx...' (50,000,000 characters)), so that a 50 MB
    name or path never floods a terminal or a log."""
    text = repr(value)
    if len(text) <= limit:
        return text
    length = len(value) if isinstance(value, str) else len(text)
    return f"{text[:limit]}... ({length:,} characters)"


def shown_path(path) -> str:
    """A path as echoed in a message (a long one shortened)."""
    text = str(path)
    return text if len(text) <= 300 else shorten(text, 300)


def shorten_text(text: str, limit: int = 2000) -> str:
    """A whole message cut to `limit` characters (the CLI's last guard: a
    message that echoes a long value some check did not shorten)."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


class ConfigError(ValueError):
    """Invalid input; the message names the field and what is allowed.
    `more`: the other errors found in the same input (a scenario or grid
    file's, all at once), each a ConfigError; the command prints them all."""

    more: tuple = ()

    def __init__(self, field_path: str, message: str):
        self.field = field_path
        self.message = message   # without the field: a caller may name it otherwise
        super().__init__(f"{field_path}: {message}" if field_path else message)


class ConfigTypeError(ConfigError):
    """A value of the wrong kind for its field (a string where a number goes...)."""


class UnknownKeyError(ConfigError):
    """A key the format does not have (a misspelt or foreign field): a grid
    that sets one is wrong as a whole, not one of its cells."""


class CorruptTableError(ConfigError):
    """A results table (Parquet) that cannot be read: truncated by a killed
    writer or a full disk, or not Parquet at all. The field is its path."""


class CorruptRecordError(ConfigError):
    """One of the harness's own JSON records (sweep.json, reference.json)
    that cannot be used: not readable, not JSON, not an object, or lacking a
    field it always has (harness.analysis.tables.read_record). The field is
    its path."""


class Ns3LoadError(RuntimeError):
    """ns-3 or our C++ modules could not be found, built or loaded (raised by
    harness.engine.ns3, caught by the CLI without importing it)."""


class OutputError(ConfigError):
    """An output path that cannot be used; raised before anything runs."""
