// @ts-check
// The hall screens (issue 40; docs/DASHBOARD.md, "Hall screens"): /public (the boards),
// /public/players (who plays where), /public/results (latest first) and /public/clock.
// A screen is its address: every option is in the query, and an option that cannot be
// used is said on the screen, never silently dropped (owlcms's displays, Sharly Chess's
// screens). Loaded before app.js, whose words, feed and store it uses: app.js's main()
// hands a /public… page to publicMain().
"use strict";

/** The options a screen's address may carry, each with the words for what it expects. */
/** @type {Record<string, string>} */
const SCREEN_EXPECT = {
  boards: "screen.expect.boards", columns: "screen.expect.columns", size: "screen.expect.size",
  rotate: "screen.expect.rotate", theme: "screen.expect.theme", round: "screen.expect.round",
  diagram: "screen.expect.diagram", stages: "screen.expect.stages", lang: "screen.expect.lang",
  // The page's own (app.js: a feed for this tab alone).
  feed: "screen.expect.feed",
};
const SCREEN_OPTIONS = Object.keys(SCREEN_EXPECT);

/**
 * @typedef {{boards: [number, number][] | null, columns: number | null, size: number,
 *   rotate: number, theme: string, round: number | null, diagram: boolean, stages: number[]}} ScreenOptions
 */

/**
 * A whole number in [min, max], or null.
 * @param {string} v @param {number} min @param {number} max
 */
function wholeIn(v, min, max) {
  if (!/^\d{1,6}$/.test(v)) return null;
  const n = Number(v);
  return n >= min && n <= max ? n : null;
}

/**
 * The screen's options from its query, and a note for each one that cannot be used
 * (unknown, or a bad value: the default is used and the note says which).
 * @param {string} search
 * @returns {{opts: ScreenOptions, notes: string[]}}
 */
function screenOptions(search) {
  /** @type {ScreenOptions} */
  const opts = { boards: null, columns: null, size: 100, rotate: 15, theme: "dark", round: null, diagram: false, stages: [15, 5, 1] };
  /** @type {string[]} */
  const notes = [];
  const q = new URLSearchParams(search);
  /** @param {string} name @param {string} value */
  const bad = (name, value) => notes.push(t("screen.note.bad", { name, value, expected: t(SCREEN_EXPECT[name]) }));
  for (const [name, value] of q) {
    const v = value.trim();
    if (!SCREEN_OPTIONS.includes(name)) {
      notes.push(t("screen.note.unknown", { name, known: SCREEN_OPTIONS.filter((o) => o !== "feed").join(", ") }));
      continue;
    }
    if (name === "boards") {
      /** @type {[number, number][]} */
      const ranges = [];
      const ok = v.split(",").every((part) => {
        const m = /^(\d{1,5})(?:\s*[-–]\s*(\d{1,5}))?$/.exec(part.trim());
        if (!m) return false;
        const a = Number(m[1]), b = m[2] === undefined ? a : Number(m[2]);
        if (a < 1 || b < a) return false;
        ranges.push([a, b]);
        return true;
      });
      if (ok && ranges.length) opts.boards = ranges; else bad(name, value);
    } else if (name === "columns") {
      const n = wholeIn(v, 1, 12);
      if (n === null) bad(name, value); else opts.columns = n;
    } else if (name === "size") {
      const n = wholeIn(v.replace(/%$/, ""), 50, 300);
      if (n === null) bad(name, value); else opts.size = n;
    } else if (name === "rotate") {
      const n = wholeIn(v.replace(/s$/, ""), 0, 600);
      if (n === null || (n > 0 && n < 3)) bad(name, value); else opts.rotate = n;
    } else if (name === "theme") {
      if (v === "dark" || v === "light") opts.theme = v; else bad(name, value);
    } else if (name === "round") {
      const n = wholeIn(v, 1, 9999);
      if (n === null) bad(name, value); else opts.round = n;
    } else if (name === "diagram") {
      if (v === "1" || v === "0") opts.diagram = v === "1"; else bad(name, value);
    } else if (name === "stages") {
      const list = v.split(",").map((x) => wholeIn(x.trim(), 1, 180));
      const ok = list.length >= 1 && list.length <= 3 && list.every((x, i) => x !== null && (i === 0 || x < /** @type {number} */ (list[i - 1])));
      if (ok) opts.stages = /** @type {number[]} */ (list); else bad(name, value);
    }
  }
  return { opts, notes };
}

