//! Every key and mouse action, in one place. Order of precedence: Ctrl-C; the 401 banner; an
//! overlay; a text input; the keys of all tabs; the keys of the current tab.

use super::lists::{SEARCH_PAUSE, status_choices};
use super::{App, Code, Halt, Overlay, Paged, ProfileForm, Tab};
use crate::tui::msg::{Effect, Request};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use std::time::Instant;

/// How far PgDn/PgUp move in the catalog (the lists move a whole server page).
const CATALOG_PAGE: i64 = 20;

/// The movement keys shared by every list: vim keys, arrows, pages, start and end.
enum Motion {
    By(i64),
    Start,
    End,
}

fn motion(key: &KeyEvent, page: i64) -> Option<Motion> {
    Some(match key.code {
        KeyCode::Down | KeyCode::Char('j') => Motion::By(1),
        KeyCode::Up | KeyCode::Char('k') => Motion::By(-1),
        KeyCode::PageDown => Motion::By(page),
        KeyCode::PageUp => Motion::By(-page),
        KeyCode::Char('d') if key.modifiers.contains(KeyModifiers::CONTROL) => Motion::By(page / 2),
        KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => Motion::By(-page / 2),
        KeyCode::Home | KeyCode::Char('g') => Motion::Start,
        KeyCode::End | KeyCode::Char('G') => Motion::End,
        _ => return None,
    })
}

/// Applies a movement key to a server-paged list (a page key moves one server page);
/// `true` when the key was one.
fn move_paged<T>(list: &mut Paged<T>, key: &KeyEvent) -> bool {
    let Some(m) = motion(key, list.page_size as i64) else {
        return false;
    };
    match m {
        Motion::By(d) => list.move_by(d),
        Motion::Start => list.go_to_start(),
        Motion::End => list.go_to_end(),
    }
    true
}

