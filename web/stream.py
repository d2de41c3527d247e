"""``GET /api/stream``: the table as Server-Sent Events.

Each (re)connect first receives the whole current snapshot, then every new
one; events are named ``state`` and carry the snapshot's ``seq`` as their
id.  Streams end after ``stream_max_s`` (the browser reconnects by itself
after ``retry``) and a comment line every ``keepalive_s`` lets the server
notice phones that went away.
"""

from __future__ import annotations

import time

from flask import Blueprint, Response, current_app

bp = Blueprint("stream", __name__)


@bp.get("/api/stream")
def stream() -> Response:
    dash = current_app.extensions["cardtable"]
    settings = dash.settings
    broker = dash.broker
    q = broker.subscribe()      # subscribed now, so nothing published from here on is missed

    def events():
        try:
            yield f"retry: {settings.retry_ms}\n\n"
            deadline = time.monotonic() + settings.stream_max_s
            for item in broker.messages(q, settings.keepalive_s):
                if item is None:
                    yield ": keepalive\n\n"
                else:
                    seq, data = item
                    yield f"id: {seq}\nevent: state\ndata: {data}\n\n"
                if time.monotonic() > deadline:
                    return
        finally:
            broker.unsubscribe(q)

    return Response(events(), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
