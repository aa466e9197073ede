// @ts-check
// The hallclock dashboard. Only the feed writes the state; every view renders from it,
// idempotently. Clocks are computed on every animation frame from remaining_ms and as_of
// (never decremented). Text goes in with textContent. One post() sends every command and
// shows the reply where it was asked.
"use strict";

/**
 * @typedef {{name: string, remaining_ms: number, display_ms: number, delay_left_ms: number,
 *   moves: number, period: number, flagged_at: number|null, present: boolean}} Side
 * @typedef {{board: string, seq: number, as_of: number, phase: string, online: boolean,
 *   round: number|null, running: "white"|"black"|null, turn: string|null, white_side: string,
 *   white: Side|null, black: Side|null, fen: string|null, result: any, pending_flag: any,
 *   time_control: string|null, adjournment?: any, draw_offer?: any,
 *   move_pending?: boolean, pending_side?: "white"|"black", pending_plies?: number, observed?: boolean}} State
 * @typedef {{state: State|null, online: boolean, events: any[], lastSeq: number,
 *   lastMove: string, lastUci: string, moves: {no: number, side: string, san: string, clock: number|null}[],
 *   historyLoaded: boolean, earlyPress: Object<string, number|null>, plies: Object<string, number>,
 *   lastFen?: string | null}} BoardData
 */

/** A hall screen (/public, /public/players, …: public.js), with no login. */
const PUBLIC = /^\/public(?:\/|$)/.test(location.pathname);
/** Alert kinds that need the arbiter now: sound and a flashing banner. */
const CRITICAL = new Set(["result_pending", "both_flags", "player_pause", "clock_mode", "clock_command", "clock_discrepancy", "storage"]);

// ---------- words (docs/DASHBOARD.md, "Languages") ----------

/**
 * The page's words, as the server put them in the page (`#i18n`): the chosen language,
 * the languages offered, every message (English under the chosen language, under the
 * operator's file: merged by the server) and each language's piece letters.
 * @typedef {{lang: string, languages: {code: string, name: string}[],
 *   messages: Record<string, string|Record<string, string>>, letters: Record<string, string>}} I18n
 * @returns {I18n}
 */
function readI18n() {
  const el = document.getElementById("i18n");
  /** @type {any} */
  let v = {};
  try { v = el ? JSON.parse(el.textContent || "{}") : {}; } catch (_) { v = {}; }
  return {
    lang: typeof v.lang === "string" && v.lang ? v.lang : (document.documentElement.lang || "en"),
    languages: Array.isArray(v.languages) ? v.languages : [],
    messages: v.messages && typeof v.messages === "object" ? v.messages : {},
    letters: v.letters && typeof v.letters === "object" ? v.letters : {},
  };
}
const I18N = readI18n();
const LANG = I18N.lang;
const NUMBER = new Intl.NumberFormat(LANG);
const PLURAL = new Intl.PluralRules(LANG);
/** The language's decimal separator, for a clock's tenths ("0:09,5" in Spanish). */
const DECIMAL = (NUMBER.formatToParts(1.5).find((p) => p.type === "decimal") || { value: "." }).value;

/**
 * A parameter as the language writes it: a number through Intl, a `…_ms` number as a
 * duration in words, a `side` ("white") as the language's word for the colour; text as
 * it is.
 * @param {string} name @param {any} v
 */
function paramText(name, v, all) {
  if (typeof v === "number") {
    if (/_ms$/.test(name)) return durationWords(v);
    // Instants (docs/MQTT-API.md, "Message codes"): ms since the epoch, as the page's dates.
    if (INSTANT_PARAMS.has(name) && v > 1e12) return new Date(v).toLocaleString(LANG);
    return NUMBER.format(v);
  }
  // A colour (never a player's name, which some templates pass under these names too).
  if (SIDE_PARAMS.has(name) && (v === "white" || v === "black")) return t(`side.${v}`);
  // A refused press's alert: the refusal in the page's words, from its own code.
  if (name === "refusal" && typeof v === "string") return refusalText({ code: v, params: (all && all.refusal_params) || {} }, v);
  if (name === "san" && typeof v === "string") return sanIn(v, lettersOfBoard(all && all.board));
  if (name === "result" && v && typeof v === "object") return resultWords(v);
  // A round's pairing, named by the daemon by its 0-based index: as the arbiter counts.
  if (name === "at" && typeof v === "string" && /^pairings\[\d+\]$/.test(v)) return t("round.at", { n: Number(v.slice(9, -1)) + 1 });
  // What the time-control reader expected (`TcExpected`), in words.
  if (name === "what" && typeof v === "string" && hasText(`tcwhat.${v}`)) return t(`tcwhat.${v}`);
  if (Array.isArray(v)) return new Intl.ListFormat(LANG, { type: "conjunction" }).format(v.map(String));
  return v === null || v === undefined ? "" : String(v);
}

/**
 * A time control in words, from `/api/tc`'s parts (the server's `description` is the
 * same in English): "90 min for 40 moves, +30 s per move from move 1; then …".
 * @param {any} a
 */
function tcDescription(a) {
  if (LANG === "en" || !Array.isArray(a.parts)) return String(a.description || "");
  return a.parts
    .map((/** @type {any} */ p) => {
      const bonus = p.increment_ms ? t("tc.increment", p) : p.delay_ms ? t("tc.delay", p) : "";
      return t(`tc.${p.part}`, p) + bonus;
    })
    .join(t("tc.then"));
}

/** Parameters that are instants, and those that are sides (docs/MQTT-API.md, "Message codes"). */
const INSTANT_PARAMS = new Set(["at", "ts", "hall", "now", "from", "to", "start", "resumes", "deadline", "last_known", "until"]);
const SIDE_PARAMS = new Set(["side", "running", "sealer", "responder"]);

/** A game's result (the state's `result`) in words: the score and why. @param {any} r */
function resultWords(r) {
  return r.score ? `${r.score} (${terminationWords(r)})` : terminationWords(r);
}

/** The piece letters of a board's game (the state's `piece_letters`). @param {any} id */
function lettersOfBoard(id) {
  const b = typeof id === "string" ? store.boards.get(id) : undefined;
  return eventLetters(b ? b.state : null);
}

/**
 * The message `key` in the page's language with `{name}` placeholders filled; a plural
 * message is chosen by `params.count`. A key the catalogues lack says so on the page
 * (`!es: key`, owlcms's way), where a walk through the pages finds it.
 * @param {string} key @param {Record<string, any>} [params]
 * @returns {string}
 */
function t(key, params) {
  let m = I18N.messages[key];
  if (m && typeof m === "object") {
    const n = params && typeof params.count === "number" ? params.count : 0;
    m = m[PLURAL.select(n)] || m.other;
  }
  if (typeof m !== "string") return `!${LANG}: ${key}`;
  if (!params) return m;
  return m.replace(/\{(\w+)\}/g, (all, name) => (name in params ? paramText(name, params[name], params) : all));
}

/** Whether the catalogue has `key` (codes of the daemon it may not know yet). @param {string} key */
function hasText(key) {
  return Object.prototype.hasOwnProperty.call(I18N.messages, key);
}

/**
 * English SAN in a language's piece letters ("Re2" is the king's move in Spanish). The
 * server's table lists every language's letters in one order, K Q R B N P; only piece
 * letters are upper case in SAN (files are lower case, castling is O).
 * @param {string|null|undefined} san @param {string} lang
 */
function sanIn(san, lang) {
  if (!san || lang === "en") return san || "";
  const en = (I18N.letters.en || "K Q R B N P").split(" ");
  const to = (I18N.letters[lang] || "").split(" ");
  if (to.length !== en.length) return san;
  return san.replace(/[KQRBN]/g, (c) => to[en.indexOf(c)] || c);
}

/** Fill the page's fixed words (index.html's `data-i18n…` attributes). */
function translateStatic() {
  document.documentElement.lang = LANG;
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.getAttribute("data-i18n") || "");
  for (const attr of ["aria-label", "title", "placeholder"]) {
    for (const el of document.querySelectorAll(`[data-i18n-${attr}]`)) el.setAttribute(attr, t(el.getAttribute(`data-i18n-${attr}`) || ""));
  }
}

const store = {
  /** @type {Map<string, BoardData>} */ boards: new Map(),
  /** @type {any} */ info: null,
  /** @type {any} */ session: null,
  /** The hall screens' banner (`announce`), or null when none stands. @type {any} */ announce: null,
  /** @type {string} */ status: "",
  /** Each hall server's `node/<node>/status` (docs/MQTT-API.md): the hall is up while any is. @type {Map<string, any>} */
  nodes: new Map(),
  /** @type {Map<string, any>} */ alerts: new Map(),
  /** @type {any[]} */ hallEvents: [],
  /** @type {{arbiter: {id: string, name: string, role: string, boards: string[]}, csrf: string, hall: string, node: string | null, civil_ms?: number, language?: string} | null} */ me: null,
  base: "",
  /** Server time minus local time, as far as live states show it. */
  offset: 0,
  offsetKnown: false,
  /** The server's wall clock minus this device's (`/api/me`'s `civil_ms`): scheduled
   * instants (a round's start, a resumption) are on the server's clock. */
  civilOffset: 0,
  snapshotting: false,
};

/** Time spent in this script, for docs/BENCHMARKS.md (read by the browser test). */
const perf = { scriptMs: 0, frames: 0, feedItems: 0, since: performance.now() };
/** @type {any} */ (window).__hallclockPerf = perf;

// ---------- small helpers ----------

/**
 * @param {string} tag
 * @param {Record<string, any>} [attrs]
 * @param {(Node|string|null|undefined)[]} [children]
 */
