// @ts-check
// The dashboard's feed, shared by every tab of one browser (a SharedWorker). A browser
// holds at most six HTTP/1.1 connections to a host: with one EventSource per tab, the
// seventh tab stayed blank and every tab's commands queued behind the feeds. Here one
// EventSource serves all the tabs of a browser, and a tab that opens late gets the last
// value of every retained topic at once, as the server's own snapshot would give it.
"use strict";

/** @type {MessagePort[]} */
let ports = [];
/** @type {EventSource | null} */
let source = null;
let feedUrl = "";
/** Which login the feed runs under (its CSRF token names the session). */
let session = "";
/** Retained topics' last payloads (states, alerts, info, status, session), in arrival order. */
/** @type {Map<string, string>} */
const retained = new Map();
/** The server's snapshot has been received whole: a new tab may be served from `retained`. */
let ready = false;

/** @param {any} msg */
function all(msg) {
  for (const p of ports) p.postMessage(msg);
}

/** Events are not retained: a late tab fetches a board's recent events over HTTP. */
/** @param {string} topic */
function isRetained(topic) {
  return !/\/event$/.test(topic);
}

function open() {
  ready = false;
  source = new EventSource(feedUrl);
  source.addEventListener("snapshot", () => {
    retained.clear();
    ready = false;
    all({ t: "snapshot" });
  });
  source.addEventListener("ready", () => {
    ready = true;
    all({ t: "ready" });
  });
  source.onmessage = (e) => {
    const nl = e.data.indexOf("\n");
    const topic = nl < 0 ? e.data : e.data.slice(0, nl);
    const text = nl < 0 ? "" : e.data.slice(nl + 1);
    if (isRetained(topic)) {
      // Re-inserted so the order of arrival is kept (an info before the states it names).
      retained.delete(topic);
      if (text) retained.set(topic, text);
    }
    all({ t: "msg", data: e.data });
  };
  source.onopen = () => all({ t: "open" });
  source.onerror = () => {
    const closed = !!source && source.readyState === EventSource.CLOSED;
    all({ t: "error", closed });
    // EventSource retries by itself unless the server refused it (a lost session: the
    // tabs go to the login page; one that logs in again asks for a fresh feed).
    if (closed) { source = null; ready = false; }
  };
}

/** @param {MessagePort} port */
function welcome(port) {
  if (!source) { open(); return; }
  port.postMessage({ t: "open" });
  if (!ready) return; // the snapshot on its way reaches every port
  port.postMessage({ t: "snapshot" });
  for (const [topic, text] of retained) port.postMessage({ t: "msg", data: `${topic}\n${text}` });
  port.postMessage({ t: "ready" });
}

/** @param {MessageEvent} e */
// eslint-disable-next-line no-restricted-globals
self.addEventListener("connect", (/** @type {any} */ e) => {
  /** @type {MessagePort} */
  const port = e.ports[0];
  port.onmessage = (/** @type {MessageEvent} */ m) => {
    const msg = m.data || {};
    if (msg.t === "hello") {
      feedUrl = feedUrl || String(msg.feed);
      ports.push(port);
      const who = String(msg.session || "");
      if (source && who !== session) {
        // A tab logged in anew: the feed follows the newest session (the old one is
        // gone or another arbiter's).
        source.close();
        source = null;
      }
      session = who;
      welcome(port);
    } else if (msg.t === "bye") {
      ports = ports.filter((p) => p !== port);
    } else if (msg.t === "reset") {
      // A new login (another arbiter, or after a logout): the feed follows its session.
      if (source) source.close();
      source = null;
      retained.clear();
      open();
    }
  };
  port.start();
});
