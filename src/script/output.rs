//! A script's output: each event, rejection and the final state, as JSON lines or as
//! readable text (`hallclock rules run --format`).

use serde_json::{Map, Value};

use crate::rules::Millis;
use crate::rules::game::Event;
use crate::rules::millis::format_instant;

/// One line of output.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Event {
        line: usize,
        event: Event,
    },
    Rejected {
        line: usize,
        at: Millis,
        input: &'static str,
        reason: String,
        kind: Value,
    },
    Final {
        view: Value,
        summary: String,
    },
}

fn render_value(key: &str, v: &Value, date: Millis) -> String {
    match v {
        Value::Number(n)
            if matches!(
                key,
                "at" | "as_of"
                    | "flagged_at"
                    | "next_deadline"
                    | "charged_to"
                    | "start"
                    | "end"
                    | "session_end"
            ) =>
        {
            n.as_i64()
                .map(|t| format_instant(Millis(t), date))
                .unwrap_or_else(|| n.to_string())
        }
        Value::Number(n) if key.ends_with("_ms") => n
            .as_i64()
            .map(|t| Millis(t).to_string())
            .unwrap_or_else(|| n.to_string()),
        Value::String(s) => s.clone(),
        // The envelope is in the JSON output; a readable line names it.
        Value::Object(o) if key == "envelope" => {
            format!("#{}", o.get("number").unwrap_or(&Value::Null))
        }
        Value::Object(o) if key == "verdict" => {
            let field = |k: &str| o.get(k).cloned().unwrap_or(Value::Null);
            match (field("verdict"), field("san"), field("reason")) {
                (Value::String(v), Value::String(san), _) => format!("{v}:{san}"),
                (Value::String(v), _, Value::String(reason)) => format!("{v}:\"{reason}\""),
                (Value::String(v), _, _) => format!("{v}:{}", field("candidates")),
                _ => Value::Object(o.clone()).to_string(),
            }
        }
        other => other.to_string(),
    }
}

impl Output {
    /// One JSON object per line; instants also given as readable times.
    pub fn to_json(&self, date: Millis) -> Value {
        let mut m = Map::new();
        match self {
            Output::Event { line, event } => {
                m.insert("line".into(), (*line).into());
                m.insert("time".into(), format_instant(event.at(), date).into());
                if let Ok(Value::Object(e)) = serde_json::to_value(event) {
                    m.extend(e);
                }
            }
            Output::Rejected {
                line,
                at,
                input,
                reason,
                kind,
            } => {
                m.insert("line".into(), (*line).into());
                m.insert("time".into(), format_instant(*at, date).into());
                m.insert("rejected".into(), (*input).into());
                m.insert("reason".into(), reason.clone().into());
                if let Some(k) = kind.get("rejection") {
                    m.insert("rejection".into(), k.clone());
                }
            }
            Output::Final { view, summary } => {
                m.insert("final".into(), view.clone());
                m.insert("summary".into(), summary.clone().into());
            }
        }
        Value::Object(m)
    }

    /// One readable line: `14:00:00.000  line 3  pressed  side=white remaining_ms=1:29:58.000`.
    pub fn to_text(&self, date: Millis) -> String {
        let fields = |v: &Value, skip: &[&str]| -> String {
            match v {
                Value::Object(o) => o
                    .iter()
                    .filter(|(k, _)| !skip.contains(&k.as_str()))
                    .map(|(k, v)| format!("{k}={}", render_value(k, v, date)))
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => String::new(),
            }
        };
        match self {
            Output::Event { line, event } => {
                let v = serde_json::to_value(event).unwrap_or(Value::Null);
                let name = v.get("event").and_then(Value::as_str).unwrap_or("?");
                format!(
                    "{}  line {line:<3} {name:<22} {}",
                    format_instant(event.at(), date),
                    fields(&v, &["event", "at"])
                )
            }
            Output::Rejected {
                line,
                at,
                input,
                reason,
                ..
            } => format!(
                "{}  line {line:<3} REJECTED {input}: {reason}",
                format_instant(*at, date)
            ),
            Output::Final { view, summary } => {
                let side = |c: &str| {
                    let s = &view[c];
                    format!(
                        "{c} {} {} moves {} period {}{}",
                        s["name"].as_str().unwrap_or(""),
                        render_value("remaining_ms", &s["display_ms"], date),
                        s["moves"],
                        s["period"],
                        if s["flagged_at"].is_null() {
                            ""
                        } else {
                            " FLAG"
                        }
                    )
                };
                let stage = match view["adjournment"]["stage"].as_str() {
                    Some(stage) => format!(" (adjournment: {stage})"),
                    None => String::new(),
                };
                format!(
                    "final at {}: {}; {} | {}; phase {}{stage}",
                    render_value("as_of", &view["as_of"], date),
                    summary,
                    side("white"),
                    side("black"),
                    view["phase"].as_str().unwrap_or("?"),
                )
            }
        }
    }
}
