// @ts-check
// One SVG board drawn from a FEN. The squares are made once; an update touches only the
// squares whose piece changed (the idea of chessground's render, none of its code).
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
/** @type {Record<string, string>} */
const GLYPHS = {
  K: "\u2654", Q: "\u2655", R: "\u2656", B: "\u2657", N: "\u2658", P: "\u2659",
  k: "\u265A", q: "\u265B", r: "\u265C", b: "\u265D", n: "\u265E", p: "\u265F",
};

/**
 * The 64 squares of a FEN's placement, a8 first; "" for empty. null when unreadable.
 * @param {string} fen
 * @returns {string[] | null}
 */
function fenSquares(fen) {
  const placement = (fen || "").split(" ")[0];
  const rows = placement.split("/");
  if (rows.length !== 8) return null;
  /** @type {string[]} */
  const out = [];
  for (const row of rows) {
    for (const ch of row) {
      if (ch >= "1" && ch <= "8") {
        for (let i = 0; i < Number(ch); i++) out.push("");
      } else if (GLYPHS[ch]) {
        out.push(ch);
      } else {
        return null;
      }
    }
  }
  return out.length === 64 ? out : null;
}

/**
 * @param {string} name
 * @param {Record<string, string|number>} attrs
 */
function svgEl(name, attrs) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** The diagram's name in the page's language (app.js's `t`, loaded after this file). */
function defaultLabel() {
  const t = /** @type {any} */ (window).t;
  return typeof t === "function" ? t("board.diagram") : "Board diagram";
}

/**
 * A board diagram. `update(fen, lastUci)` redraws what changed.
 * @param {{flipped?: boolean, label?: string}} [opts]
 */
function createBoard(opts) {
  const flipped = !!(opts && opts.flipped);
  // An image needs a name for a screen reader; the moves are in the page as text.
  const svg = /** @type {SVGSVGElement} */ (svgEl("svg", { viewBox: "0 0 80 80", class: "board", role: "img", "aria-label": (opts && opts.label) || defaultLabel() }));
  /** @type {SVGTextElement[]} */
  const pieces = [];
  /** @type {SVGRectElement[]} */
  const marks = [];
  for (let i = 0; i < 64; i++) {
    const file = i % 8, rank = 7 - Math.floor(i / 8);
    const x = (flipped ? 7 - file : file) * 10, y = (flipped ? rank : 7 - rank) * 10;
    svg.appendChild(svgEl("rect", { x, y, width: 10, height: 10, class: (file + rank) % 2 ? "light" : "dark" }));
    const mark = svgEl("rect", { x, y, width: 10, height: 10, class: "hl", visibility: "hidden" });
    svg.appendChild(mark);
    marks.push(/** @type {SVGRectElement} */ (mark));
    const t = svgEl("text", { x: x + 5, y: y + 5.6, class: "piece" });
    t.setAttribute("data-square", "abcdefgh"[file] + (rank + 1));
    svg.appendChild(t);
    pieces.push(/** @type {SVGTextElement} */ (t));
    if ((flipped ? file === 7 : file === 0)) {
      const c = svgEl("text", { x: x + 0.4, y: y + 2.4, class: "coord" });
      c.textContent = String(rank + 1);
      svg.appendChild(c);
    }
    if ((flipped ? rank === 7 : rank === 0)) {
      const c = svgEl("text", { x: x + 8.2, y: y + 9.6, class: "coord" });
      c.textContent = "abcdefgh"[file];
      svg.appendChild(c);
    }
  }
  // The move a confirmation is about (a sealed move before it is sealed): an arrow from
  // the moving piece's square to where it goes, hidden otherwise.
  const arrow = svgEl("g", { class: "arrow", visibility: "hidden" });
  const shaft = svgEl("line", { x1: 0, y1: 0, x2: 0, y2: 0 });
  const head = svgEl("polygon", { points: "" });
  arrow.append(shaft, head);
  svg.appendChild(arrow);
  /** @type {string[]} */
  let shown = new Array(64).fill("");
  /** @type {number[]} */
  let lit = [];

  /** @param {string} sq */
  function index(sq) {
    const f = sq.charCodeAt(0) - 97, r = sq.charCodeAt(1) - 49;
    return f >= 0 && f < 8 && r >= 0 && r < 8 ? (7 - r) * 8 + f : -1;
  }

  /** The centre of a square in the diagram's coordinates. @param {string} sq */
  function centre(sq) {
    const f = sq.charCodeAt(0) - 97, r = sq.charCodeAt(1) - 49;
    return { x: (flipped ? 7 - f : f) * 10 + 5, y: (flipped ? r : 7 - r) * 10 + 5 };
  }

  return {
    svg,
    /**
     * Show an arrow from `from` to `to` (squares like "d1"), or hide it (null).
     * @param {string | null} from @param {string | null} [to]
     */
    arrow(from, to) {
      if (!from || !to || index(from) < 0 || index(to) < 0) { arrow.setAttribute("visibility", "hidden"); return; }
      const a = centre(from), b = centre(to);
      const len = Math.hypot(b.x - a.x, b.y - a.y) || 1;
      const ux = (b.x - a.x) / len, uy = (b.y - a.y) / len;
      // The shaft stops where the head begins; the head's tip is at the target's centre.
      const bx = b.x - ux * 3.2, by = b.y - uy * 3.2;
      for (const [k, v] of Object.entries({ x1: a.x, y1: a.y, x2: bx, y2: by })) shaft.setAttribute(k, v.toFixed(2));
      const px = -uy * 2, py = ux * 2;
      head.setAttribute("points", [[b.x, b.y], [bx + px, by + py], [bx - px, by - py]].map(([x, y]) => `${x.toFixed(2)},${y.toFixed(2)}`).join(" "));
      arrow.setAttribute("visibility", "visible");
    },
    /**
     * @param {string | null | undefined} fen
     * @param {string | null | undefined} lastUci
     */
    update(fen, lastUci) {
      const squares = fenSquares(fen || "") || new Array(64).fill("");
      for (let i = 0; i < 64; i++) {
        if (squares[i] !== shown[i]) {
          pieces[i].textContent = squares[i] ? GLYPHS[squares[i]] : "";
          pieces[i].setAttribute("data-piece", squares[i]);
        }
      }
      shown = squares;
      for (const i of lit) marks[i].setAttribute("visibility", "hidden");
      lit = [];
      if (lastUci && lastUci.length >= 4) {
        for (const sq of [lastUci.slice(0, 2), lastUci.slice(2, 4)]) {
          const i = index(sq);
          if (i >= 0) { marks[i].setAttribute("visibility", "visible"); lit.push(i); }
        }
      }
    },
  };
}

// For app.js (plain scripts, no modules: nothing to build).
/** @type {any} */ (window).HallBoard = { createBoard, fenSquares };