/**
 * A board's number as the tournament numbers it (`[[boards]] number`: "1", not
 * "board-001"), else its id's own number, else its id.
 * @param {string} id
 */
function boardNumber(id) {
  const info = store.info && Array.isArray(store.info.boards) ? store.info.boards.find((/** @type {any} */ x) => x.id === id) : null;
  if (info && typeof info.number === "number") return info.number;
  const digits = /(\d+)$/.exec(id);
  return digits ? Number(digits[1]) : null;
}

/** @param {string} id */
function boardLabel(id) {
  const n = boardNumber(id);
  return n === null ? id : String(n);
}

/** The round a screen shows: its address's, else the one started last. @param {ScreenOptions} opts */
function shownRound(opts) {
  return opts.round || (store.info && store.info.round ? store.info.round.round : null);
}

/**
 * The boards of the shown round (every board before the first round), within the
 * address's `boards=`, in the tournament's order.
 * @param {ScreenOptions} opts
 */
function screenBoards(opts) {
  const round = shownRound(opts);
  const inRange = (/** @type {string} */ id) => {
    if (!opts.boards) return true;
    const n = boardNumber(id);
    return n !== null && opts.boards.some(([a, b]) => n >= a && n <= b);
  };
  return [...store.boards.keys()]
    .filter((id) => {
      const st = board(id).state;
      return (!round || (st && st.round === round)) && inRange(id);
    })
    .sort((a, b) => (boardNumber(a) ?? Infinity) - (boardNumber(b) ?? Infinity) || (a < b ? -1 : 1));
}

// ---------- the next start, and the announcement ----------

/**
 * The next scheduled start the hall waits for: the round's start, or the resumption of
 * its adjourned games, whichever comes first and is still ahead.
 * @returns {{kind: "round"|"resumption", at: number, round: number|null} | null}
 */
function nextStart() {
  const now = serverCivilNow();
  /** @type {{kind: "round"|"resumption", at: number, round: number|null}[]} */
  const ahead = [];
  const r = store.info && store.info.round;
  if (r && typeof r.start === "number" && r.start > now) ahead.push({ kind: "round", at: r.start, round: r.round });
  const s = store.session;
  if (s && s.resumption && typeof s.resumption.start === "number" && s.resumption.start > now) ahead.push({ kind: "resumption", at: s.resumption.start, round: s.round ?? null });
  ahead.sort((a, b) => a.at - b.at);
  return ahead[0] || null;
}

/**
 * The colour stage of a countdown: the smallest stage (minutes) it is within, or 0.
 * @param {number} leftMs @param {number[]} stages
 */
function stageOf(leftMs, stages) {
  let stage = 0;
  for (const m of stages) if (leftMs <= m * 60000) stage = m;
  return stage;
}

/** "12:05" to go, to the second. @param {number} ms */
function countdownText(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const hh = Math.floor(s / 3600), mm = Math.floor((s % 3600) / 60), ss = s % 60;
  const two = (/** @type {number} */ n) => String(n).padStart(2, "0");
  return hh > 0 ? `${hh}:${two(mm)}:${two(ss)}` : `${mm}:${two(ss)}`;
}

/** The standing announcement, while it stands by the hall's clock. */
function standingAnnouncement() {
  const a = store.announce;
  return a && typeof a.text === "string" && typeof a.until === "number" && serverCivilNow() < a.until ? a : null;
}

/** The hall's clock, as the daemon reads it (a screen has no login, so no /api/me). */
async function fetchHallTime() {
  const asked = Date.now();
  try {
    const r = await fetch("/api/public/time");
    if (!r.ok) return;
    const v = await r.json();
    if (typeof v.civil_ms === "number") store.civilOffset = v.civil_ms - (asked + Date.now()) / 2;
  } catch (_) { /* the next try */ }
}

// ---------- the screens ----------

