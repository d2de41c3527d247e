"""The GPIO pin map: which BCM pin drives which LED, the buzzer and the buttons.

The pin map is the ``[gpio]`` table of the configuration file::

    [gpio]
    seat_leds   = [17, 27, 22, 23]         # one LED per seat, seat 0 first (required)
    dealer_leds = [24, 25, 12, 16]           # optional: a second LED per seat for the dealer
    buzzer      = 18                       # optional
    buzzer_kind = "active"                 # "active" (Buzzer) or "passive" (TonalBuzzer)
    buttons     = { pass = 5, undo = 6, confirm = 13 }   # optional, any subset
    seats       = 4                        # optional: must match len(seat_leds)
    pin_factory = "auto"                   # "auto", "mock", "lgpio", "rpigpio", "pigpio", "native"

:meth:`PinMap.from_config` validates it and raises a :exc:`PinMapError`
subclass naming the offending key and pin, so a typo stops the service at
start instead of leaving a dark LED in the middle of a game:

>>> PinMap.from_config({"seat_leds": [17, 27], "buzzer": 17})
Traceback (most recent call last):
    ...
hardware.pinmap.PinUsedTwiceError: pin 17 is used twice: gpio.seat_leds[0] and gpio.buzzer
>>> PinMap.from_config({"seat_leds": [17, 27], "dealer_leds": [22]})
Traceback (most recent call last):
    ...
hardware.pinmap.SeatWithoutPinError: seat 1 has no pin in gpio.dealer_leds (2 seats in gpio.seat_leds, 1 pin in gpio.dealer_leds)
>>> pm = PinMap.from_config({"seat_leds": [17, 27, 22], "buzzer": 18})
>>> pm.seats, pm.buzzer, pm.buzzer_kind
(3, 18, 'active')
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = [
    "PinMap",
    "PinMapError",
    "PinUsedTwiceError",
    "SeatWithoutPinError",
    "PinOutOfRangeError",
    "UnknownKeyError",
    "BadValueError",
    "BUTTON_NAMES",
    "BUZZER_KINDS",
    "PIN_FACTORIES",
    "MIN_PIN",
    "MAX_PIN",
]

#: The button names the configuration may use (``[gpio] buttons = {...}``).
BUTTON_NAMES = ("pass", "undo", "confirm")
#: ``active``: a buzzer with its own oscillator (gpiozero ``Buzzer``);
#: ``passive``: a bare piezo that needs a square wave (gpiozero ``TonalBuzzer``).
BUZZER_KINDS = ("active", "passive")
#: Accepted values of ``[gpio] pin_factory``.
PIN_FACTORIES = ("auto", "mock", "lgpio", "rpigpio", "pigpio", "native")
#: The usable BCM GPIO numbers on the 40-pin header.  GPIO 0 and 1 are the
#: HAT ID EEPROM bus (ID_SD/ID_SC) and are kept free on purpose.
MIN_PIN, MAX_PIN = 2, 27

_KEYS = ("seat_leds", "dealer_leds", "buzzer", "buzzer_kind", "buttons", "seats", "pin_factory")


class PinMapError(ValueError):
    """The ``[gpio]`` table is wrong.  ``key`` is the offending key (e.g.
    ``"gpio.buttons.pass"``) and ``pin`` the offending pin number, if any."""

    def __init__(self, message: str, *, key: str | None = None, pin: Any = None):
        super().__init__(message)
        self.key = key
        self.pin = pin


class PinUsedTwiceError(PinMapError):
    """Two outputs/inputs were given the same BCM pin."""


class SeatWithoutPinError(PinMapError):
    """A seat has no LED pin (in ``seat_leds`` or ``dealer_leds``)."""


class PinOutOfRangeError(PinMapError):
    """A pin number outside the header's usable BCM range 2..27."""


class UnknownKeyError(PinMapError):
    """A key the pin map does not know (usually a typo)."""


