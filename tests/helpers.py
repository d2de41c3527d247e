"""Shared helpers for the referee tests (event builders, judging, snapshots)."""

from __future__ import annotations

import json

from referee.log import Referee


def new_game(game: str, players: int | list[str], dealer: int | None = 0, **options) -> dict:
    names = players if isinstance(players, list) else [f"P{i + 1}" for i in range(players)]
    return {"event": "new_game", "game": game, "players": names, "dealer": dealer, "options": options}


def play(seat: int, *cards: str) -> dict:
    return {"event": "play", "seat": seat, "cards": list(cards)}


def pass_(seat: int) -> dict:
    return {"event": "pass", "seat": seat}


def judge(events: list[dict]) -> Referee:
    ref = Referee()
    for e in events:
        ref.submit(e)
    return ref


def snapshot(ref: Referee) -> str:
    """Everything observable about a position (to prove a reject changed nothing)."""
    state = ref.state()
    state.pop("log_length", None)
    return json.dumps(state, sort_keys=True)
