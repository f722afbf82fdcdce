//! The dashboard's state and `update`: messages in, effects out, no I/O.
//!
//! `App` is the screen (tab, mode, messages, keys, clock) plus the `Account` in use
//! (`account.rs`: its profile, money, inventory index and tabs), which a switch replaces whole.
//! Each tab's state, behaviour and drawing is in its folder of `tabs/` (the `TabState` trait);
//! the app asks the tab shown and chooses it in one place.
//!
//! Requests follow from state: after every message, `fetch_missing` asks for whatever the screen
//! needs and does not have, and `cancel_unwanted` cancels what it no longer needs. Every fetched
//! thing is a `Remote` (not asked, loading, loaded, failed); everything running in the background
//! is in one registry (`kit/jobs.rs`), each job with its owner (a tab, a window, the account),
//! and the answer goes to that owner (`requests.rs` routes). Keys go through the keymap
//! (`actions.rs`) to the tab shown or the window open, which handle their own (`on_action`). A
//! tab or a window never reaches into the app or another tab: it says what the screen does after
//! (`kit/then.rs`), and what happened elsewhere is told to every tab (`Event`).

mod account;
mod accounts;
mod actions;
mod exports;
mod requests;
mod screen;
mod views;

pub use crate::forms::mode::{Mode, Overlay};
use crate::index::Index;
pub use crate::kit::input::TextInput;
pub use crate::kit::jobs::{Job, Jobs, Outbox, Owner, Running};
pub use crate::kit::paged::{PAGE_PAUSE, Paged};
pub use crate::kit::remote::{Loaded, Remote};
pub use crate::kit::search::SearchBox;
pub use crate::kit::status::{Halt, Tone};
pub use crate::kit::tab::Tab;
pub use crate::kit::then::{About, Event, Then};
use crate::tabs::catalog::Catalog;
pub use crate::tabs::ctx::Ctx;
use crate::tabs::esims::Esims;
use crate::tabs::orders::Orders;
use crate::tabs::{JobDone, TabState};
pub use account::{Account, Tabs};
pub use exports::{Export, ExportState};
use strum::IntoEnumIterator;

use super::keymap::Keymap;
use super::msg::{BulkStep, Effect, JobId, Msg};
use crate::msg::Request;
use esimdash_api::model::Profile;
use std::time::{Duration, Instant};

/// How long a message in the status line stays.
pub const FLASH_FOR: Duration = Duration::from_secs(5);
/// Spinner frame interval while something loads.
pub const SPINNER_EVERY: Duration = Duration::from_millis(120);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    pub text: String,
    pub tone: Tone,
    pub until: Instant,
}

/// The dashboard: the screen (tab, mode, messages, keys, clock) and the account in use. A
/// switch of account replaces `account` whole; the screen stays.
pub struct App {
    tab: Tab,
    mode: Mode,
    keymap: Keymap,
    account: Account,
    flash: Option<Flash>,
    /// Running against the built-in sandbox.
    demo: bool,
    /// Whether the terminal reports the mouse (off: the terminal selects text).
    mouse: bool,
    spinner: usize,
    /// The header warns below this balance.
    low_balance: rust_decimal::Decimal,
    /// The profiles the picker offers, and the one being opened.
    profiles: Vec<String>,
    switching: Option<String>,
    /// Earlier payments settled, in words, until the window that shows them is closed.
    notices: Vec<String>,
    /// Quitting waits for a payment's answer: what the status line says meanwhile.
    quitting: Option<String>,
    dirty: bool,
    quit: bool,
    /// Ctrl-Z or a stop signal asked to suspend (done once no write is in flight).
    suspend_wanted: bool,
    /// The team's own commands (`[[commands]]`), offered in the palette.
    commands: Vec<esimdash_front::team_commands::TeamCommand>,
    /// The saved views (`[[views]]`), what is wrong with the entries that are not, and the
    /// config file a view is saved in.
    views: Vec<esimdash_front::views::SavedView>,
    view_problems: Vec<String>,
    config_path: Option<std::path::PathBuf>,
    /// The last team command's id; those running, with their names and time limits.
    next_command: u64,
    running_commands: Vec<(u64, String, std::time::Duration)>,
}

