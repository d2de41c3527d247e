"""Signals on gpiozero's mock pins: the exact pin-state sequences for every table event.

Patterns run in the test's thread (``background=False``) with every duration
scaled to zero, so each pin still goes through every state (a MockPin records
each change) but no test sleeps or depends on timing.
"""

from __future__ import annotations

import threading

import pytest
from gpiozero import LED
from gpiozero.pins.mock import MockFactory, MockPWMPin

from hardware import (BadValueError, GpioUnavailableError, PinMap, PinMapError, PinOutOfRangeError,
                      PinUsedTwiceError, SeatWithoutPinError, Signals, Timings, UnknownKeyError,
                      choose_pin_factory, is_raspberry_pi)

SEATS = [17, 27, 22, 23]
DEALERS = [24, 25, 12, 16]
BUZZER = 18
INSTANT = Timings().scaled(0)
OFF, ON = False, True


def states(pin) -> list:
    """Every state the pin went through since it was created or cleared (bools, or floats for PWM)."""
    return [s.state for s in pin.states]


def clear(factory, *pins) -> None:
    for p in pins:
        factory.pin(p).clear_states()


def state(players=4, dealer=0, eliminated=(), game_over=False, winners=(), to_act=None) -> dict:
    names = ["Ann", "Bob", "Cy", "Dee", "Eve"][:players]
    return {"game": "khanhoo", "players": names, "hand_number": 1, "dealer": dealer,
            "to_act": to_act, "scores": [0] * players, "eliminated": list(eliminated),
            "game_over": game_over, "winners": list(winners)}


def ok(**extra) -> dict:
    return {"index": 5, "event": "play", "ok": True, "code": "ok", "message": "", **extra}


@pytest.fixture
def factory():
    f = MockFactory()
    yield f
    f.reset()


@pytest.fixture
def sig(factory):
    s = Signals.from_config({"seat_leds": SEATS, "buzzer": BUZZER}, pin_factory=factory,
                            background=False, timings=INSTANT)
    s.update(None, state(dealer=0))
    clear(factory, *SEATS, BUZZER)
    yield s
    s.close()


@pytest.fixture
def sig2(factory):
    """Signals with a second (dealer) LED per seat."""
    s = Signals.from_config({"seat_leds": SEATS, "dealer_leds": DEALERS, "buzzer": BUZZER},
                            pin_factory=factory, background=False, timings=INSTANT)
    s.update(None, state(dealer=0))
    clear(factory, *SEATS, *DEALERS, BUZZER)
    yield s
    s.close()


# -- a game, event by event ------------------------------------------------------------------------

def test_first_state_lights_the_dealer_steadily(factory):
    with Signals.from_config({"seat_leds": SEATS, "buzzer": BUZZER}, pin_factory=factory,
                             background=False, timings=INSTANT) as s:
        s.update({"index": 0, "event": "new_game", "ok": True, "code": "ok"}, state(dealer=2))
        assert [states(factory.pin(p)) for p in SEATS] == [[OFF], [OFF], [OFF, ON], [OFF]]
        assert states(factory.pin(BUZZER)) == [OFF]


def test_trick_won_blinks_the_winner_three_times_then_off(sig, factory):
    sig.update(ok(trick_winner=2), state(dealer=0))
    assert states(factory.pin(22)) == [OFF, ON, OFF, ON, OFF, ON, OFF]
    # nobody else moves, the dealer stays lit, the buzzer stays silent
    assert states(factory.pin(17)) == [ON]
    assert states(factory.pin(27)) == [OFF]
    assert states(factory.pin(23)) == [OFF]
    assert states(factory.pin(BUZZER)) == [OFF]


def test_trick_won_by_the_dealer_blinks_and_returns_to_steady_on(sig, factory):
    sig.update(ok(trick_winner=0), state(dealer=0))
    assert states(factory.pin(17)) == [ON, OFF, ON, OFF, ON, OFF, ON]


def test_a_play_that_wins_nothing_changes_no_pin(sig, factory):
    sig.update(ok(), state(dealer=0, to_act=1))
    assert [states(factory.pin(p)) for p in SEATS] == [[ON], [OFF], [OFF], [OFF]]
    assert states(factory.pin(BUZZER)) == [OFF]


