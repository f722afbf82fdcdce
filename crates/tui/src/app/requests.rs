//! Where each request's answer goes: to the tab or form that asked (the job's owner), which
//! takes it (`slot`, `on_answer`); this file only routes, and keeps the handling every request
//! shares (stale answers, cancelling what nobody waits for, 401, rate limits, going offline).
//! Requests in flight live in the account's one registry of background jobs (`jobs.rs`).
//!
//! Adding a request: its client method, its message (`msg.rs`: a `Request` variant, its call in
//! `Request::run`, a `Payload` if it brings a new shape), and its owner's `slot` and
//! `on_answer` (and `still_wants`); nothing here.

use super::{App, Halt, Job, Then, Tone};
use crate::forms::Window;
use crate::forms::mode::Overlay;
use crate::kit::jobs::{Owner, Running};
use crate::kit::remote::Slot;
use crate::msg::{Effect, JobId, Payload, Request};
use esimdash_api::ApiError;
use std::time::Instant;

impl App {
    /// Where the answer to `request` goes, if that place still exists.
    fn slot(&mut self, request: &Request, owner: Owner) -> Option<&mut dyn Slot> {
        match owner {
            Owner::Tab(tab) => self.account.tabs.get_mut(tab).slot(request),
            Owner::Window => self.mode.overlay_mut().and_then(|w| w.slot(request)),
            Owner::App => match request {
                Request::EsimScan { .. } => Some(self.account.index.slot()),
                Request::Profile => Some(&mut self.account.profile),
                Request::Money => Some(&mut self.account.money),
                Request::UpdateProfile(_) => Some(&mut self.account.saving),
                _ => None,
            },
        }
    }

    /// The window open, when it awaits this answer: one of a window closed since (and another
    /// opened) is not the new window's.
    fn window_awaiting(&mut self, id: JobId, request: &Request) -> Option<&mut Overlay> {
        let window = self.mode.overlay_mut()?;
        window.slot(request).is_some_and(|s| s.awaits(id)).then_some(window)
    }

    /// Whether the screen still needs this read's answer (writes are always awaited): a tab's
    /// read, as long as the tab wants it.
    fn still_wanted(&self, request: &Request, owner: Owner) -> bool {
        match owner {
            Owner::Tab(tab) => {
                let shown = tab == self.tab;
                self.account
                    .tabs
                    .get(tab)
                    .still_wants(request, shown, &self.account.index)
            }
            _ => true,
        }
    }

    /// Reads whose answer nobody waits for any more are cancelled: dropped from the client's
    /// queue if not yet sent, aborted if in flight, and their place asks again when it needs to.
    /// A write is never cancelled: once sent, its answer is always awaited.
    pub(super) fn cancel_unwanted(&mut self, effects: &mut Vec<Effect>) {
        for (id, request, owner) in self.account.jobs.reads() {
            if self.still_wanted(&request, owner) && self.slot(&request, owner).is_some_and(|s| s.awaits(id)) {
                continue;
            }
            if let Some(slot) = self.slot(&request, owner) {
                slot.abandon(id);
            }
            self.account.jobs.cancel(id, effects);
            tracing::debug!(id, "cancelled a request nobody waits for");
        }
    }

    /// After a 401: every request is forgotten (reads cancelled) and nothing awaits an answer
    /// any more. Files being written go on and are told as before (they need no request).
    pub(super) fn abandon_requests(&mut self, effects: &mut Vec<Effect>) {
        let requests = self.account.jobs.drain(|job| matches!(job, Job::Request(_)), effects);
        for (id, Running { job, owner }) in requests {
            if let Job::Request(request) = job
                && let Some(slot) = self.slot(&request, owner)
            {
                slot.abandon(id);
            }
        }
    }

    pub(super) fn on_answer(
        &mut self,
        id: JobId,
        result: Result<Payload, ApiError>,
        now: Instant,
        effects: &mut Vec<Effect>,
    ) {
        let unauthorized = matches!(self.account.halt, Some(Halt::Unauthorized { .. }));
        let Some(Running {
            job: Job::Request(request),
            owner,
        }) = self.account.jobs.finish(id)
        else {
            tracing::debug!(id, "dropped a stale answer");
            return;
        };
        let awaited = self.slot(&request, owner).is_some_and(|s| s.awaits(id));
        // The key refused is the account's, whoever waits for the answer that says so.
        let refused = matches!(&result, Err(e) if e.is_auth());
        if unauthorized || !(awaited || refused) {
            tracing::debug!(id, "dropped a stale answer");
            return;
        }
        self.dirty = true;
        match result {
            Ok(payload) => self.apply(id, &request, owner, payload, now, effects),
            Err(error) => self.on_error(id, &request, owner, error, now, effects),
        }
    }

