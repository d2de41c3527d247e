"""The table's lights, buzzer and buttons, driven by the referee's verdicts.

:class:`Signals` owns every gpiozero device of the table and reacts to the
referee's output (a verdict dict and the state dict, exactly as
``shared/events.md`` defines them):

==========================  ====================================================
what happened               what the table shows
==========================  ====================================================
dealer                      the dealer's LED is steadily on (the seat LED, or the
                            seat's second "dealer" LED when ``dealer_leds`` is set)
trick won                   the winner's LED blinks 3 times quickly, then goes
                            back to what it showed (steady on for the dealer)
seat eliminated             its LED blinks twice slowly, then stays dark for the
                            rest of the game (also its dealer LED); the buzzer
                            sounds one long, falling beep
rejected play / breach      the buzzer beeps twice, short and low
                            (``ok: false``, or a verdict with ``flags``)
game over                   the winners' LEDs blink 5 times and then stay on, all
                            other LEDs go dark; the buzzer plays three short
                            rising beeps and a long one
==========================  ====================================================

Blinks and beeps never block the caller: they run in background threads
(``background=False`` runs them in the caller's thread, for tests and scripts).

>>> from hardware import Signals
>>> sig = Signals.from_config({"seat_leds": [17, 27, 22], "buzzer": 18}, mock=True)
>>> state = {"players": ["Ann", "Bob", "Cy"], "dealer": 1, "eliminated": [],
...          "game_over": False, "winners": [], "to_act": 2}
>>> sig.update({"ok": True, "code": "ok"}, state)
>>> [s["led"]["state"] for s in sig.describe()["seats"]]
['off', 'on', 'off']
>>> sig.update({"ok": False, "code": "not_your_turn"}, state)
>>> sig.wait(); sig.describe()["buzzer"]["last_pattern"]
True
'error'
>>> sig.close()
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Mapping

from gpiozero import LED, Button, Buzzer, TonalBuzzer
from gpiozero.pins.mock import MockFactory
from gpiozero.tones import Tone

from .factory import choose_pin_factory
from .patterns import (Player, Timings, buzzer_pattern, eliminated_pattern, trick_pattern,
                       winner_pattern)
from .pinmap import BUTTON_NAMES, PinMap, SeatWithoutPinError

__all__ = ["Signals"]

log = logging.getLogger(__name__)


class Signals:
    """LEDs per seat, an optional dealer LED per seat, a buzzer and buttons.

    :param pin_map: a :class:`~hardware.pinmap.PinMap` or the ``[gpio]`` table
        as a dict (validated; a bad map raises a
        :exc:`~hardware.pinmap.PinMapError`).
    :param pin_factory: a gpiozero pin factory; by default one is chosen by
        :func:`~hardware.factory.choose_pin_factory` from the pin map's
        ``pin_factory`` key (real pins on a Pi, mock pins elsewhere).
    :param mock: force gpiozero mock pins (the dashboard then shows simulated LEDs).
    :param background: run blinks and beeps in background threads (default);
        ``False`` plays them in the caller's thread.
    :param timings: a :class:`~hardware.patterns.Timings` (durations of blinks and beeps).

    Buttons call ``on_pass``, ``on_undo`` and ``on_confirm`` (assign any
    callable taking no arguments; ``None`` ignores the button), and
    ``when_changed`` is called whenever a pattern starts or ends or a steady
    LED changes, so a dashboard can push :meth:`describe` to phones.
    Callbacks run in gpiozero's or the signals' threads: keep them short.
    """

    def __init__(self, pin_map: PinMap | Mapping[str, Any], *, pin_factory=None, mock: bool | None = None,
                 background: bool = True, timings: Timings | None = None):
        self.pin_map = PinMap.from_config(pin_map)
        self.timings = timings or Timings()
        self._owns_factory = pin_factory is None
        if pin_factory is None:
            pin_factory = choose_pin_factory(self.pin_map.pin_factory, mock=mock, pwm=self.pin_map.needs_pwm)
        self.pin_factory = pin_factory
        self.on_pass: Callable[[], Any] | None = None
        self.on_undo: Callable[[], Any] | None = None
        self.on_confirm: Callable[[], Any] | None = None
        self.when_changed: Callable[[], Any] | None = None
        self._closed = False
        self._lock = threading.RLock()
        self._devices: list = []
        self._state: dict[str, Any] = {"players": [], "dealer": None, "eliminated": [],
                                       "game_over": False, "winners": []}
        try:
            self._build(background)
        except BaseException:
            self._close_devices()
            raise

    @classmethod
    def from_config(cls, pin_map: PinMap | Mapping[str, Any], pin_factory=None, **kwargs) -> "Signals":
        """Build the signals from the ``[gpio]`` table of the configuration.

        >>> sig = Signals.from_config({"seat_leds": [17, 27], "buttons": {"undo": 6}}, mock=True)
        >>> sig.seats, sorted(sig.buttons)
        (2, ['undo'])
        >>> sig.close()
        """
        return cls(pin_map, pin_factory=pin_factory, **kwargs)

    # -- construction ------------------------------------------------------------------------------

    def _device(self, device):
        self._devices.append(device)
        return device

    def _build(self, background: bool) -> None:
        pm, f = self.pin_map, self.pin_factory
        self.seat_leds = [self._device(LED(p, pin_factory=f)) for p in pm.seat_leds]
        self.dealer_leds = ([self._device(LED(p, pin_factory=f)) for p in pm.dealer_leds]
                            if pm.dealer_leds is not None else None)
        self._seat_players = [
            Player(self._led_writer(led), rest=False, background=background,
                   on_change=self._changed, name=f"seat{i}")
            for i, led in enumerate(self.seat_leds)]
        self._dealer_players = (
            [Player(self._led_writer(led), rest=False, background=background,
                    on_change=self._changed, name=f"dealer{i}")
             for i, led in enumerate(self.dealer_leds)]
            if self.dealer_leds is not None else None)

        self.buzzer: Buzzer | TonalBuzzer | None = None
        self._buzzer_player: Player | None = None
        if pm.buzzer is not None:
            if pm.buzzer_kind == "passive":
                self.buzzer = self._device(TonalBuzzer(pm.buzzer, mid_tone=Tone("A5"), octaves=1, pin_factory=f))
            else:
                self.buzzer = self._device(Buzzer(pm.buzzer, pin_factory=f))
            self._buzzer_player = Player(self._buzzer_writer(self.buzzer), rest=None, background=background,
                                         on_change=self._changed, name="buzzer")

        self.buttons: dict[str, Button] = {}
        for name, pin in pm.buttons.items():
            button = self._device(Button(pin, pull_up=True, bounce_time=0.05, pin_factory=f))
            button.when_pressed = self._button_handler(name)
            self.buttons[name] = button

    @staticmethod
    def _led_writer(led: LED) -> Callable[[Any], None]:
        def write(value: Any) -> None:
            if value:
                led.on()
            else:
                led.off()
        return write

    @staticmethod
    def _buzzer_writer(buzzer) -> Callable[[Any], None]:
        if isinstance(buzzer, TonalBuzzer):
            def write(note: Any) -> None:
                if note is None:
                    buzzer.stop()
                else:
                    buzzer.play(Tone(note))
        else:
            def write(note: Any) -> None:
                if note is None:
                    buzzer.off()
                else:
                    buzzer.on()
        return write

    def _button_handler(self, name: str) -> Callable[[], None]:
        def pressed() -> None:
            callback = getattr(self, f"on_{name}", None)
            if callback is None:
                return
            try:
                callback()
            except Exception:  # a broken callback must not kill gpiozero's event thread
                log.exception("the %s button's callback failed", name)
        return pressed

    # -- the public interface ----------------------------------------------------------------------

    @property
    def seats(self) -> int:
        """Number of seats with an LED."""
        return len(self.seat_leds)

    @property
    def simulated(self) -> bool:
        """True when the pins are gpiozero mock pins (no real GPIO)."""
        return isinstance(self.pin_factory, MockFactory)

    def check_players(self, players: list[Any]) -> None:
        """Raise :exc:`~hardware.pinmap.SeatWithoutPinError` if a seat of ``players`` has no LED.

        Call it when a game starts; :meth:`update` and :meth:`sync` call it too.

        >>> sig = Signals.from_config({"seat_leds": [17, 27]}, mock=True)
        >>> sig.check_players(["Ann", "Bob", "Cy"])
        Traceback (most recent call last):
            ...
        hardware.pinmap.SeatWithoutPinError: seat 2 (Cy) has no LED pin: gpio.seat_leds lists 2 pins for 3 players
        >>> sig.close()
        """
        if len(players) > self.seats:
            raise SeatWithoutPinError(
                f"seat {self.seats} ({players[self.seats]}) has no LED pin: gpio.seat_leds lists "
                f"{self.seats} pins for {len(players)} players", key="gpio.seat_leds")

    def sync(self, state: Mapping[str, Any]) -> None:
        """Show ``state`` steadily, without blinks or beeps (e.g. after a restart replays the log)."""
        self._apply(None, state, quiet=True)

    def update(self, verdict: Mapping[str, Any] | None, state: Mapping[str, Any]) -> None:
        """React to the referee's verdict on the latest event and the state after it.

        ``verdict`` keys used: ``ok``, ``trick_winner``, ``game_over``, ``flags``
        (``code`` and ``hand_result`` need no signal of their own: the dealer
        change shows the new hand).  ``state`` keys used: ``players``,
        ``dealer``, ``eliminated``, ``game_over``, ``winners``.  ``verdict`` may be
        ``None`` (state only).  Returns at once unless ``background=False``.
        """
        self._apply(verdict or {}, state, quiet=False)

    def _apply(self, verdict: Mapping[str, Any] | None, state: Mapping[str, Any], quiet: bool) -> None:
        with self._lock:
            if self._closed:  # a late verdict during shutdown: nothing left to show it on
                log.debug("signals closed: ignoring an update")
                return
            players = list(state.get("players") or [])
            self.check_players(players)
            n = len(players)
            dealer = state.get("dealer")
            eliminated = {s for s in (state.get("eliminated") or ()) if 0 <= s < n}
            game_over = bool(state.get("game_over"))
            winners = {s for s in (state.get("winners") or ()) if 0 <= s < n}
            was_out = set(self._state["eliminated"])
            was_over = bool(self._state["game_over"])
            self._state = {"players": players, "dealer": dealer, "eliminated": sorted(eliminated),
                           "game_over": game_over, "winners": sorted(winners)}

            # Steady values first: a pattern started below ends on them.
            for seat, player in enumerate(self._seat_players):
                player.rest = self._seat_rest(seat)
            for seat, player in enumerate(self._dealer_players or ()):
                player.rest = self._dealer_rest(seat)
            if quiet:
                return

            newly_out = sorted(eliminated - was_out)
            ended = game_over and (bool(verdict.get("game_over")) or not was_over)
            t = self.timings
            if ended:
                for seat in sorted(winners):
                    self._seat_players[seat].play("winner", winner_pattern(t))
            else:
                trick = verdict.get("trick_winner")
                if isinstance(trick, int) and 0 <= trick < n and trick not in eliminated:
                    self._seat_players[trick].play("trick", trick_pattern(t))
            for seat in newly_out:
                if not (ended and seat in winners):
                    self._seat_players[seat].play("eliminated", eliminated_pattern(t))

            sounds = []
            if verdict.get("ok") is False or verdict.get("flags"):
                sounds.append("error")
            if newly_out:
                sounds.append("eliminated")
            if ended:
                sounds.append("game_over")
            self.beep(*sounds)

    def _seat_rest(self, seat: int) -> bool:
        st = self._state
        if seat >= len(st["players"]):
            return False
        if st["game_over"]:
            return seat in st["winners"]
        if seat in st["eliminated"]:
            return False
        return self._dealer_players is None and seat == st["dealer"]

    def _dealer_rest(self, seat: int) -> bool:
        st = self._state
        return (seat < len(st["players"]) and not st["game_over"]
                and seat not in st["eliminated"] and seat == st["dealer"])

    def beep(self, *patterns: str) -> None:
        """Sound buzzer patterns one after the other: ``"error"``, ``"eliminated"``, ``"game_over"``.

        Does nothing without a buzzer; a new call cuts a playing one short.
        ``describe()["buzzer"]["last_pattern"]`` names the last one, e.g. ``"eliminated+game_over"``.
        """
        steps: list = []
        for i, name in enumerate(patterns):
            if i:
                steps.append((None, self.timings.pattern_gap))
            steps.extend(buzzer_pattern(name, self.timings))  # ValueError for an unknown name
        if self._buzzer_player is None or not steps:
            return
        self._buzzer_player.play("+".join(patterns), steps)

    def flash(self, seat: int, *, dealer: bool = False, seconds: float = 0.6) -> None:
        """Light one seat's LED (or its dealer LED) once for ``seconds``: a wiring check.

        >>> sig = Signals.from_config({"seat_leds": [17, 27]}, mock=True, background=False)
        >>> sig.flash(1, seconds=0); [s.state for s in sig.pin_factory.pin(27).states]
        [False, True, False]
        >>> sig.close()
        """
        if not 0 <= seat < self.seats:
            raise IndexError(f"no seat {seat}: the pin map has seats 0..{self.seats - 1}")
        if dealer and self._dealer_players is None:
            raise ValueError("no dealer LEDs in the pin map (gpio.dealer_leds)")
        player = (self._dealer_players if dealer else self._seat_players)[seat]
        player.play("test", [(True, seconds), (False, 0.0)])

    def lamp_test(self, seconds: float = 0.3) -> None:
        """Light every LED in turn and chirp the buzzer once: a wiring check at start-up."""
        for seat in range(self.seats):
            self.flash(seat, seconds=seconds)
            self._seat_players[seat].wait()
            if self._dealer_players is not None:
                self.flash(seat, dealer=True, seconds=seconds)
                self._dealer_players[seat].wait()
        if self._buzzer_player is not None:
            self._buzzer_player.play("test", [("A5", self.timings.beep_short)])

    def press(self, name: str) -> None:
        """Simulate a press and release of a button (mock pins only), e.g. from the dashboard.

        >>> sig = Signals.from_config({"seat_leds": [17], "buttons": {"pass": 5}}, mock=True)
        >>> sig.on_pass = lambda: print("pass!")
        >>> sig.press("pass")
        pass!
        >>> sig.close()
        """
        if name not in BUTTON_NAMES:
            raise ValueError(f"unknown button {name!r}: expected one of {', '.join(BUTTON_NAMES)}")
        if name not in self.buttons:
            raise KeyError(f"no {name} button in gpio.buttons")
        if not self.simulated:
            raise RuntimeError("press() simulates a button on mock pins only; press the real one")
        pin = self.buttons[name].pin
        pin.drive_low()
        pin.drive_high()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every blink and beep has finished (True) or ``timeout`` passed (False)."""
        players = self._seat_players + (self._dealer_players or [])
        if self._buzzer_player is not None:
            players.append(self._buzzer_player)
        return all([p.wait(timeout) for p in players])

    def describe(self) -> dict[str, Any]:
        """A JSON-ready snapshot of every LED, the buzzer and the buttons, for the dashboard.

        ``seats`` lists every seat with an LED: ``role`` is ``"dealer"``,
        ``"eliminated"``, ``"winner"``, ``"player"`` or ``"unused"`` (no player in
        the game); each LED is ``{"pin", "lit", "state", "pattern"}`` with
        ``state`` one of ``"on"``, ``"off"``, ``"blinking"`` and ``pattern`` the
        running pattern (``"trick"``, ``"eliminated"``, ``"winner"``) or None.

        >>> sig = Signals.from_config({"seat_leds": [17], "buzzer": 18, "buttons": {"undo": 6}}, mock=True)
        >>> d = sig.describe()
        >>> d["seats"]
        [{'seat': 0, 'role': 'unused', 'led': {'pin': 17, 'lit': False, 'state': 'off', 'pattern': None}, 'dealer_led': None}]
        >>> d["buzzer"]
        {'pin': 18, 'kind': 'active', 'sounding': False, 'state': 'off', 'pattern': None, 'last_pattern': None}
        >>> d["buttons"], d["simulated"]
        ({'undo': {'pin': 6, 'pressed': False}}, True)
        >>> sig.close()
        """
        # No lock here: when_changed may call describe() from a pattern thread
        # while update() holds the lock and waits for that thread to end.
        # _state is replaced, never mutated, so one read gives a consistent view.
        st = self._state
        seats = []
        for seat in range(self.seats):
            if seat >= len(st["players"]):
                role = "unused"
            elif st["game_over"] and seat in st["winners"]:
                role = "winner"
            elif seat in st["eliminated"]:
                role = "eliminated"
            elif seat == st["dealer"] and not st["game_over"]:
                role = "dealer"
            else:
                role = "player"
            seats.append({
                "seat": seat,
                "role": role,
                "led": self._led_info(self.pin_map.seat_leds[seat], self.seat_leds[seat],
                                      self._seat_players[seat]),
                "dealer_led": (self._led_info(self.pin_map.dealer_leds[seat], self.dealer_leds[seat],
                                              self._dealer_players[seat])
                               if self._dealer_players is not None else None),
            })
        buzzer = None
        if self.buzzer is not None:
            player = self._buzzer_player
            buzzer = {"pin": self.pin_map.buzzer, "kind": self.pin_map.buzzer_kind,
                      "sounding": (not self._closed) and bool(self.buzzer.is_active),
                      "state": "beeping" if player.pattern else "off",
                      "pattern": player.pattern, "last_pattern": player.last_pattern}
        buttons = {name: {"pin": self.pin_map.buttons[name],
                          "pressed": (not self._closed) and bool(button.is_pressed)}
                   for name, button in self.buttons.items()}
        return {"simulated": self.simulated, "pin_factory": type(self.pin_factory).__name__,
                "seats": seats, "buzzer": buzzer, "buttons": buttons}

    def _led_info(self, pin: int, led: LED, player: Player) -> dict[str, Any]:
        pattern = player.pattern
        lit = (not self._closed) and bool(led.is_lit)
        state = "blinking" if pattern else ("on" if player.rest else "off")
        return {"pin": pin, "lit": lit, "state": state, "pattern": pattern}

    def _changed(self) -> None:
        callback = self.when_changed
        if callback is not None:
            try:
                callback()
            except Exception:
                log.exception("the signals' when_changed callback failed")

    # -- shutting down ------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop every pattern, switch everything off and release the pins.  Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        players = list(getattr(self, "_seat_players", [])) + list(getattr(self, "_dealer_players", None) or [])
        if getattr(self, "_buzzer_player", None) is not None:
            players.append(self._buzzer_player)
        for player in players:
            player.cancel()
        self._close_devices()

    def _close_devices(self) -> None:
        for device in reversed(self._devices):
            try:
                if isinstance(device, TonalBuzzer):
                    device.stop()
                elif isinstance(device, (LED, Buzzer)):
                    device.off()
                device.close()
            except Exception:  # closing must go on for the other pins
                log.exception("closing %r failed", device)
        self._devices.clear()
        if self._owns_factory and self.pin_factory is not None:
            try:
                self.pin_factory.close()
            except Exception:
                log.exception("closing the pin factory failed")

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> "Signals":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.seats} seats"
        return f"<hardware.Signals {state} on {type(self.pin_factory).__name__}>"
