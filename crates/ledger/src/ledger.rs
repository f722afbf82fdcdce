//! The account's orders as the money view reads them: newest first, only back to the start of
//! the period asked for, and what was read is kept (in memory, and on disk when the account
//! keeps an index), so that the next look reads from the top only until it meets an order of
//! the stretch kept whole (`Run`): a page or two. A longer period than the run reads on from
//! where the run ends, found by counting its orders and checked against them.
//!
//! Only a look that reaches its period's start, the list's end or the run makes a run: a look
//! cut off or failed keeps what it read, but the next one reads those pages again, since
//! between them and the run there may be orders nobody read.
//!
//! An order's money is what it was when read: a refund of an order read before (`cancel`) is
//! seen when that order is read again, which a look from the top does not do (noted in
//! docs/money.md).

use super::kept::{self, Kept, Loaded, Run};
use super::reading::{Bounds, Known, Look, Order, Step, read, unusable};
use super::sale::Sale;
use chrono::{DateTime, Utc};
use esimdash_api::{ApiError, Client};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

pub use super::reading::PAGE;

/// What a look cost and brought.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refreshed {
    /// Pages requested.
    pub pages: u64,
    /// Orders not known before.
    pub new: u64,
}

pub struct Ledger {
    sales: HashMap<String, Sale>,
    /// The stretch of the list every order of which is kept (`None`: none yet).
    run: Option<Run>,
    /// When a look last read the list from its top down to the run (`None`: not yet).
    read_at: Option<DateTime<Utc>>,
    kept: Option<Kept>,
    /// Where it is kept (the directory and the account), to open it again after a write that
    /// was cut off with its look.
    place: Option<(std::path::PathBuf, String)>,
    /// The look under way (what a look cut off had read, until the next one keeps it).
    look: Look,
    /// What the user is to be told of the kept orders (they could not be opened or written),
    /// until it is taken.
    trouble: Option<String>,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("sales", &self.sales.len())
            .field("run", &self.run)
            .finish()
    }
}

impl Default for Ledger {
    fn default() -> Self {
        Self::in_memory()
    }
}

/// A ledger of these sales (tests, benchmarks), kept in memory, with no run known whole.
impl FromIterator<Sale> for Ledger {
    fn from_iter<I: IntoIterator<Item = Sale>>(sales: I) -> Self {
        let mut ledger = Self::in_memory();
        ledger.sales = sales.into_iter().map(|s| (s.order_no.clone(), s)).collect();
        ledger
    }
}

/// When the list was read from its top down to `run`, where `run` reaches back to `since` and
/// that read is no longer than `max_age` before `now` (a time ahead of `now`, the clock moved
/// back, is no proof of youth).
fn young_since(
    run: Option<Run>,
    read_at: Option<DateTime<Utc>>,
    since: DateTime<Utc>,
    (now, max_age): (DateTime<Utc>, chrono::Duration),
) -> Option<DateTime<Utc>> {
    let at = read_at.filter(|_| run.is_some_and(|run| run.from <= since))?;
    (at <= now && now - at <= max_age).then_some(at)
}

impl Ledger {
    /// Kept for this session only (`--demo`, no index kept).
    pub fn in_memory() -> Self {
        Self {
            sales: HashMap::new(),
            run: None,
            read_at: None,
            kept: None,
            place: None,
            look: Look::default(),
            trouble: None,
        }
    }

    /// Kept on disk at `at` (the inventory index's directory and the account's key), else
    /// for this session only.
    pub fn open(at: Option<(&Path, &str)>) -> Self {
        match at {
            Some((dir, account)) => Self::kept_in(dir, account),
            None => Self::in_memory(),
        }
    }

