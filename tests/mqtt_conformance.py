"""Every recorded MQTT message judged against docs/asyncapi.yaml with a third-party JSON Schema
validator (python-jsonschema, Draft 7: the dialect of AsyncAPI 2 schemas), for
tests/mqtt_conformance.rs.

Usage: python3 mqtt_conformance.py SPEC.json MESSAGES.jsonl
  SPEC.json      the AsyncAPI document as JSON (the test converts the YAML)
  MESSAGES.jsonl one message a line: {"topic", "retain", "qos", "payload_hex"}

A message passes when its topic matches a channel, and one message of one of that channel's
operations takes its payload (a signed envelope's `payload` also against its
`contentSchema`) with that operation's retain flag and QoS. Prints one JSON object: the
failures (each with its line's index), the number checked, and what the run covered.
"""

import json
import re
import sys

from jsonschema import Draft7Validator

spec = json.load(open(sys.argv[1]))
components = spec["components"]


def deref(node):
    """Follow local `$ref`s to the node they name."""
    while isinstance(node, dict) and "$ref" in node:
        path = node["$ref"]
        assert path.startswith("#/"), path
        target = spec
        for part in path[2:].split("/"):
            target = target[part]
        node = target
    return node


def validator_for(schema):
    # The whole document is the root resource, so `#/components/...` refs resolve in it;
    # draft-07 ignores a `$ref`'s siblings, so the root is the schema itself.
    root = dict(components=components)
    root["$ref"] = "#/__schema"
    root["__schema"] = schema
    return Draft7Validator(root)


def content_schemas(schema, out):
    """(property, contentSchema) pairs of a schema, through `allOf` and `$ref`."""
    schema = deref(schema)
    if not isinstance(schema, dict):
        return out
    for name, prop in schema.get("properties", {}).items():
        prop = deref(prop)
        if isinstance(prop, dict) and "contentSchema" in prop:
            out.append((name, prop["contentSchema"]))
    for part in schema.get("allOf", []):
        content_schemas(part, out)
    return out


channels = []
for name, channel in spec["channels"].items():
    pattern = "^" + re.sub(r"\\\{[a-zA-Z]+\\\}", "[^/]+", re.escape(name)) + "$"
    ops = []
    for kind in ("subscribe", "publish"):
        op = channel.get(kind)
        if not op:
            continue
        message = deref(op["message"])
        messages = [deref(m) for m in message["oneOf"]] if "oneOf" in message else [message]
        mqtt = op["bindings"]["mqtt"]
        for m in messages:
            payload = m["payload"]
            ops.append({
                "op": kind,
                "operationId": op["operationId"],
                "message": m["messageId"],
                "contentType": m.get("contentType", spec.get("defaultContentType")),
                "validator": validator_for(payload),
                "contents": [(p, validator_for(c)) for p, c in content_schemas(payload, [])],
                "retain": mqtt["retain"],
                "qos": mqtt["qos"],
            })
    channels.append((name, re.compile(pattern), ops))


def instance_of(raw, content_type):
    """The payload as the schema sees it, or why it cannot be read."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, f"not UTF-8: {e}"
    if content_type != "application/json" or text == "":
        # Plain text, PGN, and the empty (zero-length) messages: a string.
        return text, None
    try:
        return json.loads(text), None
    except ValueError as e:
        return None, f"not JSON: {e}"


def judge(msg):
    raw = bytes.fromhex(msg["payload_hex"])
    matching = [(n, ops) for n, rx, ops in channels if rx.match(msg["topic"])]
    if not matching:
        return None, "undeclared topic"
    if len(matching) > 1:
        return None, f"topic matches several channels: {[n for n, _ in matching]}"
    name, ops = matching[0]
    why = []
    for op in ops:
        value, problem = instance_of(raw, op["contentType"])
        if problem:
            why.append(f"{op['message']}: {problem}")
            continue
        errors = sorted(op["validator"].iter_errors(value), key=lambda e: list(e.path))
        for prop, content_validator in op["contents"]:
            try:
                inner = json.loads(value[prop])
            except (ValueError, TypeError, KeyError) as e:
                errors.append(f"{prop}: its content is not JSON ({e})")
                continue
            errors += sorted(content_validator.iter_errors(inner), key=lambda e: list(e.path))
        if errors:
            best = errors[0]
            text = best if isinstance(best, str) else f"{best.message} at {list(best.absolute_path)}"
            why.append(f"{op['message']}: {len(errors)} error(s), first: {text}"[:600])
            continue
        if op["retain"] != msg["retain"]:
            why.append(f"{op['message']}: retain {msg['retain']}, the spec says {op['retain']}")
            continue
        if op["qos"] != msg["qos"]:
            why.append(f"{op['message']}: QoS {msg['qos']}, the spec says {op['qos']}")
            continue
        return (name, op, value), None
    return None, f"channel {name}: " + " | ".join(why)


failures, checked = [], 0
covered = {"channels": set(), "messages": set(), "events": set(), "hall_events": set(),
           "alerts": set(), "errors": set(), "actions": set()}
for index, line in enumerate(open(sys.argv[2])):
    msg = json.loads(line)
    checked += 1
    ok, why = judge(msg)
    if why:
        failures.append({"index": index, "topic": msg["topic"], "retain": msg["retain"],
                         "payload": bytes.fromhex(msg["payload_hex"]).decode("utf-8", "replace")[:400],
                         "why": why})
        continue
    name, op, value = ok
    covered["channels"].add(name)
    covered["messages"].add(op["message"])
    if not isinstance(value, dict):
        continue
    if op["message"] in ("boardEvent", "replayedEvent"):
        covered["events"].add(value.get("event"))
    elif op["message"] == "hallEvent":
        covered["hall_events"].add(value.get("event"))
    elif op["message"] == "alert" and "kind" in value:
        covered["alerts"].add(value["kind"])
        if value.get("error"):
            covered["errors"].add(value["error"])
    elif op["message"] in ("hallResponse", "boardResponse"):
        if value.get("error"):
            covered["errors"].add(value["error"])
        if value.get("action"):
            covered["actions"].add(value["action"])

print(json.dumps({
    "checked": checked,
    "failed": len(failures),
    "failures": failures,
    "covered": {k: sorted(v) for k, v in covered.items()},
}))
