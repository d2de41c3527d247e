"""The JSON API (documented in docs/api.md).

Reading is open to anyone on the network; ``POST /api/events`` needs the
table PIN (see :mod:`web.auth`).  Errors are JSON ``{"ok": false, "error":
code, "message": sentence}`` with a 4xx status.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from referee.errors import Reject
from referee.events import parse_event
from referee.games import GAMES

from cardtable.store import StoreError
from web import auth, history, join
from web.errors import ApiError
from web.protocols import camera_status
from web.snapshot import describe_signals, verdict_view

bp = Blueprint("api", __name__, url_prefix="/api")


def _dash():
    return current_app.extensions["cardtable"]


def games_available() -> list[dict[str, Any]]:
    return [{"name": cls.name, "title": cls.title, "summary": cls.summary,
             "min_players": cls.min_players, "max_players": cls.max_players,
             "option_prefix": cls.option_prefix,
             "options": [o.describe() for o in cls.options]}
            for name, cls in sorted(GAMES.items())]


def submit_event(event: Any, source: str) -> dict:
    """Check an event's shape, then send it through the session (stored, judged, pushed).

    Objects that are not events at all (no ``event`` field, an unknown type,
    a malformed field, a card that does not exist) are refused with 400 and
    never reach the log; an event that parses is stored and judged, and its
    verdict (``ok`` false for an illegal move) is the answer.
    """
    if not isinstance(event, dict):
        raise ApiError(400, "not_an_object", "the body must be one JSON object, e.g. {\"event\": \"undo\"}")
    try:
        parse_event(event)
    except Reject as rej:
        raise ApiError(400, rej.code, rej.message) from None
    event = {**event, "source": event.get("source") or source}
    dash = _dash()
    verdict = dash.session.submit(event)
    players = list(dash.session.state().get("players") or [])
    out = verdict_view(players, verdict)
    out["game_id"] = dash.session.game_id
    return out


@bp.get("/state")
def state():
    return jsonify(_dash().session.state())


@bp.get("/snapshot")
def snapshot():
    return Response(_dash().broker.current, mimetype="application/json")


@bp.post("/events")
def post_event():
    how = auth.require_change_rights()
    event = read_json_body()
    key = request.headers.get("Idempotency-Key")
    if key is not None and not 1 <= len(key) <= 100:
        raise ApiError(400, "bad_idempotency_key", "Idempotency-Key must be 1-100 characters")
    reply, repeated = _dash().replies.once(key, lambda: submit_event(event, "api" if how == "pin" else "phone"))
    response = jsonify(reply)
    if repeated:
        response.headers["Idempotent-Replayed"] = "true"
    return response


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError("number out of range")
    return value


def read_json_body() -> Any:
    """The request body as strict JSON: no NaN/Infinity, no overflowing numbers,
    and deep nesting is bad input like any other (never a RecursionError)."""
    try:
        return json.loads(request.get_data(cache=True), parse_constant=_no_constants, parse_float=_finite)
    except (ValueError, RecursionError):
        raise ApiError(400, "bad_json", "the body is not valid JSON") from None


@bp.get("/games")
def games():
    limit = request.args.get("limit", "100")
    if not limit.isdigit() or not 1 <= int(limit) <= 1000:
        raise ApiError(400, "bad_limit", "limit must be a whole number 1-1000")
    return jsonify({"games": _dash().session.store.games(limit=int(limit))})


def stored_game(game_id: int) -> tuple[dict, list]:
    """A stored game's listing and its log; 404 if there is none, 500 if its log is damaged."""
    store = _dash().session.store
    try:
        info = store.game(game_id)
    except StoreError:
        raise ApiError(404, "no_such_game", f"there is no game {game_id} at this table") from None
    try:
        return info, store.events(game_id)
    except StoreError as exc:
        raise ApiError(500, "damaged_log", str(exc)) from None


def load_game(game_id: int) -> tuple[dict, dict]:
    info, events = stored_game(game_id)
    return info, history.game_view(history.replay_game(events))


@bp.get("/games/<int:game_id>")
def game(game_id: int):
    info, view = load_game(game_id)
    return jsonify({"game": info, "state": view["state"],
                    "log": [{"index": line["index"], "event": line["event"], "verdict": line["verdict"]}
                            for line in view["log"]],
                    "draws": view["draws"], "hands": view["hands"]})


@bp.get("/games/<int:game_id>/log.jsonl")
def game_log(game_id: int):
    """The stored log as JSON Lines, exactly what ``cardtable replay`` reads."""
    _, events = stored_game(game_id)
    body = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
    return Response(body, mimetype="application/x-ndjson",
                    headers={"Content-Disposition": f'attachment; filename="cardtable-game-{game_id}.jsonl"'})


@bp.get("/games-available")
def available():
    return jsonify({"games": games_available()})


@bp.get("/signals")
def signals():
    sig = _dash().signals
    described = describe_signals(sig) if sig is not None else None
    if described is None:
        return jsonify({"available": False})
    return jsonify({"available": True, **described})


@bp.get("/camera")
def camera():
    return jsonify(camera_status(_dash().camera))


@bp.get("/camera.jpg")
def camera_jpeg():
    cam = _dash().camera
    if cam is None:
        raise ApiError(404, "no_camera", "no camera")
    try:
        jpeg = cam.latest_jpeg()
    except Exception as exc:
        raise ApiError(503, "camera_error", f"the camera did not answer: {exc}") from None
    if not jpeg:
        raise ApiError(404, "no_frame", "the camera has no frame yet")
    return Response(jpeg, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


@bp.get("/join")
def join_info():
    return jsonify({"urls": join.join_urls(request.host_url, _dash().settings.public_url)})
