//! Idempotent transactions: a command's first reply, kept (in memory and in the journal)
//! by sender and transaction id, so that the same command sent again — a retry, a QoS 1
//! redelivery, a replay within the signature's time window — gets that reply again and
//! is not applied twice.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use tokio::sync::oneshot;

use super::Outbox;
use super::refusal::Refusal;
use crate::store::{JournalHandle, Record};

/// Replies remembered at most; the oldest are forgotten first (a day of a 1000-board
/// hall's commands is far fewer).
const KEEP: usize = 200_000;

/// Who and which transaction.
pub type Key = (String, String);

/// Where a command's reply goes: its `response` topic (MQTT), or the web request that
/// sent it (which still names the topic: the journal records it, and the reply is also
/// published there, so a program watching the topic sees every answer, whatever the door).
#[derive(Debug)]
pub enum ReplyTo {
    Topic(String),
    Asker {
        topic: String,
        tx: oneshot::Sender<Vec<u8>>,
    },
}

impl ReplyTo {
    pub fn topic(&self) -> &str {
        match self {
            ReplyTo::Topic(t) | ReplyTo::Asker { topic: t, .. } => t,
        }
    }

    /// The reply, as the bytes MQTT would carry.
    pub fn send(self, outbox: &dyn Outbox, bytes: Vec<u8>) {
        match self {
            ReplyTo::Topic(topic) => outbox.message(topic, bytes),
            ReplyTo::Asker { topic, tx } => {
                outbox.message(topic, bytes.clone());
                // An asker that gave up (its request was cancelled) needs no answer.
                let _ = tx.send(bytes);
            }
        }
    }
}

enum Answer {
    /// Being applied; these asked again meanwhile and get the reply too.
    Pending {
        digest: String,
        waiting: Vec<ReplyTo>,
    },
    Done {
        digest: String,
        response: Vec<u8>,
    },
}

/// What to do with a command, given its transaction; the asker comes back unless the
/// reply will reach it anyway.
#[derive(Debug)]
pub enum Claim {
    /// Never seen: apply it.
    New(ReplyTo),
    /// The same command is being applied: its reply will come to this asker too.
    InFlight,
    /// The same command was answered: this is the reply, again.
    Repeat(Vec<u8>, ReplyTo),
    /// The transaction id was used for another command.
    Reused(ReplyTo),
}

#[derive(Default)]
struct Table {
    map: HashMap<Key, Answer>,
    order: VecDeque<Key>,
}

/// Shared by the coordinator and the tasks that answer board commands.
#[derive(Clone, Default)]
pub struct Answers(Arc<Mutex<Table>>);

impl Answers {
    /// From the journal's `answered` records.
    pub fn recovered(records: &[Record]) -> Answers {
        let answers = Answers::default();
        for r in records {
            if let Record::Answered {
                arbiter,
                transaction,
                digest,
                response,
                ..
            } = r
            {
                answers.insert(
                    (arbiter.clone(), transaction.clone()),
                    Answer::Done {
                        digest: digest.clone(),
                        response: response.to_string().into_bytes(),
                    },
                );
            }
        }
        answers
    }

