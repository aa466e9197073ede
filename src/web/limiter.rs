//! How often a dashboard login may be tried (docs/SECURITY.md, "Over the web"): a sans-IO
//! decision over the recent failures of each client address and of each account, with the
//! time passed in, so every rule is proven by unit tests with explicit instants and no
//! runtime. The login handler asks [`LoginLimiter::check`] before it looks at the
//! password, and tells the limiter how the password check came out.
//!
//! The rule, for a client and for an account alike: the first [`FREE_FAILURES`] failures
//! cost nothing; each further one makes the next attempt wait, [`FIRST_WAIT`] doubling
//! ([`FIRST_WAIT`], 2×, 4×, …); at [`LOCKOUT_FAILURES`] the next attempt waits
//! [`LOCKOUT`]. The count is forgotten after [`FORGET_AFTER`] without a failure, and a
//! success clears the client's and the account's failures. A refused attempt (during a
//! wait) is not a failure: its password was never checked.

use std::collections::HashMap;
use std::net::IpAddr;

use crate::rules::Millis;

/// Failures that cost nothing: a typo, a caps lock, a second typo while looking for it.
pub const FREE_FAILURES: u32 = 3;
/// The wait after the first failure beyond the free ones; it doubles with each further
/// failure. One second is nothing to an arbiter, and with the doubling an attacker gets
/// at most [`LOCKOUT_FAILURES`] guesses per [`LOCKOUT`] instead of the ~35 per second one
/// PBKDF2 check per core allows (0.58 s for 20 on this hall's Pi).
pub const FIRST_WAIT: Millis = Millis(1_000);
/// Failures in a row that lock the client or the account out for [`LOCKOUT`]: after the
/// doubling (1 s … 64 s) a person has long stopped guessing, a program has not.
pub const LOCKOUT_FAILURES: u32 = 10;
/// How long a lockout lasts: long enough that guessing an 8-character password is
/// hopeless (40 guesses an hour), short enough that an arbiter who locked themselves out
/// is back before the round's next time control, without anyone restarting the daemon.
pub const LOCKOUT: Millis = Millis(15 * 60_000);
/// A record with no failure for this long is forgotten; the lockout's length, so a
/// lockout ends exactly when its record expires.
pub const FORGET_AFTER: Millis = LOCKOUT;
/// Client addresses tracked at once. A hall has a few dozen devices; 4096 records of a
/// few dozen bytes are nothing, and a flood of addresses (IPv6 makes that cheap) cannot
/// grow memory past them: at the cap the expired records go first, then the client whose
/// last failure is oldest (see [`LoginLimiter::record_failure`]).
pub const MAX_CLIENTS: usize = 4096;
/// Account names tracked at once, with the same rule at the cap. Unknown names are tracked
/// too: refusing only real accounts with 429 would tell an attacker which ones exist.
pub const MAX_ACCOUNTS: usize = 4096;
/// An account name is kept to this many characters (ids are short, `[a-z0-9-]+`), so a
/// 1 MiB login body cannot make a 1 MiB key.
pub const MAX_ACCOUNT_CHARS: usize = 64;

/// Failed logins across the whole hall, from any clients at any accounts, within
/// [`BURST_WINDOW`] that raise the `auth_failures` alert by themselves. The per-client and
/// per-account limits stop one guesser; a spray (a few guesses each from many addresses
/// at many accounts) stays under both, and this is what shows it. A hall's dozen arbiters
/// mistyping do not come near twenty in a minute.
pub const BURST_FAILURES: usize = 20;
/// The window of [`BURST_FAILURES`].
pub const BURST_WINDOW: Millis = Millis(60_000);

/// Who a limit applies to: a client address or an account name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Client,
    Account,
}

/// What [`LoginLimiter::check`] says about an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Check the password.
    Try,
    /// Refuse without checking the password; try again in `retry_after`.
    Wait {
        retry_after: Millis,
        scope: Scope,
        /// The wait is a lockout (not a back-off step).
        locked: bool,
    },
}

