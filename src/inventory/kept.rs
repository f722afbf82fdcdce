//! The index a one-shot command keeps: loaded from the account's file at start, fed every
//! eSIM the client reads (whatever the command asked for), saved every 10 pages (5 s at
//! least apart) and at the end, so that a command killed in the middle of a long read loses at
//! most those pages.

use super::store::{self, LoadError};
use super::{Inventory, Seen, Whereabouts};
use crate::api::Client;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

/// Pages read between two saves, and the time at least between them.
pub const SAVE_EVERY: u32 = 10;
const SAVE_AT_MOST_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Clone)]
pub struct Kept {
    inner: Arc<Mutex<State>>,
}

struct State {
    /// Read from the file when first needed: a command that reads no eSIM (`balance`) never
    /// pays for it.
    inventory: Option<Inventory>,
    path: PathBuf,
    account: String,
    /// Pages merged since the last save.
    unsaved: u32,
    /// Something changed since the last save.
    changed: bool,
    last_save: Option<std::time::Instant>,
}

impl Kept {
    /// The account's index at `path`, read when first needed (empty if there is none, or
    /// none to trust).
    pub fn open(path: PathBuf, account: String) -> Self {
        Self {
            inner: Arc::new(Mutex::new(State {
                inventory: None,
                path,
                account,
                unsaved: 0,
                changed: false,
                last_save: None,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.inner)
    }

    /// From now on, every eSIM `client` reads goes into the index.
    pub fn feed_from(&self, client: &Client) {
        let kept = self.clone();
        client.on_esims_read(Arc::new(move |esims, place| {
            let now = chrono::Utc::now().timestamp();
            let seen = match place {
                Some(place) => Seen::page(esims, place, now),
                None => Seen::records(esims, now),
            };
            kept.take_in(&seen);
        }));
    }

    fn take_in(&self, seen: &Seen) {
        let mut state = self.lock();
        let merged = state.inventory().merge(seen);
        state.changed |= merged.changed() || seen.place.is_some();
        if seen.place.is_some() {
            state.unsaved += 1;
        }
        let due = state.last_save.is_none_or(|at| at.elapsed() >= SAVE_AT_MOST_EVERY);
        if state.unsaved >= SAVE_EVERY && due {
            save(&mut state);
        }
    }

    /// Where the index saw this ICCID.
    pub fn whereabouts(&self, iccid: &str) -> Option<Whereabouts> {
        self.lock().inventory().whereabouts(iccid)
    }

    /// The first place at or after `place` the index does not cover, in a list of the total
    /// last seen (`None`: none is missing).
    pub fn first_gap_from(&self, place: u64) -> Option<u64> {
        self.lock().inventory().first_gap_from(place)
    }

    /// What `read` makes of the index as it is now.
    pub fn read<T>(&self, read: impl FnOnce(&Inventory) -> T) -> T {
        read(self.lock().inventory())
    }

    /// Whether the index has seen the list's total yet.
    pub fn knows_total(&self) -> bool {
        self.lock().inventory().total().is_some()
    }

    /// Saves what changed since the last save.
    pub fn save(&self) {
        let mut state = self.lock();
        if state.changed {
            save(&mut state);
        }
    }
}

impl State {
    fn inventory(&mut self) -> &mut Inventory {
        let (path, account) = (&self.path, &self.account);
        self.inventory.get_or_insert_with(|| match store::load(path, account) {
            Ok(loaded) => loaded.inventory,
            Err(LoadError::Missing) => Inventory::default(),
            Err(e) => {
                tracing::warn!(path = %path.display(), "{e}");
                Inventory::default()
            }
        })
    }
}

fn save(state: &mut State) {
    state.unsaved = 0;
    state.changed = false;
    state.last_save = Some(std::time::Instant::now());
    let Some(inventory) = &state.inventory else { return };
    match store::save(&state.path, &state.account, inventory, chrono::Utc::now()) {
        Ok(Some(merged)) => state.inventory = Some(merged),
        Ok(None) => {}
        Err(e) => tracing::warn!(path = %state.path.display(), %e, "the inventory index was not saved"),
    }
}