def test_hand_end_moves_the_dealer_light(sig, factory):
    # the last trick of the hand: seat 3 wins it, the hand is scored, seat 1 deals next
    sig.update(ok(trick_winner=3, hand_result=[{"points": 1}] * 4), state(dealer=1))
    assert states(factory.pin(17)) == [ON, OFF]
    assert states(factory.pin(27)) == [OFF, ON]
    assert states(factory.pin(22)) == [OFF]
    assert states(factory.pin(23)) == [OFF, ON, OFF, ON, OFF, ON, OFF]
    assert states(factory.pin(BUZZER)) == [OFF]


def test_hand_end_won_by_the_old_dealer_ends_dark(sig, factory):
    sig.update(ok(trick_winner=0, hand_result=[{}] * 4), state(dealer=1))
    # the dealer light goes out with the hand, then the trick blinks and ends on the new steady value: off
    assert states(factory.pin(17)) == [ON, OFF] + [ON, OFF] * 3
    assert states(factory.pin(27)) == [OFF, ON]


def test_dealer_leds_carry_the_dealer_and_seat_leds_only_blink(sig2, factory):
    sig2.update(ok(trick_winner=0, hand_result=[{}] * 4), state(dealer=1))
    assert states(factory.pin(24)) == [ON, OFF]
    assert states(factory.pin(25)) == [OFF, ON]
    assert states(factory.pin(17)) == [OFF, ON, OFF, ON, OFF, ON, OFF]
    assert states(factory.pin(27)) == [OFF]
    d = sig2.describe()["seats"]
    assert d[1]["role"] == "dealer" and d[1]["dealer_led"]["state"] == "on" and d[1]["led"]["state"] == "off"


def test_elimination_blinks_slowly_then_dark_and_sounds_one_long_beep(sig, factory):
    sig.update(ok(hand_result=[{}] * 4), state(dealer=1, eliminated=[2]))
    assert states(factory.pin(22)) == [OFF, ON, OFF, ON, OFF]
    assert states(factory.pin(BUZZER)) == [OFF, ON, OFF]
    assert sig.describe()["buzzer"]["last_pattern"] == "eliminated"
    # later events: the eliminated seat stays dark, even if a (bogus) trick names it
    clear(factory, 22, BUZZER)
    sig.update(ok(trick_winner=2), state(dealer=1, eliminated=[2]))
    assert states(factory.pin(22)) == [OFF]
    assert states(factory.pin(BUZZER)) == [OFF]
    assert sig.describe()["seats"][2]["role"] == "eliminated"


def test_eliminated_dealer_loses_its_dealer_light(sig2, factory):
    sig2.update(ok(hand_result=[{}] * 4), state(dealer=0, eliminated=[0]))
    assert states(factory.pin(24)) == [ON, OFF]
    assert states(factory.pin(17)) == [OFF, ON, OFF, ON, OFF]


def test_undoing_an_elimination_restores_the_seat(sig, factory):
    sig.update(ok(), state(dealer=2, eliminated=[2]))
    clear(factory, 22, BUZZER)
    sig.update({"event": "undo", "ok": True, "code": "ok"}, state(dealer=2))
    assert states(factory.pin(22)) == [OFF, ON]
    assert states(factory.pin(BUZZER)) == [OFF]


def test_game_end_blinks_the_winners_then_leaves_them_lit(sig, factory):
    sig.update(ok(), state(dealer=1, eliminated=[0, 3]))
    clear(factory, *SEATS, BUZZER)
    sig.update(ok(trick_winner=1, hand_result=[{}] * 4, game_over=True),
               state(dealer=1, eliminated=[0, 3], game_over=True, winners=[2]))
    assert states(factory.pin(22)) == [OFF] + [ON, OFF] * 5 + [ON]
    assert states(factory.pin(27)) == [ON, OFF]          # the dealer's light goes out; no trick blink
    assert states(factory.pin(17)) == [OFF]
    assert states(factory.pin(23)) == [OFF]
    # three short rising beeps and a long one
    assert states(factory.pin(BUZZER)) == [OFF, ON, OFF, ON, OFF, ON, OFF, ON, OFF]
    roles = [s["role"] for s in sig.describe()["seats"]]
    assert roles == ["eliminated", "player", "winner", "eliminated"]