function h(tag, attrs, children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "text") el.textContent = String(v);
      else if (k === "class") el.className = String(v);
      else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  for (const c of children || []) {
    if (c === null || c === undefined) continue;
    el.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

/** @param {Element} el @param {string} text */
function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** @param {number} ms */
function fmtClock(ms) {
  if (ms < 0) ms = 0;
  if (ms < 10000) {
    const tenths = Math.floor(ms / 100);
    return `0:0${Math.floor(tenths / 10)}${DECIMAL}${tenths % 10}`;
  }
  const s = Math.floor(ms / 1000);
  const hh = Math.floor(s / 3600), mm = Math.floor((s % 3600) / 60), ss = s % 60;
  const two = (/** @type {number} */ n) => String(n).padStart(2, "0");
  return hh > 0 ? `${hh}:${two(mm)}:${two(ss)}` : `${mm}:${two(ss)}`;
}

/** @param {number|null|undefined} ms */
function fmtTime(ms) {
  if (!ms) return "";
  const d = new Date(ms);
  return d.toLocaleTimeString(LANG, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

function serverNow() {
  return Date.now() + store.offset;
}

/** The server's wall clock now: what a round's start and a resumption are read on. */
function serverCivilNow() {
  return Date.now() + store.civilOffset;
}

/** Beyond this the page says that the server's clock and this device's differ. */
const CLOCKS_DIFFER_MS = 60000;

/** @param {number} ms */
function durationWords(ms) {
  const s = Math.round(Math.abs(ms) / 1000);
  const hh = Math.floor(s / 3600), mm = Math.floor(s / 60) % 60, ss = s % 60;
  return hh > 0 ? t("dur.hms", { h: hh, m: mm, s: ss }) : mm > 0 ? t("dur.ms", { m: mm, s: ss }) : t("dur.s", { s: ss });
}

/** The words for a server clock that differs from this device's, or "" when it does not. */
function clockDifference() {
  const d = store.civilOffset;
  if (Math.abs(d) < CLOCKS_DIFFER_MS) return "";
  return t(d > 0 ? "clock.ahead" : "clock.behind", { diff_ms: Math.abs(d) });
}

function showClockNote() {
  const note = document.getElementById("clock-note");
  if (!note) return;
  const words = clockDifference();
  note.replaceChildren(words);
  note.hidden = !words;
  if (!words || !isChief()) return;
  // The chief arbiter may set the hall's time to this device's (a server without a
  // real-time clock and no NTP): game clocks do not move; the server's own clock is left
  // for its operator (docs/OPERATIONS.md, "Time in a hall without internet").
  const reply = h("span", { class: "reply", id: "hall-time-reply" });
  const set = h("button", { type: "button", id: "set-hall-time", text: t("clock.set_hall_time"), onclick: async () => {
    const mine = new Date();
    if (!confirm(t("clock.set_hall_time.confirm", { time: mine.toLocaleString(LANG) }))) return;
    const r = await fetch("/api/hall/time", {
      method: "POST", credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": store.me ? store.me.csrf : "" },
      body: JSON.stringify({ civil_ms: Date.now() }),
    });
    const body = await r.json().catch(() => ({}));
    if (r.ok && typeof body.civil_ms === "number") {
      store.civilOffset = body.civil_ms - Date.now();
      showClockNote();
    } else {
      reply.textContent = t("reply.refused", { why: refusalText(body, String(r.status)) });
    }
  } });
  note.append(" ", set, " ", reply);
}

/**
 * What a side's clock shows now: the running side counts down from as_of (its free
 * delay first), the other shows its display time.
 * @param {State} st @param {"white"|"black"} color
 */
function clockMs(st, color) {
  const side = st[color];
  if (!side) return 0;
  if (st.phase === "running" && st.running === color) {
    const spent = Math.max(0, serverNow() - st.as_of);
    const delay = Math.min(spent, side.delay_left_ms || 0);
    return Math.max(0, side.remaining_ms - (spent - delay));
  }
  return side.display_ms;
}

/** @param {any} c */
function colorWord(c) { return c === "white" || c === "black" ? t(`side.${c}`) : String(c || ""); }

/**
 * A refusal's words: the daemon's code in the page's language when the catalogue has it
 * (`error.<code>`, the server's messages), else the daemon's English reason.
 * @param {any} a the reply's body @param {string} fallback
 */
function refusalText(a, fallback) {
  // The daemon's English is its own words: an English page shows them as they are; other
  // languages say the refusal from its code (`code`, finer than `error`) and parameters.
  const code = a && (typeof a.code === "string" ? a.code : a.error);
  if (typeof code === "string" && (LANG !== "en" || !a.reason) && hasText(`error.${code}`)) return t(`error.${code}`, a.params || {});
  return (a && (a.reason || a.error)) || fallback;
}

/** Sides as a list in the language ("White and Black"). @param {any[]} sides */
function sidesList(sides) {
  return new Intl.ListFormat(LANG, { type: "conjunction" }).format(sides.map(colorWord));
}

/**
 * Why a game ended, in words (the state's `termination`, the rules' `Termination`).
 * @param {any} r @returns {string}
 */
function terminationWords(r) {
  if (r.termination === "arbiter") return arbiterResultWords(r.kind && typeof r.kind === "object" ? r.kind : { kind: r.kind });
  const key = `term.${r.termination}`;
  if (!hasText(key)) return String(r.termination).replace(/_/g, " ");
  return t(key, { side: r.side || "", who: sidesList(r.absent || []) });
}

/**
 * A result the arbiter set, in words (the state's `kind`: an object tagged by its own
 * `kind`, as the rules crate writes `ArbiterResult`).
 * @param {any} k
 */
function arbiterResultWords(k) {
  if (k.kind === "agreed_draw") return t("res.agreed_draw");
  if (k.kind === "resignation") return t("res.resignation", { side: k.side });
  if (k.kind === "illegal_moves") return t("res.illegal_moves", { side: k.side });
  if (k.kind === "annulled") return t("res.annulled");
  return t("res.other");
}

/**
 * The result and, when `withReason`, why ("1-0 · Black lost on time").
 * @param {any} result @param {boolean} [withReason]
 */
function resultText(result, withReason) {
  if (!result) return "";
  const score = result.score || result.text || (typeof result === "string" ? result : "");
  if (!withReason || !result.termination) return score;
  return `${score} · ${terminationWords(result)}`;
}

/** @param {string} id */
function board(id) {
  let b = store.boards.get(id);
  if (!b) {
    b = { state: null, online: false, events: [], lastSeq: 0, lastMove: "", lastUci: "", moves: [], plies: {}, historyLoaded: false, earlyPress: {} };
    store.boards.set(id, b);
  }
  return b;
}

/** An arbiter's role in words (`role.<role>`: chief, arbiter, viewer). @param {string} role */
function roleWords(role) {
  return hasText(`role.${role}`) ? t(`role.${role}`) : role;
}

function isChief() {
  return !!store.me && store.me.arbiter.role === "chief";
}

/**
 * The node that owns board `b` when it is another node's (its retained status lists it and
 * this node's does not): this daemon sends its commands on to that node, and the board
 * page says so. `null`: this node's board, or not known to be another's.
 * @param {string} b
 */
function otherNode(b) {
  // The hall's `info` lists every node's boards (the daemon merges them): which are this
  // node's, its own status says (`/api/me` names the node).
  const me = store.me ? store.me.node : null;
  const lists = (/** @type {any} */ n) => !!n && Array.isArray(n.boards) && n.boards.includes(b);
  if (!me || lists(store.nodes.get(me))) return null;
  for (const [name, n] of store.nodes) if (name !== me && lists(n)) return name;
  return null;
}

/**
 * Whether every node listing board `b` is offline (a dead node's boards show offline here,
 * whatever its last retained state said).
 * @param {string} b
 */
function ownerDown(b) {
  const listing = [...store.nodes.values()].filter((n) => Array.isArray(n.boards) && n.boards.includes(b));
  return listing.length > 0 && listing.every((n) => n.state !== "online");
}

/** @param {string} b */
function mayCommand(b) {
  if (!store.me) return false;
  // Another node's board too: this node sends the command on to that node, whose answer
  // comes back here (hall/forward.rs).
  const a = store.me.arbiter;
  if (a.role === "chief") return true;
  if (a.role !== "arbiter") return false;
  // As auth.rs reads the list: "board-0*" is a section. The daemon decides anyway.
  return a.boards.length === 0 || a.boards.some((x) => (x.endsWith("*") ? b.startsWith(x.slice(0, -1)) : x === b));
}

/** @param {string} b */
function alertsOf(b) {
  let n = 0;
  for (const a of store.alerts.values()) if (a.board === b) n++;
  return n;
}

// ---------- the feed ----------

/** @param {string} boardId @param {any} ev */
function noteEvent(boardId, ev) {
  const b = board(boardId);
  if (typeof ev.seq === "number") {
    if (ev.seq <= b.lastSeq) return; // already have it (a replay or a resume overlap)
    b.lastSeq = ev.seq;
  }
  b.events.push(ev);
  // A hall screen shows only the last move: left on for a day it must not hold the day.
  const keep = PUBLIC ? 40 : 3000;
  if (b.events.length > keep) b.events.splice(0, b.events.length - keep);
  if (typeof ev.fen === "string" && ev.fen) b.lastFen = ev.fen;
  if (ev.event === "move_made" || ev.event === "sealed_move_played") {
    // Counted, not recounted from the list (which a hall screen keeps short).
    b.plies[ev.side] = (b.plies[ev.side] || 0) + 1;
    const mine = b.plies[ev.side] - 1;
    // An e-board move is published after the press that ended it (the board is read once
    // still): that press's clock is this move's.
    const early = b.earlyPress[ev.side];
    b.earlyPress[ev.side] = null;
    b.moves.push({ no: mine + 1, side: ev.side, san: ev.san, clock: early === undefined ? null : early });
    if (PUBLIC && b.moves.length > 8) b.moves.splice(0, b.moves.length - 8);
    b.lastMove = ev.san;
    b.lastUci = ev.uci;
  } else if (ev.event === "pressed") {
    let last = null;
    for (let i = b.moves.length - 1; i >= 0; i--) {
      if (b.moves[i].side === ev.side) { last = b.moves[i]; break; }
    }
    if (last && last.clock === null) last.clock = ev.remaining_ms;
    else b.earlyPress[ev.side] = ev.remaining_ms;
  }
}

/** @param {string} boardId */
function resetBoardHistory(boardId) {
  const b = board(boardId);
  b.events = []; b.moves = []; b.plies = {}; b.lastSeq = 0; b.lastMove = ""; b.lastUci = ""; b.earlyPress = {};
}

/**
 * Fill a board's move list and log from the server's recent events (a page that opened
 * mid-game, or a gap after a reconnection).
 * @param {string} boardId
 */
async function loadHistory(boardId) {
  const b = board(boardId);
  const url = PUBLIC ? `/api/public/board/${encodeURIComponent(boardId)}/events` : `/api/board/${encodeURIComponent(boardId)}/events`;
  try {
    const r = await fetch(url, { credentials: "same-origin" });
    if (!r.ok) return;
    const events = await r.json();
    resetBoardHistory(boardId);
    for (const ev of events) noteEvent(boardId, ev);
    b.historyLoaded = true;
    dirty.boards.add(boardId);
    renderSoon();
  } catch (_) { /* the feed will bring what follows */ }
}

/**
 * Every board's move list and log in one request (the hall page): one per board would
 * queue behind the browser's six connections to a host, and tiles waited for theirs.
 */
async function loadAllHistory() {
  // One request at a time: the page asks at its start, and again at the feed's `ready`
  // for boards it did not have yet.
  if (allHistoryBusy) return;
  allHistoryBusy = true;
  const url = PUBLIC ? "/api/public/boards/events" : "/api/boards/events";
  try {
    const r = await fetch(url, { credentials: "same-origin" });
    if (!r.ok) return;
    const all = await r.json();
    for (const [boardId, events] of Object.entries(all)) {
      const b = board(boardId);
      if (b.historyLoaded) continue;
      resetBoardHistory(boardId);
      for (const ev of /** @type {any[]} */ (events)) noteEvent(boardId, ev);
      b.historyLoaded = true;
      dirty.boards.add(boardId);
    }
    renderSoon();
  } catch (_) { /* the feed will bring what follows */ }
  // (A `ready` that came while the request was out was skipped: the answer had every
  // board's recent events the daemon holds.)
  allHistoryBusy = false;
}
let allHistoryBusy = false;

/** @type {Set<string>} */
const gapChecks = new Set();
/** Boards changed since the last render; `all` when something hall-wide changed. */
const dirty = { boards: /** @type {Set<string>} */ (new Set()), all: true };

/**
 * One MQTT payload from the feed, exactly as published.
 * @param {string} topic @param {string} text
 */
function apply(topic, text) {
  const parts = topic.split("/");
  if (!store.base) store.base = parts.slice(0, 2).join("/");
  const rest = parts.slice(2);
  if (rest[0] === "board" && rest.length >= 3) dirty.boards.add(rest[1]);
  else dirty.all = true;
  /** @type {any} */
  let v = null;
  if (text && (text[0] === "{" || text[0] === "[")) {
    try { v = JSON.parse(text); } catch (_) { v = null; }
  }
  if (rest[0] === "node" && rest[2] === "status") {
    // No daemon writes the hall's `status` (several servers would share it): derived.
    if (v) store.nodes.set(rest[1], v); else store.nodes.delete(rest[1]);
    // Another node's boards: offline while it is (only the boards its status lists).
    if (v && v.state !== "online" && Array.isArray(v.boards)) for (const id of v.boards) if (ownerDown(id)) board(id).online = false;
    store.status = [...store.nodes.values()].some((n) => n.state === "online") ? "online" : "offline";
  } else if (rest[0] === "status") {
    store.status = text;
  } else if (rest[0] === "info") {
    store.info = v;
    if (v && v.boards) for (const bi of v.boards) board(bi.id);
  } else if (rest[0] === "session") {
    store.session = v;
  } else if (rest[0] === "announce") {
    store.announce = v && typeof v.text === "string" ? v : null;
  } else if (rest[0] === "event" && v) {
    store.hallEvents.push(v);
    if (store.hallEvents.length > 200) store.hallEvents.shift();
  } else if (rest[0] === "alert") {
    const id = rest.slice(1).join("/");
    if (!text) store.alerts.delete(id);
    else if (v) {
      const isNew = !store.alerts.has(id);
      store.alerts.set(id, v);
      if (isNew && !store.snapshotting && isCritical(v) && !acked().has(alertKey(v))) beep();
    }
  } else if (rest[0] === "board" && rest.length >= 3) {
    const id = rest[1];
    const b = board(id);
    if (rest[2] === "availability") {
      b.online = text === "online" && !ownerDown(id);
    } else if (rest[2] === "state" && v) {
      const prevRound = b.state ? b.state.round : null;
      b.state = v;
      b.online = v.online && !ownerDown(id);
      if (!store.snapshotting) {
        const candidate = v.as_of - Date.now();
        if (!store.offsetKnown || candidate > store.offset) { store.offset = candidate; store.offsetKnown = true; }
      }
      if (prevRound !== null && v.round !== prevRound) resetBoardHistory(id);
      // Events missed (a lag, a reconnection): fetch them, once the burst has passed.
      if (v.seq > b.lastSeq && (b.historyLoaded || b.lastSeq > 0) && !gapChecks.has(id)) {
        gapChecks.add(id);
        setTimeout(() => {
          gapChecks.delete(id);
          const bb = board(id);
          if (bb.state && bb.state.seq > bb.lastSeq) loadHistory(id);
        }, 1500);
      }
    } else if (rest[2] === "event" && v) {
      noteEvent(id, v);
    }
  }
}

/** The tab's own EventSource, when the browser has no SharedWorker. */
/** @type {EventSource | null} */
let source = null;
/** The shared feed's port (one feed per browser, `feed.js`). */
/** @type {MessagePort | null} */
let feedPort = null;

/**
 * One item of the feed, from the shared worker or the tab's own EventSource: the same
 * four kinds the server's stream has (snapshot, a message, ready) plus open and error.
 * @param {{t: string, data?: string, closed?: boolean}} m
 */
function onFeed(m) {
  const conn = document.getElementById("conn");
  if (m.t === "snapshot") {
    store.snapshotting = true;
    store.alerts.clear();
  } else if (m.t === "ready") {
    store.snapshotting = false;
    dirty.all = true;
    if (conn) { conn.textContent = t("conn.live"); conn.className = "conn live"; }
    renderSoon();
    // Move lists for boards the page shows (a page that opened mid-game).
    const view = currentBoard();
    if (view && !board(view).historyLoaded) loadHistory(view);
    if (!view && [...store.boards.values()].some((b) => !b.historyLoaded)) loadAllHistory();
  } else if (m.t === "msg" && typeof m.data === "string") {
    const t0 = performance.now();
    const nl = m.data.indexOf("\n");
    const topic = nl < 0 ? m.data : m.data.slice(0, nl);
    const text = nl < 0 ? "" : m.data.slice(nl + 1);
    apply(topic, text);
    perf.feedItems++;
    if (!store.snapshotting) renderSoon();
    perf.scriptMs += performance.now() - t0;
  } else if (m.t === "open") {
    if (conn) { conn.textContent = t("conn.live"); conn.className = "conn live"; }
  } else if (m.t === "error") {
    if (conn) { conn.textContent = t("conn.reconnecting"); conn.className = "conn down"; }
    // EventSource retries by itself (sending Last-Event-ID); a lost session does not heal.
    if (!PUBLIC && m.closed) {
      fetch("/api/me", { credentials: "same-origin" }).then((r) => {
        if (r.status === 401) { location.href = "/login"; return; }
        setTimeout(() => { if (feedPort) feedPort.postMessage({ t: "reset" }); else connect(); }, 1000);
      }, () => setTimeout(connect, 1000));
    }
  }
}

/** The feed: shared by the browser's tabs when it can be, else this tab's own (noted). */
function connect() {
  const url = PUBLIC ? "/api/public/feed" : "/api/feed";
  const meta = document.querySelector("meta[name=feed-worker]");
  const worker = meta ? meta.getAttribute("content") : null;
  if (typeof SharedWorker === "function" && worker && !/[?&]feed=tab\b/.test(location.search)) {
    try {
      const w = new SharedWorker(worker, { name: url });
      feedPort = w.port;
      feedPort.onmessage = (e) => onFeed(e.data);
      feedPort.start();
      feedPort.postMessage({ t: "hello", feed: url, session: store.me ? store.me.csrf : "" });
      return;
    } catch (_) { feedPort = null; /* below: one feed for this tab */ }
  }
  const note = document.getElementById("feed-note");
  if (note) note.hidden = false;
  source = new EventSource(url);
  source.addEventListener("snapshot", () => onFeed({ t: "snapshot" }));
  source.addEventListener("ready", () => onFeed({ t: "ready" }));
  source.onmessage = (e) => onFeed({ t: "msg", data: e.data });
  source.onopen = () => onFeed({ t: "open" });
  source.onerror = () => {
    const closed = !!source && source.readyState === EventSource.CLOSED;
    if (closed) source = null;
    onFeed({ t: "error", closed });
  };
}

// ---------- commands ----------

/** A transaction id for one filled form: a retry or a second click sends the same. */
function mintTransaction() {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return `web-${[...bytes].map((x) => x.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Send a command (an MQTT `set` body) and show the reply in `replyEl`. The answer to
 * the same `transaction` is the first one (sent twice, applied once).
 * @param {string|null} boardId  null: the hall
 * @param {Record<string, any>} body
 * @param {HTMLElement} [replyEl]
 * @returns {Promise<"ok"|"refused"|"lost">} lost: no answer (a retry sends the same transaction)
 */
async function post(boardId, body, replyEl) {
  const url = boardId ? `/api/board/${encodeURIComponent(boardId)}/command` : "/api/hall/command";
  if (!body.transaction) body.transaction = mintTransaction();
  if (replyEl) { replyEl.textContent = "…"; replyEl.className = "reply"; }
  try {
    const r = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": store.me ? store.me.csrf : "" },
      body: JSON.stringify(body),
    });
    /** @type {any} */
    let answer = {};
    try { answer = await r.json(); } catch (_) { answer = {}; }
    const ok = r.ok && answer.status === "ok";
    if (replyEl) {
      // The daemon's reason is written for the arbiter; the code is for programs.
      const why = refusalText(answer, r.statusText || String(r.status));
      replyEl.textContent = ok ? t("reply.done", { act: doneWords(String(body.action)) }) : t("reply.refused", { why });
      replyEl.className = ok ? "reply ok" : "reply err";
      // Which pairing a refused round names (`pairings[i]`), for its row.
      replyEl.dataset.at = !ok && answer.params && typeof answer.params.at === "string" ? answer.params.at : "";
    }
    if (r.status === 401) location.href = "/login";
    return ok ? "ok" : (r.status >= 500 && !answer.status ? "lost" : "refused");
  } catch (e) {
    if (replyEl) { replyEl.textContent = t("reply.no_answer", { error: String(e) }); replyEl.className = "reply err"; }
    return "lost";
  }
}

/** A command done, in words ("add time"): `done.<action>`, the daemon's action names. @param {string} action */
function doneWords(action) {
  return hasText(`done.${action}`) ? t(`done.${action}`) : action.replace(/_/g, " ");
}

/**
 * The house notation (rules::millis): "1:30:00", "5:00", "500ms", "30s", "1.5m", "2h";
 * and, as this page always read it, "90" (seconds) or "-30" → ms; NaN when unreadable.
 * @param {string} text
 */
function parseDuration(text) {
  const t = text.trim().toLowerCase();
  if (!t) return NaN;
  const neg = t.startsWith("-");
  const body = neg || t.startsWith("+") ? t.slice(1) : t;
  const unit = /^(\d{1,9})(?:\.(\d{1,3}))?(ms|s|m|h)$/.exec(body);
  if (unit) {
    if (unit[3] === "ms" && unit[2] !== undefined) return NaN;
    const scale = { ms: 1, s: 1000, m: 60000, h: 3600000 }[unit[3]];
    const ms = Number(unit[1]) * scale + Math.round((Number((unit[2] || "").padEnd(3, "0")) * scale) / 1000);
    return neg ? -ms : ms;
  }
  const parts = body.split(":");
  if (parts.length > 3 || parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) return NaN;
  let s = 0;
  for (const p of parts) s = s * 60 + Number(p);
  return Math.round((neg ? -s : s) * 1000);
}

/** @param {number} ms → "YYYY-MM-DDTHH:MM:SS" for a datetime-local field, in local time */
function localInput(ms) {
  return new Date(ms - new Date(ms).getTimezoneOffset() * 60000).toISOString().slice(0, 19);
}

/** A start this far past is said before sending; below the daemon's default grace (10 s),
 * so the page asks before the daemon would refuse. */
const PAST_START_SLACK_MS = 5000;

/**
 * A start that has passed, in words: how long ago and what it costs.
 * @param {number} agoMs @param {string} whoKey "past.who.every_white", "past.who.to_move"
 */
function pastStartWords(agoMs, whoKey) {
  return t("past.start", { ago_ms: agoMs, who: t(whoKey), clock: fmtClock(agoMs) });
}

/** @param {string} local "YYYY-MM-DDTHH:MM" in local time → ms */
function parseLocal(local) {
  const ms = new Date(local).getTime();
  return Number.isFinite(ms) ? ms : NaN;
}

/**
 * A command's form, from its description. Field kinds: side, duration (h:mm:ss),
 * seconds (signed), int, text, select, instant (local date-time), bool, board. Labels,
 * option words (`words`) and a rule that is words (`rule.…`) are catalogue keys.
 * @typedef {{name: string, label: string, kind: string, optional?: boolean, min?: number,
 *   max?: number, options?: string[], words?: Record<string, string>, placeholder?: string, path?: string[]}} Field
 * @typedef {{action: string, label: string, rule?: string, fields: Field[], reason?: "required"|"optional"|"none", danger?: boolean}} Spec
 */

/** A result as the arbiter says it (catalogue keys); the value is the daemon's. */
const RESULT_WORDS = {
  "1-0": "opt.result.white_wins", "0-1": "opt.result.black_wins", "1/2-1/2": "opt.result.draw", "0-0": "opt.result.both_lose",
  agreed_draw: "opt.result.agreed_draw", resignation: "opt.result.resignation", illegal_moves: "opt.result.illegal_moves", annulled: "opt.result.annulled",
};

/** @type {Record<string, Spec[]>} */
const BOARD_COMMANDS = {
  "grp.clock": [
    { action: "pause", label: "act.pause", rule: "6.12a", fields: [], reason: "optional" },
    { action: "resume", label: "act.resume", rule: "6.12a", fields: [], reason: "optional" },
    { action: "present", label: "act.present", rule: "6.6", fields: [{ name: "side", label: "fld.side", kind: "side" }], reason: "none" },
    { action: "add_time", label: "act.add_time", rule: "6.13 / 7.5.5", fields: [{ name: "side", label: "fld.side", kind: "side" }, { name: "delta_ms", label: "fld.seconds", kind: "seconds", min: -36000, max: 36000 }], reason: "required" },
    { action: "set_time", label: "act.set_time", rule: "6.10 / 6.13", fields: [{ name: "side", label: "fld.side", kind: "side" }, { name: "remaining_ms", label: "fld.time_left_max", kind: "duration", min: 0, max: 36000 }], reason: "required" },
    { action: "set_moves", label: "act.set_moves", rule: "6.10", fields: [{ name: "side", label: "fld.side", kind: "side" }, { name: "moves", label: "fld.moves_completed", kind: "int", min: 0, max: 500 }, { name: "period", label: "fld.period_optional", kind: "int", min: 1, max: 10, optional: true }], reason: "required" },
    { action: "replace_clock", label: "act.replace_clock", rule: "6.10", fields: [{ name: "to", label: "fld.to_board", kind: "board", optional: true }, { name: "white_ms", label: "fld.white_time", kind: "duration", min: 0, max: 36000, optional: true }, { name: "black_ms", label: "fld.black_time", kind: "duration", min: 0, max: 36000, optional: true }], reason: "required" },
    { action: "swap_sides", label: "act.swap_sides", rule: "6.4", fields: [], reason: "optional" },
    { action: "set_mode", label: "act.set_mode", rule: "rule.set_mode", fields: [{ name: "mode", label: "fld.mode", kind: "select", options: ["control", "observe"], words: { control: "opt.mode.control", observe: "opt.mode.observe" } }], reason: "none" },
  ],
  "grp.result": [
    { action: "confirm_flag", label: "act.confirm_flag", rule: "6.8 / 6.9", fields: [], reason: "optional" },
    { action: "set_result", label: "act.set_result", rule: "5, 6.9, 7", fields: [{ name: "result", label: "fld.result", kind: "select", options: ["1-0", "0-1", "1/2-1/2", "0-0", "agreed_draw", "resignation", "illegal_moves", "annulled"], words: RESULT_WORDS }, { name: "side", label: "fld.who", kind: "side", optional: true }], reason: "required", danger: true },
    { action: "set_position", label: "act.set_position", rule: "rule.set_position", fields: [{ name: "fen", label: "fld.fen", kind: "text", placeholder: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" }], reason: "required" },
  ],
  "grp.adjournment": [
    { action: "adjourn", label: "act.adjourn", rule: "I.1.1", fields: [{ name: "start", path: ["resumption", "start"], label: "fld.resumption_optional", kind: "instant", optional: true }, { name: "place", path: ["resumption", "place"], label: "fld.place", kind: "text", optional: true }], reason: "optional" },
    { action: "seal", label: "act.seal", rule: "I.1.1", fields: [{ name: "side", label: "fld.sealer_optional", kind: "side", optional: true }, { name: "mv", label: "fld.sealed_move", kind: "secret" }], reason: "none" },
    { action: "commit_seal", label: "act.commit_seal", rule: "I.1.1 / A1a", fields: [], reason: "none" },
    { action: "verify_envelope", label: "act.verify_envelope", rule: "I.3", fields: [], reason: "none" },
    { action: "schedule_resumption", label: "act.schedule_resumption", rule: "I.2.7 / I.14", fields: [{ name: "start", path: ["resumption", "start"], label: "fld.start", kind: "instant" }, { name: "end", path: ["resumption", "end"], label: "fld.end_optional", kind: "instant", optional: true }, { name: "place", path: ["resumption", "place"], label: "fld.place", kind: "text" }], reason: "none" },
    { action: "set_session_end", label: "act.set_session_end", rule: "I.1.1", fields: [{ name: "end", label: "fld.session_end", kind: "instant", optional: true }], reason: "none" },
    { action: "draw_offer", label: "act.draw_offer", rule: "9.1 / I.4", fields: [{ name: "side", label: "fld.offered_by", kind: "side" }], reason: "none" },
    { action: "draw_reply", label: "act.draw_reply", rule: "I.6", fields: [{ name: "accept", label: "fld.accept", kind: "bool" }], reason: "none" },
    { action: "open_envelope", label: "act.open_envelope", rule: "I.7", fields: [], reason: "none" },
    { action: "set_adjournment_rules", label: "act.set_adjournment_rules", rule: "I.8 / I.10", fields: [
      { name: "notation_language", path: ["rules", "notation_language"], label: "fld.notation_language", kind: "select", options: ["en", "es"], words: { en: "opt.letters.en", es: "opt.letters.es" } },
      { name: "edition", path: ["rules", "edition"], label: "fld.edition", kind: "select", options: ["guidelines", "appendix_a"], words: { guidelines: "opt.edition.guidelines", appendix_a: "opt.edition.appendix_a" } },
    ], reason: "none" },
    { action: "counter_seal", label: "act.counter_seal", rule: "I.9.3", fields: [{ name: "mv", label: "fld.reply_written", kind: "secret" }], reason: "none" },
    { action: "envelope_lost", label: "act.envelope_lost", rule: "I.12", fields: [], reason: "required", danger: true },
    { action: "correct_time", label: "act.correct_time", rule: "I.13", fields: [{ name: "side", label: "fld.side", kind: "side" }, { name: "remaining_ms", label: "fld.time_left", kind: "duration", min: 0, max: 36000 }], reason: "required" },
  ],
};

/**
 * The body of a form, or an error message naming the field.
 * @param {Spec} spec @param {HTMLFormElement} form
 * @returns {{body?: Record<string, any>, error?: string}}
 */
function formBody(spec, form) {
  /** @type {Record<string, any>} */
  const body = { action: spec.action };
  for (const f of spec.fields) {
    const el = /** @type {HTMLInputElement} */ (form.elements.namedItem(f.name));
    const raw = el ? (f.kind === "bool" ? (el.checked ? "true" : "false") : el.value.trim()) : "";
    if (!raw) {
      if (f.optional || f.kind === "bool") continue;
      return { error: t("form.required", { field: t(f.label) }) };
    }
    /** @type {any} */
    let value = raw;
    if (f.kind === "duration" || f.kind === "seconds") {
      const ms = f.kind === "seconds" ? Math.round(Number(raw) * 1000) : parseDuration(raw);
      if (!Number.isFinite(ms)) return { error: t("form.not_time", { field: t(f.label), value: raw }) };
      // Limits as the field's label writes them (no grouping: "36000", as typed).
      if (f.min !== undefined && ms < f.min * 1000) return { error: t("form.at_least_s", { field: t(f.label), min: String(f.min) }) };
      if (f.max !== undefined && ms > f.max * 1000) return { error: t("form.at_most_s", { field: t(f.label), max: String(f.max) }) };
      value = ms;
    } else if (f.kind === "int") {
      if (!/^\d+$/.test(raw)) return { error: t("form.not_int", { field: t(f.label), value: raw }) };
      value = Number(raw);
      if ((f.min !== undefined && value < f.min) || (f.max !== undefined && value > f.max)) return { error: `${t(f.label)}: ${f.min} … ${f.max}` };
    } else if (f.kind === "minutes") {
      // An end said as "for N minutes", on the server's clock (an announcement's `until`).
      if (!/^\d+$/.test(raw) || Number(raw) < (f.min || 1) || Number(raw) > (f.max || 1440)) return { error: t("form.minutes", { field: t(f.label), min: f.min || 1, max: f.max || 1440 }) };
      value = Math.round(serverCivilNow() + Number(raw) * 60000);
    } else if (f.kind === "instant") {
      value = parseLocal(raw);
      if (!Number.isFinite(value)) return { error: t("form.not_instant", { field: t(f.label) }) };
    } else if (f.kind === "bool") {
      value = raw === "true";
    }
    if (f.path) {
      let o = body;
      for (const p of f.path.slice(0, -1)) o = o[p] = o[p] || {};
      o[f.path[f.path.length - 1]] = value;
    } else {
      body[f.name] = value;
    }
  }
  // Said here, before any confirmation: the daemon refuses these without a side.
  if (spec.action === "set_result" && (body.result === "resignation" || body.result === "illegal_moves") && !body.side) {
    return { error: t(body.result === "resignation" ? "form.say_who.resignation" : "form.say_who.illegal_moves") };
  }
  // A resumption needs its place; an adjourn without a start has none.
  if (body.resumption && body.resumption.start === undefined) delete body.resumption;
  if (body.resumption && body.resumption.place === undefined) body.resumption.place = "";
  const reasonEl = /** @type {HTMLInputElement|null} */ (form.elements.namedItem("reason"));
  const reason = reasonEl ? reasonEl.value.trim() : "";
  if (spec.reason === "required" && !reason) return { error: t("form.reason_required") };
  if (reason) body.reason = reason;
  return { body };
}

/**
 * @param {Field} f
 * @param {string[]} boards
 */
function fieldInput(f, boards) {
  if (f.kind === "side") {
    return h("select", { name: f.name }, [f.optional ? h("option", { value: "", text: "—" }) : null, h("option", { value: "white", text: t("side.white") }), h("option", { value: "black", text: t("side.black") })]);
  }
  if (f.kind === "select") {
    return h("select", { name: f.name }, (f.options || []).map((o) => h("option", { value: o, text: f.words && f.words[o] ? t(f.words[o]) : o })));
  }
  if (f.kind === "board") {
    const sel = h("select", { name: f.name }, [h("option", { value: "", text: "—" }), ...boards.map((b) => h("option", { value: b, text: b }))]);
    // The page may have been drawn before the feed named the boards.
    sel.addEventListener("focus", () => {
      if (sel.children.length > 1) return;
      const here = currentBoard();
      for (const b of [...store.boards.keys()].sort()) if (b !== here) sel.append(h("option", { value: b, text: b }));
    });
    return sel;
  }
  if (f.kind === "bool") return h("input", { name: f.name, type: "checkbox" });
  // step 1: an instant may have seconds, as the Round page's start has. Without it the
  // browser's own check refuses such a value at submit and the form silently does nothing.
  if (f.kind === "instant") return h("input", { name: f.name, type: "datetime-local", step: 1 });
  if (f.kind === "int") return h("input", { name: f.name, type: "number", min: f.min, max: f.max, step: 1 });
  if (f.kind === "minutes") return h("input", { name: f.name, type: "number", min: f.min, max: f.max, step: 1, value: "10" });
  if (f.kind === "seconds") return h("input", { name: f.name, type: "number", min: f.min, max: f.max, step: 1, placeholder: t("form.eg_seconds") });
  if (f.kind === "duration") return h("input", { name: f.name, type: "text", placeholder: "h:mm:ss", pattern: "-?[0-9:.]+" });
  if (f.kind === "secret") return h("input", { name: f.name, type: "password", autocomplete: "off" });
  return h("input", { name: f.name, type: "text", placeholder: f.placeholder && hasText(f.placeholder) ? t(f.placeholder) : (f.placeholder || ""), maxlength: f.max });
}

/** How long after a command was done a second click is still the same command. */
const SAME_CLICK_MS = 3000;

/**
 * A command's form. One filled form is one command: its transaction is minted when it
 * is first sent and kept while the form is unchanged — a double click, a retry after no
 * answer, or a second click within SAME_CLICK_MS of the answer sends the same
 * transaction, which the daemon applies once and answers with its first reply. The
 * button is disabled until the reply. Masked fields (a sealed move) are emptied after
 * every send, refused or not: text left in a field that looks empty became part of the
 * next sealed move. Acts marked `danger` (and every seal) ask first, in words.
 * @param {Spec} spec @param {string|null} boardId @param {string[]} boards
 */
function commandForm(spec, boardId, boards) {
  const reply = h("span", { class: "reply", "aria-live": "polite" });
  const fields = spec.fields.map((f) => h("label", {}, [t(f.label), fieldInput(f, boards)]));
  const reason = spec.reason === "none" ? null : h("label", {}, [t(spec.reason === "required" ? "form.reason_required_label" : "form.reason"), h("input", { name: "reason", type: "text" })]);
  const button = /** @type {HTMLButtonElement} */ (h("button", { type: "submit", class: spec.danger ? "danger" : "primary", text: t(spec.label) }));
  const confirmBox = h("div", { class: "confirm", hidden: true });
  const sealing = SEALS.has(spec.action);
  // A sealed move is taken in the event's piece letters (and figurines): said here.
  const letters = sealing ? h("p", { class: "hint letters", text: lettersHint(boardId ? board(boardId).state : null) }) : null;
  const form = /** @type {HTMLFormElement} */ (h("form", { class: "cmd", "data-action": spec.action }, [
    h("h4", {}, [t(spec.label), " ", h("small", { text: spec.rule ? `(${spec.rule.startsWith("rule.") ? t(spec.rule) : spec.rule})` : "" })]),
    ...fields, letters, reason, button, confirmBox, reply,
  ]));
  /** @type {string|null} */
  let transaction = null;
  let doneAt = 0;
  let busy = false;
  const clearSecrets = () => {
    for (const f of spec.fields) if (f.kind === "secret") { const el = /** @type {HTMLInputElement} */ (form.elements.namedItem(f.name)); if (el) el.value = ""; }
  };
  // An edited form is another command.
  form.addEventListener("input", () => { transaction = null; confirmBox.hidden = true; if (sealing) showArrow(null); });
  form.addEventListener("change", () => { transaction = null; });
  /** @param {Record<string, any>} body */
  const send = async (body) => {
    busy = true;
    button.disabled = true;
    confirmBox.hidden = true;
    if (!transaction || (doneAt && Date.now() - doneAt > SAME_CLICK_MS)) { transaction = mintTransaction(); doneAt = 0; }
    body.transaction = transaction;
    const outcome = await post(boardId, body, reply);
    if (spec.fields.some((f) => f.kind === "secret")) clearSecrets();
    if (sealing) showArrow(null);
    if (outcome === "ok") doneAt = Date.now();
    // A refusal is an answer: the next click (the state may have changed) is a new try.
    else if (outcome === "refused") transaction = null;
    busy = false;
    button.disabled = false;
  };
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (busy) return;
    const { body, error } = formBody(spec, form);
    if (!body || error) {
      reply.textContent = error || t("form.incomplete"); reply.className = "reply err";
      if (spec.fields.some((f) => f.kind === "secret")) clearSecrets();
      return;
    }
    let ask = confirmText(spec, body, boardId);
    let yesText = t("btn.confirm");
    // A resumption whose start has passed: said, and sent only as meant (the daemon
    // refuses it otherwise, past_start).
    const resumeAt = body.resumption ? body.resumption.start : undefined;
    const ago = typeof resumeAt === "number" ? serverCivilNow() - resumeAt : 0;
    if (ago > PAST_START_SLACK_MS) {
      ask = `${pastStartWords(ago, "past.who.to_move")} ${t("past.keep_or_change")}${ask ? ` ${ask}` : ""}`;
      body.allow_past_start = true;
      yesText = t("past.keep");
    }
    // A sealed move is read back as the rules will read it at the opening, in words and
    // as an arrow, before it is sealed (I.8): the page is never why a seal is wrong.
    if (sealing) {
      busy = true;
      const reading = await readSeal(boardId, String(body.mv));
      busy = false;
      if (reading && reading.refuse) {
        const why = reading.refuse_letter && reading.letters ? t("seal.words.foreign_letter", { letter: reading.refuse_letter, letters: reading.letters.letters }) : reading.refuse;
        reply.textContent = t("seal.refused", { mv: String(body.mv), why }); reply.className = "reply err";
        showArrow(null);
        return;
      }
      ask = sealConfirmText(body, boardId, reading);
      if (reading && reading.verdict !== "legal") yesText = t("seal.as_written");
      showArrow(reading && reading.verdict === "legal" ? reading : null);
    }
    if (!ask) { await send(body); return; }
    // Said back in words, and sent only on a second, deliberate press.
    const yes = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: spec.danger ? "danger" : "primary", text: yesText }));
    const no = h("button", { type: "button", text: t("btn.cancel") });
    yes.addEventListener("click", () => { if (!busy) send(body); });
    no.addEventListener("click", () => { confirmBox.hidden = true; if (spec.fields.some((f) => f.kind === "secret")) clearSecrets(); if (sealing) showArrow(null); });
    confirmBox.replaceChildren(h("p", { class: sealing ? "seal-confirm" : "", text: ask }), yes, " ", no);
    confirmBox.hidden = false;
    reply.textContent = "";
  });
  return form;
}

/** The acts that take a sealed move as written. */
const SEALS = new Set(["seal", "counter_seal"]);

/** The event's piece letters for sealed moves (the board's adjournment rules). @param {State|null} st */
function eventLetters(st) {
  // The state's own (the event's, a round's or the arbiter's); English is not written.
  if (st && st.piece_letters) return st.piece_letters;
  const rules = st && st.adjournment && st.adjournment.rules;
  return (rules && rules.notation_language) || "en";
}

/**
 * What the seal field takes, in words: the event's letters from the server's table (the
 * rules core reads the same one), each with its piece's name.
 * @param {State|null} st
 */
function lettersHint(st) {
  const lang = eventLetters(st);
  const letters = (I18N.letters[lang] || I18N.letters.en || "K Q R B N P").split(" ");
  /** @type {Record<string, string>} */
  const p = {};
  ["K", "Q", "R", "B", "N", "P"].forEach((role, i) => { p[role] = letters[i] || role; });
  const table = hasText(`letters.table.${lang}`) ? t(`letters.table.${lang}`, p) : letters.join(" ");
  return t("letters.hint", { table, Q: p.Q });
}

/**
 * A sealed move as written, read by the daemon in the position it is sealed in with the
 * event's letters (`POST /api/seal/read`): the same reading as at the opening. null when
 * it could not be asked.
 * @param {string|null} boardId @param {string} mv
 */
async function readSeal(boardId, mv) {
  const b = boardId ? board(boardId) : null;
  const st = b ? b.state : null;
  const fen = st && (st.fen || b.lastFen);
  if (!fen) return null;
  try {
    const r = await fetch("/api/seal/read", {
      method: "POST", credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": store.me ? store.me.csrf : "" },
      body: JSON.stringify({ fen, mv, letters: eventLetters(st) }),
    });
    return r.ok ? await r.json() : null;
  } catch (_) {
    return null;
  }
}

/** Where the board page draws a confirmed move's arrow (boardView sets it). @type {(shown: {from: string, to: string} | null) => void} */
let onArrow = () => {};

/** The diagram's arrow for a move being confirmed. @param {any} reading */
function showArrow(reading) {
  onArrow(reading ? { from: reading.from, to: reading.to } : null);
}

/**
 * A sealed move's reading in the page's language, from the server's data (`move`, `why`,
 * `candidates`); the server's English `words` when it gave none. Moves named in it are in
 * the event's letters.
 * @param {any} r the reading @param {string} letters the event's piece letters
 */
function sealWords(r, letters) {
  const m = r.move;
  if (r.verdict === "legal" && m && m.castle) return t(`seal.words.castle.${m.castle}`, { who: colorWord(m.side), king: m.king, to: m.to });
  if (r.verdict === "legal" && m) {
    let words = t("seal.words.move", { who: colorWord(m.side), piece: t(`seal.piece.${m.role}`), from: m.from, to: m.to });
    if (m.capture) words = t("seal.words.taking", { words, piece: t(`seal.the.${m.capture}`) });
    if (m.en_passant) words = t("seal.words.en_passant", { words });
    if (m.promotion) words = t("seal.words.promoting", { words, piece: t(`seal.a.${m.promotion}`) });
    return words;
  }
  if (r.verdict === "ambiguous") return t("seal.words.ambiguous", { candidates: new Intl.ListFormat(LANG, { type: "disjunction" }).format((r.candidates || []).map((/** @type {string} */ c) => sanIn(c, letters))) });
  if (r.verdict === "meaningless" && r.why) return t("seal.words.meaningless", { why: whyWords(r.why, letters) });
  if (r.verdict === "illegal" && r.why) return t("seal.words.illegal", { why: whyWords(r.why, letters) });
  return String(r.words || "");
}

/**
 * The move's long form ("Caballo g1–f3"): the piece named in the page's language, the
 * promotion in the event's letters as the server wrote it; the server's own words on an
 * English page, where they name the piece in the event's language.
 * @param {any} r the reading
 */
function writtenIn(r) {
  const m = r.move;
  if (LANG === "en" || !m || m.castle || !m.role) return String(r.written || "");
  const name = t(`seal.piece.${m.role}`);
  const promotion = (/=.$/.exec(String(r.written || "")) || [""])[0];
  return `${name.charAt(0).toLocaleUpperCase(LANG)}${name.slice(1)} ${m.from}${m.capture ? "x" : "–"}${m.to}${promotion}`;
}

/**
 * Why a sealed move is meaningless or illegal (`SealedWhy`: a code and its parameters),
 * with the moves it names in the event's letters.
 * @param {any} why @param {string} letters
 */
function whyWords(why, letters) {
  const params = Object.assign({}, why.params || {});
  if (typeof params.text === "string" && why.code !== "not_a_promotion_piece") params.text = sanIn(params.text, letters);
  return hasText(`sealwhy.${why.code}`) ? t(`sealwhy.${why.code}`, params) : String(why.code);
}

/**
 * A seal's confirmation: the move in words and in the event's letters, or why it cannot
 * be played (it may still be sealed deliberately: I.8 is the players' rule).
 * @param {Record<string, any>} body @param {string|null} boardId @param {any} reading
 */
function sealConfirmText(body, boardId, reading) {
  const where = boardId || t("seal.this_board");
  const st = boardId ? board(boardId).state : null;
  const sealer = body.side || (st && st.adjournment && st.adjournment.sealer) || (st && st.turn) || "";
  const who = sealer && st && st[sealer] ? `${st[sealer].name} (${colorWord(sealer)})` : (sealer ? colorWord(sealer) : t("seal.player_to_move"));
  const keep = t("seal.keep");
  const mv = String(body.mv);
  if (!reading) return t("seal.confirm.unread", { who, mv, where, keep });
  const words = sealWords(reading, eventLetters(st));
  if (reading.verdict === "legal") return t("seal.confirm.legal", { who, words, written: writtenIn(reading), mv, san: reading.san, where, keep });
  return t("seal.confirm.invalid", { mv, words, who });
}

/**
 * What a danger act (or a seal) will do, restated for its confirmation; null: no
 * confirmation needed.
 * @param {Spec} spec @param {Record<string, any>} body @param {string|null} boardId
 * @returns {string|null}
 */
function confirmText(spec, body, boardId) {
  const where = boardId || t("confirm.every_board");
  const st = boardId ? board(boardId).state : null;
  const name = (/** @type {string} */ c) => (st && st[c] ? `${st[c].name} (${colorWord(c)})` : colorWord(c));
  if (spec.action === "set_result") {
    const who = body.side ? name(body.side) : t("confirm.side_named");
    const key = { resignation: "confirm.what.resignation", illegal_moves: "confirm.what.illegal_moves", agreed_draw: "confirm.what.agreed_draw", annulled: "confirm.what.annulled" }[String(body.result)];
    return t("confirm.set_result", { where, what: key ? t(key, { who }) : body.result });
  }
  if (spec.action === "envelope_lost") return t("confirm.envelope_lost", { where });
  if (spec.action === "pause" && !boardId) return t("confirm.pause_hall");
  if (spec.action === "seal_all") return t("confirm.seal_all");
  return spec.danger ? t("confirm.danger", { act: t(spec.label), where }) : null;
}

// ---------- alerts: sound and banner ----------

/** @param {any} a */
function isCritical(a) {
  return a.severity === "critical" || CRITICAL.has(a.kind);
}
/**
 * An alert's message as the page says it: the daemon names the MQTT commands that resolve
 * it (for programs and mosquitto_pub); the arbiter sees the page's buttons.
 * @param {any} a
 */
function alertText(a) {
  return `${a.board || t("alerts.hall_wide")}: ${alertMessage(a)}`;
}
/**
 * The alert in the page's language from its code and parameters (`alert.<code>`, the
 * server's messages), else the daemon's English message.
 * @param {any} a
 */
function alertMessage(a) {
  if (LANG !== "en" && typeof a.code === "string" && hasText(`alert.${a.code}`)) return t(`alert.${a.code}`, a.params || {});
  return String(a.message)
    .replace(/set_time to correct the official time, or acknowledge_alert to keep it/, "Set time to correct the official time, or Keep the official times");
}
/** @param {any} a */
function alertKey(a) {
  return `${a.id}@${a.since}`;
}
/** @returns {Set<string>} */
function acked() {
  try { return new Set(JSON.parse(localStorage.getItem("hallclock.acked") || "[]")); } catch (_) { return new Set(); }
}
/** @param {any} a */
function ack(a) {
  const s = acked();
  s.add(alertKey(a));
  localStorage.setItem("hallclock.acked", JSON.stringify([...s].slice(-500)));
  dirty.all = true;
  renderSoon();
}

/** @type {AudioContext|null} */
let audio = null;
function beep() {
  if (PUBLIC) return;
  try {
    audio = audio || new AudioContext();
    const o = audio.createOscillator(), g = audio.createGain();
    o.frequency.value = 880;
    g.gain.setValueAtTime(0.15, audio.currentTime);
    g.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.6);
    o.connect(g).connect(audio.destination);
    o.start();
    o.stop(audio.currentTime + 0.6);
  } catch (_) { /* no audio: the banner still flashes */ }
}

/**
 * The sealed move the arbiter must now make on the board, in words, or "" (see noteEvent).
 * @param {string} id
 */
function sealedToPlayText(id) {
  // After the opening (I.9) the daemon plays the sealed move; the arbiter must make it on
  // the e-board, whose next move is read only from the position after it. Asked for from
  // the state (every page has it, history or not) until the responder's reply is made.
  const st = board(id).state;
  const adj = st && st.adjournment;
  if (!st || !adj || adj.stage !== "resumed" || st.phase === "finished" || st.phase === "idle") return "";
  const env = (adj.envelopes || []).filter((/** @type {any} */ e) => e.status === "opened" && !e.counter_seal).pop();
  const v = env && env.opened && env.opened.verdict;
  if (!v || v.verdict !== "legal") return "";
  const responder = env.sealer === "white" ? "black" : "white";
  const before = env.sealer === "white" ? env.move_number - 1 : env.move_number;
  if (!st[responder] || st[responder].moves > before) return "";
  return t("banner.to_play", { san: sanIn(v.san, eventLetters(st)), side: env.sealer });
}

function renderBanner() {
  const el = document.getElementById("banner");
  const count = document.getElementById("alert-count");
  if (!el || !count) return;
  const done = acked();
  const open = [...store.alerts.values()].filter((a) => isCritical(a) && !done.has(alertKey(a)));
  setText(count, store.alerts.size ? String(store.alerts.size) : "");
  // A game resumed from its envelope goes on only once the board shows the sealed move.
  const toPlay = [...store.boards.keys()].sort().map((id) => [id, sealedToPlayText(id)]).filter(([, words]) => words);
  const key = JSON.stringify([open.map(alertKey), toPlay]);
  if (el.dataset.key === key) return;
  el.dataset.key = key;
  if (PUBLIC || (open.length === 0 && toPlay.length === 0)) { el.hidden = true; el.replaceChildren(); document.body.style.paddingBottom = ""; return; }
  el.hidden = false;
  /** @type {(Node|string)[]} */
  const parts = toPlay.map(([id, words], i) => h("span", { class: "to-play" }, [i ? "; " : "", h("a", { href: `/board/${id}`, text: `${id}: ${words}` })]));
  if (toPlay.length && open.length) parts.push(" · ");
  // The count is said against the badge's (every standing alert), so the two never seem
  // to disagree.
  const total = store.alerts.size;
  if (open.length) parts.push(`${t("banner.critical", { count: open.length })}${total > open.length ? ` ${t("banner.standing", { count: total })}` : ""}: `, ...open.slice(0, 3).map((a, i) => h("span", {}, [i ? "; " : "", h("a", { href: a.board ? `/board/${a.board}` : "/alerts", text: alertText(a) })])), " — ", h("a", { href: "/alerts", text: t("banner.resolve") }));
  el.replaceChildren(...parts);
  // Room at the page's end for the fixed banner: nothing above it moves.
  document.body.style.paddingBottom = `${el.offsetHeight}px`;
}

// ---------- views ----------

/** @type {() => void} */
let render = () => {};
let renderQueued = false;
function renderSoon() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    const t0 = performance.now();
    // Every change: a board's sealed move to play is in the banner on every page.
    if (dirty.all || dirty.boards.size) renderBanner();
    render();
    dirty.all = false;
    dirty.boards.clear();
    perf.scriptMs += performance.now() - t0;
  });
}

/** Clock elements to refresh every frame: [element, boardId, color]. */
/** @type {[HTMLElement, string, "white"|"black"][]} */
let liveClocks = [];

function tick() {
  const t0 = performance.now();
  for (const [el, id, color] of liveClocks) {
    const st = board(id).state;
    // Only a running clock changes by itself; render() draws the others.
    if (!st || !st[color] || st.phase !== "running" || st.running !== color) continue;
    const ms = clockMs(st, color);
    setText(el, fmtClock(ms));
    const side = /** @type {HTMLElement} */ (el.parentElement);
    const low = ms < 10000;
    if (side.classList.contains("low") !== low) side.classList.toggle("low", low);
  }
  perf.frames++;
  perf.scriptMs += performance.now() - t0;
  requestAnimationFrame(tick);
}

/** @param {State|null} st @param {"white"|"black"} color */
function sideClass(st, color) {
  const cls = ["side", color];
  if (st && st.phase === "running" && st.running === color) cls.push("running");
  if (st && st[color] && st[color].flagged_at) cls.push("flagged");
  return cls.join(" ");
}

/** @param {State|null} st  Left to right as the players sit (6.4: White's side). */
function seating(st) {
  return st && st.white_side === "right" ? /** @type {const} */ (["black", "white"]) : /** @type {const} */ (["white", "black"]);
}

/** @param {string} id */
function moveNumber(id) {
  const st = board(id).state;
  if (!st || !st.white || !st.black) return "";
  return t("tile.move", { n: Math.min(st.white.moves, st.black.moves) + 1 });
}

/**
 * What the arbiter must see first about a game, as a marker key: flag (a flag waits for
 * the arbiter), an adjournment stage, paused, or the phase.
 * @param {State|null} st
 */
function phaseKey(st) {
  if (!st) return "none";
  if (st.pending_flag && st.phase !== "finished") return "flag";
  const stage = st.adjournment && st.phase !== "finished" ? st.adjournment.stage : null;
  if (stage && stage !== "resumed") return stage === "sealing" ? "sealing" : "adjourned";
  return st.phase;
}

/**
 * The phase as a marker; `short` for a tile's badge (a tile is narrow).
 * @param {BoardData} b @param {string} id @param {boolean} [short]
 */
function phaseText(b, id, short) {
  const st = b.state;
  if (!st) return t("phase.none");
  const key = phaseKey(st);
  if (key === "flag") return t(short ? "mark.flag_short" : "mark.flag");
  if (key === "sealing") return t("mark.sealing");
  if (key === "adjourned") return short ? t("mark.adjourned") : t(`stage.${st.adjournment.stage}`);
  if (key === "paused") return t("mark.paused");
  return hasText(`phase.${st.phase}`) ? t(`phase.${st.phase}`) : st.phase;
}

/** The last move with its number ("12. Nf3", "12… Nf6"), in the event's letters. @param {BoardData} b */
function lastMoveText(b) {
  const letters = eventLetters(b.state);
  const m = b.moves[b.moves.length - 1];
  if (!m) return sanIn(b.lastMove, letters);
  return `${m.no}${m.side === "white" ? "." : "…"} ${sanIn(m.san, letters)}`;
}

/**
 * One tile: made once per board, then only its texts and classes change.
 * @param {string} id
 */
function makeTile(id) {
  const el = h(PUBLIC ? "div" : "a", { class: "tile", "data-board": id, href: PUBLIC ? null : `/board/${id}` });
  /** @type {Record<string, HTMLElement>} */
  const parts = {
    id: h("span", { class: "id", text: id }),
    round: h("span", { class: "round" }),
    phase: h("span", { class: "badge phase" }),
    off: h("span", { class: "badge off", text: t("tile.offline"), hidden: true }),
    // Observe mode: the clock is set by hand and only read; its times are official.
    observed: h("span", { class: "badge observed", text: t("tile.hand_set"), title: t("tile.hand_set.title"), hidden: true }),
    alert: h("span", { class: "badge alert", hidden: true }),
    sides: h("div", { class: "sides" }),
    move: h("span", { class: "move" }),
    last: h("span", { class: "lastmove" }),
    result: h("span", { class: "result" }),
  };
  /** @type {Record<string, {box: HTMLElement, name: HTMLElement, clock: HTMLElement}>} */
  const sides = {};
  for (const color of /** @type {const} */ (["white", "black"])) {
    const name = h("div", { class: "name" });
    const clock = h("div", { class: "clock", "data-color": color });
    sides[color] = { box: h("div", { class: `side ${color}`, "data-side": color }, [name, clock]), name, clock };
    liveClocks.push([clock, id, color]);
  }
  el.append(
    h("div", { class: "head" }, [parts.id, parts.round, parts.off, parts.observed, parts.alert, parts.phase]),
    parts.sides,
    h("div", { class: "foot" }, [parts.move, parts.last, parts.result]),
  );
  return { el, parts, sides, seated: "" };
}

/** @param {ReturnType<typeof makeTile>} tile @param {string} id */
function renderTile(tile, id) {
  const b = board(id);
  const st = b.state;
  setText(tile.parts.round, st && st.round ? t("tile.round", { n: st.round }) : "");
  setText(tile.parts.phase, phaseText(b, id, true));
  tile.parts.phase.className = `badge phase phase-${phaseKey(st)}`;
  tile.parts.off.hidden = b.online;
  tile.el.classList.toggle("offline", !b.online);
  tile.parts.observed.hidden = !(st && st.observed);
  const n = PUBLIC ? 0 : alertsOf(id);
  tile.parts.alert.hidden = n === 0;
  setText(tile.parts.alert, n ? `⚠ ${n}` : "");
  tile.el.classList.toggle("alerting", n > 0);
  const order = seating(st);
  if (tile.seated !== order.join()) {
    tile.parts.sides.replaceChildren(tile.sides[order[0]].box, tile.sides[order[1]].box);
    tile.seated = order.join();
  }
  for (const color of order) {
    const s = tile.sides[color];
    setText(s.name, st && st[color] ? st[color].name : "");
    // A long name is cut on a tile; the whole of it is one hover away.
    if (st && st[color] && s.name.title !== st[color].name) s.name.title = st[color].name;
    setText(s.clock, st && st[color] ? fmtClock(clockMs(st, color)) : "–");
    const cls = sideClass(st, color) + (s.box.classList.contains("low") ? " low" : "");
    if (s.box.className !== cls) s.box.className = cls;
  }
  setText(tile.parts.move, moveNumber(id));
  setText(tile.parts.last, b.lastMove ? t("tile.last", { move: lastMoveText(b) }) : "");
  setText(tile.parts.result, st ? resultText(st.result) : "");
  const why = st ? resultText(st.result, true) : "";
  if (tile.parts.result.title !== why) tile.parts.result.title = why;
}

/** @param {string} id */
function sortKey(id, how) {
  const st = board(id).state;
  if (how === "time") {
    // Finished games have no time that matters: after every game still on.
    if (!st || !st.white || !st.black || st.phase === "finished") return Infinity;
    return Math.min(clockMs(st, "white"), clockMs(st, "black"));
  }
  if (how === "phase") return ({ running: 0, paused: 1, scheduled: 2, finished: 3, idle: 4 })[st ? st.phase : "idle"] ?? 5;
  return 0;
}

/** Text as searched: lower case, accents off ("Martínez" is found by "martinez"). @param {string} t */
function folded(t) {
  return t.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
}

/**
 * Whether a board answers the hall's filter: "4", "board 4", "#4" or "board-004" find
 * the board numbered 4 (its tournament number, else its id's number), never every board
 * with a 4 in it; other text is looked for in the id and the players' names, accents off.
 * @param {string} id @param {string} query
 */
function boardMatches(id, query) {
  const q = folded(query.trim());
  if (!q) return true;
  const numbered = /^(?:board\s*-?\s*|#\s*)?0*(\d+)$/.exec(q);
  if (numbered) {
    const n = Number(numbered[1]);
    const info = store.info && store.info.boards ? store.info.boards.find((/** @type {any} */ x) => x.id === id) : null;
    if (info && typeof info.number === "number") return info.number === n;
    const digits = /(\d+)$/.exec(id);
    return !!digits && Number(digits[1]) === n;
  }
  const st = board(id).state;
  return folded([id, st && st.white ? st.white.name : "", st && st.black ? st.black.name : ""].join(" ")).includes(q);
}

/** The phases the hall's count line names, in its order; "running" always, the rest when some board is in it. */
const COUNT_ORDER = ["running", "flag", "paused", "sealing", "adjourned", "scheduled", "finished", "idle", "none"];

/**
 * A board's phase for the hall's count line: what its marker says (a flag waiting, sealing,
 * adjourned, paused) before its plain phase, so each board is counted once.
 * @param {BoardData} b
 */
function countWord(b) {
  return phaseKey(b.state);
}

/**
 * "30 boards · 0 running · 30 paused · 2 alerts": every board is in one of the numbers.
 * @param {number} total @param {Map<string, number>} counts @param {number} alerts
 */
function hallCounts(total, counts, alerts) {
  const known = COUNT_ORDER.filter((w) => w === "running" || counts.get(w));
  const other = [...counts.keys()].filter((w) => !COUNT_ORDER.includes(w)).sort();
  const parts = [...known, ...other].map((w) => {
    const count = counts.get(w) || 0;
    return hasText(`count.${w}`) ? t(`count.${w}`, { count }) : `${count} ${w.replace(/_/g, " ")}`;
  });
  return [t("count.boards", { count: total }), ...parts, t("count.alerts", { count: alerts })].join(" · ");
}

function hallView() {
  const main = /** @type {HTMLElement} */ (document.getElementById("main"));
  const q = h("input", { type: "search", placeholder: t("hall.find.placeholder"), "aria-label": t("hall.find.label"), id: "hall-find" });
  const phase = h("select", { "aria-label": t("hall.show.label") }, ["all", "running", "paused", "scheduled", "finished", "alerts", "offline"].map((p) => h("option", { value: p, text: t(`show.${p}`) })));
  const sort = h("select", { "aria-label": t("hall.sort.label") }, [["board", "sort.board"], ["time", "sort.time"], ["phase", "sort.phase"]].map(([v, k]) => h("option", { value: v, text: t(k) })));
  const summary = h("span", { class: "summary" });
  const grid = h("div", { class: "tiles", id: "tiles" });
  const pubTitle = h("h1", { class: "pubtitle" });
  // While the pointer is over the tiles (or a finger on them) a sort never moves one: the
  // tile under it is the one that opens. The new order waits for "re-sort", or for the
  // pointer to leave.
  let pointerOver = false;
  let resortNow = false;
  const resort = h("button", { type: "button", id: "resort", hidden: true, text: t("hall.resort"), onclick: () => { resortNow = true; again(); } });
  let overSince = 0;
  grid.addEventListener("pointerenter", () => { pointerOver = true; overSince++; });
  grid.addEventListener("pointerleave", (e) => {
    // A finger lifted leaves at once: hold a little longer, the arbiter may tap again.
    const touch = /** @type {PointerEvent} */ (e).pointerType === "touch";
    const mine = overSince;
    setTimeout(() => { if (mine === overSince) { pointerOver = false; again(); } }, touch ? 3000 : 0);
  });
  // One h1 per page: the public screen's is its visible heading; the hall's only names the
  // page for a screen reader (the tiles are the page).
  main.replaceChildren(PUBLIC ? pubTitle : h("h1", { class: "vh", text: t("nav.hall") }), ...(PUBLIC ? [] : [h("div", { class: "toolbar" }, [q, phase, sort, resort, summary])]), grid);
  document.title = PUBLIC ? "hallclock" : t("title.hall");
  // A hall screen shows one round: `?round=N`, or the round started last.
  const askedRound = Number(new URLSearchParams(location.search).get("round")) || null;
  /** @type {Map<string, ReturnType<typeof makeTile>>} */
  const tiles = new Map();
  let lastOrder = "";
  liveClocks = [];
  let viewChanged = true;
  const again = () => { viewChanged = true; renderSoon(); };
  q.addEventListener("input", again); phase.addEventListener("change", again); sort.addEventListener("change", again);
  render = () => {
    const text = /** @type {HTMLInputElement} */ (q).value.trim().toLowerCase();
    const show = /** @type {HTMLSelectElement} */ (phase).value;
    const how = /** @type {HTMLSelectElement} */ (sort).value;
    const ids = [...store.boards.keys()].sort();
    /** Every board in one phase word (hallCounts): the line adds up to the boards. */
    /** @type {Map<string, number>} */
    const counts = new Map();
    const current = store.info && store.info.round ? store.info.round.round : null;
    const shownRound = askedRound || current;
    if (PUBLIC) {
      const event = store.info && (store.info.event || (store.info.round && store.info.round.event));
      const heading = [event || (store.info ? store.info.hall : ""), shownRound ? t("public.round", { n: shownRound }) : ""].filter(Boolean).join(" — ");
      setText(pubTitle, heading);
      if (heading && document.title !== heading) document.title = heading;
    }
    const visible = ids.filter((id) => {
      const b = board(id), st = b.state;
      if (PUBLIC && shownRound && (!st || st.round !== shownRound)) return false;
      const word = countWord(b);
      counts.set(word, (counts.get(word) || 0) + 1);
      if (text && !boardMatches(id, text)) return false;
      if (show === "alerts") return alertsOf(id) > 0;
      if (show === "offline") return !b.online;
      if (show !== "all") return !!st && st.phase === show;
      return true;
    });
    if (how !== "board") visible.sort((a, b) => sortKey(a, how) - sortKey(b, how) || (a < b ? -1 : 1));
    // Held: the tiles shown keep their places, new ones come after them.
    const held = pointerOver && !resortNow && how !== "board" && lastOrder !== "";
    let sortedOrder = visible.join(",");
    if (held) {
      const want = new Set(visible);
      const before = lastOrder.split(",").filter((x) => want.has(x));
      const kept = new Set(before);
      visible.splice(0, visible.length, ...before, ...visible.filter((x) => !kept.has(x)));
    } else {
      sortedOrder = "";
    }
    resortNow = false;
    const waiting = held && sortedOrder !== visible.join(",");
    if (resort.hidden === waiting) resort.hidden = !waiting;
    // 200 tiles: redraw only those whose board changed, unless something hall-wide did.
    const all = dirty.all || viewChanged;
    for (const id of visible) {
      let tile = tiles.get(id);
      if (!tile) { tile = makeTile(id); tiles.set(id, tile); renderTile(tile, id); continue; }
      if (all || dirty.boards.has(id)) renderTile(tile, id);
    }
    viewChanged = false;
    const order = visible.join(",");
    if (order !== lastOrder) {
      grid.replaceChildren(...visible.map((id) => /** @type {any} */ (tiles.get(id)).el));
      lastOrder = order;
    }
    setText(summary, hallCounts(ids.length, counts, store.alerts.size));
  };
  render();
}

/**
 * A value of an event in words: sides in the language, times as clocks, instants local,
 * moves in the event's letters, the daemon's value words (`evv.<field>.<value>`).
 * @param {string} k @param {any} v @param {string} letters
 * @returns {string}
 */
function eventValue(k, v, letters) {
  if (v === null || v === undefined) return "";
  if ((k === "side" || k === "sealer" || k === "running" || k === "responder") && typeof v === "string") return colorWord(v);
  if (/_ms$/.test(k) && typeof v === "number") return `${v < 0 ? "−" : ""}${fmtClock(Math.abs(v))}`;
  if ((k === "start" || k === "end" || k === "charged_to" || /_at$/.test(k)) && typeof v === "number" && v > 1e12) return new Date(v).toLocaleString(LANG);
  if (typeof v === "boolean") return t(v ? "val.true" : "val.false");
  if (k === "san" && typeof v === "string") return sanIn(v, letters);
  if (Array.isArray(v)) return v.every((x) => x === "white" || x === "black") ? sidesList(v) : v.map((x) => eventValue(k, x, letters)).join(", ");
  if (typeof v === "object") {
    if (v.score) return resultText(v, true);
    if (k === "kind" && typeof v.kind === "string") return arbiterResultWords(v);
    // An envelope's verdict is tagged by its own `verdict` ("verdict: verdict legal" was
    // the key said twice): said as the daemon's log says it, "legal (Nf3)".
    if (k === "verdict" && typeof v.verdict === "string") return verdictWords(v, letters);
    // A value tagged by its own key is said once, never "kind: kind …".
    return Object.entries(v).map(([kk, vv]) => (kk === k ? eventValue(kk, vv, letters) : `${fieldWords(kk)} ${eventValue(kk, vv, letters)}`)).join(", ");
  }
  if (typeof v === "string" && hasText(`evv.${k}.${v}`)) return t(`evv.${k}.${v}`);
  return typeof v === "number" ? NUMBER.format(v) : String(v);
}

/** An event's field name in words (`evf.<field>`, the rules' event fields). @param {string} k */
function fieldWords(k) {
  return hasText(`evf.${k}`) ? t(`evf.${k}`) : k.replace(/_ms$/, "").replace(/_/g, " ");
}

/**
 * A sealed move's verdict (I.8) in words, as `SealedVerdict::describe` says it.
 * @param {any} v @param {string} letters
 */
function verdictWords(v, letters) {
  if (v.verdict === "legal") return t("verdict.legal", { san: sanIn(v.san, letters) });
  if (v.verdict === "ambiguous") return t("verdict.ambiguous", { candidates: new Intl.ListFormat(LANG, { type: "disjunction" }).format((v.candidates || []).map((/** @type {string} */ c) => sanIn(c, letters))) });
  const word = hasText(`verdict.${v.verdict}`) ? t(`verdict.${v.verdict}`) : String(v.verdict).replace(/_/g, " ");
  // The reason in the page's language from its code (journals before it said none).
  const reason = v.why && LANG !== "en" ? whyWords(v.why, letters) : v.reason;
  return `${word}${reason ? ` (${reason})` : ""}`;
}

/**
 * One line of a board's log, from the event's fields (`ev.<event>`, `evf.<field>`).
 * @param {any} ev @param {string} letters the event's piece letters
 */
function eventText(ev, letters) {
  const skip = new Set(["board", "seq", "event", "at", "uci", "fen", "commitment", "nonce", "envelope"]);
  let words = hasText(`ev.${ev.event}`) ? t(`ev.${ev.event}`) : String(ev.event).replace(/_/g, " ");
  if (ev.event === "game_ended") {
    // The result in words with why ("0-1 · White lost on time"); then who decided it
    // (`arbiter`, or `confirmed by` for a confirmed flag) and what it replaces.
    words = t("ev.game_ended.with", { result: resultText(ev, true) });
    for (const k of ["score", "termination", "side", "absent", "kind", "verdict"]) skip.add(k);
  }
  const rest = Object.entries(ev).filter(([k, v]) => !skip.has(k) && v !== null && v !== "").map(([k, v]) => {
    // A flag's reason is journaled as the core's words: said from its code, as the
    // state's pending flag is.
    if (ev.event === "result_pending" && k === "reason") return `${fieldWords(k)}: ${flagReason({ reason: v, code: pendingCode(String(v)) })}`;
    return `${fieldWords(k)}: ${eventValue(k, v, letters)}`;
  });
  return { time: fmtTime(ev.at), words, rest: rest.join(" · ") };
}

/**
 * The code of a flag's journaled reason: the rules core's `pending_code`, the same three
 * forms (claim mode, the position not known, the 6.9 search gave up).
 * @param {string} reason
 */
function pendingCode(reason) {
  if (reason.startsWith("claim mode")) return "claim";
  if (reason.endsWith("the position is not known")) return "position_unknown";
  return "undecided";
}

/**
 * Why a flag waits for the arbiter: the daemon's code in the language when it sends one
 * (`flag.<code>`, the server's messages), else its English reason.
 * @param {any} f the state's `pending_flag`
 */
function flagReason(f) {
  if (LANG !== "en" && typeof f.code === "string" && hasText(`flag.${f.code}`)) return t(`flag.${f.code}`, f.params || {});
  return String(f.reason || "");
}

/** Every board act, by its action. */
const SPEC_OF = new Map(Object.values(BOARD_COMMANDS).flat().map((s) => [s.action, s]));

/**
 * What a game's state calls for, the likely next act first, and a line that says where
 * the game is. The other acts stay one click away ("Every act").
 * @param {State|null} st
 * @returns {{note: string, now: string[]}}
 */
function actsFor(st) {
  // Between games the clock's mode can be switched (observe: a hand-set clock, only read).
  const mode = st && st.observed ? ` ${t("now.observed")}` : "";
  if (!st || st.phase === "idle") return { note: `${t("now.idle")}${mode}`, now: ["set_position", "set_mode"] };
  const adj = st.adjournment;
  const stage = adj && st.phase !== "finished" ? adj.stage : null;
  const name = (/** @type {any} */ c) => (st[c] ? `${st[c].name} (${colorWord(c)})` : colorWord(c));
  if (st.phase === "finished") return { note: `${t("now.finished", { result: resultText(st.result, true) })}${mode}`, now: ["set_result", "set_mode"] };
  if (st.pending_flag) {
    const f = st.pending_flag;
    return { note: t("now.flag", { who: name(f.side), time: fmtTime(f.at), why: flagReason(f) }), now: ["confirm_flag", "set_result"] };
  }
  if (stage === "sealing") {
    const sealer = adj.sealer ? name(adj.sealer) : t("past.who.to_move");
    return adj.sealed
      ? { note: t("now.sealed", { sealer }), now: ["commit_seal"] }
      : { note: t("now.sealing", { sealer }), now: ["seal"] };
  }
  if (stage === "adjourned") {
    const env = adj.envelopes && adj.envelopes[adj.envelopes.length - 1];
    const now = [];
    if (env && !env.verified) now.push("verify_envelope");
    if (!adj.resumption) now.push("schedule_resumption");
    if (st.draw_offer) now.push("draw_reply"); else now.push("draw_offer");
    const when = adj.resumption ? ` ${t(adj.resumption.place ? "now.resumes_at" : "now.resumes", { time: new Date(adj.resumption.start).toLocaleString(LANG), place: adj.resumption.place })}` : "";
    return { note: `${t(env && env.verified ? "now.adjourned_verified" : "now.adjourned")}${when}`, now };
  }
  if (stage === "awaiting_opening" || stage === "awaiting_counter_opening") {
    return { note: t("now.awaiting_opening"), now: ["present", "open_envelope"] };
  }
  if (st.draw_offer) return { note: t("now.draw_offer", { who: name(st.draw_offer.side) }), now: ["draw_reply", "pause"] };
  if (st.phase === "scheduled") return { note: t("now.scheduled"), now: ["present", "set_position"] };
  if (st.phase === "paused") return { note: t("now.paused"), now: ["resume", "add_time", "set_time"] };
  // No move number: the note is drawn again only when the acts change (actsKey), and it
  // stood at "move 1" all game; the status line above has the number.
  return { note: t("now.playing"), now: ["pause", "add_time", "set_time", "adjourn"] };
}

/** The common ends and corrections of a game in play, offered first as one tap each
 * (and a second, Confirm, for what cannot be undone by the page). @param {State|null} st */
function quickActsFor(st) {
  if (!st || st.phase === "finished" || st.phase === "idle" || st.phase === "scheduled") return [];
  const stage = st.adjournment ? st.adjournment.stage : null;
  if (stage && stage !== "resumed") return [];
  const who = (/** @type {"white"|"black"} */ c) => (st[c] ? `${st[c].name} (${colorWord(c)})` : colorWord(c));
  const other = (/** @type {"white"|"black"} */ c) => (c === "white" ? "black" : "white");
  // The reasons go into the journal as the arbiter's words, in the arbiter's language.
  const reported = t("quick.reason.reported");
  /** @type {{id: string, text: string, words: string, body: Record<string, any>, cls?: string}[]} */
  const acts = [
    { id: "white-wins", text: "1-0", words: t("quick.wins", { score: "1-0", who: who("white") }), body: { action: "set_result", result: "1-0", reason: reported } },
    { id: "draw", text: "½-½", words: t("quick.draw"), body: { action: "set_result", result: "1/2-1/2", reason: reported } },
    { id: "black-wins", text: "0-1", words: t("quick.wins", { score: "0-1", who: who("black") }), body: { action: "set_result", result: "0-1", reason: reported } },
    { id: "white-resigns", text: t("quick.white_resigns"), words: t("quick.resigns", { who: who("white"), score: "0-1" }), body: { action: "set_result", result: "resignation", side: "white", reason: t("quick.reason.resignation") } },
    { id: "black-resigns", text: t("quick.black_resigns"), words: t("quick.resigns", { who: who("black"), score: "1-0" }), body: { action: "set_result", result: "resignation", side: "black", reason: t("quick.reason.resignation") } },
    { id: "agreed-draw", text: t("quick.agreed_draw"), words: t("quick.agreed_draw.words"), body: { action: "set_result", result: "agreed_draw", reason: t("quick.reason.agreed_draw") } },
  ];
  for (const c of /** @type {const} */ (["white", "black"])) {
    acts.push({ id: `plus2-${other(c)}`, text: t("quick.plus2", { side: other(c) }), cls: "time",
      words: t("quick.plus2.words", { to: who(other(c)), by: who(c) }),
      body: { action: "add_time", side: other(c), delta_ms: 120000, reason: t("quick.reason.illegal_move", { side: c }) } });
  }
  if (st.pending_flag) acts.unshift({ id: "confirm-flag", text: t("act.confirm_flag"), cls: "flag", words: t("quick.confirm_flag.words", { who: who(st.pending_flag.side), why: flagReason(st.pending_flag) }), body: { action: "confirm_flag", reason: t("quick.reason.flag") } });
  return acts;
}

/**
 * The quick acts as buttons: a tap says the act in words with Confirm and Cancel; Confirm
 * sends it (one transaction per confirmed act: a second tap is the same command).
 * @param {string} id @param {ReturnType<typeof quickActsFor>} acts
 */
function quickActs(id, acts) {
  const reply = h("span", { class: "reply", id: "quick-reply", "aria-live": "polite" });
  const confirmBox = h("div", { class: "confirm", id: "quick-confirm", hidden: true });
  const ends = acts.filter((a) => !a.cls || a.cls === "flag"), times = acts.filter((a) => a.cls === "time");
  const button = (/** @type {typeof acts[number]} */ a) => h("button", { type: "button", class: `quick ${a.cls || ""}`, "data-quick": a.id, text: a.text, onclick: () => {
    const transaction = mintTransaction();
    let busy = false;
    const yes = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: "primary", id: "quick-yes", text: t("btn.confirm") }));
    yes.addEventListener("click", async () => {
      if (busy) return;
      busy = true; yes.disabled = true;
      const outcome = await post(id, { ...a.body, transaction }, reply);
      confirmBox.hidden = outcome === "ok";
      busy = false; yes.disabled = false;
    });
    const no = h("button", { type: "button", id: "quick-no", text: t("btn.cancel"), onclick: () => { confirmBox.hidden = true; } });
    confirmBox.replaceChildren(h("p", { text: `${id}: ${a.words}.` }), yes, " ", no);
    confirmBox.hidden = false;
    reply.textContent = "";
  } });
  return h("div", { id: "quick-acts", class: "quick-acts" }, [
    h("div", { class: "quick-row" }, ends.map(button)),
    times.length ? h("div", { class: "quick-row" }, times.map(button)) : null,
    confirmBox, reply,
  ]);
}

/** A key that changes when the acts a game calls for do. @param {State|null} st */
function actsKey(st) {
  if (!st) return "none";
  const adj = st.adjournment || {};
  const env = adj.envelopes && adj.envelopes[adj.envelopes.length - 1];
  return [st.phase, st.round, !!st.pending_flag, adj.stage, adj.sealed, env && !!env.verified, !!adj.resumption, !!st.draw_offer].join("|");
}

/** The values of a box's forms, by act and field (masked fields left out). @param {Element} box */
function formValues(box) {
  /** @type {Map<string, string|boolean>} */
  const out = new Map();
  for (const el of box.querySelectorAll("form[data-action] input, form[data-action] select")) {
    const input = /** @type {HTMLInputElement} */ (el);
    const form = input.closest("form");
    if (!form || !input.name || input.type === "password") continue;
    out.set(`${form.dataset.action}|${input.name}`, input.type === "checkbox" ? input.checked : input.value);
  }
  return out;
}

/** @param {Element} box @param {Map<string, string|boolean>} values */
function restoreFormValues(box, values) {
  for (const el of box.querySelectorAll("form[data-action] input, form[data-action] select")) {
    const input = /** @type {HTMLInputElement} */ (el);
    const form = input.closest("form");
    const v = form ? values.get(`${form.dataset.action}|${input.name}`) : undefined;
    if (v === undefined) continue;
    if (typeof v === "boolean") input.checked = v; else input.value = v;
  }
}

/** @param {string} id */
function boardView(id) {
  const main = /** @type {HTMLElement} */ (document.getElementById("main"));
  const b = board(id);
  if (!b.historyLoaded) loadHistory(id);
  let flipped = localStorage.getItem(`hallclock.flip.${id}`) === "1";
  const diagramName = t("board.diagram_of", { board: id });
  let diagram = /** @type {any} */ (window).HallBoard.createBoard({ flipped, label: diagramName });
  const diagramBox = h("div", { class: "diagram" }, [diagram.svg]);
  const flip = h("button", { type: "button", class: "flip", text: t("board.flip"), onclick: () => {
    flipped = !flipped;
    localStorage.setItem(`hallclock.flip.${id}`, flipped ? "1" : "0");
    diagram = /** @type {any} */ (window).HallBoard.createBoard({ flipped, label: diagramName });
    diagramBox.replaceChildren(diagram.svg);
    diagram.update(b.state ? b.state.fen : null, b.lastUci);
    if (arrowShown) diagram.arrow(arrowShown.from, arrowShown.to);
  } });
  // A seal being confirmed shows its move as an arrow (commandForm, showArrow).
  /** @type {{from: string, to: string} | null} */
  let arrowShown = null;
  onArrow = (shown) => {
    arrowShown = shown;
    diagram.arrow(arrowShown ? arrowShown.from : null, arrowShown ? arrowShown.to : null);
  };
  const title = h("h1", { text: id });
  const marker = h("div", { class: "marker", hidden: true });
  const status = h("div", { class: "status" });
  const clocks = h("div", { class: "bigclocks" });
  const pgn = h("a", { class: "pgn", hidden: true, text: t("board.pgn") });
  /** @type {Record<string, {box: HTMLElement, name: HTMLElement, clock: HTMLElement}>} */
  const sides = {};
  liveClocks = [];
  for (const color of /** @type {const} */ (["white", "black"])) {
    const name = h("div", { class: "name" });
    const clock = h("div", { class: "clock", "data-color": color });
    sides[color] = { box: h("div", { class: `side ${color}`, "data-side": color }, [name, clock]), name, clock };
    liveClocks.push([clock, id, color]);
  }
  const movesBody = h("tbody");
  // Scrolled boxes take the focus, so a keyboard can scroll them; named for a screen reader.
  const movesBox = h("div", { class: "moves", tabindex: 0, role: "region", "aria-label": t("board.moves") }, [h("table", { id: "moves" }, [h("thead", {}, [h("tr", {}, ["#", t("side.white"), t("board.clock"), t("side.black"), t("board.clock")].map((text) => h("th", { text })))]), movesBody])]);
  const log = h("div", { class: "log", id: "log", tabindex: 0, role: "region", "aria-label": t("board.log") });
  const alertsBox = h("div", { class: "alerts" });
  const boards = [...store.boards.keys()].sort();
  const canCommand = mayCommand(id);
  const nowNote = h("p", { class: "now-note", id: "now-note" });
  const quickBox = h("div", { id: "quick-box" });
  const nowForms = h("div", { class: "forms now", id: "acts-now" });
  const allActs = h("div", { id: "acts-all" });
  // Whose board it is, once the hall's info and the nodes' statuses have come (render).
  const ownerNote = h("p", { class: "muted", id: "other-node", hidden: true });
  const commands = canCommand
    ? h("div", {}, [
        ownerNote,
        nowNote,
        quickBox,
        nowForms,
        h("details", { class: "every" }, [h("summary", { text: t("board.every_act") }), allActs]),
      ])
    : h("p", { class: "muted", text: store.me ? t("board.read_only_named", { name: store.me.arbiter.name, role: roleWords(store.me.arbiter.role), board: id }) : t("board.read_only") });
  document.title = `${id} · hallclock`;
  main.replaceChildren(
    h("p", {}, [h("a", { href: "/", text: t("board.back") })]),
    h("div", { class: "boardview" }, [
      h("div", { class: "board-left" }, [
        h("div", { class: "card" }, [h("div", { class: "titlebar" }, [title, flip]), marker, status, clocks, diagramBox, pgn]),
        h("div", { class: "card" }, [h("h3", { text: t("nav.alerts") }), alertsBox]),
      ]),
      h("div", { class: "board-right" }, [
        h("div", { class: "card now-card", id: "now-card" }, [h("h3", {}, [t("board.now"), " ", h("span", { class: "muted", text: `· ${id}` })]), commands]),
        h("div", { class: "card" }, [h("h3", { text: t("board.moves") }), movesBox]),
        h("div", { class: "card" }, [h("h3", { text: t("board.log_newest") }), log]),
      ]),
    ]),
  );
  let shownMoves = -1, shownEvents = -1, seated = "", shownActs = "";
  const renderActs = () => {
    const st = b.state;
    const toPlay = sealedToPlayText(id);
    const key = `${actsKey(st)}|${toPlay}`;
    if (!canCommand || key === shownActs) return;
    shownActs = key;
    const { note, now } = actsFor(st);
    setText(nowNote, toPlay ? t("now.to_play", { what: toPlay, note }) : note);
    nowNote.classList.toggle("to-play", !!toPlay);
    const quick = quickActsFor(st);
    quickBox.replaceChildren(...(quick.length ? [quickActs(id, quick)] : []));
    // What the arbiter chose in a form (a side, a mode) survives the forms being drawn
    // again for a new phase; a masked field (a sealed move) never does.
    const kept = formValues(commands);
    // 6.10's move goes only to a board of the same node (its clock and journal are there).
    const others = boards.filter((x) => x !== id && otherNode(x) === otherNode(id));
    nowForms.replaceChildren(...now.map((a) => SPEC_OF.get(a)).filter(Boolean).map((spec) => commandForm(/** @type {Spec} */ (spec), id, others)));
    // The rest, grouped as before; danger acts only here and behind their confirmation.
    allActs.replaceChildren(...Object.entries(BOARD_COMMANDS).flatMap(([group, specs]) => {
      const rest = specs.filter((sp) => !now.includes(sp.action));
      return rest.length ? [h("div", { class: "group-title", text: t(group) }), h("div", { class: "forms" }, rest.map((sp) => commandForm(sp, id, others)))] : [];
    }));
    restoreFormValues(commands, kept);
    // A link from an alert ("or set the time") opens the act it names.
    const want = location.hash.slice(1);
    if (want && !now.includes(want)) {
      const form = allActs.querySelector(`form[data-action="${want}"]`);
      const details = /** @type {HTMLDetailsElement|null} */ (commands.querySelector("details.every"));
      if (form && details) { details.open = true; form.scrollIntoView(); }
    }
  };
  render = () => {
    const st = b.state;
    const order = seating(st);
    if (seated !== order.join()) { clocks.replaceChildren(sides[order[0]].box, sides[order[1]].box); seated = order.join(); }
    for (const color of order) {
      setText(sides[color].clock, st && st[color] ? fmtClock(clockMs(st, color)) : "–");
      setText(sides[color].name, st && st[color] ? `${st[color].name} · ${t("board.side_moves", { count: st[color].moves })}${st[color].present ? "" : ` · ${t("board.absent")}`}` : colorWord(color));
      const cls = sideClass(st, color);
      if (sides[color].box.className.replace(" low", "") !== cls) sides[color].box.className = cls;
    }
    const key = phaseKey(st);
    const big = ["flag", "sealing", "adjourned", "paused"].includes(key);
    marker.hidden = !big;
    if (big) { setText(marker, phaseText(b, id)); marker.className = `marker phase-${key}`; }
    // No-break spaces: the line wraps between its parts, never inside "move 12".
    // No-break spaces in each part's own words too ("ronda 3").
    const nb = (/** @type {string} */ s) => s.replace(/ /g, "\u00a0");
    const bits = [t(b.online ? "status.online" : "status.offline"), st && !big ? phaseText(b, id) : "", st && st.round ? nb(t("tile.round", { n: st.round })) : "", st && st.time_control ? nb(t("status.time_control", { tc: st.time_control })) : "", nb(moveNumber(id)), st ? resultText(st.result, true) : ""];
    if (st && st.draw_offer) bits.push(t("status.draw_offered", { side: st.draw_offer.side }));
    // 6.7a: a press came before the board showed its move; the diagram keeps the last
    // known position (dimmed) until the move is read, rather than going blank.
    const pending = !!(st && st.move_pending && st.result === null);
    if (pending && st) bits.push(t("status.pressed_waiting", { side: st.pending_side || "white" }));
    if (st && st.fen) b.lastFen = st.fen;
    const stale = !!(st && !st.fen && b.lastFen && st.phase !== "idle");
    if (stale) bits.push(t("status.stale"));
    setText(status, bits.filter(Boolean).join(" · "));
    const number = store.info && store.info.boards ? (store.info.boards.find((/** @type {any} */ x) => x.id === id) || {}).number : undefined;
    pgn.hidden = !(st && st.round && number);
    if (st && st.round && number) { const href = `/broadcast/round/${st.round}/game-${number}.pgn`; if (pgn.getAttribute("href") !== href) pgn.setAttribute("href", href); }
    // The diagram never goes blank while the position is known: a state without one (a
    // resynchronisation that failed, the board not showing the sealed move) keeps the
    // last known position, dimmed and said.
    diagramBox.classList.toggle("pending", pending || stale);
    diagram.update(st ? st.fen || (stale ? b.lastFen : null) : null, b.lastUci);
    if (b.moves.length !== shownMoves || b.moves.some((m) => m.clock !== null && !(/** @type {any} */ (m)).shown)) {
      /** @type {HTMLElement[]} */
      const rows = [];
      const whites = b.moves.filter((m) => m.side === "white"), blacks = b.moves.filter((m) => m.side === "black");
      const letters = eventLetters(st);
      for (let i = 0; i < Math.max(whites.length, blacks.length); i++) {
        const w = whites[i], k = blacks[i];
        rows.push(h("tr", {}, [h("td", { text: String(i + 1) }), h("td", { text: w ? sanIn(w.san, letters) : "" }), h("td", { class: "t", text: w && w.clock !== null ? fmtClock(w.clock) : "" }), h("td", { text: k ? sanIn(k.san, letters) : "" }), h("td", { class: "t", text: k && k.clock !== null ? fmtClock(k.clock) : "" })]));
        if (w && w.clock !== null) /** @type {any} */ (w).shown = true;
        if (k && k.clock !== null) /** @type {any} */ (k).shown = true;
      }
      const grew = b.moves.length > shownMoves;
      movesBody.replaceChildren(...rows);
      shownMoves = b.moves.length;
      // The move list follows the game: the newest move in view.
      if (grew) movesBox.scrollTop = movesBox.scrollHeight;
    }
    if (b.events.length !== shownEvents) {
      log.replaceChildren(...b.events.slice(-300).reverse().map((ev) => {
        const line = eventText(ev, eventLetters(st));
        return h("div", { class: "ev" }, [h("span", { class: "at", text: line.time }), " ", h("b", { text: line.words }), line.rest ? ` — ${line.rest}` : ""]);
      }));
      shownEvents = b.events.length;
    }
    const mine = [...store.alerts.values()].filter((a) => a.board === id);
    alertsBox.replaceChildren(...(mine.length ? mine.map(alertRow) : [h("span", { class: "muted", text: t("board.no_alerts") })]));
    const owner = otherNode(id);
    ownerNote.hidden = !owner;
    setText(ownerNote, owner ? t("board.other_node", { board: id, node: owner }) : "");
    renderActs();
  };
  render();
}

/** The transaction of each alert's act (see alertRow). @type {Map<string, string>} */
const alertTxns = new Map();

/**
 * One alert with the acts that resolve it. Resolving is done by the daemon, so every
 * arbiter's page sees it go: a clock discrepancy is kept with `acknowledge_alert` (or
 * corrected with set_time on the board page); a flag is confirmed; a player's pause is
 * ended. "Silence" only stops this browser's sound and banner for an alert nobody can
 * resolve from here (a board offline until its cable is back).
 * @param {any} a
 */
function alertRow(a) {
  const done = acked().has(alertKey(a));
  /** @type {(Node|null)[]} */
  const actions = [];
  const reply = h("span", { class: "reply" });
  /** @param {string} text @param {Record<string, any>} body */
  const act = (text, body) => {
    const btn = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: "primary", text }));
    // One alert, one act: a double click, or a click on the row redrawn meanwhile, is
    // the same command.
    const key = `${alertKey(a)}/${body.action}`;
    const txn = alertTxns.get(key) || mintTransaction();
    alertTxns.set(key, txn);
    btn.addEventListener("click", async () => {
      btn.disabled = true;
      await post(a.board, { ...body, transaction: txn }, reply);
      btn.disabled = false;
    });
    return btn;
  };
  let resolvable = false;
  if (a.board && mayCommand(a.board)) {
    if (a.kind === "result_pending") { actions.push(act(t("act.confirm_flag"), { action: "confirm_flag" })); resolvable = true; }
    if (a.kind === "player_pause") { actions.push(act(t("alerts.resume_clock"), { action: "resume", reason: t("alerts.reason.attended") })); resolvable = true; }
    if (a.kind === "clock_discrepancy") {
      actions.push(act(t("alerts.keep_official"), { action: "acknowledge_alert", alert: "clock_discrepancy" }));
      actions.push(h("a", { href: `/board/${a.board}#set_time`, text: t("alerts.or_set_time") }));
      resolvable = true;
    }
  }
  if (a.board && !resolvable) actions.push(h("a", { href: `/board/${a.board}`, text: t("alerts.open_board") }));
  if (!resolvable) actions.push(done ? h("span", { class: "muted", text: t("alerts.silenced") }) : h("button", { type: "button", class: "ack", text: t("alerts.silence"), title: t("alerts.silence.title"), onclick: () => ack(a) }));
  return h("div", { class: `alert ${isCritical(a) ? "critical" : ""} ${done ? "acked" : ""}`, "data-alert": a.id, "data-kind": a.kind }, [
    // The kinds the page sounds for are critical here, whatever the daemon's severity.
    h("span", { class: "kind", text: `${severityWords(isCritical(a) ? "critical" : a.severity)} · ${kindWords(String(a.kind))}` }),
    h("span", { class: "msg", text: alertText(a) }),
    h("span", { class: "muted", text: fmtTime(a.since) }),
    ...actions, reply,
  ]);
}

/** An alert's severity in words (`sev.<severity>`, alert::Severity). @param {string} s */
function severityWords(s) {
  return hasText(`sev.${s}`) ? t(`sev.${s}`) : s;
}

/** An alert's kind in words (`kind.<kind>`, alert::AlertKind). @param {string} k */
function kindWords(k) {
  return hasText(`kind.${k}`) ? t(`kind.${k}`) : k.replace(/_/g, " ");
}

function alertsView() {
  const main = /** @type {HTMLElement} */ (document.getElementById("main"));
  document.title = t("title.alerts");
  const list = h("div", { class: "alerts", id: "alerts" });
  main.replaceChildren(h("h1", { text: t("nav.alerts") }), h("p", { class: "muted", text: t("alerts.intro") }), list);
  liveClocks = [];
  let shown = "";
  render = () => {
    const all = [...store.alerts.values()].sort((x, y) => Number(isCritical(y)) - Number(isCritical(x)) || x.since - y.since);
    const key = all.map(alertKey).join() + "|" + [...acked()].length;
    if (key === shown) return;
    shown = key;
    list.replaceChildren(...(all.length ? all.map(alertRow) : [h("p", { class: "muted", text: t("alerts.none") })]));
  };
  render();
}

function roundView() {
  const main = /** @type {HTMLElement} */ (document.getElementById("main"));
  document.title = t("title.round");
  liveClocks = [];
  const boards = () => [...store.boards.keys()].sort();
  const chief = isChief();
  // --- start a round ---
  const num = /** @type {HTMLInputElement} */ (h("input", { type: "number", name: "round", id: "round-number", min: 1, max: 999, value: String(((store.info && store.info.round && store.info.round.round) || 0) + 1) }));
  const start = /** @type {HTMLInputElement} */ (h("input", { type: "datetime-local", name: "start", step: 1, id: "round-start" }));
  // On the server's clock: the round starts when the server's clock says so. The proposal
  // follows the clock until the arbiter changes the field (a form typed for five minutes
  // must not start five minutes in the past); a value that is not the last proposal is
  // the arbiter's, however it got there.
  let proposed = "";
  const propose = () => {
    if (start.value !== proposed || document.activeElement === start) return;
    proposed = localInput(serverCivilNow() + 60000);
    start.value = proposed;
  };
  proposed = start.value = localInput(serverCivilNow() + 60000);
  const tc = /** @type {HTMLInputElement} */ (h("input", { type: "text", name: "time_control", id: "round-tc", value: store.info && store.info.defaults ? store.info.defaults.time_control : "40/5400+30:1800+30" }));
  const tcDesc = h("div", { class: "desc", id: "tc-desc" });
  const sessionEnd = /** @type {HTMLInputElement} */ (h("input", { type: "datetime-local", name: "session_end", id: "round-session-end", step: 1 }));
  const flagMode = h("select", { name: "flag_mode", id: "round-flag-mode" }, [h("option", { value: "", text: t("round.flag_mode.default") }), h("option", { value: "auto", text: t("round.flag_mode.auto") }), h("option", { value: "claim", text: t("round.flag_mode.claim") })]);
  const rowsBody = h("tbody", { id: "pairing-rows" });
  /** @param {string} [b] @param {string} [w] @param {string} [k] */
  const addRow = (b, w, k) => {
    // Each box named for a screen reader (the table's head is not a label), and with a
    // placeholder: on a phone the row is folded into three lines without the head.
    const sel = h("select", { name: "board", "aria-label": t("round.board") }, boards().map((x) => h("option", { value: x, text: x, selected: x === b })));
    const box = (/** @type {string} */ name, /** @type {string} */ says, /** @type {string} */ hint, /** @type {string} */ value, numeric = false) =>
      h("td", { class: `c-${name}` }, [h("input", { name, value, "aria-label": says, placeholder: hint, inputmode: numeric ? "numeric" : null })]);
    rowsBody.append(h("tr", {}, [
      h("td", { class: "c-board" }, [sel]),
      box("white", t("round.white_name"), t("side.white"), w || ""), box("white_fide_id", t("round.white_fide"), t("round.fide_id"), "", true),
      box("black", t("round.black_name"), t("side.black"), k || ""), box("black_fide_id", t("round.black_fide"), t("round.fide_id"), "", true),
      h("td", { class: "c-remove" }, [h("button", { type: "button", text: "✕", "aria-label": t("round.remove_row"), title: t("round.remove_row"), onclick: (/** @type {Event} */ e) => /** @type {HTMLElement} */ (/** @type {HTMLElement} */ (e.currentTarget).closest("tr")).remove() })]),
    ]));
  };
  const pasted = /** @type {HTMLTextAreaElement} */ (h("textarea", { name: "pairings_json", id: "pairings-json", placeholder: t("round.json.placeholder") }));
  const reply = h("span", { class: "reply", id: "round-reply" });
  // The pairing program's file: read here, reviewed through the server's TRF reader, sent
  // whole with start_round (the hall maps tournament boards to its own boards).
  let trfText = "";
  const trfInput = /** @type {HTMLInputElement} */ (h("input", { type: "file", id: "trf-file", name: "trf", accept: ".trf,.txt,text/plain" }));
  const onlyOurs = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", name: "only_our_boards" }));
  const trfReview = h("div", { id: "trf-review" });
  const reviewTrf = async () => {
    trfText = "";
    trfReview.replaceChildren();
    const f = trfInput.files && trfInput.files[0];
    if (!f) return;
    const text = await f.text();
    const r = await fetch("/api/trf/preview", {
      method: "POST", credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": store.me ? store.me.csrf : "" },
      body: JSON.stringify({ trf: text, round: Number(num.value) }),
    });
    /** @type {any} */
    const a = await r.json().catch(() => ({}));
    if (!r.ok) { trfReview.replaceChildren(h("p", { class: "reply err", text: `${f.name}: ${refusalText(a, String(r.status))}` })); return; }
    trfText = text;
    const who = (/** @type {any} */ p) => `${p.name || "?"}${p.rating ? ` (${p.rating})` : ""}`;
    const rows = a.boards.map((/** @type {any} */ b) => b.bye
      ? h("tr", {}, [h("td", { text: t("round.trf.bye") }), h("td", { text: who(b.bye) }), h("td", { text: b.code || "" })])
      : h("tr", { class: "trf-board" }, [h("td", { text: String(b.board) }), h("td", { text: who(b.white) }), h("td", { text: who(b.black) }), h("td", { text: b.forfeit ? t("round.trf.forfeit") : b.result ? t("round.trf.decided") : "" })]));
    trfReview.replaceChildren(
      h("p", { class: "muted", text: trfSummary(a, f.name, Number(num.value)) }),
      h("table", { class: "pairings" }, [h("thead", {}, [h("tr", {}, [t("round.board"), t("side.white"), t("side.black"), ""].map((text) => h("th", { text })))]), h("tbody", {}, rows)]),
    );
    // Lines the reader skipped (as a pairing program would), each with its line number.
    const warnings = /** @type {string[]} */ (a.warnings || []);
    // In the page's language from their codes (the server's English otherwise).
    const coded = /** @type {any[]} */ (a.warning_codes || []);
    const said = warnings.map((w, i) => (LANG !== "en" && coded[i] && hasText(`trfwarn.${coded[i].code}`) ? t(`trfwarn.${coded[i].code}`, coded[i].params || {}) : w));
    if (warnings.length) {
      trfReview.append(h("details", { class: "trf-warnings" }, [
        h("summary", { text: t("round.trf.skipped", { count: warnings.length }) }),
        h("ul", {}, said.map((w) => h("li", { text: w }))),
      ]));
    }
  };
  trfInput.addEventListener("change", reviewTrf);
  num.addEventListener("change", reviewTrf);
  const checkTc = debounce(async () => {
    const r = await fetch(`/api/tc?tc=${encodeURIComponent(tc.value)}`, { credentials: "same-origin" });
    const a = await r.json().catch(() => ({}));
    if (r.ok) {
      const description = tcDescription(a);
      tcDesc.textContent = a.note ? t("round.tc.with_note", { description, note: tcNote(a) }) : description;
      tcDesc.className = "desc";
    }
    else {
      // The reader's words, and examples in the hall's notation, where times are seconds:
      // "90+30" would be a minute and a half for the game.
      const why = a && typeof a.error === "string" && hasText(`error.${a.error}`) ? refusalText(a, "") : tcWords(a.reason || t("round.tc.not_tc"));
      const help = store.info && store.info.defaults ? t("round.tc.help_default", { tc: store.info.defaults.time_control }) : t("round.tc.help");
      tcDesc.textContent = `${why}. ${help}`;
      tcDesc.className = "desc err";
    }
  }, 250);
  tc.addEventListener("input", checkTc);
  checkTc();
  // A start that has passed (or passes while the form is open), said in words before
  // anything is sent, with the two honest choices.
  const pastWords = h("p", { id: "start-past-words" });
  /** @type {(how: "now"|"keep") => void} */
  let sendAs = () => {};
  const pastNote = h("div", { id: "start-past", class: "past-start", role: "alert", hidden: true }, [
    pastWords,
    h("button", { type: "button", id: "start-now", class: "primary", text: t("round.start_now"), onclick: () => sendAs("now") }),
    " ",
    h("button", { type: "button", id: "start-keep", text: t("round.keep_start"), onclick: () => sendAs("keep") }),
  ]);
  const showPast = () => {
    const ms = parseLocal(start.value);
    const ago = Number.isFinite(ms) ? serverCivilNow() - ms : 0;
    const past = ago > PAST_START_SLACK_MS;
    if (past) pastWords.textContent = pastStartWords(ago, "past.who.every_white");
    if (pastNote.hidden === past) pastNote.hidden = !past;
    return past;
  };
  const startForm = h("form", { id: "start-round" }, [
    // Every label names its field (for=): a tap on the words focuses the box, and a
    // screen reader reads them with it.
    h("div", { class: "field" }, [h("label", { for: "round-number", text: t("nav.round") }), num]),
    h("div", { class: "field" }, [h("label", { for: "round-start", text: t("round.scheduled_start") }), start, pastNote]),
    h("div", { class: "field" }, [h("label", { for: "round-tc", text: t("round.time_control") }), tc, tcDesc]),
    h("div", { class: "field" }, [h("label", { for: "round-session-end", text: t("round.session_end") }), sessionEnd]),
    h("div", { class: "field" }, [h("label", { for: "round-flag-mode", text: t("round.flag_mode") }), flagMode]),
    h("h3", { text: t("round.pairings") }),
    h("table", { class: "pairings edit" }, [h("thead", {}, [h("tr", {}, [t("round.board"), t("side.white"), t("round.fide_id"), t("side.black"), t("round.fide_id"), ""].map((text) => h("th", { text })))]), rowsBody]),
    h("p", {}, [
      h("button", { type: "button", text: t("round.add_row"), onclick: () => addRow(boards()[rowsBody.children.length]) }),
      " ",
      h("button", { type: "button", text: t("round.row_every_board"), onclick: () => { rowsBody.replaceChildren(); for (const b of boards()) addRow(b); } }),
    ]),
    h("div", { class: "field" }, [h("label", { for: "pairings-json", text: t("round.paste_json") }), pasted]),
    h("div", { class: "field" }, [h("label", { for: "trf-file", text: t("round.import_trf") }), trfInput, " ", h("label", { class: "check" }, [onlyOurs, " ", t("round.only_ours")])]),
    trfReview,
    h("button", { type: "submit", class: "primary", text: t("round.start_round") }), " ", reply,
  ]);
  /** One filled round form, one transaction (a second click is the same start). */
  /** @type {string|null} */
  let roundTxn = null;
  startForm.addEventListener("input", () => { roundTxn = null; });
  startForm.addEventListener("change", () => { roundTxn = null; });
  const submitBtn = /** @type {HTMLButtonElement} */ (startForm.querySelector("button[type=submit]"));
  const clearRowErrors = () => {
    for (const tr of rowsBody.querySelectorAll("tr.bad")) tr.classList.remove("bad");
    for (const el of rowsBody.querySelectorAll("tr.row-error")) el.remove();
  };
  /** The error on the row itself, where the arbiter looks. @param {Element} tr @param {string} text */
  const rowError = (tr, text) => {
    tr.classList.add("bad");
    tr.after(h("tr", { class: "row-error" }, [h("td", { colspan: 6, class: "reply err", text })]));
    reply.textContent = text; reply.className = "reply err";
  };
  /**
   * The start to send: the field's (refused here when it has passed and the arbiter has
   * not chosen), the server's now ("Start now"), or the field's as meant ("Keep").
   * @param {"typed"|"now"|"keep"} how
   * @returns {{start?: number, allow?: boolean}}
   */
  const chosenStart = (how) => {
    // Whole ms: the daemon reads instants as integers.
    if (how === "now") return { start: Math.round(serverCivilNow()) };
    const ms = parseLocal(start.value);
    if (!Number.isFinite(ms)) { reply.textContent = t("round.err.start_not_instant"); reply.className = "reply err"; return {}; }
    if (how === "keep") return { start: ms, allow: true };
    if (showPast()) {
      reply.textContent = t("round.err.start_passed");
      reply.className = "reply err";
      pastNote.scrollIntoView({ block: "nearest" });
      return {};
    }
    return { start: ms };
  };
  /** @param {"typed"|"now"|"keep"} how */
  const submitRound = async (how) => {
    if (submitBtn.disabled) return;
    /** @type {any[]} */
    let pairings = [];
    if (trfText) {
      const chosen = chosenStart(how);
      if (chosen.start === undefined) return;
      /** @type {any} */
      const body = { action: "start_round", round: Number(num.value), start: chosen.start, trf: trfText, only_our_boards: onlyOurs.checked };
      if (chosen.allow) body.allow_past_start = true;
      if (tc.value.trim()) body.time_control = tc.value.trim();
      if (sessionEnd.value) body.session_end = parseLocal(sessionEnd.value);
      if (/** @type {HTMLSelectElement} */ (flagMode).value) body.flag_mode = /** @type {HTMLSelectElement} */ (flagMode).value;
      await post(null, body, reply);
      return;
    }
    // The table's marks are of an earlier try; this one may not use the table at all.
    clearRowErrors();
    if (pasted.value.trim()) {
      try {
        const v = JSON.parse(pasted.value);
        pairings = Array.isArray(v) ? v : v.pairings;
        if (!Array.isArray(pairings)) throw new Error(t("round.err.json_shape"));
      } catch (err) { reply.textContent = t("round.err.json", { error: String(err) }); reply.className = "reply err"; return; }
      // Said here with the pairing's number: the daemon's reader would name the missing
      // field but not which of the pairings lacks it.
      const bad = pairings.findIndex((p) => !p || typeof p !== "object" || !p.board || !p.white || !p.black);
      if (bad >= 0) {
        const p = pairings[bad];
        const what = !p || typeof p !== "object" ? t("round.err.not_pairing") : t(!p.board ? "round.err.board_missing" : !p.white ? "round.err.white_missing" : "round.err.black_missing");
        reply.textContent = t("round.err.json_pairing", { n: bad + 1, board: p && p.board ? ` (${p.board})` : "", what });
        reply.className = "reply err";
        return;
      }
    } else {
      let n = 0;
      for (const tr of rowsBody.querySelectorAll("tr")) {
        n++;
        const val = (/** @type {string} */ k) => /** @type {HTMLInputElement} */ (tr.querySelector(`[name=${k}]`)).value.trim();
        if (!val("white") && !val("black")) continue;
        /** @type {any} */
        const p = { board: val("board"), white: val("white"), black: val("black") };
        const missing = !p.white ? "white" : !p.black ? "black" : "";
        if (missing) { rowError(tr, t("round.err.row_missing", { side: missing, n, board: p.board })); return; }
        for (const f of ["white_fide_id", "black_fide_id"]) if (val(f)) {
          if (!/^\d+$/.test(val(f))) { rowError(tr, t("round.err.fide_id", { n, board: p.board, side: f.startsWith("white") ? "white" : "black", value: val(f) })); return; }
          p[f] = Number(val(f));
        }
        pairings.push(p);
      }
    }
    if (!pairings.length) { reply.textContent = t("round.err.no_pairings"); reply.className = "reply err"; return; }
    const chosen = chosenStart(how);
    if (chosen.start === undefined) return;
    // "Start now" and "Keep" are other commands than the typed start: their own transaction.
    if (how !== "typed") roundTxn = null;
    /** @type {any} */
    const body = { action: "start_round", round: Number(num.value), start: chosen.start, time_control: tc.value.trim(), pairings };
    if (chosen.allow) body.allow_past_start = true;
    if (sessionEnd.value) body.session_end = parseLocal(sessionEnd.value);
    if (/** @type {HTMLSelectElement} */ (flagMode).value) body.flag_mode = /** @type {HTMLSelectElement} */ (flagMode).value;
    if (!roundTxn) roundTxn = mintTransaction();
    body.transaction = roundTxn;
    submitBtn.disabled = true;
    const outcome = await post(null, body, reply);
    submitBtn.disabled = false;
    if (outcome === "refused") {
      roundTxn = null;
      // The daemon names a pairing by its 0-based index, in its English or in the
      // refusal's `at`: say the row, and mark it.
      const m = /pairings\[(\d+)\](?:\.(\w+))?:?\s*(.*)/.exec(reply.textContent || "");
      const at = /^pairings\[(\d+)\]$/.exec(reply.dataset.at || "");
      const named = m ? { i: Number(m[1]), what: `${m[2] ? `${m[2].replace(/_/g, " ")}: ` : ""}${arbiterWords(m[3])}` } : at ? { i: Number(at[1]), what: reply.textContent || "" } : null;
      // Pairing rows only: a row's error is a row of the table too.
      const rows = [...rowsBody.querySelectorAll("tr:not(.row-error)")].filter((tr) => /** @type {HTMLInputElement} */ (tr.querySelector("[name=white]")).value.trim() || /** @type {HTMLInputElement} */ (tr.querySelector("[name=black]")).value.trim());
      if (named && !pasted.value.trim()) {
        const tr = rows[named.i];
        if (tr) rowError(tr, t("round.err.row", { n: named.i + 1, board: pairings[named.i] ? pairings[named.i].board : "?", what: named.what }));
      } else {
        reply.textContent = arbiterWords(reply.textContent || "");
      }
    } else if (outcome === "ok") {
      pastNote.hidden = true;
    }
  };
  sendAs = (how) => { submitRound(how); };
  startForm.addEventListener("submit", (e) => { e.preventDefault(); submitRound("typed"); });
  start.addEventListener("input", showPast);
  // The proposal follows the clock, and a typed start that passes is said at once.
  const startTimer = setInterval(() => {
    if (!start.isConnected) { clearInterval(startTimer); return; }
    propose();
    showPast();
  }, 1000);
  for (const b of boards()) addRow(b);

  // --- hall-wide ---
  /** @type {Spec[]} */
  const hallSpecs = [
    { action: "pause", label: "hall.act.pause", rule: "6.12a", fields: [], reason: "optional", danger: true },
    { action: "resume", label: "hall.act.resume", rule: "6.12a", fields: [], reason: "optional" },
    { action: "seal_all", label: "hall.act.seal_all", rule: "I.1.1", fields: [{ name: "start", path: ["resumption", "start"], label: "fld.resumption_optional", kind: "instant", optional: true }, { name: "place", path: ["resumption", "place"], label: "fld.place", kind: "text", optional: true }], reason: "optional", danger: true },
    { action: "schedule_resumption", label: "act.schedule_resumption", rule: "I.14", fields: [{ name: "start", path: ["resumption", "start"], label: "fld.start", kind: "instant" }, { name: "end", path: ["resumption", "end"], label: "fld.end_optional", kind: "instant", optional: true }, { name: "place", path: ["resumption", "place"], label: "fld.place", kind: "text" }], reason: "none" },
    // The hall screens' banner (docs/DASHBOARD.md, "Hall screens"): on every screen until its end.
    { action: "announce", label: "hall.act.announce", rule: "", fields: [{ name: "text", label: "fld.announce_text", kind: "text", max: 280, placeholder: "fld.announce_text.placeholder" }, { name: "until", label: "fld.announce_minutes", kind: "minutes", min: 1, max: 1440 }], reason: "none" },
    { action: "announce", label: "hall.act.announce_clear", rule: "", fields: [], reason: "none" },
  ];
  const hallForms = h("div", { class: "forms" }, hallSpecs.map((s) => commandForm(s, null, boards())));
  const summary = h("div", { id: "round-summary" });
  main.replaceChildren(
    h("h1", { class: "vh", text: t("nav.round") }),
    h("div", { class: "round-grid" }, [
      h("div", {}, [h("div", { class: "card" }, [h("h2", { text: t("round.start_a_round") }), chief ? startForm : h("p", { class: "muted", text: t("round.only_chief") })])]),
      h("div", {}, [
        h("div", { class: "card" }, [h("h2", { text: t("round.whole_hall") }), chief ? hallForms : h("p", { class: "muted", text: t("round.hall_needs_chief") })]),
        h("div", { class: "card" }, [h("h2", { text: t("round.summary") }), summary]),
      ]),
    ]),
  );
  let touched = false;
  startForm.addEventListener("input", (e) => { if (e.target !== tc) touched = true; });
  render = () => {
    // The page may open before the feed's snapshot: fill the form once the hall is known.
    if (!touched && rowsBody.children.length === 0 && boards().length) {
      for (const b of boards()) addRow(b);
      if (store.info && store.info.defaults) { tc.value = store.info.defaults.time_control; checkTc(); }
      num.value = String(((store.info && store.info.round && store.info.round.round) || 0) + 1);
    }
    const r = store.info && store.info.round;
    const rows = [];
    let done = 0, playing = 0;
    for (const id of boards()) {
      const st = board(id).state;
      if (!st || !r || st.round === null) continue;
      // A game of an earlier round still on (adjourned, or slow) belongs in the summary.
      const earlier = st.round < r.round && st.phase !== "finished";
      if (st.round !== r.round && !earlier) continue;
      if (st.round === r.round) { if (st.phase === "finished") done++; else playing++; }
      const phase = `${phaseText(board(id), id)}${earlier ? ` (${t("tile.round", { n: st.round })})` : ""}`;
      rows.push(h("tr", { "data-board": id, class: earlier ? "earlier" : null }, [h("td", {}, [h("a", { href: `/board/${id}`, text: id })]), h("td", { text: st.white ? st.white.name : "" }), h("td", { text: st.black ? st.black.name : "" }), h("td", { text: phase }), h("td", { text: resultText(st.result, true) })]));
    }
    const s = store.session;
    const ann = store.announce && store.announce.until > serverCivilNow() ? store.announce : null;
    summary.replaceChildren(...[
      ann ? h("p", { class: "announce-standing", id: "announce-standing", text: t("round.announce.standing", { time: new Date(ann.until).toLocaleTimeString(LANG), text: ann.text }) }) : null,
      h("p", { text: r ? t("round.summary.line", { round: r.round, tc: r.time_control, start: new Date(r.start).toLocaleString(LANG), playing, done }) : t("round.summary.none") }),
      s && (s.sealed.length || s.sealing.length) ? h("p", { text: `${t("round.summary.adjournment", { sealing: s.sealing.length, sealed: s.sealed.length, awaiting: s.awaiting_opening.length })}${s.all_sealed ? ` · ${t("round.summary.all_sealed")}` : ""}${s.resumption ? ` · ${t("round.summary.resumes", { time: new Date(s.resumption.start).toLocaleString(LANG), place: s.resumption.place })}` : ""}` }) : null,
      h("table", {}, [h("thead", {}, [h("tr", {}, [t("round.board"), t("side.white"), t("side.black"), t("round.phase"), t("fld.result")].map((text) => h("th", { text })))]), h("tbody", {}, rows)]),
    ].filter((x) => x !== null));
  };
  render();
}

/**
 * The TRF preview's first line: the tournament, the round, the boards and the file's
 * time control (used when the form's field is empty).
 * @param {any} a the preview @param {string} file @param {number} round
 */
function trfSummary(a, file, round) {
  const boards = a.boards.filter((/** @type {any} */ b) => !b.bye).length;
  const head = t("round.trf.summary", { name: a.tournament || file, round, count: boards });
  if (!a.time_control) return head;
  return `${head}${t("round.trf.tc", { tc: `${a.time_control}${a.time_control_black ? ` / ${a.time_control_black}` : ""}` })}`;
}

/**
 * A reader's message for programmers in an arbiter's words: serde's field messages, and
 * the daemon's 0-based `pairings[i]` as the arbiter counts (the first pairing is 1).
 * @param {string} text
 */
function arbiterWords(text) {
  return text
    .replace(/pairings\[(\d+)\](?:\.(\w+))?/g, (_, i, f) => `pairing ${Number(i) + 1}${f ? ` (${f.replace(/_/g, " ")})` : ""}`)
    .replace(/missing field `(\w+)`/g, (_, f) => `${f.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase())} is missing`)
    .replace(/unknown field `(\w+)`, expected [^;]*/g, (_, f) => `'${f}' is not a pairing's field`)
    .replace(/invalid type: ([^,]+), expected ([^;]+?)( at line \d+ column \d+)?$/g, "expected $2, not $1");
}

/**
 * Why a control that reads cannot run a clock (`/api/tc`'s `note`), in the page's words.
 * @param {any} a
 */
function tcNote(a) {
  // The note is the server's English; its kind is the control's only part.
  const part = Array.isArray(a.parts) && a.parts.length === 1 ? a.parts[0].part : "";
  return LANG !== "en" && hasText(`tcnote.${part}`) ? t(`tcnote.${part}`) : String(a.note);
}

/**
 * The time-control reader's message in an arbiter's words: its grammar names PGN's forms
 * ('?' unknown, '-' none, '*secs' hourglass), none of which a round can be played on.
 * @param {string} reason
 */
function tcWords(reason) {
  return reason
    .replace(/expected a time control \([^)]*\)/, "expected a number of seconds, or moves/seconds")
    .replace(/ at column (\d+)$/, " (at character $1)");
}

