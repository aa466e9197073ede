//! The playing session as the hall shows it: every board's stage note (this node's boards,
//! and the other nodes' from their retained states: `peers.rs`), the retained
//! `node/<node>/session` topic (and `session` in the local feed), and the one `all_sealed`
//! event once every unfinished game of the hall is sealed.

use super::Hall;
use super::board::StageNote;
use crate::mqtt::payload::{SessionEvent, SessionPayload};
use crate::rules::Millis;
use crate::rules::adjournment::Stage;

impl Hall {
    /// Where a board's game is in the adjournment procedure; the session is published
    /// again only when that changed.
    pub(super) fn on_stage(&mut self, board: String, note: StageNote) {
        if self.session.boards.get(&board) != Some(&note) {
            self.session.boards.insert(board, note);
            if self.session.batch {
                self.session.stale = true;
            } else {
                self.session_changed();
            }
        }
    }

    /// The picture changed: published now, or at the end of the gap after the last one
    /// (the changes meanwhile go out together).
    pub(super) fn session_changed(&mut self) {
        let now = tokio::time::Instant::now();
        match self.session.published_at {
            Some(last) if now < last + super::SESSION_GAP => {
                self.session.due.get_or_insert(last + super::SESSION_GAP);
            }
            _ => self.publish_session_now(),
        }
    }

    /// The picture, now; the gap counts from here.
    pub(super) fn publish_session_now(&mut self) {
        self.session.published_at = Some(tokio::time::Instant::now());
        self.session.due = None;
        self.publish_session();
    }

    /// The retained `session` topic, and `all_sealed` once every unfinished game of the
    /// round is sealed.
    pub(super) fn publish_session(&mut self) {
        // The hall's picture is of the whole hall: after a start, not before every board
        // (the other nodes' too) has said where its game is.
        if !self.hall_reported() {
            return;
        }
        let round = self.round.as_ref().map(|r| r.number);
        let mut p = SessionPayload {
            as_of: self.timebase.now(),
            round,
            session_end: None,
            resumption: None,
            sealing: Vec::new(),
            sealed: Vec::new(),
            awaiting_opening: Vec::new(),
            playing: Vec::new(),
            finished: Vec::new(),
            all_sealed: false,
        };
        // A board no node lists any more (taken out of its node's `[[boards]]`, its last
        // state left on the broker): nobody's game, holding nothing back.
        let listed = self.nodes.listed_boards();
        for (board, note) in &self.session.boards {
            if round.is_none() || note.round != round {
                continue;
            }
            if !self.boards.contains_key(board) && !listed.contains(board) {
                continue;
            }
            if !note.finished {
                // The hall's session: the earliest end and resumption of its games (one
                // schedule for the hall is the normal case).
                if let Some(end) = note.session_end {
                    p.session_end = Some(p.session_end.map_or(end, |e: Millis| e.min(end)));
                }
                if let Some(r) = &note.resumption
                    && p.resumption.as_ref().is_none_or(|c| r.start < c.start)
                {
                    p.resumption = Some(r.clone());
                }
            }
            let list = match (note.finished, note.stage) {
                (true, _) => &mut p.finished,
                (false, Some(Stage::Sealing)) => &mut p.sealing,
                (false, Some(Stage::Adjourned)) => &mut p.sealed,
                (false, Some(Stage::AwaitingOpening | Stage::AwaitingCounterOpening)) => {
                    &mut p.awaiting_opening
                }
                (false, Some(Stage::Resumed) | None) => &mut p.playing,
            };
            list.push(board.clone());
        }
        p.all_sealed = !p.sealed.is_empty()
            && p.sealing.is_empty()
            && p.playing.is_empty()
            && p.awaiting_opening.is_empty();
        // The first picture after a start was told before it (it is in the journal).
        if !self.session.pictured {
            self.session.pictured = true;
            self.session.all_sealed_told = p.all_sealed;
        }
        if p.all_sealed && !self.session.all_sealed_told {
            tracing::info!(boards = p.sealed.len(), "every unfinished game is sealed");
            self.publisher.json_message(
                self.topics.hall_event(),
                &SessionEvent::AllSealed {
                    at: p.as_of,
                    round,
                    boards: p.sealed.clone(),
                },
            );
        }
        self.session.all_sealed_told = p.all_sealed;
        // One writer per retained topic: on MQTT this node's own `node/<node>/session`
        // (every node derives the same hall from the same retained states); the dashboard
        // reads `session` from its local feed, as with one node.
        // Serialized once for both (at 5000 boards the payload is ~100 KB).
        let Ok(bytes) = serde_json::to_vec(&p) else {
            return;
        };
        self.publisher
            .retained(self.topics.node_session(&self.settings.node), bytes.clone());
        self.publisher
            .feed()
            .push(&self.topics.session(), &bytes, true);
    }
}
