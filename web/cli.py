"""``cardtable serve``: the dashboard and JSON API without a camera.

Resumes the last game stored in the SQLite database, so a restart (or a
crash) brings every phone back to the same table.  The whole-product runner
(``cardtable run``) builds the same app with :func:`web.create_app` and
serves it with :func:`web.serve`.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import sys
from typing import Any

from cardtable.config import ConfigError, ensure_pin, load_config


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cardtable serve",
                                description="Serve the phone dashboard and JSON API (no camera).")
    p.add_argument("--config", metavar="FILE", help="configuration file (TOML); see cardtable/config.py")
    p.add_argument("--db", metavar="FILE", help="SQLite database of games (default from the config)")
    p.add_argument("--host", metavar="H", help="address to listen on (0.0.0.0 for the whole network)")
    p.add_argument("--port", metavar="P", type=_port, help="port to listen on (0 picks a free one)")
    p.add_argument("--pin", metavar="PIN", type=_pin, help="table PIN for changes (default from the config)")
    return p


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"must be a whole number 0-65535, got {text!r}")
    return int(text)


def _pin(text: str) -> str:
    if not (text.isdigit() and 4 <= len(text) <= 8):
        raise argparse.ArgumentTypeError("must be 4-8 digits")
    return text


def secret_key_for(db_path: str) -> str:
    """A cookie-signing key kept beside the database, so restarts keep phones unlocked."""
    path = os.path.join(os.path.dirname(os.path.abspath(db_path)), "web-secret")
    try:
        with open(path, encoding="ascii") as fh:
            key = fh.read().strip()
        if len(key) >= 32:
            return key
    except OSError:
        pass
    key = secrets.token_hex(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(key + "\n")
    return key


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = load_config(args.config).override(db=args.db, host=args.host, port=args.port, pin=args.pin)
    except ConfigError as exc:
        print(f"cardtable serve: {exc}", file=sys.stderr)
        return 2
    # Flask and the store load only now: `cardtable --help` stays fast.
    from cardtable.session import Session
    from cardtable.store import Store, StoreError

    from web.app import create_app
    from web.server import Server

    try:
        os.makedirs(os.path.dirname(os.path.abspath(config.db)), exist_ok=True)
        store = Store(config.db)
        session = Session.resume(store)
        pin, generated = ensure_pin(config)
        secret = secret_key_for(config.db)
    except (OSError, StoreError, Exception) as exc:   # a broken db file is a message, not a traceback
        print(f"cardtable serve: cannot open {config.db}: {exc}", file=sys.stderr)
        return 2
    app = create_app(session, pin=pin, secret_key=secret)
    try:
        server = Server(app, config.host, config.port)
    except OSError as exc:
        print(f"cardtable serve: cannot listen on {config.host}:{config.port}: {exc}", file=sys.stderr)
        return 2
    if generated:
        print(f"table PIN (generated, kept beside the database): {pin}", flush=True)
    state = session.state()
    resumed = f"game {session.game_id} ({state.get('game')})" if session.game_id else "no game yet"
    print(f"serving the dashboard on {server.url}/ ({resumed}; database {config.db})", flush=True)

    def _stop(*_: Any) -> None:
        # end the SSE streams first, so waitress' own shutdown finds its workers free
        app.extensions["cardtable"].broker.close()
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, _stop)
    try:
        server.run()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.close()
        app.extensions["cardtable"].close()
        store.close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