function loginView() {
  const main = /** @type {HTMLElement} */ (document.getElementById("main"));
  const id = /** @type {HTMLInputElement} */ (h("input", { name: "id", id: "login-id", autocomplete: "username", required: true }));
  const pw = /** @type {HTMLInputElement} */ (h("input", { name: "password", id: "login-password", type: "password", autocomplete: "current-password", required: true }));
  const reply = h("span", { class: "reply", id: "login-reply" });
  const form = h("form", { class: "card login", id: "login" }, [h("h1", { text: t("login.title") }), h("label", { for: "login-id", text: t("login.id") }), id, h("label", { for: "login-password", text: t("login.password") }), pw, h("button", { type: "submit", class: "primary", text: t("login.button") }), reply, h("p", { class: "muted" }, [t("login.spectators"), " ", h("a", { href: "/public", text: t("login.public") })])]);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const asked = Date.now();
    const r = await fetch("/api/login", { method: "POST", credentials: "same-origin", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: id.value, password: pw.value }) });
    const a = await r.json().catch(() => ({}));
    if (r.ok) {
      // A language chosen on the login page (?lang=) becomes the new session's.
      const chosen = new URLSearchParams(location.search).get("lang");
      if (chosen && typeof a.csrf === "string") await saveLanguage(chosen, a.csrf);
      // The hall is drawn in this page, not loaded again (issue 38 §9: on a slow link the
      // page and its catalogue are a tenth of a first visit): the session's language is
      // the one this page is in (the address's ?lang=, just kept, or the browser's), and
      // the login's answer is `/api/me`'s body.
      history.replaceState(null, "", "/");
      loadAllHistory();
      loggedIn(a, asked);
      return;
    }
    reply.textContent = refusalText(a, t("login.refused", { status: String(r.status) }));
    reply.className = "reply err";
  });
  main.replaceChildren(form);
  render = () => {};
  id.focus();
}