impl App {
    pub fn new(demo: bool) -> Self {
        Self {
            tab: Tab::Catalog,
            mode: Mode::Browse,
            keymap: Keymap::default(),
            account: Account::default(),
            flash: None,
            demo,
            mouse: true,
            spinner: 0,
            low_balance: esimdash_front::config::DEFAULT_LOW_BALANCE,
            profiles: Vec::new(),
            switching: None,
            notices: Vec::new(),
            quitting: None,
            dirty: true,
            quit: false,
            suspend_wanted: false,
            commands: Vec::new(),
            views: Vec::new(),
            view_problems: Vec::new(),
            config_path: None,
            next_command: 0,
            running_commands: Vec::new(),
        }
    }

    /// With the config file's thresholds.
    pub fn with_preferences(mut self, prefs: &esimdash_front::config::Preferences) -> Self {
        self.low_balance = prefs.low_balance;
        self.commands.clone_from(&prefs.commands);
        self.views.clone_from(&prefs.views);
        self.view_problems.clone_from(&prefs.view_problems);
        self.config_path.clone_from(&prefs.config_path);
        if let Some(first) = prefs.view_problems.first() {
            let more = prefs.view_problems.len() - 1;
            let text = if more > 0 {
                format!("{first} (and {more} more: V lists them)")
            } else {
                format!("{first} (V lists the views)")
            };
            self.flash(text, Tone::Error, std::time::Instant::now());
        }
        self.account.index.use_preferences(prefs);
        self
    }

    /// With "now" pinned, for tests whose sandbox is seeded at a fixed time.
    pub fn with_clock(mut self, at: chrono::DateTime<chrono::Utc>) -> Self {
        self.account.index.pin_clock(at);
        self
    }

    /// The tab bar's labels, with what each tab adds (My eSIMs: how many need attention).
    pub fn tab_labels(&self) -> Vec<(Tab, String)> {
        Tab::iter()
            .map(|t| {
                let label = t.label(self.account.tabs.get(t).badge(&self.account.index));
                match self.shown_view(t) {
                    // The view's name, short: the bar fits 80 columns.
                    Some(view) => {
                        let short: String = view.chars().take(18).collect();
                        let cut = if short.len() < view.len() { "…" } else { "" };
                        (t, format!("{}[{short}{cut}] ", label))
                    }
                    None => (t, label),
                }
            })
            .collect()
    }

    /// What the tab shown does.
    pub fn tab_state(&self) -> &dyn TabState {
        self.account.tabs.get(self.tab)
    }

    /// What the tab shown does, with the account's index lent to it.
    fn tab_state_mut(&mut self) -> (&mut dyn TabState, &mut Index) {
        let account = &mut self.account;
        (account.tabs.get_mut(self.tab), &mut account.index)
    }

    /// The account's inventory index.
    pub fn index(&self) -> &Index {
        &self.account.index
    }

    /// The balance under which the header warns.
    pub fn low_balance(&self) -> rust_decimal::Decimal {
        self.low_balance
    }

    /// With the user's key bindings.
    pub fn with_keymap(mut self, keymap: Keymap) -> Self {
        self.keymap = keymap;
        self
    }

    /// Whether the mouse is reported at start (the runtime turns capture on accordingly).
    pub fn with_mouse(mut self, on: bool) -> Self {
        self.mouse = on;
        self
    }

    /// The first requests, before any message.
    pub fn start(&mut self) -> Vec<Effect> {
        let mut effects = Vec::new();
        Outbox::new(&mut self.account.jobs, &mut effects).load_inventory();
        self.fetch_missing(Instant::now(), &mut effects);
        effects
    }

    pub fn tab(&self) -> Tab {
        self.tab
    }

    pub fn mode(&self) -> &Mode {
        &self.mode
    }

    pub fn overlay(&self) -> Option<&Overlay> {
        self.mode.overlay()
    }

    pub fn keymap(&self) -> &Keymap {
        &self.keymap
    }

    /// The profile's state (loading, loaded, failed).
    pub fn account(&self) -> &Remote<Profile> {
        &self.account.profile
    }

    /// The money of the last 30 days, as last read.
    pub fn money(&self) -> &Remote<esimdash_ledger::overview::Overview> {
        &self.account.money
    }

