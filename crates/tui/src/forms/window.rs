//! What a window over the tab is to the app: the keys that apply while it is open, its drawing,
//! what it reads, the text it takes, its own keys and the answers to its requests. The app
//! speaks to the window open only through this trait; `Overlay` lists the windows, and this
//! file is the one place that says which window does what (an arm per window in each method,
//! no catch-all: a window added without its arms does not compile).

use crate::forms::mode::Overlay;
use crate::keymap::{Action, Chord, Context};
use crate::kit::input::Pasted;
use crate::kit::jobs::Outbox;
use crate::kit::remote::Slot;
use crate::kit::then::Then;
use crate::msg::{JobId, Payload, Request};
use crate::view::Look;
use crate::view::overlays::{self, WindowFacts};
use crossterm::event::KeyEvent;
use esimdash_api::ApiError;
use ratatui::Frame;
use ratatui::layout::Rect;
use rust_decimal::Decimal;
use std::time::Instant;

/// What a window's key may read of the account, and where its requests go.
pub struct WindowCtx<'a, 'b> {
    pub now: Instant,
    /// The balance as last read.
    pub balance: Option<Decimal>,
    /// What is left of the seat's daily cap today, at a team gateway.
    pub seat_left: Option<Decimal>,
    /// The profile's change is being saved.
    pub saving: bool,
    pub out: &'a mut Outbox<'b>,
}

pub trait Window {
    /// The contexts whose keys apply while it is open, first match wins (none: nothing may
    /// interrupt it, a payment being sent).
    fn contexts(&self) -> Vec<Context>;

    /// Draws it over `area`, from its own state and the frame's context.
    fn draw(&self, frame: &mut Frame, area: Rect, facts: &WindowFacts<'_>, look: &Look<'_>);

    /// Asks for what it shows and does not have.
    fn fetch(&mut self, out: &mut Outbox<'_>);

    /// Whether printable keys edit its text.
    fn takes_text(&self) -> bool;

    /// A key typed into its text.
    fn edit(&mut self, key: KeyEvent);

    /// A paste into its text, as one edit; `None` where it takes no text.
    fn paste(&mut self, text: &str) -> Option<Pasted>;

    /// A key of its own; what the screen does after (`None`: not one of its keys: the app's
    /// own windows, whose keys the app handles).
    fn on_action(&mut self, action: Action, chord: Chord, ctx: &mut WindowCtx<'_, '_>) -> Option<Vec<Then>>;

    /// Where the answer to one of its requests goes, while it awaits it.
    fn slot(&mut self, request: &Request) -> Option<&mut dyn Slot>;

    /// The answer to one of its requests; `None`: not of the kind asked for.
    fn on_answer(&mut self, id: JobId, request: &Request, payload: Payload, now: Instant) -> Option<Vec<Then>>;

    /// One of its requests failed: `true` when it says so itself (the app adds nothing).
    fn on_error(&mut self, request: &Request, error: &ApiError) -> bool;

    /// A request of the app's that it follows ended (the profile saved, or refused): what the
    /// screen does after; `None` where it does not follow that request.
    fn on_done(&mut self, request: &Request, error: Option<&ApiError>) -> Option<Vec<Then>>;

    /// Whether it withholds `action` now (a review that will not send): its key is left out
    /// of the status line's hints.
    fn withholds(&self, action: Action, balance: Option<Decimal>) -> bool;
}

impl Window for Overlay {
    fn contexts(&self) -> Vec<Context> {
        match self {
            Overlay::Help { .. } => vec![Context::Help, Context::Popup],
            Overlay::PlanDetail { .. } | Overlay::Notices => vec![Context::Popup],
            Overlay::OrderDetail(_) => vec![Context::OrderDetail, Context::Popup],
            Overlay::StatusPicker { .. } | Overlay::AccountPicker { .. } => vec![Context::Picker],
            Overlay::ProfileForm(_) => vec![Context::ProfileForm],
            Overlay::IccidPrompt { .. } => vec![Context::IccidPrompt],
            Overlay::Replace { .. } => vec![Context::Replace],
            Overlay::Purchase(form) => form.contexts(),
            Overlay::Bulk(form) => form.contexts(),
            Overlay::Requests(window) => window.contexts(),
            Overlay::Triage(_) => vec![Context::Triage],
            Overlay::Views(_) => vec![Context::Views],
            Overlay::Palette(_) => vec![Context::Palette],
            Overlay::CommandOutput(_) => vec![Context::Popup],
        }
    }