def test_last_elimination_ending_the_game_sounds_both_patterns_in_order(sig, factory):
    sig.update(ok(hand_result=[{}] * 4, game_over=True),
               state(dealer=0, eliminated=[1, 2, 3], game_over=True, winners=[0]))
    #                                  elimination | gap | game over
    assert states(factory.pin(BUZZER)) == [OFF, ON, OFF, ON, OFF, ON, OFF, ON, OFF, ON, OFF]
    for pin in (27, 22, 23):
        assert states(factory.pin(pin)) == [OFF, ON, OFF, ON, OFF]
    assert states(factory.pin(17)) == [ON] + [OFF, ON] * 5


def test_new_game_after_game_over_clears_the_table(sig, factory):
    sig.update(ok(game_over=True), state(dealer=0, game_over=True, winners=[3]))
    clear(factory, *SEATS, BUZZER)
    sig.update({"event": "new_game", "ok": True, "code": "ok"}, state(players=3, dealer=1))
    assert [states(factory.pin(p)) for p in SEATS] == [[OFF], [OFF, ON], [OFF], [ON, OFF]]
    assert states(factory.pin(BUZZER)) == [OFF]
    assert sig.describe()["seats"][3]["role"] == "unused"


def test_rejected_play_beeps_twice_and_changes_no_light(sig, factory):
    sig.update({"index": 7, "event": "play", "ok": False, "code": "not_your_turn", "message": "..."},
               state(dealer=0, to_act=1))
    assert states(factory.pin(BUZZER)) == [OFF, ON, OFF, ON, OFF]
    assert [states(factory.pin(p)) for p in SEATS] == [[ON], [OFF], [OFF], [OFF]]
    assert sig.describe()["buzzer"]["last_pattern"] == "error"


def test_flagged_breach_beeps_twice_and_the_trick_still_blinks(sig, factory):
    flags = [{"code": "must_follow_suit", "seat": 1, "refers_to": 4}]
    sig.update(ok(trick_winner=3, flags=flags), state(dealer=0))
    assert states(factory.pin(BUZZER)) == [OFF, ON, OFF, ON, OFF]
    assert states(factory.pin(23)) == [OFF, ON, OFF, ON, OFF, ON, OFF]


def test_the_three_buzzer_patterns_differ(factory):
    seqs = {}
    for name in ("error", "eliminated", "game_over"):
        with Signals.from_config({"seat_leds": [17], "buzzer": BUZZER}, pin_factory=factory,
                                 background=False, timings=INSTANT) as s:
            factory.pin(BUZZER).clear_states()
            s.beep(name)
            seqs[name] = states(factory.pin(BUZZER))
    assert seqs == {"error": [OFF, ON, OFF, ON, OFF], "eliminated": [OFF, ON, OFF],
                    "game_over": [OFF, ON, OFF, ON, OFF, ON, OFF, ON, OFF]}
    with Signals.from_config({"seat_leds": [17]}, pin_factory=factory) as s:
        s.beep("error")                     # no buzzer configured: nothing to do
        with pytest.raises(ValueError, match="unknown buzzer pattern 'fanfare'"):
            s.beep("fanfare")


def test_sync_shows_state_without_blinks_or_beeps(sig, factory):
    sig.sync(state(dealer=3, eliminated=[1], game_over=False))
    assert [states(factory.pin(p)) for p in SEATS] == [[ON, OFF], [OFF], [OFF], [OFF, ON]]
    assert states(factory.pin(BUZZER)) == [OFF]
    # the elimination is remembered: the next update does not announce it again
    sig.update(ok(), state(dealer=3, eliminated=[1]))
    assert states(factory.pin(BUZZER)) == [OFF]


# -- passive buzzer: tones -------------------------------------------------------------------------

class ToneRecordingPin(MockPWMPin):
    """A MockPWMPin that also records every frequency it is set to."""

    def __init__(self, factory, info):
        super().__init__(factory, info)
        self.frequencies = []

    def _set_frequency(self, value):
        super()._set_frequency(value)
        self.frequencies.append(value)


