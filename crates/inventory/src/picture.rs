//! The account's kept picture: what the saved index says of every eSIM's volatile facts (its
//! status, its state, its data used and its expiry), each with when it was read, and so how old
//! the picture is. A check or a scrape answers from it when it is whole and young enough, in a
//! request or two instead of reading every usable eSIM; a keeper (`esimdash_front::keeper`)
//! keeps it young by reading again, oldest first, the pages that hold usable eSIMs.
//!
//! Its age is its oldest fact that could have changed: the usable eSIM read longest ago (an
//! unusable one has ended and stays so), or the top of the list (where new eSIMs come), whichever
//! is older.

use super::store::{Store, limits, usable};
use super::{Entry, Package};
use chrono::{DateTime, Utc};
use esimdash_domain::attention::AttentionRule;
use esimdash_domain::esim_state::Class;
use esimdash_domain::status::Status;

/// How whole and how young the picture is: what a check asks before anything is read for it,
/// and what a keeper reads next by. SQLite counts it alone (`Store::freshness`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    /// The list's total as last read (`None`: never read).
    pub total: Option<u64>,
    /// Places the index holds.
    pub held: u64,
    /// When the usable eSIM read longest ago was read (`None`: none usable).
    pub oldest_usable: Option<DateTime<Utc>>,
    /// When the list's newest place was last read (`None`: not held).
    pub top: Option<DateTime<Utc>>,
}

/// The picture as the index holds it at one moment: its freshness, and the counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    pub facts: Freshness,
    /// Usable eSIMs held (`Class::is_usable`), and of those how many need attention.
    pub usable: u64,
    pub attention: u64,
    /// eSIMs held by status word, as read, in the words' order.
    pub by_status: Vec<(String, u64)>,
}

impl Picture {
    pub fn age(&self, now: DateTime<Utc>) -> Option<chrono::Duration> {
        self.facts.age(now)
    }

    pub fn fresh(&self, now: DateTime<Utc>, max_age: chrono::Duration) -> bool {
        self.facts.fresh(now, max_age)
    }
}

impl Freshness {
    /// Every place of the list held (an empty list is whole once its total was read).
    pub fn is_whole(&self) -> bool {
        self.total.is_some_and(|t| t == self.held)
    }

    /// When its oldest fact was read (`None` when the picture is not whole: it has no age).
    pub fn read_at(&self) -> Option<DateTime<Utc>> {
        if !self.is_whole() {
            return None;
        }
        match (self.oldest_usable, self.top) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (one, other) => one.or(other),
        }
    }

    /// Its age at `now` (`None`: not whole, or never read).
    pub fn age(&self, now: DateTime<Utc>) -> Option<chrono::Duration> {
        self.read_at().map(|at| (now - at).max(chrono::Duration::zero()))
    }

    /// Whole, and no older than `max_age` at `now`.
    pub fn fresh(&self, now: DateTime<Utc>, max_age: chrono::Duration) -> bool {
        self.age(now).is_some_and(|age| age <= max_age)
    }
}

/// An eSIM as the picture holds it, and when it was read (Unix seconds): what
/// `esims --attention` lists, from the picture or from records read now (`Held::now`).
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub entry: Entry,
    pub read_at: i64,
}

impl Held {
    /// An eSIM's record read at `now`, as the picture would hold it.
    pub fn now(esim: &esimdash_domain::model::Esim, now: DateTime<Utc>) -> Self {
        Held {
            entry: Entry::of(esim),
            read_at: now.timestamp(),
        }
    }
}

/// The orders' totals by status word (the list's `total` for each status filter), and when
/// they were read (Unix seconds): what `metrics` says of orders without asking again.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OrderTotals {
    pub read_at: i64,
    pub by_status: Vec<(String, u64)>,
}

impl OrderTotals {
    /// Read no longer ago than `max_age` at `now`.
    pub fn fresh(&self, now: DateTime<Utc>, max_age: chrono::Duration) -> bool {
        now.timestamp().saturating_sub(self.read_at) <= max_age.num_seconds()
    }
}