    /// Kept on disk in `dir` (the inventory index's) for `account`; when that cannot be
    /// opened, for this session only, and said.
    pub fn kept_in(dir: &Path, account: &str) -> Self {
        let mut ledger = Self::in_memory();
        ledger.place = Some((dir.to_path_buf(), account.to_string()));
        match Kept::open(dir, account) {
            Ok(mut kept) => {
                ledger.trouble = kept.set_aside.take();
                match kept.load() {
                    Ok(Loaded { sales, run, read_at }) => {
                        ledger.run = run;
                        ledger.read_at = read_at;
                        ledger.sales = sales.into_iter().map(|s| (s.order_no.clone(), s)).collect();
                    }
                    Err(e) => {
                        // Emptied, so that what is read again is not mixed with what could not be.
                        tracing::warn!("the kept orders: {}; they are read again", kept::why(&e));
                        if let Err(e) = kept.write(&[], None, true) {
                            ledger.trouble = Some(format!("the kept orders could not be emptied: {}", kept::why(&e)));
                        }
                    }
                }
                ledger.kept = Some(kept);
            }
            Err(e) => {
                ledger.trouble = Some(format!(
                    "the orders read are not kept between sessions ({}: {})",
                    kept::path_in(dir, account).display(),
                    kept::why(&e)
                ))
            }
        }
        ledger
    }

    /// What the user is to be told of the kept orders, once.
    pub fn take_trouble(&mut self) -> Option<String> {
        self.trouble.take()
    }

    /// When the orders were last read from the list's top (by this session or another that
    /// keeps them): what is kept holds every order placed until then. `None`: never.
    pub fn read_at(&self) -> Option<DateTime<Utc>> {
        self.read_at
    }

    /// When the orders placed from `since` on were read from the list's top, where every one
    /// of them is kept as read then, no longer than `max_age` before `now` (`None`: they are
    /// not, and a look brings them up to date).
    pub fn young_since(
        &self,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        max_age: chrono::Duration,
    ) -> Option<DateTime<Utc>> {
        young_since(self.run, self.read_at, since, (now, max_age))
    }

    /// `young_since` of what `account` keeps in `dir`, and the sales from `since` on, read
    /// without opening the kept orders to write (`None` where they are not young or cannot be
    /// read so: `kept_in` opens them, and `refresh` brings them up to date).
    pub fn young(
        (dir, account): (&Path, &str),
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        max_age: chrono::Duration,
    ) -> Option<(Vec<Sale>, DateTime<Utc>)> {
        let Loaded { sales, run, read_at } = Kept::peek(dir, account, since)?;
        young_since(run, read_at, since, (now, max_age)).map(|at| (sales, at))
    }