def test_passive_buzzer_plays_distinct_tunes():
    factory = MockFactory(pin_class=ToneRecordingPin)
    with Signals.from_config({"seat_leds": SEATS, "buzzer": BUZZER, "buzzer_kind": "passive"},
                             pin_factory=factory, background=False, timings=INSTANT) as s:
        pin = factory.pin(BUZZER)
        s.update(None, state())
        pin.frequencies.clear()
        s.update({"ok": False, "code": "does_not_beat"}, state())
        assert [round(f) if f else f for f in pin.frequencies] == [440, None, 440, None]
        pin.frequencies.clear()
        s.update(ok(), state(eliminated=[3]))
        assert [round(f) if f else f for f in pin.frequencies] == [659, 554, 440, None]
        pin.frequencies.clear()
        s.update(ok(game_over=True), state(eliminated=[3], game_over=True, winners=[1]))
        assert [round(f) if f else f for f in pin.frequencies] == [440, None, 554, None, 659, None, 880, None]
        assert s.describe()["buzzer"]["kind"] == "passive"
    factory.reset()


# -- threads: update never blocks --------------------------------------------------------------------

def test_background_update_returns_while_the_blink_goes_on(factory):
    slow = Timings(trick_on=3600, trick_off=3600)
    s = Signals.from_config({"seat_leds": SEATS}, pin_factory=factory, timings=slow)
    s.update(None, state(dealer=0))
    caller = threading.Thread(target=s.update, args=(ok(trick_winner=2), state(dealer=0)))
    caller.start()
    caller.join(30)   # a guard against a hang, not a timing measurement: an hour-long blink is under way
    assert not caller.is_alive()
    led = s.describe()["seats"][2]["led"]
    assert led["state"] == "blinking" and led["pattern"] == "trick"
    assert s.wait(timeout=0) is False
    s.close()                         # cancels the blink at once and switches the LED off
    assert states(factory.pin(22))[-1] == OFF
    assert s.describe()["seats"][2]["led"]["lit"] is False


def test_background_patterns_finish_with_the_same_sequence(factory):
    with Signals.from_config({"seat_leds": SEATS, "buzzer": BUZZER}, pin_factory=factory,
                             timings=Timings().scaled(0.01)) as s:
        seen = []
        s.when_changed = lambda: seen.append(s.describe()["seats"][1]["led"]["state"])
        s.update(None, state(dealer=1))
        s.update({"ok": False, "code": "x", "trick_winner": 1}, state(dealer=1))
        assert s.wait(timeout=30)
        assert states(factory.pin(27)) == [OFF, ON, OFF, ON, OFF, ON, OFF, ON]
        assert states(factory.pin(BUZZER)) == [OFF, ON, OFF, ON, OFF]
        assert "blinking" in seen and seen[-1] == "on"
        assert s.describe()["seats"][1]["led"] == {"pin": 27, "lit": True, "state": "on", "pattern": None}


# -- buttons ----------------------------------------------------------------------------------------

def test_buttons_call_their_callbacks(factory):
    with Signals.from_config({"seat_leds": [17], "buttons": {"pass": 5, "undo": 6, "confirm": 13}},
                             pin_factory=factory) as s:
        calls = []
        s.on_pass = lambda: calls.append("pass")
        s.on_undo = lambda: calls.append("undo")
        factory.pin(5).drive_low()          # pull-up: pressed = pulled to ground
        assert s.describe()["buttons"]["pass"] == {"pin": 5, "pressed": True}
        factory.pin(5).drive_high()
        factory.pin(6).drive_low()
        factory.pin(6).drive_high()
        factory.pin(13).drive_low()         # no callback assigned: ignored
        factory.pin(13).drive_high()
        s.press("undo")
        assert calls == ["pass", "undo", "undo"]


def test_a_failing_button_callback_is_logged_not_raised(factory, caplog):
    with Signals.from_config({"seat_leds": [17], "buttons": {"confirm": 13}}, pin_factory=factory) as s:
        s.on_confirm = lambda: 1 / 0
        s.press("confirm")
        assert "confirm button's callback failed" in caplog.text
        with pytest.raises(KeyError):
            s.press("pass")


# -- describe, close -------------------------------------------------------------------------------

def test_describe_is_a_json_snapshot(sig, factory):
    import json
    d = sig.describe()
    json.dumps(d)
    assert d["simulated"] is True and d["pin_factory"] == "MockFactory"
    assert d["seats"][0] == {"seat": 0, "role": "dealer",
                             "led": {"pin": 17, "lit": True, "state": "on", "pattern": None},
                             "dealer_led": None}
    assert d["buzzer"] == {"pin": 18, "kind": "active", "sounding": False, "state": "off",
                           "pattern": None, "last_pattern": None}