/// What a failure changed: whether it started a lockout, which is what the hall's
/// `auth_failures` alert is raised for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Recorded {
    pub client_locked: bool,
    pub account_locked: bool,
    /// This failure made [`BURST_FAILURES`] in the hall within [`BURST_WINDOW`] (said once
    /// per burst: the next is said only after a whole window below the mark).
    pub burst: bool,
}

impl Recorded {
    pub fn locked(&self) -> bool {
        self.client_locked || self.account_locked
    }
}

/// The key of a client: an IPv4 address, or an IPv6 address's /64 (one host usually holds
/// a whole /64, so counting its single addresses would let it pick a new one per guess).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientKey {
    V4([u8; 4]),
    V6Net([u8; 8]),
}

impl ClientKey {
    pub fn of(ip: IpAddr) -> ClientKey {
        match ip {
            IpAddr::V4(a) => ClientKey::V4(a.octets()),
            IpAddr::V6(a) => match a.to_ipv4_mapped() {
                Some(v4) => ClientKey::V4(v4.octets()),
                None => {
                    let o = a.octets();
                    ClientKey::V6Net([o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]])
                }
            },
        }
    }
}

/// One client's or one account's failures since the last success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    failures: u32,
    last: Millis,
}

impl Record {
    /// When the next attempt may be made, if it must wait at all.
    fn next_allowed(&self) -> Option<(Millis, bool)> {
        if self.failures >= LOCKOUT_FAILURES {
            return Some((self.last + LOCKOUT, true));
        }
        let beyond = self.failures.checked_sub(FREE_FAILURES)?;
        // 1 s × 2^(beyond): at most 2^(LOCKOUT_FAILURES - FREE_FAILURES - 1), no overflow.
        let wait = Millis(FIRST_WAIT.0.saturating_mul(1i64 << beyond.min(30)));
        Some((self.last + wait, false))
    }

    fn expired(&self, now: Millis) -> bool {
        now - self.last >= FORGET_AFTER
    }
}

/// A bounded map of records, forgetting the stale ones.
#[derive(Debug, Clone)]
struct Book<K> {
    records: HashMap<K, Record>,
    cap: usize,
}

impl<K: std::hash::Hash + Eq + Clone> Book<K> {
    fn new(cap: usize) -> Book<K> {
        Book {
            records: HashMap::new(),
            cap,
        }
    }

    fn live(&self, key: &K, now: Millis) -> Option<Record> {
        self.records.get(key).filter(|r| !r.expired(now)).copied()
    }

    fn wait(&self, key: &K, now: Millis) -> Option<(Millis, bool)> {
        let (at, locked) = self.live(key, now)?.next_allowed()?;
        (at > now).then_some((at - now, locked))
    }

    /// One more failure; true when it is the one that locks out.
    fn fail(&mut self, key: K, now: Millis) -> bool {
        let before = self.live(&key, now).map_or(0, |r| r.failures);
        if !self.records.contains_key(&key) && self.records.len() >= self.cap {
            self.make_room(now);
        }
        let failures = before.saturating_add(1);
        self.records.insert(
            key,
            Record {
                failures,
                last: now,
            },
        );
        failures == LOCKOUT_FAILURES
    }

    /// At the cap: drop what expired, and if that is not enough, the record whose last
    /// failure is oldest. O(n) over at most `cap` records, only when a new key fails while
    /// the book is full, each failure having cost a PBKDF2 check first.
    fn make_room(&mut self, now: Millis) {
        self.records.retain(|_, r| !r.expired(now));
        if self.records.len() < self.cap {
            return;
        }
        let oldest = self
            .records
            .iter()
            .min_by_key(|(_, r)| r.last)
            .map(|(k, _)| k.clone());
        if let Some(k) = oldest {
            self.records.remove(&k);
        }
    }

    fn clear(&mut self, key: &K) {
        self.records.remove(key);
    }

    fn len(&self) -> usize {
        self.records.len()
    }
}

/// The login limiter: pure, the caller passes `now` (any monotonic `Millis`).
#[derive(Debug, Clone)]
pub struct LoginLimiter {
    clients: Book<ClientKey>,
    accounts: Book<String>,
    /// The instants of the hall's recent failures, oldest first, at most
    /// [`BURST_FAILURES`] of them (older ones say nothing more).
    recent: std::collections::VecDeque<Millis>,
    /// The burst being reported: no second alert until the window has fallen below the mark.
    in_burst: bool,
}

