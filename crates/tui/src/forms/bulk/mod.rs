//! The top-up of every marked eSIM at once (`t` with marks on My eSIMs), through the bulk
//! engine that `esimdash topup --from` uses: one plan and quantity for all, offered only when
//! the API offers that plan to every marked eSIM, one confirmation of the whole total, then
//! each eSIM its own payment in the background with its progress here.
//!
//! Stages: Loading (each eSIM's offers) → LeaveOut (some are offered nothing: the confirming
//! key unmarks them and goes on with the others), Refused (nothing to offer to all, or a read
//! failed) or Choosing (plan, quantity) → Confirming (the total and the balance after) → Paying (the
//! run's rows as they are done; the stop key lets the payment in flight finish and starts no
//! other) → Ended (placed, failed, unknown, the files). Nothing is sent from any other stage.

use crate::forms::plan_choice::{PaymentForm, PlanChoice};
use crate::kit::jobs::Outbox;
use crate::kit::status::Tone;
use crate::kit::then::Event;
use crate::kit::then::Then;
mod steps;
pub mod view;

pub use steps::on_step;

use crate::keymap::{Action, Chord};
use crate::msg::{BulkEnded, BulkTopup, JobId, Request};
use esimdash_api::ApiError;
use esimdash_api::model::Plan;
use esimdash_domain::iccid::{EsimIccid, Iccid};
use esimdash_front::bulk::{Ended, State};
use rust_decimal::Decimal;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// How long the confirmation of a bulk top-up stands before its pay key is taken.
pub const PAY_PAUSE: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, PartialEq)]
pub enum BulkStage {
    /// Asking which top-ups are offered for each marked eSIM.
    Loading {
        request: Option<JobId>,
    },
    /// Nothing is paid: why (the form's reads, or what the run's check refused).
    Refused(String),
    /// Some marked eSIMs are offered no top-up: each with why (`out`), and the offers of the
    /// others (`kept`), to go on with once those are unmarked.
    LeaveOut {
        out: Vec<(EsimIccid, String)>,
        kept: Vec<(Iccid, Vec<Plan>)>,
    },
    Choosing,
    Confirming,
    Paying(Progress),
    Ended(Box<BulkEnded>),
}

/// A run's rows as they are done.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Progress {
    pub run: JobId,
    /// Every row was checked and the payments began.
    pub paying: bool,
    pub placed: usize,
    /// Refused or of unknown outcome.
    pub not_placed: usize,
    /// The last row done, in words.
    pub last: Option<String>,
    /// The stop key was pressed: no further row is started.
    pub stopping: bool,
}

#[derive(Debug, Clone)]
pub struct BulkForm {
    iccids: Vec<Iccid>,
    /// Marked eSIMs known unusable before asking (an ICCID that is not valid), with why.
    left_out: Vec<(EsimIccid, String)>,
    /// Why an eSIM cannot be topped up, from its status, where the dashboard has its record.
    hints: HashMap<EsimIccid, &'static str>,
    /// Each eSIM's offered plans, in the order of `iccids`, once read.
    offers: Vec<Vec<Plan>>,
    /// Among the plans offered to every one of them (as the first eSIM's offer lists them).
    choice: PlanChoice,
    /// When the confirmation was shown (a pay key sooner is not taken).
    reviewing_since: Option<Instant>,
    stage: BulkStage,
    /// The plan and quantity a stopped run of these marks chose: chosen again.
    last: Option<(String, u32)>,
}

