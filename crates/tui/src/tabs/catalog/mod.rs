//! The Catalog tab: every plan, filtered as you type and sorted, with a cursor.

pub mod view;

use super::{Motion, SCREEN_PAGE, TabState};
use crate::forms::mode::{Mode, Overlay};
use crate::forms::purchase::PurchaseForm;
use crate::index::Index;
use crate::keymap::{Action, Context};
use crate::kit::jobs::Outbox;
use crate::kit::remote::Remote;
use crate::kit::remote::Slot;
use crate::kit::search::SearchBox;
use crate::kit::status::Tone;
use crate::kit::then::{About, Answered};
use crate::msg::{ExportJob, JobId, Payload, Request};
use crate::tabs::ctx::Ctx;
use crate::view::Look;
use esimdash_api::model::Plan;
use esimdash_domain::location::location_name;
use std::time::{Duration, Instant};

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
    pub(super) plans: Remote<Vec<Plan>>,
    pub(super) filter: SearchBox,
    sort: SortKey,
    /// Indexes into the plans that pass the filter, in sort order; recomputed only on change.
    visible: Vec<usize>,
    /// Position in `visible`.
    cursor: usize,
}

impl Default for Catalog {
    fn default() -> Self {
        Self {
            plans: Remote::default(),
            filter: SearchBox::new(Duration::ZERO),
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
    pub fn plans(&self) -> &Remote<Vec<Plan>> {
        &self.plans
    }

    /// Every plan loaded (or loaded before a reload).
    pub fn all(&self) -> &[Plan] {
        self.plans.value().map_or(&[], Vec::as_slice)
    }

    pub fn filter(&self) -> &SearchBox {
        &self.filter
    }

    pub fn sort(&self) -> SortKey {
        self.sort
    }

    pub fn visible(&self) -> &[usize] {
        &self.visible
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Stores the catalog if it answers the request awaited.
    pub fn accept(&mut self, id: JobId, plans: Vec<Plan>, now: Instant) -> bool {
        let ok = self.plans.resolve(id, plans, now);
        if ok {
            self.refresh_view();
        }
        ok
    }

    pub fn next_sort(&mut self) {
        self.sort = self.sort.next();
        self.refresh_view();
    }

    /// Recomputes the visible rows after the data, the filter or the sort changed, keeping the
    /// selected plan selected when it is still visible.
    pub fn refresh_view(&mut self) {
        let selected = self.selected().map(|p| p.slug.clone());
        let needle = self.filter.applied().to_lowercase();
        let plans = self.all();
        let mut visible: Vec<usize> = (0..plans.len())
            .filter(|&i| needle.is_empty() || matches(&plans[i], &needle))
            .collect();
        match self.sort {
            SortKey::Name => visible.sort_by(|&a, &b| plans[a].name.cmp(&plans[b].name)),
            SortKey::Price => visible.sort_by(|&a, &b| plans[a].sell_price().cmp(&plans[b].sell_price())),
            SortKey::Volume => visible.sort_by(|&a, &b| plans[a].volume.cmp(&plans[b].volume)),
            SortKey::Location => visible.sort_by(|&a, &b| {
                (location_name(&plans[a].location_code), &plans[a].name)
                    .cmp(&(location_name(&plans[b].location_code), &plans[b].name))
            }),
        }
        let cursor = selected
            .and_then(|slug| visible.iter().position(|&i| plans[i].slug == slug))
            .unwrap_or(0);
        self.visible = visible;
        self.cursor = cursor;
    }

    pub fn selected(&self) -> Option<&Plan> {
        self.visible.get(self.cursor).and_then(|&i| self.all().get(i))
    }

    pub fn move_by(&mut self, delta: i64) {
        let last = self.visible.len().saturating_sub(1) as i64;
        self.cursor = (self.cursor as i64).saturating_add(delta).clamp(0, last) as usize;
    }

    pub fn go_to_start(&mut self) {
        self.cursor = 0;
    }

    pub fn go_to_end(&mut self) {
        self.cursor = self.visible.len().saturating_sub(1);
    }
}

impl Catalog {
    /// New eSIMs of the selected plan; or of the plan a key handed here is about (`b` on My
    /// eSIMs: one that was deleted, expired or cancelled cannot be used again).
    fn buy(&self, ctx: &mut Ctx<'_>) {
        let plan = match &ctx.about {
            About::Plan(slug) => match self.all().iter().find(|p| &p.slug == slug) {
                Some(plan) => plan,
                None if self.plans.value().is_none() => {
                    return ctx.flash("The catalog is not loaded yet: try again in a moment", Tone::Info);
                }
                None => return ctx.flash(format!("The plan {slug} is no longer in the catalog"), Tone::Error),
            },
            _ => match self.selected() {
                Some(plan) => plan,
                None => return,
            },
        };
        let form = PurchaseForm::order(plan.clone());
        ctx.set_mode(Mode::Overlay(Overlay::Purchase(Box::new(form))));
    }
}

impl TabState for Catalog {
    fn subject(&self, _index: &Index) -> Option<esimdash_front::team_commands::Values> {
        self.selected().map(esimdash_front::team_commands::Values::of_plan)
    }

    fn draw(&self, frame: &mut ratatui::Frame, area: ratatui::layout::Rect, look: &Look<'_>) {
        view::draw(frame, area, self, look);
    }

    fn context(&self) -> Context {
        Context::Catalog
    }

    fn fetch(&mut self, out: &mut Outbox<'_>, _now: Instant, _typing: bool, _index: &Index) {
        if self.plans.wanted() {
            let id = out.send(Request::Plans);
            self.plans.start(id);
        }
    }

    fn slot(&mut self, request: &Request) -> Option<&mut dyn Slot> {
        matches!(request, Request::Plans).then_some(&mut self.plans as &mut dyn Slot)
    }

    fn on_answer(&mut self, id: JobId, request: &Request, payload: Payload, now: Instant, _index: &Index) -> Answered {
        match (request, payload) {
            (Request::Plans, Payload::Plans(plans)) => {
                self.accept(id, plans, now);
                Some(Vec::new())
            }
            _ => None,
        }
    }

    fn on_action(&mut self, action: Action, ctx: &mut Ctx<'_>) -> bool {
        match action {
            Action::Sort => self.next_sort(),
            Action::Buy => self.buy(ctx),
            _ => return false,
        }
        true
    }

    fn refresh(&mut self, _index: &mut Index) {
        self.plans.invalidate();
    }

    fn move_cursor(&mut self, motion: Motion, _now: Instant) {
        match motion.rows(SCREEN_PAGE) {
            Some(d) => self.move_by(d),
            None if motion == Motion::End => self.go_to_end(),
            None => self.go_to_start(),
        }
    }

    /// A plan's detail, fetched again with the reseller's own pricing.
    fn open(&self, _mode: &Mode) -> Option<Mode> {
        let plan = self.selected()?;
        Some(Mode::Overlay(Overlay::PlanDetail {
            summary: Box::new(plan.clone()),
            fetched: Remote::default(),
        }))
    }

    fn search_box(&mut self) -> Option<&mut SearchBox> {
        Some(&mut self.filter)
    }

    fn search_changed(&mut self, _index: &Index) -> bool {
        self.refresh_view();
        false
    }

    fn search_applied(&self) -> Option<&str> {
        Some(self.filter.applied())
    }

    fn sort_name(&self) -> Option<&'static str> {
        Some(self.sort.label())
    }

    fn set_sort(&mut self, name: &str) {
        let mut sort = SortKey::Name;
        for _ in 0..4 {
            if sort.label() == name {
                break;
            }
            sort = sort.next();
        }
        if sort.label() == name && sort != self.sort {
            self.sort = sort;
            self.refresh_view();
        }
    }

    fn clear_search(&mut self, _now: Instant, _index: &Index) {
        if self.filter.clear() {
            self.refresh_view();
        }
    }

    fn typing_hint(&self) -> &'static str {
        "type to filter  "
    }

    /// The plans shown, in their order: the filter applies.
    fn export(&self, _index: &Index) -> Option<Result<ExportJob, &'static str>> {
        let Some(plans) = self.plans.value() else {
            return Some(Err("The catalog has not loaded yet"));
        };
        let shown = self.visible.iter().filter_map(|&i| plans.get(i)).cloned();
        Some(Ok(ExportJob::Plans(shown.collect())))
    }
}
