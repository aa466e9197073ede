//! The game's timers: the instants at which time alone, with no input, causes events. Each
//! timer says when it is due (`Game::timers`); `next_deadline` is the earliest and `poll`
//! fires them by name, so a driver only sleeps until the instant it is told.

use super::super::millis::Millis;
use super::{Game, PausedBy, Phase};

/// A timer of the game, named after what it is.
///
/// Declared in the order that settles timers due at one instant: the one declared first
/// fires first, and its events may disarm the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timer {
    /// 6.5: when to start White's clock: the scheduled start, armed until then.
    Start,
    /// 6.6 / I.10: when a player still absent is defaulted. Before the flag at one
    /// instant: a player later than the default time loses by 6.6 whatever the clock
    /// shows, and an absent opponent must not win on that instant's flag (nor 6.9 turn a
    /// default into a draw).
    DefaultTime,
    /// 6.3 / 6.8: when the running side's time reaches 0:00.
    Flag,
    /// I.1.1: when the session ends and the player to move must seal.
    SessionEnd,
    /// I.5 / I.14: when the resumption session of an adjourned game begins.
    ResumptionStart,
}

impl Timer {
    /// Every timer, in the order that settles a tie.
    pub const ALL: [Timer; 5] = [
        Timer::Start,
        Timer::DefaultTime,
        Timer::Flag,
        Timer::SessionEnd,
        Timer::ResumptionStart,
    ];
}

impl Game {
    /// The armed timers and the instant each is due, in [`Timer`] order.
    pub fn timers(&self) -> impl Iterator<Item = (Timer, Millis)> {
        Timer::ALL
            .into_iter()
            .filter_map(|timer| self.due(timer).map(|due| (timer, due)))
    }

    /// The timer `poll` fires next: the earliest; of several due at one instant, the
    /// first in [`Timer`] order.
    pub(super) fn next_timer(&self) -> Option<(Timer, Millis)> {
        self.timers().min_by_key(|&(timer, due)| (due, timer))
    }

