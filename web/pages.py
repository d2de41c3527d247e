"""The HTML pages: live table, history, new game, unlock, camera, join.

The live page is drawn by ``static/live.js`` from the SSE snapshot (the
server embeds the current one, so the page is complete before the stream
opens).  Forms (new game, unlock) are plain HTML POSTs with a CSRF token,
so they work even where JavaScript is slow to load.
"""

from __future__ import annotations

from typing import Any

from flask import (Blueprint, Response, current_app, redirect, render_template, request, session as cookie,
                   url_for)

from referee.games import GAMES
from referee.log import Referee

from web import auth, join
from web.api import games_available, load_game
from web.errors import ApiError
from web.protocols import camera_status

bp = Blueprint("pages", __name__)


def _dash():
    return current_app.extensions["cardtable"]


@bp.get("/")
def live():
    dash = _dash()
    # "<" escaped: a name like "</script>" must not end the embedded JSON early
    return render_template("live.html", snapshot_json=dash.broker.current.replace("<", "\\u003c"),
                           games=games_available(), has_camera=dash.camera is not None)


@bp.get("/history")
def history_list():
    games = _dash().session.store.games(limit=200)
    titles = {name: cls.title for name, cls in GAMES.items()}
    return render_template("history.html", games=games, titles=titles, current=_dash().session.game_id)


@bp.get("/history/<int:game_id>")
def history_game(game_id: int):
    info, view = load_game(game_id)
    cls = GAMES.get(info["game"])
    return render_template("game.html", info=info, view=view, title=cls.title if cls else info["game"])


# -- new game ---------------------------------------------------------------------------
def _option_value(option: dict, prefix: str) -> tuple[bool, Any]:
    """(given, value) of one declared option from the form; raises ApiError on bad input."""
    name, kind = option["name"], option["type"]
    field = f"{prefix}.{name}"
    if kind == "bool":
        if f"{field}.present" not in request.form:
            return False, None
        return True, request.form.get(field) == "on"
    if kind == "table":
        table = {}
        for count in option["default"]:
            text = request.form.get(f"{field}.{count}", "").strip()
            if text:
                if not text.lstrip("-").isdigit():
                    raise ApiError(400, "bad_option", f"option '{name}' for {count} players must be a whole "
                                   f"number, got {text!r}")
                table[count] = int(text)
        return bool(table), table
    text = request.form.get(field)
    if text is None or text.strip() == "":
        return False, None
    text = text.strip()
    if kind == "int":
        if not text.lstrip("-").isdigit():
            raise ApiError(400, "bad_option", f"option '{name}' must be a whole number, got {text!r}")
        return True, int(text)
    return True, text


def new_game_event() -> dict:
    """The ``new_game`` event a submitted form describes (options only where they differ)."""
    game_name = request.form.get("game", "")
    declared = {g["name"]: g for g in games_available()}
    if game_name not in declared:
        raise ApiError(400, "unknown_game", "choose one of the games in the list")
    game = declared[game_name]
    players = [p.strip() for p in request.form.get("players", "").replace(",", "\n").splitlines() if p.strip()]
    if not players:
        raise ApiError(400, "bad_players", "write the players' names, one per line, in seat order (clockwise)")
    if len(players) != len(set(p.lower() for p in players)):
        raise ApiError(400, "bad_players", "two players have the same name: give each seat its own name")
    if any(len(p) > 40 for p in players):
        raise ApiError(400, "bad_players", "names may be at most 40 characters")
    dealer_text = request.form.get("dealer", "draw")
    if dealer_text == "draw":
        dealer = None
    elif dealer_text.isdigit() and int(dealer_text) < len(players):
        dealer = int(dealer_text)
    else:
        raise ApiError(400, "bad_seat", f"the dealer must be one of the {len(players)} players, or the draw")
    options = {}
    for option in game["options"]:
        given, value = _option_value(option, f"opt.{game_name}")
        if given and value != option["default"]:
            if option["type"] == "table" and all(option["default"].get(k) == v for k, v in value.items()):
                continue
            options[option["name"]] = value
    return {"event": "new_game", "game": game_name, "players": players, "dealer": dealer, "options": options}


@bp.route("/new", methods=["GET", "POST"])
def new_game():
    games = games_available()
    if request.method == "GET":
        return render_template("new.html", games=games, form={}, error=None)
    form = request.form.to_dict()
    try:
        auth.require_form_rights()
        event = new_game_event()
        # Judge it on a scratch referee first: a mistake in the form must not
        # land in the running game's log as a rejected line.
        trial = Referee().submit(event)
        if not trial["ok"]:
            raise ApiError(400, trial["code"], trial["message"])
    except ApiError as err:
        return render_template("new.html", games=games, form=form, error=err.message), err.status
    event["source"] = "phone"
    _dash().session.submit(event)
    return redirect(url_for("pages.live"))


# -- unlock ---------------------------------------------------------------------------------
def _safe_next(target: str | None) -> str:
    # only paths on this site: never an open redirect
    if target and target.startswith("/") and not target.startswith("//"):
        return target
    return url_for("pages.live")


@bp.route("/unlock", methods=["GET", "POST"])
def unlock():
    nxt = _safe_next(request.values.get("next"))
    if request.method == "GET":
        return render_template("unlock.html", next=nxt, error=None)
    try:
        auth.check_same_origin()
        auth.check_csrf(request.form.get("csrf_token"))
        auth.unlock(request.form.get("pin", ""))
    except ApiError as err:
        return render_template("unlock.html", next=nxt, error=err.message), err.status
    return redirect(nxt)


@bp.post("/lock")
def lock():
    auth.check_same_origin()
    auth.check_csrf(request.form.get("csrf_token"))
    auth.lock()
    cookie.pop("csrf", None)
    return redirect(url_for("pages.live"))


# -- camera, join ---------------------------------------------------------------------------
@bp.get("/camera")
def camera():
    return render_template("camera.html", status=camera_status(_dash().camera))


@bp.get("/join")
def join_page():
    urls = join.join_urls(request.host_url, _dash().settings.public_url)
    return render_template("join.html", urls=urls, qr=join.qr_svg(urls[0]))


@bp.get("/join.svg")
def join_svg():
    urls = join.join_urls(request.host_url, _dash().settings.public_url)
    return Response(join.qr_svg(urls[0], standalone=True), mimetype="image/svg+xml")