impl BulkForm {
    /// A form for the marked eSIMs, each with why it could not be topped up when its status
    /// tells (said if the API offers it nothing). A marked ICCID that is not valid is left out
    /// with the eSIMs offered nothing.
    pub fn new(marked: Vec<(EsimIccid, Option<&'static str>)>) -> Self {
        let mut iccids = Vec::with_capacity(marked.len());
        let mut left_out = Vec::new();
        let mut hints = HashMap::new();
        for (m, hint) in marked {
            match m.valid() {
                Ok(iccid) => iccids.push(iccid.clone()),
                Err(e) => left_out.push((m.clone(), format!("its ICCID from the API is not valid ({e})"))),
            }
            if let Some(hint) = hint {
                hints.insert(m, hint);
            }
        }
        let stage = if iccids.is_empty() {
            let named: Vec<String> = left_out.iter().map(|(iccid, why)| format!("{iccid}: {why}")).collect();
            BulkStage::Refused(format!(
                "None of the marked eSIMs can be topped up: {}.",
                named.join("; ")
            ))
        } else {
            BulkStage::Loading { request: None }
        };
        Self {
            iccids,
            left_out,
            hints,
            offers: Vec::new(),
            choice: PlanChoice::new(Vec::new()),
            reviewing_since: None,
            stage,
            last: None,
        }
    }

    /// Offers first what a stopped run of the same marks chose (a plan, a quantity).
    pub fn remembering(mut self, last: Option<(String, u32)>) -> Self {
        self.last = last;
        self
    }

    /// The plan and quantity chosen.
    pub fn chosen(&self) -> Option<(String, u32)> {
        Some((self.plan()?.slug.clone(), self.choice.qty()))
    }

    pub fn stage(&self) -> &BulkStage {
        &self.stage
    }

    pub fn count(&self) -> usize {
        self.iccids.len()
    }

    /// The plans offered to all, the one chosen and the quantity for each eSIM.
    pub fn choice(&self) -> &PlanChoice {
        &self.choice
    }

    pub fn plan(&self) -> Option<&Plan> {
        self.choice.plan()
    }

    /// The whole total: each eSIM's own price of the plan times the quantity, computed checked
    /// (`None`: a price is missing or the sum is past what a decimal holds).
    pub fn total(&self) -> Option<Decimal> {
        let slug = &self.plan()?.slug;
        self.offers.iter().try_fold(Decimal::ZERO, |sum, offered| {
            let unit = offered.iter().find(|p| &p.slug == slug)?.sell_price()?;
            sum.checked_add(esimdash_front::purchase::line_total(unit, self.choice.qty()).ok()?)
        })
    }

    /// The request slot of the offers' read (its answer is awaited there).
    pub fn request_slot(&mut self) -> Option<&mut Option<JobId>> {
        match &mut self.stage {
            BulkStage::Loading { request } => Some(request),
            _ => None,
        }
    }

    /// Asks for every eSIM's offers, once.
    pub fn fetch(&mut self, out: &mut Outbox<'_>) {
        if let BulkStage::Loading {
            request: request @ None,
        } = &mut self.stage
        {
            *request = Some(out.send(Request::TopupOffers {
                iccids: self.iccids.clone(),
            }));
        }
    }

    /// The offers arrived: the plans offered to every eSIM, or the eSIMs offered nothing.
    pub fn offered(&mut self, offers: Vec<(Iccid, Result<Vec<Plan>, String>)>) {
        if !matches!(self.stage, BulkStage::Loading { .. }) {
            return;
        }
        let mut out = std::mem::take(&mut self.left_out);
        let mut kept = Vec::with_capacity(offers.len());
        for (iccid, offered) in offers {
            match offered {
                Ok(plans) if plans.is_empty() => {
                    let why = match self.hints.get(iccid.as_str()) {
                        Some(hint) => format!("no top-up is offered: {hint}"),
                        None => "no top-up is offered for it now".to_string(),
                    };
                    out.push((iccid.into(), why));
                }
                // The dashboard's last read of it says it cannot take data: not paid in a run
                // of many on the server's word alone (its own top-up reads it again).
                Ok(_) if self.hints.contains_key(iccid.as_str()) => {
                    let hint = self.hints.get(iccid.as_str()).copied().unwrap_or_default();
                    out.push((
                        iccid.into(),
                        format!("no top-up: {hint} (as last read; t on it alone reads it again)"),
                    ));
                }
                Ok(plans) => kept.push((iccid, plans)),
                Err(why) => out.push((iccid.into(), why)),
            }
        }
        match (out.is_empty(), kept.is_empty()) {
            (true, _) => self.choose_among(kept),
            (false, true) => {
                let named: Vec<String> = out.iter().map(|(iccid, why)| format!("{iccid}: {why}")).collect();
                self.stage = BulkStage::Refused(format!(
                    "None of the {} marked eSIMs can be topped up: {}.",
                    self.iccids.len(),
                    named.join("; ")
                ));
            }
            (false, false) => self.stage = BulkStage::LeaveOut { out, kept },
        }
    }

    /// The confirming key where some are offered nothing: they are left out (the caller unmarks
    /// them, returned) and the others chosen for.
    pub fn leave_out(&mut self) -> Vec<EsimIccid> {
        let BulkStage::LeaveOut { out, kept } = std::mem::replace(&mut self.stage, BulkStage::Choosing) else {
            return Vec::new();
        };
        self.choose_among(kept);
        out.into_iter().map(|(iccid, _)| iccid).collect()
    }

    /// The plans offered to every one of these eSIMs, to choose from (or why there are none).
    fn choose_among(&mut self, kept: Vec<(Iccid, Vec<Plan>)>) {
        let (iccids, lists): (Vec<Iccid>, Vec<Vec<Plan>>) = kept.into_iter().unzip();
        self.iccids = iccids;
        let common: Vec<Plan> = lists.first().map_or_else(Vec::new, |first| {
            first
                .iter()
                .filter(|p| lists.iter().all(|l| l.iter().any(|q| q.slug == p.slug)))
                .cloned()
                .collect()
        });
        if common.is_empty() {
            self.stage = match largest_group(&self.iccids, &lists) {
                Some((out, kept)) => BulkStage::LeaveOut { out, kept },
                None => BulkStage::Refused("No top-up is offered for the marked eSIMs.".to_string()),
            };
            return;
        }
        self.offers = lists;
        self.choice = match &self.last {
            Some((slug, qty)) => PlanChoice::new(common).starting_at(slug, *qty),
            None => PlanChoice::new(common),
        };
        self.stage = BulkStage::Choosing;
    }

    /// The offers could not be read: nothing is paid.
    /// Where the answer to the offers' read goes, while the form awaits it.
    pub fn slot(&mut self) -> Option<&mut dyn crate::kit::remote::Slot> {
        self.request_slot().map(|r| r as &mut dyn crate::kit::remote::Slot)
    }

    /// The awaited offers (`false`: the answer is not of that kind).
    pub fn on_answer(&mut self, payload: crate::msg::Payload) -> bool {
        match payload {
            crate::msg::Payload::Offers(offers) => self.offered(offers),
            _ => return false,
        }
        true
    }

    /// The offers could not be read: the form says so. `false` leaves the error to the general
    /// handling too (offline, out of budget).
    pub fn on_error(&mut self, error: &ApiError) -> bool {
        self.read_failed(error);
        !error.is_transient()
    }

    pub fn read_failed(&mut self, error: &ApiError) {
        if matches!(self.stage, BulkStage::Loading { .. }) {
            self.stage = BulkStage::Refused(format!(
                "The top-ups offered could not be read ({error}); nothing was paid. Close and press t again to retry."
            ));
        }
    }

    /// Why the confirmed total cannot be paid from `balance` (said on the confirmation).
    pub fn refusal(&self, balance: Option<Decimal>) -> Option<String> {
        let Some(total) = self.total() else {
            return Some("The total cannot be computed exactly; nothing will be sent.".to_string());
        };
        let balance = balance?;
        match esimdash_front::purchase::balance_after(balance, total) {
            Err(why) => Some(format!("{why}; nothing will be sent.")),
            Ok(_) => esimdash_front::purchase::shortfall_message(balance, total),
        }
    }

    /// The confirmation is shown from `now` (the caller tells, after the review key).
    pub fn reviewing(&mut self, now: Instant) {
        if self.stage != BulkStage::Confirming {
            self.reviewing_since = None;
        } else if self.reviewing_since.is_none() {
            self.reviewing_since = Some(now);
        }
    }

    /// Whether a pay key at `now` comes too soon after the confirmation appeared: the review
    /// key held or pressed twice does not pay the whole total.
    pub fn too_soon_to_pay(&self, now: Instant) -> bool {
        self.reviewing_since
            .is_none_or(|since| now.saturating_duration_since(since) < PAY_PAUSE)
    }

    /// The run of this form, while it pays.
    pub fn run(&self) -> Option<JobId> {
        match &self.stage {
            BulkStage::Paying(p) => Some(p.run),
            _ => None,
        }
    }

    /// The stop key: whether the run is asked to stop now (not when it was already).
    pub fn stop(&mut self) -> bool {
        match &mut self.stage {
            BulkStage::Paying(p) if !p.stopping => {
                p.stopping = true;
                true
            }
            _ => false,
        }
    }

    /// The run's rows were checked and the payments began.
    pub fn paying(&mut self) {
        if let BulkStage::Paying(p) = &mut self.stage {
            p.paying = true;
        }
    }

    /// A row of the run is done.
    pub fn row_done(&mut self, iccid: &Iccid, state: &State) {
        let BulkStage::Paying(p) = &mut self.stage else { return };
        let said = match state {
            State::Placed { order, .. } => {
                p.placed += 1;
                format!("{iccid}: placed, order {order}")
            }
            other => {
                p.not_placed += 1;
                format!("{iccid}: {}", other.word().replace('_', " "))
            }
        };
        p.last = Some(said);
    }

    /// The run paid nothing: these eSIMs were topped up with the same minutes ago. They are
    /// named, and the confirming key leaves them out and goes on with the others (the choice
    /// made again); paying one a second time is the single top-up's second question.
    pub fn repeated(&mut self, repeats: Vec<(Iccid, String)>) {
        if !matches!(self.stage, BulkStage::Paying(_)) {
            return;
        }
        let repeated: HashSet<&Iccid> = repeats.iter().map(|(r, _)| r).collect();
        let kept: Vec<(Iccid, Vec<Plan>)> = self
            .iccids
            .iter()
            .cloned()
            .zip(self.offers.iter().cloned())
            .filter(|(iccid, _)| !repeated.contains(iccid))
            .collect();
        self.stage = if kept.is_empty() {
            let named: Vec<String> = repeats.iter().map(|(iccid, why)| format!("{iccid}: {why}")).collect();
            BulkStage::Refused(format!(
                "Nothing was paid: each marked eSIM was topped up with the same minutes ago ({}). To pay one a second time, top it up on its own (t without marks): it asks.",
                named.join("; ")
            ))
        } else {
            let out = repeats.into_iter().map(|(iccid, why)| (iccid.into(), why)).collect();
            BulkStage::LeaveOut { out, kept }
        };
    }

    /// The run ended (or paid nothing: why).
    pub fn ended(&mut self, result: Result<BulkEnded, String>) {
        if matches!(self.stage, BulkStage::Paying(_)) {
            self.stage = match result {
                Ok(ended) => BulkStage::Ended(Box::new(ended)),
                Err(why) => BulkStage::Refused(why),
            };
        }
    }
}

impl BulkForm {
    /// Its keys are the purchase form's; those it offers nothing leave the marks on Enter; while
    /// it pays, the close key stops it after its payment in flight.
    pub fn on_action(
        &mut self,
        action: Action,
        chord: Chord,
        balance: Option<Decimal>,
        now: Instant,
        out: &mut Outbox<'_>,
    ) -> Vec<Then> {
        if action == Action::Accept && matches!(self.stage(), BulkStage::LeaveOut { .. }) {
            return vec![Then::Tell(Event::Unmark(self.leave_out()))];
        }
        if action == Action::Pay && self.too_soon_to_pay(now) {
            return Vec::new();
        }
        let acted = self.act(action, chord, balance, out);
        self.reviewing(now);
        if acted || action != Action::Close {
            return Vec::new();
        }
        match self.run() {
            Some(run) if self.stop() => {
                out.stop_bulk(run);
                vec![Then::Flash(
                    "Stopping after the payment in flight…".to_string(),
                    Tone::Info,
                )]
            }
            Some(_) => Vec::new(),
            None => vec![Then::Close],
        }
    }

