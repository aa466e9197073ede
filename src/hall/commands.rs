//! Commands applied: every door's command through the intake's pipeline, then to its
//! board or hall-wide (rounds, seal all, resumption, pause, resume), and the read-only
//! requests on `ask` (`replay`).

use tokio::sync::oneshot;

use super::Hall;
use super::board::{Refusal, ToBoard};
use crate::intake::answers::ReplyTo;
use crate::intake::command::{BoardAction, Command, HallAction, log_safe};
use crate::intake::{Door, Raw, Taken, Target, input};

impl Hall {
    /// Every command, from every door, takes the intake's one pipeline (read, admit,
    /// parse, bound, claim, authorize); what passes is applied here and answered through
    /// its claim.
    pub(super) async fn on_command(
        &mut self,
        board: Option<String>,
        raw: Raw,
        asker: Option<oneshot::Sender<Vec<u8>>>,
    ) {
        // A board command on MQTT reaches every node of the hall: only the board's node
        // applies and answers it.
        if let Some(b) = &board
            && matches!(raw, Raw::Mqtt(_))
            && !self.boards.contains_key(b)
            && (self.nodes.peer_serves(b) || !self.nodes.answers_for_unserved())
        {
            tracing::debug!(board = %log_safe(b), "a board command for another node's board (or another node answers it)");
            return;
        }
        // A dashboard's command that is other nodes' too (a hall command beside them, a
        // command for another node's board) goes to them (forward.rs); what cannot is
        // answered here.
        let (raw, asker) = match (raw, asker) {
            (Raw::Dashboard { payload, identity }, Some(reply)) => {
                match self.send_on(board.as_deref(), payload, &identity, reply) {
                    Ok(()) => return,
                    Err((payload, reply)) => (Raw::Dashboard { payload, identity }, Some(reply)),
                }
            }
            other => other,
        };
        let (target, set_topic, response) = match board {
            Some(b) => (
                Target::Board(b.clone()),
                self.topics.board_set(&b),
                self.topics.board_response(&b),
            ),
            None => (
                Target::Hall,
                self.topics.hall_set(),
                self.topics.hall_response(),
            ),
        };
        let reply_to = match asker {
            Some(tx) => ReplyTo::Asker {
                topic: response,
                tx,
            },
            None => ReplyTo::Topic(response),
        };
        let door = Door {
            target: target.clone(),
            set_topic,
            reply_to,
        };
        // Civil: what the signer's `ts` and the command's instants are on.
        let (now, offset) = (self.timebase.civil(), self.steps.settled());
        match target {
            Target::Board(board) => {
                if let Some(taken) = self.intake.take::<BoardAction>(door, raw, now, offset) {
                    self.apply_board(board, taken).await;
                }
                self.say_far_clock();
            }
            Target::Hall => {
                let from_dashboard = matches!(raw, Raw::Dashboard { .. });
                let taken = self.intake.take::<HallAction>(door, raw, now, offset);
                self.say_far_clock();
                if let Some(taken) = taken {
                    // The dashboard speaks to this node only, where `hallclock command`
                    // reaches every node: beside other nodes, a hall command from it
                    // would act on part of the hall and answer `ok`, so it is refused
                    // (after the intake, so a resend gets the same answer).
                    let peers = self.nodes.online_peers();
                    if from_dashboard && !peers.is_empty() {
                        // Only a command that could not be forwarded gets here (it did
                        // not read as a command, or its account is gone).
                        return taken.claim.answer_soon(Err(Refusal::HallOfSeveralNodes {
                            nodes: peers.join(", "),
                        }));
                    }
                    self.apply_hall(taken).await;
                }
            }
        }
    }

