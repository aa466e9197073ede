//! A dashboard's hall command in a hall of several nodes (issue 23): the dashboard speaks
//! to this node only, but a hall command is every node's. This node signs it as the
//! logged-in arbiter (whose key the arbiters file holds, as it does on every node) and
//! publishes it on the hall's `set` topic, where every node, this one included, takes it
//! through its own intake as it would `hallclock command`'s; then it collects every node's
//! answer on `response` and gives the dashboard one: `ok` when every node said `ok`, else
//! the partial failure in words (which node, which boards), as `hallclock command` does.
//! A resend of the same transaction is signed anew; each node answers it with its first
//! answer again, so nothing is applied twice.
//!
//! A dashboard's command for a board of another node goes the same way to that board's
//! `set` topic, and its answer is that node's own, from `board/<b>/response`: every
//! dashboard of the hall acts on every board, as it shows every board.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use super::Hall;
use crate::intake::answers::{ResponsePayload, ResponseStatus};
use crate::intake::auth::Identity;

/// How long a dashboard waits for the other nodes' answers (the web itself gives up after
/// 60 s; `hallclock command`'s default is 10 s).
pub const FORWARD_WAIT: Duration = Duration::from_secs(10);

/// One forwarded command waiting for its answers.
#[derive(Debug)]
pub struct Waiting {
    action: String,
    /// A board command's board (its one node answers on its `response`); `None` for a
    /// hall command, which every node answers on the hall's.
    board: Option<String>,
    /// The nodes online when it was sent, this one included.
    expect: BTreeSet<String>,
    answers: BTreeMap<String, ResponsePayload>,
    reply: oneshot::Sender<Vec<u8>>,
    deadline: tokio::time::Instant,
}

/// The forwarded commands, by transaction (a resend waits beside the first).
#[derive(Debug, Default)]
pub struct Forwarded(BTreeMap<String, Vec<Waiting>>);

impl Hall {
    /// Send a dashboard's command on where it belongs when that is not (only) here: a
    /// hall command beside other online nodes to every node, a command for another
    /// online node's board to that node. Otherwise `payload` comes back, for the local
    /// intake to apply or answer (this node's board; a board of a node that is down, or
    /// of no node; a command that does not read as one).
    pub(super) fn send_on(
        &mut self,
        board: Option<&str>,
        payload: Vec<u8>,
        identity: &Identity,
        reply: oneshot::Sender<Vec<u8>>,
    ) -> Result<(), (Vec<u8>, oneshot::Sender<Vec<u8>>)> {
        match board {
            None if !self.nodes.online_peers().is_empty() => {
                self.forward_to_the_hall(payload, identity, reply)
            }
            Some(b) if !self.boards.contains_key(b) => match self.nodes.owner_of(b) {
                Some((node, true)) => {
                    let node = node.to_string();
                    self.forward_to_the_board_s_node(b, &node, payload, identity, reply)
                }
                _ => Err((payload, reply)),
            },
            _ => Err((payload, reply)),
        }
    }

    /// Forward a dashboard's hall command to every node, if it reads as one; otherwise
    /// hand `payload` back (the local intake then answers it: a bad command, say).
    fn forward_to_the_hall(
        &mut self,
        payload: Vec<u8>,
        identity: &Identity,
        reply: oneshot::Sender<Vec<u8>>,
    ) -> Result<(), (Vec<u8>, oneshot::Sender<Vec<u8>>)> {
        let mut expect: BTreeSet<String> = self.nodes.online_peers().into_iter().collect();
        expect.insert(self.settings.node.to_string());
        let topic = self.topics.hall_set();
        self.forward((payload, identity, reply), topic, expect, None)
    }