    fn draw(&self, frame: &mut Frame, area: Rect, facts: &WindowFacts<'_>, look: &Look<'_>) {
        let theme = look.theme;
        match self {
            Overlay::Purchase(form) => crate::forms::purchase::view::draw(frame, area, form, look, theme),
            Overlay::Bulk(form) => crate::forms::bulk::view::draw(frame, area, form, look, theme),
            Overlay::Requests(window) => crate::forms::requests::view::draw(frame, area, window, look, theme),
            Overlay::Triage(window) => crate::forms::triage::draw(frame, area, window, look, theme),
            Overlay::Views(window) => crate::forms::views::draw(frame, area, window, look, theme),
            Overlay::Palette(palette) => crate::forms::palette::draw(frame, area, palette, look, theme),
            Overlay::CommandOutput(window) => crate::forms::team_command::draw(frame, area, window, look, theme),
            Overlay::IccidPrompt { input, error } => {
                crate::forms::purchase::view::draw_iccid_prompt(frame, area, look, input, error, theme);
            }
            Overlay::ProfileForm(form) => crate::forms::profile::draw(frame, area, form, look, theme),
            Overlay::Help { scroll } => overlays::draw_help(frame, area, &facts.help, look, *scroll, theme),
            Overlay::Notices => overlays::draw_notices(frame, area, facts.notices, look, theme),
            Overlay::Replace { path, .. } => overlays::draw_replace(frame, area, path, look, theme),
            Overlay::PlanDetail { summary, fetched } => overlays::draw_plan(frame, area, summary, fetched, look, theme),
            Overlay::OrderDetail(order) => overlays::draw_order(frame, area, order, facts, theme),
            Overlay::StatusPicker { choices, cursor } => {
                overlays::draw_status_picker(frame, area, choices, *cursor, theme)
            }
            Overlay::AccountPicker { names, cursor, error } => {
                overlays::draw_account_picker(frame, area, (names, *cursor), error.as_deref(), look, theme);
            }
        }
    }

    fn fetch(&mut self, out: &mut Outbox<'_>) {
        match self {
            Overlay::PlanDetail { summary, fetched } => {
                if fetched.wanted() {
                    let id = out.send(Request::Plan {
                        slug: summary.slug.clone(),
                    });
                    fetched.start(id);
                }
            }
            Overlay::Purchase(form) => form.fetch(out),
            Overlay::Bulk(form) => form.fetch(out),
            Overlay::Requests(window) => window.fetch(out),
            Overlay::Triage(window) => window.fetch(out),
            Overlay::Help { .. }
            | Overlay::Palette(_)
            | Overlay::Views(_)
            | Overlay::CommandOutput(_)
            | Overlay::OrderDetail(_)
            | Overlay::StatusPicker { .. }
            | Overlay::ProfileForm(_)
            | Overlay::Replace { .. }
            | Overlay::AccountPicker { .. }
            | Overlay::Notices
            | Overlay::IccidPrompt { .. } => {}
        }
    }

    fn takes_text(&self) -> bool {
        matches!(
            self,
            Overlay::ProfileForm(_) | Overlay::IccidPrompt { .. } | Overlay::Palette(_)
        )
    }

    fn edit(&mut self, key: KeyEvent) {
        match self {
            Overlay::ProfileForm(form) => form.edit(key),
            Overlay::IccidPrompt { input, error } => crate::forms::iccid_prompt::edit(input, error, key),
            Overlay::Palette(palette) => palette.edit(key),
            _ => {}
        }
    }

    fn paste(&mut self, text: &str) -> Option<Pasted> {
        match self {
            Overlay::ProfileForm(form) => Some(form.paste(text)),
            Overlay::IccidPrompt { input, error } => Some(crate::forms::iccid_prompt::paste(input, error, text)),
            Overlay::Palette(palette) => Some(palette.paste(text)),
            _ => None,
        }
    }