    /// Where its keys go at each stage (the purchase form's, and its own while paying).
    pub fn contexts(&self) -> Vec<crate::keymap::Context> {
        use crate::keymap::Context;
        match self.stage() {
            BulkStage::Loading { .. } | BulkStage::Refused(_) | BulkStage::Ended(_) => vec![Context::Outcome],
            BulkStage::Choosing => vec![Context::Purchase],
            BulkStage::Confirming => vec![Context::Confirm],
            BulkStage::Paying(_) => vec![Context::BulkPaying],
            BulkStage::LeaveOut { .. } => vec![Context::BulkLeaveOut],
        }
    }
}

impl PaymentForm for BulkForm {
    /// A key of the choice (plan, quantity for each eSIM), only while choosing; `false` if it
    /// is none.
    fn choose(&mut self, action: Action, chord: Chord) -> bool {
        self.stage == BulkStage::Choosing && self.choice.act(action, chord)
    }

    fn confirm(&mut self) {
        if self.stage == BulkStage::Choosing && self.plan().is_some() {
            self.stage = BulkStage::Confirming;
        }
    }

    fn back(&mut self) {
        if self.stage == BulkStage::Confirming {
            self.stage = BulkStage::Choosing;
        }
    }

    /// Starts the run from the confirmation (once: the form leaves it as it starts).
    fn pay(&mut self, balance: Option<Decimal>, out: &mut Outbox<'_>) {
        if self.stage != BulkStage::Confirming || self.refusal(balance).is_some() {
            return;
        }
        let (Some(plan), Some(total)) = (self.plan(), self.total()) else {
            return;
        };
        let run = out.bulk_topup(BulkTopup {
            iccids: self.iccids.clone(),
            slug: plan.slug.clone(),
            qty: self.choice.qty(),
            total,
        });
        self.stage = BulkStage::Paying(Progress {
            run,
            ..Progress::default()
        });
    }
}

/// The most eSIMs offered one same top-up (each eSIM is offered those of its own plan's
/// area), and the others with why: marks of several areas can go on with the largest.
#[allow(clippy::type_complexity)]
fn largest_group(iccids: &[Iccid], lists: &[Vec<Plan>]) -> Option<(Vec<(EsimIccid, String)>, Vec<(Iccid, Vec<Plan>)>)> {
    let mut offered_to: HashMap<&str, usize> = HashMap::new();
    for list in lists {
        for plan in list {
            *offered_to.entry(plan.slug.as_str()).or_default() += 1;
        }
    }
    // The most offered; among equals the first slug in order, so the choice is the same each time.
    let best = offered_to
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))?
        .0
        .to_string();
    let (mut out, mut kept) = (Vec::new(), Vec::new());
    for (iccid, list) in iccids.iter().zip(lists) {
        if list.iter().any(|p| p.slug == best) {
            kept.push((iccid.clone(), list.clone()));
        } else {
            let other = list.first().map_or_else(String::new, |p| format!(": {}…", p.name));
            out.push((iccid.clone().into(), format!("other top-ups{other}")));
        }
    }
    Some((out, kept))
}

