//! Every key and mouse action, in one place. Order of precedence: Ctrl-C; the 401 banner; an
//! overlay; a text input; the keys of all tabs; the keys of the current tab.

use super::lists::{SEARCH_PAUSE, status_choices};
use super::{App, Code, Halt, Lookup, MAX_QTY, Overlay, Paged, ProfileForm, PurchaseForm, Stage, Tab, TextInput};
use crate::api::model::{OrderRequest, TopupRequest};
use crate::esim::iccid::Iccid;
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
                        self.catalog.filter.clear();
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
                        self.orders.search.clear();
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
                        self.esims.search.clear();
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
                    KeyCode::Char('b') => {
                        if let Some(plan) = self.catalog.selected() {
                            self.overlay = Some(Overlay::Purchase(Box::new(PurchaseForm::order(plan.clone()))));
                        }
                    }
                    KeyCode::Char('t') => self.ask_iccid(),
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
                        self.catalog.filter.clear();
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
                    KeyCode::Char('t') => {
                        let number = self.orders.list.selected().map(|o| o.record.provider_order_no.clone());
                        self.top_up_order(number.as_deref());
                    }
                    KeyCode::Enter => {
                        if let Some(order) = self.orders.list.selected() {
                            self.overlay = Some(Overlay::OrderDetail(Box::new(order.clone())));
                        }
                    }
                    KeyCode::Esc => {
                        self.orders.search.clear();
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
                    KeyCode::Char('t') => match esims.selected() {
                        Some(esim) => {
                            let hint = crate::purchase::not_topupable_reason(&esim.record.status);
                            let iccid = esim.raw_order_json.iccid.clone();
                            self.overlay = Some(Overlay::Purchase(Box::new(PurchaseForm::topup(iccid, hint))));
                        }
                        None => self.ask_iccid(),
                    },
                    KeyCode::Char('y') => self.copy_selected(false, now, effects),
                    KeyCode::Char('Y') => self.copy_selected(true, now, effects),
                    KeyCode::Esc if esims.zoom => esims.zoom = false,
                    KeyCode::Esc if esims.detail => esims.detail = false,
                    KeyCode::Esc => {
                        esims.search.clear();
                        esims.refilter();
                    }
                    _ => {}
                }
            }
            Tab::Profile => {
                if key.code == KeyCode::Char('t') {
                    self.ask_iccid();
                }
                if key.code == KeyCode::Char('e') {
                    match &self.account.profile {
                        Some(p) => self.overlay = Some(Overlay::ProfileForm(Box::new(ProfileForm::new(p)))),
                        None => self.flash("The profile has not loaded yet", true, now),
                    }
                }
            }
        }
    }

    /// "Top up which eSIM?": an ICCID to type in.
    fn ask_iccid(&mut self) {
        self.overlay = Some(Overlay::IccidPrompt {
            input: TextInput::default(),
            error: None,
        });
    }

    /// `t` on an order: its eSIM when the dashboard has it loaded, else the ICCID prompt.
    fn top_up_order(&mut self, order_number: Option<&str>) {
        let found = order_number.and_then(|number| {
            self.esims
                .list
                .loaded()
                .chain(&self.esims.scan.items)
                .find(|e| e.record.provider_order_no == number)
                .map(|e| {
                    (
                        e.raw_order_json.iccid.clone(),
                        crate::purchase::not_topupable_reason(&e.record.status),
                    )
                })
        });
        match found {
            Some((iccid, hint)) => self.overlay = Some(Overlay::Purchase(Box::new(PurchaseForm::topup(iccid, hint)))),
            None => self.ask_iccid(),
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
            Overlay::Purchase(_) => self.on_purchase_key(key, effects),
            Overlay::IccidPrompt { input, error } => match key.code {
                KeyCode::Esc => self.overlay = None,
                KeyCode::Enter => match Iccid::parse(&input.value) {
                    Ok(iccid) => {
                        self.overlay = Some(Overlay::Purchase(Box::new(PurchaseForm::topup(
                            iccid.to_string(),
                            None,
                        ))));
                    }
                    Err(e) => *error = Some(e.to_string()),
                },
                _ => {
                    if input.handle(key) {
                        *error = None;
                    }
                }
            },
            Overlay::OrderDetail(order) if key.code == KeyCode::Char('t') => {
                let number = order.record.provider_order_no.clone();
                self.top_up_order(Some(&number));
            }
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

    /// The purchase form. Only Enter on the confirmation sends, and only once: the form leaves
    /// `Confirming` as it sends, and no key does anything while the answer is awaited.
    fn on_purchase_key(&mut self, key: KeyEvent, effects: &mut Vec<Effect>) {
        let balance = self.account.profile.as_ref().and_then(|p| p.balance_usd);
        let Some(Overlay::Purchase(form)) = self.overlay.as_mut() else {
            return;
        };
        match &form.stage {
            Stage::Sending => {}
            Stage::Unknown {
                lookup: Lookup::Checking,
                ..
            } => {}
            Stage::Choosing => match key.code {
                KeyCode::Down | KeyCode::Char('j') => {
                    form.cursor = (form.cursor + 1).min(form.plans.len().saturating_sub(1))
                }
                KeyCode::Up | KeyCode::Char('k') => form.cursor = form.cursor.saturating_sub(1),
                KeyCode::Right | KeyCode::Char('+') => form.set_qty(i64::from(form.qty) + 1),
                KeyCode::Left | KeyCode::Char('-') => form.set_qty(i64::from(form.qty) - 1),
                KeyCode::Char(c @ '1'..='9') => form.set_qty(i64::from(c as u8 - b'0')),
                KeyCode::Char('0') => form.set_qty(i64::from(MAX_QTY)),
                KeyCode::Enter if form.plan().is_some() => {
                    form.before = None;
                    form.stage = Stage::Confirming;
                }
                KeyCode::Esc => self.overlay = None,
                _ => {}
            },
            Stage::Confirming => match key.code {
                KeyCode::Enter => {
                    let short = match (balance, form.total()) {
                        (Some(b), Some(t)) => crate::purchase::shortfall(b, t).is_some(),
                        (_, None) => true,
                        (None, Some(_)) => false,
                    };
                    // Not before the order list was read (so a lost answer can be looked up),
                    // never when the balance is short, and only from this stage: sent once.
                    if form.before.is_none() || short || form.request.is_some() {
                        return;
                    }
                    let Some(plan) = form.plan() else { return };
                    let request = match form.iccid() {
                        Some(iccid) => Request::Topup(TopupRequest {
                            iccid: iccid.to_string(),
                            slug: plan.slug.clone(),
                            qty: form.qty,
                        }),
                        None => Request::PlaceOrder(OrderRequest {
                            slug: plan.slug.clone(),
                            qty: form.qty,
                        }),
                    };
                    form.stage = Stage::Sending;
                    let id = self.send(request, effects);
                    if let Some(Overlay::Purchase(form)) = &mut self.overlay {
                        form.request = Some(id);
                    }
                }
                KeyCode::Esc => form.stage = Stage::Choosing,
                _ => {}
            },
            // Loading, Empty, Done, Failed, Unknown with its answer: close.
            _ => {
                if matches!(key.code, KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q')) {
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
