//! Idempotent transactions: a command's first reply, kept (in memory and in the journal)
//! by sender and transaction id, so that the same command sent again — a retry, a QoS 1
//! redelivery, a replay within the signature's time window — gets that reply again and
//! is not applied twice.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::mqtt::Publisher;
use crate::mqtt::payload::{ResponsePayload, ResponseStatus};
use crate::refusal::Refusal;
use crate::store::{JournalHandle, Record};

/// Replies remembered at most; the oldest are forgotten first (a day of a 1000-board
/// hall's commands is far fewer).
const KEEP: usize = 200_000;

/// Who and which transaction.
pub type Key = (String, String);

/// Where a command's reply goes: its `response` topic (MQTT), or the web request that
/// sent it (which still names the topic, for the journal).
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
    pub fn send(self, publisher: &Publisher, bytes: Vec<u8>) {
        match self {
            ReplyTo::Topic(topic) => publisher.message(topic, bytes),
            // An asker that gave up (its request was cancelled) needs no answer.
            ReplyTo::Asker { tx, .. } => {
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
    pub fn claim(&self, key: &Key, digest: &str, reply_to: ReplyTo) -> Claim {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match t.map.get_mut(key) {
            None => {
                drop(t);
                self.insert(
                    key.clone(),
                    Answer::Pending {
                        digest: digest.into(),
                        waiting: Vec::new(),
                    },
                );
                Claim::New(reply_to)
            }
            Some(Answer::Pending { digest: d, .. } | Answer::Done { digest: d, .. })
                if d != digest =>
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

    fn digest_of(&self, key: &Key) -> String {
        let t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match t.map.get(key) {
            Some(Answer::Pending { digest, .. } | Answer::Done { digest, .. }) => digest.clone(),
            None => String::new(),
        }
    }
}

/// The response payload of a command's outcome.
pub fn response(transaction: &str, action: &str, r: &Result<(), Refusal>) -> ResponsePayload {
    let (status, reason, error) = match r {
        Ok(()) => (ResponseStatus::Ok, None, None),
        Err(e) => (ResponseStatus::Error, Some(e.to_string()), Some(e.code())),
    };
    ResponsePayload {
        transaction: transaction.to_string(),
        action: action.to_string(),
        status,
        reason,
        error,
    }
}

/// How a claimed command's reply goes out: journaled first (so a restart still knows
/// it), then published to the asker and to whoever asked again meanwhile.
#[derive(Clone)]
pub struct Replier {
    pub answers: Answers,
    pub journal: JournalHandle,
    pub publisher: Publisher,
}

impl Replier {
    pub async fn reply(&self, key: Key, to: ReplyTo, payload: ResponsePayload) {
        let response = serde_json::to_value(&payload).unwrap_or_default();
        let bytes = response.to_string().into_bytes();
        let record = Record::Answered {
            arbiter: key.0.clone(),
            transaction: key.1.clone(),
            digest: self.answers.digest_of(&key),
            topic: to.topic().to_string(),
            response,
        };
        if let Err(e) = self.journal.append(vec![record]).await {
            // The command itself is applied and journaled; only its repetition after a
            // restart is at stake.
            tracing::warn!(
                "the reply to transaction {:?} is not journaled ({e}): sent again after a restart, it would be applied again",
                key.1
            );
        }
        let waiting = self.answers.done(&key, bytes.clone());
        to.send(&self.publisher, bytes.clone());
        for t in waiting {
            t.send(&self.publisher, bytes.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transaction_is_claimed_once() {
        let a = Answers::default();
        let k = ("ia".to_string(), "t1".to_string());
        let r = || ReplyTo::Topic("r".into());
        assert!(matches!(a.claim(&k, "d1", r()), Claim::New(_)));
        assert!(matches!(a.claim(&k, "d1", r()), Claim::InFlight));
        assert!(matches!(a.claim(&k, "d2", r()), Claim::Reused(_)));
        let waiting = a.done(&k, b"reply".to_vec());
        assert_eq!(
            waiting.iter().map(ReplyTo::topic).collect::<Vec<_>>(),
            ["r"]
        );
        assert!(matches!(a.claim(&k, "d1", r()), Claim::Repeat(b, _) if b == b"reply"));
        assert!(matches!(a.claim(&k, "d2", r()), Claim::Reused(_)));
    }
}
