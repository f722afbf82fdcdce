//! Where each key goes: the screen's own keys (quit, help, tabs, the mouse, the pickers) here;
//! the rest to the form open or the tab shown, which handle their own (`on_action`), and to the
//! list keys every tab shares. Which key means which action is the keymap's business
//! (`tui/keymap.rs`); which contexts are asked, in order, is the mode's (`mode.rs`).

use super::{About, App, Halt, Outbox, Owner, Tab, TextInput, Tone};
use crate::forms::mode::{Mode, Overlay};
use crate::forms::palette::Run;
use crate::forms::{Window, WindowCtx};
use crate::keymap::{Action, Chord, Context};
use crate::kit::search::SearchBox;
use crate::msg::Effect;
use crate::tabs::{Motion, TopUpOf};
use crossterm::event::{KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use esimdash_domain::status::StatusFilter;
use esimdash_domain::text::grouped;
use std::time::Instant;
use strum::IntoEnumIterator;

/// Rows the mouse wheel moves.
const WHEEL_ROWS: i64 = 3;

impl App {
    pub(super) fn on_key(&mut self, key: KeyEvent, now: Instant, effects: &mut Vec<Effect>) {
        let chord = Chord::from(key);
        let contexts = if matches!(self.account.halt, Some(Halt::Unauthorized { .. })) {
            vec![Context::Banner]
        } else {
            self.mode.contexts(self.tab_state().browse_contexts())
        };
        let (first, rest) = match contexts.split_first() {
            Some((first, rest)) => (Some(*first), rest),
            None => (None, &[][..]),
        };
        if let Some(context) = first
            && let Some(action) = self.keymap.action(context, chord)
        {
            return self.act(action, context, chord, now, effects);
        }
        // Text is typed after the first context had its say (Enter, Esc) and before the rest.
        if self.mode.takes_text() && TextInput::edits(&key) {
            return self.edit_text(key, now);
        }
        for &context in rest {
            if let Some(action) = self.keymap.action(context, chord) {
                return self.act(action, context, chord, now, effects);
            }
        }
        // A Ctrl quit key quits from anywhere (a payment already sent is not affected); a Ctrl
        // suspend key suspends from anywhere.
        if chord.ctrl && self.keymap.is_global_quit(chord) {
            self.quit = true;
        } else if chord.ctrl && self.keymap.action(Context::Global, chord) == Some(Action::Suspend) {
            self.suspend(now);
        }
    }

    fn edit_text(&mut self, key: KeyEvent, now: Instant) {
        match &mut self.mode {
            Mode::Typing => {
                let (tab, index) = (self.account.tabs.get_mut(self.tab), &self.account.index);
                if tab.search_box().is_some_and(|b| b.edit(key, now)) && tab.search_changed(index) {
                    self.found_iccid(now);
                }
            }
            Mode::Overlay(window) => window.edit(key),
            _ => {}
        }
    }

    /// A paste goes into the text field in focus as one edit: the list is filtered or searched
    /// once, whatever its length. What the field's limit left out is said; a paste where no
    /// field takes text changes nothing (it is never read as keys) and says where to type.
    pub(super) fn on_paste(&mut self, text: &str, now: Instant) {
        if self.account.halt.is_some() {
            return;
        }
        let pasted = match &mut self.mode {
            Mode::Typing => {
                let (tab, index) = (self.account.tabs.get_mut(self.tab), &self.account.index);
                let Some((pasted, changed)) = tab.search_box().map(|b| b.paste(text, now)) else {
                    return;
                };
                if changed && tab.search_changed(index) {
                    self.found_iccid(now);
                }
                pasted
            }
            Mode::Overlay(window) if window.takes_text() => match window.paste(text) {
                Some(pasted) => pasted,
                None => return,
            },
            _ => {
                if !text.trim().is_empty() {
                    self.paste_ignored(now);
                }
                return;
            }
        };
        if let (Some(limit), true) = (pasted.limit, pasted.left_out > 0) {
            let message = format!(
                "Paste cut to the field's {limit} characters: {} of {} left out",
                grouped(pasted.left_out as u64),
                grouped(pasted.chars as u64),
            );
            self.flash(message, Tone::Error, now);
        }
    }

    /// Ctrl-Z, or a stop signal (SIGTSTP): the dashboard suspends, at once, or once the answer
    /// of a write in flight is in (stopped mid-payment, its answer could come too late to tell
    /// whether money moved).
    pub(super) fn suspend(&mut self, now: Instant) {
        self.suspend_wanted = true;
        if self.bulk_running() {
            self.flash(
                "Suspending once the top-up of the marked eSIMs ends (Esc in its window stops it)",
                Tone::Info,
                now,
            );
        } else if self.account.jobs.writing() {
            self.flash("Suspending once the server has answered what was sent", Tone::Info, now);
        }
    }

    /// Where a paste would have gone: the search key of a list, or nowhere.
    fn paste_ignored(&mut self, now: Instant) {
        let key = self.keymap.first_key(Context::List, Action::Search);
        let list = matches!(self.mode, Mode::Browse | Mode::Detail) && self.tab_state().has_list();
        let text = if list && !key.is_empty() {
            format!("Nothing to paste into: {key} starts a search, then paste")
        } else {
            "Nothing to paste into here".to_string()
        };
        self.flash(text, Tone::Info, now);
    }

    fn act(&mut self, action: Action, context: Context, chord: Chord, now: Instant, effects: &mut Vec<Effect>) {
        match context {
            Context::Picker if matches!(self.mode.overlay(), Some(Overlay::AccountPicker { .. })) => {
                return self.act_account_picker(action, effects);
            }
            Context::Picker => return self.act_picker(action),
            Context::Palette => return self.act_palette(action, now, effects),
            Context::Views => return self.act_views(action, now),
            Context::ProfileForm
            | Context::IccidPrompt
            | Context::Purchase
            | Context::Confirm
            | Context::Outcome
            | Context::BulkPaying
            | Context::BulkLeaveOut
            | Context::Requests
            | Context::Decide
            | Context::Triage => return self.act_on_form(action, chord, now, effects),
            Context::Typing => return self.act_typing(action, now),
            Context::Replace => return self.answer_replace(action == Action::Accept, now, effects),
            _ => {}
        }
        // The windows that would change something do not open in a read-only session.
        let writes = match action {
            Action::TopUp => Some("Top-ups"),
            Action::Buy => Some("Purchases"),
            Action::Edit => Some("Profile changes"),
            _ => None,
        };
        if writes.is_some_and(|what| {
            self.refuse_read_only(what, now)
                || self.refuse_while_switching(what, now)
                || self.refuse_for_seat(action == Action::Edit, what, now)
        }) {
            return;
        }
        if !self.act_on_screen(action, context, now, effects) {
            self.act_on_tab(action, context, now, effects);
        }
    }

    /// The actions of the whole screen: quitting, help, tabs, the mouse. `false` when
    /// `action` is not one of them.
    fn act_on_screen(&mut self, action: Action, context: Context, now: Instant, effects: &mut Vec<Effect>) -> bool {
        match action {
            Action::Quit => self.quit = true,
            Action::Suspend => self.suspend(now),
            // The banner's Esc quits; elsewhere Close leaves the window or pane.
            Action::Close if context == Context::Banner => self.quit = true,
            Action::Close => {
                if matches!(self.mode.overlay(), Some(Overlay::Notices)) {
                    self.notices.clear();
                }
                self.mode = self.mode.closed();
            }
            Action::Help => self.mode = Mode::Overlay(Overlay::Help { scroll: 0 }),
            Action::Down | Action::Up if context == Context::Help => {
                if let Some(Overlay::Help { scroll }) = self.mode.overlay_mut() {
                    // The view stops at the last line; this only keeps the number sane.
                    *scroll = if action == Action::Down {
                        scroll.saturating_add(1).min(200)
                    } else {
                        scroll.saturating_sub(1)
                    };
                }
            }
            Action::Refresh => self.refresh(),
            Action::NextTab => self.set_tab(self.tab.next()),
            Action::PreviousTab => self.set_tab(self.tab.previous()),
            Action::ToggleMouse => self.toggle_mouse(now, effects),
            Action::SwitchProfile => self.open_account_picker(now),
            Action::Requests => {
                self.mode = Mode::Overlay(Overlay::Requests(Box::default()));
            }
            Action::Palette => self.open_palette(),
            Action::Views => self.open_views(now),
            _ => match Tab::iter().find(|t| t.action() == action) {
                Some(tab) => self.set_tab(tab),
                None => return false,
            },
        }
        true
    }

    /// The palette of the actions where the keyboard is: the tab's list or the eSIM pane
    /// (over a window, its keys are on its bottom line already).
    fn open_palette(&mut self) {
        let from_detail = matches!(self.mode, Mode::Detail);
        if !matches!(self.mode, Mode::Browse | Mode::Detail) {
            return;
        }
        let contexts = self.mode.contexts(self.tab_state().browse_contexts());
        let subject = self.tab_state().subject(&self.account.index).and_then(|v| v.subject);
        let commands = (self.commands.as_slice(), subject);
        let palette = crate::forms::palette::Palette::new(&self.keymap, &contexts, commands, from_detail);
        self.mode = Mode::Overlay(Overlay::Palette(Box::new(palette)));
    }

    /// The palette's keys: move, close, or run the action chosen where the palette was opened,
    /// as its key would run it there.
    fn act_palette(&mut self, action: Action, now: Instant, effects: &mut Vec<Effect>) {
        let Some(Overlay::Palette(palette)) = self.mode.overlay_mut() else {
            return;
        };
        match action {
            Action::Down | Action::Up => palette.step(action == Action::Down),
            Action::Accept => {
                let (chosen, from_detail) = (palette.selected().cloned(), palette.from_detail);
                self.mode = if from_detail { Mode::Detail } else { Mode::Browse };
                match chosen.map(|e| e.run) {
                    Some(Run::Action { context, action, chord }) => self.act(action, context, chord, now, effects),
                    Some(Run::Command(i)) => self.run_command(i, now, effects),
                    None => {}
                }
            }
            _ => {
                self.mode = if palette.from_detail {
                    Mode::Detail
                } else {
                    Mode::Browse
                }
            }
        }
    }

    /// The team command `i` on the record chosen, its window showing what it does.
    fn run_command(&mut self, i: usize, now: Instant, effects: &mut Vec<Effect>) {
        let Some(command) = self.commands.get(i).cloned() else {
            return;
        };
        let Some(values) = self.tab_state().subject(&self.account.index) else {
            self.flash("Choose a record first: the command reads its fields", Tone::Info, now);
            return;
        };
        let argv = command.argv(&values);
        self.next_command += 1;
        let id = self.next_command;
        self.running_commands.push((id, command.name.clone(), command.timeout));
        effects.push(Effect::RunCommand {
            id,
            argv: argv.clone(),
            timeout: command.timeout,
        });
        let window = crate::forms::team_command::CommandOutput {
            id,
            name: command.name,
            argv,
            timeout: command.timeout,
            ran: None,
        };
        self.mode = Mode::Overlay(Overlay::CommandOutput(Box::new(window)));
    }

    /// A team command ended: its window shows how, or (closed) the status line says it.
    pub(super) fn command_ran(&mut self, id: u64, ran: esimdash_front::team_commands::Ran, now: Instant) {
        let Some(at) = self.running_commands.iter().position(|(i, ..)| *i == id) else {
            return;
        };
        let (_, name, timeout) = self.running_commands.remove(at);
        self.dirty = true;
        if let Some(Overlay::CommandOutput(window)) = self.mode.overlay_mut()
            && window.id == id
        {
            window.ran = Some(ran);
            return;
        }
        let tone = if ran.status == Some(0) {
            Tone::Success
        } else {
            Tone::Error
        };
        self.flash(format!("{name}: {}", ran.outcome(timeout)), tone, now);
    }

    fn toggle_mouse(&mut self, now: Instant, effects: &mut Vec<Effect>) {
        self.mouse = !self.mouse;
        effects.push(Effect::Mouse(self.mouse));
        let key = self.keymap.first_key(Context::Global, Action::ToggleMouse);
        let text = if self.mouse {
            "Mouse on: wheel and clicks work; Shift+drag selects text in most terminals".to_string()
        } else {
            format!("Mouse off: drag to select text; {key} turns the mouse back on")
        };
        self.flash(text, Tone::Info, now);
    }

    /// The actions on the tab's list and its rows (the keymap gives each only in the contexts
    /// where it means something): the tab's own first, then those every list shares.
    fn act_on_tab(&mut self, action: Action, context: Context, now: Instant, effects: &mut Vec<Effect>) {
        if let Some(motion) = motion_of(action) {
            return self.tab_state_mut().0.move_cursor(motion, now);
        }
        // An order's detail: its eSIM is My eSIMs' to top up or show.
        if context == Context::OrderDetail {
            if let Some(Overlay::OrderDetail(order)) = self.mode.overlay() {
                let about = About::Order(order.clone());
                self.act_in(Tab::Esims, action, about, now, effects);
            }
            return;
        }
        if self.act_in(self.tab, action, About::Selection, now, effects) {
            return;
        }
        match action {
            Action::TopUp => match self.tab_state().top_up() {
                TopUpOf::Order(Some(order)) => {
                    self.act_in(Tab::Esims, action, About::Order(order), now, effects);
                }
                TopUpOf::Order(None) | TopUpOf::Ask => self.mode = Mode::iccid_prompt(),
            },
            Action::Open => {
                if let Some(mode) = self.tab_state().open(&self.mode) {
                    self.mode = mode;
                }
            }
            Action::Search => {
                let (tab, index) = self.tab_state_mut();
                if let Some(search) = tab.search_box() {
                    search.select_all();
                }
                tab.start_search(index);
                self.mode = Mode::Typing;
            }
            Action::Clear => {
                let (tab, index) = self.tab_state_mut();
                tab.clear_search(now, index);
            }
            Action::StatusFilter => self.open_status_picker(),
            Action::Export => self.export_or_cancel(now, effects),
            _ => {}
        }
    }

    /// `tab` handles `action` (`about`: what it is about, when not the tab's selection); what
    /// it asks of the screen is done after. `false` when it is not one of the tab's.
    fn act_in(&mut self, tab: Tab, action: Action, about: About, now: Instant, effects: &mut Vec<Effect>) -> bool {
        self.with_tab(tab, about, now, effects, |state, ctx| state.on_action(action, ctx))
    }

    fn act_typing(&mut self, action: Action, now: Instant) {
        match action {
            Action::Accept => {
                // A search that waits for a pause in typing goes now.
                let (tab, index) = self.tab_state_mut();
                if tab.search_box().is_some_and(SearchBox::apply) {
                    tab.search_changed(index);
                }
                self.mode = Mode::Browse;
            }
            Action::Clear => {
                let (tab, index) = self.tab_state_mut();
                tab.clear_search(now, index);
                self.mode = Mode::Browse;
            }
            _ => {}
        }
    }

    fn open_status_picker(&mut self) {
        let Some(current) = self.tab_state().status() else {
            return;
        };
        let choices = StatusFilter::choices();
        let cursor = choices.iter().position(|c| c == current).unwrap_or(0);
        self.mode = Mode::Overlay(Overlay::StatusPicker { choices, cursor });
    }

    fn act_picker(&mut self, action: Action) {
        let Some(Overlay::StatusPicker { choices, cursor }) = self.mode.overlay_mut() else {
            return;
        };
        if move_choice(cursor, choices.len(), action) {
            return;
        }
        match action {
            Action::Accept => {
                let choice = choices.get(*cursor).cloned().unwrap_or_default();
                let (tab, index) = self.tab_state_mut();
                tab.set_status(choice, index);
                self.mode = Mode::Browse;
            }
            Action::Close => self.mode = Mode::Browse,
            _ => {}
        }
    }

    /// The form open handles its keys; what it asks of the screen is done after.
    fn act_on_form(&mut self, action: Action, chord: Chord, now: Instant, effects: &mut Vec<Effect>) {
        let balance = self.account.profile.value().and_then(|p| p.balance_usd);
        let saving = self.account.saving.is_loading();
        let seat_left = self
            .account
            .seat
            .as_ref()
            .and_then(esimdash_api::relay::Seat::left_today);
        let Mode::Overlay(window) = &mut self.mode else {
            return;
        };
        let mut ctx = WindowCtx {
            now,
            balance,
            seat_left,
            saving,
            out: &mut Outbox::owned(&mut self.account.jobs, effects, Owner::Window),
        };
        let then = window.on_action(action, chord, &mut ctx).unwrap_or_default();
        self.then(then, now, effects);
    }

    /// Copies what passed the guard; what did not is named in a message and never copied.
    pub(super) fn copy_checked(
        &mut self,
        what: &'static str,
        checked: Result<String, String>,
        now: Instant,
        effects: &mut Vec<Effect>,
    ) {
        match checked {
            Ok(text) => effects.push(Effect::Copy { what, text }),
            Err(why) => self.flash(format!("{what} not copied: {why}"), Tone::Error, now),
        }
    }

    /// The wheel moves the list on screen, the same way the arrow keys do; a click on the tab
    /// bar switches tab. Ignored while a window is open or the banner shows.
    pub(super) fn on_mouse(&mut self, mouse: MouseEvent, now: Instant) {
        if self.account.halt.is_some() || !matches!(self.mode, Mode::Browse | Mode::Typing | Mode::Detail) {
            return;
        }
        match mouse.kind {
            // Row 1 is the tab bar (row 0 the header).
            MouseEventKind::Down(MouseButton::Left) if mouse.row == 1 => {
                if let Some(tab) = Tab::at_column(&self.tab_labels(), mouse.column) {
                    self.set_tab(tab);
                    self.dirty = true;
                }
            }
            MouseEventKind::ScrollDown => {
                self.tab_state_mut().0.move_cursor(Motion::By(WHEEL_ROWS), now);
                self.dirty = true;
            }
            MouseEventKind::ScrollUp => {
                self.tab_state_mut().0.move_cursor(Motion::By(-WHEEL_ROWS), now);
                self.dirty = true;
            }
            _ => {}
        }
    }
}

/// Down and Up in a list of `len` choices; `true` when `action` was one of them.
pub(super) fn move_choice(cursor: &mut usize, len: usize, action: Action) -> bool {
    match action {
        Action::Down => *cursor = (*cursor + 1).min(len.saturating_sub(1)),
        Action::Up => *cursor = cursor.saturating_sub(1),
        _ => return false,
    }
    true
}

/// The movement an action makes in a list, if it is one.
fn motion_of(action: Action) -> Option<Motion> {
    Some(match action {
        Action::Down => Motion::By(1),
        Action::Up => Motion::By(-1),
        Action::PageDown => Motion::Pages(1),
        Action::PageUp => Motion::Pages(-1),
        Action::HalfPageDown => Motion::HalfPages(1),
        Action::HalfPageUp => Motion::HalfPages(-1),
        Action::First => Motion::Start,
        Action::Last => Motion::End,
        _ => return None,
    })
}