/**
 * @template {(...args: any[]) => void} F
 * @param {F} f @param {number} ms
 */
function debounce(f, ms) {
  /** @type {any} */
  let t = null;
  return /** @type {F} */ ((...args) => { clearTimeout(t); t = setTimeout(() => f(...args), ms); });
}

function currentBoard() {
  const m = location.pathname.match(/^\/board\/([a-z0-9-]+)$/);
  return m ? m[1] : null;
}

/**
 * The header's language selector. A logged-in arbiter's choice is kept in the session
 * (`POST /api/language`); before a login it is the address's `?lang=`, which the server
 * honours on every page (and which the login then keeps in the new session).
 * @param {boolean} loggedIn
 */
function languageChooser(loggedIn) {
  const box = document.getElementById("lang-box");
  const sel = /** @type {HTMLSelectElement|null} */ (document.getElementById("lang"));
  if (!box || !sel || I18N.languages.length < 2) return;
  sel.replaceChildren(...I18N.languages.map((l) => h("option", { value: l.code, text: l.name, lang: l.code })));
  sel.value = LANG;
  box.hidden = false;
  // One handler (`onchange`, not a listener added): the login page's is replaced by the
  // logged-in one when the login draws the hall in the same page.
  sel.onchange = async () => {
    const language = sel.value;
    if (loggedIn && await saveLanguage(language, store.me ? store.me.csrf : "")) { location.reload(); return; }
    const url = new URL(location.href);
    url.searchParams.set("lang", language);
    location.replace(url.href);
  };
}

