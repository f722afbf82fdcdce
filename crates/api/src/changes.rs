//! Every request that changes something (a top-up, an order, a profile change) goes through
//! here, below every screen and command, so that no path gets around what this enforces:
//! - a read-only session refuses it before anything is sent;
//! - the audit trail gets a line per stage, and the "sent" line is on disk before the request
//!   leaves (if it cannot be written, nothing is sent);
//! - a payment carries a fresh `Idempotency-Key`; where the server has shown that it honours
//!   keys (it echoed one), a lost answer is sent once more under the same key, which cannot pay
//!   twice. Anywhere else nothing is ever sent again: the caller looks in the order list.

use super::client::{Client, PROFILE_UPDATE, Write};
use super::envelope::ProfileEnvelope;
use super::error::{ApiError, Endpoint};
use super::model::{Order, OrderRequest, Placed, Profile, ProfileUpdate, TopupRequest};
use super::payment::Payment;
use crate::audit::{Entry, Stage};
use esimdash_domain::iccid::EsimIccid;
use esimdash_domain::money::format_amount;
use esimdash_domain::order_no::OrderNo;
use esimdash_domain::purchase::ChargedOther;
use esimdash_domain::purchase::Spend;
use reqwest::Method;
use std::collections::HashSet;

/// "the same top-up was placed at 14:02 (order B1…)", for the refusal of a repeat.
pub fn describe_earlier(earlier: &crate::audit::PaymentRecord) -> String {
    let what = if earlier.action == "topup" { "top-up" } else { "order" };
    let at = earlier.asked_at.with_timezone(&chrono::Local).format("%H:%M");
    match &earlier.outcome {
        Some(crate::audit::Outcome::Placed { order_no }) => {
            format!(
                "the same {what} ({} × {}) was placed at {at} (order {order_no})",
                earlier.slug, earlier.quantity
            )
        }
        _ => format!(
            "the same {what} ({} × {}) was sent at {at} and its outcome is not known yet (it may have been placed)",
            earlier.slug, earlier.quantity
        ),
    }
}

/// Payments between their "sent" line and their outcome's, in this process: while there is
/// one, a signal (Ctrl-C, SIGTERM, a hang-up) waits for its answer before the process ends.
static IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many payments of this process are waiting for their answer.
pub fn payments_in_flight() -> usize {
    IN_FLIGHT.load(std::sync::atomic::Ordering::SeqCst)
}

/// Counts one payment in flight while it lives (also when its future is dropped).
struct InFlight;

impl InFlight {
    fn start() -> Self {
        IN_FLIGHT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A payment the server answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Paid {
    pub placed: Placed,
    pub delivery: Delivery,
    /// Placed, but for another total than the one confirmed: told loudly by every caller.
    pub charged_other: Option<ChargedOther>,
}

/// How the answer came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// The first time.
    Answered,
    /// The first answer was lost and the request was sent once more under the same key;
    /// `replayed`: the server had carried out the first one and sent its stored answer.
    Resent { replayed: bool },
    /// Sent once more under the same key, and the answer did not echo the key: the server
    /// may no longer honour keys (a failover node, a proxy that drops the header), so if the
    /// first had reached it, this is a second order. Never told as "the first had not reached
    /// it".
    ResentUnconfirmed,
}

impl Client {
    /// Places a top-up (see `pay`); an ICCID that is not one is refused before anything is sent.
    pub async fn topup(&self, request: &TopupRequest) -> Result<Placed, ApiError> {
        let payment = Payment::new(Spend::topup(request.iccid.clone(), &request.slug, request.qty), None);
        self.pay(&payment).await.map(|paid| paid.placed)
    }

    /// Places a new plan order (see `pay`).
    pub async fn place_order(&self, request: &OrderRequest) -> Result<Placed, ApiError> {
        let payment = Payment::new(Spend::order(&request.slug, request.qty), None);
        self.pay(&payment).await.map(|paid| paid.placed)
    }