    fn insert(&self, key: Key, answer: Answer) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if t.map.insert(key.clone(), answer).is_none() {
            t.order.push_back(key);
        }
        while t.order.len() > KEEP {
            if let Some(old) = t.order.pop_front() {
                t.map.remove(&old);
            }
        }
    }

    /// Look the transaction up; a new one is marked as being applied.
    pub fn claim(&self, key: &Key, digest: &Digest, reply_to: ReplyTo) -> Claim {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match t.map.get_mut(key) {
            None => {
                drop(t);
                self.insert(
                    key.clone(),
                    Answer::Pending {
                        digest: digest.current.clone(),
                        waiting: Vec::new(),
                    },
                );
                Claim::New(reply_to)
            }
            Some(Answer::Pending { digest: d, .. } | Answer::Done { digest: d, .. })
                if !digest.matches(d) =>
            {
                Claim::Reused(reply_to)
            }
            Some(Answer::Pending { waiting, .. }) => {
                waiting.push(reply_to);
                Claim::InFlight
            }
            Some(Answer::Done { response, .. }) => Claim::Repeat(response.clone(), reply_to),
        }
    }

    /// The reply is out: remember it; who asked meanwhile.
    fn done(&self, key: &Key, response: Vec<u8>) -> Vec<ReplyTo> {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(entry) = t.map.get_mut(key) else {
            return Vec::new();
        };
        let (digest, waiting) = match std::mem::replace(
            entry,
            Answer::Done {
                digest: String::new(),
                response: Vec::new(),
            },
        ) {
            Answer::Pending { digest, waiting } => (digest, waiting),
            Answer::Done { digest, .. } => (digest, Vec::new()),
        };
        *entry = Answer::Done { digest, response };
        waiting
    }

    /// Forget a transaction's answer: it may be applied when sent again.
    fn forget(&self, key: &Key) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if t.map.remove(key).is_some() {
            // Linear, but only for a disk that refuses writes, never on the common path.
            t.order.retain(|k| k != key);
        }
    }

    fn digest_of(&self, key: &Key) -> String {
        let t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match t.map.get(key) {
            Some(Answer::Pending { digest, .. } | Answer::Done { digest, .. }) => digest.clone(),
            None => String::new(),
        }
    }
}