/**
 * Fit `items` into pages of `grid`: as many rows as the screen holds without cutting
 * one (measured, not guessed: names may wrap), `cols` columns. With `down`, the items
 * run down each column first (a list read by name). Returns each page's [from, to).
 * @param {HTMLElement} grid @param {HTMLElement[]} items @param {number} cols
 * @param {{pages: [number, number][], key: string}} fit  kept between renders
 * @param {string} key  what the fit depends on (size, count, columns, round)
 * @param {boolean} [down]
 */
function fitPages(grid, items, cols, fit, key, down) {
  if (fit.key === key && fit.pages.length) return fit.pages;
  // Every item laid out once, left to right in the columns' widths, and measured: a row
  // is as tall as its tallest item, and a page takes whole rows while they fit.
  grid.style.gridTemplateRows = "";
  grid.style.gridAutoFlow = "row";
  grid.replaceChildren(...items);
  const heights = items.map((el) => el.getBoundingClientRect().height);
  grid.style.gridAutoFlow = "";
  const gap = parseFloat(getComputedStyle(grid).rowGap) || 0;
  const room = grid.clientHeight;
  /** @type {[number, number][]} */
  const pages = [];
  if (down) {
    // Down the columns: every row as tall as the tallest (a list reads evenly).
    const rowH = Math.max(1, ...heights);
    const rows = Math.max(1, Math.floor((room + gap) / (rowH + gap)));
    for (let i = 0; i < items.length; i += rows * cols) pages.push([i, Math.min(items.length, i + rows * cols)]);
  } else {
    let from = 0, used = 0;
    for (let i = 0; i < items.length; i += cols) {
      const rowH = Math.max(...heights.slice(i, i + cols));
      if (used > 0 && used + gap + rowH > room + 0.5) { pages.push([from, i]); from = i; used = rowH; }
      else used += (used > 0 ? gap : 0) + rowH;
    }
    pages.push([from, items.length]);
  }
  if (pages.length === 0) pages.push([0, 0]);
  fit.pages = pages;
  fit.key = key;
  return pages;
}

/** Whether a grid's content is cut (a name wrapped since the fit). @param {HTMLElement} grid */
function overflows(grid) {
  return grid.scrollHeight > grid.clientHeight + 1 || grid.scrollWidth > grid.clientWidth + 1;
}

/**
 * Show `slice` in `grid` (one replacement: the screen never shows half a page); if it no
 * longer fits (a name changed), the next frame fits again.
 * @param {HTMLElement} grid @param {HTMLElement[]} slice @param {{pages: [number, number][], key: string}} fit
 */
function showPage(grid, slice, fit) {
  const same = grid.children.length === slice.length && slice.every((el, i) => grid.children[i] === el);
  if (!same) grid.replaceChildren(...slice);
  if (slice.length > 1 && overflows(grid)) { fit.key = ""; dirty.all = true; renderSoon(); }
}

/**
 * Pages that turn at the screen's pace (`rotate=` seconds; 0: the first page only).
 * @param {ScreenOptions} opts
 */
function pager(opts) {
  const p = { index: 0, count: 1, turned: Date.now() };
  return {
    /** @param {number} count */
    pages(count) {
      p.count = Math.max(1, count);
      if (p.index >= p.count) p.index = 0;
      return p.index;
    },
    /** Whether the page turned now (then the screen redraws). */
    due() {
      if (opts.rotate <= 0 || p.count <= 1 || Date.now() - p.turned < opts.rotate * 1000) return false;
      p.index = (p.index + 1) % p.count;
      p.turned = Date.now();
      return true;
    },
    get index() { return p.index; },
    get count() { return p.count; },
  };
}

/**
 * A board's tile for the hall: its tournament number, both players (title, name,
 * rating) with their clocks, the last move or the result in words; a diagram with
 * `diagram=1`. Made once, then only its texts change.
 * @param {string} id @param {ScreenOptions} opts
 */