    fn on_action(&mut self, action: Action, chord: Chord, ctx: &mut WindowCtx<'_, '_>) -> Option<Vec<Then>> {
        Some(match self {
            Overlay::Purchase(form) => {
                form.seat_left = ctx.seat_left;
                form.on_action(action, chord, ctx.balance, ctx.out)
            }
            Overlay::Bulk(form) => form.on_action(action, chord, ctx.balance, ctx.now, ctx.out),
            Overlay::ProfileForm(form) => form.on_action(action, ctx.saving),
            Overlay::IccidPrompt { input, error } => crate::forms::iccid_prompt::on_action(action, input, error),
            Overlay::Requests(window) => window.on_action(action, ctx.out),
            Overlay::Triage(window) => window.on_action(action),
            // The app runs the palette's choice (it acts as the key would).
            Overlay::Palette(_)
            | Overlay::Views(_)
            | Overlay::CommandOutput(_)
            | Overlay::Help { .. }
            | Overlay::PlanDetail { .. }
            | Overlay::OrderDetail(_)
            | Overlay::StatusPicker { .. }
            | Overlay::Replace { .. }
            | Overlay::AccountPicker { .. }
            | Overlay::Notices => return None,
        })
    }

    fn slot(&mut self, request: &Request) -> Option<&mut dyn Slot> {
        match self {
            Overlay::PlanDetail { summary, fetched } => {
                matches!(request, Request::Plan { slug } if *slug == summary.slug).then_some(fetched as &mut dyn Slot)
            }
            Overlay::Purchase(form) => form.slot(),
            Overlay::Bulk(form) => form.slot(),
            Overlay::Requests(window) => window.slot(request),
            Overlay::Triage(window) => window.slot(request),
            _ => None,
        }
    }

    fn on_answer(&mut self, id: JobId, _request: &Request, payload: Payload, now: Instant) -> Option<Vec<Then>> {
        match self {
            Overlay::PlanDetail { fetched, .. } => match payload {
                Payload::Plan(plan) => {
                    fetched.resolve(id, Box::new(plan), now);
                    Some(Vec::new())
                }
                _ => None,
            },
            Overlay::Purchase(form) => Some(form.on_answer(id, payload)),
            Overlay::Bulk(form) => form.on_answer(payload).then(Vec::new),
            Overlay::Requests(window) => window.on_answer(id, payload, now),
            Overlay::Triage(window) => window.on_answer(id, payload, now),
            _ => None,
        }
    }

    fn on_error(&mut self, request: &Request, error: &ApiError) -> bool {
        match self {
            Overlay::Purchase(form) => form.on_error(request, error),
            Overlay::Bulk(form) => form.on_error(error),
            Overlay::Requests(window) => window.on_error(request),
            _ => false,
        }
    }

    fn on_done(&mut self, request: &Request, error: Option<&ApiError>) -> Option<Vec<Then>> {
        match (self, request, error) {
            (Overlay::ProfileForm(_), Request::UpdateProfile(_), None) => Some(vec![Then::Close]),
            (Overlay::ProfileForm(form), Request::UpdateProfile(_), Some(error)) => {
                form.server_error = Some(error.server_message().map_or_else(|| error.to_string(), str::to_string));
                Some(Vec::new())
            }
            _ => None,
        }
    }

    fn withholds(&self, action: Action, balance: Option<Decimal>) -> bool {
        // A review that says the payment will not be sent (past the balance or the seat's cap).
        action == Action::Pay && matches!(self, Overlay::Purchase(form) if form.amount_problem(balance).is_some())
    }
}

/// A step of a bulk run, to the window that shows that run (if it still does); what the screen
/// does after (its end unmarks what was paid whether the window is open or not).
pub fn on_bulk_step(window: Option<&mut Overlay>, run: JobId, ours: bool, step: crate::msg::BulkStep) -> Vec<Then> {
    let form = match window {
        Some(Overlay::Bulk(form)) if form.run() == Some(run) => Some(&mut **form),
        _ => None,
    };
    crate::forms::bulk::on_step(form, ours, step)
}
