//! The one way in for every command, whatever its door (MQTT signed or open, a dashboard
//! session), in one order for board and hall commands alike:
//!
//! ```text
//! read strictly ─▶ admit (who) ─▶ parse (typed) ─▶ bound (instants) ─▶ claim ─▶ authorize ─▶ apply ─▶ answer
//!  json.rs          auth.rs        command.rs       command.rs          answers.rs  auth.rs     (hall)    answers.rs
//! ```
//!
//! Everything up to the claim is answered here, and is not remembered: a command refused
//! before its transaction is claimed may be sent again, corrected, under the same
//! transaction. From the claim on, the transaction's answer is remembered and journaled:
//! [`Intake::take`] hands the caller a [`Claimed`] token, `#[must_use]`, that only
//! answering consumes — a refusal after the claim (a forbidden command, an unknown board,
//! a TRF that does not read) is that transaction's answer too, so a resend gets it.
//!
//! Idempotency is by `(arbiter, transaction)`, and what must match for a resend to be "the
//! same command" is the command without `ts` and `sig` ([`answers::digest`]): a client that
//! re-signs its retry (a new `ts`) gets the first reply; a different command under a used
//! transaction is refused as `replayed`.
//!
//! The hall applies (the step between authorize and answer); what an accepted board command
//! means for the rules is mapped here, in [`input`], so the board actor receives a typed act,
//! not the wire's vocabulary.

pub mod answers;
pub mod auth;
pub mod command;
pub mod input;
pub mod json;
pub mod refusal;
pub mod secrets;

use serde::de::DeserializeOwned;
use tokio::sync::oneshot;

use crate::rules::Millis;
use answers::{Claim, Key, Replier, ReplyTo};
use auth::{Admitted, Identity, Security};
use command::{BadCommand, BoardAction, Command, HallAction, Instant, log_safe};
use refusal::Refusal;

/// A command (or request) as a door hands it to the hall.
#[derive(Debug)]
pub enum Incoming {
    /// Published on the hall's `set` topic.
    Hall(Vec<u8>),
    /// A node's answer on the hall's `response` topic (this node's too): what a dashboard's
    /// hall command forwarded to every node waits for (issue 23).
    HallResponse(Vec<u8>),
    /// A node's answer on `board/<board>/response` (this node's too): what a dashboard's
    /// command for another node's board waits for (issue 23).
    BoardResponse { board: String, payload: Vec<u8> },
    /// Published on `board/<board>/set`.
    Board { board: String, payload: Vec<u8> },
    /// A `set` body from a logged-in arbiter (`board`: `None` for the hall). The session
    /// proved the identity, as a signature would; the response (its JSON bytes) goes back
    /// to the asker, and is also published on the response topic.
    Web {
        board: Option<String>,
        payload: Vec<u8>,
        identity: Identity,
        reply: oneshot::Sender<Vec<u8>>,
    },
    /// The chief arbiter sets the hall's time from the dashboard (`POST /api/hall/time`):
    /// civil time moves, no game clock does. The answer: the hall's time now, or why not.
    SetHallTime {
        civil: crate::rules::Millis,
        identity: Identity,
        reply: oneshot::Sender<Result<crate::rules::Millis, String>>,
    },
    /// A retained alert on the broker that this run has not published (left by an
    /// earlier run): the hall decides whether it still stands.
    StaleAlert { payload: Vec<u8> },
    /// Over [`MAX_COMMAND_BYTES`](command::MAX_COMMAND_BYTES): only the answer to give is
    /// handed on, never the payload.
    TooLarge { response: String, bad: BadCommand },
    /// A request on the `ask` topic (read-only: `replay`).
    Ask(Vec<u8>),
    /// Another node's retained `node/<node>/status` (issue 23): which boards it claims
    /// while it is online.
    NodeStatus { node: String, payload: Vec<u8> },
    /// Another node's clock reading (`node/<node>/clock`), and this node's clock when it
    /// arrived: how far their clocks differ.
    NodeClock {
        node: String,
        payload: Vec<u8>,
        received: crate::rules::Millis,
    },
    /// Another node's retained `board/<board>/state` (issue 23): the hall's conclusions
    /// (the session, `all_sealed`, the round summary) are the whole hall's. Only what
    /// `mqtt::foreign` let through: bounded, never this node's own boards.
    PeerState { board: String, payload: Vec<u8> },
    /// Another node's retained `node/<node>/info` (issue 23): its boards and their numbers,
    /// for the `info` this node's dashboard reads.
    NodeInfo { node: String, payload: Vec<u8> },
}

