//! A board's alert book: which alerts stand and with what message, so that each is raised
//! once (a repeat with the same message publishes nothing) and cleared once, and what to
//! do with a retained alert the broker kept from before this start. Sans-IO: it says what
//! to publish; the actor publishes it.

use std::collections::{HashMap, HashSet};

use crate::alert::{AlertKind, Said, Severity};
use crate::mqtt::payload::AlertPayload;
use crate::rules::Millis;

/// The alerts that follow the game's state (`update_game_alerts`): rebuilt from the
/// game after a restart, cleared when the board has no game.
pub const FOLLOW_THE_GAME: [AlertKind; 4] = [
    AlertKind::ResultPending,
    AlertKind::PlayerPause,
    AlertKind::BothFlags,
    AlertKind::ClockDiscrepancy,
];

/// The alerts a new game on the board ends, besides those that follow the game: what the
/// old game's board or clock showed is moot.
pub const ENDED_BY_A_NEW_GAME: [AlertKind; 5] = [
    AlertKind::StrayPress,
    AlertKind::ClockButtons,
    AlertKind::MoveRejected,
    AlertKind::ResultShown,
    AlertKind::Irregular,
];

/// Whether a kind is rebuilt from the journal at start-up (so a retained copy that is not
/// raised again is resolved).
fn from_the_journal(kind: AlertKind) -> bool {
    FOLLOW_THE_GAME.contains(&kind) || kind == AlertKind::Storage
}

/// What to do with a retained alert from before this start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    /// Not this board's to decide (another board's id, hall-wide kinds), or raised anew.
    Ignore,
    /// Resolved: clear the retained copy (its topic id).
    Clear(String),
    /// Still standing as far as this run knows (hardware, a refused press): taken over.
    Adopt,
}

/// The alerts of one board.
#[derive(Debug)]
pub struct Alerts {
    board: String,
    /// Standing alerts and their messages.
    standing: HashMap<AlertKind, String>,
    /// Alerts this run found resolved while it did not know them as raised: a retained
    /// copy the broker kept from before the start is cleared when it arrives.
    resolved: HashSet<AlertKind>,
}

impl Alerts {
    pub fn new(board: &str) -> Alerts {
        Alerts {
            board: board.to_string(),
            standing: HashMap::new(),
            resolved: HashSet::new(),
        }
    }

    /// The alert's id (its topic level): `<board>-<kind>`.
    pub fn id(&self, kind: AlertKind) -> String {
        format!("{}-{}", self.board, kind.slug())
    }

    /// How many stand (the hall's heartbeat counts them).
    pub fn count(&self) -> usize {
        self.standing.len()
    }

    pub fn is_standing(&self, kind: AlertKind) -> bool {
        self.standing.contains_key(&kind)
    }

    /// Raise `kind`; the payload to publish, or `None` when it stands with this message.
    pub fn raise(
        &mut self,
        kind: AlertKind,
        severity: Severity,
        said: impl Into<Said>,
        since: Millis,
        error: Option<String>,
    ) -> Option<AlertPayload> {
        let said = said.into();
        debug_assert!(
            said.code.is_empty() || said.listed(),
            "alert {} raised with {:?}, not the parameters ALERT_CODES lists",
            said.code,
            said.params.keys().collect::<Vec<_>>()
        );
        let Said {
            code,
            params,
            message,
        } = said;
        self.resolved.remove(&kind);
        if self.standing.get(&kind) == Some(&message) {
            return None;
        }
        self.standing.insert(kind, message.clone());
        Some(AlertPayload {
            id: self.id(kind),
            board: Some(self.board.clone()),
            kind,
            code: if code.is_empty() { kind.slug() } else { code }.to_string(),
            params,
            severity,
            message,
            since,
            error,
        })
    }

    /// Clear `kind`; its id when it stood (publish the empty retained payload), else
    /// `None` (and a retained copy from before the start will be cleared on arrival).
    pub fn clear(&mut self, kind: AlertKind) -> Option<String> {
        if self.standing.remove(&kind).is_some() {
            Some(self.id(kind))
        } else {
            self.resolved.insert(kind);
            None
        }
    }