/// `response` / `board/<b>/response`: the answer to a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsePayload {
    pub transaction: String,
    pub action: String,
    pub status: ResponseStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The kind of error, for programs (`unknown_board`, `not_your_turn`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The refusal as data (docs/MQTT-API.md, "Message codes"): finer than `error` (which
    /// stays the kind a program branches on), the code a page shows the refusal's words
    /// by, in its reader's language, with `params`. Absent on `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
    /// The node (hall server) that answers (issue 23): a hall command is answered by
    /// every node, each for its own boards, so a client tells the answers apart by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// A hall command's boards on this node: those it was applied to (`ok`), or those it
    /// was for when it failed here (`error`). Absent for board commands and requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boards: Option<Vec<String>>,
    /// A dashboard's hall command in a hall of several nodes: every node's own answer
    /// (never published on MQTT, where each node answers for itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<ResponsePayload>>,
    /// A `start_round` with a TRF: the lines of the file the reader skipped, each with its
    /// line number, as `hallclock trf` and the dashboard's preview say them. The round
    /// was read without them (a pairing program skips them too). Absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseStatus {
    Ok,
    Error,
}

/// What a transaction is remembered by: the topic and the command, without `ts` (when it
/// was signed) and `sig`, its keys in order. A client that re-signs its retry sends other
/// bytes for the same command; this is the same for both.
#[derive(Debug, Clone)]
pub struct Digest {
    /// `v2:` and the hex SHA-256 of the topic and the command's canonical JSON.
    pub current: String,
    /// The digest before v2 (the command's bytes as sent), for answers journaled by an
    /// older version: a byte-identical resend of one still gets its first reply.
    legacy: String,
}

impl Digest {
    fn matches(&self, stored: &str) -> bool {
        stored == self.current || (!stored.starts_with(DIGEST_V2) && stored == self.legacy)
    }
}

const DIGEST_V2: &str = "v2:";

/// The digest of `command` (the command's JSON, as admitted) on `topic`.
pub fn digest(topic: &str, command: &[u8]) -> Digest {
    let hash = |body: &[u8]| {
        let mut h = Sha256::new();
        h.update(topic.as_bytes());
        h.update(b"\n");
        h.update(body);
        hex(&h.finalize())
    };
    let canonical = match serde_json::from_slice::<Value>(command) {
        Ok(Value::Object(mut o)) => {
            o.remove("ts");
            o.remove("sig");
            let mut out = String::new();
            canonical_json(&Value::Object(o), &mut out);
            out.into_bytes()
        }
        // Not an object: it never gets this far (the parser refuses it); keep the bytes.
        _ => command.to_vec(),
    };
    Digest {
        current: format!("{DIGEST_V2}{}", hash(&canonical)),
        legacy: hash(command),
    }
}

/// JSON with every object's keys sorted, so the key order a client happens to write does
/// not make a resend another command.
fn canonical_json(v: &Value, out: &mut String) {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical_json(&o[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(e, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The response payload of a command's outcome.
pub fn response(transaction: &str, action: &str, r: &Result<(), Refusal>) -> ResponsePayload {
    let (status, reason, error, said) = match r {
        Ok(()) => (ResponseStatus::Ok, None, None, None),
        Err(e) => (
            ResponseStatus::Error,
            Some(e.to_string()),
            Some(e.code()),
            Some(e.said()),
        ),
    };
    let (code, params) = said.unzip();
    ResponsePayload {
        transaction: transaction.to_string(),
        action: action.to_string(),
        status,
        reason,
        error,
        code,
        params,
        node: None,
        boards: None,
        nodes: None,
        warnings: None,
    }
}

/// How a claimed command's reply goes out: journaled first (so a restart still knows
/// it), then published to the asker and to whoever asked again meanwhile.
#[derive(Clone)]
pub struct Replier {
    pub answers: Answers,
    /// This node's name, in every answer it gives.
    pub node: String,
    pub journal: JournalHandle,
    pub outbox: Arc<dyn Outbox>,
}

impl std::fmt::Debug for Replier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Replier")
    }
}

impl Replier {
    /// `payload` with this node's name.
    pub fn stamp(&self, mut payload: ResponsePayload) -> ResponsePayload {
        payload.node = Some(self.node.clone());
        payload
    }

    pub async fn reply(&self, key: Key, to: ReplyTo, payload: ResponsePayload) {
        let payload = self.stamp(payload);
        let not_stored = payload.error.as_deref() == Some(STORAGE);
        let record = self.record(&key, to.topic(), &payload);
        let Record::Answered { response, .. } = &record else {
            return;
        };
        let bytes = response.to_string().into_bytes();
        if let Err(e) = self.journal.append(vec![record]).await {
            if payload.status == ResponseStatus::Ok {
                // Only commands whose answer is not stored with their effect (issue 36:
                // a board's rules commands are, see `PreparedAnswer`) get here applied.
                tracing::error!(
                    "the reply to transaction {:?} is not journaled ({e}): sent again after a restart, it would be applied again",
                    key.1
                );
            } else {
                tracing::warn!(
                    "the refusal of transaction {:?} is not journaled ({e}); nothing was applied",
                    key.1
                );
            }
        }
        self.deliver(&key, to, bytes, not_stored);
    }

    /// The `answered` record of `payload` (stamped) for the transaction `key`.
    fn record(&self, key: &Key, topic: &str, payload: &ResponsePayload) -> Record {
        Record::Answered {
            arbiter: key.0.clone(),
            transaction: key.1.clone(),
            digest: self.answers.digest_of(key),
            topic: topic.to_string(),
            response: serde_json::to_value(payload).unwrap_or_default(),
        }
    }

    /// Publish the reply to the asker and to whoever asked again meanwhile. A command
    /// refused because it could not be stored is not remembered: nothing of it was applied,
    /// and the same transaction sent again once there is room must be applied then.
    fn deliver(&self, key: &Key, to: ReplyTo, bytes: Vec<u8>, forget: bool) {
        let waiting = self.answers.done(key, bytes.clone());
        if forget {
            self.answers.forget(key);
        }
        to.send(self.outbox.as_ref(), bytes.clone());
        for t in waiting {
            t.send(self.outbox.as_ref(), bytes.clone());
        }
    }

    /// The `ok` answer of a claimed transaction, prepared before the command is applied so
    /// that whoever applies it stores it in the same journal batch as the command's effect.
    pub fn prepare_ok(
        &self,
        key: &Key,
        topic: &str,
        transaction: &str,
        action: &str,
    ) -> PreparedAnswer {
        let payload = self.stamp(response(transaction, action, &Ok(())));
        PreparedAnswer {
            record: self.record(key, topic, &payload),
            stored: Arc::default(),
        }
    }

    /// Publish the prepared `ok` answer, which the command's batch has stored already.
    pub fn reply_prepared(&self, key: &Key, to: ReplyTo, prepared: &PreparedAnswer) {
        if let Record::Answered { response, .. } = &prepared.record {
            self.deliver(key, to, response.to_string().into_bytes(), false);
        }
    }
}

/// The code of every refusal about the disk (`Refusal::code`).
const STORAGE: &str = "storage";

/// A command's `ok` answer as an `answered` record, handed with the command to whoever
/// applies it (a board actor), so that its effect and its answer are one journal batch:
/// both stored, or neither and the command refused `storage` (issue 36). Stored separately,
/// an `ok` whose record failed to be written would be applied again by a resend after a
/// restart.
#[derive(Debug, Clone)]
pub struct PreparedAnswer {
    pub record: Record,
    stored: Arc<std::sync::atomic::AtomicBool>,
}

impl PreparedAnswer {
    /// The record is on disk with the command's effect.
    pub fn mark_stored(&self) {
        self.stored
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// The command's action, as its answer names it.
    pub fn action(&self) -> String {
        match &self.record {
            Record::Answered { response, .. } => response["action"].as_str().unwrap_or("").into(),
            _ => String::new(),
        }
    }

    pub fn is_stored(&self) -> bool {
        self.stored.load(std::sync::atomic::Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(command: &str) -> Digest {
        digest("hallclock/h/set", command.as_bytes())
    }

    #[test]
    fn a_transaction_is_claimed_once() {
        let a = Answers::default();
        let k = ("ia".to_string(), "t1".to_string());
        let r = || ReplyTo::Topic("r".into());
        let (d1, d2) = (d(r#"{"action":"pause"}"#), d(r#"{"action":"resume"}"#));
        assert!(matches!(a.claim(&k, &d1, r()), Claim::New(_)));
        assert!(matches!(a.claim(&k, &d1, r()), Claim::InFlight));
        assert!(matches!(a.claim(&k, &d2, r()), Claim::Reused(_)));
        let waiting = a.done(&k, b"reply".to_vec());
        assert_eq!(
            waiting.iter().map(ReplyTo::topic).collect::<Vec<_>>(),
            ["r"]
        );
        assert!(matches!(a.claim(&k, &d1, r()), Claim::Repeat(b, _) if b == b"reply"));
        assert!(matches!(a.claim(&k, &d2, r()), Claim::Reused(_)));
    }

    #[test]
    fn a_re_signed_retry_is_the_same_command() {
        let first = d(
            r#"{"transaction":"t","action":"add_time","side":"black","delta_ms":30000,"ts":1000}"#,
        );
        // Signed again later, keys in another order: the same command.
        let retry = d(
            r#"{"ts":2000,"delta_ms":30000,"action":"add_time","side":"black","transaction":"t"}"#,
        );
        assert_eq!(first.current, retry.current);
        assert!(retry.matches(&first.current));
        // `sig` is never part of what was commanded either.
        assert_eq!(first.current, d(r#"{"transaction":"t","action":"add_time","side":"black","delta_ms":30000,"sig":"ab"}"#).current);
        // Another amount is another command; so is another topic.
        let other = d(
            r#"{"transaction":"t","action":"add_time","side":"black","delta_ms":60000,"ts":1000}"#,
        );
        assert!(!other.matches(&first.current));
        let elsewhere = digest(
            "hallclock/h/board/b1/set",
            br#"{"transaction":"t","action":"add_time","side":"black","delta_ms":30000,"ts":1000}"#,
        );
        assert!(!elsewhere.matches(&first.current));
        // Nested objects are canonical too.
        assert_eq!(
            d(r#"{"resumption":{"start":1,"place":"x"}}"#).current,
            d(r#"{"resumption":{"place":"x","start":1}}"#).current
        );
        assert_ne!(
            d(r#"{"pairings":[{"board":"a"},{"board":"b"}]}"#).current,
            d(r#"{"pairings":[{"board":"b"},{"board":"a"}]}"#).current
        );
    }

    #[test]
    fn an_answer_journaled_by_an_older_version_matches_its_byte_identical_resend() {
        let bytes = r#"{"transaction":"t","action":"pause","ts":1000}"#;
        let now = d(bytes);
        // Before v2 the digest was the plain hash of the topic and the bytes.
        assert!(now.matches(&now.legacy));
        assert!(now.current.starts_with("v2:"));
        assert!(!d(r#"{"transaction":"t","action":"pause","ts":2000}"#).matches(&now.legacy));
        // A v2 digest is never compared as a legacy one.
        assert!(!now.matches("v2:00"));
    }
}
