//! Saved views in the dashboard: which view a tab shows (its search, status filter, attention
//! filter and sort equal a view's: read from the tab's state, never kept beside it), switching
//! to one, and saving the tab's filters as one in the config file.

use super::App;
use crate::forms::mode::{Mode, Overlay};
use crate::forms::views::ViewsWindow;
use crate::keymap::Action;
use crate::kit::status::Tone;
use crate::kit::tab::Tab;
use crate::tabs::TabState;
use esimdash_domain::status::StatusFilter;
use esimdash_front::views::{SavedView, ViewTab};
use std::time::Instant;

fn tab_of(view: ViewTab) -> Tab {
    match view {
        ViewTab::Catalog => Tab::Catalog,
        ViewTab::Orders => Tab::Orders,
        ViewTab::Esims => Tab::Esims,
    }
}

fn view_tab(tab: Tab) -> Option<ViewTab> {
    match tab {
        Tab::Catalog => Some(ViewTab::Catalog),
        Tab::Orders => Some(ViewTab::Orders),
        Tab::Esims => Some(ViewTab::Esims),
        Tab::Profile => None,
    }
}

fn status_of(view: &SavedView) -> StatusFilter {
    StatusFilter::parse(view.status.as_deref().unwrap_or("all"))
}

/// Whether the tab's filters are the view's.
fn shows(state: &dyn TabState, view: &SavedView) -> bool {
    state.search_applied() == Some(view.search.trim())
        && state.status().is_none_or(|s| *s == status_of(view))
        && state.attention_on().is_none_or(|on| on == view.attention)
        && view.sort.as_deref().is_none_or(|sort| state.sort_name() == Some(sort))
}

/// The tab's filters as a view (named by them: rename it in the config file).
fn current(tab: ViewTab, state: &dyn TabState) -> SavedView {
    let search = state.search_applied().unwrap_or_default().to_string();
    let status = state.status().and_then(StatusFilter::query);
    let attention = state.attention_on().unwrap_or(false);
    let sort = state.sort_name().map(str::to_string);
    let mut parts: Vec<String> = Vec::new();
    if !search.is_empty() {
        parts.push(format!("\"{search}\""));
    }
    parts.extend(status.iter().cloned());
    if attention {
        parts.push("needs attention".to_string());
    }
    parts.extend(sort.iter().map(|s| format!("by {s}")));
    let name = if parts.is_empty() {
        format!("{} (all)", tab.name())
    } else {
        format!("{}: {}", tab.name(), parts.join(", "))
    };
    SavedView {
        name,
        tab,
        search,
        status,
        attention,
        sort,
    }
}

impl App {
    /// The name of the saved view `tab` shows now, if its filters are one's.
    pub fn shown_view(&self, tab: Tab) -> Option<&str> {
        let state = self.account.tabs.get(tab);
        self.views
            .iter()
            .filter(|v| tab_of(v.tab) == tab)
            .find(|v| shows(state, v))
            .map(|v| v.name.as_str())
    }

    /// `V`: the saved views of the tab shown.
    pub(super) fn open_views(&mut self, now: Instant) {
        if view_tab(self.tab).is_none() {
            self.flash("Saved views are of Catalog, Orders and My eSIMs", Tone::Info, now);
            return;
        }
        let names: Vec<String> = self
            .views
            .iter()
            .filter(|v| tab_of(v.tab) == self.tab)
            .map(|v| v.name.clone())
            .collect();
        let shown = self.shown_view(self.tab).map(str::to_string);
        let cursor = shown
            .as_ref()
            .and_then(|s| names.iter().position(|n| n == s))
            .unwrap_or(0);
        self.mode = Mode::Overlay(Overlay::Views(Box::new(ViewsWindow {
            tab_title: self.tab.title(),
            names,
            shown,
            problems: self.view_problems.clone(),
            cursor,
        })));
    }

    pub(super) fn act_views(&mut self, action: Action, now: Instant) {
        let Some(Overlay::Views(window)) = self.mode.overlay_mut() else {
            return;
        };
        if super::actions::move_choice(&mut window.cursor, window.names.len(), action) {
            return;
        }
        match action {
            Action::Accept => {
                let name = window.names.get(window.cursor).cloned();
                self.mode = Mode::Browse;
                if let Some(view) = name.and_then(|n| self.views.iter().find(|v| v.name == n).cloned()) {
                    self.show_view(&view);
                }
            }
            Action::SaveView => self.save_view(now),
            Action::Close | Action::Views => self.mode = Mode::Browse,
            _ => {}
        }
    }

    /// The tab shows `view`: its search, status, attention and sort set as the view says.
    fn show_view(&mut self, view: &SavedView) {
        let (state, index) = self.tab_state_mut();
        if state.status().is_some() {
            state.set_status(status_of(view), index);
        }
        if !view.search.trim().is_empty() {
            // As a search typed: My eSIMs searches its whole index.
            state.start_search(index);
        }
        if let Some(search) = state.search_box() {
            search.set(&view.search);
            state.search_changed(index);
        }
        if state.attention_on().is_some() {
            state.set_attention(view.attention, index);
        }
        if let Some(sort) = &view.sort {
            state.set_sort(sort);
        }
    }

    /// `s` in the views window: the tab's filters saved as a view in the config file.
    fn save_view(&mut self, now: Instant) {
        let Some(tab) = view_tab(self.tab) else { return };
        let view = current(tab, self.tab_state());
        if let Some(same) = self
            .views
            .iter()
            .find(|v| v.tab == view.tab && shows(self.tab_state(), v))
        {
            let text = format!("This is the saved view \"{}\" already", same.name);
            self.flash(text, Tone::Info, now);
            return;
        }
        let Some(path) = self.config_path.clone() else {
            self.flash("No config file to save the view in", Tone::Error, now);
            return;
        };
        match esimdash_front::config::save_view(&path, &view) {
            Ok(()) => {
                let text = format!(
                    "Saved the view \"{}\" in {} (rename it there)",
                    view.name,
                    path.display()
                );
                self.views.push(view);
                self.mode = Mode::Browse;
                self.flash(text, Tone::Success, now);
            }
            Err(e) => self.flash(
                format!("The view was not saved: {}: {e}", path.display()),
                Tone::Error,
                now,
            ),
        }
    }
}