    /// Send a dashboard's command for `board`, another node's (`node`, online), on to that
    /// node, if it reads as a command; otherwise hand `payload` back (the local intake
    /// then answers it).
    fn forward_to_the_board_s_node(
        &mut self,
        board: &str,
        node: &str,
        payload: Vec<u8>,
        identity: &Identity,
        reply: oneshot::Sender<Vec<u8>>,
    ) -> Result<(), (Vec<u8>, oneshot::Sender<Vec<u8>>)> {
        let topic = self.topics.board_set(board);
        let expect = BTreeSet::from([node.to_string()]);
        self.forward(
            (payload, identity, reply),
            topic,
            expect,
            Some(board.to_string()),
        )
    }

    /// Sign `payload` as the session's arbiter for `topic`, publish it, and wait for the
    /// answers of `expect` (`board`: a board command's, answered on its `response`).
    fn forward(
        &mut self,
        (payload, identity, reply): (Vec<u8>, &Identity, oneshot::Sender<Vec<u8>>),
        topic: String,
        expect: BTreeSet<String>,
        board: Option<String>,
    ) -> Result<(), (Vec<u8>, oneshot::Sender<Vec<u8>>)> {
        let Ok(Value::Object(mut command)) = serde_json::from_slice::<Value>(&payload) else {
            return Err((payload, reply));
        };
        let (Some(transaction), Some(action)) = (
            command
                .get("transaction")
                .and_then(Value::as_str)
                .map(str::to_string),
            command
                .get("action")
                .and_then(Value::as_str)
                .map(str::to_string),
        ) else {
            return Err((payload, reply));
        };
        // Who sends it is the session's account, as for a command applied here.
        command.insert("arbiter".into(), Value::from(identity.id.clone()));
        let now = self.timebase.civil();
        let Some(signed) = self
            .intake
            .sign_for(&identity.id, &topic, Value::Object(command), now)
        else {
            return Err((payload, reply));
        };
        match &board {
            None => tracing::info!(
                transaction = %crate::intake::command::log_safe(&transaction),
                nodes = expect.len(),
                "dashboard hall command sent to every node"
            ),
            Some(b) => tracing::info!(
                transaction = %crate::intake::command::log_safe(&transaction),
                board = %crate::intake::command::log_safe(b),
                node = ?expect,
                "dashboard command sent to the board's node"
            ),
        }
        self.forwarded
            .0
            .entry(transaction)
            .or_default()
            .push(Waiting {
                action,
                board,
                expect,
                answers: BTreeMap::new(),
                reply,
                deadline: tokio::time::Instant::now() + FORWARD_WAIT,
            });
        self.publisher.message(topic, signed);
        Ok(())
    }

    /// A node's answer on the hall's `response` topic (every node's, this one's too).
    pub(super) fn on_hall_response(&mut self, payload: &[u8]) {
        self.on_response(None, payload);
    }

    /// A node's answer on `board/<board>/response` (every board's, this node's too).
    pub(super) fn on_board_response(&mut self, board: &str, payload: &[u8]) {
        self.on_response(Some(board), payload);
    }

    /// An answer on the hall's `response` (`board` `None`) or on a board's, to the
    /// forwarded commands of its transaction that went there.
    fn on_response(&mut self, board: Option<&str>, payload: &[u8]) {
        let Ok(answer) = serde_json::from_slice::<ResponsePayload>(payload) else {
            return;
        };
        let Some(node) = answer.node.clone() else {
            return;
        };
        let Some(waiting) = self.forwarded.0.get_mut(&answer.transaction) else {
            return;
        };
        for w in waiting.iter_mut() {
            if w.board.as_deref() == board && w.expect.contains(&node) {
                w.answers
                    .entry(node.clone())
                    .or_insert_with(|| answer.clone());
            }
        }
        self.settle_forwarded(false);
    }

