//! Payments an assistant proposed and a person decides: what a request is (the eSIM or a new
//! order, the plan, the quantity, the total, why, by whom, until when, bound by a digest of
//! those), a person's decision on it, and where it stands by the trail. Kept by the dashboard's
//! and commands' state folder (`esimdash_front::requests`) or, for a team, by its gateway,
//! which reads and writes the same shapes.

use crate::audit::{Outcome, PaymentRecord};
use crate::client::{Client, Write};
use crate::error::{ApiError, Endpoint};
use chrono::{DateTime, Duration, Utc};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::money::format_amount;
use esimdash_domain::purchase::Spend;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// How long a proposal waits for a person: past it, it must be proposed again (at that
/// moment's price and offer).
pub const LIFETIME: Duration = Duration::minutes(30);

/// The most requests waiting at once in one account: an assistant that proposes without end
/// is refused, not let to bury the real ones.
pub const MOST_PENDING: usize = 50;

/// The most characters of the stated reason kept.
pub const MOST_REASON: usize = 500;

/// A proposed payment and, once a person decided, the decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub id: String,
    /// `topup` or `order`.
    pub action: String,
    pub iccid: Option<String>,
    pub slug: String,
    pub plan_name: String,
    pub quantity: u32,
    /// USD, each and in all, as the catalog priced it when proposed.
    pub unit_price: Decimal,
    pub total: Decimal,
    pub reason: String,
    pub proposed_by: String,
    pub proposed_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// `digest(account, what, total)`: what a person approves is what is paid.
    pub digest: String,
    pub decision: Option<Decision>,
    /// What the checks could not confirm when it was proposed (an offer whose eSIM's record
    /// could not be read): the person approving reads it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsure: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub by: String,
    pub at: DateTime<Utc>,
    #[serde(flatten)]
    pub kind: Decided,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decided", rename_all = "camelCase")]
pub enum Decided {
    /// Approved: paid under this idempotency key (its outcome is in the trail).
    Approved {
        key: String,
    },
    Refused {
        why: String,
    },
}

/// Where a request stands, from its file and the trail (or, kept at a gateway, its journal).
/// On the wire as the `status` word with `why` or `orderNo` beside it, as `Request::json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Standing {
    Pending,
    Expired,
    Refused {
        why: String,
    },
    /// Approved, and the trail has no line of its payment sent: its approver stopped before
    /// sending (approving it again pays it, under the same key).
    #[serde(rename = "approved")]
    ApprovedNotSent,
    /// Sent, and no answer recorded yet: being paid now, or its process stopped mid-payment
    /// (the next esimdash of this account settles it).
    Paying,
    Paid {
        order_no: String,
    },
    NotPlaced,
    /// Its answer was lost and the order list did not settle it.
    Unknown {
        why: String,
    },
}

impl Standing {
    /// The word scripts read (`status` in JSON).
    pub fn key(&self) -> &'static str {
        match self {
            Standing::Pending => "pending",
            Standing::Expired => "expired",
            Standing::Refused { .. } => "refused",
            Standing::ApprovedNotSent => "approved",
            Standing::Paying => "paying",
            Standing::Paid { .. } => "paid",
            Standing::NotPlaced => "not_placed",
            Standing::Unknown { .. } => "unknown",
        }
    }
}

impl Request {
    /// What it would pay, typed again (a file edited by hand to hold no ICCID is refused).
    pub fn spend(&self) -> Result<Spend, String> {
        match (self.action.as_str(), &self.iccid) {
            ("topup", Some(iccid)) => {
                let iccid = Iccid::parse(iccid).map_err(|e| format!("request {}: {e}", self.id))?;
                Ok(Spend::topup(iccid, &self.slug, self.quantity))
            }
            ("order", None) => Ok(Spend::order(&self.slug, self.quantity)),
            _ => Err(format!("request {} names no payment esimdash knows", self.id)),
        }
    }

    /// Where it stands at `now`, its payment as the trail's `records` tell it.
    pub fn standing(&self, records: &[PaymentRecord], now: DateTime<Utc>) -> Standing {
        match &self.decision {
            None if now >= self.expires_at => Standing::Expired,
            None => Standing::Pending,
            Some(Decision {
                kind: Decided::Refused { why },
                ..
            }) => Standing::Refused { why: why.clone() },
            Some(Decision {
                kind: Decided::Approved { key },
                ..
            }) => match records.iter().find(|r| &r.key == key) {
                Some(record) => match &record.outcome {
                    Some(Outcome::Placed { order_no }) => Standing::Paid {
                        order_no: order_no.clone(),
                    },
                    Some(Outcome::NotPlaced) if record.sent_at.is_none() => Standing::ApprovedNotSent,
                    Some(Outcome::NotPlaced) => Standing::NotPlaced,
                    Some(Outcome::NotFound) => Standing::Unknown {
                        why: "its answer was lost and the order list showed no such order: most likely not placed"
                            .to_string(),
                    },
                    Some(Outcome::Ambiguous { orders }) => Standing::Unknown {
                        why: format!("its answer was lost; it may be one of the orders {}", orders.join(", ")),
                    },
                    None if record.sent_at.is_some() => Standing::Paying,
                    None => Standing::ApprovedNotSent,
                },
                None => Standing::ApprovedNotSent,
            },
        }
    }