function makeScreenTile(id, opts) {
  const el = h("div", { class: "tile", "data-board": id });
  const num = h("span", { class: "num" });
  const state = h("span", { class: "state" });
  /** @type {Record<string, {box: HTMLElement, title: HTMLElement, name: HTMLElement, rating: HTMLElement, clock: HTMLElement}>} */
  const sides = {};
  const rows = [];
  for (const color of /** @type {const} */ (["white", "black"])) {
    const title = h("span", { class: "ptitle" });
    const name = h("span", { class: "name" });
    const rating = h("span", { class: "rating" });
    const clock = h("span", { class: "clock", "data-color": color });
    // The clock floats right on the name's first line: a long name's next lines take the
    // tile's whole width (two lines, not three, for "Fernández Villaverde, José Antonio").
    const box = h("div", { class: `side ${color}`, "data-side": color }, [clock, h("span", { class: "swatch", "aria-hidden": "true" }), title, name, rating]);
    sides[color] = { box, title, name, rating, clock };
    rows.push(box);
    liveClocks.push([clock, id, color]);
  }
  // One line above the players: the number, the phase or result, and the last move or
  // why the game ended.
  const foot = h("span", { class: "foot" });
  const text = h("div", { class: "text" }, [h("div", { class: "head" }, [num, state, foot]), ...rows]);
  /** @type {any} */
  let diagram = null;
  if (opts.diagram && typeof createBoard === "function") {
    diagram = createBoard({ label: t("board.diagram") });
    el.append(h("div", { class: "diagram" }, [diagram.svg]), text);
    el.classList.add("with-diagram");
  } else {
    el.append(text);
  }
  return { el, num, state, sides, foot, diagram };
}

/** @param {ReturnType<typeof makeScreenTile>} tile @param {string} id */
function renderScreenTile(tile, id) {
  const b = board(id);
  const st = b.state;
  setText(tile.num, boardLabel(id));
  const finished = !!(st && st.result);
  setText(tile.state, finished ? screenScore(st.result) : phaseText(b, id, true));
  tile.state.className = `state phase-${phaseKey(st)}`;
  tile.el.classList.toggle("offline", !b.online);
  for (const color of /** @type {const} */ (["white", "black"])) {
    const s = tile.sides[color];
    const p = st && st[color];
    setText(s.title, p && p.title ? p.title : "");
    setText(s.name, p ? p.name : "");
    setText(s.rating, p && p.rating ? String(p.rating) : "");
    setText(s.clock, p ? fmtClock(clockMs(st, color)) : "");
    const cls = sideClass(st, color) + (s.box.classList.contains("low") ? " low" : "");
    if (s.box.className !== cls) s.box.className = cls;
  }
  // Why it ended, in words; else the last move.
  setText(tile.foot, finished ? terminationWords(st.result) : (b.lastMove ? lastMoveText(b) : ""));
  // A reason is said whole (it wraps); a last move stays on the line (the fit measures both).
  if (tile.foot.classList.contains("why") !== finished) tile.foot.classList.toggle("why", finished);
  if (tile.diagram && st && st.fen !== undefined) tile.diagram.update(st.fen || "", b.lastUci || "");
}

/**
 * A score as a hall prints it: "½–½", "1–0" (the payload's PGN "1/2-1/2" is seven
 * characters, and keeps a draw on one line nowhere on a phone).
 * @param {any} result
 */
function screenScore(result) {
  return resultText(result).replace("1/2-1/2", "½–½").replace(/^([01])-([01])$/, "$1–$2");
}

/** Whether a tile cuts a name (more than three lines in its width). @param {HTMLElement} tile */
function namesCut(tile) {
  return [...tile.querySelectorAll(".side")].some((side) => side.scrollHeight > side.clientHeight + 1);
}

/** The columns a screen's grid gets: the address's, else as many as fit `minPx` each. @param {ScreenOptions} opts @param {HTMLElement} grid @param {number} minPx */
function columnsFor(opts, grid, minPx) {
  return opts.columns || Math.max(1, Math.floor((grid.clientWidth + 1) / minPx));
}

/** One viewport unit of the screen (`size=` percent of 1vmin), in px. @param {ScreenOptions} opts */
function unitPx(opts) {
  return (Math.min(innerWidth, innerHeight) / 100) * (opts.size / 100);
}

/**
 * The boards, a page at a time.
 * @param {HTMLElement} body @param {ScreenOptions} opts @param {(text: string) => void} say
 */