/**
 * Keep `language` as this session's (the CSRF header as every POST has it).
 * @param {string} language @param {string} csrf @returns {Promise<boolean>}
 */
async function saveLanguage(language, csrf) {
  try {
    const r = await fetch("/api/language", {
      method: "POST", credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": csrf },
      body: JSON.stringify({ language }),
    });
    return r.ok;
  } catch (_) {
    return false;
  }
}

async function main() {
  translateStatic();
  const path = location.pathname;
  for (const a of document.querySelectorAll("[data-nav]")) {
    const nav = a.getAttribute("data-nav");
    a.classList.toggle("active", (nav === "hall" && path === "/") || path === `/${nav}`);
  }
  /** @param {string} el */
  const show = (el) => { const e = document.getElementById(el); if (e) e.hidden = false; };
  if (PUBLIC) {
    document.body.classList.add("public");
    show("conn");
    // Nothing to press on a hall screen (its language is the address's ?lang= or the
    // hall's [web] language).
    for (const id of ["logout", "lang-box"]) {
      const el = document.getElementById(id);
      if (el) el.remove();
    }
    connect();
    publicMain();
    requestAnimationFrame(tick);
    return;
  }
  if (path === "/login") { languageChooser(false); loginView(); return; }
  const asked = Date.now();
  // On a slow link every round trip counts: the hall's move lists are asked for at once,
  // beside who is logged in, not after the feed's first picture (one round trip less).
  if (!currentBoard() && path === "/") loadAllHistory();
  const r = await fetch("/api/me", { credentials: "same-origin" });
  if (r.status === 401) { location.href = "/login"; return; }
  loggedIn(await r.json(), asked);
}