    /// The payment like `spend` that paying it now would repeat (see `settle::earlier_same`),
    /// in words: what a proposal checks before a person is asked.
    pub fn would_repeat(&self, spend: &Spend) -> Option<String> {
        let records = match self.payment_records() {
            Ok(records) => records,
            Err(e) => return Some(format!("{e}, so whether the same was paid minutes ago is not known")),
        };
        super::settle::repeated(&records, spend, None).map(|r| describe_earlier(&r))
    }

    /// Why this session may not change anything (the setting that made it read-only).
    pub fn read_only(&self) -> Option<&str> {
        self.options().read_only.as_deref()
    }

    /// The refusal a write to `endpoint` gets in a read-only session; callers may ask early, to
    /// spare the user questions before a write that cannot be sent.
    pub fn ensure_writable(&self, endpoint: Endpoint) -> Result<(), ApiError> {
        match self.read_only() {
            Some(setting) => Err(ApiError::ReadOnly {
                endpoint,
                setting: setting.to_string(),
            }),
            None => Ok(()),
        }
    }

    /// Whether this server honours idempotency keys, as its latest answer to a keyed request
    /// says: in this session, or (as the audit trail shows) an earlier one, for this host and
    /// access code.
    pub fn honours_keys(&self) -> bool {
        self.seen_key_echo().unwrap_or_else(|| {
            self.echo_on_record(|| {
                self.options()
                    .audit
                    .as_ref()
                    .is_some_and(|t| t.server_echoed_keys(self.who()))
            })
        })
    }

    /// Pays: checks, records and sends (see the module's text); a lost answer is sent once
    /// more only where the server honours keys. One payment at a time per account, across
    /// processes: it waits for the account's lock, settles what an earlier session left
    /// unsettled, and refuses the same payment again within minutes unless `again` is set.
    pub async fn pay(&self, payment: &Payment) -> Result<Paid, ApiError> {
        let endpoint = payment.endpoint();
        self.release_held_lock();
        self.refuse_if_read_only(endpoint, self.payment_entry(payment, Stage::Asked))?;
        let lock = self.lock_account(endpoint).await.inspect_err(|e| {
            self.record(&self.payment_entry(payment, Stage::Asked));
            self.record_refusal(payment, e);
        })?;
        // "Asked" once the lock is held: a process settling under the lock never meets a
        // payment that is about to be sent.
        self.record_before_sending(endpoint, &self.payment_entry(payment, Stage::Asked))?;
        let settled = self.settle_unsettled(Some(&payment.key)).await;
        if !payment.again
            && let Some(earlier) = self.earlier_same(payment, &settled)
        {
            let error = ApiError::Repeat {
                endpoint,
                earlier: describe_earlier(&earlier),
            };
            self.record_refusal(payment, &error);
            return Err(error);
        }
        let first = self.send_payment(payment, 1).await;
        let error = match first {
            Ok((placed, _)) => {
                return Ok(Paid {
                    charged_other: payment.charged_other(&placed),
                    placed,
                    delivery: Delivery::Answered,
                });
            }
            Err(e) if e.outcome_unknown() && self.honours_keys() && !crate::signals::stopping() => e,
            Err(e) => return Err(self.keep_lock_if_unknown(lock, e)),
        };
        // A resend trusts only what it sees: an order of it already in the list (or a list that
        // cannot be read) is not sent again (the caller's lookup tells), whatever the server's
        // past answers said of keys.
        if self.order_list_shows(payment).await {
            return Err(self.keep_lock_if_unknown(lock, error));
        }
        tracing::warn!(%endpoint, "the answer was lost; sending once more under the same idempotency key");
        self.resend(payment, error, lock).await
    }