impl Default for LoginLimiter {
    fn default() -> Self {
        LoginLimiter::with_caps(MAX_CLIENTS, MAX_ACCOUNTS)
    }
}

/// The key of an account name: trimmed as the login trims it, at most
/// [`MAX_ACCOUNT_CHARS`] characters.
fn account_key(account: &str) -> String {
    account.trim().chars().take(MAX_ACCOUNT_CHARS).collect()
}

impl LoginLimiter {
    /// A limiter with other caps (for tests of the cap).
    pub fn with_caps(clients: usize, accounts: usize) -> LoginLimiter {
        LoginLimiter {
            clients: Book::new(clients.max(1)),
            accounts: Book::new(accounts.max(1)),
            recent: std::collections::VecDeque::with_capacity(BURST_FAILURES),
            in_burst: false,
        }
    }

    /// May `client` try `account`'s password now? The longer of the two waits wins (on a
    /// tie, the account's), so neither a new address nor a new account name gets around
    /// the other limit.
    pub fn check(&self, client: IpAddr, account: &str, now: Millis) -> Verdict {
        let by_client = self
            .clients
            .wait(&ClientKey::of(client), now)
            .map(|w| (w, Scope::Client));
        let by_account = self
            .accounts
            .wait(&account_key(account), now)
            .map(|w| (w, Scope::Account));
        match [by_client, by_account]
            .into_iter()
            .flatten()
            .max_by_key(|((wait, _), _)| *wait)
        {
            Some(((retry_after, locked), scope)) => Verdict::Wait {
                retry_after,
                scope,
                locked,
            },
            None => Verdict::Try,
        }
    }

    /// A wrong password (or an unknown account) from `client`.
    pub fn record_failure(&mut self, client: IpAddr, account: &str, now: Millis) -> Recorded {
        Recorded {
            client_locked: self.clients.fail(ClientKey::of(client), now),
            account_locked: self.accounts.fail(account_key(account), now),
            burst: self.burst_after_failure(now),
        }
    }

    /// The hall's failures in the window, with this one: is it the one that makes a burst?
    fn burst_after_failure(&mut self, now: Millis) -> bool {
        self.forget_before(now - BURST_WINDOW);
        if self.recent.len() == BURST_FAILURES {
            self.recent.pop_front();
        }
        self.recent.push_back(now);
        let burst = self.recent.len() >= BURST_FAILURES;
        let first = burst && !self.in_burst;
        self.in_burst = burst;
        first
    }

    fn forget_before(&mut self, cutoff: Millis) {
        while self.recent.front().is_some_and(|t| *t <= cutoff) {
            self.recent.pop_front();
        }
    }

    /// The right password: the client and the account start afresh, and the failure the
    /// attempt was counted as beforehand is taken back from the hall's count.
    pub fn record_success(&mut self, client: IpAddr, account: &str, _now: Millis) {
        self.clients.clear(&ClientKey::of(client));
        self.accounts.clear(&account_key(account));
        self.recent.pop_back();
        if self.recent.len() < BURST_FAILURES {
            self.in_burst = false;
        }
    }

    /// Records held: (clients, accounts).
    pub fn tracked(&self) -> (usize, usize) {
        (self.clients.len(), self.accounts.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Millis = Millis(1_000_000);

    fn ip(s: &str) -> IpAddr {
        s.parse()
            .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED))
    }

    fn fail_n(l: &mut LoginLimiter, client: &str, account: &str, n: u32, at: Millis) {
        for _ in 0..n {
            l.record_failure(ip(client), account, at);
        }
    }

    fn wait(v: Verdict) -> Option<Millis> {
        match v {
            Verdict::Try => None,
            Verdict::Wait { retry_after, .. } => Some(retry_after),
        }
    }