    /// A board command that passed the intake: to its board (or, for 6.10 onto another
    /// board, moved by the hall), answered through its claim.
    async fn apply_board(&mut self, board: String, taken: Taken<BoardAction>) {
        let Taken { command, claim } = taken;
        let Some(entry) = self.boards.get(&board) else {
            // Another node's board whose node is down (a dashboard's command, or one on
            // MQTT that this node answers for the hall): said as such.
            // (Up, its node answers a command on MQTT; a dashboard's comes here only when
            // it could not be sent on: its account is gone.)
            match self.nodes.owner_of(&board) {
                Some((node, false)) => {
                    let node = node.to_string();
                    return claim.answer_soon(Err(Refusal::BoardNodeOffline { board, node }));
                }
                Some((node, true)) => {
                    let nodes = node.to_string();
                    return claim.answer_soon(Err(Refusal::HallOfSeveralNodes { nodes }));
                }
                None => {}
            }
            // The whole hall's boards, every node's: the arbiter looks for the right id.
            let mut hall: std::collections::BTreeSet<String> = self.nodes.listed_boards().clone();
            hall.extend(self.boards.keys().cloned());
            let known = hall.into_iter().collect::<Vec<_>>().join(", ");
            return claim.answer_soon(Err(Refusal::UnknownBoard { board, known }));
        };
        let inbox = entry.inbox.clone();
        tracing::info!(board = %log_safe(&board), transaction = %log_safe(&command.transaction), action = claim.action(), arbiter = %log_safe(&command.arbiter), "arbiter command");
        if let BoardAction::ReplaceClock {
            to: Some(to),
            white_ms,
            black_ms,
        } = &command.action
        {
            let r = self
                .move_game(&board, to, *white_ms, *black_ms, &command)
                .await;
            return claim.answer_soon(r);
        }
        let act = match input::board_act(command, &board) {
            Ok(act) => act,
            Err(e) => return claim.answer_soon(Err(e)),
        };
        // Its events and its answer are stored as one (issue 36): `board/command.rs`.
        let mut claim = claim;
        let answer = claim.prepare_ok();
        // A command may wait on a 6.9 search; don't hold up the other boards.
        tokio::spawn(async move {
            let (reply, rx) = oneshot::channel();
            let r = match inbox.send(ToBoard::Command { act, answer, reply }).await {
                Ok(()) => rx.await.unwrap_or(Err(Refusal::BoardStopped)),
                Err(_) => Err(Refusal::BoardStopped),
            };
            claim.answer(r).await;
        });
    }

    /// A request on `ask`: only what reads (`replay`); commands go to `set`, which viewers
    /// may not write (packaging/mosquitto/acl).
    pub(super) async fn on_ask(&mut self, payload: &[u8]) {
        let to = ReplyTo::Topic(self.topics.hall_response());
        // Signed like a command (any account's key; docs/SECURITY.md), so that only the
        // hall's accounts make a node read its journal for them.
        let now = self.timebase.civil();
        let Some((command, topic)) =
            self.intake
                .read_request::<HallAction>(&self.topics.ask(), payload, now, to)
        else {
            return;
        };
        let action = command.action.name();
        tracing::info!(transaction = %log_safe(&command.transaction), action, arbiter = %log_safe(&command.arbiter), "request");
        let r = match &command.action {
            HallAction::Replay {
                board,
                from_seq,
                reply_to,
            } => self.replay(board, *from_seq, reply_to).await,
            _ => Err(Refusal::NotARequest { action }),
        };
        let boards = match &command.action {
            HallAction::Replay { board, .. } => Some(self.replay_boards(board, &r)),
            _ => None,
        };
        self.intake
            .respond_for(topic, &command.transaction, action, r, boards);
    }

    /// A hall command that passed the intake, answered through its claim.
    async fn apply_hall(&mut self, taken: Taken<HallAction>) {
        let Taken { command, claim } = taken;
        let (transaction, action) = (command.transaction.clone(), claim.action());
        tracing::info!(transaction = %log_safe(&transaction), action, arbiter = %log_safe(&command.arbiter), "hall command");
        // A TRF's skipped lines, said in the answer (every answer to this command).
        let mut warnings = Vec::new();
        let (r, boards) = match command.action.clone() {
            HallAction::StartRound { .. } => {
                let (r, boards, said) = self.hall_start_round(&command).await;
                warnings = said;
                (r, boards)
            }
            HallAction::SealAll {
                resumption,
                allow_past_start,
            } => {
                let boards: Vec<String> = self.boards.keys().cloned().collect();
                let applied = self
                    .on_boards(&boards, &command, |_| BoardAction::Adjourn {
                        resumption: resumption.clone(),
                        allow_past_start,
                    })
                    .await;
                tracing::info!(applied = applied.len(), "seal all");
                self.applied_somewhere(applied, action)
            }
            HallAction::ScheduleResumption {
                resumption,
                allow_past_start,
            } => {
                let boards: Vec<String> = self.boards.keys().cloned().collect();
                let applied = self
                    .on_boards(&boards, &command, |_| BoardAction::ScheduleResumption {
                        resumption: resumption.clone(),
                        allow_past_start,
                    })
                    .await;
                tracing::info!(applied = applied.len(), "resumption scheduled");
                self.applied_somewhere(applied, action)
            }
            HallAction::Replay {
                board,
                from_seq,
                reply_to,
            } => {
                let r = self.replay(&board, from_seq, &reply_to).await;
                let boards = self.replay_boards(&board, &r);
                (r, Some(boards))
            }
            // Every node shows it on its own screens: no board is concerned, so its answer
            // has no `boards` (not `[]`, which says "none of mine had a game": every node
            // answering so would make the hall's answer `no_game`, hall/forward.rs, and
            // `hallclock command` exit 1).
            HallAction::Announce { text, until } => {
                (self.announce(text.as_deref(), until.map(|u| u.0)), None)
            }
            HallAction::Pause {} | HallAction::Resume {} => {
                let board_action = match command.action {
                    HallAction::Pause {} => BoardAction::Pause {},
                    _ => BoardAction::Resume {},
                };
                let boards: Vec<String> = self.boards.keys().cloned().collect();
                let applied = self
                    .on_boards(&boards, &command, |_| board_action.clone())
                    .await;
                tracing::info!(applied = applied.len(), action, "hall-wide");
                self.applied_somewhere(applied, action)
            }
        };
        claim.answer_soon_with(r, boards, warnings);
    }

