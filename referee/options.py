"""House-rule options: typed, validated, with defaults and a one-line explanation.

A game declares its options as a tuple of :class:`Option` values; the
dashboard renders them from :meth:`Option.describe` and the referee
validates a ``new_game``'s ``options`` object with :func:`resolve_options`.

>>> opts = (Choice("head_rule", "pairwise", "How a multi-card play is headed",
...                choices=("pairwise", "all_ge_top")),
...         Int("elim_at", 22, "Total that eliminates a player", minimum=1))
>>> resolve_options(opts, {"elim_at": 30}, prefix="t22")
{'head_rule': 'pairwise', 'elim_at': 30}
>>> resolve_options(opts, {"t22.head_rule": "all_ge_top"}, prefix="t22")["head_rule"]
'all_ge_top'
>>> resolve_options(opts, {"elim_at": 0}, prefix="t22")
Traceback (most recent call last):
...
referee.errors.Reject: bad_option: option 'elim_at' must be at least 1, got 0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from referee.errors import Reject


@dataclass(frozen=True)
class Option:
    """Base of the option types; ``name`` is the key in ``new_game.options``."""

    name: str
    default: Any
    help: str

    kind = "any"

    def validate(self, value: Any) -> Any:
        return value

    def _bad(self, what: str, value: Any) -> Reject:
        return Reject("bad_option", f"option '{self.name}' {what}, got {value!r}", option=self.name)

    def describe(self) -> dict:
        return {"name": self.name, "type": self.kind, "default": self.default, "help": self.help}


@dataclass(frozen=True)
class Bool(Option):
    kind = "bool"

    def validate(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self._bad("must be true or false", value)
        return value


@dataclass(frozen=True)
class Int(Option):
    minimum: int | None = None
    maximum: int | None = None
    kind = "int"

    def validate(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._bad("must be a whole number", value)
        if self.minimum is not None and value < self.minimum:
            raise Reject("bad_option", f"option '{self.name}' must be at least {self.minimum}, got {value}",
                         option=self.name)
        if self.maximum is not None and value > self.maximum:
            raise Reject("bad_option", f"option '{self.name}' must be at most {self.maximum}, got {value}",
                         option=self.name)
        return value

    def describe(self) -> dict:
        return {**super().describe(), "min": self.minimum, "max": self.maximum}


@dataclass(frozen=True)
class Choice(Option):
    choices: tuple[str, ...] = ()
    kind = "choice"

    def validate(self, value: Any) -> str:
        if value not in self.choices:
            raise self._bad("must be one of " + ", ".join(self.choices), value)
        return value

    def describe(self) -> dict:
        return {**super().describe(), "choices": list(self.choices)}


@dataclass(frozen=True)
class IntTable(Option):
    """A number per player count, e.g. cards per player: ``{"2": 20, "3": 16}``.

    Keys are player counts (JSON object keys are strings; ints are accepted);
    a partial table overrides only the counts it names.
    """

    minimum: int = 0
    counts: tuple[int, ...] = field(default=())
    kind = "table"

    def validate(self, value: Any) -> dict[int, int]:
        if not isinstance(value, Mapping):
            raise self._bad("must be an object mapping player counts to numbers", value)
        table = dict(self.default)
        for key, number in value.items():
            try:
                count = int(key)
            except (TypeError, ValueError):
                raise self._bad("has a key that is not a player count", key) from None
            if count not in self.counts:
                raise self._bad(f"only has entries for {min(self.counts)}-{max(self.counts)} players", key)
            if isinstance(number, bool) or not isinstance(number, int) or number < self.minimum:
                raise self._bad(f"needs whole numbers of at least {self.minimum}", number)
            table[count] = number
        return table

    def describe(self) -> dict:
        return {**super().describe(), "default": {str(k): v for k, v in self.default.items()}}


def resolve_options(declared: tuple[Option, ...], given: Mapping[str, Any] | None,
                    prefix: str = "") -> dict[str, Any]:
    """Defaults overridden by ``given``; unknown names and bad values are rejected.

    Keys may carry the game's rule-book prefix (``b2.straight_rank``).
    """
    by_name = {o.name: o for o in declared}
    values = {o.name: o.default for o in declared}
    if given is None:
        return values
    if not isinstance(given, Mapping):
        raise Reject("bad_option", "options must be a JSON object")
    for key, value in given.items():
        name = key[len(prefix) + 1:] if prefix and isinstance(key, str) and key.startswith(prefix + ".") else key
        option = by_name.get(name)
        if option is None:
            raise Reject("bad_option", f"unknown option '{key}'; this game knows: "
                         + ", ".join(sorted(by_name)) if by_name else f"unknown option '{key}'", option=key)
        values[name] = option.validate(value)
    return values


def options_json(values: Mapping[str, Any]) -> dict[str, Any]:
    """Resolved option values as JSON (table keys, which are player counts, become strings)."""
    return {k: ({str(a): b for a, b in v.items()} if isinstance(v, Mapping) else v) for k, v in values.items()}