    #[test]
    fn the_first_three_failures_cost_no_wait() {
        let mut l = LoginLimiter::default();
        fail_n(&mut l, "10.0.0.1", "chief", 2, T0);
        assert_eq!(l.check(ip("10.0.0.1"), "chief", T0), Verdict::Try);
        fail_n(&mut l, "10.0.0.1", "chief", 1, T0);
        assert_ne!(l.check(ip("10.0.0.1"), "chief", T0), Verdict::Try);
    }

    #[test]
    fn each_failure_beyond_the_free_ones_doubles_the_wait() {
        let mut l = LoginLimiter::default();
        let mut now = T0;
        fail_n(&mut l, "10.0.0.1", "chief", FREE_FAILURES, now);
        for expected in [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000] {
            assert_eq!(
                wait(l.check(ip("10.0.0.1"), "chief", now)),
                Some(Millis(expected))
            );
            // A millisecond early is still refused; at the instant it is allowed.
            assert_eq!(
                wait(l.check(ip("10.0.0.1"), "chief", now + Millis(expected - 1))),
                Some(Millis(1))
            );
            now += Millis(expected);
            assert_eq!(l.check(ip("10.0.0.1"), "chief", now), Verdict::Try);
            l.record_failure(ip("10.0.0.1"), "chief", now);
        }
        // That was the tenth failure: a lockout (of both; on a tie the account is named).
        assert_eq!(
            l.check(ip("10.0.0.1"), "chief", now),
            Verdict::Wait {
                retry_after: LOCKOUT,
                scope: Scope::Account,
                locked: true
            }
        );
    }

    #[test]
    fn the_tenth_failure_locks_out_for_fifteen_minutes_and_says_so_once() {
        let mut l = LoginLimiter::default();
        for n in 1..LOCKOUT_FAILURES {
            assert!(
                !l.record_failure(ip("10.0.0.1"), "chief", T0).locked(),
                "failure {n}"
            );
        }
        let r = l.record_failure(ip("10.0.0.1"), "chief", T0);
        assert_eq!(
            r,
            Recorded {
                client_locked: true,
                account_locked: true,
                burst: false,
            }
        );
        let later = T0 + LOCKOUT - Millis(1);
        assert!(matches!(
            l.check(ip("10.0.0.1"), "chief", later),
            Verdict::Wait { locked: true, .. }
        ));
        // Further failures (were one let through) do not raise the alarm again.
        assert!(!l.record_failure(ip("10.0.0.1"), "chief", T0).locked());
        assert_eq!(
            l.check(ip("10.0.0.1"), "chief", T0 + Millis(1) + LOCKOUT),
            Verdict::Try
        );
    }

    #[test]
    fn a_spray_from_many_clients_at_many_accounts_is_a_burst_said_once() {
        // Two guesses each from 10 addresses at 10 accounts: no client and no account is
        // held up, but the hall has seen 20 failures within a minute.
        let mut l = LoginLimiter::default();
        let mut bursts = Vec::new();
        for n in 0..BURST_FAILURES {
            let client = format!("10.0.1.{}", n / 2);
            let account = format!("acct-{}", n / 2);
            let at = T0 + Millis(2_000 * n as i64);
            let r = l.record_failure(ip(&client), &account, at);
            assert!(!r.locked(), "{n}");
            assert_eq!(l.check(ip(&client), &account, at), Verdict::Try, "{n}");
            bursts.push(r.burst);
        }
        assert_eq!(bursts.iter().filter(|b| **b).count(), 1, "{bursts:?}");
        assert!(bursts[BURST_FAILURES - 1], "the twentieth makes the burst");
        // More failures in the same burst say nothing new.
        let t = T0 + Millis(2_000 * BURST_FAILURES as i64);
        assert!(!l.record_failure(ip("10.0.2.1"), "x", t).burst);
        // After a quiet window, a new burst is said again.
        let later = t + BURST_WINDOW + Millis(1);
        let again: Vec<bool> = (0..BURST_FAILURES)
            .map(|n| {
                l.record_failure(ip(&format!("10.0.3.{n}")), "y", later + Millis(n as i64))
                    .burst
            })
            .collect();
        assert_eq!(again.iter().filter(|b| **b).count(), 1, "{again:?}");
    }

