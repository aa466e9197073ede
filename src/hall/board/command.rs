//! An arbiter's command on the board's game, stored before it is applied (issue 36): its
//! events and its `ok` answer go to the journal as one batch, and only once that batch is
//! on disk does the game change. A full disk refuses the command (`storage`) with the game
//! as it was, instead of answering `ok` for a change that a restart would lose, or whose
//! resend after a restart would apply twice.

use super::*;
use crate::intake::answers::PreparedAnswer;

impl BoardActor {
    /// `act` with its answer prepared. Only the rules' inputs are stored this way; the
    /// other acts (turning the clock round, sealing, the mode) keep their own storage.
    pub(super) async fn on_command(
        &mut self,
        act: BoardAct,
        answer: PreparedAnswer,
    ) -> Result<(), Refusal> {
        let BoardAct::Rules(input) = act else {
            return self.on_act(act).await;
        };
        let not_stored = |board: &str, reason: String| Refusal::CommandNotStored {
            board: board.to_string(),
            action: answer.action().into(),
            reason: reason.into(),
        };
        // Events that wait for the disk come first; while they cannot be stored, no
        // command is taken (its events would have to overtake them).
        self.flush().await;
        if !self.unstored.is_empty() {
            let reason = format!(
                "{} earlier event(s) of this board still wait to be stored",
                self.unstored.len()
            );
            return Err(not_stored(&self.id, reason));
        }
        let now = self.now();
        let events = self.decide_events(input, now).await?;
        let game = self.slot.as_ref().map_or(0, |s| s.id);
        let mut records: Vec<Record> = events
            .iter()
            .zip(self.seq + 1..)
            .map(|(event, seq)| Record::Event {
                board: self.id.clone(),
                seq,
                game,
                event: event.clone(),
            })
            .collect();
        records.push(answer.record.clone());
        if let Err(e) = self.journal.append(records).await {
            tracing::warn!(board = %self.id, action = %answer.action(), "command refused: its record could not be stored ({e})");
            return Err(not_stored(&self.id, e.to_string()));
        }
        answer.mark_stored();
        self.apply_stored(events).await;
        // A new position for the move reader, or a resumed clock: keep the board in step.
        self.clear(AlertKind::StrayPress);
        Ok(())
    }
}