    /// The profile as last loaded.
    pub fn profile(&self) -> Option<&Profile> {
        self.account.profile.value()
    }

    pub fn catalog(&self) -> &Catalog {
        &self.account.tabs.catalog
    }

    pub fn orders(&self) -> &Orders {
        &self.account.tabs.orders
    }

    pub fn esims(&self) -> &Esims {
        &self.account.tabs.esims
    }

    /// The eSIM selected on My eSIMs, when its record is at hand.
    pub fn selected_esim(&self) -> Option<&esimdash_api::model::Esim> {
        self.account.tabs.esims.selected(&self.account.index)
    }

    /// The ICCID selected on My eSIMs (known from the index before its record is).
    pub fn selected_iccid(&self) -> Option<esimdash_domain::iccid::EsimIccid> {
        self.account.tabs.esims.selected_iccid(&self.account.index)
    }

    pub fn is_saving(&self) -> bool {
        self.account.saving.is_loading()
    }

    pub fn flash_message(&self) -> Option<&Flash> {
        self.flash.as_ref()
    }

    pub fn halt(&self) -> Option<&Halt> {
        self.account.halt.as_ref()
    }

    pub fn rate_limited_until(&self) -> Option<Instant> {
        self.account.rate_limited_until
    }

    /// The pacing countdown to show: only while the screen waits for an answer.
    pub fn pacing_countdown(&self) -> Option<Instant> {
        self.account.paced_until.filter(|_| self.is_loading())
    }

    pub fn demo(&self) -> bool {
        self.demo
    }

    pub fn mouse(&self) -> bool {
        self.mouse
    }