function boardsScreen(body, opts, say) {
  const grid = h("div", { class: "tiles screen-grid", id: "tiles" });
  body.replaceChildren(grid);
  /** @type {Map<string, ReturnType<typeof makeScreenTile>>} */
  const tiles = new Map();
  const fit = { pages: /** @type {[number, number][]} */ ([]), key: "" };
  const pages = pager(opts);
  let cols = 1;
  return (/** @type {boolean} */ all) => {
    const ids = screenBoards(opts);
    for (const id of ids) if (!tiles.has(id)) { const tile = makeScreenTile(id, opts); tiles.set(id, tile); renderScreenTile(tile, id); }
    const els = ids.map((id) => /** @type {any} */ (tiles.get(id)).el);
    for (const id of ids) if (all || dirty.boards.has(id)) renderScreenTile(/** @type {any} */ (tiles.get(id)), id);
    const key = `${grid.clientWidth}x${grid.clientHeight}:${ids.length}:${shownRound(opts)}`;
    if (fit.key !== key) {
      // A few boards fill the screen: the largest size at which they all fit on one page
      // (8 boards are not left in the top third of a TV); many boards take the base size.
      // (Two boards a row at least on a landscape screen: one huge tile a row reads badly.)
      const least = innerWidth > innerHeight ? Math.min(2, ids.length) : 1;
      for (const f of [2, 1.6, 1.3, 1.15, 1]) {
        grid.style.setProperty("--fill", String(f));
        cols = columnsFor(opts, grid, Math.max(300, 42 * f * unitPx(opts)));
        if (cols < least && f > 1 && !opts.columns) continue;
        grid.style.gridTemplateColumns = `repeat(${cols}, minmax(0, 1fr))`;
        fit.key = "";
        // (Laid out whole by fitPages: a name cut at this size means a smaller one.)
        if (fitPages(grid, els, cols, fit, key).length === 1 && !els.some(namesCut)) break;
      }
    }
    const cut = fitPages(grid, els, cols, fit, key);
    const page = pages.pages(cut.length);
    const slice = ids.slice(...cut[page]);
    showPage(grid, slice.map((id) => /** @type {any} */ (tiles.get(id)).el), fit);
    say(ids.length === 0 ? t("screen.boards.none") : cut.length > 1
      ? t("screen.page.boards", { from: boardLabel(slice[0]), to: boardLabel(slice[slice.length - 1]), count: ids.length, page: page + 1, pages: pages.count })
      : t("screen.all.boards", { count: ids.length }));
    return pages;
  };
}

/**
 * A screen of rows paged in place (players, results): its grid in `body`, its fit and its
 * pager. @param {HTMLElement} body @param {ScreenOptions} opts @param {string} name
 */
function listScreen(body, opts, name) {
  const grid = h("div", { class: `${name} screen-grid`, id: name });
  body.replaceChildren(grid);
  return { grid, fit: { pages: /** @type {[number, number][]} */ ([]), key: "" }, pages: pager(opts) };
}

/**
 * Who plays where: every player of the round, alphabetically, with the board and the
 * colour, in columns, a page at a time ("to find their table much faster").
 * @param {HTMLElement} body @param {ScreenOptions} opts @param {(text: string) => void} say
 */
function playersScreen(body, opts, say) {
  const { grid, fit, pages } = listScreen(body, opts, "players");
  let drawn = "";
  /** @type {HTMLElement[]} */
  let rows = [];
  return () => {
    /** @type {{name: string, color: "white"|"black", id: string}[]} */
    const players = [];
    for (const id of screenBoards(opts)) {
      const st = board(id).state;
      for (const color of /** @type {const} */ (["white", "black"])) if (st && st[color] && st[color].name) players.push({ name: st[color].name, color, id });
    }
    const collator = new Intl.Collator(LANG, { sensitivity: "base", numeric: true });
    players.sort((a, b) => collator.compare(a.name, b.name));
    const key = JSON.stringify(players.map((p) => [p.name, p.color, boardLabel(p.id)]));
    if (key !== drawn) {
      rows = players.map((p) => h("div", { class: `player ${p.color}`, "data-board": p.id }, [
        h("span", { class: "name", text: p.name }),
        h("span", { class: "where" }, [h("span", { class: "swatch", "aria-hidden": "true" }), h("span", { class: "colour", text: t(`side.${p.color}`) }), h("span", { class: "num", text: boardLabel(p.id) })]),
      ]));
      drawn = key;
      fit.key = "";
    }
    const cols = columnsFor(opts, grid, Math.max(320, 58 * unitPx(opts)));
    grid.style.gridTemplateColumns = `repeat(${cols}, minmax(0, 1fr))`;
    const cut = fitPages(grid, rows, cols, fit, `${grid.clientWidth}x${grid.clientHeight}:${cols}:${rows.length}`, true);
    const page = pages.pages(cut.length);
    const [from, to] = cut[page];
    grid.style.gridTemplateRows = `repeat(${Math.max(1, Math.ceil((cut[0][1] - cut[0][0]) / cols))}, auto)`;
    const slice = rows.slice(from, to);
    showPage(grid, slice, fit);
    say(rows.length === 0 ? t("screen.players.none") : cut.length > 1
      ? t("screen.page.players", { from: from + 1, to, count: rows.length, page: page + 1, pages: pages.count })
      : t("screen.all.players", { count: rows.length }));
    return pages;
  };
}

