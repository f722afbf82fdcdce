//! Everything the dashboard holds of the account in use: its profile, inventory index,
//! catalog, orders, what runs in the background for it, and why its requests stopped. A switch of
//! account replaces this whole (`Account::new`), so nothing of one account can be left on the
//! screen of another: there is no field to forget.

use super::exports::Export;
use super::{Halt, Remote, Tab};
use crate::index::Index;
use crate::kit::jobs::Jobs;
use crate::tabs::profile::ProfileTab;
use crate::tabs::{TabState, catalog::Catalog, esims::Esims, orders::Orders};
use esimdash_api::model::Profile;
use esimdash_front::session::Session;
use esimdash_ledger::overview::Overview;
use std::time::Instant;

#[derive(Default)]
pub struct Account {
    /// The config profile (colour, read-only setting) this account was opened from.
    pub session: Session,
    /// The reseller's profile: the header's name and balance, and the Profile tab.
    pub profile: Remote<Profile>,
    /// The money of the last 30 days: the header's sparkline, and the Profile tab's chart.
    pub money: Remote<Overview>,
    /// The inventory index: every eSIM of the account read or saved, and the reads filling it.
    pub index: Index,
    pub tabs: Tabs,
    /// The profile update in flight.
    pub saving: Remote<()>,
    /// What runs in the background for this account: requests, exports, files being written,
    /// the saved index being read.
    pub jobs: Jobs,
    /// The CSV export running (or the last one that failed).
    pub export: Option<Export>,
    pub halt: Option<Halt>,
    /// A 429: requests wait until then, and the status line counts down.
    pub rate_limited_until: Option<Instant>,
    /// The client's own pacing holds requests until then (as the client last told).
    pub paced_until: Option<Instant>,
    /// Who this key is at a team gateway, and what is left of its cap (the header shows it).
    pub seat: Option<esimdash_api::relay::Seat>,
}

impl Account {
    /// A new account, loading as at start; `index` is empty, with the user's settings.
    pub fn new(session: Session, index: Index) -> Self {
        Self {
            session,
            index,
            ..Self::default()
        }
    }

    /// eSIMs the client read (whatever asked, but the index's own pages, which come as their
    /// answer): into the index, and My eSIMs' results follow. `true` when they brought the whole
    /// ICCID searched for.
    pub fn index_seen(&mut self, seen: &esimdash_inventory::Seen) -> bool {
        let merged = self.index.seen(seen);
        self.tabs.esims.index_merged(&merged, &self.index)
    }

    /// The index an earlier session saved.
    pub fn use_saved(&mut self, saved: esimdash_inventory::store::SavedIndex) {
        self.index.use_saved(saved);
        self.tabs.esims.index_replaced(&self.index);
    }
}

/// The state of each tab.
#[derive(Default)]
pub struct Tabs {
    pub catalog: Catalog,
    pub orders: Orders,
    pub esims: Esims,
    pub profile: ProfileTab,
}

impl Tabs {
    /// The state of `tab`: where a tab is chosen (this and `get_mut`).
    pub fn get(&self, tab: Tab) -> &dyn TabState {
        match tab {
            Tab::Catalog => &self.catalog,
            Tab::Orders => &self.orders,
            Tab::Esims => &self.esims,
            Tab::Profile => &self.profile,
        }
    }

    pub fn get_mut(&mut self, tab: Tab) -> &mut dyn TabState {
        match tab {
            Tab::Catalog => &mut self.catalog,
            Tab::Orders => &mut self.orders,
            Tab::Esims => &mut self.esims,
            Tab::Profile => &mut self.profile,
        }
    }
}