    /// What a person is asked to approve, in one paragraph.
    pub fn summary(&self) -> String {
        let target = self
            .iccid
            .as_ref()
            .map_or_else(String::new, |i| format!(" for eSIM {i}"));
        format!(
            "{} {} × {} ({}){target}: {} USD each, {} USD in all.\nProposed by {} at {}: {}",
            if self.iccid.is_some() { "Top up" } else { "Buy" },
            self.quantity,
            self.plan_name,
            self.slug,
            format_amount(self.unit_price),
            format_amount(self.total),
            self.proposed_by,
            self.proposed_at.with_timezone(&chrono::Local).format("%H:%M"),
            self.reason
        ) + &self
            .unsure
            .as_ref()
            .map_or_else(String::new, |u| format!("\nNot confirmed when proposed: {u}"))
    }

    /// The request as scripts and assistants read it (`requests --json`, `request_status`).
    pub fn json(&self, standing: &Standing) -> serde_json::Value {
        let mut value = serde_json::json!({
            "id": self.id,
            "action": self.action,
            "iccid": self.iccid,
            "slug": self.slug,
            "planName": self.plan_name,
            "quantity": self.quantity,
            "unitPrice": format_amount(self.unit_price),
            "total": format_amount(self.total),
            "currency": "USD",
            "reason": self.reason,
            "proposedBy": self.proposed_by,
            "proposedAt": self.proposed_at,
            "expiresAt": self.expires_at,
            "digest": self.digest,
            "status": standing.key(),
        });
        if let Some(unsure) = &self.unsure {
            value["unsure"] = serde_json::json!(unsure);
        }
        if let Some(decision) = &self.decision {
            value["decidedBy"] = serde_json::json!(decision.by);
            value["decidedAt"] = serde_json::json!(decision.at);
        }
        match standing {
            Standing::Refused { why } | Standing::Unknown { why } => value["why"] = serde_json::json!(why),
            Standing::Paid { order_no } => value["orderNo"] = serde_json::json!(order_no),
            _ => {}
        }
        value
    }
}

/// The digest a request is bound by: the account, what is paid and its total. An approval
/// pays only when the payment checked at that moment has the same.
pub fn digest(account: &str, spend: &Spend, total: Decimal) -> String {
    use sha2::Digest;
    let iccid = spend.what.iccid().map_or("", Iccid::as_str);
    let what = format!(
        "esimdash request\0{account}\0{}\0{iccid}\0{}\0{}\0{}",
        spend.what.action(),
        spend.slug,
        spend.qty,
        format_amount(total)
    );
    esimdash_domain::text::hex(&sha2::Sha256::digest(what.as_bytes())[..16])
}

/// A new request's id: `rq-` and 12 random letters and digits (only these ever name a file).
pub fn new_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let letters: String = (0..12)
        .map(|_| char::from(ALPHABET[fastrand::usize(..ALPHABET.len())]))
        .collect();
    format!("rq-{letters}")
}

/// Whether `id` has a request id's shape: anything else names no file.
pub fn is_id(id: &str) -> bool {
    id.len() == 15 && id.starts_with("rq-") && id[3..].bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// A new request, proposed now.
pub struct Proposal<'a> {
    pub account: &'a str,
    pub spend: &'a Spend,
    pub plan_name: &'a str,
    pub unit_price: Decimal,
    pub total: Decimal,
    pub reason: &'a str,
    pub proposed_by: &'a str,
    pub unsure: Option<&'a str>,
}

impl Proposal<'_> {
    pub fn request(&self, now: DateTime<Utc>) -> Request {
        let clean = |s: &str| esimdash_domain::text::sanitize(s).into_owned();
        Request {
            id: new_id(),
            action: self.spend.what.action().to_string(),
            iccid: self.spend.what.iccid().map(|i| i.as_str().to_string()),
            slug: self.spend.slug.clone(),
            plan_name: clean(self.plan_name),
            quantity: self.spend.qty,
            unit_price: self.unit_price,
            total: self.total,
            reason: clean(&self.reason.chars().take(MOST_REASON).collect::<String>()),
            proposed_by: clean(self.proposed_by),
            proposed_at: now,
            expires_at: now + LIFETIME,
            digest: digest(self.account, self.spend, self.total),
            decision: None,
            unsure: self.unsure.map(clean),
        }
    }
}

