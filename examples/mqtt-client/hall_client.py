#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A hallclock client written from the documents alone (docs/MQTT-API.md, docs/asyncapi.yaml,
docs/SECURITY.md), with paho-mqtt: the proof that an integrator needs nothing else.

It subscribes to the hall, rebuilds the hall's picture from the retained messages (the
nodes and their boards, each board's availability and state, the standing alerts, the
session), optionally signs one command as docs/SECURITY.md says, publishes it, waits for
its answers (a board command: the board's node; a hall command: every online node) and
prints one JSON object: {"picture": ..., "responses": [...], "done": true|false}.

    hall_client.py --host 127.0.0.1 --port 1883 --hall hall-a \\
        [--arbiter ia-schmid --key-file ia-schmid.key [--board board-007] 'COMMAND']

The command is the JSON of docs/MQTT-API.md's examples without `transaction` and `ts`
(added here). Exit 0 when every answer is `ok` (or no command was given), 1 otherwise, 2
when the hall did not answer in time.
"""

import argparse
import hashlib
import hmac
import json
import sys
import threading
import time
import uuid

import paho.mqtt.client as mqtt


class Hall:
    """The hall as its retained topics (and the live messages after them) describe it."""

    def __init__(self, hall):
        self.prefix = f"hallclock/{hall}/"
        self.nodes = {}     # node -> its status (state, boards, version, boot, ...)
        self.boards = {}    # board -> {"availability": ..., "state": {...}}
        self.alerts = {}    # alert id -> the alert, while it stands
        self.sessions = {}  # node -> its session view
        self.responses = []
        self.lock = threading.Condition()
        self.last_retained = time.monotonic()

    def board(self, b):
        return self.boards.setdefault(b, {"availability": None, "state": None})

    def on_message(self, topic, payload, retained):
        rest = topic[len(self.prefix):].split("/")
        text = payload.decode("utf-8", "replace")
        with self.lock:
            if retained:
                self.last_retained = time.monotonic()
            if rest[0] == "node" and len(rest) == 3 and rest[2] == "status":
                self.nodes[rest[1]] = json.loads(text)
            elif rest[0] == "node" and len(rest) == 3 and rest[2] == "session":
                self.sessions[rest[1]] = json.loads(text)
            elif rest[0] == "board" and len(rest) == 3 and rest[2] == "availability":
                self.board(rest[1])["availability"] = text
            elif rest[0] == "board" and len(rest) == 3 and rest[2] == "state":
                self.board(rest[1])["state"] = json.loads(text)
            elif rest[0] == "alert" and len(rest) == 2:
                # An alert, or its clear: the writer's {"cleared": true, ...}, or an empty
                # message (by hand, or an older version).
                alert = json.loads(text) if text else None
                if alert is None or alert.get("cleared"):
                    self.alerts.pop(rest[1], None)
                else:
                    self.alerts[rest[1]] = alert
            elif rest[-1] == "response" and text:
                self.responses.append(json.loads(text))
            self.lock.notify_all()

    def online_nodes(self):
        return sorted(n for n, s in self.nodes.items() if s.get("state") == "online")

    def picture(self):
        """What a hall screen shows: per board its players, phase and clocks."""
        with self.lock:
            boards = {}
            for b, v in sorted(self.boards.items()):
                s = v["state"] or {}
                side = lambda c: (s.get(c) or {})
                boards[b] = {
                    "availability": v["availability"],
                    "phase": s.get("phase"),
                    "round": s.get("round"),
                    "white": side("white").get("name"),
                    "black": side("black").get("name"),
                    "white_ms": side("white").get("remaining_ms"),
                    "black_ms": side("black").get("remaining_ms"),
                    "running": s.get("running"),
                    "result": (s.get("result") or {}).get("score"),
                    "node": next((n for n, st in self.nodes.items() if b in st.get("boards", [])), None),
                }
            return {
                "nodes": {n: s.get("state") for n, s in sorted(self.nodes.items())},
                "boards": boards,
                "alerts": sorted(self.alerts),
                "all_sealed": any(s.get("all_sealed") for s in self.sessions.values()),
            }


def sign(key, topic, command, arbiter):
    """docs/SECURITY.md, docs/MQTT-API.md "Signing": HMAC-SHA256 of topic, "\\n", payload."""
    payload = json.dumps(command)
    sig = hmac.new(key, (topic + "\n" + payload).encode("utf-8"), hashlib.sha256).hexdigest()
    return json.dumps({"arbiter": arbiter, "payload": payload, "sig": sig})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=1883)
    ap.add_argument("--hall", required=True)
    ap.add_argument("--arbiter")
    ap.add_argument("--key-file")
    ap.add_argument("--board", help="a board command for this board; without it, a hall command")
    ap.add_argument("--wait", type=float, default=15.0, help="seconds to wait for the answers")
    ap.add_argument("command", nargs="?")
    args = ap.parse_args()

    hall = Hall(args.hall)
    client_id = "example-" + uuid.uuid4().hex[:12]
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
    subscribed = threading.Event()
    client.on_connect = lambda c, u, f, rc, p: c.subscribe(hall.prefix + "#", qos=1)
    client.on_subscribe = lambda c, u, mid, rcs, p: subscribed.set()
    client.on_message = lambda c, u, m: hall.on_message(m.topic, m.payload, m.retain)
    client.connect(args.host, args.port, keepalive=30)
    client.loop_start()
    if not subscribed.wait(args.wait):
        print(json.dumps({"error": "no subscription acknowledgement"}))
        return 2
    # The broker sends every retained message right after the subscription; the picture
    # is whole once they stop coming.
    deadline = time.monotonic() + args.wait
    while time.monotonic() < deadline:
        with hall.lock:
            quiet = time.monotonic() - hall.last_retained
        if quiet > 0.5:
            break
        time.sleep(0.1)

    out = {"responses": [], "done": True}
    code = 0
    if args.command:
        if not (args.arbiter and args.key_file):
            ap.error("a command needs --arbiter and --key-file")
        key = bytes.fromhex(open(args.key_file).read().strip())
        command = json.loads(args.command)
        tx = "example-" + uuid.uuid4().hex
        command["transaction"] = tx
        command["ts"] = int(time.time() * 1000)
        topic = hall.prefix + (f"board/{args.board}/set" if args.board else "set")
        # A board command is answered by its board's node; a hall command by every online
        # node, each for its own boards: done when every one of them said ok.
        expected = 1 if args.board else max(1, len(hall.online_nodes()))
        client.publish(topic, sign(key, topic, command, args.arbiter), qos=1, retain=False)
        deadline = time.monotonic() + args.wait
        with hall.lock:
            while True:
                mine = [r for r in hall.responses if r.get("transaction") == tx]
                left = deadline - time.monotonic()
                if len(mine) >= expected or left <= 0:
                    break
                hall.lock.wait(left)
        out["responses"] = mine
        out["done"] = len(mine) >= expected and all(r.get("status") == "ok" for r in mine)
        code = 0 if out["done"] else (2 if len(mine) < expected else 1)
        time.sleep(0.5)  # the states the command caused
    out["picture"] = hall.picture()
    client.loop_stop()
    client.disconnect()
    print(json.dumps(out))
    return code


if __name__ == "__main__":
    sys.exit(main())