/**
 * The arbiter's pages, once who is logged in is known (from `/api/me`, or from the login's
 * own answer, which is the same body).
 * @param {any} me @param {number} asked when the request that brought `me` was sent
 */
function loggedIn(me, asked) {
  /** @param {string} el */
  const show = (el) => { const e = document.getElementById(el); if (e) e.hidden = false; };
  store.me = me;
  // The server read its clock about halfway through the request.
  if (store.me && typeof store.me.civil_ms === "number") {
    store.civilOffset = store.me.civil_ms - (asked + Date.now()) / 2;
    showClockNote();
  }
  // The pages and the feed's state are an arbiter's: shown once logged in, never on the
  // login page (index.html has them hidden).
  show("nav");
  show("conn");
  languageChooser(true);
  const who = document.getElementById("who");
  if (who && store.me) who.textContent = `${store.me.arbiter.name} · ${roleWords(store.me.arbiter.role)}`;
  const out = /** @type {HTMLButtonElement} */ (document.getElementById("logout"));
  out.hidden = false;
  // On a phone the name is left out of the one-line header: the button still says whose.
  if (store.me) out.title = t("header.logout_who", { name: store.me.arbiter.name });
  out.addEventListener("click", async () => {
    await fetch("/api/logout", { method: "POST", credentials: "same-origin", headers: { "x-csrf-token": store.me ? store.me.csrf : "" } });
    // The other tabs' shared feed ends with this session: reopened without it, it is
    // refused, and they go to the login page.
    if (feedPort) feedPort.postMessage({ t: "reset" });
    location.href = "/login";
  });
  connect();
  route();
  requestAnimationFrame(tick);
}