    /// The answer to its owner; what the owner asks of the screen after is done.
    fn apply(
        &mut self,
        id: JobId,
        request: &Request,
        owner: Owner,
        payload: Payload,
        now: Instant,
        effects: &mut Vec<Effect>,
    ) {
        let then = match owner {
            Owner::Tab(tab) => {
                let account = &mut self.account;
                account
                    .tabs
                    .get_mut(tab)
                    .on_answer(id, request, payload, now, &account.index)
            }
            Owner::Window => self
                .window_awaiting(id, request)
                .and_then(|w| w.on_answer(id, request, payload, now)),
            Owner::App => self.apply_own(id, request, payload, now),
        };
        match then {
            Some(then) => self.then(then, now, effects),
            None => {
                // Its place says so and is not asked again until `r` (never left "loading").
                tracing::warn!(?request, "an answer that fits no request");
                if let Some(slot) = self.slot(request, owner) {
                    slot.fail(id, crate::kit::remote::misfit(), now);
                }
            }
        }
    }

    /// The answers to the screen's own requests: the header's profile, a plan's detail, the
    /// profile saved. `None`: the answer is not of the kind asked for.
    fn apply_own(&mut self, id: JobId, request: &Request, payload: Payload, now: Instant) -> Option<Vec<Then>> {
        match (request, payload) {
            (Request::EsimScan { .. }, Payload::IndexPage { seen, total }) => {
                let found_whole = self.account.index_seen(&seen);
                self.account.index.page_came(id, seen.entries.len(), total, now);
                if found_whole {
                    return Some(vec![Then::FoundIccid]);
                }
            }
            (Request::Profile, Payload::Profile(p)) => {
                self.account.profile.resolve(id, p, now);
            }
            (Request::Money, Payload::Money(overview)) => {
                self.account.money.resolve(id, *overview, now);
            }
            (Request::UpdateProfile(_), Payload::ProfileSaved(p)) => {
                self.account.saving.resolve(id, (), now);
                self.account.profile =
                    crate::kit::remote::Remote::Loaded(crate::kit::remote::Loaded { value: p, at: now });
                let mut then = self
                    .mode
                    .overlay_mut()
                    .and_then(|w| w.on_done(request, None))
                    .unwrap_or_default();
                then.push(Then::Flash("Profile saved".to_string(), Tone::Success));
                return Some(then);
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    fn on_error(
        &mut self,
        id: JobId,
        request: &Request,
        owner: Owner,
        error: ApiError,
        now: Instant,
        effects: &mut Vec<Effect>,
    ) {
        tracing::warn!(kind = error.kind(), %error, "request failed");
        if error.is_auth() {
            let revoked = matches!(error, ApiError::Revoked { .. });
            self.account.halt = Some(Halt::Unauthorized {
                revoked,
                message: error.to_string(),
            });
            self.mode = super::Mode::Browse;
            self.abandon_requests(effects);
            return;
        }
        if error.status() == Some(402) {
            // The balance the header shows was wrong: read it again.
            self.account.profile.invalidate();
        }
        if self.form_failed(id, request, owner, &error) {
            return;
        }
        let writes = request.writes();
        match &error {
            // Reads wait for the countdown and then go again by themselves; a write never does.
            ApiError::RateLimited { retry_after, .. } if !writes => {
                if let Some(slot) = self.slot(request, owner) {
                    slot.abandon(id);
                }
                self.account.rate_limited_until = Some(now + *retry_after);
                return;
            }
            ApiError::Network { .. } | ApiError::Timeout { .. } if !writes => {
                self.account.halt = Some(Halt::Offline {
                    message: error.to_string(),
                });
            }
            _ => {}
        }
        // The window that follows the request says why in place (the profile form); else the
        // status line does.
        if let Some(then) = self.mode.overlay_mut().and_then(|w| w.on_done(request, Some(&error))) {
            self.then(then, now, effects);
        } else if writes {
            self.flash(error.to_string(), Tone::Error, now);
        }
        // Shown in place, where the data would be; not asked again until `r`.
        if let Some(slot) = self.slot(request, owner) {
            slot.fail(id, error, now);
        }
    }

    /// A form's request failed: the form says so. `false` leaves the error to the general
    /// handling (a read that waits for a countdown or for `r`).
    fn form_failed(&mut self, id: JobId, request: &Request, owner: Owner, error: &ApiError) -> bool {
        match owner {
            Owner::Window => self
                .window_awaiting(id, request)
                .is_some_and(|w| w.on_error(request, error)),
            Owner::App | Owner::Tab(_) => false,
        }
    }
}