def test_close_switches_off_and_releases_the_pins(factory):
    s = Signals.from_config({"seat_leds": SEATS, "buzzer": BUZZER, "buttons": {"pass": 5}},
                            pin_factory=factory, background=False, timings=INSTANT)
    s.update(None, state(dealer=0))
    s.close()
    s.close()                                   # twice is fine
    assert factory.pin(17).state == OFF and factory.pin(17).function == "input"
    LED(17, pin_factory=factory).close()        # the pin is free again
    s.update(ok(trick_winner=1), state())       # a late verdict after close is ignored
    assert "closed" in repr(s)


def test_too_many_players_for_the_leds_is_a_clear_error(sig):
    with pytest.raises(SeatWithoutPinError, match=r"seat 4 \(Eve\) has no LED pin"):
        sig.update(ok(), state(players=5))


# -- the pin map ------------------------------------------------------------------------------------

@pytest.mark.parametrize("table, error, key, pin, message", [
    ({"seat_leds": [17, 27, 17]}, PinUsedTwiceError, "gpio.seat_leds[2]", 17,
     "pin 17 is used twice: gpio.seat_leds[0] and gpio.seat_leds[2]"),
    ({"seat_leds": [17, 27], "buttons": {"undo": 27}}, PinUsedTwiceError, "gpio.buttons.undo", 27,
     "pin 27 is used twice: gpio.seat_leds[1] and gpio.buttons.undo"),
    ({"seat_leds": [17, 27], "dealer_leds": [22, 23], "buzzer": 23}, PinUsedTwiceError, "gpio.buzzer", 23,
     "pin 23 is used twice: gpio.dealer_leds[1] and gpio.buzzer"),
    ({"seat_leds": [17, 27], "dealer_leds": [22]}, SeatWithoutPinError, "gpio.dealer_leds", None,
     "seat 1 has no pin in gpio.dealer_leds"),
    ({"seat_leds": [17, 27], "seats": 3}, SeatWithoutPinError, "gpio.seat_leds", None,
     "seat 2 has no pin in gpio.seat_leds"),
    ({"buzzer": 18}, SeatWithoutPinError, "gpio.seat_leds", None, "gpio.seat_leds is missing"),
    ({"seat_leds": []}, SeatWithoutPinError, "gpio.seat_leds", None, "gpio.seat_leds is empty"),
    ({"seat_leds": [17, 40]}, PinOutOfRangeError, "gpio.seat_leds[1]", 40, "pin out of range"),
    ({"seat_leds": [17], "buzzer": 1}, PinOutOfRangeError, "gpio.buzzer", 1, "HAT ID EEPROM"),
    ({"seat_leds": [17], "buttons": {"pass": -5}}, PinOutOfRangeError, "gpio.buttons.pass", -5, "out of range"),
    ({"seat_leds": [17, "27"]}, BadValueError, "gpio.seat_leds[1]", "27", "a pin is a BCM GPIO number"),
    ({"seat_leds": [17], "buzzer": True}, BadValueError, "gpio.buzzer", True, "a pin is a BCM GPIO number"),
    ({"seat_leds": [17], "buzzer": 18.0}, BadValueError, "gpio.buzzer", 18.0, "a pin is a BCM GPIO number"),
    ({"seat_leds": 17}, BadValueError, "gpio.seat_leds", 17, "expected a list"),
    ({"seat_leds": [17], "buzzer_kind": "piezo"}, BadValueError, "gpio.buzzer_kind", None, "'active', 'passive'"),
    ({"seat_leds": [17], "pin_factory": "gpio"}, BadValueError, "gpio.pin_factory", None, "expected one of"),
    ({"seat_leds": [17], "buttons": [5]}, BadValueError, "gpio.buttons", None, "expected a table"),
    ({"seat_leds": [17], "seats": 0}, BadValueError, "gpio.seats", None, "positive number"),
    ({"seat_leds": [17], "buzer": 18}, UnknownKeyError, "gpio.buzer", None, "did you mean 'buzzer'"),
    ({"seat_leds": [17], "buttons": {"undo": 6, "skip": 5}}, UnknownKeyError, "gpio.buttons.skip", None,
     "unknown key gpio.buttons.skip"),
])
def test_bad_pin_maps_are_clear_errors(factory, table, error, key, pin, message):
    with pytest.raises(error) as info:
        Signals.from_config(table, pin_factory=factory)
    assert message in str(info.value)
    assert info.value.key == key
    assert info.value.pin == pin
    assert isinstance(info.value, PinMapError) and isinstance(info.value, ValueError)
    assert factory.pins == {} or all(p.function == "input" for p in factory.pins.values())