    pub fn spinner(&self) -> usize {
        self.spinner
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Earlier payments settled, in words, not yet dismissed.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The saved index read at start; dropped when it is of an account no longer in use.
    fn on_saved_inventory(
        &mut self,
        id: JobId,
        loaded: Option<Box<esimdash_inventory::store::SavedIndex>>,
        trouble: Option<String>,
    ) {
        if let Some(Running {
            job: Job::LoadInventory,
            ..
        }) = self.account.jobs.finish(id)
        {
            if let Some(loaded) = loaded {
                self.account.use_saved(*loaded);
            }
            // A window that stays: it says why finding reads the list again.
            self.notices.extend(trouble);
            self.dirty = true;
        }
    }

    /// eSIMs the client read, into the index; dropped when of an account no longer in use.
    fn on_index_seen(&mut self, profile: &str, seen: &esimdash_inventory::Seen, now: Instant) {
        if self.account.session.profile == profile {
            if self.account.index_seen(seen) {
                self.found_iccid(now);
            }
            self.dirty = true;
        }
    }

    fn on_notice(&mut self, profile: &str, notice: esimdash_api::Notice, now: Instant) {
        match notice {
            esimdash_api::Notice::WaitingForLock => self.flash(
                "Another esimdash is paying from this account: this payment waits for it to finish",
                Tone::Info,
                now,
            ),
            esimdash_api::Notice::TrailUnwritten(words) => {
                self.notices.push(words);
                self.dirty = true;
            }
            // The status line counts the pacer's wait down (`pacing`).
            esimdash_api::Notice::WaitingForBudget(_) => {}
            esimdash_api::Notice::Settled(settled) => {
                let sentence = settled.sentence();
                self.notices.push(if profile.is_empty() {
                    sentence
                } else {
                    format!("[{profile}] {sentence}")
                });
                self.dirty = true;
            }
        }
    }

    /// The runtime holds the quit until a payment's answer is in; the screen says why.
    pub fn wait_to_quit(&mut self, why: String) {
        self.quitting = Some(why);
        self.dirty = true;
    }

    pub fn quitting(&self) -> Option<&str> {
        self.quitting.as_deref()
    }

    /// Whether the screen must be drawn again; clears the flag.
    pub fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    /// The key's seat at a team gateway, as an answer of this account's told it (one of an
    /// account left behind is dropped).
    fn on_seat(&mut self, id: JobId, seat: Option<esimdash_api::relay::Seat>) {
        if self.account.jobs.running_job(id).is_some() && seat != self.account.seat {
            self.account.seat = seat;
            self.dirty = true;
        }
    }

    /// The user typed: the screen answers, and a failed export's notice has been seen.
    fn typed(&mut self) {
        self.dirty = true;
        self.forget_failed_export();
    }

    pub fn update(&mut self, msg: Msg, now: Instant) -> Vec<Effect> {
        let mut effects = Vec::new();
        match msg {
            Msg::Key(key) => {
                self.typed();
                self.on_key(key, now, &mut effects);
            }
            Msg::Paste(text) => {
                self.typed();
                self.on_paste(&text, now);
            }
            Msg::Mouse(mouse) => self.on_mouse(mouse, now),
            Msg::Suspend => self.suspend(now),
            Msg::Resumed => {
                // The terminal was taken again: draw it whole, mouse reporting as it was.
                self.dirty = true;
                effects.push(Effect::Mouse(self.mouse));
            }
            Msg::Resize => self.dirty = true,
            Msg::Tick => self.on_tick(now),
            Msg::Answer(answer) => self.on_answer(answer.id, answer.result, now, &mut effects),
            Msg::CommandRan { id, ran } => self.command_ran(id, ran, now),
            Msg::Copied { what, result } => match result {
                Ok(delivery) => self.flash(format!("{what} {}", delivery.describe()), Tone::Success, now),
                Err(why) => self.flash(format!("{what} not copied: {why}"), Tone::Error, now),
            },
            Msg::Seat { id, seat } => self.on_seat(id, seat),
            Msg::Pacing(until) => {
                if until != self.account.paced_until {
                    self.account.paced_until = until;
                    self.dirty = true;
                }
            }
            Msg::SavedInventory { id, loaded, trouble } => self.on_saved_inventory(id, loaded, trouble),
            Msg::IndexSeen { profile, seen } => self.on_index_seen(&profile, &seen, now),
            Msg::QrSaved { id, result } => self.job_done(id, now, &mut effects, |job| match job {
                Job::SaveQr { iccid, code } => Some(JobDone::QrSaved { iccid, code, result }),
                _ => None,
            }),
            Msg::QrFolderSaved { id, result } => self.job_done(id, now, &mut effects, |job| {
                matches!(job, Job::SaveQrFolder(_)).then(|| JobDone::QrFolderSaved(result))
            }),
            Msg::Export { id, step } => self.on_export(id, step, now),
            Msg::Bulk { id, step } => self.on_bulk(id, step, now, &mut effects),
            Msg::Switched { name, result } => self.on_switched(name, result, now, &mut effects),
            Msg::Notice { profile, notice } => self.on_notice(&profile, notice, now),
        }
        if matches!(self.mode, Mode::Browse) && !self.notices.is_empty() {
            self.mode = Mode::Overlay(Overlay::Notices);
            self.dirty = true;
        }
        self.follow(now, &mut effects);
        if self.quit {
            effects.push(Effect::Quit);
        } else {
            if self.suspend_wanted && !self.account.jobs.writing() {
                self.suspend_wanted = false;
                effects.push(Effect::Suspend);
            }
            self.cancel_unwanted(&mut effects);
            self.fetch_missing(now, &mut effects);
        }
        effects
    }

    /// Whether anything is being fetched or sent (the spinner turns).
    pub fn is_loading(&self) -> bool {
        self.account.jobs.loading()
    }

    /// The reads in flight: each one's answer is awaited (one that is not is cancelled).
    pub fn reads_in_flight(&self) -> Vec<JobId> {
        self.account.jobs.reads().into_iter().map(|(id, _, _)| id).collect()
    }

    /// When the app next needs a `Tick`; `None` when idle (no timer runs, no CPU is used).
    pub fn next_wake(&self, now: Instant) -> Option<Instant> {
        if self.account.halt.is_some() {
            return None;
        }
        let mut wake: Option<Instant> = None;
        let mut at = |t: Instant| wake = Some(wake.map_or(t, |w| w.min(t)));
        if self.is_loading() || self.bulk_running() || !self.running_commands.is_empty() {
            at(now + SPINNER_EVERY);
        }
        for until in [self.account.rate_limited_until, self.pacing_countdown()]
            .into_iter()
            .flatten()
        {
            // Each whole second of the countdown, and the end.
            let left = until.saturating_duration_since(now);
            at(now
                + Duration::from_nanos(u64::from(left.subsec_nanos()))
                    .max(Duration::from_millis(1))
                    .min(left));
            at(until);
        }
        self.flash.as_ref().map(|f| f.until).into_iter().for_each(&mut at);
        for tab in Tab::iter() {
            self.account.tabs.get(tab).deadlines().into_iter().for_each(&mut at);
        }
        wake
    }

    pub fn flash(&mut self, text: impl Into<String>, tone: Tone, now: Instant) {
        self.flash = Some(Flash {
            text: text.into(),
            tone,
            until: now + FLASH_FOR,
        });
        self.dirty = true;
    }

    /// A step of a bulk run, to its window (when it still shows that run); its end ends the job.
    fn on_bulk(&mut self, id: JobId, step: BulkStep, now: Instant, effects: &mut Vec<Effect>) {
        self.dirty = true;
        let ours = matches!(self.account.jobs.running_job(id), Some(Job::BulkTopup));
        if matches!(step, BulkStep::Ended(_) | BulkStep::Repeats(_)) {
            self.account.jobs.finish(id);
        }
        let then = crate::forms::window::on_bulk_step(self.mode.overlay_mut(), id, ours, step);
        self.then(then, now, effects);
    }

    /// Whether a bulk top-up is paying (its window's spinner turns).
    pub(super) fn bulk_running(&self) -> bool {
        self.account.jobs.running().any(|j| matches!(j, Job::BulkTopup))
    }

    fn on_tick(&mut self, now: Instant) {
        if self.is_loading() || self.bulk_running() || !self.running_commands.is_empty() {
            self.spinner = self.spinner.wrapping_add(1);
            self.dirty = true;
        }
        if let Some(until) = self.account.rate_limited_until {
            self.dirty = true;
            if now >= until {
                self.account.rate_limited_until = None;
            }
        }
        if let Some(until) = self.account.paced_until {
            self.dirty = true;
            if now >= until {
                self.account.paced_until = None;
            }
        }
        if self.flash.as_ref().is_some_and(|f| now >= f.until) {
            self.flash = None;
            self.dirty = true;
        }
        for tab in Tab::iter() {
            if self.account.tabs.get_mut(tab).tick(now) {
                self.dirty = true;
            }
        }
    }

    /// Asks for what the screen needs and does not have: the header's profile, the window
    /// open, and the tab shown. Nothing is sent while halted or rate limited; a failed load is
    /// not asked again until the user refreshes.
    fn fetch_missing(&mut self, now: Instant, effects: &mut Vec<Effect>) {
        if self.account.halt.is_some() || self.account.rate_limited_until.is_some() {
            return;
        }
        let before = effects.len();
        let typing = matches!(self.mode, Mode::Typing);
        let account = &mut self.account;
        let mut out = Outbox::new(&mut account.jobs, effects);
        if account.profile.wanted() {
            let id = out.send(Request::Profile);
            account.profile.start(id);
        }
        if account.money.wanted() {
            let id = out.send(Request::Money);
            account.money.start(id);
        }
        self.mode.fetch(&mut out);
        account
            .tabs
            .get_mut(self.tab)
            .fetch(&mut out.owned_by(Owner::Tab(self.tab)), now, typing, &account.index);
        // The account's index reads for My eSIMs shown, and for an order's detail that names its
        // eSIMs whichever tab is shown; My eSIMs may hold the read for an answer on its way.
        let order = match self.mode.overlay() {
            Some(Overlay::OrderDetail(order)) if order.iccid.is_empty() => Some(order),
            _ => None,
        };
        if let Some(order) = order {
            let at_hand = account.tabs.esims.at_hand(&account.index);
            account.index.look_for_order(order, at_hand.into_iter());
        }
        if order.is_some() || self.tab == Tab::Esims {
            let hold = account.tabs.esims.holds_index(&account.index);
            account.index.fetch(&mut out, hold);
        }
        if effects.len() > before {
            self.dirty = true;
        }
    }

    /// After money moved: the header and every tab's lists are fetched again.
    fn money_moved(&mut self, balance: Option<rust_decimal::Decimal>) {
        if let (Some(profile), Some(balance)) = (self.account.profile.value_mut(), balance) {
            profile.balance_usd = Some(balance);
        }
        self.account.profile.invalidate();
        self.account.money.invalidate();
        self.account.index.from_the_top();
        self.tell(&Event::MoneyMoved);
    }

    /// Tells every tab what happened elsewhere.
    fn tell(&mut self, event: &Event) {
        for tab in Tab::iter() {
            self.account.tabs.get_mut(tab).on_event(event, &self.account.index);
        }
    }

    /// Lends `tab` what it may read and send (`about`: what a key handed to it is about); what
    /// it asks of the screen is done after.
    fn with_tab<R>(
        &mut self,
        tab: Tab,
        about: About,
        now: Instant,
        effects: &mut Vec<Effect>,
        f: impl FnOnce(&mut dyn TabState, &mut Ctx<'_>) -> R,
    ) -> R {
        let account = &mut self.account;
        let mut ctx = Ctx {
            now,
            about,
            mode: &self.mode,
            keymap: &self.keymap,
            profile: account.profile.value(),
            index: &mut account.index,
            out: Outbox::owned(&mut account.jobs, effects, Owner::Tab(tab)),
            next_mode: None,
            then: Vec::new(),
        };
        let result = f(account.tabs.get_mut(tab), &mut ctx);
        let (next_mode, then) = (ctx.next_mode, ctx.then);
        // The window it opens first, then the rest in order (a tab shown after closes it).
        if let Some(mode) = next_mode {
            self.mode = mode;
            self.dirty = true;
        }
        self.then(then, now, effects);
        result
    }

    /// After every message, each tab follows what the screen now shows.
    fn follow(&mut self, now: Instant, effects: &mut Vec<Effect>) {
        for tab in Tab::iter() {
            self.with_tab(tab, About::Selection, now, effects, |state, ctx| state.follow(ctx));
        }
    }

    /// Does what a tab or a form asked of the screen, in order.
    fn then(&mut self, then: Vec<Then>, now: Instant, effects: &mut Vec<Effect>) {
        if !then.is_empty() {
            self.dirty = true;
        }
        for step in then {
            match step {
                Then::Flash(text, tone) => self.flash(text, tone, now),
                Then::Quiet => self.flash = None,
                Then::FoundIccid => self.found_iccid(now),
                Then::MoneyMoved(balance) => self.money_moved(balance),
                Then::Tell(event) => self.tell(&event),
                Then::Close => self.mode = Mode::Browse,
                Then::Show(tab) => self.set_tab(tab),
                Then::Copy { what, checked } => self.copy_checked(what, checked, now, effects),
                Then::SaveProfile(update) => {
                    let id = Outbox::new(&mut self.account.jobs, effects).send(Request::UpdateProfile(update));
                    self.account.saving.start(id);
                }
                Then::Hand { tab, action, about } => {
                    self.with_tab(tab, about, now, effects, |state, ctx| state.on_action(action, ctx));
                }
            }
        }
    }

    /// The search typed, the lookup or a background page brought the whole ICCID searched for:
    /// typing ends on it, detail open.
    fn found_iccid(&mut self, now: Instant) {
        // Found while another tab is shown (a read still under way): selected on My eSIMs,
        // nothing opened over the tab in view.
        if self.tab == Tab::Esims && matches!(self.mode, Mode::Typing | Mode::Browse) {
            self.mode = Mode::Detail;
            self.flash("Found the eSIM with that ICCID", Tone::Success, now);
        }
    }

    /// `r`: the header and the current view, fetched again.
    fn refresh(&mut self) {
        if matches!(self.account.halt, Some(Halt::Unauthorized { .. })) {
            return;
        }
        self.account.halt = None;
        self.account.profile.invalidate();
        // A read of the money under way reads to the top already: asking again would cut it
        // off and start over (its first look can be 40 pages).
        if !self.account.money.is_loading() {
            self.account.money.invalidate();
        }
        let (tab, index) = self.tab_state_mut();
        tab.refresh(index);
        // What an order's detail shows of its eSIM is read again: the index from the top (a
        // failed or held read included).
        if matches!(self.mode.overlay(), Some(Overlay::OrderDetail(_))) {
            self.account.index.from_the_top();
        }
    }

    /// Switching tab leaves any mode of the old tab.
    fn set_tab(&mut self, tab: Tab) {
        self.tab = tab;
        self.mode = Mode::Browse;
    }
}
