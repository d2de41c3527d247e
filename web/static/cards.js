// Playing cards drawn with HTML/CSS (no images, nothing fetched).
// The same markup as the Jinja macro in templates/macros.html.
"use strict";
const Cards = (() => {
  const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
  const CARD_RE = /^(10|[2-9AJQKT])([CDHS])$/i;

  function parse(text) {
    const m = CARD_RE.exec(String(text).trim());
    if (!m) return null;
    const rank = m[1].toUpperCase() === "T" ? "10" : m[1].toUpperCase();
    return { rank, suit: m[2].toUpperCase(), name: rank + m[2].toUpperCase() };
  }

  function isCard(text) { return typeof text === "string" && CARD_RE.test(text.trim()); }

  function el(text, opts = {}) {
    const span = document.createElement(opts.button ? "button" : "span");
    if (opts.button) span.type = "button";
    const c = parse(text);
    span.className = "card" + (opts.small ? " small" : "") + (c && "DH".includes(c.suit) ? " red" : "")
      + (c ? "" : " odd");
    span.dataset.card = c ? c.name : String(text);
    const r = document.createElement("span"); r.className = "rank"; r.textContent = c ? c.rank : String(text);
    span.append(r);
    if (c) { const s = document.createElement("span"); s.className = "suit"; s.textContent = SUITS[c.suit]; span.append(s); }
    return span;
  }

  // A face-down card (its back): a play whose cards nobody saw.
  function back() {
    const span = document.createElement("span");
    span.className = "card back";
    span.title = "face down";
    return span;
  }

  // Split "3c, 10h TS" into canonical names; returns {cards, bad}.
  function split(text) {
    const cards = [], bad = [];
    for (const part of String(text).split(/[\s,;]+/).filter(Boolean)) {
      const c = parse(part);
      if (c) cards.push(c.name); else bad.push(part);
    }
    return { cards, bad };
  }

  // Likely misreads of a card: the same rank in other suits, the
  // neighbouring ranks in the same suit, and 6/9 swapped.
  function nearby(text) {
    const c = parse(text);
    if (!c) return [];
    const out = [];
    for (const s of "CDHS") if (s !== c.suit) out.push(c.rank + s);
    const i = RANKS.indexOf(c.rank);
    for (const j of [i - 1, i + 1]) if (j >= 0 && j < RANKS.length) out.push(RANKS[j] + c.suit);
    if (c.rank === "6") out.push("9" + c.suit);
    if (c.rank === "9") out.push("6" + c.suit);
    return out;
  }

  // A 4 x 13 grid of card buttons that toggles cards in a text input.
  function picker(container, input) {
    container.textContent = "";
    for (const s of "SHDC") {
      const row = document.createElement("div"); row.className = "picker-row";
      for (const r of RANKS) {
        const b = el(r + s, { small: true, button: true });
        b.addEventListener("click", () => {
          const { cards } = split(input.value);
          const at = cards.indexOf(b.dataset.card);
          if (at >= 0) cards.splice(at, 1); else cards.push(b.dataset.card);
          input.value = cards.join(" ");
          input.dispatchEvent(new Event("input"));
        });
        row.append(b);
      }
      container.append(row);
    }
    const mark = () => {
      const chosen = new Set(split(input.value).cards);
      for (const b of container.querySelectorAll(".card")) b.classList.toggle("chosen", chosen.has(b.dataset.card));
    };
    input.addEventListener("input", mark);
    mark();
  }

  return { parse, isCard, el, back, split, nearby, picker };
})();