def test_a_good_pin_map():
    pm = PinMap.from_config({"seat_leds": SEATS, "dealer_leds": DEALERS, "buzzer": BUZZER,
                             "buzzer_kind": "passive", "buttons": {"pass": 5, "undo": 6, "confirm": 13},
                             "seats": 4, "pin_factory": "mock"})
    assert pm.seats == 4 and pm.needs_pwm
    assert len(set(pm.pins().values())) == 4 + 4 + 1 + 3


# -- choosing the pin factory -------------------------------------------------------------------------

def test_mock_factory_on_request_and_with_pwm_for_a_passive_buzzer():
    assert type(choose_pin_factory(mock=True)) is MockFactory
    assert choose_pin_factory("mock", pwm=True).pin_class is MockPWMPin


def test_auto_uses_mock_pins_off_a_pi(tmp_path, monkeypatch):
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    model = tmp_path / "model"
    model.write_bytes(b"Generic x86 PC\0")
    assert not is_raspberry_pi((str(model),))
    assert type(choose_pin_factory(model_files=(str(model),))) is MockFactory


def test_auto_honours_gpiozero_pin_factory_env(monkeypatch):
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    assert type(choose_pin_factory()) is MockFactory
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "bogus")
    with pytest.raises(GpioUnavailableError, match="bogus"):
        choose_pin_factory()


def test_asking_for_real_pins_without_gpio_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    with pytest.raises(GpioUnavailableError, match="lgpio"):
        choose_pin_factory("lgpio")
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\0")
    assert is_raspberry_pi((str(model),))
    with pytest.raises(GpioUnavailableError, match="no pin factory loads"):
        choose_pin_factory(model_files=(str(model),))


def test_signals_on_a_laptop_use_simulated_pins(monkeypatch):
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    with Signals.from_config({"seat_leds": [17, 27], "buzzer": 18, "buzzer_kind": "passive"}) as s:
        assert s.simulated
        assert s.pin_factory.pin_class is MockPWMPin
        s.update(ok(trick_winner=1), state(players=2, dealer=0))
        assert s.wait(timeout=30)
        assert s.describe()["seats"][0]["led"]["lit"] is True


# -- the wiring check and the documented examples --------------------------------------------------

def test_lamp_test_lights_every_led_once(factory):
    with Signals.from_config({"seat_leds": SEATS, "dealer_leds": DEALERS, "buzzer": BUZZER},
                             pin_factory=factory, background=False, timings=INSTANT) as s:
        s.lamp_test(seconds=0)
        for pin in SEATS + DEALERS + [BUZZER]:
            assert states(factory.pin(pin)) == [OFF, ON, OFF], pin
        with pytest.raises(IndexError):
            s.flash(4)


def test_wiring_check_command_rejects_a_bad_config(tmp_path, capsys):
    from hardware.__main__ import main
    config = tmp_path / "config.toml"
    config.write_text("[gpio]\nseat_leds = [17, 27]\nbuttons = { undo = 17 }\n")
    assert main(["--config", str(config), "--mock", "--buttons", "0"]) == 2
    assert "pin 17 is used twice: gpio.seat_leds[0] and gpio.buttons.undo" in capsys.readouterr().err


def test_player_changes_where_a_pattern_ends_and_a_new_pattern_replaces_it():
    from hardware.patterns import Player
    writes, first_on = [], threading.Event()

    def write(value):
        writes.append(value)
        if value:
            first_on.set()

    p = Player(write, rest=False, background=True)
    p.play("long", [(True, 3600), (False, 0)])
    assert first_on.wait(30)                 # the pattern's thread is under way (guard, not timing)
    p.rest = True                            # the dealer moved here: no write while the pattern plays
    assert writes == [False, True] and p.pattern == "long"
    p.play("short", [(False, 0), (True, 0), (False, 0)])   # cancels the hour-long step at once
    assert p.wait(30) and p.pattern is None and p.last_pattern == "short"
    assert writes == [False, True, False, True, False, True]   # ... and ends on the new rest value