class BadValueError(PinMapError):
    """A key with a value of the wrong type or an unknown choice."""


def _suggest(name: str, choices: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return f"{hint}known keys: {', '.join(choices)}"


def _pin(value: Any, key: str) -> int:
    # bool is an int in Python: `buzzer = true` is a mistake, not pin 1.
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadValueError(
            f"{key} = {value!r}: a pin is a BCM GPIO number (an integer {MIN_PIN}..{MAX_PIN})",
            key=key, pin=value)
    if not MIN_PIN <= value <= MAX_PIN:
        extra = " (GPIO 0 and 1 are reserved for the HAT ID EEPROM)" if value in (0, 1) else ""
        raise PinOutOfRangeError(
            f"{key} = {value}: pin out of range, use a BCM GPIO number {MIN_PIN}..{MAX_PIN}{extra}",
            key=key, pin=value)
    return value


def _pin_list(value: Any, key: str) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)):
        raise BadValueError(f"{key} = {value!r}: expected a list of BCM pin numbers, one per seat",
                            key=key, pin=value)
    return tuple(_pin(v, f"{key}[{i}]") for i, v in enumerate(value))


@dataclass(frozen=True)
class PinMap:
    """A validated pin map.  Build it with :meth:`from_config`.

    >>> pm = PinMap.from_config({"seat_leds": [17, 27], "buttons": {"undo": 6}})
    >>> pm.seat_leds, pm.dealer_leds, pm.buttons
    ((17, 27), None, {'undo': 6})
    >>> pm.needs_pwm
    False
    """

    seat_leds: tuple[int, ...]
    dealer_leds: tuple[int, ...] | None = None
    buzzer: int | None = None
    buzzer_kind: str = "active"
    buttons: dict[str, int] = field(default_factory=dict)
    pin_factory: str = "auto"

    @property
    def seats(self) -> int:
        """Number of seats the table has LEDs for."""
        return len(self.seat_leds)

    @property
    def needs_pwm(self) -> bool:
        """True when a device needs PWM (the passive buzzer's square wave)."""
        return self.buzzer is not None and self.buzzer_kind == "passive"

    def pins(self) -> dict[str, int]:
        """Every used pin by its configuration key, e.g. ``{"gpio.seat_leds[0]": 17, ...}``."""
        out = {f"gpio.seat_leds[{i}]": p for i, p in enumerate(self.seat_leds)}
        for i, p in enumerate(self.dealer_leds or ()):
            out[f"gpio.dealer_leds[{i}]"] = p
        if self.buzzer is not None:
            out["gpio.buzzer"] = self.buzzer
        for name, p in self.buttons.items():
            out[f"gpio.buttons.{name}"] = p
        return out

    @classmethod
    def from_config(cls, table: Mapping[str, Any] | "PinMap") -> "PinMap":
        """Validate the ``[gpio]`` table (a dict as ``tomllib`` reads it).

        Raises :exc:`UnknownKeyError`, :exc:`BadValueError`,
        :exc:`PinOutOfRangeError`, :exc:`SeatWithoutPinError` or
        :exc:`PinUsedTwiceError` (all :exc:`PinMapError`, a ``ValueError``).

        >>> PinMap.from_config({"seat_leds": [17], "buzer": 18})
        Traceback (most recent call last):
            ...
        hardware.pinmap.UnknownKeyError: unknown key gpio.buzer: did you mean 'buzzer'? known keys: seat_leds, dealer_leds, buzzer, buzzer_kind, buttons, seats, pin_factory
        """
        if isinstance(table, PinMap):
            return table
        if not isinstance(table, Mapping):
            raise BadValueError(f"[gpio] must be a table, not {type(table).__name__}", key="gpio")
        for key in table:
            if key not in _KEYS:
                raise UnknownKeyError(f"unknown key gpio.{key}: {_suggest(str(key), _KEYS)}",
                                      key=f"gpio.{key}")

        if "seat_leds" not in table:
            raise SeatWithoutPinError(
                "gpio.seat_leds is missing: every seat needs an LED pin, e.g. seat_leds = [17, 27, 22, 23]",
                key="gpio.seat_leds")
        seat_leds = _pin_list(table["seat_leds"], "gpio.seat_leds")
        if not seat_leds:
            raise SeatWithoutPinError("gpio.seat_leds is empty: every seat needs an LED pin",
                                      key="gpio.seat_leds")

        if "seats" in table:
            seats = table["seats"]
            if isinstance(seats, bool) or not isinstance(seats, int) or seats < 1:
                raise BadValueError(f"gpio.seats = {seats!r}: expected a positive number of seats",
                                    key="gpio.seats")
            if seats > len(seat_leds):
                raise SeatWithoutPinError(
                    f"seat {len(seat_leds)} has no pin in gpio.seat_leds "
                    f"(gpio.seats = {seats}, but gpio.seat_leds lists {len(seat_leds)} pins)",
                    key="gpio.seat_leds")
            if seats < len(seat_leds):
                raise BadValueError(
                    f"gpio.seat_leds lists {len(seat_leds)} pins but gpio.seats = {seats}",
                    key="gpio.seats")

        dealer_leds = None
        if "dealer_leds" in table:
            dealer_leds = _pin_list(table["dealer_leds"], "gpio.dealer_leds")
            if len(dealer_leds) < len(seat_leds):
                n = len(dealer_leds)
                raise SeatWithoutPinError(
                    f"seat {n} has no pin in gpio.dealer_leds ({len(seat_leds)} seats in "
                    f"gpio.seat_leds, {n} pin{'s' if n != 1 else ''} in gpio.dealer_leds)",
                    key="gpio.dealer_leds")
            if len(dealer_leds) > len(seat_leds):
                raise BadValueError(
                    f"gpio.dealer_leds lists {len(dealer_leds)} pins for {len(seat_leds)} seats "
                    f"(gpio.seat_leds)", key="gpio.dealer_leds")

        buzzer = _pin(table["buzzer"], "gpio.buzzer") if "buzzer" in table else None

        buzzer_kind = table.get("buzzer_kind", "active")
        if buzzer_kind not in BUZZER_KINDS:
            raise BadValueError(
                f"gpio.buzzer_kind = {buzzer_kind!r}: expected one of {', '.join(map(repr, BUZZER_KINDS))}",
                key="gpio.buzzer_kind")

        buttons: dict[str, int] = {}
        raw_buttons = table.get("buttons", {})
        if not isinstance(raw_buttons, Mapping):
            raise BadValueError(
                f"gpio.buttons = {raw_buttons!r}: expected a table, e.g. buttons = {{ pass = 5, undo = 6 }}",
                key="gpio.buttons")
        for name, value in raw_buttons.items():
            if name not in BUTTON_NAMES:
                raise UnknownKeyError(
                    f"unknown key gpio.buttons.{name}: {_suggest(str(name), BUTTON_NAMES)}",
                    key=f"gpio.buttons.{name}")
            buttons[name] = _pin(value, f"gpio.buttons.{name}")

        pin_factory = table.get("pin_factory", "auto")
        if pin_factory not in PIN_FACTORIES:
            raise BadValueError(
                f"gpio.pin_factory = {pin_factory!r}: expected one of {', '.join(map(repr, PIN_FACTORIES))}",
                key="gpio.pin_factory")

        pm = cls(seat_leds=seat_leds, dealer_leds=dealer_leds, buzzer=buzzer,
                 buzzer_kind=buzzer_kind, buttons=buttons, pin_factory=pin_factory)
        seen: dict[int, str] = {}
        for key, pin in pm.pins().items():
            if pin in seen:
                raise PinUsedTwiceError(f"pin {pin} is used twice: {seen[pin]} and {key}",
                                        key=key, pin=pin)
            seen[pin] = key
        return pm