/** The app's own pages: a link to one is followed without reloading (issue 38 §9). */
const APP_PATHS = /^\/(?:round|alerts|board\/[a-z0-9-]+)?$/;

/**
 * Draw the page the address names. A navigation within the app keeps the page, its feed
 * and everything it already holds (states, move lists): only what it lacks is fetched.
 */
function route() {
  const path = location.pathname;
  for (const a of document.querySelectorAll("[data-nav]")) {
    const nav = a.getAttribute("data-nav");
    a.classList.toggle("active", (nav === "hall" && path === "/") || path === `/${nav}`);
  }
  render = () => {};
  onArrow = () => {};
  liveClocks = [];
  document.title = "hallclock";
  const b = currentBoard();
  if (b) boardView(b);
  else if (path === "/round") roundView();
  else if (path === "/alerts") alertsView();
  else hallView();
  // Before the feed's first picture the boards are not known yet: `ready` loads them.
  if (!b && !store.snapshotting && store.boards.size && [...store.boards.values()].some((x) => !x.historyLoaded)) loadAllHistory();
  dirty.all = true;
  renderSoon();
}

document.addEventListener("click", (e) => {
  if (PUBLIC || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = /** @type {HTMLAnchorElement|null} */ (e.target instanceof Element ? e.target.closest("a[href]") : null);
  if (!a || a.target || a.hasAttribute("download")) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !APP_PATHS.test(url.pathname)) return;
  e.preventDefault();
  const samePage = url.pathname === location.pathname && url.search === location.search;
  if (url.href !== location.href) history.pushState(null, "", url.href);
  route();
  if (!samePage || !url.hash) window.scrollTo(0, 0);
});
window.addEventListener("popstate", () => { if (!PUBLIC && store.me) route(); });

// A page left (or kept in the back-forward cache) lets go of its feed: a tab's own feed
// holds one of the browser's six connections to a host (feeds left open by earlier pages
// starved the next page's requests), and the shared feed need not write to a page gone.
window.addEventListener("pagehide", () => {
  if (source) { source.close(); source = null; }
  if (feedPort) { feedPort.postMessage({ t: "bye" }); feedPort = null; }
});
window.addEventListener("pageshow", (e) => { if (e.persisted && !source && !feedPort) connect(); });

main();