/** When a board's game ended: its `game_ended` event, else its state's time. @param {string} id */
function endedAt(id) {
  const b = board(id);
  for (let i = b.events.length - 1; i >= 0; i--) if (b.events[i].event === "game_ended" && typeof b.events[i].at === "number") return b.events[i].at;
  return b.state ? b.state.as_of : 0;
}

/**
 * The round's results, the latest first, with why each game ended.
 * @param {HTMLElement} body @param {ScreenOptions} opts @param {(text: string) => void} say
 */
function resultsScreen(body, opts, say) {
  const { grid, fit, pages } = listScreen(body, opts, "results");
  let drawn = "";
  /** @type {HTMLElement[]} */
  let rows = [];
  return () => {
    const ids = screenBoards(opts);
    const done = ids.filter((id) => { const st = board(id).state; return !!(st && st.result); });
    done.sort((a, b) => endedAt(b) - endedAt(a) || (boardNumber(a) ?? 0) - (boardNumber(b) ?? 0));
    // (With when each ended: the boards' events may come after their states.)
    const key = JSON.stringify(done.map((id) => [id, endedAt(id), board(id).state.result]));
    if (key !== drawn) {
      rows = done.map((id) => {
        const st = board(id).state;
        return h("div", { class: "result-row", "data-board": id }, [
          h("span", { class: "num", text: boardLabel(id) }),
          h("span", { class: "name white", text: st.white ? st.white.name : "" }),
          h("span", { class: "score", text: screenScore(st.result) }),
          h("span", { class: "name black", text: st.black ? st.black.name : "" }),
          h("span", { class: "why", text: terminationWords(st.result) }),
        ]);
      });
      drawn = key;
      fit.key = "";
    }
    const cut = fitPages(grid, rows, 1, fit, `${grid.clientWidth}x${grid.clientHeight}:${rows.length}`);
    const page = pages.pages(cut.length);
    const [from, to] = cut[page];
    const slice = rows.slice(from, to);
    showPage(grid, slice, fit);
    const count = t("screen.results.count", { done: done.length, count: ids.length });
    say(rows.length === 0 ? t("screen.results.none") : cut.length > 1
      ? `${t("screen.page.results", { from: from + 1, to, count: rows.length, page: page + 1, pages: pages.count })} · ${count}`
      : count);
    return pages;
  };
}

/**
 * The hall's clock: the time, and the countdown to the next start, large.
 * @param {HTMLElement} body @param {ScreenOptions} opts @param {(text: string) => void} say
 */
function clockScreen(body, opts, say) {
  const now = h("div", { class: "big-time", id: "hall-time" });
  const what = h("div", { class: "big-what", id: "clock-what" });
  const left = h("div", { class: "big-left", id: "clock-left" });
  body.replaceChildren(h("div", { class: "clock-screen" }, [now, what, left]));
  return () => {
    setText(now, new Date(serverCivilNow()).toLocaleTimeString(LANG, { hour: "2-digit", minute: "2-digit", second: "2-digit" }));
    const next = nextStart();
    const round = shownRound(opts);
    if (next) {
      setText(what, next.kind === "round" ? t("screen.countdown.round", { n: next.round ?? "" }) : t("screen.countdown.resumption"));
      setText(left, countdownText(next.at - serverCivilNow()));
      left.dataset.stage = String(stageOf(next.at - serverCivilNow(), opts.stages));
    } else {
      setText(what, round ? t("screen.clock.round", { n: round }) : "");
      setText(left, "");
      left.dataset.stage = "0";
    }
    say("");
    return null;
  };
}

