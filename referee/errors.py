"""The referee's one exception: a rejected event, with a stable reason code."""

from __future__ import annotations


class Reject(Exception):
    """An event the referee refuses.  It changes nothing.

    ``code`` is a stable machine-readable reason (``not_your_turn``,
    ``does_not_beat``, ...) that tests and the dashboard may rely on;
    ``message`` says the same for people.

    >>> raise Reject("not_your_turn", "it is seat 2's turn")
    Traceback (most recent call last):
    ...
    referee.errors.Reject: not_your_turn: it is seat 2's turn
    """

    def __init__(self, code: str, message: str, **details: object):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details