/// Where answers are published (the MQTT publisher; a test's recorder). The intake does not
/// know the transport, so the web does not depend on MQTT's types through it.
pub trait Outbox: Send + Sync {
    fn message(&self, topic: String, payload: Vec<u8>);
}

/// What a command is addressed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Hall,
    Board(String),
}

/// How the command arrived: its bytes as the door read them.
#[derive(Debug)]
pub enum Raw {
    /// An MQTT payload: a signed envelope, or (`commands = "open"`) the command itself.
    Mqtt(Vec<u8>),
    /// A dashboard session's command: who sent it is proven by the session.
    Dashboard {
        payload: Vec<u8>,
        identity: Identity,
    },
}

/// A command's way in: where it is addressed, the topic it was (or would have been)
/// published on — signatures and transaction digests are over it — and where its answer
/// goes.
#[derive(Debug)]
pub struct Door {
    pub target: Target,
    pub set_topic: String,
    pub reply_to: ReplyTo,
}

/// What a command's action tells the pipeline: its name for the answer, the instants to
/// bound, and the role it needs.
pub trait Action: DeserializeOwned {
    fn name(&self) -> &'static str;
    fn instants(&self) -> Vec<(&'static str, Instant)>;
    fn map_instants(&mut self, f: &dyn Fn(Millis) -> Millis);
    /// The start that must not be past (`allow_past_start` not given), if any.
    fn start_to_check(&self) -> Option<(&'static str, Instant)>;
    fn may(&self, who: &Identity, target: &Target) -> Result<(), Refusal>;
}

impl Action for BoardAction {
    fn name(&self) -> &'static str {
        BoardAction::name(self)
    }
    fn instants(&self) -> Vec<(&'static str, Instant)> {
        BoardAction::instants(self)
    }
    fn map_instants(&mut self, f: &dyn Fn(Millis) -> Millis) {
        BoardAction::map_instants(self, f)
    }
    fn start_to_check(&self) -> Option<(&'static str, Instant)> {
        BoardAction::start_to_check(self)
    }
    fn may(&self, who: &Identity, target: &Target) -> Result<(), Refusal> {
        if let Target::Board(board) = target {
            who.may_command_board(board)?;
        }
        match self {
            // 6.10 onto another board: the arbiter must have that board too.
            BoardAction::ReplaceClock { to: Some(to), .. } => who.may_command_board(to),
            _ => Ok(()),
        }
    }
}

impl Action for HallAction {
    fn name(&self) -> &'static str {
        HallAction::name(self)
    }
    fn instants(&self) -> Vec<(&'static str, Instant)> {
        HallAction::instants(self)
    }
    fn map_instants(&mut self, f: &dyn Fn(Millis) -> Millis) {
        HallAction::map_instants(self, f)
    }
    fn start_to_check(&self) -> Option<(&'static str, Instant)> {
        HallAction::start_to_check(self)
    }
    fn may(&self, who: &Identity, _: &Target) -> Result<(), Refusal> {
        let reads = matches!(self, HallAction::Replay { .. });
        who.may_command_hall(self.name(), reads)
    }
}

/// A command that passed every step up to apply, with the token its answer consumes.
#[derive(Debug)]
pub struct Taken<A> {
    pub command: Command<A>,
    pub claim: Claimed,
}

/// The claim of a transaction: answering it ([`Claimed::answer`]) journals and publishes
/// the reply, and answers every resend that arrived meanwhile. Dropped unanswered (a bug),
/// it answers `internal` itself, so no resend waits for ever.
#[must_use = "a claimed transaction must be answered: its resends wait for that answer"]
#[derive(Debug)]
pub struct Claimed {
    key: Key,
    transaction: String,
    action: &'static str,
    reply_to: Option<ReplyTo>,
    replier: Replier,
    /// The `ok` answer handed to whoever applies the command (issue 36).
    prepared: Option<answers::PreparedAnswer>,
}