    #[test]
    fn failures_spread_over_more_than_a_minute_are_no_burst() {
        let mut l = LoginLimiter::default();
        for n in 0..(3 * BURST_FAILURES) {
            let at = T0 + Millis(BURST_WINDOW.0 / BURST_FAILURES as i64 * n as i64 + 1);
            let r = l.record_failure(ip(&format!("10.0.4.{n}")), &format!("a{n}"), at);
            assert!(!r.burst, "{n}");
        }
    }

    #[test]
    fn a_right_password_takes_back_its_counted_failure() {
        // 19 failures and then logins that succeed: each was counted beforehand and taken
        // back, so the hall never reaches the mark.
        let mut l = LoginLimiter::default();
        for n in 0..BURST_FAILURES - 1 {
            l.record_failure(ip(&format!("10.0.5.{n}")), "a", T0);
        }
        for n in 0..5 {
            let c = ip(&format!("10.0.6.{n}"));
            assert!(!l.record_failure(c, "chief", T0).burst, "{n}");
            l.record_success(c, "chief", T0);
        }
    }

    #[test]
    fn the_lockout_ends_and_the_record_is_forgotten_after_fifteen_minutes() {
        let mut l = LoginLimiter::default();
        fail_n(&mut l, "10.0.0.1", "chief", LOCKOUT_FAILURES, T0);
        let end = T0 + LOCKOUT;
        assert_eq!(l.check(ip("10.0.0.1"), "chief", end), Verdict::Try);
        // Forgotten, not merely waited out: the next failure is the first again.
        assert!(!l.record_failure(ip("10.0.0.1"), "chief", end).locked());
        assert_eq!(l.check(ip("10.0.0.1"), "chief", end), Verdict::Try);
    }

    #[test]
    fn fifteen_minutes_without_a_failure_forget_the_count() {
        let mut l = LoginLimiter::default();
        fail_n(&mut l, "10.0.0.1", "chief", 2, T0);
        let later = T0 + FORGET_AFTER;
        fail_n(&mut l, "10.0.0.1", "chief", 2, later);
        assert_eq!(l.check(ip("10.0.0.1"), "chief", later), Verdict::Try);
    }

    #[test]
    fn a_success_clears_the_clients_and_the_accounts_failures() {
        let mut l = LoginLimiter::default();
        fail_n(&mut l, "10.0.0.1", "chief", 5, T0);
        let then = T0 + Millis(10_000);
        assert_eq!(l.check(ip("10.0.0.1"), "chief", then), Verdict::Try);
        l.record_success(ip("10.0.0.1"), "chief", then);
        assert_eq!(l.tracked(), (0, 0));
        fail_n(&mut l, "10.0.0.1", "chief", FREE_FAILURES - 1, then);
        assert_eq!(l.check(ip("10.0.0.1"), "chief", then), Verdict::Try);
    }

    #[test]
    fn another_client_for_the_same_account_waits_too() {
        let mut l = LoginLimiter::default();
        fail_n(&mut l, "10.0.0.1", "chief", LOCKOUT_FAILURES, T0);
        assert_eq!(
            l.check(ip("10.0.0.2"), "chief", T0),
            Verdict::Wait {
                retry_after: LOCKOUT,
                scope: Scope::Account,
                locked: true
            }
        );
    }

    #[test]
    fn the_same_client_waits_for_another_account_too() {
        let mut l = LoginLimiter::default();
        fail_n(&mut l, "10.0.0.1", "chief", LOCKOUT_FAILURES, T0);
        assert_eq!(
            l.check(ip("10.0.0.1"), "arb", T0),
            Verdict::Wait {
                retry_after: LOCKOUT,
                scope: Scope::Client,
                locked: true
            }
        );
    }

    #[test]
    fn another_client_with_another_account_is_not_affected() {
        let mut l = LoginLimiter::default();
        fail_n(&mut l, "10.0.0.1", "chief", LOCKOUT_FAILURES, T0);
        assert_eq!(l.check(ip("10.0.0.2"), "arb", T0), Verdict::Try);
    }