/// A request decided already (or expired), in words: nothing is paid for it now.
pub fn decided_already(request: &Request, standing: &Standing) -> String {
    let at = |t: chrono::DateTime<Utc>| t.with_timezone(&chrono::Local).format("%H:%M").to_string();
    let by = request
        .decision
        .as_ref()
        .map(|d| format!(" by {} at {}", d.by, at(d.at)))
        .unwrap_or_default();
    let what = match standing {
        Standing::Expired => format!("expired at {}", at(request.expires_at)),
        Standing::Refused { why } => format!("was refused{by}: {why}"),
        Standing::Paid { order_no } => format!("was approved{by} and paid: order {order_no}"),
        Standing::NotPlaced => format!("was approved{by}, and the API refused its payment"),
        Standing::Paying => format!("was approved{by} and its payment has no answer yet"),
        Standing::Unknown { why } => format!("was approved{by}: {why}"),
        Standing::Pending | Standing::ApprovedNotSent => "waits".to_string(),
    };
    format!("request {} {what}: nothing was paid now", request.id)
}

/// A request as a gateway answers it: the request, where it stands, and the seat that proposed
/// it (`GET /gateway/requests`, and the answer to a proposal or a refusal).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kept {
    pub request: Request,
    pub standing: Standing,
    pub seat: String,
}

/// What a seat asks a gateway to keep as a request (`POST /gateway/requests`): the gateway
/// prices it itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Asking {
    pub action: String,
    pub iccid: Option<String>,
    pub slug: String,
    pub plan_name: String,
    pub quantity: u32,
    pub reason: String,
    pub proposed_by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsure: Option<String>,
}

/// The header a payment carries when it pays a request kept at the gateway: the gateway checks
/// it against the request, pays it as its proposing seat and records who approved it.
pub const REQUEST_HEADER: &str = "x-esimdash-request";

/// A team gateway's requests (`?id=`: one); the API itself has no such route (404).
pub const KEPT: Endpoint = Endpoint::new("GET", "/gateway/requests");
/// A request for a gateway to keep.
pub const KEEP: Endpoint = Endpoint::new("POST", "/gateway/requests");
/// A request kept at a gateway, refused.
pub const REFUSE: Endpoint = Endpoint::new("POST", "/gateway/requests/refuse");

impl Client {
    /// The requests the team's gateway keeps, newest first; `id`: only that one.
    pub async fn kept_requests(&self, id: Option<&str>) -> Result<Vec<Kept>, ApiError> {
        #[derive(Deserialize)]
        struct Listed {
            requests: Vec<Kept>,
        }
        let query: Vec<(&str, &str)> = id.map(|id| ("id", id)).into_iter().collect();
        let listed: Listed = self.get(KEPT, &query).await?.json(self.secret())?;
        Ok(listed.requests)
    }

    /// Asks the team's gateway to keep a proposal, which it prices and bounds itself. Sent once:
    /// a lost answer leaves at most one more request waiting, which moves no money.
    pub async fn keep_request(&self, asking: &Asking) -> Result<Kept, ApiError> {
        let body = serde_json::to_vec(asking).unwrap_or_default();
        self.send_write(reqwest::Method::POST, KEEP, body, Write::default())
            .await?
            .json(self.secret())
    }

    /// Refuses a request kept at the team's gateway, saying why.
    pub async fn refuse_kept(&self, id: &str, why: &str) -> Result<Kept, ApiError> {
        let body = serde_json::json!({ "id": id, "why": why }).to_string().into_bytes();
        self.send_write(reqwest::Method::POST, REFUSE, body, Write::default())
            .await?
            .json(self.secret())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the checks could not confirm goes with the request to the person approving it.
    #[test]
    fn an_unsure_proposal_says_so_to_the_approver() {
        let spend = Spend::order("fr-1gb", 1);
        let request = Proposal {
            account: "a",
            spend: &spend,
            plan_name: "France 1GB",
            unit_price: Decimal::ONE,
            total: Decimal::ONE,
            reason: "asked",
            proposed_by: "assistant",
            unsure: Some("the eSIM's record could not be read\u{202E}"),
        }
        .request(Utc::now());
        assert!(
            request
                .summary()
                .contains("Not confirmed when proposed: the eSIM's record could not be read")
        );
        assert!(!request.summary().contains('\u{202E}'), "shown text only");
        let json = request.json(&Standing::Pending);
        assert_eq!(json["unsure"], "the eSIM's record could not be read\u{FFFD}");
        let read: Request = serde_json::from_value(serde_json::to_value(&request).unwrap()).unwrap();
        assert_eq!(read, request);
    }

    #[test]
    fn the_digest_binds_account_what_and_total() {
        let payload = "898822806660240987";
        let iccid = Iccid::parse(&format!(
            "{payload}{}",
            esimdash_domain::iccid::luhn_check_digit(payload)
        ))
        .unwrap();
        let topup = Spend::topup(iccid, "fr-1gb", 1);
        let base = digest("a", &topup, Decimal::ONE);
        assert_ne!(base, digest("b", &topup, Decimal::ONE));
        assert_ne!(base, digest("a", &topup, Decimal::TWO));
        assert_ne!(base, digest("a", &Spend::order("fr-1gb", 1), Decimal::ONE));
        assert_eq!(
            base,
            digest("a", &topup, Decimal::new(100, 2)),
            "1 and 1.00 are one price"
        );
    }
}