    /// A retained alert from before this start. Those that follow the game were rebuilt
    /// from the journal at start: one not raised again is resolved. The others come from
    /// the hardware or a refused press, which the journal does not hold: the alert is
    /// taken over as it is (and cleared when its cause is), unless this run already saw
    /// it resolved.
    pub fn stale(&mut self, alert: &AlertPayload) -> Stale {
        let kind = alert.kind;
        if alert.id != self.id(kind)
            || self.standing.contains_key(&kind)
            || matches!(
                kind,
                AlertKind::BoardMoved
                    | AlertKind::OutgoingQueue
                    | AlertKind::AuthFailures
                    | AlertKind::BroadcastPush
                    | AlertKind::BoardClaimedTwice
            )
        {
            return Stale::Ignore;
        }
        if from_the_journal(kind) || self.resolved.contains(&kind) {
            Stale::Clear(alert.id.clone())
        } else {
            self.standing.insert(kind, alert.message.clone());
            Stale::Adopt
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raise(a: &mut Alerts, kind: AlertKind, message: &str) -> Option<AlertPayload> {
        a.raise(
            kind,
            Severity::Warning,
            message.to_string(),
            Millis(5),
            None,
        )
    }

    fn retained(a: &Alerts, kind: AlertKind, message: &str) -> AlertPayload {
        AlertPayload {
            id: a.id(kind),
            board: Some("b1".into()),
            kind,
            code: kind.slug().to_string(),
            params: Default::default(),
            severity: Severity::Info,
            message: message.into(),
            since: Millis(1),
            error: None,
        }
    }

    #[test]
    fn an_alert_is_published_once_per_message_and_cleared_once() {
        let mut a = Alerts::new("b1");
        let p = raise(&mut a, AlertKind::Irregular, "the board shows x").expect("raised");
        assert_eq!(p.id, "b1-irregular");
        assert_eq!(p.board.as_deref(), Some("b1"));
        assert_eq!((p.since, p.severity), (Millis(5), Severity::Warning));
        assert!(raise(&mut a, AlertKind::Irregular, "the board shows x").is_none());
        // A new message is news.
        assert!(raise(&mut a, AlertKind::Irregular, "the board shows y").is_some());
        assert!(a.is_standing(AlertKind::Irregular));
        assert_eq!(
            a.clear(AlertKind::Irregular).as_deref(),
            Some("b1-irregular")
        );
        assert_eq!(a.clear(AlertKind::Irregular), None, "cleared once");
        assert!(!a.is_standing(AlertKind::Irregular));
        // Raised again after the clear: published again.
        assert!(raise(&mut a, AlertKind::Irregular, "the board shows y").is_some());
    }

    #[test]
    fn a_retained_alert_from_before_the_start_is_adopted_cleared_or_left_alone() {
        let mut a = Alerts::new("b1");
        // Hardware: it may still stand; taken over, and cleared like one raised here.
        let port = retained(&a, AlertKind::Port, "cannot open");
        assert_eq!(a.stale(&port), Stale::Adopt);
        assert!(a.is_standing(AlertKind::Port));
        assert_eq!(a.stale(&port), Stale::Ignore, "known now");
        assert_eq!(a.clear(AlertKind::Port).as_deref(), Some("b1-port"));
        // A low battery too: the clock's first reading after the start clears it if the
        // batteries were changed meanwhile.
        let battery = retained(&a, AlertKind::LowBattery, "low");
        assert_eq!(a.stale(&battery), Stale::Adopt);
        assert_eq!(
            a.clear(AlertKind::LowBattery).as_deref(),
            Some("b1-low-battery")
        );
        // Following the game, or storage: rebuilt from the journal, so a copy not raised
        // again is resolved.
        for kind in FOLLOW_THE_GAME.into_iter().chain([AlertKind::Storage]) {
            let old = retained(&a, kind, "old");
            assert_eq!(a.stale(&old), Stale::Clear(a.id(kind)), "{kind:?}");
        }
        // Raised again by this run: this run's copy stands.
        raise(&mut a, AlertKind::ResultPending, "flag");
        let old = retained(&a, AlertKind::ResultPending, "old");
        assert_eq!(a.stale(&old), Stale::Ignore);
        // Seen resolved by this run before the retained copy arrived.
        assert_eq!(a.clear(AlertKind::StrayPress), None);
        let old = retained(&a, AlertKind::StrayPress, "old press");
        assert_eq!(a.stale(&old), Stale::Clear("b1-stray-press".into()));
        // Another board's, and the hall's own kinds, are not this board's to decide.
        let mut other = retained(&a, AlertKind::Offline, "gone");
        other.id = "b2-offline".into();
        assert_eq!(a.stale(&other), Stale::Ignore);
        for kind in [
            AlertKind::BoardMoved,
            AlertKind::OutgoingQueue,
            AlertKind::AuthFailures,
            AlertKind::BroadcastPush,
            AlertKind::BoardClaimedTwice,
        ] {
            assert_eq!(a.stale(&retained(&a, kind, "x")), Stale::Ignore);
        }
    }

    #[test]
    fn the_game_following_kinds_are_listed_once_and_apart_from_the_others() {
        for k in ENDED_BY_A_NEW_GAME {
            assert!(!FOLLOW_THE_GAME.contains(&k));
            assert!(!from_the_journal(k));
        }
        assert!(from_the_journal(AlertKind::Storage));
        assert!(!from_the_journal(AlertKind::Offline));
    }
}