    #[test]
    fn spraying_many_accounts_from_one_address_locks_the_address() {
        let mut l = LoginLimiter::default();
        let mut locked = Recorded::default();
        for n in 0..LOCKOUT_FAILURES {
            locked = l.record_failure(ip("10.0.0.1"), &format!("guess-{n}"), T0);
        }
        assert_eq!(
            locked,
            Recorded {
                client_locked: true,
                account_locked: false,
                burst: false,
            }
        );
        assert!(matches!(
            l.check(ip("10.0.0.1"), "chief", T0),
            Verdict::Wait {
                scope: Scope::Client,
                locked: true,
                ..
            }
        ));
    }

    #[test]
    fn addresses_of_one_ipv6_64_count_as_one_client() {
        let mut l = LoginLimiter::default();
        for n in 0..LOCKOUT_FAILURES {
            l.record_failure(ip(&format!("2001:db8:1:2::{n:x}")), &format!("a{n}"), T0);
        }
        assert!(matches!(
            l.check(ip("2001:db8:1:2:ffff::1"), "other", T0),
            Verdict::Wait {
                scope: Scope::Client,
                ..
            }
        ));
        assert_eq!(l.check(ip("2001:db8:1:3::1"), "other", T0), Verdict::Try);
        // An IPv4 client seen through an IPv6 socket is the same client.
        let mut l = LoginLimiter::default();
        fail_n(&mut l, "10.0.0.1", "a", LOCKOUT_FAILURES, T0);
        assert_ne!(l.check(ip("::ffff:10.0.0.1"), "b", T0), Verdict::Try);
    }

    #[test]
    fn a_flood_of_addresses_stays_within_the_cap_and_forgets_the_oldest_first() {
        let mut l = LoginLimiter::with_caps(8, 8);
        fail_n(&mut l, "10.0.0.1", "chief", LOCKOUT_FAILURES, T0);
        for n in 0..100u32 {
            let at = T0 + Millis(i64::from(n) + 1);
            l.record_failure(ip(&format!("10.1.{}.{}", n / 256, n % 256)), "x", at);
            let (clients, accounts) = l.tracked();
            assert!(clients <= 8 && accounts <= 8, "{clients} {accounts}");
        }
        // The locked-out address was the oldest: it is forgotten (the documented price of
        // the cap); the account it attacked is still locked, its book had room.
        assert_eq!(
            l.check(ip("10.0.0.1"), "other", T0 + Millis(200)),
            Verdict::Try
        );
        assert!(matches!(
            l.check(ip("10.0.0.1"), "chief", T0 + Millis(200)),
            Verdict::Wait {
                scope: Scope::Account,
                locked: true,
                ..
            }
        ));
    }

    #[test]
    fn expired_records_make_room_before_any_live_one_is_dropped() {
        let mut l = LoginLimiter::with_caps(2, 8);
        fail_n(&mut l, "10.0.0.1", "a", 1, T0);
        fail_n(
            &mut l,
            "10.0.0.2",
            "b",
            LOCKOUT_FAILURES,
            T0 + FORGET_AFTER - Millis(1),
        );
        let now = T0 + FORGET_AFTER;
        l.record_failure(ip("10.0.0.3"), "c", now);
        // 10.0.0.1 had expired and went; 10.0.0.2 is still locked out.
        assert!(matches!(
            l.check(ip("10.0.0.2"), "z", now),
            Verdict::Wait {
                scope: Scope::Client,
                locked: true,
                ..
            }
        ));
        assert_eq!(l.tracked().0, 2);
    }

    #[test]
    fn a_huge_account_name_is_kept_short() {
        let mut l = LoginLimiter::default();
        let long = "a".repeat(1 << 20);
        fail_n(&mut l, "10.0.0.1", &long, LOCKOUT_FAILURES, T0);
        // The same first characters are the same account name.
        let prefix = "a".repeat(MAX_ACCOUNT_CHARS);
        assert!(matches!(
            l.check(ip("10.0.0.9"), &prefix, T0),
            Verdict::Wait {
                scope: Scope::Account,
                ..
            }
        ));
        assert_eq!(
            l.accounts.records.keys().map(String::len).max(),
            Some(MAX_ACCOUNT_CHARS)
        );
    }
}
