//! `hallclock command`: one signed command to the hall, its response printed; exit 0 when
//! the daemon answered `ok`, 1 otherwise (refused, no answer, bad arguments). For people
//! and scripts; dashboards sign the same way (docs/MQTT-API.md, Signing).
//!
//! A hall command in a hall of several nodes (issue 23) is answered by every node, each
//! for its own boards: the client reads the nodes' retained statuses first, waits for an
//! answer from every node online when it sent, prints one line per answer, and exits 0
//! only when every one is `ok`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::Value;

use crate::intake::auth::Key;

#[derive(Debug, clap::Args)]
pub struct CommandArgs {
    /// The hall id (`hallclock/<hall>/…`).
    #[arg(long)]
    pub hall: String,
    /// A board command for this board (`board/<b>/set`); without it, a hall command.
    #[arg(long)]
    pub board: Option<String>,
    /// The account that signs.
    #[arg(long)]
    pub arbiter: String,
    /// The file with the account's key (as `hallclock arbiter add --key-file` writes it).
    #[arg(long)]
    pub key_file: PathBuf,
    /// The broker, HOST:PORT.
    #[arg(long, default_value = "localhost:1883")]
    pub broker: String,
    #[arg(long)]
    pub username: Option<String>,
    #[arg(long)]
    pub password: Option<String>,
    /// How long to wait for the response, in seconds.
    #[arg(long, default_value_t = 10)]
    pub timeout: u64,
    /// The command, JSON (`transaction` is added when absent, `ts` always).
    pub command: String,
}

pub fn run(args: CommandArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hallclock command: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(send(args)) {
        Ok(answers) => {
            for a in &answers.answers {
                println!("{a}");
            }
            let verdict = answers.verdict();
            if let Err(why) = &verdict {
                eprintln!("hallclock command: {why}");
            }
            if verdict.is_ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("hallclock command: {e}");
            ExitCode::FAILURE
        }
    }
}

/// How long the retained node statuses may take to arrive after the subscription: the
/// broker sends them at once, so this is only slack for a loaded machine.
const SETTLE: Duration = Duration::from_millis(300);

/// The answers to one command: one, or one per node for a hall command.
#[derive(Debug, Default)]
pub struct Answers {
    /// In node order.
    pub answers: Vec<Value>,
    /// Nodes that were online when the command went out and did not answer, with why.
    pub missing: Vec<(String, String)>,
}

impl Answers {
    /// `Ok` only when every answer is `ok`, every node answered, and (several nodes) at
    /// least one applied it to a board; else what went wrong, by node and board.
    pub fn verdict(&self) -> Result<(), String> {
        let mut wrong = Vec::new();
        for a in &self.answers {
            if a["status"] == "ok" {
                continue;
            }
            let node = a["node"].as_str().map(|n| format!("node {n}: "));
            let boards = boards_of(a);
            let on = if boards.is_empty() {
                String::new()
            } else {
                format!(" (boards {})", boards.join(", "))
            };
            wrong.push(format!(
                "{}{}{on}: {}",
                node.unwrap_or_default(),
                a["error"].as_str().unwrap_or("error"),
                a["reason"].as_str().unwrap_or("")
            ));
        }
        for (node, why) in &self.missing {
            wrong.push(format!("node {node}: {why}"));
        }
        if wrong.is_empty()
            && self.answers.len() > 1
            && self
                .answers
                .iter()
                .all(|a| a.get("boards").is_some() && boards_of(a).is_empty())
        {
            wrong.push("no node applied it to any board".into());
        }
        if wrong.is_empty() {
            Ok(())
        } else if self.answers.len() + self.missing.len() > 1 {
            Err(format!("partial failure: {}", wrong.join("; ")))
        } else {
            Err(wrong.join("; "))
        }
    }
}

