"""Choosing the gpiozero pin factory: real pins on a Pi, mock pins elsewhere.

On a Raspberry Pi the LEDs are driven through lgpio (the only library that
works on every model, the Pi 5 included).  Anywhere else (a laptop, CI) there
is no GPIO: gpiozero would raise ``BadPinFactory`` at the first device, so we
use gpiozero's :class:`~gpiozero.pins.mock.MockFactory` instead and the
dashboard shows the simulated LEDs.

>>> f = choose_pin_factory(mock=True)
>>> type(f).__name__
'MockFactory'
>>> f.pin_class.__name__
'MockPin'
>>> choose_pin_factory(mock=True, pwm=True).pin_class.__name__   # for a passive buzzer
'MockPWMPin'
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from gpiozero.pins.mock import MockFactory, MockPin, MockPWMPin

__all__ = ["choose_pin_factory", "is_raspberry_pi", "GpioUnavailableError"]

log = logging.getLogger(__name__)

_FACTORIES = {
    "lgpio": "gpiozero.pins.lgpio:LGPIOFactory",
    "rpigpio": "gpiozero.pins.rpigpio:RPiGPIOFactory",
    "pigpio": "gpiozero.pins.pigpio:PiGPIOFactory",
    "native": "gpiozero.pins.native:NativeFactory",
}
_MODEL_FILES = ("/proc/device-tree/model", "/sys/firmware/devicetree/base/model")


class GpioUnavailableError(RuntimeError):
    """A real pin factory was asked for (``pin_factory = "lgpio"``) but cannot load."""


def is_raspberry_pi(model_files: tuple[str, ...] = _MODEL_FILES) -> bool:
    """True when the device tree says this is a Raspberry Pi.

    >>> is_raspberry_pi(model_files=("/nonexistent",))
    False
    """
    for name in model_files:
        try:
            model = Path(name).read_bytes()
        except OSError:
            continue
        if b"Raspberry Pi" in model:
            return True
    return False


def _mock(pwm: bool) -> MockFactory:
    return MockFactory(pin_class=MockPWMPin if pwm else MockPin)


def _load(name: str):
    module_name, cls_name = _FACTORIES[name].split(":")
    try:
        module = __import__(module_name, fromlist=(cls_name,))
        return getattr(module, cls_name)()
    except Exception as exc:  # ImportError, PinFactoryFallback, lgpio.error, ...
        hint = " (on Raspberry Pi OS: sudo apt install python3-lgpio, and a venv made with " \
               "--system-site-packages)" if name == "lgpio" else ""
        raise GpioUnavailableError(f"cannot use the {name} pin factory: {exc}{hint}") from exc


def choose_pin_factory(kind: str = "auto", *, mock: bool | None = None, pwm: bool = False,
                       model_files: tuple[str, ...] = _MODEL_FILES):
    """Return a gpiozero pin factory.

    * ``mock=True`` or ``kind="mock"``: a fresh :class:`MockFactory` (with
      :class:`MockPWMPin` pins when ``pwm`` is true, as ``TonalBuzzer`` needs).
    * ``kind="lgpio"`` (or ``"rpigpio"``, ``"pigpio"``, ``"native"``): that
      factory, or :exc:`GpioUnavailableError` with the reason.
    * ``kind="auto"`` (default): ``$GPIOZERO_PIN_FACTORY`` if set (gpiozero's own
      convention); else lgpio on a Raspberry Pi (falling back to the other real
      factories); else, with no GPIO, mock pins and a log line.  Never raises
      on a laptop.

    >>> type(choose_pin_factory(model_files=())).__name__     # not a Pi
    'MockFactory'
    """
    if mock or kind == "mock":
        return _mock(pwm)
    if kind in _FACTORIES:
        return _load(kind)
    if kind != "auto":
        raise ValueError(f"unknown pin factory {kind!r}: expected auto, mock, {', '.join(_FACTORIES)}")
    env = os.environ.get("GPIOZERO_PIN_FACTORY", "").strip().lower()
    if env:
        if env == "mock":
            return _mock(pwm or os.environ.get("GPIOZERO_MOCK_PIN_CLASS", "").lower() == "mockpwmpin")
        if env in _FACTORIES:
            return _load(env)
        raise GpioUnavailableError(f"GPIOZERO_PIN_FACTORY={env!r} is not one of mock, {', '.join(_FACTORIES)}")
    if is_raspberry_pi(model_files):
        errors = []
        for name in _FACTORIES:
            try:
                return _load(name)
            except GpioUnavailableError as exc:
                errors.append(str(exc))
        raise GpioUnavailableError("this is a Raspberry Pi but no pin factory loads:\n  " + "\n  ".join(errors))
    log.info("no GPIO on this machine: using gpiozero mock pins (simulated LEDs)")
    return _mock(pwm)
