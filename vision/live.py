"""The live table: camera frames in, the referee's events out.

:class:`LiveTable` reads frames from a :class:`~vision.sources.CameraFeed`,
runs the :class:`~vision.observer.Observer` and turns what it sees into events
submitted to a :class:`cardtable.session.Session` (which stores each event,
then judges it, then tells the dashboard and the LEDs):

* new cards in one seat's zone, put down together -> ``play`` (seat, cards);
  during the draw for first dealer, one card per seat -> ``draw``;
* in trumf, before the first play, a card turned up in the centre -> ``trump``;
* a card whose best-supported reading changes after its play was sent ->
  ``amend`` of that play's line with the corrected cards;
* cards taken away: no event (tricks end by themselves in the referee); the
  observer forgets them, and if the referee's trick was not complete a warning
  says so.

Attribution is by zone and is *checked*, never guessed: a play from a seat
that is not the referee's ``to_act`` is sent as seen (the referee judges it:
usually ``not_your_turn``) and a warning tells the dashboard; cards straddling
two zones, or lying off the table or in the centre, give a warning and no event.
Passes, bids and exchange counts come from the buttons or the dashboard
through :meth:`LiveTable.submit`, which keeps them in order with the plays:
a pass pressed while the previous play is still settling waits for it.

For the dashboard: :meth:`LiveTable.status` (camera, observer, warnings) and
:meth:`LiveTable.latest_jpeg` (the latest frame with the zones and cards
drawn).  ``frame_seen(frame)`` is called for every good frame, so the systemd
watchdog is fed only while frames flow.

Typical use (what ``cardtable run`` does)::

    feed = CameraFeed(make_source(config.source), size=geometry.image_size)
    geometry = TableGeometry.from_config(config.geometry)
    live = LiveTable(feed, geometry, RecogniserReader(table=geometry), session,
                     frame_seen=lambda frame: notifier.watchdog())
    live.start()          # a daemon thread; live.stop() to end it
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import Any, Callable, Protocol

import cv2
import numpy as np

from vision.card_reader import CardReader
from vision.observer import Change, Group, Observer, ObserverConfig, Track, sort_cards
from vision.sources import CameraFeed, Frame, FrameSource
from vision.table_geometry import TableGeometry

log = logging.getLogger(__name__)


class EventSink(Protocol):
    """What the live table submits to: :class:`cardtable.session.Session`."""

    def submit(self, event: Any) -> dict: ...
    def state(self) -> dict: ...


#: Rejections that a card missed by the camera would explain: the table is read once more.
MISSED_CARD_CODES = frozenset({"wrong_card_count", "invalid_combination", "does_not_beat", "must_include_lowest",
                               "duplicate_card", "card_already_played"})


#: ``live.submit({"event": "pass", "seat": TO_ACT})``: the seat is the referee's ``to_act`` when the
#: event goes in (after any play that was settling when the button was pressed).
TO_ACT = "to_act"


class _Pending:
    """A manual event waiting for the scene to settle."""

    def __init__(self, event: dict, t: float | None):
        self.event, self.t = event, t
        self.verdict: dict | None = None
        self.done = threading.Event()


class LiveTable:
    """The camera loop (see the module docstring).

    ``source`` is a :class:`CameraFeed` or a raw source (wrapped in one).
    ``geometry`` is laid out afresh for the current game's number of players
    (and with the scoreboard zone for twenty-two) unless it already fits.
    ``clock`` and ``sleep`` are injectable for tests.
    """

    def __init__(self, source: CameraFeed | FrameSource, geometry: TableGeometry, reader: CardReader,
                 session: EventSink, config: ObserverConfig | None = None,
                 frame_seen: Callable[[Frame], None] | None = None,
                 on_warning: Callable[[dict], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep, idle_s: float = 0.05, keep_warnings: int = 20,
                 hold_s: float = 2.0, draw_on_jpeg: bool = True):
        self.feed = source if isinstance(source, CameraFeed) else CameraFeed(source, size=geometry.image_size)
        self.session = session
        self.observer = Observer(geometry, reader, config)
        self.frame_seen = frame_seen
        self.on_warning = on_warning
        self._sleep = sleep
        self._idle_s = idle_s
        self._lock = threading.Lock()
        self._latest: Frame | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.warnings: collections.deque[dict] = collections.deque(maxlen=keep_warnings)
        self.sent: list[tuple[dict, dict]] = []       # (event, verdict) sent by the camera
        self.latencies: list[float] = []              # rest-to-event seconds, in frame time
        self._game_key: Any = None
        self._times: collections.deque[float] = collections.deque(maxlen=30)
        self._unreadable_seen: set[tuple] = set()
        self.draw_on_jpeg = draw_on_jpeg
        self.hold_s = hold_s
        self._queue: collections.deque[_Pending] = collections.deque()
        self._qlock = threading.Lock()
        self._in_step = False
        self.sent_manual: list[tuple[dict, dict]] = []   # (event, verdict) from buttons and the dashboard
        self._events_by_index: dict[int, dict] = {}   # log line -> the event it now holds (after amends)
        self._look_of_index: dict[int, int] = {}      # log line -> the observer's look that sent it
        self.error: str | None = None

    @property
    def geometry(self) -> TableGeometry:
        return self.observer.geometry

    # -- the loop --------------------------------------------------------------------
    def step(self) -> bool:
        """Process one frame (or find none).  False once a file source has ended."""
        self._in_step = True
        try:
            frame = self.feed.next_frame()
            if frame is None:
                self._flush(None)
                return not self.feed.ended
            with self._lock:
                self._latest = frame
                self._times.append(frame.t)
            if self.frame_seen is not None:
                try:
                    self.frame_seen(frame)
                except Exception:
                    log.exception("frame_seen hook failed")
            if self.observer.busy or self._game_key is None:
                self._fit_geometry()          # (not on still frames with nothing new: they must stay cheap)
            change = self.observer.feed(frame)
            if change is not None:
                self._apply(change, frame)
            self._flush(frame.t)
            return True
        finally:
            self._in_step = False

    # -- manual events, in order with the camera's ------------------------------------
    def submit(self, event: dict, timeout: float = 5.0) -> dict | None:
        """A manual event (a pass or bid button, the dashboard's exchange count or correction).

        A player often presses *pass* a moment after the previous player's cards
        land, before the camera has seen them come to rest.  So while the scene is
        unsettled (something moved since the last look) the event waits, at most
        ``hold_s`` seconds of frames, and goes to the session after the plays
        that the settling scene holds.  Returns the verdict; ``None`` if it is still
        waiting (called from inside the loop, or after ``timeout``): it will be
        submitted all the same, and :attr:`sent_manual` records it.

        ``"seat": "to_act"`` (:data:`TO_ACT`) stands for the seat to act when the event goes in:
        a single *pass* button should use it, since the seat to act changes with the play that
        may still be settling when it is pressed.
        """
        item = _Pending(event, self._latest.t if self._latest is not None else None)
        with self._qlock:
            self._queue.append(item)
        running = self._thread is not None and self._thread.is_alive()
        if self._in_step:
            return None
        if not running:
            self._flush(self._latest.t if self._latest is not None else None)
            return item.verdict
        item.done.wait(timeout)
        return item.verdict

    def _flush(self, t: float | None) -> None:
        while True:
            with self._qlock:
                if not self._queue:
                    return
                item = self._queue[0]
                if item.t is None:
                    item.t = t
                waited = 0.0 if (t is None or item.t is None) else t - item.t
                if t is not None and self.observer.busy and waited < self.hold_s:
                    return
                self._queue.popleft()
            event = item.event
            if isinstance(event, dict) and event.get("seat") == TO_ACT:
                # a seatless button (one "pass" button for the table): whoever is to act once the
                # plays that were settling are in
                event = {**event, "seat": self.session.state().get("to_act")}
                item.event = event
            item.verdict = self.session.submit(event)
            self.sent_manual.append((item.event, item.verdict))
            item.done.set()

    def run(self, stop: threading.Event | None = None) -> None:
        """Loop until ``stop`` is set (or :meth:`stop`), or a file source ends.
        Never raises: an unexpected error is logged, shown in the status and the loop goes on."""
        stop = stop or self._stop
        while not stop.is_set():
            try:
                if not self.step():
                    break
            except Exception as exc:  # the table must keep running; show what went wrong
                log.exception("live table step failed")
                self.error = f"{type(exc).__name__}: {exc}"
                self._sleep(self._idle_s)
                continue
            if self._latest is None or self.feed.status()["state"] not in ("ok",):
                self._sleep(self._idle_s)

    def start(self) -> threading.Thread:
        """Run the loop in a daemon thread."""
        if self._thread is not None and self._thread.is_alive():
            return self._thread
        self._stop.clear()
        self._thread = threading.Thread(target=self.run, name="live-table", daemon=True)
        self._thread.start()
        return self._thread

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.feed.close()

    # -- for the dashboard ------------------------------------------------------------
    def status(self) -> dict:
        """For the dashboard (``web/protocols.py``): ``state`` and ``message`` of the camera,
        ``fps``, ``frame_size``, ``zones`` and ``detections`` in pixels of :meth:`latest_jpeg`
        (boxes as x, y, w, h), the observer's state and cards, recent warnings."""
        camera = self.feed.status()
        for attempt in range(3):      # the loop thread may be updating the cards meanwhile: read again
            try:
                observer = self.observer.status()
                detections = self._detections()
                break
            except RuntimeError:
                if attempt == 2:
                    observer, detections = {"state": "busy", "cards": []}, []
        with self._lock:
            times = list(self._times)
            frame = self._latest
        fps = round((len(times) - 1) / (times[-1] - times[0]), 1) if len(times) > 1 and times[-1] > times[0] else None
        zones = [{"kind": z.kind, "seat": z.seat, "name": z.name,
                  "polygon": [[round(float(x), 1), round(float(y), 1)] for x, y in self.geometry.to_px(z.polygon)]}
                 for z in self.geometry.zones]
        message = camera["message"]
        if camera["state"] == "ok" and observer["state"] == "blank":
            message = observer["message"]
        return {"state": camera["state"], "message": message, "camera": camera, "fps": fps,
                "frame_size": [frame.image.shape[1], frame.image.shape[0]] if frame is not None else None,
                "zones": zones, "detections": detections, "observer": observer,
                "warnings": list(self.warnings), "error": self.error, "events_sent": len(self.sent)}

    def _detections(self) -> list[dict]:
        out = []
        for tr in list(self.observer.tracks):
            x1, y1, x2, y2 = tr.box
            total = sum(tr.votes.values()) or 1.0
            out.append({"card": tr.card, "box": [round(x1, 1), round(y1, 1), round(x2 - x1, 1), round(y2 - y1, 1)],
                        "seat": tr.seat, "zone": tr.zone, "state": tr.state,
                        "confidence": round(tr.votes[tr.card] / total, 3)})
        return out

    def latest_jpeg(self, quality: int = 80) -> bytes | None:
        """The latest frame as JPEG, with the zones and the cards on the table drawn
        unless :attr:`draw_on_jpeg` is False (the dashboard can draw them from :meth:`status`)."""
        with self._lock:
            frame = self._latest
        if frame is None:
            return None
        image = frame.image.copy()
        if not self.draw_on_jpeg:
            ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
            return buf.tobytes() if ok else None
        annotate(image, self.geometry, list(self.observer.tracks), self.observer.status()["state"])
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
        return buf.tobytes() if ok else None

    # -- events -----------------------------------------------------------------------
    def warn(self, code: str, message: str, **details: Any) -> None:
        item = {"code": code, "message": message, **details}
        if self._latest is not None:
            item["t"] = round(self._latest.t, 3)
        self.warnings.append(item)
        log.warning("live table: %s", message)
        if self.on_warning is not None:
            try:
                self.on_warning(item)
            except Exception:
                log.exception("on_warning hook failed")

    def _submit(self, event: dict, change: Change, frame: Frame) -> dict:
        verdict = self.session.submit(event)
        self.sent.append((event, verdict))
        if event["event"] != "amend":
            self.latencies.append(frame.t - change.t_rest)
            if isinstance(verdict.get("index"), int):
                self._events_by_index[verdict["index"]] = event
                self._look_of_index[verdict["index"]] = change.look
        return verdict

    def _fit_geometry(self) -> None:
        state = self.session.state()
        players = state.get("players") or []
        key = (state.get("game_id"), state.get("game"), len(players))
        if key == self._game_key or not players:
            return
        if self._game_key is not None:       # another game: its log starts afresh, line numbers too
            self._events_by_index.clear()
            self._look_of_index.clear()
            for tr in self.observer.tracks:
                tr.event_index, tr.reported = None, None
        self._game_key = key
        try:
            from referee.games import get_game
            deck = get_game(state.get("game")).deck
            self.observer.config.copies = max(1, max(deck.copies(c) for c in deck.cards()))
            if hasattr(self.observer.reader, "copies"):      # the recogniser too (khanhoo: 2 of each)
                self.observer.reader.copies = self.observer.config.copies
        except Exception:
            pass
        g = self.geometry
        scoreboard = state.get("game") == "twenty-two"
        if g.seats != len(players) or g.scoreboard != scoreboard:
            self.observer.geometry = g.with_seats(len(players), scoreboard=scoreboard)

    def _apply(self, change: Change, frame: Frame) -> None:
        state = self.session.state()
        if change.removed:
            names = sort_cards([t.card for t in change.removed])
            fresh = {t.id for g in change.groups for t in g.tracks}
            left = [t for t in self.observer.on_table() if t.zone == "seat" and t.id not in fresh]
            if state.get("trick") and not left:
                self.warn("taken_early", f"cards taken away ({', '.join(names)}) before the trick was complete",
                          cards=names)
            elif left and any(t.zone == "seat" for t in change.removed):
                self.warn("taken_away", f"cards taken away: {', '.join(names)}; "
                          f"{len(left)} still on the table", cards=names)
        if len(change.moved) >= 3:
            self.warn("table_moved", f"{len(change.moved)} cards moved at once: has the table or the camera "
                      "moved? Recalibrate if the zones no longer fit", cards=sort_cards([t.card for t in change.moved]))
        for pos, zone, _box in change.unreadable:
            key = (zone, int(pos[0] // 40), int(pos[1] // 40))
            if key not in self._unreadable_seen:
                self._unreadable_seen.add(key)
                self.warn("unreadable", f"a card in {zone} cannot be read: turn it to the light, or enter it "
                          "on the dashboard", zone=zone, x_mm=round(float(pos[0])), y_mm=round(float(pos[1])))
        if change.groups or change.removed:
            self._unreadable_seen.clear()
        dirty: set[int] = set()
        for track, old, new in change.relabelled:
            if track.event_index is None:
                continue
            dirty.add(track.event_index)
            self.warn("relabelled", f"the card read as {old} reads better as {new}: correcting line "
                      f"{track.event_index}", index=track.event_index, before=old, after=new)
        late_plays = []
        for group in change.groups:
            if not (group.late and group.kind == "seat"):
                continue
            index = self._play_for_late(group)
            if index is None:
                late_plays.append(group)
                continue
            for tr in group.tracks:
                tr.event_index = index
            dirty.add(index)
            self.warn("late_card", f"{', '.join(group.cards)} was missed when seat {group.seat} played: "
                      f"adding it to line {index}", index=index, cards=group.cards)
        for index in sorted(dirty):
            self._correct(index, change, frame)
        seat_groups = [g for g in change.groups if g.kind == "seat" and not g.late]
        for group in late_plays + self._in_turn_order(seat_groups):
            self._play(group, change, frame)
        for group in change.groups:
            if group.kind == "seat":
                continue
            cards = ", ".join(group.cards)
            if group.kind == "centre":
                self._centre(group, change, frame)
            elif group.kind == "scoreboard":
                pass                      # scoring cards laid face up: never plays
            elif group.kind == "ambiguous":
                self.warn("ambiguous_zone", f"{cards} lie across {' and '.join(sorted(set(group.zones)))}: "
                          "whose play is it? enter it on the dashboard", cards=group.cards)
            else:
                self.warn("off_table", f"{cards} lie outside the table zones; no event", cards=group.cards)

    def _in_turn_order(self, groups: list[Group]) -> list[Group]:
        """Several seats' plays in one look: the referee's seat to act first, then its next, ..."""
        if len(groups) < 2:
            return groups
        out, rest = [], list(groups)
        to_act = self.session.state().get("to_act")
        n = max(1, len(self.session.state().get("players") or []) or self.geometry.seats)
        start = to_act if isinstance(to_act, int) else 0
        rest.sort(key=lambda g: ((g.seat - start) % n))
        out.extend(rest)
        return out

    def _play(self, group: Group, change: Change, frame: Frame) -> None:
        state = self.session.state()
        seat, cards = group.seat, group.cards
        if not state.get("players"):
            self.warn("no_game", f"{', '.join(cards)} put down by seat {seat}, but no game is started")
            return
        if state.get("phase") == "draw":
            if len(cards) != 1:
                self.warn("draw_count", f"seat {seat} put down {len(cards)} cards in the draw for dealer; "
                          "draw one card each", seat=seat, cards=cards)
                return
            verdict = self._submit({"event": "draw", "seat": seat, "card": cards[0]}, change, frame)
            self._mark(group, verdict)
            return
        to_act = state.get("to_act")
        if isinstance(to_act, int) and to_act != seat:
            players = state.get("players") or []
            who = players[seat] if seat < len(players) else f"seat {seat}"
            expected = players[to_act] if to_act < len(players) else f"seat {to_act}"
            self.warn("not_their_turn", f"{who} (seat {seat}) put down {', '.join(cards)}, but it is "
                      f"{expected}'s turn (seat {to_act}); sent as seen for the referee to judge",
                      seat=seat, expected=to_act, cards=cards)
        verdict = self._submit({"event": "play", "seat": seat, "cards": cards}, change, frame)
        self._mark(group, verdict)
        if not verdict.get("ok") and verdict.get("code") in MISSED_CARD_CODES:
            self.observer.look_again()    # a card of this play may have been missed: look once more
        if not verdict.get("ok"):
            self.warn("rejected", f"seat {seat} {', '.join(cards)}: {verdict.get('message')}",
                      seat=seat, cards=cards, verdict_code=verdict.get("code"), index=verdict.get("index"))

    def _centre(self, group: Group, change: Change, frame: Frame) -> None:
        state = self.session.state()
        if state.get("phase") == "trump" and len(group.tracks) == 1:
            verdict = self._submit({"event": "trump", "card": group.cards[0]}, change, frame)
            self._mark(group, verdict)
            return
        self.warn("centre", f"{', '.join(group.cards)} put in the centre: not a play "
                  "(plays go in front of the player); no event", cards=group.cards)

    def _mark(self, group: Group, verdict: dict) -> None:
        for tr in group.tracks:
            tr.event_index = verdict.get("index")
            tr.reported = tr.card

    def _play_for_late(self, group: Group) -> int | None:
        """The log line of the play that late cards belong to: the play the same seat
        made at the look that first had them in view (and missed them)."""
        arrived = min(tr.arrived for tr in group.tracks)
        for index in sorted(self._look_of_index, reverse=True):
            event = self._events_by_index.get(index)
            if (self._look_of_index[index] == arrived and event is not None and event.get("event") == "play"
                    and event.get("seat") == group.seat):
                return index
        return None

    def _correct(self, index: int, change: Change, frame: Frame) -> None:
        """Amend line ``index`` so it holds the cards now best supported (and any late ones)."""
        original = self._events_by_index.get(index)
        members = [t for t in self.observer.tracks if t.event_index == index]
        if original is None or not members:
            return
        if original["event"] == "play":
            cards = list(original["cards"])
            for tr in members:
                if tr.reported is None:
                    cards.append(tr.card)
                elif tr.reported != tr.card and tr.reported in cards:
                    cards[cards.index(tr.reported)] = tr.card
            replacement = {"event": "play", "seat": original["seat"], "cards": sort_cards(cards)}
        elif original["event"] == "draw":
            replacement = {"event": "draw", "seat": original["seat"], "card": members[0].card}
        elif original["event"] == "trump":
            replacement = {"event": "trump", "card": members[0].card}
        else:
            return
        if replacement == original:
            return
        touched = self._changed_by_hand(index, original)
        if touched:
            self.warn("kept_by_hand", f"line {index} now reads {replacement}, but it was {touched} on the "
                      "dashboard: left as it is", index=index)
            for t in members:
                t.reported = t.card
            return
        verdict = self._submit({"event": "amend", "index": index, "with": replacement}, change, frame)
        if verdict.get("ok"):
            for t in members:
                t.reported = t.card
            self._events_by_index[index] = replacement


    def _changed_by_hand(self, index: int, sent: dict) -> str | None:
        """'corrected' or 'undone' if someone changed line ``index`` since the camera sent it
        (people's corrections win over the camera's), else None."""
        referee = getattr(self.session, "referee", None)
        if referee is None:
            return None
        try:
            if referee.verdicts[index].get("undone"):
                return "undone"
            now = referee.events_json()[index]
        except (IndexError, AttributeError, TypeError):
            return None

        def key(e: dict) -> tuple:
            return (e.get("event"), e.get("seat"), sorted(str(c).upper() for c in e.get("cards", [])),
                    str(e.get("card", "")).upper())
        return None if key(now) == key(sent) else "corrected"


def annotate(image: np.ndarray, geometry: TableGeometry, tracks: list[Track], label: str | None = None) -> np.ndarray:
    """Draw the zones and the tracked cards on ``image`` (in place; green: on the table, orange:
    covered, red: leaving), and ``label`` at the bottom left; returns the image."""
    geometry.draw(image)
    for tr in tracks:
        x1, y1, x2, y2 = (int(round(v)) for v in tr.box)
        colour = {"on": (0, 220, 0), "covered": (0, 160, 255), "leaving": (0, 0, 255)}.get(tr.state, (255, 255, 255))
        cv2.rectangle(image, (x1, y1), (x2, y2), colour, 2)
        cv2.putText(image, tr.card, (x1 + 2, max(12, y1 - 4)), cv2.FONT_HERSHEY_SIMPLEX, 0.6, colour, 2, cv2.LINE_AA)
    if label:
        cv2.putText(image, label, (8, image.shape[0] - 10), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 2,
                    cv2.LINE_AA)
    return image


# ---------------------------------------------------------------------------------------------
# Construction from the configuration, and calibration


#: ``[recognition]`` keys passed to the recogniser, and to the observer.
RECOGNISER_KEYS = ("model_dir", "accept_threshold", "heat_threshold", "engine", "threads")
OBSERVER_KEYS = ("still_s", "need", "votes", "pixel_delta", "motion_mm2", "new_mm2", "touched", "match_mm",
                 "cluster_mm", "cover_mm", "confirm_s", "blank_std", "gate_width")


def observer_config(recognition: dict | None) -> ObserverConfig:
    """An :class:`ObserverConfig` with the observer keys found in ``[recognition]``."""
    values = {k: v for k, v in (recognition or {}).items() if k in OBSERVER_KEYS}
    return ObserverConfig(**values)


def live_table_from_config(config: Any, session: EventSink, source: str | None = None,
                           reader: CardReader | None = None,
                           frame_seen: Callable[[Frame], None] | None = None) -> LiveTable:
    """The live table ``cardtable run`` needs, from a :class:`cardtable.config.Config`.

    ``source`` overrides ``[camera] source`` (``--source``); ``reader`` defaults
    to the project's recogniser with the ``[recognition]`` recogniser keys.
    Raises :class:`~vision.table_geometry.CalibrationError` when ``[geometry]``
    has no calibration, and the recogniser's ``ModelError`` when it has no model.
    """
    from vision.sources import make_source

    geometry = TableGeometry.from_config(dict(getattr(config, "geometry", {}) or {}))
    recognition = dict(getattr(config, "recognition", {}) or {})
    if reader is None:
        from vision.card_reader import RecogniserReader

        # The calibration says how the camera looks at the table: a slanted view is read
        # turned to straight down (vision/rectify.py).
        reader = RecogniserReader(table=geometry, **{k: v for k, v in recognition.items() if k in RECOGNISER_KEYS})
    spec = source or getattr(config, "source", None)
    size = geometry.image_size or (1280, 720)
    feed = CameraFeed(make_source(spec, size=size), size=geometry.image_size)
    return LiveTable(feed, geometry, reader, session, config=observer_config(recognition), frame_seen=frame_seen)


def calibrate(source: str | FrameSource | CameraFeed, table_mm: tuple[float, float], seats: int = 4,
              scoreboard: bool = False, frames: int = 30) -> TableGeometry:
    """Find the four corner markers in the first of up to ``frames`` frames that shows them all.

    Returns the geometry; ``geometry.to_config()`` is what goes into ``[geometry]``.
    Raises :class:`~vision.table_geometry.CalibrationError` naming what is missing.
    """
    from vision.sources import make_source
    from vision.table_geometry import CalibrationError

    feed = source if isinstance(source, CameraFeed) else CameraFeed(
        make_source(source) if isinstance(source, str) else source)
    last_error: Exception | None = None
    tries = 0
    try:
        while tries < frames and not feed.ended:
            frame = feed.next_frame()
            if frame is None:
                state = feed.status()
                if state["state"] in ("missing", "lost"):
                    raise CalibrationError(f"no camera: {state['message']}")
                tries += 1
                continue
            tries += 1
            try:
                return TableGeometry.from_markers(frame.image, table_mm, seats, scoreboard)
            except CalibrationError as exc:
                last_error = exc
    finally:
        feed.close()
    raise CalibrationError(str(last_error) if last_error else "no frames to calibrate from")


def geometry_toml(geometry: TableGeometry) -> str:
    """The ``[geometry]`` section for the configuration file, as TOML text."""
    import json
    data = geometry.to_config()

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, str):
            return json.dumps(v)          # a JSON string is a valid TOML basic string
        return repr(float(v)) if isinstance(v, float) else str(v)

    lines = ["[geometry]"]
    for key in ("corners_px", "table_mm", "image_size", "seats", "scoreboard"):
        if key in data:
            lines.append(f"{key} = {value(data[key])}")
    for zone in data.get("zones", []):
        lines += ["", "[[geometry.zones]]"]
        lines += [f"{k} = {value(v)}" for k, v in zone.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m vision.live calibrate|watch ...``: calibration and a headless look at the table."""
    import argparse
    import json
    import sys

    ap = argparse.ArgumentParser(prog="python -m vision.live", description=main.__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    cal = sub.add_parser("calibrate", help="find the corner markers and print the [geometry] section")
    cal.add_argument("--source", required=True, help="picamera, usb:N, video:PATH or images:GLOB")
    cal.add_argument("--table", required=True, help="play area between the marker centres, WIDTHxHEIGHT in mm")
    cal.add_argument("--seats", type=int, default=4)
    cal.add_argument("--scoreboard", action="store_true", help="add twenty-two's scoreboard zone")
    watch = sub.add_parser("watch", help="run the live table on a source and print its events as JSON lines")
    watch.add_argument("--config", help="configuration file with [geometry] (and [camera], [recognition])")
    watch.add_argument("--source", help="overrides [camera] source")
    watch.add_argument("--game", default="big-two")
    watch.add_argument("--players", default="P0,P1,P2,P3", help="names, comma-separated, in seat order")
    watch.add_argument("--db", default=None, help="SQLite store (default: a temporary one)")
    args = ap.parse_args(argv)

    from vision.table_geometry import CalibrationError

    if args.command == "calibrate":
        try:
            w, h = (float(x) for x in args.table.lower().split("x"))
            geometry = calibrate(args.source, (w, h), args.seats, args.scoreboard)
        except (ValueError, CalibrationError) as exc:
            print(f"calibration failed: {exc}", file=sys.stderr)
            return 2
        print(geometry_toml(geometry), end="")
        return 0

    import tempfile

    from cardtable.config import ConfigError, load_config
    from cardtable.session import Session
    from cardtable.store import Store

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    session = Session(Store(args.db or tempfile.mktemp(suffix=".sqlite", prefix="live-")))
    try:
        live = live_table_from_config(config, session, source=args.source)
    except Exception as exc:  # no calibration, no model: say so
        print(f"cannot start the live table: {exc}", file=sys.stderr)
        return 2
    session.listen(lambda verdict, state: print(json.dumps(verdict), flush=True))
    session.submit({"event": "new_game", "game": args.game, "players": args.players.split(","), "dealer": 0})
    try:
        live.run()
    except KeyboardInterrupt:
        pass
    print(json.dumps(live.status()["camera"]), file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