fn boards_of(answer: &Value) -> Vec<String> {
    answer["boards"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|b| b.as_str().map(crate::intake::command::log_safe))
                .map(|b| b.to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The nodes as their retained `node/<node>/status` say, and who has answered: when the
/// command is answered in full.
#[derive(Debug, Default)]
struct Waiting {
    /// Node → online, newest status (by `boot`) first.
    nodes: BTreeMap<String, (i64, bool)>,
    /// The nodes online when the command was sent; `None` before.
    expected: Option<BTreeSet<String>>,
    answers: BTreeMap<String, Value>,
    /// An answer without a node (a daemon before issue 23): the one answer there is.
    anonymous: Option<Value>,
    went_offline: BTreeSet<String>,
}

impl Waiting {
    fn status(&mut self, node: &str, v: &Value) {
        let (Some(boot), Some(state)) = (v["boot"].as_i64(), v["state"].as_str()) else {
            return;
        };
        let online = state == "online";
        let known = self.nodes.get(node).copied();
        // An older run's last will arriving late does not hide the newer run.
        if known.is_some_and(|(b, _)| b > boot) {
            return;
        }
        self.nodes.insert(node.to_string(), (boot, online));
        if !online
            && let Some(expected) = &mut self.expected
            && expected.remove(node)
            && !self.answers.contains_key(node)
        {
            self.went_offline.insert(node.to_string());
        }
    }

    fn sent(&mut self) {
        self.expected = Some(
            self.nodes
                .iter()
                .filter(|(_, (_, online))| *online)
                .map(|(n, _)| n.clone())
                .collect(),
        );
    }

    fn answer(&mut self, v: Value) {
        match v["node"].as_str() {
            Some(node) => {
                self.answers.insert(node.to_string(), v);
            }
            None => self.anonymous = Some(v),
        }
    }

    /// Every node online at the send answered (or went offline), or a node-less daemon
    /// answered, or (no node statuses at all) any answer came.
    fn complete(&self) -> bool {
        let Some(expected) = &self.expected else {
            return false;
        };
        if self.anonymous.is_some() {
            return true;
        }
        if expected.is_empty() {
            return !self.answers.is_empty() || !self.went_offline.is_empty();
        }
        expected.iter().all(|n| self.answers.contains_key(n))
    }

    fn done(self, timed_out: Option<&str>) -> Answers {
        let mut missing: Vec<(String, String)> = self
            .went_offline
            .iter()
            .map(|n| (n.clone(), "went offline before it answered".to_string()))
            .collect();
        if let (Some(why), Some(expected)) = (timed_out, &self.expected) {
            for n in expected.iter().filter(|n| !self.answers.contains_key(*n)) {
                missing.push((n.clone(), why.to_string()));
            }
        }
        let mut answers: Vec<Value> = self.answers.into_values().collect();
        answers.extend(self.anonymous);
        Answers { answers, missing }
    }
}

async fn send(args: CommandArgs) -> Result<Answers, String> {
    let key = Key::read_file(&args.key_file).map_err(|e| e.to_string())?;
    let mut command: Value =
        serde_json::from_str(&args.command).map_err(|e| format!("the command is not JSON: {e}"))?;
    let Value::Object(fields) = &mut command else {
        return Err("the command must be a JSON object".into());
    };
    let transaction = match fields.get("transaction").and_then(Value::as_str) {
        Some(t) => t.to_string(),
        None => {
            let t = format!("cli-{}-{}", args.arbiter, crate::custody::fresh_nonce());
            fields.insert("transaction".into(), Value::from(t.clone()));
            t
        }
    };
    let (host, port) = args
        .broker
        .rsplit_once(':')
        .and_then(|(h, p)| p.parse::<u16>().ok().map(|p| (h.to_string(), p)))
        .ok_or_else(|| format!("--broker {}: expected HOST:PORT", args.broker))?;
    let base = format!("hallclock/{}", args.hall);
    let (set, response) = match &args.board {
        Some(b) => (
            format!("{base}/board/{b}/set"),
            format!("{base}/board/{b}/response"),
        ),
        None => (format!("{base}/set"), format!("{base}/response")),
    };
    // A hall command is every node's: their statuses say who must answer.
    let statuses = args
        .board
        .is_none()
        .then(|| format!("{base}/node/+/status"));
    let node_of = |topic: &str| {
        topic
            .strip_prefix(&format!("{base}/node/"))
            .and_then(|t| t.strip_suffix("/status"))
            .map(str::to_string)
    };
    let mut opts = MqttOptions::new(
        format!("hallclock-command-{}", std::process::id()),
        host,
        port,
    );
    opts.set_keep_alive(Duration::from_secs(5));
    opts.set_max_packet_size(1 << 20, 1 << 20);
    if let Some(user) = &args.username {
        opts.set_credentials(user, args.password.clone().unwrap_or_default());
    }
    let (client, mut events) = AsyncClient::new(opts, 16);
    let mut waiting = Waiting::default();
    let wait = async {
        // Subscribed: the retained statuses arrive within SETTLE, then the command goes.
        let mut send_at: Option<tokio::time::Instant> = None;
        let mut sent = false;
        loop {
            let event = match send_at.filter(|_| !sent) {
                Some(at) => tokio::time::timeout_at(at, events.poll()).await.ok(),
                None => Some(events.poll().await),
            };
            let Some(event) = event else {
                // Signed only now: `ts` is as fresh as it can be, and the response cannot
                // be missed.
                sent = true;
                waiting.sent();
                let signed = crate::intake::auth::sign_now(
                    &args.arbiter,
                    &key,
                    &set,
                    command.clone(),
                    crate::timebase::Timebase::start().now(),
                );
                client
                    .publish(&set, QoS::AtLeastOnce, false, signed)
                    .await
                    .map_err(|e| e.to_string())?;
                continue;
            };
            match event {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    let mut topics = vec![rumqttc::SubscribeFilter::new(
                        response.clone(),
                        QoS::AtLeastOnce,
                    )];
                    if let Some(s) = &statuses {
                        topics.push(rumqttc::SubscribeFilter::new(s.clone(), QoS::AtLeastOnce));
                    }
                    client
                        .subscribe_many(topics)
                        .await
                        .map_err(|e| e.to_string())?;
                }
                Ok(Event::Incoming(Packet::SubAck(_))) if send_at.is_none() => {
                    let settle = if statuses.is_some() {
                        SETTLE
                    } else {
                        Duration::ZERO
                    };
                    send_at = Some(tokio::time::Instant::now() + settle);
                }
                Ok(Event::Incoming(Packet::Publish(p))) if p.topic == response => {
                    let v: Value = serde_json::from_slice(&p.payload).unwrap_or(Value::Null);
                    if sent && v["transaction"] == transaction.as_str() {
                        waiting.answer(v);
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    if let Some(node) = node_of(&p.topic) {
                        let v: Value = serde_json::from_slice(&p.payload).unwrap_or(Value::Null);
                        waiting.status(&node, &v);
                    }
                }
                Ok(_) => {}
                Err(e) => return Err(format!("broker {}: {e}", args.broker)),
            }
            if sent && waiting.complete() {
                return Ok(());
            }
        }
    };
    let r = tokio::time::timeout(Duration::from_secs(args.timeout), wait).await;
    let _ = client.disconnect().await;
    match r {
        Ok(Ok(())) => Ok(waiting.done(None)),
        Ok(Err(e)) => Err(e),
        Err(_) => {
            let why = format!("no answer within {} s", args.timeout);
            let answers = waiting.done(Some(&why));
            if answers.answers.is_empty() && answers.missing.is_empty() {
                Err(format!(
                    "no response on {response} within {} s (is the daemon running, the hall id right?)",
                    args.timeout
                ))
            } else {
                Ok(answers)
            }
        }
    }
}
