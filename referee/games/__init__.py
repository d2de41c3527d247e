"""The games the referee knows: one module each, found by name.

Every module in this package that defines a subclass of
:class:`referee.game.Game` with a ``name`` is a game; adding a game means
adding a module here and touches no core file.

>>> sorted(GAMES)[:1]
['big-two']
>>> get_game("chess")
Traceback (most recent call last):
...
referee.errors.Reject: unknown_game: unknown game 'chess'; known games: big-two...
"""

from __future__ import annotations

import importlib
import pkgutil

from referee.errors import Reject
from referee.game import Game


def _discover() -> dict[str, type[Game]]:
    found: dict[str, type[Game]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Game) and value.name and value.__module__ == module.__name__:
                found[value.name] = value
    return found


GAMES: dict[str, type[Game]] = _discover()


def get_game(name: str) -> type[Game]:
    try:
        return GAMES[name]
    except KeyError:
        raise Reject("unknown_game", f"unknown game {name!r}; known games: {', '.join(sorted(GAMES))}") from None
