//! The sandbox's records: plans, resellers, orders and eSIMs as the store keeps them, and the
//! keys they are found by.

use super::lifecycle::{ProviderState, Terms};
use chrono::{DateTime, Utc};
use esimdash_domain::iccid::luhn_check_digit;
use esimdash_domain::money::round_cents;
use esimdash_domain::status::Status;
use rust_decimal::Decimal;
use std::sync::Arc;
use std::time::Instant;

/// The SM-DP+ address of every sandbox activation code.
pub const SMDP_ADDRESS: &str = "rsp.esim.example";

#[derive(Debug, Clone)]
pub struct PlanRecord {
    /// Its place among the base plans then the top-up plans.
    pub id: usize,
    pub package_code: String,
    pub slug: String,
    pub name: String,
    pub location_code: String,
    pub volume: u64,
    pub duration: u32,
    pub supplier_price: Decimal,
}

/// A plan's price for one reseller under its percentage rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Priced {
    pub cost: Decimal,
    pub sell: Decimal,
    pub margin: Decimal,
    pub margin_pct: Decimal,
}

impl PlanRecord {
    /// What of it decides the life of a profile bought on it (`lifecycle::state`).
    pub fn terms(&self) -> Terms<'_> {
        Terms {
            volume: self.volume,
            duration: self.duration,
            location_code: &self.location_code,
        }
    }

    /// docs/api-contract.md: sell = cost + rule %, margin = sell − cost, marginPct = margin / cost × 100.
    pub fn priced(&self, markup_pct: Decimal) -> Priced {
        let cost = self.supplier_price;
        let sell = round_cents(cost * (Decimal::ONE_HUNDRED + markup_pct) / Decimal::ONE_HUNDRED);
        let margin = sell - cost;
        let margin_pct = if cost.is_zero() {
            Decimal::ZERO
        } else {
            round_cents(margin / cost * Decimal::ONE_HUNDRED)
        };
        Priced {
            cost,
            sell,
            margin,
            margin_pct,
        }
    }
}

#[derive(Debug, Clone)]
pub struct CompanyProfile {
    pub company_name: String,
    pub country: String,
    pub website: String,
}

#[derive(Debug, Clone)]
pub struct Reseller {
    pub name: String,
    pub email: String,
    /// None until the reseller saves company details (spec: PATCH creates it).
    pub profile: Option<CompanyProfile>,
    pub status: String,
    pub balance: Decimal,
    pub markup_pct: Decimal,
    /// Oldest first; lists walk it backwards.
    pub orders: Vec<OrderRecord>,
    pub next_serial: u64,
    /// New orders still waiting for their profiles: their indexes, and when the profiles come
    /// (kept here, not in each of a million records).
    pub awaiting: Vec<(usize, Instant)>,
}

/// The records are kept small, a million orders a reseller: texts derived from numbers when
/// they are served, the plan's texts shared, and the cost price read from the plan, which the
/// sandbox never reprices (`reprice_next` changes only what a payment charges).
#[derive(Debug, Clone)]
pub struct OrderRecord {
    /// The digits of `providerOrderNo` (`B` and these): the first is the reseller's, never 0.
    number: u64,
    /// Shared with the catalog: a million orders do not each copy its texts.
    pub plan: Arc<PlanRecord>,
    pub status: Status,
    pub quantity: u32,
    pub sell_price: Decimal,
    pub created_at: DateTime<Utc>,
    /// The profiles this order produced; empty while pending, and for top-ups.
    pub esims: Vec<EsimRecord>,
    /// For a top-up: the ICCID it tops up.
    pub topup_of: Option<Box<str>>,
}

/// The digits of an order number `B<reseller + 1><serial, at least 7 digits><suffix, 4 digits>`.
pub fn order_number(reseller: usize, serial: u64, suffix: u32) -> u64 {
    let width = serial.checked_ilog10().unwrap_or(0).max(6) + 1;
    ((reseller as u64 + 1) * 10u64.pow(width) + serial) * 10_000 + u64::from(suffix % 10_000)
}

impl OrderRecord {
    /// `number` as `order_number` makes it.
    pub fn new(
        number: u64,
        plan: &Arc<PlanRecord>,
        status: Status,
        quantity: u32,
        sell_price: Decimal,
        created_at: DateTime<Utc>,
        esims: Vec<EsimRecord>,
    ) -> Self {
        Self {
            number,
            plan: plan.clone(),
            status,
            quantity,
            sell_price,
            created_at,
            esims,
            topup_of: None,
        }
    }

    /// `B` and digits: uppercase ASCII, which the list index's `q` relies on.
    pub fn provider_order_no(&self) -> String {
        format!("B{}", self.number)
    }

    pub fn cost_price(&self) -> Decimal {
        self.plan.supplier_price
    }

    pub fn total_sell_price(&self) -> Decimal {
        self.sell_price * Decimal::from(self.quantity)
    }
}

#[derive(Debug, Clone)]
pub struct EsimRecord {
    /// The digits of `esimTranNo` (`T` and these); numbers rather than text keep the records
    /// small.
    pub tran_no: u64,
    /// The ICCID's digits but the last, its Luhn check digit, which is derived from these:
    /// sandbox ICCIDs have at most 20 digits (19 fit a u64) and start `89`, so no leading zero
    /// is lost.
    pub iccid_body: u64,
    /// The activation code's matching ID; the code is `LPA:1$<SM-DP+>$<matching id>`.
    pub matching_id: [u8; 12],
    /// Whether `rawOrderJson` shows `ac`; without it a client must read the PNG.
    pub publish_ac: bool,
    /// What the provider reports of it: SM-DP+ status, device, times, usage.
    pub state: ProviderState,
}

impl EsimRecord {
    /// The file name of its QR image under `/qr/`.
    pub fn qr_name(&self) -> String {
        format!("t{}", self.tran_no)
    }

    pub fn esim_tran_no(&self) -> String {
        format!("T{}", self.tran_no)
    }

    pub fn iccid(&self) -> String {
        let body = self.iccid_body.to_string();
        let check = luhn_check_digit(&body);
        format!("{body}{check}")
    }

    /// Whether `text` is exactly this eSIM's ICCID.
    pub fn has_iccid(&self, text: &str) -> bool {
        iccid_key(text) == Some(self.iccid_body) && self.iccid() == text
    }

    pub fn activation_code(&self) -> String {
        format!("LPA:1${}${}", SMDP_ADDRESS, String::from_utf8_lossy(&self.matching_id))
    }
}

/// The key of a QR image name (`t` and the `esimTranNo` digits).
pub fn qr_key(name: &str) -> Option<u64> {
    let digits = name.strip_prefix('t')?;
    if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// An ICCID's text as the key it is stored under (`EsimRecord::iccid_body`): digits only, no
/// leading zero, the check digit dropped. Two texts with one key differ only in that digit, so a
/// match is confirmed on the record.
pub fn iccid_key(text: &str) -> Option<u64> {
    let plain = text.len() >= 2 && text.len() <= 21 && !text.starts_with('0');
    let body = text.get(..text.len() - 1)?;
    (plain && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| body.parse().ok())
        .flatten()
}