    /// Answer every forwarded command that has all its answers (or, with `timed_out`
    /// checks, whose wait is over).
    pub(super) fn settle_forwarded(&mut self, timed_out: bool) {
        let now = tokio::time::Instant::now();
        let this = self.settings.node.to_string();
        self.forwarded.0.retain(|transaction, waiting| {
            let (done, open): (Vec<Waiting>, Vec<Waiting>) =
                std::mem::take(waiting).into_iter().partition(|w| {
                    w.expect.iter().all(|n| w.answers.contains_key(n))
                        || (timed_out && now >= w.deadline)
                });
            for w in done {
                let combined = combine(transaction, &this, &w);
                let _ = w
                    .reply
                    .send(serde_json::to_vec(&combined).unwrap_or_default());
            }
            *waiting = open;
            !waiting.is_empty()
        });
    }
}

/// One answer for the dashboard from every node's. A board command's is its node's own
/// answer as it gave it, or, when none came in time, the refusal that says so.
fn combine(transaction: &str, this: &str, w: &Waiting) -> ResponsePayload {
    if let Some(board) = &w.board {
        if let Some(answer) = w.answers.values().next() {
            return answer.clone();
        }
        let mut silent = crate::intake::answers::response(
            transaction,
            &w.action,
            &Err(crate::intake::refusal::Refusal::BoardNodeSilent {
                board: board.clone(),
                node: w.expect.iter().cloned().collect::<Vec<_>>().join(", "),
                secs: FORWARD_WAIT.as_secs(),
            }),
        );
        silent.node = Some(this.to_string());
        return silent;
    }
    let missing: Vec<&String> = w
        .expect
        .iter()
        .filter(|n| !w.answers.contains_key(*n))
        .collect();
    let failed: Vec<&ResponsePayload> = w
        .answers
        .values()
        .filter(|a| a.status != ResponseStatus::Ok)
        .collect();
    let boards: Vec<String> = w
        .answers
        .values()
        .flat_map(|a| a.boards.iter().flatten().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // Every node said `ok` for none of its boards (a node alone refuses that itself,
    // `no_game`, and is never waited for here): together they must refuse it too, or the
    // dashboard says "done" for a pause that paused nothing (`hallclock command`'s
    // verdict says the same).
    let nowhere = missing.is_empty()
        && failed.is_empty()
        && w.answers.values().all(|a| a.boards.is_some())
        && boards.is_empty();
    if nowhere {
        let mut refused = crate::intake::answers::response(
            transaction,
            &w.action,
            &Err(crate::intake::refusal::Refusal::NoBoardOfAnyNode {
                action: w.action.clone(),
                nodes: w.answers.keys().cloned().collect::<Vec<_>>().join(", "),
            }),
        );
        refused.node = Some(this.to_string());
        refused.boards = Some(Vec::new());
        refused.nodes = Some(w.answers.values().cloned().collect());
        return refused;
    }
    let ok = missing.is_empty() && failed.is_empty();
    let mut parts: Vec<String> = failed
        .iter()
        .map(|a| {
            let boards = a.boards.as_deref().unwrap_or_default();
            format!(
                "node {}: {}{}: {}",
                a.node.as_deref().unwrap_or("?"),
                a.error.as_deref().unwrap_or("error"),
                if boards.is_empty() {
                    String::new()
                } else {
                    format!(" (boards {})", boards.join(", "))
                },
                a.reason.as_deref().unwrap_or("")
            )
        })
        .collect();
    parts.extend(missing.iter().map(|n| {
        format!(
            "node {n} did not answer within {} s",
            FORWARD_WAIT.as_secs()
        )
    }));
    let applied: Vec<String> = w
        .answers
        .values()
        .filter(|a| a.status == ResponseStatus::Ok)
        .map(|a| a.node.clone().unwrap_or_default())
        .collect();
    ResponsePayload {
        transaction: transaction.to_string(),
        action: w.action.clone(),
        status: if ok {
            ResponseStatus::Ok
        } else {
            ResponseStatus::Error
        },
        reason: (!ok).then(|| {
            let done = if applied.is_empty() {
                String::new()
            } else {
                format!(" ({} said ok)", applied.join(", "))
            };
            let kind = if applied.is_empty() && missing.is_empty() {
                "refused by every node"
            } else {
                "partial failure"
            };
            format!("{kind}{done}: {}", parts.join("; "))
        }),
        // The failing node's own code, so the dashboard's status follows it; a node
        // that did not answer is the hall's state saying no (409).
        error: (!ok).then(|| {
            failed
                .first()
                .and_then(|a| a.error.clone())
                .unwrap_or_else(|| "no_answer".to_string())
        }),
        code: None,
        params: None,
        node: Some(this.to_string()),
        boards: Some(boards),
        nodes: Some(w.answers.values().cloned().collect()),
        // Every node read the same file: its skipped lines once.
        warnings: {
            let mut seen = BTreeSet::new();
            let lines: Vec<String> = w
                .answers
                .values()
                .flat_map(|a| a.warnings.iter().flatten())
                .filter(|l| seen.insert(l.as_str()))
                .cloned()
                .collect();
            (!lines.is_empty()).then_some(lines)
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command waiting for `expect`'s answers (none yet).
    fn waiting(action: &str, board: Option<&str>, expect: &[&str]) -> Waiting {
        let (reply, _) = oneshot::channel();
        Waiting {
            action: action.into(),
            board: board.map(String::from),
            expect: expect.iter().map(|n| n.to_string()).collect(),
            answers: BTreeMap::new(),
            reply,
            deadline: tokio::time::Instant::now(),
        }
    }

    fn answer(node: &str, boards: &[&str], warnings: Option<Vec<&str>>) -> ResponsePayload {
        let mut a = crate::intake::answers::response("t1", "start_round", &Ok(()));
        a.node = Some(node.into());
        a.boards = Some(boards.iter().map(|b| b.to_string()).collect());
        a.warnings = warnings.map(|w| w.into_iter().map(String::from).collect());
        a
    }

    /// A hall command is `ok` only with every expected node's `ok`: a node that did not
    /// answer makes it a partial failure that names it, though nobody refused.
    #[test]
    fn a_hall_command_without_every_node_s_answer_is_a_partial_failure() {
        let mut w = waiting("pause", None, &["n1", "n2"]);
        w.answers.insert("n1".into(), answer("n1", &["b1"], None));
        let c = combine("t1", "n1", &w);
        assert_eq!(c.status, ResponseStatus::Error);
        assert_eq!(c.error.as_deref(), Some("no_answer"));
        let reason = c.reason.unwrap_or_default();
        assert!(
            reason.starts_with("partial failure (n1 said ok)")
                && reason.contains("node n2 did not answer within 10 s"),
            "{reason}"
        );
        // n2 refuses: still a partial failure, with n2's own code.
        let mut refused = crate::intake::answers::response(
            "t1",
            "pause",
            &Err(crate::intake::refusal::Refusal::NoBoardApplied { action: "pause" }),
        );
        refused.node = Some("n2".into());
        w.answers.insert("n2".into(), refused.clone());
        let c = combine("t1", "n1", &w);
        assert_eq!(c.error.as_deref(), Some("no_game"));
        let reason = c.reason.unwrap_or_default();
        assert!(
            reason.starts_with("partial failure (n1 said ok): node n2: no_game"),
            "{reason}"
        );
        // Both refuse: refused by every node.
        let mut also = refused.clone();
        also.node = Some("n1".into());
        w.answers.insert("n1".into(), also);
        let reason = combine("t1", "n1", &w).reason.unwrap_or_default();
        assert!(reason.starts_with("refused by every node: "), "{reason}");
        w.answers.insert("n1".into(), answer("n1", &["b1"], None));
        w.answers.insert("n2".into(), answer("n2", &["b2"], None));
        let c = combine("t1", "n1", &w);
        assert_eq!(
            (c.status, c.reason, c.error),
            (ResponseStatus::Ok, None, None)
        );
    }

    /// Every node said `ok` but none applied it to a board (a hall pause when no game is
    /// running anywhere): that is what a node alone refuses as `no_game`, and the
    /// dashboard must not say "done" for it (`hallclock command` already exits 1).
    #[test]
    fn a_hall_command_no_node_applied_to_any_board_is_refused_as_no_game() {
        let mut w = waiting("pause", None, &["n1", "n2"]);
        w.answers.insert("n1".into(), answer("n1", &[], None));
        w.answers.insert("n2".into(), answer("n2", &[], None));
        let c = combine("t1", "n1", &w);
        assert_eq!(c.status, ResponseStatus::Error);
        assert_eq!(c.error.as_deref(), Some("no_game"));
        assert_eq!(
            c.reason.as_deref(),
            Some("no board of any node has a game to pause (n1, n2 applied it to no board)")
        );
        assert_eq!(c.boards, Some(Vec::new()));
        // One node applied it: ok, with that node's boards.
        w.answers.insert("n2".into(), answer("n2", &["b2"], None));
        let c = combine("t1", "n1", &w);
        assert_eq!((c.status, c.error), (ResponseStatus::Ok, None));
        assert_eq!(c.boards, Some(vec!["b2".to_string()]));
    }

    /// A hall command that concerns no board (`announce`: every node shows it on its own
    /// screens) is answered without `boards` by every node: `ok` for the hall, not "no
    /// board of any node".
    #[test]
    fn a_hall_command_of_no_board_is_ok_when_every_node_says_ok() {
        let mut w = waiting("announce", None, &["n1", "n2"]);
        for node in ["n1", "n2"] {
            let mut a = crate::intake::answers::response("t1", "announce", &Ok(()));
            a.node = Some(node.into());
            w.answers.insert(node.into(), a);
        }
        let c = combine("t1", "n1", &w);
        assert_eq!(
            (c.status, c.error.as_deref()),
            (ResponseStatus::Ok, None),
            "{:?}",
            c.reason
        );
    }

    /// A board command sent on to the board's node: the dashboard gets that node's answer
    /// as it gave it (its node, its error code); none in time, the refusal that says so.
    #[test]
    fn a_board_command_s_answer_is_its_node_s_own_or_no_answer() {
        let mut w = waiting("add_time", Some("b3"), &["n2"]);
        let silent = combine("t1", "n1", &w);
        assert_eq!(silent.status, ResponseStatus::Error);
        assert_eq!(silent.error.as_deref(), Some("no_answer"));
        assert_eq!(silent.node.as_deref(), Some("n1"));
        assert_eq!(silent.action, "add_time");
        let reason = silent.reason.unwrap_or_default();
        assert!(
            reason.contains("b3") && reason.contains("n2") && reason.contains("10 s"),
            "{reason}"
        );
        let mut own = crate::intake::answers::response("t1", "add_time", &Ok(()));
        own.node = Some("n2".into());
        w.answers.insert("n2".into(), own.clone());
        assert_eq!(combine("t1", "n1", &w), own);
    }

    /// Every node read the same TRF and skipped the same lines: the dashboard's combined
    /// answer says each once, in the file's order; with none, it has no `warnings`.
    #[test]
    fn a_trf_s_skipped_lines_are_said_once_in_the_combined_answer() {
        let skipped = vec![
            "line 3: not a TRF record, skipped",
            "line 9: unknown record",
        ];
        let mut w = waiting("start_round", None, &["n1", "n2"]);
        w.answers
            .insert("n1".into(), answer("n1", &["b1"], Some(skipped.clone())));
        w.answers
            .insert("n2".into(), answer("n2", &["b2"], Some(skipped.clone())));
        let c = combine("t1", "n1", &w);
        assert_eq!(c.status, ResponseStatus::Ok);
        assert_eq!(c.boards, Some(vec!["b1".to_string(), "b2".to_string()]));
        assert_eq!(
            c.warnings,
            Some(skipped.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        );
        w.answers.insert("n1".into(), answer("n1", &["b1"], None));
        w.answers.insert("n2".into(), answer("n2", &["b2"], None));
        assert_eq!(combine("t1", "n1", &w).warnings, None);
    }
}