impl Claimed {
    /// This command's `ok` answer, for whoever applies it to store in one journal batch
    /// with the command's effect ([`answers::PreparedAnswer`]). Once that batch is stored,
    /// answering `ok` publishes it without journaling it again.
    pub fn prepare_ok(&mut self) -> answers::PreparedAnswer {
        let topic = self
            .reply_to
            .as_ref()
            .map(ReplyTo::topic)
            .unwrap_or_default();
        let p = self
            .replier
            .prepare_ok(&self.key, topic, &self.transaction, self.action);
        self.prepared = Some(p.clone());
        p
    }

    pub fn transaction(&self) -> &str {
        &self.transaction
    }

    pub fn action(&self) -> &'static str {
        self.action
    }

    /// Answer: remembered, journaled, then published to the asker and to every resend.
    pub async fn answer(self, r: Result<(), Refusal>) {
        self.answer_for(r, None).await;
    }

    /// Answer a hall command with the boards of this node it concerned (issue 23: each
    /// node answers for its own part of the hall).
    pub async fn answer_for(self, r: Result<(), Refusal>, boards: Option<Vec<String>>) {
        self.answer_with(r, boards, Vec::new()).await;
    }

    /// [`Claimed::answer_for`] with the warnings of what was applied (a TRF's skipped
    /// lines).
    pub async fn answer_with(
        mut self,
        r: Result<(), Refusal>,
        boards: Option<Vec<String>>,
        warnings: Vec<String>,
    ) {
        let Some(to) = self.reply_to.take() else {
            return;
        };
        if let Some(p) = self.prepared.take().filter(|p| p.is_stored())
            && r.is_ok()
            && boards.is_none()
            && warnings.is_empty()
        {
            self.replier.reply_prepared(&self.key, to, &p);
            return;
        }
        let mut payload = answers::response(&self.transaction, self.action, &r);
        payload.boards = boards;
        payload.warnings = (!warnings.is_empty()).then_some(warnings);
        self.replier.reply(self.key.clone(), to, payload).await;
    }

    /// Answer without waiting for the journal (the coordinator's loop goes on).
    pub fn answer_soon(self, r: Result<(), Refusal>) {
        tokio::spawn(self.answer(r));
    }

    /// [`Claimed::answer_for`] without waiting for the journal.
    pub fn answer_soon_for(self, r: Result<(), Refusal>, boards: Option<Vec<String>>) {
        tokio::spawn(self.answer_for(r, boards));
    }

    /// [`Claimed::answer_with`] without waiting for the journal.
    pub fn answer_soon_with(
        self,
        r: Result<(), Refusal>,
        boards: Option<Vec<String>>,
        warnings: Vec<String>,
    ) {
        tokio::spawn(self.answer_with(r, boards, warnings));
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        let Some(to) = self.reply_to.take() else {
            return;
        };
        tracing::error!(transaction = %log_safe(&self.transaction), action = self.action, "a claimed command was never answered: answering internal");
        let r = Err(Refusal::Internal {
            reason: "the command was not answered".into(),
        });
        let payload = answers::response(&self.transaction, self.action, &r);
        let (replier, key) = (self.replier.clone(), self.key.clone());
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { replier.reply(key, to, payload).await });
        }
    }
}

/// The pipeline's state: who may command, and the transactions' answers.
pub struct Intake {
    security: Security,
    /// Its `answers` are the transactions' table.
    replier: Replier,
    /// The last signed command refused as `expired` by far more than the window: who
    /// signed it and by how much their clock was off ours (a server without a real-time
    /// clock is the usual cause). Taken by the hall, which says so.
    far_clock: std::sync::Mutex<Option<(String, Millis)>>,
    /// How far in the past a scheduled start may be without `allow_past_start`.
    past_start_grace: Millis,
}

/// Beyond this a command's `ts` says more of the clocks than of a slow network.
pub const FAR_CLOCK: Millis = Millis(5 * 60_000);

impl Intake {
    pub fn new(security: Security, replier: Replier) -> Intake {
        Intake {
            security,
            replier,
            far_clock: std::sync::Mutex::new(None),
            past_start_grace: command::DEFAULT_PAST_START_GRACE,
        }
    }

    /// The hall's grace for a past start (`[defaults] past_start_grace`).
    pub fn with_past_start_grace(mut self, grace: Millis) -> Intake {
        self.past_start_grace = grace;
        self
    }