impl Progress {
    /// The rows done so far.
    pub fn done(&self) -> usize {
        self.placed + self.not_placed
    }
}

/// A run's end in one sentence.
pub fn one_line(ended: &BulkEnded) -> String {
    let result = match &ended.result {
        Ok(path) => format!("result {}", path.display()),
        Err(why) => format!("no result file ({why})"),
    };
    let how = match ended.ended {
        Ended::Done => "",
        Ended::Stopped => "stopped: ",
        Ended::AtUnknown => "stopped at an unknown outcome: ",
        Ended::Refused => "stopped, the credentials refused: ",
    };
    format!(
        "Bulk top-up {how}{} placed, {} failed, {} unknown, {} not paid; {result}",
        ended.placed.len(),
        ended.failed.len(),
        ended.unknown.len(),
        ended.not_paid
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(slug: &str, price: &str) -> Plan {
        serde_json::from_value(serde_json::json!({
            "name": format!("Plan {slug}"), "slug": slug, "packageCode": slug, "locationCode": "FR",
            "volume": 1_000_000, "duration": 7, "durationUnit": "DAY", "price": price,
            "currencyCode": "USD", "pricing": { "sellPrice": price, "costPrice": "1.00" }
        }))
        .unwrap()
    }

    const A: &str = "8944100000000000018";
    const B: &str = "8944100000000000000";
    const C: &str = "8944100000000099994";

    fn offers(lists: Vec<(&str, Result<Vec<Plan>, String>)>) -> Vec<(Iccid, Result<Vec<Plan>, String>)> {
        lists.into_iter().map(|(i, l)| (Iccid::parse(i).unwrap(), l)).collect()
    }

    #[test]
    fn marks_of_two_areas_go_on_with_the_larger_and_each_esim_pays_its_own_price() {
        let mut form = BulkForm::new(vec![
            (EsimIccid::parse(A), None),
            (EsimIccid::parse(B), None),
            (EsimIccid::parse(C), None),
        ]);
        form.offered(offers(vec![
            (A, Ok(vec![plan("fr-1", "2.00"), plan("fr-3", "5.00")])),
            (B, Ok(vec![plan("za-1", "9.00")])),
            (C, Ok(vec![plan("fr-3", "5.50"), plan("fr-1", "2.10")])),
        ]));
        let BulkStage::LeaveOut { out, kept } = form.stage() else {
            panic!("{:?}", form.stage())
        };
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0.as_str(), B);
        assert_eq!(out[0].1, "other top-ups: Plan za-1…");
        assert_eq!(kept.len(), 2);
        assert_eq!(form.leave_out(), vec![EsimIccid::parse(B)]);
        assert_eq!(*form.stage(), BulkStage::Choosing);
        assert_eq!(form.count(), 2);
        let slugs: Vec<&str> = form.choice().plans().iter().map(|p| p.slug.as_str()).collect();
        assert_eq!(
            slugs,
            ["fr-1", "fr-3"],
            "the first eSIM's order, only those offered to both"
        );
        assert_eq!(form.total(), Some(Decimal::new(410, 2)), "2.00 + 2.10");
    }

    #[test]
    fn an_esim_offered_nothing_says_why_from_its_status_and_an_invalid_iccid_is_left_out_too() {
        let mut form = BulkForm::new(vec![
            (EsimIccid::parse(A), Some("it was cancelled")),
            (EsimIccid::parse("8944100000000000019"), None),
            (EsimIccid::parse(B), None),
        ]);
        assert_eq!(form.count(), 2, "the invalid ICCID is not asked about");
        form.offered(offers(vec![(A, Ok(Vec::new())), (B, Ok(vec![plan("fr-1", "2.00")]))]));
        let BulkStage::LeaveOut { out, .. } = form.stage() else {
            panic!("{:?}", form.stage())
        };
        let said: Vec<String> = out.iter().map(|(i, why)| format!("{i}: {why}")).collect();
        assert!(said[0].contains("not valid"), "{said:?}");
        assert_eq!(said[1], format!("{A}: no top-up is offered: it was cancelled"));
        // None left: nothing to go on with.
        let mut form = BulkForm::new(vec![(EsimIccid::parse(A), None)]);
        form.offered(offers(vec![(A, Err("no eSIM with that ICCID in this account".into()))]));
        assert!(matches!(form.stage(), BulkStage::Refused(why) if why.contains("None of the 1")));
    }
}
