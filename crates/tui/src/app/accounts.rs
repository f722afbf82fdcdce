//! Several accounts: the profile picker, and switching while running. A switch starts the new
//! account from nothing (profile, catalog, orders, inventory), so nothing of one account is
//! ever shown under another: every request of the old one is forgotten, and an answer that
//! still comes for it finds nothing waiting and is dropped. A payment or profile change in
//! flight holds the switch until its answer is in (that answer tells whether something
//! changed), and while an account is being opened no window that would change something
//! opens.

use super::{Account, App, ExportState, Job, Outbox, Tone};
use crate::forms::Window;
use crate::forms::mode::{Mode, Overlay};
use crate::keymap::Action;
use crate::msg::Effect;
use esimdash_front::session::Session;
use std::time::Instant;

impl App {
    /// The account in use, as the config file names it, with its colour and read-only setting.
    pub fn with_session(mut self, session: Session, profiles: Vec<String>) -> Self {
        self.account.session = session;
        self.profiles = profiles;
        self
    }

    pub fn session(&self) -> &Session {
        &self.account.session
    }

    /// Who the key is at a team gateway, as its last answer said.
    pub fn seat(&self) -> Option<&esimdash_api::relay::Seat> {
        self.account.seat.as_ref()
    }

    /// The profile being opened, while it is.
    pub fn switching(&self) -> Option<&str> {
        self.switching.as_deref()
    }

    /// Why this window cannot open in a read-only session (`what`: "Top-ups"), said in the
    /// status line; `true` when it was refused. The client would refuse the request anyway.
    pub(super) fn refuse_read_only(&mut self, what: &str, now: Instant) -> bool {
        let Some(setting) = self.account.session.read_only.clone() else {
            return false;
        };
        self.flash(
            format!("{what} are off: this session is read-only ({setting})."),
            Tone::Error,
            now,
        );
        true
    }

    /// Why this window is not this seat's at a team gateway (a viewer pays for nothing, only an
    /// admin changes the profile), told before it opens; `true` when it was refused. The
    /// gateway stays the final guard.
    pub(super) fn refuse_for_seat(&mut self, edit: bool, what: &str, now: Instant) -> bool {
        let Some(seat) = &self.account.seat else {
            return false;
        };
        let allowed = if edit { seat.edits() } else { seat.pays() };
        if allowed {
            return false;
        }
        let message = format!(
            "{what} are not for this seat: agent {} is a {} at the team gateway (the team's admin gives seats that may).",
            seat.name, seat.role
        );
        self.flash(message, Tone::Error, now);
        true
    }

    /// Whether a key is not offered now: not this seat's (a viewer's payments, a support
    /// seat's profile change), a payment the review refuses, or withheld by the tab from what
    /// is selected (`TabState::withholds`).
    pub fn withholds(&self, action: Action) -> bool {
        let seat_refuses = self.account.seat.as_ref().is_some_and(|seat| match action {
            Action::Buy | Action::TopUp => !seat.pays(),
            Action::Edit => !seat.edits(),
            _ => false,
        });
        let balance = self.profile().and_then(|p| p.balance_usd);
        let review_refuses = self.overlay().is_some_and(|w| w.withholds(action, balance));
        seat_refuses || review_refuses || self.tab_state().withholds(action, &self.account.index)
    }

    /// Why this window cannot open while another account is being opened (its answer would be
    /// forgotten with the old account); `true` when it was refused.
    pub(super) fn refuse_while_switching(&mut self, what: &str, now: Instant) -> bool {
        let Some(name) = self.switching.clone() else {
            return false;
        };
        self.flash(format!("{what} wait until profile {name} is open."), Tone::Info, now);
        true
    }

    pub(super) fn open_account_picker(&mut self, now: Instant) {
        if self.profiles.len() < 2 {
            self.flash(
                "One account only: add [profiles.NAME] tables to the config file to switch between accounts (docs/configuration.md, Profiles).",
                Tone::Info,
                now,
            );
            return;
        }
        let cursor = self
            .profiles
            .iter()
            .position(|p| *p == self.account.session.profile)
            .unwrap_or(0);
        self.mode = Mode::Overlay(Overlay::AccountPicker {
            names: self.profiles.clone(),
            cursor,
            error: None,
        });
    }

    pub(super) fn act_account_picker(&mut self, action: Action, effects: &mut Vec<Effect>) {
        let writing = self.account.jobs.writing();
        let current = self.account.session.profile.clone();
        let Some(Overlay::AccountPicker { names, cursor, error }) = self.mode.overlay_mut() else {
            return;
        };
        if super::actions::move_choice(cursor, names.len(), action) {
            return;
        }
        match action {
            Action::Accept => {
                let Some(name) = names.get(*cursor).cloned() else {
                    return;
                };
                if name == current {
                    self.mode = Mode::Browse;
                } else if writing {
                    *error = Some(
                        "A payment or profile change is waiting for its answer: switch once it is in.".to_string(),
                    );
                } else {
                    effects.push(Effect::SwitchAccount(name.clone()));
                    self.switching = Some(name);
                    self.mode = Mode::Browse;
                }
            }
            Action::Close => self.mode = Mode::Browse,
            _ => {}
        }
    }

    /// The picker's account was opened, or could not be (the picker says why, and the
    /// account in use stays).
    pub(super) fn on_switched(
        &mut self,
        name: String,
        result: Result<Box<esimdash_front::session::Opened>, String>,
        now: Instant,
        effects: &mut Vec<Effect>,
    ) {
        self.switching = None;
        self.dirty = true;
        match result {
            Ok(opened) => {
                let profile = opened.session.profile.clone();
                self.start_over(opened.session.clone(), now, effects);
                effects.push(Effect::UseAccount(opened));
                Outbox::new(&mut self.account.jobs, effects).load_inventory();
                self.flash(format!("Now on profile {profile}"), Tone::Success, now);
            }
            Err(why) => {
                let cursor = self.profiles.iter().position(|p| *p == name).unwrap_or(0);
                self.mode = Mode::Overlay(Overlay::AccountPicker {
                    names: self.profiles.clone(),
                    cursor,
                    error: Some(format!(
                        "Could not open {name}: {why}. Still on {}.",
                        self.account.session.profile
                    )),
                });
            }
        }
    }

    /// Everything of the old account stopped and replaced whole; the new one loads as at
    /// start (the thresholds, keys and clock are the user's, and stay).
    /// An export of the old account's list is cancelled (and said to be); a QR file still
    /// being written goes on, and what became of it is still told.
    fn start_over(&mut self, session: Session, now: Instant, effects: &mut Vec<Effect>) {
        self.abandon_requests(effects);
        let files = self
            .account
            .jobs
            .drain(|job| matches!(job, Job::SaveQr { .. } | Job::SaveQrFolder(_)), effects);
        self.account.jobs.drain(|_| true, effects);
        if let Some(export) = self.account.export.take()
            && matches!(export.state, ExportState::Running(_))
        {
            let what = export.what;
            self.flash(
                format!("Export of {what} cancelled: another account is in use"),
                Tone::Info,
                now,
            );
        }
        let index = self.account.index.emptied();
        self.account = Account::new(session, index);
        self.account.jobs.adopt(files);
        self.mode = Mode::Browse;
    }
}
