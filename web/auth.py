"""Who may change the table: the PIN, the unlocked session, and CSRF defences.

Anyone on the network may watch.  A change needs the table PIN, shown in one
of two ways:

* **JSON API** (scripts, other programs): the header ``X-Table-Pin``.
* **The pages**: the PIN is typed once on ``/unlock``; the signed session
  cookie then remembers it (a hash of it, so changing the PIN locks every
  phone again), and every change carries the session's CSRF token, as a
  hidden form field or as the ``X-CSRF-Token`` header of a ``fetch``.

Cross-site requests are refused twice over: a JSON change must have the JSON
content type and a custom header (a cross-site form or ``fetch`` cannot send
those without a CORS preflight, which this app never grants), and a request
whose ``Origin``/``Referer`` names another host is refused outright.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import defaultdict, deque
from urllib.parse import urlsplit

from flask import current_app, request, session

from web.errors import ApiError


def _pin_tag(pin: str) -> str:
    key = current_app.secret_key
    key = key.encode() if isinstance(key, str) else key
    return hmac.new(key, b"pin:" + pin.encode(), hashlib.sha256).hexdigest()


def csrf_token() -> str:
    """This browser session's CSRF token (created on first use)."""
    token = session.get("csrf")
    if not token:
        token = session["csrf"] = secrets.token_urlsafe(24)
    return token


def unlocked() -> bool:
    """Did this browser session type the current PIN?"""
    tag = session.get("pin")
    return bool(tag) and hmac.compare_digest(tag, _pin_tag(_settings().pin))


def unlock(pin: str) -> None:
    check_pin(pin)
    session["pin"] = _pin_tag(_settings().pin)
    session.permanent = True


def lock() -> None:
    session.pop("pin", None)


def check_same_origin() -> None:
    """Refuse a change whose Origin (or Referer) is another site."""
    source = request.headers.get("Origin") or request.headers.get("Referer")
    if not source or source == "null":
        # Non-browser clients send neither; browsers always send Origin on
        # POST from a page, so a missing one is not a cross-site form.
        if source == "null":
            raise ApiError(403, "cross_origin", "requests from an opaque origin are refused")
        return
    if urlsplit(source).netloc.lower() != request.host.lower():
        raise ApiError(403, "cross_origin", "changes must come from this dashboard's own pages")


def check_csrf(token: str | None) -> None:
    expected = session.get("csrf")
    if not expected or not token or not hmac.compare_digest(str(token), expected):
        raise ApiError(403, "bad_csrf_token", "the form has expired or came from another site: reload the page")


def check_pin(pin: str | None) -> None:
    """The PIN itself, with a limit on wrong guesses per client address."""
    limiter: PinLimiter = current_app.extensions["cardtable"].pin_limiter
    who = request.remote_addr or "?"
    if limiter.blocked(who):
        raise ApiError(429, "too_many_attempts", "too many wrong PINs: wait a minute and try again")
    if not pin:
        raise ApiError(401, "pin_required", "changes need the table PIN")
    if not hmac.compare_digest(str(pin).strip().encode(), _settings().pin.encode()):
        limiter.failed(who)
        raise ApiError(403, "wrong_pin", "that is not the table PIN")


def require_change_rights() -> str:
    """Authorise one JSON change; returns how ("pin" or "session").

    Order matters for the messages: a cross-site request is refused as such
    before anything else is looked at.
    """
    check_same_origin()
    if request.mimetype != "application/json":
        raise ApiError(415, "json_required", "send the event as JSON (Content-Type: application/json)")
    pin = request.headers.get("X-Table-Pin")
    if pin is not None:
        check_pin(pin)
        return "pin"
    if request.headers.get("X-CSRF-Token") is not None:
        if not unlocked():
            raise ApiError(401, "pin_required", "this phone is locked: enter the table PIN first")
        check_csrf(request.headers.get("X-CSRF-Token"))
        return "session"
    raise ApiError(401, "pin_required", "changes need the table PIN (header X-Table-Pin)")


def require_form_rights() -> None:
    """Authorise one HTML form POST: same origin, CSRF token, and the PIN (session or field)."""
    check_same_origin()
    check_csrf(request.form.get("csrf_token"))
    if not unlocked():
        unlock(request.form.get("pin", ""))


class PinLimiter:
    """At most ``limit`` wrong PINs per address in a sliding minute."""

    def __init__(self, limit: int, window_s: float = 60.0) -> None:
        self.limit, self.window_s = limit, window_s
        self._failures: dict[str, deque] = defaultdict(deque)
        self._lock = threading.Lock()

    def _trim(self, who: str, now: float) -> deque:
        q = self._failures[who]
        while q and now - q[0] > self.window_s:
            q.popleft()
        return q

    def blocked(self, who: str) -> bool:
        with self._lock:
            return len(self._trim(who, time.monotonic())) >= self.limit

    def failed(self, who: str) -> None:
        with self._lock:
            self._trim(who, time.monotonic()).append(time.monotonic())


def _settings():
    return current_app.extensions["cardtable"].settings
