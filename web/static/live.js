// The live table: draws the latest snapshot (from the page, then from SSE)
// and, on an unlocked phone, sends plays, undos and corrections as events.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  let snap = JSON.parse($("initial").textContent || "{}");
  let seatTouched = false;      // once the user picks a seat, updates stop moving it

  // Fields of the state drawn in their own place; anything else a game adds
  // is shown generically (per-seat lists as score columns, the rest below).
  const KNOWN = new Set(["game", "players", "options", "phase", "hand_number", "dealer", "to_act", "scores",
    "eliminated", "game_over", "winners", "hand_counts", "hands_known", "log_length", "game_id", "trick",
    "top", "last_trick", "last_card", "draw", "trump", "trump_card", "turn_up", "lead", "lead_suit", "pot",
    "scoreboard", "showdown", "open_claims", "possible_revokes", "direction", "deal_order"]);
  // Lists of seats, not one value per seat, even when they happen to have n entries.
  const SEAT_LISTS = new Set(["deal_order", "eliminated", "winners", "last_card"]);
  const SUIT_SYMBOL = { C: "♣", D: "♦", H: "♥", S: "♠" };
  // What a game's scores count (events.md: chips in khanhoo, points elsewhere).
  const SCORE_UNIT = { khanhoo: "chips" };

  const human = (key) => key.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
  const name = (s, seat) => (s.players && s.players[seat] !== undefined ? s.players[seat] : `seat ${seat}`);
  const text = (tag, str, cls) => { const e = document.createElement(tag); e.textContent = str; if (cls) e.className = cls; return e; };
  const cardsOf = (v) => (Array.isArray(v) ? v : v == null ? [] : [v]);

  // ---- rendering ----------------------------------------------------------------
  function render(sn) {
    snap = sn;
    const s = sn.state || {};
    const players = s.players || [];
    $("game-title").textContent = s.game ? (sn.title || s.game) : "No game yet";
    const meta = [];
    if (sn.game_id) meta.push(`game #${sn.game_id}`);
    if (s.phase === "draw") meta.push("draw for first dealer");
    else if (s.hand_number) meta.push(`hand ${s.hand_number}`);
    if (s.direction && s.direction !== "clockwise") meta.push(s.direction);
    $("game-meta").textContent = meta.join(" · ");
    renderSeats(s);
    renderCentre(s, sn);
    renderVerdicts(sn);
    renderScores(s);
    renderExtras(s);
    renderLeds(sn.signals);
    renderLog(sn);
    fillSeatSelect($("entry-seat"), players, seatTouched ? null : s.to_act);
  }

  function renderSeats(s) {
    const box = $("seats"); box.textContent = "";
    const n = (s.players || []).length;
    const elim = new Set(s.eliminated || []), winners = new Set(s.winners || []), last = new Set(s.last_card || []);
    const drawn = (s.draw && s.draw.drawn) || {};
    (s.players || []).forEach((p, seat) => {
      // seat 0 at the bottom, then clockwise round an oval (y grows downwards)
      const a = Math.PI / 2 + (2 * Math.PI * seat) / n;
      const seatEl = document.createElement("div");
      seatEl.className = "seat";
      seatEl.dataset.seat = seat;
      seatEl.style.left = `${50 + 37 * Math.cos(a)}%`;
      seatEl.style.top = `${50 + 39 * Math.sin(a)}%`;
      if (s.to_act === seat) seatEl.classList.add("turn");
      if (elim.has(seat)) seatEl.classList.add("out");
      if (s.game_over && winners.has(seat)) seatEl.classList.add("winner");
      const head = text("div", p, "name");
      if (s.dealer === seat) head.prepend(text("span", "D", "dealer-chip"));
      seatEl.append(head);
      const info = [];
      if (s.scores && s.scores[seat] !== undefined) info.push(`${s.scores[seat]} ${SCORE_UNIT[s.game] || "pts"}`);
      if (s.hand_counts && s.hand_counts[seat] != null) info.push(`${s.hand_counts[seat]} cards`);
      seatEl.append(text("div", info.join(" · "), "info"));
      if (last.has(seat) && !s.game_over) seatEl.append(text("div", "LAST CARD!", "badge warn"));
      if (elim.has(seat)) seatEl.append(text("div", "out", "badge"));
      if (s.to_act === seat && !s.game_over) seatEl.append(text("div", s.phase === "draw" ? "to draw" : "to play", "badge turn"));
      if (s.game_over && winners.has(seat)) seatEl.append(text("div", "winner", "badge turn"));
      const shown = drawn[seat] || (s.showdown && s.showdown[seat]);   // draw for dealer, twenty-two's showdown
      if (shown) { const d = document.createElement("div"); d.append(Cards.el(shown, { small: true })); seatEl.append(d); }
      const board = s.scoreboard && Array.isArray(s.scoreboard) ? s.scoreboard[seat] : null;
      if (board && cardsOf(board).length) {
        const d = document.createElement("div"); d.className = "scoreboard";
        for (const c of cardsOf(board)) d.append(Cards.el(c, { small: true }));
        seatEl.append(d);
      }
      box.append(seatEl);
    });
  }

  function playEl(s, play, correctable) {
    const wrap = document.createElement("div");
    wrap.className = "play";
    wrap.append(text("div", name(s, play.seat), "who"));
    if (play.pass) { wrap.append(text("span", "pass", "pass")); return wrap; }
    const row = document.createElement("div"); row.className = "cards"; wrap.append(row);
    if (play.face_down || (play.cards === null && play.count)) {       // khanhoo's face-down discards
      for (let i = 0; i < (play.count || 1); i++) row.append(Cards.back());
      return wrap;
    }
    const cards = play.cards || cardsOf(play.card);
    for (const c of cards) {
      const card = Cards.el(c, { button: correctable && play.index !== undefined });
      if (correctable && play.index !== undefined) {
        card.title = "Correct this card";
        card.addEventListener("click", () => openFix(play.index));
      }
      row.append(card);
    }
    return wrap;
  }

  function trickPlays(trick) {
    if (Array.isArray(trick)) return trick.filter((p) => p && typeof p === "object");
    if (trick && Array.isArray(trick.plays)) return trick.plays;
    return [];
  }

  function renderCentre(s, sn) {
    const info = $("table-info"); info.textContent = "";
    if (s.trump || s.trump_card) {
      // trump may be a suit ("S"), a card ("4S"), or {"card": ...}; trump_card is the turned-up card
      const t = document.createElement("div"); t.className = "chip";
      const trump = s.trump && typeof s.trump === "object" ? s.trump.card : s.trump;
      t.append(text("span", "Trump "));
      if (trump && SUIT_SYMBOL[String(trump).toUpperCase()]) t.append(text("b", SUIT_SYMBOL[String(trump).toUpperCase()], "suit-chip" + ("DH".includes(String(trump).toUpperCase()) ? " red" : "")));
      const card = s.trump_card || (Cards.isCard(String(trump)) ? trump : null);
      if (card) t.append(Cards.el(card, { small: true }));
      else if (trump && !SUIT_SYMBOL[String(trump).toUpperCase()]) t.append(text("b", String(trump)));
      info.append(t);
    }
    if (s.lead && s.lead.kind) info.append(text("div", `Lead: ${s.lead.kind} by ${name(s, s.lead.seat)}`, "chip"));
    if (s.lead_suit && SUIT_SYMBOL[s.lead_suit]) info.append(text("div", `Led ${SUIT_SYMBOL[s.lead_suit]}`, "chip"));
    if (s.phase === "draw" && s.draw) {
      const who = (s.draw.contenders || []).map((seat) => name(s, seat)).join(", ");
      info.append(text("div", `Draw for dealer, round ${s.draw.round}: ${who}`, "chip"));
    }
    if (s.pot !== undefined && s.pot !== null) info.append(text("div", `Pot ${s.pot}`, "chip pot"));
    if (s.top && s.top.category) info.append(text("div", `Top: ${s.top.category.replace(/_/g, " ")} by ${name(s, s.top.seat)}`, "chip"));
    const box = $("trick"); box.textContent = "";
    const unlocked = !!$("entry");
    const plays = trickPlays(s.trick);
    for (const p of plays) box.append(playEl(s, p, unlocked));
    if (!plays.length && s.last_trick && trickPlays(s.last_trick.plays).length) {
      box.classList.add("faded");
      for (const p of trickPlays(s.last_trick.plays)) box.append(playEl(s, p, unlocked));
    } else box.classList.remove("faded");
    // many cards on the table: draw them smaller so they stay inside the felt
    box.classList.toggle("many", box.querySelectorAll(".card").length > 6);
    if (!box.childElementCount) box.append(text("div", s.phase === "draw" ? "Draw a card each: highest deals" : "No cards on the table", "muted"));
    // the latest trick winner, from the verdicts (works for every game)
    const won = (sn.recent || []).find((l) => l.verdict.ok && !l.verdict.undone && l.verdict.trick_winner !== undefined);
    $("trick-winner").textContent = won ? `Trick won by ${name(s, won.verdict.trick_winner)} (line ${won.index})` : "";
  }

  function renderVerdicts(sn) {
    const last = sn.last;
    const lv = $("last-verdict");
    lv.textContent = last ? `Line ${last.index}: ${last.verdict.words}` : "Waiting for the first event.";
    lv.className = "alert " + (!last ? "" : last.verdict.ok ? "good" : "bad");
    const fix = $("correction");
    const amend = (sn.recent || []).find((l) => l.event && l.event.event === "amend" && l.verdict.ok);
    if (amend && amend.verdict.change_words) {
      fix.textContent = "";
      fix.append(text("b", `Correction of line ${amend.event.index}: `));
      fix.append(text("span", amend.verdict.change_words.join("; ")));
      fix.hidden = false;
    } else fix.hidden = true;
    const br = $("breaches"); br.textContent = "";
    for (const w of sn.breaches || []) br.append(text("li", w));
    br.hidden = !br.childElementCount;
  }

  // per-seat columns: any state list with one entry per player
  function seatColumns(s) {
    const n = (s.players || []).length, cols = [];
    for (const [k, v] of Object.entries(s)) {
      if (KNOWN.has(k) || SEAT_LISTS.has(k) || !Array.isArray(v) || v.length !== n || n === 0) continue;
      if (v.every((x) => x === null || ["number", "string", "boolean"].includes(typeof x) || Array.isArray(x))) cols.push(k);
    }
    return cols;
  }

  function cell(v) {
    const td = document.createElement("td");
    if (Array.isArray(v) && v.every((x) => Cards.isCard(String(x)))) for (const c of v) td.append(Cards.el(c, { small: true }));
    else td.textContent = v === null || v === undefined ? "" : Array.isArray(v) ? v.join(" ") : String(v);
    return td;
  }

  function renderScores(s) {
    const table = $("scores");
    const head = table.tHead, body = table.tBodies[0];
    head.textContent = ""; body.textContent = "";
    const cols = seatColumns(s);
    const hr = document.createElement("tr");
    for (const h of ["Player", SCORE_UNIT[s.game] ? human(SCORE_UNIT[s.game]) : "Score", ...(s.hand_counts ? ["Cards"] : []), ...(s.scoreboard ? ["Scoreboard"] : []), ...cols.map(human)]) hr.append(text("th", h));
    head.append(hr);
    const elim = new Set(s.eliminated || []), winners = new Set(s.winners || []);
    (s.players || []).forEach((p, seat) => {
      const tr = document.createElement("tr"); tr.dataset.seat = seat;
      if (elim.has(seat)) tr.className = "out";
      if (s.game_over && winners.has(seat)) tr.className = "winner";
      let label = p + (s.dealer === seat ? " (D)" : "") + (elim.has(seat) ? " — out" : "") + (s.game_over && winners.has(seat) ? " — winner" : "");
      tr.append(text("td", label));
      tr.append(text("td", s.scores ? String(s.scores[seat]) : "", "score"));
      if (s.hand_counts) tr.append(cell(s.hand_counts[seat]));
      if (s.scoreboard) tr.append(cell(Array.isArray(s.scoreboard) ? s.scoreboard[seat] : ""));
      for (const c of cols) tr.append(cell(s[c][seat]));
      body.append(tr);
    });
    const over = $("game-over");
    over.hidden = !s.game_over;
    if (s.game_over) over.textContent = `Game over: ${(s.winners || []).map((w) => name(s, w)).join(" and ")} won.`;
  }

  function renderExtras(s) {
    const dl = $("extras"); dl.textContent = "";
    const cols = new Set(seatColumns(s));
    for (const [k, v] of Object.entries(s)) {
      if (KNOWN.has(k) || cols.has(k) || v === null || v === undefined || (Array.isArray(v) && !v.length)) continue;
      dl.append(text("dt", human(k)));
      const dd = document.createElement("dd");
      if (Array.isArray(v) && v.every((x) => Cards.isCard(String(x)))) for (const c of v) dd.append(Cards.el(c, { small: true }));
      else if (Cards.isCard(String(v))) dd.append(Cards.el(v, { small: true }));
      else dd.textContent = typeof v === "object" ? plain(v) : String(v);
      dl.append(dd);
    }
    if (s.deal_order && s.deal_order.length) {
      dl.append(text("dt", "Deal order"));
      dl.append(text("dd", s.deal_order.map((seat) => name(s, seat)).join(" → ")));
    }
    if (s.possible_revokes && s.possible_revokes.length) {
      dl.append(text("dt", "Possible revokes"));
      dl.append(text("dd", s.possible_revokes.map((r) => `${name(s, r.seat)}: ${String(r.code).replace(/_/g, " ")} (line ${r.refers_to})`).join("; ")));
    }
    if (s.open_claims && s.open_claims.length) {
      dl.append(text("dt", "Unproven duties"));
      dl.append(text("dd", s.open_claims.map((c) => `${name(s, c.seat)}: ${c.code.replace(/_/g, " ")} (line ${c.refers_to})`).join("; ")));
    }
    $("extras-panel").hidden = !dl.childElementCount;
  }

  // A game's own nested fields, readable enough without knowing them: "key: value; ..."
  function plain(v) {
    if (Array.isArray(v)) return v.map((x) => (x && typeof x === "object" ? plain(x) : String(x))).join(", ");
    return Object.entries(v).map(([k, x]) => `${k.replace(/_/g, " ")}: ${x && typeof x === "object" ? "[" + plain(x) + "]" : x}`).join("; ");
  }

  function renderLeds(sig) {
    const panel = $("leds-panel");
    if (!sig || !Array.isArray(sig.seats)) { panel.hidden = true; return; }
    panel.hidden = false;
    $("leds-sim").textContent = sig.simulated ? "(simulated)" : "";
    const box = $("leds"); box.textContent = "";
    for (const seat of sig.seats) {
      const d = document.createElement("div"); d.className = "led-seat";
      for (const led of [seat.led, seat.dealer_led].filter(Boolean)) {
        const dot = document.createElement("span");
        dot.className = `led ${led.state}` + (led === seat.dealer_led ? " dealer" : "");
        dot.title = `pin ${led.pin}: ${led.state}${led.pattern ? " (" + led.pattern + ")" : ""}`;
        d.append(dot);
      }
      d.append(text("span", `${name(snap.state || {}, seat.seat)} · ${seat.role}`));
      box.append(d);
    }
    if (sig.buzzer) box.append(text("div", `buzzer: ${sig.buzzer.state}${sig.buzzer.last_pattern ? " (last: " + sig.buzzer.last_pattern + ")" : ""}`, "muted small"));
  }

  function renderLog(sn) {
    const ol = $("log"); ol.textContent = "";
    const unlocked = !!$("entry");
    for (const line of sn.recent || []) {
      const li = document.createElement("li");
      li.value = line.index;
      li.dataset.index = line.index;
      li.className = line.verdict.ok ? (line.verdict.undone ? "undone" : "ok") : "bad";
      // an accepted line's verdict already says what happened; a refused one needs both
      if (!line.verdict.ok) li.append(text("span", line.words, "what"));
      li.append(text("span", line.verdict.words, "verdict"));
      const ev = line.event && line.event.event;
      if (unlocked && ["play", "draw", "trump", "pass", "bid", "exchange"].includes(ev)) {
        const b = text("button", "correct", "link");
        b.type = "button";
        b.addEventListener("click", () => openFix(line.index));
        li.append(b);
      }
      ol.append(li);
    }
  }

  function fillSeatSelect(sel, players, choose) {
    if (!sel) return;
    const keep = sel.value;
    sel.textContent = "";
    players.forEach((p, i) => { const o = text("option", `${i}: ${p}`); o.value = i; sel.append(o); });
    if (choose !== null && choose !== undefined) sel.value = String(choose);
    else if (keep !== "" && keep < players.length) sel.value = keep;
  }

  // ---- changes ---------------------------------------------------------------------
  // One key per change: a retry after a lost answer gets the first verdict
  // back instead of putting the card in the log twice.
  const newKey = () => (crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`);

  async function post(event, key) {
    const init = {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf, "Idempotency-Key": key },
      body: JSON.stringify(event),
    };
    try { return await fetch("/api/events", init); }
    catch (e) { return await fetch("/api/events", init); }      // one retry on a network error
  }

  async function send(event) {
    const out = $("action-result");
    try {
      const r = await post(event, newKey());
      const body = await r.json().catch(() => ({ message: `the table answered ${r.status}` }));
      out.hidden = false;
      if (!r.ok) { out.className = "alert bad"; out.textContent = `Not sent: ${body.message}`; return null; }
      out.className = "alert " + (body.ok ? "good" : "bad");
      let msg = body.words;
      if (body.change_words) msg += " — " + body.change_words.join("; ");
      out.textContent = msg;
      return body;
    } catch (e) {
      out.hidden = false; out.className = "alert bad";
      out.textContent = "Could not reach the table computer; try again.";
      return null;
    }
  }

  function entryEvent(kind) {
    const seat = Number($("entry-seat").value);
    const { cards, bad } = Cards.split($("entry-cards").value);
    const number = Number($("entry-number").value);
    const need = (ok, msg) => { if (!ok) throw new Error(msg); };
    switch (kind) {
      case "play": need(cards.length && !bad.length, bad.length ? `not cards: ${bad.join(" ")}` : "pick the card(s) played"); return { event: "play", seat, cards };
      case "draw": need(cards.length === 1, "pick the one card drawn"); return { event: "draw", seat, card: cards[0] };
      case "trump": need(cards.length === 1, "pick the one trump card"); return { event: "trump", card: cards[0] };
      case "pass": return { event: "pass", seat };
      case "announce": return { event: "announce", seat };
      case "bid": need(Number.isInteger(number) && number >= 0, "the bid is a whole number"); return { event: "bid", seat, tricks: number };
      case "exchange": need(Number.isInteger(number) && number >= 0, "the count is a whole number"); return { event: "exchange", seat, count: number };
    }
    throw new Error("unknown action");
  }

  function wireEntry() {
    if (!$("entry")) return;
    Cards.picker($("entry-picker"), $("entry-cards"));
    $("entry-seat").addEventListener("change", () => { seatTouched = true; });
    for (const b of document.querySelectorAll("#entry .actions button")) {
      b.addEventListener("click", async () => {
        let event;
        try { event = entryEvent(b.dataset.kind); } catch (e) {
          const out = $("action-result"); out.hidden = false; out.className = "alert bad"; out.textContent = e.message; return;
        }
        const typed = $("entry-cards").value, seat = $("entry-seat").value;
        const v = await send(event);
        // clear only what was sent: the user may already be picking the next play
        if (v && v.ok && $("entry-cards").value === typed) { $("entry-cards").value = ""; $("entry-cards").dispatchEvent(new Event("input")); }
        if (v && v.ok && $("entry-seat").value === seat) seatTouched = false;
      });
    }
    $("undo").addEventListener("click", () => send({ event: "undo" }));
    Cards.picker($("fix-picker"), $("fix-cards"));
    $("fix").addEventListener("close", async () => {
      const dlg = $("fix");
      if (dlg.returnValue !== "ok") return;
      const index = Number(dlg.dataset.index), was = JSON.parse(dlg.dataset.event);
      const { cards, bad } = Cards.split($("fix-cards").value);
      const seat = Number($("fix-seat").value);
      const out = $("action-result");
      const refuse = (msg) => { out.hidden = false; out.className = "alert bad"; out.textContent = msg; };
      if (bad.length) return refuse(`not cards: ${bad.join(" ")}`);
      let replacement;
      if (was.event === "play" || was.event === "pass") {
        // a card the camera missed turns a pass into a play; no card at all turns a play into a pass
        replacement = cards.length ? { event: "play", seat, cards } : { event: "pass", seat };
      } else if (was.event === "draw" || was.event === "trump") {
        if (cards.length !== 1) return refuse("pick the one right card");
        replacement = was.event === "draw" ? { event: "draw", seat, card: cards[0] } : { event: "trump", card: cards[0] };
      } else if (was.event === "bid" || was.event === "exchange") {
        const n = Number($("fix-number").value);
        if (!Number.isInteger(n) || n < 0) return refuse("the number must be a whole number");
        replacement = was.event === "bid" ? { event: "bid", seat, tricks: n } : { event: "exchange", seat, count: n };
      } else return refuse("this line cannot be corrected here");
      await send({ event: "amend", index, with: replacement });
    });
  }

  function openFix(index) {
    const line = (snap.recent || []).find((l) => l.index === index);
    if (!line || !$("fix")) return;
    const dlg = $("fix"), ev = line.event, s = snap.state || {};
    dlg.dataset.index = index; dlg.dataset.event = JSON.stringify(ev);
    $("fix-index").textContent = index;
    $("fix-was").textContent = `Now: ${line.words} — ${line.verdict.words}`;
    fillSeatSelect($("fix-seat"), s.players || [], ev.seat);
    $("fix-seat").disabled = !("seat" in ev);
    const cards = ev.cards || (ev.card ? [ev.card] : []);
    const numeric = ev.event === "bid" || ev.event === "exchange";
    $("fix-number-label").hidden = !numeric;
    $("fix-cards-label").hidden = numeric;
    $("fix-picker").hidden = numeric;
    if (numeric) $("fix-number").value = ev.event === "bid" ? ev.tricks : ev.count;
    $("fix-hint").textContent = ev.event === "play" ? "No card: it was a pass." : ev.event === "pass" ? "Pick the card(s) if it was a play." : "";
    $("fix-cards").value = cards.join(" ");
    $("fix-cards").dispatchEvent(new Event("input"));
    const sug = $("fix-suggest"); sug.textContent = "";
    if (cards.length === 1) {
      sug.append(text("span", "Likely: ", "muted small"));
      for (const c of Cards.nearby(cards[0])) {
        const b = Cards.el(c, { small: true, button: true });
        b.addEventListener("click", () => { $("fix-cards").value = c; $("fix-cards").dispatchEvent(new Event("input")); });
        sug.append(b);
      }
    }
    dlg.showModal();
  }

  // ---- the stream --------------------------------------------------------------------
  function connect() {
    const conn = $("conn");
    conn.hidden = false;
    const es = new EventSource("/api/stream");
    es.addEventListener("state", (e) => {
      try { render(JSON.parse(e.data)); } catch (err) { console.error(err); }
    });
    es.onopen = () => { conn.textContent = "live"; conn.className = "pill live"; };
    // EventSource reconnects by itself; every reconnect starts with the whole state
    es.onerror = () => { conn.textContent = "reconnecting"; conn.className = "pill down"; };
  }

  wireEntry();
  render(snap);
  connect();
})();
