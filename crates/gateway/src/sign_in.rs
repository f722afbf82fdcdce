//! Failed sign-ins, counted so that an attacker can turn them neither into memory nor into a
//! lock-out of the team. The rule (docs/team.md, "Sign-in"):
//! - an access code or secret longer than any issued one is refused before anything is kept;
//! - failures are counted in a table of fixed size (a few hundred KB, whatever is sent), keyed
//!   by a hash with this process's random key, for a minute;
//! - one access code failing 10 times in a minute, from any addresses, is refused for the rest
//!   of the minute (guesses of one agent's secret from rotating addresses), except from an
//!   address where that code signed in during the last day (the agent's own desk);
//! - one address failing 100 times in a minute is refused for the rest of it, but a request from
//!   it whose token is valid still signs in (an office behind one address keeps working while
//!   one machine there fails).

use std::hash::{BuildHasher, Hash};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failures of one access code within a minute, from anywhere, before it is refused.
pub(crate) const CODE_FAILURES: u32 = 10;
/// Failures from one address within a minute before its failing requests are refused.
pub(crate) const ADDRESS_FAILURES: u32 = 100;
const WINDOW: Duration = Duration::from_secs(60);
/// How long a sign-in makes its address the code's own desk.
const DESK: Duration = Duration::from_secs(24 * 3600);
/// Slots of each table: 8 192 × 24 bytes, so under 1 MB in all.
const SLOTS: usize = 8192;
/// Issued access codes are `gw_` and 32 hex digits, secrets `gs_` and 64: anything much
/// longer is no agent's.
pub(crate) const LONGEST_CODE: usize = 64;
pub(crate) const LONGEST_SECRET: usize = 128;