    /// Sends a payment whose answer was lost once more under its key: the answer (replayed or
    /// carried out now), or a refusal that says the first was never carried out. While the
    /// server says it is still handling the first (409), it is asked again, with pauses, for as
    /// long as a request may take. Anything else leaves the outcome as unknown as before.
    async fn resend(
        &self,
        payment: &Payment,
        lost: ApiError,
        lock: Option<super::lock::AccountLock>,
    ) -> Result<Paid, ApiError> {
        let deadline = tokio::time::Instant::now() + self.options().request_timeout;
        let mut pause = std::time::Duration::from_millis(250);
        for attempt in 2.. {
            match self.send_payment(payment, attempt).await {
                Ok((placed, replayed)) => {
                    let delivery = if self.seen_key_echo() == Some(true) {
                        Delivery::Resent { replayed }
                    } else {
                        Delivery::ResentUnconfirmed
                    };
                    return Ok(Paid {
                        charged_other: payment.charged_other(&placed),
                        placed,
                        delivery,
                    });
                }
                // A refusal tells that the first was never carried out only from a server that
                // confirmed the key; any other leaves the outcome as unknown as before (the
                // caller reads the order list).
                Err(e) if e.refuses_a_resend() && self.seen_key_echo() == Some(true) => return Err(e),
                Err(e) if e.refuses_a_resend() => break,
                Err(e) if e.status() == Some(409) => {
                    self.note_in_progress(&payment.key);
                    if tokio::time::Instant::now() + pause > deadline || crate::signals::stopping() {
                        let in_progress = ApiError::InProgress {
                            endpoint: payment.endpoint(),
                        };
                        return Err(self.keep_lock_if_unknown(lock, in_progress));
                    }
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
                Err(_) => break,
            }
        }
        Err(self.keep_lock_if_unknown(lock, lost))
    }

    /// Whether the order list may show an order of this payment's (new against the orders
    /// read before it, no other payment's): it does, or it could not be read. Only a list
    /// read and without one lets a resend go.
    async fn order_list_shows(&self, payment: &Payment) -> bool {
        let Some(before) = &payment.orders_before else {
            return false;
        };
        let before: HashSet<&str> = before.iter().map(String::as_str).collect();
        let claimed = self.orders_of_other_payments(&payment.key);
        let baseline = super::settle::Baseline::Before(&before);
        self.orders_that_could_be(payment, &baseline, &claimed)
            .await
            .map_or(true, |orders| !orders.is_empty())
    }

    /// After an unknown outcome the lock stays held until the lookup is done, so that no other
    /// payment of this account slips in between.
    fn keep_lock_if_unknown(&self, lock: Option<super::lock::AccountLock>, error: ApiError) -> ApiError {
        if error.outcome_unknown() {
            self.hold_lock(lock);
        }
        error
    }

    fn record_refusal(&self, payment: &Payment, error: &ApiError) {
        let mut e = self.payment_entry(payment, Stage::Refused);
        e.outcome = Some(error.to_string());
        self.record(&e);
    }

    /// One attempt of a payment, recorded: "sent" before it leaves, then what came of it.
    pub(super) async fn send_payment(&self, payment: &Payment, attempt: u32) -> Result<(Placed, bool), ApiError> {
        let endpoint = payment.endpoint();
        let body = payment.body().map_err(|e| ApiError::Setup(e.to_string()))?;
        let mut sent = self.payment_entry(payment, Stage::Sent);
        sent.attempt = (attempt > 1).then_some(attempt);
        if attempt == 1 {
            sent.orders_before.clone_from(&payment.orders_before);
        }
        // From before the "sent" line to after the outcome's, a signal waits (see `InFlight`).
        let _in_flight = InFlight::start();
        self.record_before_sending(endpoint, &sent)?;
        let result = self
            .send_write(
                Method::POST,
                endpoint,
                body,
                Write {
                    key: Some(&payment.key),
                    confirmed_repeat: payment.again,
                    request: payment.request.as_ref().filter(|p| p.at_gateway).map(|p| p.id.as_str()),
                },
            )
            .await
            .and_then(|answer| {
                let replayed = answer.replayed;
                Ok((answer.decode::<Placed>(self)?, replayed))
            });
        let mut after = match &result {
            Ok((placed, replayed)) => {
                let mut e = self.payment_entry(payment, Stage::Answered);
                e.outcome = Some(if *replayed { "replayed" } else { "placed" }.to_string());
                e.order_no = Some(placed.order.record.provider_order_no.to_string());
                e.balance_after = placed.balance_usd.map(format_amount);
                if let Some(other) = payment.charged_other(placed) {
                    tracing::error!(key = %payment.key, "{}", other.sentence());
                    e.charged = Some(format_amount(other.charged));
                    e.outcome = Some(format!("{}, but {}", e.outcome.unwrap_or_default(), other.sentence()));
                }
                e
            }
            Err(error) => {
                // A resend is refused only by what says the first was never carried out; a 409
                // says it is still being handled.
                let refused = if attempt > 1 {
                    error.refuses_a_resend()
                } else {
                    !error.outcome_unknown() && error.status() != Some(409)
                };
                let stage = if refused { Stage::Refused } else { Stage::Unknown };
                let mut e = self.payment_entry(payment, stage);
                e.outcome = Some(error.to_string());
                e
            }
        };
        after.attempt = sent.attempt;
        // Only an answer tells whether the key was echoed; a lost one says nothing.
        let answered = result.as_ref().map_or_else(|e| e.status().is_some(), |_| true);
        after.key_echoed = self.seen_key_echo().filter(|_| answered);
        self.record(&after);
        result
    }

    /// After a lost answer: the order it placed, if the order list shows one for its plan (and
    /// eSIM) that was not among `before` and that the trail does not give as another payment's.
    /// Several such orders: `ApiError::Ambiguous`, none of them claimed. Recorded as "looked
    /// up"; nothing is sent again. The account's lock, kept since the payment, is let go.
    pub async fn look_up_payment(
        &self,
        payment: &Payment,
        before: &HashSet<OrderNo>,
    ) -> Result<Option<Order>, ApiError> {
        // Let go of when this ends, or when the lookup is dropped half-way (a dashboard aborts it).
        let _lock = self.take_held_lock();
        let claimed = self.orders_of_other_payments(&payment.key);
        let before: HashSet<&str> = before.iter().map(OrderNo::as_str).collect();
        let baseline = super::settle::Baseline::Before(&before);
        let found = self
            .orders_that_could_be(payment, &baseline, &claimed)
            .await
            .and_then(|mut orders| match orders.len() {
                // The server is still handling it: not there yet says nothing; left open.
                0 if self.is_in_progress(&payment.key) => Err(ApiError::InProgress {
                    endpoint: payment.endpoint(),
                }),
                0 => Ok(None),
                1 => Ok(orders.pop()),
                _ => Err(ApiError::Ambiguous {
                    endpoint: payment.endpoint(),
                    orders: orders.iter().map(|o| o.record.provider_order_no.to_string()).collect(),
                }),
            });
        let mut entry = self.payment_entry(payment, Stage::LookedUp);
        match &found {
            Ok(Some(order)) => {
                entry.outcome = Some("the order list shows it placed".to_string());
                entry.order_no = Some(order.record.provider_order_no.to_string());
                entry.settled = Some(true);
            }
            Ok(None) => {
                entry.outcome = Some("the order list shows no new order".to_string());
                entry.settled = Some(true);
                entry.found = Some(false);
            }
            Err(ApiError::Ambiguous { orders, .. }) => {
                entry.outcome = Some("the order list shows several new orders that could be it".to_string());
                entry.candidates = Some(orders.clone());
                entry.settled = Some(true);
            }
            Err(e) => entry.outcome = Some(format!("the order list could not be read: {e}")),
        }
        self.record(&entry);
        found
    }

    /// Updates company fields; returns the profile as stored. Sent once, never resent.
    pub async fn update_profile(&self, update: &ProfileUpdate) -> Result<Profile, ApiError> {
        let entry = |stage| {
            let mut e = Entry::new(self.who(), stage, "profile");
            e.changes = serde_json::to_value(update).ok();
            e
        };
        self.refuse_if_read_only(PROFILE_UPDATE, entry(Stage::Asked))?;
        self.record_before_sending(PROFILE_UPDATE, &entry(Stage::Asked))?;
        self.record_before_sending(PROFILE_UPDATE, &entry(Stage::Sent))?;
        let body = serde_json::to_vec(update).map_err(|e| ApiError::Setup(e.to_string()))?;
        let result = self
            .send_write(Method::PATCH, PROFILE_UPDATE, body, Write::default())
            .await
            .and_then(|answer| answer.decode::<ProfileEnvelope>(self))
            .map(|e| e.profile);
        let mut after = entry(match &result {
            Ok(_) => Stage::Answered,
            Err(e) if e.outcome_unknown() => Stage::Unknown,
            Err(_) => Stage::Refused,
        });
        after.outcome = Some(match &result {
            Ok(_) => "saved".to_string(),
            Err(e) => e.to_string(),
        });
        self.record(&after);
        result
    }

    fn payment_entry(&self, payment: &Payment, stage: Stage) -> Entry {
        let mut e = Entry::new(self.who(), stage, payment.action());
        e.iccid = payment.iccid().cloned().map(EsimIccid::from);
        e.slug = Some(payment.slug().to_string());
        e.quantity = Some(payment.qty());
        e.total = payment.total.map(format_amount);
        e.idempotency_key = Some(payment.key.clone());
        if let Some(request) = &payment.request {
            e.request = Some(request.id.clone());
            e.proposed_by = Some(request.by.clone()).filter(|by| !by.is_empty());
            e.request_at_gateway = request.at_gateway;
        }
        e.seal = Some(self.seal(
            &payment.key,
            payment.action(),
            e.iccid.as_ref(),
            payment.slug(),
            payment.qty(),
        ));
        e
    }

    /// In a read-only session: records "asked" and "refused", and refuses (a trail that cannot
    /// be written does not hide that reason).
    fn refuse_if_read_only(&self, endpoint: Endpoint, mut asked: Entry) -> Result<(), ApiError> {
        let Err(error) = self.ensure_writable(endpoint) else {
            return Ok(());
        };
        self.record(&asked);
        asked.stage = Stage::Refused;
        asked.time = chrono::Utc::now();
        asked.outcome = Some(error.to_string());
        self.record(&asked);
        Err(error)
    }

    /// Writes a line that must be on disk before the request may leave.
    fn record_before_sending(&self, endpoint: Endpoint, entry: &Entry) -> Result<(), ApiError> {
        let Some(trail) = &self.options().audit else {
            return Ok(());
        };
        trail.append(entry).map_err(|e| ApiError::Audit {
            endpoint,
            path: trail.path.display().to_string(),
            detail: e.to_string(),
        })
    }

    /// Writes a line of what came back. The request has gone by then, so a failure to write
    /// cannot stop it: it is logged as an error.
    pub(super) fn record(&self, entry: &Entry) {
        if let Some(trail) = &self.options().audit
            && let Err(e) = trail.append(entry)
        {
            tracing::error!(path = %trail.path.display(), error = %e, stage = entry.stage.label(), "the audit trail could not be written");
            let what = match entry.order_no.as_deref() {
                Some(order) => format!("the {} of order {order}", entry.stage.label()),
                None => format!("its \"{}\" line", entry.stage.label()),
            };
            self.notify(super::settle::Notice::TrailUnwritten(format!(
                "the audit trail {} could not be written ({e}): it lacks {what} for this {} ({}); what is said here is what happened",
                trail.path.display(),
                entry.action,
                entry.slug.as_deref().unwrap_or_default()
            )));
        }
    }
}
