"""The error every kind of bad input raises (one home, imported by config and units)."""

from __future__ import annotations


class ConfigError(ValueError):
    """Invalid input; the message names the field and what is allowed."""

    def __init__(self, field_path: str, message: str):
        self.field = field_path
        super().__init__(f"{field_path}: {message}" if field_path else message)


class ConfigTypeError(ConfigError):
    """A value of the wrong kind for its field (a string where a number goes...)."""