/// What is counted.
#[derive(Hash)]
enum Key<'a> {
    Code(&'a str),
    Address(IpAddr),
    Desk(&'a str, IpAddr),
}

#[derive(Clone, Copy)]
struct Slot {
    tag: u64,
    count: u32,
    since: Instant,
}

/// Counts in fixed memory: each key has two candidate slots; a key takes its own, else an
/// expired one, else the one with the lower count (so a busy counter is the last pushed out).
struct Table {
    slots: Vec<Option<Slot>>,
    window: Duration,
}

impl Table {
    fn new(window: Duration) -> Self {
        Self {
            slots: vec![None; SLOTS],
            window,
        }
    }

    fn places(tag: u64) -> [usize; 2] {
        [(tag as usize) % SLOTS, ((tag >> 32) as usize ^ 0x5bd1) % SLOTS]
    }

    fn live(&self, slot: &Slot, now: Instant) -> bool {
        now.duration_since(slot.since) < self.window
    }

    /// The key's count and since when, if live.
    fn get(&self, tag: u64, now: Instant) -> Option<(u32, Instant)> {
        Self::places(tag).into_iter().find_map(|i| {
            let slot = self.slots[i]?;
            (slot.tag == tag && self.live(&slot, now)).then_some((slot.count, slot.since))
        })
    }

    fn add(&mut self, tag: u64, now: Instant) {
        let places = Self::places(tag);
        if let Some(i) = places
            .iter()
            .copied()
            .find(|&i| self.slots[i].is_some_and(|s| s.tag == tag && self.live(&s, now)))
        {
            if let Some(slot) = &mut self.slots[i] {
                slot.count = slot.count.saturating_add(1);
            }
            return;
        }
        let free = places
            .iter()
            .copied()
            .find(|&i| self.slots[i].is_none_or(|s| !self.live(&s, now)));
        let place = free.unwrap_or_else(|| {
            let count = |i: usize| self.slots[i].map_or(0, |s| s.count);
            if count(places[0]) <= count(places[1]) {
                places[0]
            } else {
                places[1]
            }
        });
        self.slots[place] = Some(Slot {
            tag,
            count: 1,
            since: now,
        });
    }
}

/// The gateway's memory of sign-ins.
pub(crate) struct SignIns {
    hasher: std::collections::hash_map::RandomState,
    failures: Mutex<Table>,
    desks: Mutex<Table>,
}

impl Default for SignIns {
    fn default() -> Self {
        Self {
            hasher: std::collections::hash_map::RandomState::new(),
            failures: Mutex::new(Table::new(WINDOW)),
            desks: Mutex::new(Table::new(DESK)),
        }
    }
}

fn lock(table: &Mutex<Table>) -> std::sync::MutexGuard<'_, Table> {
    table.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl SignIns {
    fn tag(&self, key: Key<'_>) -> u64 {
        let mut hasher = self.hasher.build_hasher();
        key.hash(&mut hasher);
        std::hash::Hasher::finish(&hasher)
    }

    /// How long a request with `code` from `ip` must wait before it is even checked (the code
    /// is being guessed, and this is not its desk).
    pub(crate) fn code_waits(&self, ip: IpAddr, code: &str) -> Option<Duration> {
        let now = Instant::now();
        let (count, since) = lock(&self.failures).get(self.tag(Key::Code(code)), now)?;
        if count < CODE_FAILURES || lock(&self.desks).get(self.tag(Key::Desk(code, ip)), now).is_some() {
            return None;
        }
        Some(WINDOW.saturating_sub(now.duration_since(since)))
    }

    /// How long a failing request from `ip` is refused rather than answered (its address has
    /// failed too often); a valid token from it is not asked to wait.
    pub(crate) fn address_waits(&self, ip: IpAddr) -> Option<Duration> {
        let now = Instant::now();
        let (count, since) = lock(&self.failures).get(self.tag(Key::Address(ip)), now)?;
        (count >= ADDRESS_FAILURES).then(|| WINDOW.saturating_sub(now.duration_since(since)))
    }

    /// A failed sign-in from `ip`, with the access code given (if one was, and short enough to
    /// be anyone's).
    pub(crate) fn failed(&self, ip: IpAddr, code: Option<&str>) {
        let now = Instant::now();
        let mut failures = lock(&self.failures);
        failures.add(self.tag(Key::Address(ip)), now);
        if let Some(code) = code.filter(|c| c.len() <= LONGEST_CODE) {
            failures.add(self.tag(Key::Code(code)), now);
        }
    }

    /// The code signed in from `ip`: its desk for a day.
    pub(crate) fn signed_in(&self, ip: IpAddr, code: &str) {
        let tag = self.tag(Key::Desk(code, ip));
        let now = Instant::now();
        let mut desks = lock(&self.desks);
        if desks.get(tag, now).is_none() {
            desks.add(tag, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u32) -> IpAddr {
        IpAddr::from(n.to_be_bytes())
    }

    #[test]
    fn a_code_guessed_from_rotating_addresses_waits_but_not_at_its_desk() {
        let sign_ins = SignIns::default();
        sign_ins.signed_in(ip(1), "gw_ana");
        for n in 0..CODE_FAILURES {
            assert_eq!(sign_ins.code_waits(ip(100 + n), "gw_ana"), None);
            sign_ins.failed(ip(100 + n), Some("gw_ana"));
        }
        assert!(sign_ins.code_waits(ip(999), "gw_ana").is_some());
        assert_eq!(sign_ins.code_waits(ip(1), "gw_ana"), None, "the agent's own desk");
        assert_eq!(sign_ins.code_waits(ip(999), "gw_bob"), None);
    }

    #[test]
    fn an_address_failing_often_waits_and_its_count_is_its_own() {
        let sign_ins = SignIns::default();
        for n in 0..ADDRESS_FAILURES {
            sign_ins.failed(ip(7), Some(&format!("gw_{n}")));
        }
        assert!(sign_ins.address_waits(ip(7)).is_some());
        assert_eq!(sign_ins.address_waits(ip(8)), None);
    }

    /// However many different codes fail, the tables keep their size, and a code hammered
    /// among them is still counted (a busy counter is the last pushed out).
    #[test]
    fn memory_is_fixed_and_a_hammered_code_survives_noise() {
        let sign_ins = SignIns::default();
        for n in 0..100_000u32 {
            sign_ins.failed(ip(n), Some(&format!("gw_noise_{n}")));
            if n % 1000 == 0 {
                sign_ins.failed(ip(n), Some("gw_ana"));
            }
        }
        assert_eq!(lock(&sign_ins.failures).slots.len(), SLOTS);
        assert!(
            sign_ins.code_waits(ip(1), "gw_ana").is_some(),
            "100 failures of gw_ana are kept"
        );
    }
}