impl App {
    pub(super) fn on_key(&mut self, key: KeyEvent, now: Instant, effects: &mut Vec<Effect>) {
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            self.quit = true;
            return;
        }
        if matches!(self.halt, Some(Halt::Unauthorized { .. })) {
            if matches!(key.code, KeyCode::Char('q') | KeyCode::Esc) {
                self.quit = true;
            }
            return;
        }
        if self.overlay.is_some() {
            self.on_overlay_key(key, now, effects);
            return;
        }
        if self.on_input_key(key, now) {
            return;
        }
        match key.code {
            KeyCode::Char('q') => self.quit = true,
            KeyCode::Char('?') => self.overlay = Some(Overlay::Help),
            KeyCode::Char('r') => self.refresh(),
            KeyCode::Tab => self.tab = self.tab.next(),
            KeyCode::BackTab => self.tab = self.tab.previous(),
            KeyCode::Char(c @ '1'..='4') => self.tab = Tab::ALL[(c as u8 - b'1') as usize],
            _ => self.on_tab_key(key, now, effects),
        }
        if self.tab != Tab::Esims {
            self.esims.zoom = false;
        }
    }

    /// Keys while a filter or search is being typed; `true` when the key was taken.
    fn on_input_key(&mut self, key: KeyEvent, now: Instant) -> bool {
        let is_motion = matches!(
            key.code,
            KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown
        );
        match self.tab {
            Tab::Catalog if self.catalog.filtering && !is_motion => {
                match key.code {
                    KeyCode::Enter => self.catalog.filtering = false,
                    KeyCode::Esc => {
                        self.catalog.filtering = false;
                        self.catalog
                            .filter
                            .handle(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
                        self.catalog.refresh_view();
                    }
                    _ => {
                        if self.catalog.filter.handle(key) {
                            self.catalog.refresh_view();
                        }
                    }
                }
                true
            }
            Tab::Orders if self.orders.searching && !is_motion => {
                match key.code {
                    KeyCode::Enter => {
                        self.orders.searching = false;
                        self.orders.apply_search();
                    }
                    KeyCode::Esc => {
                        self.orders.searching = false;
                        self.orders
                            .search
                            .handle(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
                        self.orders.apply_search();
                    }
                    _ => {
                        if self.orders.search.handle(key) {
                            self.orders.search_due = Some(now + SEARCH_PAUSE);
                        }
                    }
                }
                true
            }
            Tab::Esims if self.esims.searching && !is_motion => {
                match key.code {
                    KeyCode::Enter => self.esims.searching = false,
                    KeyCode::Esc => {
                        self.esims.searching = false;
                        self.esims.search = Default::default();
                        self.esims.refilter();
                    }
                    _ => {
                        if self.esims.search.handle(key) && self.esims.refilter() {
                            self.flash("Found the eSIM with that ICCID", false, now);
                        }
                    }
                }
                true
            }
            _ => false,
        }
    }

    fn on_tab_key(&mut self, key: KeyEvent, now: Instant, effects: &mut Vec<Effect>) {
        match self.tab {
            Tab::Catalog => {
                if let Some(m) = motion(&key, CATALOG_PAGE) {
                    match m {
                        Motion::By(d) => self.catalog.move_by(d),
                        Motion::Start => self.catalog.cursor = 0,
                        Motion::End => self.catalog.go_to_end(),
                    }
                    return;
                }
                match key.code {
                    KeyCode::Char('/') => self.catalog.filtering = true,
                    KeyCode::Char('s') => {
                        self.catalog.sort = self.catalog.sort.next();
                        self.catalog.refresh_view();
                    }
                    KeyCode::Enter => {
                        if let Some(plan) = self.catalog.selected() {
                            self.overlay = Some(Overlay::PlanDetail {
                                summary: Box::new(plan.clone()),
                                fetched: None,
                                request: None,
                                error: None,
                            });
                        }
                    }
                    KeyCode::Esc => {
                        self.catalog.filter = Default::default();
                        self.catalog.refresh_view();
                    }
                    _ => {}
                }
            }
            Tab::Orders => {
                if move_paged(&mut self.orders.list, &key) {
                    return;
                }
                match key.code {
                    KeyCode::Char('/') => self.orders.searching = true,
                    KeyCode::Char('f') => self.open_status_picker(Tab::Orders),
                    KeyCode::Enter => {
                        if let Some(order) = self.orders.list.selected() {
                            self.overlay = Some(Overlay::OrderDetail(Box::new(order.clone())));
                        }
                    }
                    KeyCode::Esc => {
                        self.orders.search = Default::default();
                        self.orders.apply_search();
                    }
                    _ => {}
                }
            }
            Tab::Esims => {
                let esims = &mut self.esims;
                if esims.search_active() {
                    if let Some(m) = motion(&key, CATALOG_PAGE) {
                        match m {
                            Motion::By(d) => esims.move_results(d),
                            Motion::Start => esims.go_to_result(false),
                            Motion::End => esims.go_to_result(true),
                        }
                        return;
                    }
                } else if move_paged(&mut esims.list, &key) {
                    return;
                }
                match key.code {
                    KeyCode::Char('/') => {
                        esims.searching = true;
                        esims.start_scan();
                    }
                    KeyCode::Char('f') => self.open_status_picker(Tab::Esims),
                    KeyCode::Enter => esims.detail = !esims.detail,
                    KeyCode::Char('z') if esims.selected().is_some() => esims.zoom = !esims.zoom,
                    KeyCode::Char('y') => self.copy_selected(false, now, effects),
                    KeyCode::Char('Y') => self.copy_selected(true, now, effects),
                    KeyCode::Esc if esims.zoom => esims.zoom = false,
                    KeyCode::Esc if esims.detail => esims.detail = false,
                    KeyCode::Esc => {
                        esims.search = Default::default();
                        esims.refilter();
                    }
                    _ => {}
                }
            }
            Tab::Profile => {
                if key.code == KeyCode::Char('e') {
                    match &self.account.profile {
                        Some(p) => self.overlay = Some(Overlay::ProfileForm(Box::new(ProfileForm::new(p)))),
                        None => self.flash("The profile has not loaded yet", true, now),
                    }
                }
            }
        }
    }

    /// `y` copies the selected eSIM's ICCID, `Y` its activation code (once known).
    fn copy_selected(&mut self, code: bool, now: Instant, effects: &mut Vec<Effect>) {
        let Some(esim) = self.esims.selected() else {
            self.flash("No eSIM is selected", true, now);
            return;
        };
        let iccid = esim.raw_order_json.iccid.clone();
        if !code {
            if iccid.is_empty() {
                self.flash("This eSIM has no ICCID", true, now);
            } else {
                effects.push(Effect::Copy {
                    what: "ICCID",
                    text: iccid,
                });
            }
            return;
        }
        match self.esims.codes.get(&iccid) {
            Some(Code::Ready(ac)) => effects.push(Effect::Copy {
                what: "Activation code",
                text: ac.clone(),
            }),
            Some(Code::Failed(why)) => self.flash(format!("No activation code to copy: {why}"), true, now),
            _ => self.flash("The activation code is still being fetched", true, now),
        }
    }

    fn open_status_picker(&mut self, tab: Tab) {
        let current = if tab == Tab::Orders {
            &self.orders.status
        } else {
            &self.esims.status
        };
        let cursor = status_choices().iter().position(|c| c == current).unwrap_or(0);
        self.overlay = Some(Overlay::StatusPicker { tab, cursor });
    }

    fn on_overlay_key(&mut self, key: KeyEvent, now: Instant, effects: &mut Vec<Effect>) {
        let Some(overlay) = self.overlay.as_mut() else { return };
        match overlay {
            Overlay::StatusPicker { tab, cursor } => match key.code {
                KeyCode::Down | KeyCode::Char('j') => *cursor = (*cursor + 1).min(status_choices().len() - 1),
                KeyCode::Up | KeyCode::Char('k') => *cursor = cursor.saturating_sub(1),
                KeyCode::Enter => {
                    let choice = status_choices().into_iter().nth(*cursor).flatten();
                    match tab {
                        Tab::Orders => self.orders.set_status(choice),
                        _ => self.esims.set_status(choice),
                    }
                    self.overlay = None;
                }
                KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('f') => self.overlay = None,
                _ => {}
            },
            Overlay::ProfileForm(form) => match key.code {
                KeyCode::Esc => self.overlay = None,
                KeyCode::Tab | KeyCode::Down => form.focus_next(),
                KeyCode::BackTab | KeyCode::Up => form.focus_previous(),
                KeyCode::Enter if self.saving.is_none() => {
                    form.server_error = None;
                    if let Some(update) = form.validate() {
                        if update == Default::default() {
                            self.overlay = None;
                            self.flash("Nothing changed", false, now);
                        } else {
                            let id = self.send(Request::UpdateProfile(update), effects);
                            self.saving = Some(id);
                        }
                    }
                }
                _ => {
                    let focus = form.focus;
                    if form.inputs[focus].handle(key) {
                        form.errors[focus] = None;
                    }
                }
            },
            _ => {
                if matches!(
                    key.code,
                    KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') | KeyCode::Char('?')
                ) {
                    self.overlay = None;
                }
            }
        }
    }

    pub(super) fn on_mouse(&mut self, mouse: MouseEvent) {
        if self.halt.is_some() || self.overlay.is_some() {
            return;
        }
        match mouse.kind {
            // Row 1 is the tab bar (row 0 the header).
            MouseEventKind::Down(MouseButton::Left) if mouse.row == 1 => {
                if let Some(tab) = Tab::at_column(mouse.column) {
                    self.tab = tab;
                    self.dirty = true;
                }
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let d = if mouse.kind == MouseEventKind::ScrollDown {
                    3
                } else {
                    -3
                };
                match self.tab {
                    Tab::Catalog => self.catalog.move_by(d),
                    Tab::Orders => self.orders.list.move_by(d),
                    Tab::Esims => self.esims.list.move_by(d),
                    Tab::Profile => return,
                }
                self.dirty = true;
            }
            _ => {}
        }
    }
}
