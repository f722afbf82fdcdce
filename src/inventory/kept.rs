//! The index a one-shot command keeps: loaded from the account's file at start, fed every
//! eSIM the client reads (whatever the command asked for), saved every few pages and at the
//! end, so that a command killed in the middle of a long read loses at most those pages.

use super::store::{self, LoadError};
use super::{Inventory, Seen, Whereabouts};
use crate::api::Client;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

/// Pages read between two saves.
pub const SAVE_EVERY: u32 = 10;

#[derive(Clone)]
pub struct Kept {
    inner: Arc<Mutex<State>>,
}

struct State {
    inventory: Inventory,
    path: PathBuf,
    account: String,
    /// Pages merged since the last save.
    unsaved: u32,
    /// Something changed since the last save.
    changed: bool,
}

impl Kept {
    /// The account's index as saved (empty if there is none, or none to trust).
    pub fn open(path: PathBuf, account: String) -> Self {
        let inventory = match store::load(&path, &account) {
            Ok(loaded) => loaded.inventory,
            Err(LoadError::Missing) => Inventory::default(),
            Err(e) => {
                tracing::warn!(path = %path.display(), "{e}");
                Inventory::default()
            }
        };
        Self {
            inner: Arc::new(Mutex::new(State {
                inventory,
                path,
                account,
                unsaved: 0,
                changed: false,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update is a merge of one read; a panic mid-merge leaves entries usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
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
        let merged = state.inventory.merge(seen);
        state.changed |= merged.changed() || seen.place.is_some();
        if seen.place.is_some() {
            state.unsaved += 1;
        }
        if state.unsaved >= SAVE_EVERY {
            save(&mut state);
        }
    }

    /// Where the index saw this ICCID.
    pub fn whereabouts(&self, iccid: &str) -> Option<Whereabouts> {
        self.lock().inventory.whereabouts(iccid)
    }

    /// The first place at or after `place` the index does not cover, in a list of the total
    /// last seen (`None`: none is missing).
    pub fn first_gap_from(&self, place: u64) -> Option<u64> {
        self.lock().inventory.first_gap_from(place)
    }

    /// Whether the index has seen the list's total yet.
    pub fn knows_total(&self) -> bool {
        self.lock().inventory.total().is_some()
    }

    /// Saves what changed since the last save.
    pub fn save(&self) {
        let mut state = self.lock();
        if state.changed {
            save(&mut state);
        }
    }
}

fn save(state: &mut State) {
    state.unsaved = 0;
    state.changed = false;
    match store::save(&state.path, &state.account, &state.inventory, chrono::Utc::now()) {
        Ok(merged) => state.inventory = merged,
        Err(e) => tracing::warn!(path = %state.path.display(), %e, "the inventory index was not saved"),
    }
}