    /// The signer and the offset of the last command refused for a clock far from ours.
    pub fn take_far_clock(&self) -> Option<(String, Millis)> {
        self.far_clock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    fn note_far_clock(&self, bytes: &[u8], refusal: &Refusal) {
        let Refusal::Expired { ts, hall, .. } = refusal else {
            return;
        };
        if (*ts - *hall).0.abs() < FAR_CLOCK.0 {
            return;
        }
        let signer = serde_json::from_slice::<serde_json::Value>(bytes)
            .ok()
            .and_then(|v| v.get("arbiter").and_then(|a| a.as_str()).map(log_safe))
            .unwrap_or_else(|| "?".into());
        *self
            .far_clock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((signer, *ts - *hall));
    }

    /// A reply to a command refused before its claim: sent, not remembered.
    /// `command` for `topic` as the account `id` signs it `now` (a dashboard's hall
    /// command forwarded to every node, issue 23); in an open lab, the command as it is.
    /// `None`: no such account (any more).
    pub fn sign_for(
        &self,
        id: &str,
        topic: &str,
        command: serde_json::Value,
        now: Millis,
    ) -> Option<Vec<u8>> {
        match &self.security {
            Security::Signed { arbiters, .. } => arbiters
                .get(id)
                .map(|a| auth::sign_now(id, &a.key, topic, command, now)),
            Security::Open => serde_json::to_vec(&command).ok(),
        }
    }

    pub fn refuse(&self, to: ReplyTo, transaction: &str, action: &str, refusal: Refusal) {
        self.respond(to, transaction, action, Err(refusal));
    }

    /// A reply to a request that is never claimed (`ask`: reads only).
    pub fn respond(&self, to: ReplyTo, transaction: &str, action: &str, r: Result<(), Refusal>) {
        let payload = self
            .replier
            .stamp(answers::response(transaction, action, &r));
        if let Ok(bytes) = serde_json::to_vec(&payload) {
            to.send(self.replier.outbox.as_ref(), bytes);
        }
    }

    /// [`Intake::respond`] with the boards of this node the request concerned (a hall
    /// request is answered by every node, each for its own boards).
    pub fn respond_for(
        &self,
        to: ReplyTo,
        transaction: &str,
        action: &str,
        r: Result<(), Refusal>,
        boards: Option<Vec<String>>,
    ) {
        let mut payload = answers::response(transaction, action, &r);
        payload.boards = boards;
        let payload = self.replier.stamp(payload);
        if let Ok(bytes) = serde_json::to_vec(&payload) {
            to.send(self.replier.outbox.as_ref(), bytes);
        }
    }

    /// A command refused by what it is (malformed, too large): sent, not remembered.
    pub fn refuse_bad(&self, to: ReplyTo, bad: BadCommand) {
        tracing::info!(transaction = %log_safe(&bad.transaction), reason = %log_safe(&bad.reason), "command refused");
        self.refuse(to, &bad.transaction, &bad.action, bad.refusal());
    }

    /// A request on `ask` (reads only: never claimed, never journaled), let in as a
    /// command is: signed by an account of the hall, any role (a `viewer` asks for
    /// replays with its key, docs/SECURITY.md), within the window; in an open hall, as it
    /// is. The request and where to answer it; `None` when it was refused here (answered).
    pub fn read_request<A: Action>(
        &self,
        topic: &str,
        bytes: &[u8],
        now: Millis,
        to: ReplyTo,
    ) -> Option<(Command<A>, ReplyTo)> {
        let admitted = match self.security.admit(topic, bytes, now) {
            Ok(a) => a,
            Err(t) => {
                self.note_far_clock(bytes, &t.refusal);
                tracing::warn!(topic = %log_safe(topic), transaction = %log_safe(&t.transaction), refusal = ?t.refusal, "request refused at the gate");
                self.refuse(to, &t.transaction, &t.action, t.refusal);
                return None;
            }
        };
        let signer = admitted
            .identity
            .as_ref()
            .map(|i| (i.id.as_str(), i.name.as_str()));
        match command::parse_as::<A>(&admitted.command, signer) {
            Ok(c) => Some((c, to)),
            Err(bad) => {
                self.refuse_bad(to, bad);
                None
            }
        }
    }

    /// read → admit → parse → bound → claim → authorize. `None` when the command was
    /// answered here: refused, or seen before (its first reply again, or the reply of the
    /// copy being applied).
    ///
    /// `now` is civil time (the wall clock: what a signature's `ts` and a command's
    /// instants are on); `offset` is civil minus game time, through which the command's
    /// instants are mapped onto game time once they are checked.
    pub fn take<A: Action>(
        &self,
        door: Door,
        raw: Raw,
        now: Millis,
        offset: Millis,
    ) -> Option<Taken<A>> {
        let Door {
            target,
            set_topic,
            reply_to,
        } = door;
        // Read and admit: who sent it, before anything of the command is believed.
        let admitted = match raw {
            Raw::Mqtt(bytes) => match self.security.admit(&set_topic, &bytes, now) {
                Ok(a) => a,
                Err(t) => {
                    self.note_far_clock(&bytes, &t.refusal);
                    tracing::warn!(topic = %log_safe(&set_topic), transaction = %log_safe(&t.transaction), refusal = ?t.refusal, "command refused at the gate");
                    self.refuse(reply_to, &t.transaction, &t.action, t.refusal);
                    return None;
                }
            },
            Raw::Dashboard { payload, identity } => Admitted {
                identity: Some(identity),
                command: payload,
            },
        };
        // Parse: the typed command (strict JSON, duplicate keys refused).
        let signer = admitted
            .identity
            .as_ref()
            .map(|i| (i.id.as_str(), i.name.as_str()));
        let mut command = match command::parse_as::<A>(&admitted.command, signer) {
            Ok(c) => c,
            Err(bad) => {
                self.refuse_bad(reply_to, bad);
                return None;
            }
        };
        let action = command.action.name();
        // Bound: every instant it names within a day back and two weeks ahead.
        if let Err(why) = command::check_instants(&command.action.instants(), now) {
            self.refuse(
                reply_to,
                &command.transaction,
                action,
                Refusal::OutOfRange(why),
            );
            return None;
        }
        // A start already past: on civil time, as the arbiter typed it, before mapping;
        // refused after the claim, so that a transaction applied before (a resend after a
        // bridge's cut, its start now past) gets its first answer again.
        let past =
            command::check_past_start(command.action.start_to_check(), now, self.past_start_grace)
                .err();
        command.action.map_instants(&|t| t - offset);
        // Claim: from here on the transaction's answer is remembered.
        let who = match &admitted.identity {
            Some(id) => id.id.clone(),
            None => format!("open:{}", command.arbiter),
        };
        let key: Key = (who, command.transaction.clone());
        let digest = answers::digest(&set_topic, &admitted.command);
        let reply_to = match self.replier.answers.claim(&key, &digest, reply_to) {
            Claim::New(reply_to) => reply_to,
            Claim::InFlight => return None,
            Claim::Repeat(first, reply_to) => {
                tracing::info!(transaction = %log_safe(&command.transaction), "transaction seen before: its first reply again, nothing applied");
                reply_to.send(self.replier.outbox.as_ref(), first);
                return None;
            }
            Claim::Reused(reply_to) => {
                tracing::warn!(transaction = %log_safe(&command.transaction), "command refused: replayed");
                let refusal = Refusal::Replayed {
                    transaction: command.transaction.clone(),
                    arbiter: key.0,
                };
                self.refuse(reply_to, &command.transaction, action, refusal);
                return None;
            }
        };
        let claim = Claimed {
            key,
            transaction: command.transaction.clone(),
            action,
            reply_to: Some(reply_to),
            replier: self.replier.clone(),
            prepared: None,
        };
        if let Some(past) = past {
            tracing::info!(transaction = %log_safe(&claim.transaction), action, %past, "command refused: a start in the past");
            claim.answer_soon(Err(Refusal::PastStart(past)));
            return None;
        }
        // Authorize: the sender's role for this command and its target.
        if let Some(id) = &admitted.identity
            && let Err(e) = command.action.may(id, &target)
        {
            tracing::warn!(topic = %log_safe(&set_topic), transaction = %log_safe(&command.transaction), action, arbiter = %log_safe(&id.id), refusal = ?e, "command refused: forbidden");
            claim.answer_soon(Err(e));
            return None;
        }
        Some(Taken { command, claim })
    }
}
