"""Configuration from one place: a TOML file plus command-line overrides.

Every part reads its settings from :class:`Config`; nothing else parses
files or environment variables.  Example ``config.toml`` (all keys optional)::

    [table]
    pin = "4821"              # the table PIN for changes on the dashboard
    db = "/var/lib/cardtable/cardtable.sqlite"
    host = "0.0.0.0"
    port = 8000

    [camera]
    source = "picamera"       # picamera | usb:0 | video:PATH | images:GLOB

    [gpio]                    # see docs/hardware.md
    seat_leds = [17, 27, 22, 23]
    buzzer = 18

    [geometry]                # written by calibration; see docs/live-table.md

>>> cfg = Config.from_dict({"table": {"port": 9000}})
>>> cfg.port, cfg.host
(9000, '127.0.0.1')
>>> Config.from_dict({"table": {"port": "x"}})
Traceback (most recent call last):
...
cardtable.config.ConfigError: [table] port must be a whole number 0-65535 (0 picks a free one), got 'x'
"""

from __future__ import annotations

import os
import secrets
import tomllib
from dataclasses import dataclass, field, replace
from typing import Any


class ConfigError(ValueError):
    """A configuration file or value that cannot be used; the message names the key."""


KNOWN_SECTIONS = {"table", "camera", "gpio", "geometry", "recognition", "demo"}


@dataclass(frozen=True)
class Config:
    pin: str | None = None
    db: str = "cardtable.sqlite"
    host: str = "127.0.0.1"
    port: int = 8000
    source: str | None = None
    gpio: dict[str, Any] = field(default_factory=dict)
    geometry: dict[str, Any] = field(default_factory=dict)
    recognition: dict[str, Any] = field(default_factory=dict)
    path: str | None = None          # the file it came from, if any

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str | None = None) -> "Config":
        unknown = set(data) - KNOWN_SECTIONS
        if unknown:
            raise ConfigError(f"unknown section [{sorted(unknown)[0]}]; known: {', '.join(sorted(KNOWN_SECTIONS))}")
        table = _section(data, "table", {"pin", "db", "host", "port"})
        camera = _section(data, "camera", {"source"})
        return cls(pin=None if table.get("pin") is None else str(table["pin"]),
                   db=table.get("db", "cardtable.sqlite"), host=table.get("host", "127.0.0.1"),
                   port=table.get("port", 8000), source=camera.get("source"), gpio=dict(data.get("gpio", {})),
                   geometry=dict(data.get("geometry", {})), recognition=dict(data.get("recognition", {})),
                   path=path)

    def __post_init__(self) -> None:
        # Checked here, not in from_dict, so command-line overrides are checked too.
        pin = self.pin
        if pin is not None and not (isinstance(pin, str) and pin.isdigit() and 4 <= len(pin) <= 8):
            raise ConfigError(f"[table] pin must be 4-8 digits, got {pin!r}")
        port = self.port
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ConfigError(f"[table] port must be a whole number 0-65535 (0 picks a free one), got {port!r}")
        for key in ("db", "host"):
            if not isinstance(getattr(self, key), str):
                raise ConfigError(f"[table] {key} must be a string, got {getattr(self, key)!r}")
        if self.source is not None and not isinstance(self.source, str):
            raise ConfigError(f"[camera] source must be a string, got {self.source!r}")

    def override(self, **values: Any) -> "Config":
        """A copy with the command-line values that were given (None means not given), checked.

        >>> Config().override(pin="12")
        Traceback (most recent call last):
        ...
        cardtable.config.ConfigError: [table] pin must be 4-8 digits, got '12'
        """
        return replace(self, **{k: v for k, v in values.items() if v is not None})


def _section(data: dict, name: str, keys: set[str]) -> dict:
    section = data.get(name, {})
    if not isinstance(section, dict):
        raise ConfigError(f"[{name}] must be a table")
    unknown = set(section) - keys
    if unknown:
        raise ConfigError(f"[{name}] has an unknown key '{sorted(unknown)[0]}'; known: {', '.join(sorted(keys))}")
    return section


def load_config(path: str | None) -> Config:
    """Read a TOML configuration file; ``None`` gives the defaults."""
    if path is None:
        return Config()
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        return Config.from_dict(data, path=path)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def ensure_pin(config: Config, state_dir: str | None = None) -> tuple[str, bool]:
    """The table PIN: the configured one, else one generated at first start.

    A generated PIN is kept in ``table-pin`` beside the database so it stays
    the same across restarts.  Returns ``(pin, generated_now)``; the caller
    prints it when it was just generated.
    """
    if config.pin:
        return config.pin, False
    folder = state_dir or os.path.dirname(os.path.abspath(config.db))
    path = os.path.join(folder, "table-pin")
    try:
        with open(path, encoding="ascii") as fh:
            pin = fh.read().strip()
        if pin.isdigit() and 4 <= len(pin) <= 8:
            return pin, False
    except OSError:
        pass
    pin = f"{secrets.randbelow(10_000):04d}"
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="ascii") as fh:
        fh.write(pin + "\n")
    return pin, True
