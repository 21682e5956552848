"""The harness's errors (one home: config, units, the CLI and the API import
them from here, without loading what raises them)."""

from __future__ import annotations


class ConfigError(ValueError):
    """Invalid input; the message names the field and what is allowed."""

    def __init__(self, field_path: str, message: str):
        self.field = field_path
        super().__init__(f"{field_path}: {message}" if field_path else message)


class ConfigTypeError(ConfigError):
    """A value of the wrong kind for its field (a string where a number goes...)."""


class UnknownKeyError(ConfigError):
    """A key the format does not have (a misspelt or foreign field): a grid
    that sets one is wrong as a whole, not one of its cells."""


class Ns3LoadError(RuntimeError):
    """ns-3 or our C++ modules could not be found, built or loaded (raised by
    harness.ns3, caught by the CLI without importing it)."""
