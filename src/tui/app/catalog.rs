//! The Catalog tab: every plan, filtered as you type and sorted, with a cursor.

use super::input::TextInput;
use crate::api::model::Plan;
use crate::esim::location::location_name;
use crate::tui::msg::RequestId;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Name,
    Price,
    Volume,
    Location,
}

impl SortKey {
    pub fn next(self) -> Self {
        match self {
            SortKey::Name => SortKey::Price,
            SortKey::Price => SortKey::Volume,
            SortKey::Volume => SortKey::Location,
            SortKey::Location => SortKey::Name,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SortKey::Name => "name",
            SortKey::Price => "price",
            SortKey::Volume => "data",
            SortKey::Location => "location",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Catalog {
    pub plans: Vec<Plan>,
    /// Wanted from the server (at start, after `r`).
    pub stale: bool,
    pub request: Option<RequestId>,
    pub filter: TextInput,
    /// Keys go to the filter.
    pub filtering: bool,
    pub sort: SortKey,
    /// Indexes into `plans` that pass the filter, in sort order; recomputed only on change.
    pub visible: Vec<usize>,
    /// Position in `visible`.
    pub cursor: usize,
}

impl Default for Catalog {
    fn default() -> Self {
        Self {
            plans: Vec::new(),
            stale: true,
            request: None,
            filter: TextInput::default(),
            filtering: false,
            sort: SortKey::Name,
            visible: Vec::new(),
            cursor: 0,
        }
    }
}

/// Whether a plan matches the filter: name, slug, location code or country name.
fn matches(plan: &Plan, needle: &str) -> bool {
    let has = |s: &str| s.to_lowercase().contains(needle);
    has(&plan.name)
        || has(&plan.slug)
        || plan.location_code.eq_ignore_ascii_case(needle)
        || location_name(&plan.location_code).is_some_and(has)
}

impl Catalog {
    pub fn set_plans(&mut self, plans: Vec<Plan>) {
        self.plans = plans;
        self.refresh_view();
    }

    /// Recomputes the visible rows after the data, the filter or the sort changed, keeping the
    /// selected plan selected when it is still visible.
    pub fn refresh_view(&mut self) {
        let selected = self.selected().map(|p| p.slug.clone());
        let needle = self.filter.value.trim().to_lowercase();
        let mut visible: Vec<usize> = (0..self.plans.len())
            .filter(|&i| needle.is_empty() || matches(&self.plans[i], &needle))
            .collect();
        let plans = &self.plans;
        match self.sort {
            SortKey::Name => visible.sort_by(|&a, &b| plans[a].name.cmp(&plans[b].name)),
            SortKey::Price => visible.sort_by(|&a, &b| plans[a].sell_price().cmp(&plans[b].sell_price())),
            SortKey::Volume => visible.sort_by(|&a, &b| plans[a].volume.cmp(&plans[b].volume)),
            SortKey::Location => visible.sort_by(|&a, &b| {
                (location_name(&plans[a].location_code), &plans[a].name)
                    .cmp(&(location_name(&plans[b].location_code), &plans[b].name))
            }),
        }
        self.visible = visible;
        self.cursor = selected
            .and_then(|slug| self.visible.iter().position(|&i| self.plans[i].slug == slug))
            .unwrap_or(0);
    }

    pub fn selected(&self) -> Option<&Plan> {
        self.visible.get(self.cursor).and_then(|&i| self.plans.get(i))
    }

    pub fn move_by(&mut self, delta: i64) {
        let last = self.visible.len().saturating_sub(1) as i64;
        self.cursor = (self.cursor as i64 + delta).clamp(0, last) as usize;
    }

    pub fn go_to_end(&mut self) {
        self.cursor = self.visible.len().saturating_sub(1);
    }
}
