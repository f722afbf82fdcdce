//! The account's saved index as a session uses it: opened when first needed (a command that
//! reads no eSIM, `balance`, never opens it), fed every eSIM the client reads whatever asked for
//! it, the pages of 100 ms one transaction (`store::Store::merge_all`), on a thread of its own
//! (`Writer`) so that keeping a page never holds up the next request. A session asks it only
//! what it needs (where an ICCID was seen, which pages it holds), answered by the database's
//! indexes once what was sent is written.

use super::store::{self, LoadError, SavedIndex, Store};
use super::{PagePlace, Seen, Whereabouts};
use esimdash_domain::model::Esim;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Clone)]
pub struct Kept {
    inner: Arc<Mutex<State>>,
    /// The session's one writer, started with the first read to keep.
    writer: Arc<std::sync::OnceLock<Writer>>,
}

/// How long a question or the session's end waits for the pages sent before to be written.
pub const FLUSH_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

struct State {
    store: Option<Store>,
    /// The database could not be opened: not tried again this session.
    failed: bool,
    /// What the user is to be told of the saved index (it could not be opened, or a damaged
    /// file was set aside), until it is taken.
    trouble: Option<String>,
    path: PathBuf,
    account: String,
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept").finish_non_exhaustive()
    }
}

impl Kept {
    /// The account's index at `path`, opened when first needed.
    pub fn open(path: PathBuf, account: String) -> Self {
        Self {
            inner: Arc::new(Mutex::new(State {
                store: None,
                failed: false,
                trouble: None,
                path,
                account,
            })),
            writer: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        esimdash_domain::sync::lock(&self.inner)
    }

    /// A read of the eSIM list, into the index as it comes (the client's tap calls this for
    /// every eSIM it reads). The writer's thread starts with the first read: `balance`, which
    /// reads no eSIM, never starts it.
    pub fn feed(&self, esims: &[Esim], place: Option<PagePlace>) {
        self.writer().send(Seen::read(esims, place));
    }

    /// Waits until every read sent is written (as a session ends); `false` if that took longer
    /// than `FLUSH_PATIENCE`.
    pub fn flush(&self) -> bool {
        self.writer.get().is_none_or(|w| w.flush(FLUSH_PATIENCE))
    }

    /// Merges reads into the database, in one transaction.
    fn take_in(&self, seen: &[Seen]) {
        let mut state = self.lock();
        let path = state.path.display().to_string();
        if let Some(store) = state.store()
            && let Err(e) = store.merge_all(seen, drop)
        {
            tracing::warn!(path, %e, pages = seen.len(), "pages were not kept in the inventory index");
            // Opened again for the next page: nothing of a failed transaction is trusted.
            state.store = None;
        }
    }

    /// Where the index saw this ICCID.
    pub fn whereabouts(&self, iccid: &str) -> Option<Whereabouts> {
        self.ask(|store| store.whereabouts(iccid)).flatten()
    }

    /// The ICCIDs the index saw for this order, the newest first.
    pub fn iccids_of_order(&self, order_no: &str) -> Vec<String> {
        self.ask(|store| store.iccids_of_order(order_no)).unwrap_or_default()
    }

    /// The list's pages (of `size`) the index holds whole, the one read longest ago first.
    pub fn pages_held_whole(&self, size: u64) -> Vec<u64> {
        self.ask(|store| store.pages_held_whole(size)).unwrap_or_default()
    }

    /// The kept picture of the account now, the attention `rule` applied at `now` (`None`:
    /// the index cannot be read).
    pub fn picture(
        &self,
        rule: esimdash_domain::attention::AttentionRule,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Option<super::picture::Picture> {
        self.ask(|store| store.picture(rule, now))
    }

    /// The usable eSIMs held that need attention by `rule` at `now`, newest first (`None`: the
    /// index cannot be read).
    pub fn needing_attention(
        &self,
        rule: esimdash_domain::attention::AttentionRule,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Option<Vec<super::picture::Held>> {
        self.ask(|store| store.needing_attention(rule, now))
    }

    /// How whole and how young the kept picture is (`None`: the index cannot be read).
    pub fn freshness(&self) -> Option<super::picture::Freshness> {
        self.ask(Store::freshness)
    }

    /// The orders' totals by status a keeper last read.
    pub fn order_totals(&self) -> Option<super::picture::OrderTotals> {
        self.ask(Store::order_totals).flatten()
    }

    /// Keeps the orders' totals by status, as just read.
    pub fn keep_order_totals(&self, totals: &super::picture::OrderTotals) {
        let _ = self.ask(|store| store.keep_order_totals(totals));
    }

    /// The page (of `size`) holding the usable eSIM read longest ago.
    pub fn oldest_usable_page(&self, size: u64) -> Option<u64> {
        self.ask(|store| store.oldest_usable_page(size)).flatten()
    }

    /// What the user is to be told of the saved index, once.
    pub fn trouble(&self) -> Option<String> {
        self.lock().trouble.take()
    }

    /// How many eSIMs the index holds (`None`: it cannot be read).
    pub fn held(&self) -> Option<u64> {
        self.ask(Store::held)
    }

    /// The whole index (`Missing` when none was saved yet).
    pub fn load(&self) -> Result<SavedIndex, LoadError> {
        let mut state = self.lock();
        if state.store.is_none() && !store::saved(&state.path, &state.account) {
            return Err(LoadError::Missing);
        }
        let account = state.account.clone();
        match state.store() {
            Some(store) => store.load(&account),
            None => Err(LoadError::Missing),
        }
    }

    fn ask<T>(&self, ask: impl FnOnce(&Store) -> rusqlite::Result<T>) -> Option<T> {
        if !self.flush() {
            tracing::warn!("pages read are still being written to the inventory index");
        }
        let mut state = self.lock();
        let path = state.path.display().to_string();
        match ask(state.store()?) {
            Ok(answer) => Some(answer),
            Err(e) => {
                tracing::warn!(path, %e, "the inventory index could not be read");
                None
            }
        }
    }

    /// The session's writer, on a thread of its own, so that a page's transaction (or another
    /// session's write it waits for) never holds up the thread that sent it.
    pub fn writer(&self) -> Writer {
        self.writer.get_or_init(|| self.start_writer()).clone()
    }

    fn start_writer(&self) -> Writer {
        let (tx, rx) = std::sync::mpsc::channel::<ToWrite>();
        let kept = self.clone();
        let spawned = std::thread::Builder::new().name("index-writer".into()).spawn(move || {
            while let Ok(job) = rx.recv() {
                match job {
                    ToWrite::Seen(seen) => {
                        let (batch, flush) = gathered(seen, &rx);
                        kept.take_in(&batch);
                        if let Some(done) = flush {
                            let _ = done.send(());
                        }
                    }
                    ToWrite::Flush(done) => drop(done.send(())),
                }
            }
        });
        if let Err(e) = spawned {
            tracing::warn!(%e, "no thread to keep the inventory index");
        }
        Writer { tx }
    }
}

/// How long the writer gathers the reads that follow a first before writing them together, and
/// how many at most: a whole read sends a page every few milliseconds, and a transaction a page
/// was a fifth of its writing. A question (a flush) ends the wait at once.
const GATHER: std::time::Duration = std::time::Duration::from_millis(100);
const GATHER_MOST: usize = 64;

/// `first` and the reads sent within `GATHER` of it, and the flush that ended the wait.
fn gathered(first: Seen, rx: &std::sync::mpsc::Receiver<ToWrite>) -> (Vec<Seen>, Option<std::sync::mpsc::Sender<()>>) {
    let until = std::time::Instant::now() + GATHER;
    let mut batch = vec![first];
    while batch.len() < GATHER_MOST {
        match rx.recv_timeout(until.saturating_duration_since(std::time::Instant::now())) {
            Ok(ToWrite::Seen(seen)) => batch.push(seen),
            Ok(ToWrite::Flush(done)) => return (batch, Some(done)),
            Err(_) => break,
        }
    }
    (batch, None)
}

enum ToWrite {
    Seen(Seen),
    /// Answered once everything sent before it is kept.
    Flush(std::sync::mpsc::Sender<()>),
}

impl State {
    fn store(&mut self) -> Option<&mut Store> {
        if self.store.is_none() && !self.failed {
            match Store::open(&self.path, &self.account) {
                Ok(mut store) => {
                    self.trouble = self.trouble.take().or_else(|| store.take_set_aside());
                    self.store = Some(store);
                }
                Err(e) => {
                    self.failed = true;
                    tracing::warn!(path = %self.path.display(), "{e}");
                    self.trouble = Some(format!(
                        "{e} at {}; this session keeps no index, so a find reads the list from the API",
                        self.path.display()
                    ));
                }
            }
        }
        self.store.as_mut()
    }
}

/// Sends reads to the index's thread (clones send to the same one).
#[derive(Clone)]
pub struct Writer {
    tx: std::sync::mpsc::Sender<ToWrite>,
}

impl Writer {
    pub fn send(&self, seen: Seen) {
        let _ = self.tx.send(ToWrite::Seen(seen));
    }

    /// Waits until every read sent before is kept, at most `patience` (as the session ends).
    pub fn flush(&self, patience: std::time::Duration) -> bool {
        let (done, wait) = std::sync::mpsc::channel();
        self.tx.send(ToWrite::Flush(done)).is_ok() && wait.recv_timeout(patience).is_ok()
    }
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

/// Where the account's index is kept, for a session.
pub fn at(dir: &std::path::Path, account: &str) -> Kept {
    Kept::open(store::path_in(dir, account), account.to_string())
}
