"""The application factory: one Flask app around one live table session."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any, Callable

from flask import Flask

log = logging.getLogger(__name__)

from web import auth, errors
from web.broker import Broker
from web.idempotency import Replies
from web.settings import WebSettings
from web.snapshot import build, describe_signals


@dataclass
class Dashboard:
    """What the blueprints share: ``app.extensions["cardtable"]``."""

    session: Any                       # cardtable.session.Session
    settings: WebSettings
    broker: Broker
    camera: Any = None                 # see web.protocols.Camera
    signals: Any = None                # see web.protocols.SignalsView
    pin_limiter: auth.PinLimiter | None = None
    replies: Replies = field(default_factory=Replies)
    _cleanup: list[Callable[[], Any]] = field(default_factory=list)

    def snapshot(self) -> dict[str, Any]:
        return build(self.session, signals=self.signals, recent_lines=self.settings.recent_lines)

    def republish(self) -> int:
        """Send a freshly built snapshot to every phone."""
        return self.broker.publish(self.snapshot())

    def on_verdict(self) -> None:
        """The session's listener.  It runs inside ``Session.submit`` of whoever
        sent the event (the camera pipeline too), so a dashboard bug must be
        logged here, never raised into the table's event loop."""
        try:
            self.republish()
        except Exception:
            log.exception("could not push the new table state to the phones")

    def close(self) -> None:
        """Stop listening to the session and signals, and end every stream."""
        for undo in reversed(self._cleanup):
            undo()
        self._cleanup.clear()
        self.broker.close()


def create_app(session: Any, *, pin: str, camera: Any = None, signals: Any = None,
               secret_key: str | None = None, public_url: str | None = None,
               settings: WebSettings | None = None, **overrides: Any) -> Flask:
    """The dashboard and JSON API for ``session`` (a :class:`cardtable.session.Session`).

    ``pin`` is the table PIN every change needs; ``camera`` and ``signals``
    follow :mod:`web.protocols` (None: "no camera", no LEDs).  ``secret_key``
    signs session cookies (give a stable one so phones stay unlocked across
    restarts).  Further keyword arguments override :class:`WebSettings` fields.
    """
    base = settings or WebSettings(pin=pin)
    values: dict[str, Any] = {"pin": pin, **overrides}
    if secret_key is not None:
        values["secret_key"] = secret_key
    if public_url is not None:
        values["public_url"] = public_url
    settings = replace(base, **values)

    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=settings.secret_key,
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",      # the cookie never rides on another site's request
        PERMANENT_SESSION_LIFETIME=timedelta(days=30),
        JSON_SORT_KEYS=False,
        TEMPLATES_AUTO_RELOAD=False,
    )
    app.json.sort_keys = False
    dash = Dashboard(session=session, settings=settings, broker=Broker(), camera=camera, signals=signals,
                     pin_limiter=auth.PinLimiter(settings.pin_attempts_per_minute))
    app.extensions["cardtable"] = dash

    # Every verdict (from the camera, a phone, a button) reaches every phone.
    dash._cleanup.append(session.listen(lambda verdict, state: dash.on_verdict()))
    if signals is not None and hasattr(signals, "when_changed") and signals.when_changed is None:
        # Never take the session's lock here: LED patterns call back from
        # their own threads while the session may be waiting on them.
        signals.when_changed = lambda: dash.broker.merge(signals=describe_signals(signals))

        def _unhook() -> None:
            signals.when_changed = None
        dash._cleanup.append(_unhook)
    dash.republish()

    errors.register(app)
    from web.api import bp as api_bp
    from web.pages import bp as pages_bp
    from web.stream import bp as stream_bp
    app.register_blueprint(api_bp)
    app.register_blueprint(stream_bp)
    app.register_blueprint(pages_bp)

    @app.context_processor
    def _template_globals() -> dict[str, Any]:
        return {"csrf_token": auth.csrf_token, "unlocked": auth.unlocked(),
                "table_name": settings.table_name}

    @app.template_filter("timestamp")
    def _timestamp(seconds: Any) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(float(seconds)))

    @app.after_request
    def _headers(response):
        # The dashboard is never framed and never sniffed; pages are live, not cached.
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        if response.mimetype == "text/html":
            response.headers.setdefault("Cache-Control", "no-store")
        return response

    return app
