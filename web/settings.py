"""The dashboard's settings, in one place.

Everything the blueprints read comes from :class:`WebSettings`, stored on the
app as ``app.extensions["cardtable"].settings``; nothing else in ``web/``
reads files or the environment.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field


@dataclass(frozen=True)
class WebSettings:
    pin: str
    # Signs the session cookie (unlock state, CSRF token).  Random per process
    # by default; the CLI keeps one beside the database so a restart does not
    # lock every phone out again.
    secret_key: str = field(default_factory=lambda: secrets.token_hex(32))
    table_name: str = "Cardtable"
    # The address other phones should open (QR code); None = work it out
    # from the request and the machine's LAN address.
    public_url: str | None = None
    # SSE: a comment line this often keeps NAT/Wi-Fi from dropping idle
    # streams and lets the server notice phones that left.
    keepalive_s: float = 15.0
    # End each stream after this long; the browser reconnects at once and
    # gets the whole state, so half-open connections cannot pile up.
    stream_max_s: float = 600.0
    retry_ms: int = 2000
    # How many log lines the live page shows (and may correct by tapping).
    recent_lines: int = 16
    # Wrong PINs tolerated per client address per minute before 429.
    pin_attempts_per_minute: int = 10
    max_body_bytes: int = 64 * 1024

    def __post_init__(self) -> None:
        if not (isinstance(self.pin, str) and self.pin.isdigit() and 4 <= len(self.pin) <= 8):
            raise ValueError("the table PIN must be 4-8 digits")