    /// `start_round` on this node: its pairings (given, or read from the TRF), checked
    /// whole, then its own boards' games started. Returns the outcome, this node's boards
    /// and the TRF's warnings (said in the answer).
    async fn hall_start_round(
        &mut self,
        command: &Command<HallAction>,
    ) -> (Result<(), Refusal>, Option<Vec<String>>, Vec<String>) {
        let HallAction::StartRound {
            round,
            pairings,
            trf,
            board_order,
            only_our_boards,
            start,
            time_control,
            time_control_black,
            default_time_ms,
            flag_mode,
            both_absent,
            piece_letters,
            session_end,
            broadcast_delay_minutes,
            event,
            site,
            // Checked at the intake, on civil time.
            allow_past_start: _,
        } = command.action.clone()
        else {
            return (
                Err(Refusal::Internal {
                    reason: "not a start_round".into(),
                }),
                None,
                Vec::new(),
            );
        };
        let (pairings, from_trf) = match self.trf_pairings(
            round,
            pairings,
            trf.as_deref(),
            board_order.as_deref(),
            only_our_boards,
        ) {
            Ok(p) => p,
            // The claim is answered like any outcome: a resend gets this refusal.
            Err(e) => return (Err(e), Some(Vec::new()), Vec::new()),
        };
        let warnings = from_trf
            .as_ref()
            .map(|t| t.warnings.clone())
            .unwrap_or_default();
        // The event's defaults, with what this round (or its TRF) says otherwise.
        let d = &self.settings.defaults;
        let mut template = d.setup("", "", start.0);
        let file_tc = from_trf.as_ref().and_then(|t| t.time_control.clone());
        if let Some(tc) = time_control.or_else(|| file_tc.as_ref().map(|t| t.white.clone())) {
            template.tc = tc;
        }
        template.tc_black = time_control_black.or_else(|| file_tc.and_then(|t| t.black));
        template.default_time = default_time_ms.unwrap_or(d.default_time);
        template.both_absent = both_absent.unwrap_or(d.both_absent);
        template.flag_mode = flag_mode.unwrap_or(d.flag_mode);
        template.piece_letters = piece_letters.unwrap_or(d.piece_letters);
        // The round's own tags, else its TRF's, else (in the feed) the event's.
        let file_tags = from_trf
            .as_ref()
            .map(|t| t.tags.clone())
            .unwrap_or_default();
        let given = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
        let tags = crate::broadcast::RoundTags {
            event: given(event),
            site: given(site),
        }
        .or(&file_tags);
        // Issue 23: every node receives this command and checks it whole against
        // the same registry (its boards and the online nodes' retained lists), so a
        // round that names a board no node owns is refused by all, before any of
        // them starts a game; then each starts its own boards' games only.
        let mine: Vec<String> = pairings
            .iter()
            .filter(|p| self.boards.contains_key(&p.board))
            .map(|p| p.board.clone())
            .collect();
        if let Err(e) = self.check_round(round, &pairings, &template, broadcast_delay_minutes) {
            return (Err(e), Some(mine), warnings);
        }
        if mine.is_empty() {
            // Every game is another node's: nothing to do here is not an error.
            return (Ok(()), Some(mine), warnings);
        }
        let r = self
            .start_round(
                round,
                &pairings,
                template,
                broadcast_delay_minutes,
                tags,
                &command.arbiter,
            )
            .await;
        if r.is_ok()
            && let (Some(t), Some(current)) = (from_trf, &mut self.round)
        {
            current.ranks = t.ranks;
        }
        if r.is_ok()
            && let Some(end) = session_end
        {
            // The core's `SessionEnd` timer of every game orders the seal.
            self.on_boards(&mine, command, |_| BoardAction::SetSessionEnd {
                end: Some(end),
            })
            .await;
        }
        (r, Some(mine), warnings)
    }