    /// The sales kept from `since` on, newest first.
    pub fn since(&self, since: DateTime<Utc>) -> Vec<&Sale> {
        let mut sales: Vec<&Sale> = self.sales.values().filter(|s| s.at >= since).collect();
        sales.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| b.order_no.cmp(&a.order_no)));
        sales
    }

    /// Reads the orders newest first until every order from `since` on is known: from the top
    /// until it meets the run, then (when the run does not reach back to `since`) on from
    /// where the run ends, until an order older than `since`. Within the client's request
    /// timeout for the whole look.
    pub async fn refresh(&mut self, client: &Client, since: DateTime<Utc>) -> Result<Refreshed, ApiError> {
        self.refresh_within(client, since, client.request_timeout()).await
    }

    /// `refresh`, the whole look within `budget`. A list that fails a check (`reading`) gives
    /// an error in words, and nothing of it is summed or kept.
    pub async fn refresh_within(
        &mut self,
        client: &Client,
        since: DateTime<Utc>,
        budget: Duration,
    ) -> Result<Refreshed, ApiError> {
        // A look cut off before its end (its task aborted: nobody waited any more) left what it
        // read here: kept, as a failed look's is, though not as part of the run.
        let left = std::mem::take(&mut self.look);
        if !left.read.is_empty() {
            self.keep(left, None, None).await;
        }
        // Orders placed while the look reads are at the top, which it read first: the list is
        // known whole as of the look's start.
        let started = Utc::now();
        let mut bounds = Bounds::of(budget);
        let mut outcome = self.read(Order::Newest, client, since, &mut bounds).await;
        if let Ok(Step::Changed) = outcome {
            // The same number at another time: the server's history is not the one kept (a
            // sandbox started again). What was kept goes, and the list is read as if new.
            self.forget(false);
            outcome = self.read(Order::Newest, client, since, &mut bounds).await;
        }
        if let Ok(Step::Unsorted(why)) = outcome {
            // Not newest first: no stretch of it can be taken as the period's. The whole list
            // is read instead, kept for this session only.
            tracing::warn!("the order list is out of order ({why}): it is read whole");
            self.forget(true);
            outcome = match self.read(Order::Any, client, since, &mut bounds).await {
                Ok(Step::Whole(from)) => Ok(Step::Whole(from)),
                Ok(Step::Untrusted(more)) => Ok(Step::Untrusted(format!(
                    "the server lists the orders out of order ({why}); read whole, {more}"
                ))),
                Ok(_) => Ok(Step::Untrusted(format!(
                    "the server lists the orders out of order ({why})"
                ))),
                Err(e) => Err(unusable(format!(
                    "the server lists the orders out of order ({why}), and the whole list could not be read: {e}"
                ))),
            };
        }
        let look = std::mem::take(&mut self.look);
        let run = match outcome {
            Ok(Step::Whole(from)) => Some(Run {
                from,
                top: look.top.unwrap_or(from),
            }),
            Ok(Step::Untrusted(why) | Step::Unsorted(why)) => return Err(unusable(why)),
            Ok(Step::Changed) => return Err(unusable("the order list changed while it was read".to_string())),
            Err(e) => {
                self.keep(look, None, None).await;
                return Err(e);
            }
        };
        let refreshed = Refreshed {
            pages: look.pages,
            new: look.new,
        };
        self.keep(look, run, run.map(|_| started)).await;
        Ok(refreshed)
    }

    /// One look from the top in `order`, against what is kept.
    async fn read(
        &mut self,
        order: Order,
        client: &Client,
        since: DateTime<Utc>,
        bounds: &mut Bounds,
    ) -> Result<Step, ApiError> {
        let known = Known {
            sales: &self.sales,
            run: self.run,
        };
        read(known, order, client, since, &mut self.look, bounds).await
    }

    /// Drops what is known and starts the look anew (`unsorted`: as a list out of order).
    fn forget(&mut self, unsorted: bool) {
        self.sales.clear();
        self.run = None;
        self.read_at = None;
        self.look = Look::anew(unsorted, self.look.pages);
    }

    /// What a look read goes into the ledger, and to disk when kept there (off the async
    /// threads: a write may wait for another session's); `run`: the stretch it read whole,
    /// joined to the run it met, read down to from the top at `read_at`.
    async fn keep(&mut self, look: Look, run: Option<Run>, read_at: Option<DateTime<Utc>>) {
        for sale in &look.read {
            self.sales.insert(sale.order_no.clone(), sale.clone());
        }
        if let Some(run) = run {
            self.run = Some(run.joined(self.run));
        }
        if read_at.is_some() {
            self.read_at = self.read_at.max(read_at);
        }
        let (kept, place) = (self.kept.take(), self.place.clone());
        if look.unsorted || (kept.is_none() && place.is_none()) {
            self.kept = kept;
            return;
        }
        let (read, anew) = (look.read, look.anew);
        let written = tokio::task::spawn_blocking(move || {
            let mut kept = match kept {
                Some(kept) => kept,
                None => {
                    let (dir, account) = place.unwrap_or_default();
                    Kept::open(&dir, &account).map_err(|e| kept::why(&e))?
                }
            };
            let result = kept
                .write(&read, run, anew)
                .and_then(|()| read_at.map_or(Ok(()), |at| kept.write_read_at(at)))
                .map_err(|e| kept::why(&e));
            Ok::<_, String>((kept, result))
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r);
        let result = match written {
            Ok((kept, result)) => {
                self.kept = Some(kept);
                result
            }
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            tracing::warn!("{e}");
            self.trouble
                .get_or_insert_with(|| format!("the orders read could not be kept: {e}"));
        }
    }
}
