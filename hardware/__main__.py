"""Wiring check: ``python -m hardware [--config FILE] [--mock] [--buttons SECONDS] [--json]``.

Lights every LED in seat order (seat LED, then its dealer LED), plays the
three buzzer patterns, then for ``--buttons`` seconds prints each button press.
Stop the service first (``sudo systemctl stop cardtable``): it holds the pins.

>>> main(["--config", "systemd/config.example.toml", "--mock", "--buttons", "0", "--fast"])
pins: seat LEDs 17 27 22 23, dealer LEDs 24 25 12 16, buzzer 18 (active), buttons pass=5 undo=6 confirm=13 [MockFactory]
seat 0: LED on pin 17
seat 0: dealer LED on pin 24
seat 1: LED on pin 27
seat 1: dealer LED on pin 25
seat 2: LED on pin 22
seat 2: dealer LED on pin 12
seat 3: LED on pin 23
seat 3: dealer LED on pin 16
buzzer: error (rejected play or breach)
buzzer: eliminated
buzzer: game_over
0
"""

from __future__ import annotations

import argparse
import json
import sys
import threading

from .patterns import Timings
from .pinmap import PinMapError
from .signals import Signals

_LABELS = {"error": "error (rejected play or breach)", "eliminated": "eliminated", "game_over": "game_over"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hardware", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="/etc/cardtable/config.toml", help="the TOML configuration")
    parser.add_argument("--mock", action="store_true", help="simulated pins, even on a Pi")
    parser.add_argument("--buttons", type=float, default=10.0, metavar="SECONDS",
                        help="how long to listen for button presses (default 10)")
    parser.add_argument("--fast", action="store_true", help=argparse.SUPPRESS)  # for the doctest
    parser.add_argument("--json", action="store_true", help="print the pin snapshot as JSON at the end")
    args = parser.parse_args(argv)

    from cardtable.config import ConfigError, load_config
    try:
        config = load_config(args.config)
        signals = Signals.from_config(config.gpio, mock=True if args.mock else None, background=False,
                                      timings=Timings().scaled(0 if args.fast else 1))
    except (ConfigError, PinMapError) as exc:
        print(f"{args.config}: {exc}", file=sys.stderr)
        return 2

    pm = signals.pin_map
    with signals:
        parts = ["seat LEDs " + " ".join(map(str, pm.seat_leds))]
        if pm.dealer_leds:
            parts.append("dealer LEDs " + " ".join(map(str, pm.dealer_leds)))
        if pm.buzzer is not None:
            parts.append(f"buzzer {pm.buzzer} ({pm.buzzer_kind})")
        if pm.buttons:
            parts.append("buttons " + " ".join(f"{k}={v}" for k, v in pm.buttons.items()))
        print(f"pins: {', '.join(parts)} [{type(signals.pin_factory).__name__}]")

        seconds = 0.0 if args.fast else 0.6
        for seat in range(signals.seats):
            print(f"seat {seat}: LED on pin {pm.seat_leds[seat]}", flush=True)
            signals.flash(seat, seconds=seconds)
            if pm.dealer_leds:
                print(f"seat {seat}: dealer LED on pin {pm.dealer_leds[seat]}", flush=True)
                signals.flash(seat, dealer=True, seconds=seconds)
        if pm.buzzer is not None:
            for name in ("error", "eliminated", "game_over"):
                print(f"buzzer: {_LABELS[name]}", flush=True)
                signals.beep(name)
                threading.Event().wait(0 if args.fast else 0.5)

        if pm.buttons and args.buttons > 0:
            print(f"press the buttons ({', '.join(pm.buttons)}) within {args.buttons:g} s", flush=True)
            for name in pm.buttons:
                setattr(signals, f"on_{name}", lambda name=name: print(f"button: {name}", flush=True))
            threading.Event().wait(args.buttons)
        if args.json:
            print(json.dumps(signals.describe(), indent=2))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