    /// A hall-wide command's outcome on this node: applied to `applied`. Alone in its
    /// hall, a node that applied it nowhere says so (`no_board_applied`); beside other
    /// online nodes it answers `ok` for no board, since the command may be theirs to
    /// apply (issue 23: boards it does not own are not an error for a node).
    fn applied_somewhere(
        &self,
        applied: Vec<String>,
        action: &'static str,
    ) -> (Result<(), Refusal>, Option<Vec<String>>) {
        if applied.is_empty() && !self.nodes.any_online() {
            (Err(Refusal::NoBoardApplied { action }), Some(applied))
        } else {
            (Ok(()), Some(applied))
        }
    }

    /// Send a board's journaled events from `from_seq` to the asker's `reply/<id>` topic,
    /// in order, as they were first published.
    async fn replay(&self, board: &str, from_seq: u64, reply_to: &str) -> Result<(), Refusal> {
        if !valid_reply_id(reply_to) {
            return Err(Refusal::BadValue(format!(
                "reply_to: '{reply_to}' is not a topic level; give your MQTT client id (1-64 of A-Z a-z 0-9 - _): the events go to {}",
                self.topics.reply("<reply_to>")
            )));
        }
        if !self.boards.contains_key(board) {
            // Another node's board: that node replays it; this one answers `ok` for none
            // of its boards, as for any hall command (a client counts a command done when
            // every node says `ok`), or says that node is down. A board no node of the
            // hall lists is refused.
            return match self.nodes.owner_of(board) {
                Some((_, true)) => Ok(()),
                Some((node, false)) => Err(Refusal::BoardNodeOffline {
                    board: board.into(),
                    node: node.into(),
                }),
                None => Err(Refusal::NotABoard {
                    board: board.into(),
                }),
            };
        }
        let dir = self.settings.state_dir.join("journal");
        let scan = tokio::task::spawn_blocking(move || crate::store::read_dir(&dir))
            .await
            .map_err(|e| Refusal::Internal {
                reason: e.to_string(),
            })?
            .map_err(|e| Refusal::JournalUnreadable {
                reason: e.to_string(),
            })?;
        let topic = self.topics.reply(reply_to);
        let mut n = 0;
        for (record, _, _) in scan.records {
            if let crate::store::Record::Event {
                board: b,
                seq,
                event,
                ..
            } = record
                && b == board
                && seq >= from_seq
            {
                self.publisher.json_message(
                    topic.clone(),
                    &crate::mqtt::payload::EventPayload {
                        board: b,
                        seq,
                        event,
                    },
                );
                n += 1;
            }
        }
        tracing::info!(board, from_seq, events = n, reply_to, "replayed");
        Ok(())
    }

    /// A replay's `boards` in this node's answer: the board when it is this node's,
    /// none when it is another node's (or refused).
    fn replay_boards(&self, board: &str, r: &Result<(), Refusal>) -> Vec<String> {
        if r.is_ok() && self.boards.contains_key(board) {
            vec![board.to_string()]
        } else {
            Vec::new()
        }
    }

    /// Send the same kind of command to `boards`, as one arbiter's; those that took it.
    async fn on_boards(
        &self,
        boards: &[String],
        command: &Command<HallAction>,
        make: impl Fn(&str) -> BoardAction,
    ) -> Vec<String> {
        let mut applied = Vec::new();
        for board in boards {
            let Some(entry) = self.boards.get(board) else {
                continue;
            };
            let act = match input::board_act(input::for_board(command, make(board)), board) {
                Ok(act) => act,
                Err(r) => {
                    tracing::info!(%board, error = %r.code(), reason = %log_safe(&r.to_string()), "hall command not applied to this board");
                    continue;
                }
            };
            match Self::ask(&entry.inbox, |reply| ToBoard::Act { act, reply }).await {
                Some(Ok(())) => applied.push(board.clone()),
                Some(Err(r)) => {
                    tracing::info!(%board, error = %r.code(), reason = %log_safe(&r.to_string()), "hall command not applied to this board")
                }
                None => {}
            }
        }
        applied
    }
}

/// A reply topic's last level: what the example ACL's `%c` pattern can match (client ids
/// as `broker.client_id` allows them), and nothing that changes the topic's shape.
fn valid_reply_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}