impl Store {
    /// The picture now, the attention `rule` applied at `now` to every usable eSIM held (one
    /// rule with the dashboard's `!`, `esims --attention` and a live count).
    pub fn picture(&self, rule: AttentionRule, now: DateTime<Utc>) -> rusqlite::Result<Picture> {
        let conn = self.conn();
        let total = self.total()?;
        let mut picture = Picture {
            facts: Freshness {
                total,
                held: 0,
                oldest_usable: None,
                top: self.top_read(total)?,
            },
            usable: 0,
            attention: 0,
            by_status: Vec::new(),
        };
        let mut oldest: Option<i64> = None;
        let mut by_status: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
        // One pass, the text read in place: 100 000 rows in tens of milliseconds.
        let mut stmt = conn.prepare_cached("SELECT status, class, used_pct, expires, read_at FROM esims")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            picture.facts.held += 1;
            let status = r.get_ref(0)?.as_str().unwrap_or_default();
            match by_status.get_mut(status) {
                Some(n) => *n += 1,
                None => {
                    by_status.insert(status.to_string(), 1);
                }
            }
            let class = Class::from_key(r.get_ref(1)?.as_str().unwrap_or_default()).unwrap_or(Class::Unknown);
            if !class.is_usable() {
                continue;
            }
            picture.usable += 1;
            picture.attention += u64::from(rule.needs(class, limits(r.get(2)?, r.get(3)?), now));
            let read_at: i64 = r.get(4)?;
            oldest = Some(oldest.map_or(read_at, |o| o.min(read_at)));
        }
        picture.facts.oldest_usable = oldest.and_then(|t| DateTime::from_timestamp(t, 0));
        picture.by_status = by_status.into_iter().collect();
        Ok(picture)
    }

    /// How whole and how young the picture is, counted by SQLite alone (no row comes out).
    pub fn freshness(&self) -> rusqlite::Result<Freshness> {
        // Two look-ups: the count from the smallest index, the oldest usable read from
        // `esims_usable_read`.
        let sql = format!(
            "SELECT (SELECT COUNT(*) FROM esims), (SELECT MIN(read_at) FROM esims WHERE {})",
            usable()
        );
        let (held, oldest): (i64, Option<i64>) = self
            .conn()
            .prepare_cached(&sql)?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let total = self.total()?;
        Ok(Freshness {
            total,
            held: held.max(0) as u64,
            oldest_usable: oldest.and_then(|t| DateTime::from_timestamp(t, 0)),
            top: self.top_read(total)?,
        })
    }

    /// When the list's newest place (of `total`) was last read.
    fn top_read(&self, total: Option<u64>) -> rusqlite::Result<Option<DateTime<Utc>>> {
        let Some(newest) = total.and_then(|t| t.checked_sub(1)) else {
            return Ok(None);
        };
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT read_at FROM esims WHERE minus_from_end = -?1")?;
        let top: Option<i64> = rusqlite::OptionalExtension::optional(
            stmt.query_row([i64::try_from(newest).unwrap_or(i64::MAX)], |r| r.get(0)),
        )?;
        Ok(top.and_then(|t| DateTime::from_timestamp(t, 0)))
    }

    /// The orders' totals by status word as a keeper last read them, and when.
    pub fn order_totals(&self) -> rusqlite::Result<Option<OrderTotals>> {
        let text: Option<String> = rusqlite::OptionalExtension::optional(self.conn().query_row(
            "SELECT value FROM meta WHERE key = 'order_totals'",
            [],
            |r| r.get(0),
        ))?;
        // Our own file, read as outside data: what does not parse is not there.
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Keeps the orders' totals by status, as just read.
    pub fn keep_order_totals(&self, totals: &OrderTotals) -> rusqlite::Result<()> {
        let text = serde_json::to_string(totals).unwrap_or_default();
        self.conn().execute(
            "INSERT INTO meta (key, value) VALUES ('order_totals', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [text],
        )?;
        Ok(())
    }

    /// The usable eSIMs held that need attention by `rule` at `now`, newest first: the rule
    /// applied here as in `picture`, to the same rows.
    pub fn needing_attention(&self, rule: AttentionRule, now: DateTime<Utc>) -> rusqlite::Result<Vec<Held>> {
        let sql = format!(
            "SELECT e.class, e.used_pct, e.expires, e.iccid, e.status, e.order_no, e.read_at,
                    p.name, p.slug, p.code, p.location
             FROM esims e JOIN packages p ON p.id = e.package
             WHERE {} ORDER BY e.minus_from_end",
            usable()
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let mut rows = stmt.query([])?;
        let mut held = Vec::new();
        while let Some(r) = rows.next()? {
            let class = Class::from_key(r.get_ref(0)?.as_str().unwrap_or_default()).unwrap_or(Class::Unknown);
            let limits = limits(r.get(1)?, r.get(2)?);
            if !rule.needs(class, limits, now) {
                continue;
            }
            let entry = Entry {
                iccid: r.get(3)?,
                status: Status::parse(r.get_ref(4)?.as_str().unwrap_or_default()),
                class,
                package: Package {
                    name: r.get(7)?,
                    slug: r.get(8)?,
                    code: r.get(9)?,
                    location: r.get(10)?,
                },
                limits,
                order: r.get(5)?,
            };
            held.push(Held {
                entry,
                read_at: r.get(6)?,
            });
        }
        Ok(held)
    }

    /// The page (of `size`, counted from the newest) that holds the usable eSIM read longest
    /// ago: what a keeper reads next (`None`: no usable eSIM held, or no total).
    pub fn oldest_usable_page(&self, size: u64) -> rusqlite::Result<Option<u64>> {
        let Some(total) = self.total()? else { return Ok(None) };
        let sql = format!(
            "SELECT -minus_from_end FROM esims WHERE {} ORDER BY read_at LIMIT 1",
            usable()
        );
        let oldest: Option<i64> =
            rusqlite::OptionalExtension::optional(self.conn().prepare_cached(&sql)?.query_row([], |r| r.get(0)))?;
        Ok(oldest.and_then(|from_end| {
            let place = total.checked_sub(1)?.checked_sub(u64::try_from(from_end).ok()?)?;
            Some(place / size.max(1) + 1)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PagePlace, Seen};
    use esimdash_domain::model::Esim;

    /// An eSIM record as the API sends one: its status, its SM-DP+ status, 100 bytes bought.
    fn esim(iccid: &str, status: &str, smdp: &str, used: u64) -> Esim {
        let raw = format!(
            r#"{{"iccid":"{iccid}","smdpStatus":"{smdp}","orderUsage":{used},"totalVolume":100,"expiredTime":"2099-01-01T00:00:00Z"}}"#
        );
        serde_json::from_str(&format!(r#"{{"status":"{status}","rawOrderJson":{raw}}}"#)).unwrap()
    }

    #[test]
    fn a_picture_is_whole_when_every_place_is_held_and_as_old_as_its_oldest_usable_fact() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("index.sqlite3"), "acct").unwrap();
        let now = DateTime::from_timestamp(Utc::now().timestamp(), 0).unwrap();
        let rule = AttentionRule::default();
        let page = |esims: &[Esim], page: u64, read_at: i64| {
            Seen::page(
                esims,
                PagePlace {
                    page,
                    size: 2,
                    total: 3,
                },
                read_at,
            )
        };
        let first = [
            esim("89001", "IN_USE", "ENABLED", 90),
            esim("89002", "USED_UP", "ENABLED", 100),
        ];
        store.merge(&page(&first, 1, now.timestamp() - 600)).unwrap();
        let half = store.picture(rule, now).unwrap();
        assert!(!half.facts.is_whole(), "two of three places held");
        assert_eq!(half.age(now), None, "no age without every place");
        store
            .merge(&page(
                &[esim("89003", "GOT_RESOURCE", "RELEASED", 0)],
                2,
                now.timestamp() - 60,
            ))
            .unwrap();
        let whole = store.picture(rule, now).unwrap();
        assert!(whole.facts.is_whole());
        assert_eq!((whole.usable, whole.attention), (2, 1), "{whole:?}");
        assert_eq!(
            whole.age(now),
            Some(chrono::Duration::seconds(600)),
            "the top, read 10 min ago"
        );
        assert!(whole.fresh(now, chrono::Duration::minutes(10)));
        assert_eq!(store.freshness().unwrap(), whole.facts, "SQLite's count, the same");
        assert!(!whole.fresh(now, chrono::Duration::minutes(9)));
        assert_eq!(
            store.oldest_usable_page(2).unwrap(),
            Some(1),
            "the in-use one on page 1"
        );
        let listed = store.needing_attention(rule, now).unwrap();
        assert_eq!(listed.len() as u64, whole.attention, "the list and the count, one rule");
        assert_eq!(listed[0].entry.iccid, "89001");
        assert_eq!(listed[0].read_at, now.timestamp() - 600);
        assert_eq!(
            listed[0],
            Held {
                read_at: now.timestamp() - 600,
                ..Held::now(&first[0], now)
            }
        );
        store.merge(&page(&first, 1, now.timestamp())).unwrap();
        assert_eq!(store.oldest_usable_page(2).unwrap(), Some(2), "page 1 read again since");
        assert_eq!(
            store.picture(rule, now).unwrap().age(now),
            Some(chrono::Duration::seconds(60))
        );
    }

    /// The count (`picture`) and the list (`needing_attention`) agree on rows of every class,
    /// percent (missing, 0 to 100) and expiry (missing, past, near, far), under rules of every
    /// threshold.
    #[test]
    fn the_count_and_the_list_are_one_rule() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("index.sqlite3"), "acct").unwrap();
        let now = DateTime::from_timestamp(Utc::now().timestamp(), 0).unwrap();
        let mut seed: u64 = 20261129;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let conn = store.conn();
        conn.execute(
            "INSERT INTO packages (id, name, slug, code, location) VALUES (1, 'P', 'p', 'P', 'FR')",
            [],
        )
        .unwrap();
        for from_end in 0..2_000i64 {
            let class = Class::ALL[next(Class::ALL.len() as u64) as usize];
            let used = (next(4) > 0).then(|| next(101) as i64);
            let expires = (next(4) > 0).then(|| now.timestamp() + next(10 * 86_400) as i64 - 2 * 86_400);
            conn.execute(
                "INSERT INTO esims (minus_from_end, iccid, status, class, package, used_pct, expires, order_no, read_at)
                 VALUES (-?1, ?2, 'in_use', ?3, 1, ?4, ?5, 'B1', ?6)",
                rusqlite::params![
                    from_end,
                    format!("89{from_end:017}"),
                    class.key(),
                    used,
                    expires,
                    now.timestamp()
                ],
            )
            .unwrap();
        }
        // The oldest usable read and the page to sweep are look-ups in the partial index.
        for query in [
            format!("SELECT MIN(read_at) FROM esims WHERE {}", usable()),
            format!(
                "SELECT -minus_from_end FROM esims WHERE {} ORDER BY read_at LIMIT 1",
                usable()
            ),
        ] {
            let plan: String = conn
                .query_row(&format!("EXPLAIN QUERY PLAN {query}"), [], |r| r.get(3))
                .unwrap();
            assert!(plan.contains("esims_usable_read"), "{query}: {plan}");
        }
        for (used_pct, days) in [(80, 3), (1, 0), (100, 0), (50, 7), (100, 30)] {
            let rule = AttentionRule { used_pct, days };
            let counted = store.picture(rule, now).unwrap();
            let listed = store.needing_attention(rule, now).unwrap();
            assert_eq!(counted.attention, listed.len() as u64, "{rule:?}");
            assert!(
                counted.attention > 0 && counted.attention < counted.usable,
                "{rule:?}: {counted:?}"
            );
        }
    }
}