/** The screens by path, with the word their heading adds. */
/** @type {Record<string, [Function, string]>} */
const SCREENS = {
  "/public": [boardsScreen, ""],
  "/public/players": [playersScreen, "screen.title.players"],
  "/public/results": [resultsScreen, "screen.title.results"],
  "/public/clock": [clockScreen, "screen.title.clock"],
};

/**
 * A hall screen: the heading, the announcement, the countdown strip, the screen, and a
 * line that says the page ("Boards 21–40 of 60") and any option that could not be used.
 */
function publicMain() {
  const { opts, notes } = screenOptions(location.search);
  const path = location.pathname.replace(/\/+$/, "") || "/public";
  const [make, word] = SCREENS[path] || SCREENS["/public"];
  document.body.classList.add("public", "screen", `theme-${opts.theme}`, `screen-${path.split("/")[2] || "boards"}`);
  document.documentElement.style.setProperty("--size", String(opts.size / 100));
  const main = /** @type {HTMLElement} */ (document.getElementById("main"));
  const title = h("h1", { class: "pubtitle" });
  const time = h("span", { class: "screen-time", id: "screen-time" });
  const announce = h("div", { class: "announce", id: "announce", role: "status", "aria-live": "polite", hidden: true });
  const strip = h("div", { class: "countdown-strip", id: "countdown", hidden: true });
  const body = h("div", { class: "screen-body" });
  const pageNote = h("span", { class: "page-note", id: "page-note" });
  const optNote = h("span", { class: "opt-note", id: "opt-note", text: notes.join(" ") });
  const conn = document.getElementById("conn");
  const foot = h("div", { class: "screen-foot" }, [pageNote, optNote, conn]);
  main.replaceChildren(h("div", { class: "screen-top" }, [title, time]), announce, strip, body, foot);
  const draw = make(body, opts, (/** @type {string} */ text) => setText(pageNote, text));
  let lastSize = "";
  /** @type {any} */
  let paging = null;
  render = () => {
    const round = shownRound(opts);
    const event = store.info && (store.info.event || (store.info.round && store.info.round.event));
    const screenWord = word ? t(word) : "";
    const heading = [event || (store.info ? store.info.hall : ""), round ? t("public.round", { n: round }) : "", screenWord].filter(Boolean).join(" — ");
    setText(title, heading);
    if (heading && document.title !== heading) document.title = heading;
    const size = `${innerWidth}x${innerHeight}`;
    paging = draw(dirty.all || size !== lastSize);
    lastSize = size;
    everySecond();
  };
  // The announcement, the countdown and the clock change with time alone.
  const everySecond = () => {
    const a = standingAnnouncement();
    const before = `${announce.hidden}${strip.hidden}${announce.offsetHeight}`;
    if (announce.hidden === !!a) announce.hidden = !a;
    setText(announce, a ? a.text : "");
    setText(time, new Date(serverCivilNow()).toLocaleTimeString(LANG, { hour: "2-digit", minute: "2-digit" }));
    const next = path === "/public/clock" ? null : nextStart();
    if (strip.hidden === !!next) strip.hidden = !next;
    if (next) {
      const leftMs = next.at - serverCivilNow();
      const at = new Date(next.at).toLocaleTimeString(LANG, { hour: "2-digit", minute: "2-digit" });
      setText(strip, `${next.kind === "round" ? t("screen.countdown.round", { n: next.round ?? "" }) : t("screen.countdown.resumption")} ${countdownText(leftMs)} · ${t("screen.countdown.at", { time: at })}`);
      strip.dataset.stage = String(stageOf(leftMs, opts.stages));
    }
    // The banner or the strip came or went: the screen's room changed, the pages fit again.
    if (`${announce.hidden}${strip.hidden}${announce.offsetHeight}` !== before) { dirty.all = true; renderSoon(); }
    if (path === "/public/clock") draw(false);
  };
  setInterval(() => {
    everySecond();
    if (paging && paging.due()) { dirty.all = true; renderSoon(); }
  }, 250);
  addEventListener("resize", () => { dirty.all = true; renderSoon(); });
  fetchHallTime();
  setInterval(fetchHallTime, 600000);
  render();
}
