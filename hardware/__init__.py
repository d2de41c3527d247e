"""GPIO signals for the card table: an LED per seat, a buzzer, optional buttons.

The one class most code needs is :class:`Signals`::

    from hardware import Signals

    signals = Signals.from_config(config["gpio"])      # validated pin map; mock pins off the Pi
    signals.on_undo = lambda: table.append({"event": "undo"})
    signals.update(verdict, state)                     # after every event the referee judged
    snapshot = signals.describe()                      # simulated LEDs for the dashboard
    signals.close()

See ``docs/hardware.md`` for the wiring and the configuration keys.
"""

from .factory import GpioUnavailableError, choose_pin_factory, is_raspberry_pi
from .patterns import BUZZER_PATTERNS, Timings
from .pinmap import (BUTTON_NAMES, BUZZER_KINDS, PIN_FACTORIES, BadValueError, PinMap, PinMapError,
                     PinOutOfRangeError, PinUsedTwiceError, SeatWithoutPinError, UnknownKeyError)
from .signals import Signals

__all__ = [
    "Signals",
    "PinMap",
    "Timings",
    "choose_pin_factory",
    "is_raspberry_pi",
    "PinMapError",
    "PinUsedTwiceError",
    "SeatWithoutPinError",
    "PinOutOfRangeError",
    "UnknownKeyError",
    "BadValueError",
    "GpioUnavailableError",
    "BUTTON_NAMES",
    "BUZZER_KINDS",
    "BUZZER_PATTERNS",
    "PIN_FACTORIES",
]