    /// When `timer` is due, if it is armed.
    fn due(&self, timer: Timer) -> Option<Millis> {
        let running = self.phase == Phase::Running;
        match timer {
            Timer::Start => (self.phase == Phase::Scheduled).then_some(self.setup.start),
            // Not before the start: it comes later by the default time, measured from the
            // start. Not while adjourned: the resumption measures it again (I.10).
            Timer::DefaultTime => match self.phase {
                Phase::Running => self.default_pending().then(|| self.default_deadline()),
                Phase::Paused(PausedBy::Adjourned) => None,
                Phase::Paused(_) => self.default_deadline_while_paused(),
                Phase::Scheduled | Phase::Finished => None,
            },
            Timer::Flag => self.clock.zero_at().filter(|_| running),
            // Not while paused: a session end that passes meanwhile fires at the resumption
            // (`session_end_deadline` keeps it from going back in time).
            Timer::SessionEnd => self.session_end_deadline().filter(|_| running),
            Timer::ResumptionStart => match self.phase {
                Phase::Paused(PausedBy::Adjourned) => self.resumption_deadline(),
                _ => None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::adjournment::Resumption;
    use super::super::super::color::Color;
    use super::super::super::time_control::parse;
    use super::super::{Event, Game, GameResult, Input, Score, Setup, Termination};
    use super::*;

    const T0: Millis = Millis(1_800_000_000_000);

    fn at(secs: i64) -> Millis {
        T0 + Millis(secs * 1000)
    }

    /// 5 minutes each, default time 10 minutes: the flag comes before the default only
    /// when a test makes it.
    fn setup() -> Setup {
        let mut s = Setup::new("Arias, Eva", "Brandt, Ole", parse("300").unwrap(), T0);
        s.default_time = Millis::from_mins(10);
        s
    }

    fn game(s: Setup) -> Game {
        Game::new(s).unwrap()
    }

    fn fold(game: &mut Game, events: &[Event]) {
        for e in events {
            game.evolve(e);
        }
    }

    fn advance(game: &mut Game, now: Millis) -> Vec<Event> {
        let events = game.poll(now);
        fold(game, &events);
        events
    }

    fn input(game: &mut Game, input: Input, now: Millis) -> Vec<Event> {
        let events = game
            .decide(&input, now)
            .unwrap_or_else(|r| panic!("{input:?} at {now:?} rejected: {r}"));
        fold(game, &events);
        events
    }

    fn present(game: &mut Game, side: Color, now: Millis) {
        input(
            game,
            Input::Present {
                side,
                arbiter: "IA".into(),
            },
            now,
        );
    }

    fn play(game: &mut Game, mv: &str, now: Millis) {
        input(
            game,
            Input::Press {
                side: None,
                mv: Some(mv.into()),
            },
            now,
        );
    }

    fn armed(game: &Game) -> Vec<Timer> {
        game.timers().map(|(timer, _)| timer).collect()
    }

    /// `timer` is the one due at `due`: `next_deadline` says so, nothing fires a
    /// millisecond before, and `poll` at `due` gives `expected`.
    fn assert_fires(game: &Game, timer: Timer, due: Millis, expected: &[Event]) {
        assert_eq!(game.next_timer(), Some((timer, due)));
        assert_eq!(game.next_deadline(), Some(due));
        assert_eq!(game.poll(due - Millis(1)), []);
        assert_eq!(game.poll(due), expected);
    }

    fn ended(at: Millis, score: Score, termination: Termination) -> Event {
        Event::GameEnded {
            at,
            result: GameResult { score, termination },
            replaces: None,
            confirmed_by: None,
        }
    }

    #[test]
    fn rule_6_5_start_is_the_timer_due_before_the_scheduled_start() {
        let g = game(setup());
        assert_eq!(armed(&g), [Timer::Start]);
        assert_fires(
            &g,
            Timer::Start,
            T0,
            &[Event::ClockStarted {
                at: T0,
                side: Color::White,
            }],
        );
    }

    /// Black absent at `due`: default time passes and White wins (6.6).
    fn black_defaults(due: Millis) -> [Event; 2] {
        [
            Event::DefaultTimePassed {
                at: due,
                absent: vec![Color::Black],
            },
            ended(
                due,
                Score::WhiteWins,
                Termination::Default {
                    absent: vec![Color::Black],
                },
            ),
        ]
    }

    #[test]
    fn rule_6_6_default_time_is_the_timer_due_when_a_player_is_absent() {
        let mut s = setup();
        s.tc = parse("3600").unwrap();
        let mut g = game(s);
        present(&mut g, Color::White, at(-30));
        advance(&mut g, T0);
        assert_eq!(armed(&g), [Timer::DefaultTime, Timer::Flag]);
        // 6.6: "more than" the default time, so a millisecond after it.
        let due = at(600) + Millis(1);
        assert_fires(&g, Timer::DefaultTime, due, &black_defaults(due));
    }

    #[test]
    fn rule_6_6_default_time_is_the_timer_due_while_the_clocks_are_paused() {
        let mut g = game(setup());
        present(&mut g, Color::White, at(-30));
        advance(&mut g, T0);
        input(
            &mut g,
            Input::Pause {
                arbiter: "IA".into(),
                reason: "power cut".into(),
            },
            at(60),
        );
        // The clocks stand still, the hall's clock does not (6.6).
        assert_eq!(armed(&g), [Timer::DefaultTime]);
        let due = at(600) + Millis(1);
        assert_fires(&g, Timer::DefaultTime, due, &black_defaults(due));
    }

    #[test]
    fn rule_6_6_default_time_is_not_a_timer_when_the_pauses_extend_it() {
        let mut s = setup();
        s.pauses_extend_default_time = true;
        let mut g = game(s);
        present(&mut g, Color::White, at(-30));
        advance(&mut g, T0);
        input(
            &mut g,
            Input::Pause {
                arbiter: "IA".into(),
                reason: "power cut".into(),
            },
            at(60),
        );
        assert_eq!(armed(&g), []);
        assert_eq!(g.next_deadline(), None);
        assert_eq!(g.poll(at(3600)), []);
    }

    #[test]
    fn rule_6_8_flag_is_the_timer_due_when_the_running_side_runs_out() {
        let mut g = game(setup());
        present(&mut g, Color::White, at(-30));
        present(&mut g, Color::Black, at(-30));
        advance(&mut g, T0);
        assert_eq!(armed(&g), [Timer::Flag]);
        let due = at(300);
        assert_fires(
            &g,
            Timer::Flag,
            due,
            &[
                Event::FlagFell {
                    at: due,
                    side: Color::White,
                    period: 1,
                    moves_made: 0,
                    moves_required: None,
                    frozen: g.setup().clock.freeze_after_last_flag,
                },
                ended(
                    due,
                    Score::BlackWins,
                    Termination::Flag { side: Color::White },
                ),
            ],
        );
    }

    #[test]
    fn rule_6_6_default_time_fires_before_a_flag_due_at_the_same_instant() {
        let mut s = setup();
        // White's 10 minutes run out as the default time passes, a millisecond after it.
        s.tc = parse("600").unwrap();
        s.default_time = Millis::from_mins(10) - Millis(1);
        let mut g = game(s);
        present(&mut g, Color::White, at(-30));
        advance(&mut g, T0);
        let due = at(600);
        assert_eq!(
            g.timers().collect::<Vec<_>>(),
            [(Timer::DefaultTime, due), (Timer::Flag, due)]
        );
        assert_fires(&g, Timer::DefaultTime, due, &black_defaults(due));
    }

    fn with_session_end(end: Millis) -> Game {
        let mut g = game(setup());
        input(
            &mut g,
            Input::SetSessionEnd {
                end: Some(end),
                arbiter: "schedule".into(),
            },
            at(-60),
        );
        present(&mut g, Color::White, at(-30));
        present(&mut g, Color::Black, at(-30));
        advance(&mut g, T0);
        g
    }

    #[test]
    fn rule_i_1_1_session_end_is_the_timer_due_at_the_end_of_the_session() {
        let mut g = with_session_end(at(200));
        play(&mut g, "e4", at(10));
        assert_eq!(armed(&g), [Timer::Flag, Timer::SessionEnd]);
        assert_fires(
            &g,
            Timer::SessionEnd,
            at(200),
            &[Event::AdjournmentOrdered {
                at: at(200),
                sealer: Color::Black,
                arbiter: None,
                early: false,
            }],
        );
    }

    #[test]
    fn rule_6_8_a_flag_fires_before_a_session_end_at_the_same_instant() {
        let g = with_session_end(at(300));
        assert_eq!(
            g.timers().collect::<Vec<_>>(),
            [(Timer::Flag, at(300)), (Timer::SessionEnd, at(300))]
        );
        assert_eq!(g.next_timer(), Some((Timer::Flag, at(300))));
        assert!(matches!(
            g.poll(at(300)).first(),
            Some(Event::FlagFell {
                side: Color::White,
                ..
            })
        ));
    }

    #[test]
    fn rule_i_1_1_session_end_waits_while_the_clocks_are_paused() {
        let mut g = with_session_end(at(200));
        input(
            &mut g,
            Input::Pause {
                arbiter: "IA".into(),
                reason: "noise".into(),
            },
            at(100),
        );
        assert_eq!(armed(&g), []);
        assert_eq!(g.poll(at(250)), []);
        input(
            &mut g,
            Input::Resume {
                arbiter: "IA".into(),
            },
            at(250),
        );
        // Due at the resumption itself, never before the latest event.
        assert_eq!(g.next_timer(), Some((Timer::SessionEnd, at(250))));
    }

    #[test]
    fn rule_i_14_resumption_start_is_the_timer_due_while_adjourned() {
        let mut g = with_session_end(at(200));
        play(&mut g, "e4", at(10));
        advance(&mut g, at(200));
        input(
            &mut g,
            Input::Seal {
                side: None,
                mv: "e5".into(),
                nonce: "07".repeat(16),
                on_board: false,
            },
            at(210),
        );
        input(&mut g, Input::CommitSeal { arbiter: None }, at(220));
        assert_eq!(armed(&g), [], "adjourned, no resumption known yet");
        let resumption = Resumption {
            start: at(86_400),
            end: None,
            place: "Hall B".into(),
        };
        input(
            &mut g,
            Input::ScheduleResumption {
                resumption: resumption.clone(),
                arbiter: "IA".into(),
            },
            at(300),
        );
        assert_eq!(armed(&g), [Timer::ResumptionStart]);
        let (white_ms, black_ms) = (
            g.clock().side(Color::White).remaining,
            g.clock().side(Color::Black).remaining,
        );
        let fen = g.position().map(super::super::fen_of);
        assert_fires(
            &g,
            Timer::ResumptionStart,
            at(86_400),
            &[Event::ResumptionStarted {
                at: at(86_400),
                resumption,
                responder: Color::White,
                white_ms,
                black_ms,
                fen,
            }],
        );
    }

    #[test]
    fn a_finished_game_has_no_timer() {
        let mut g = game(setup());
        advance(&mut g, at(600) + Millis(1));
        assert!(g.result().is_some());
        assert_eq!(armed(&g), []);
        assert_eq!(g.next_deadline(), None);
    }
}
