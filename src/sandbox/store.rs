//! The sandbox's state: catalog, resellers, their orders and eSIMs, and wallets. Every change
//! happens under one lock (held by the caller), so a debit and its order record are one step:
//! two concurrent requests can never spend the same balance twice.

use super::http::Failure;
use super::seed;
use crate::esim::money::round_cents;
use crate::esim::status::Status;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use std::collections::HashMap;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct PlanRecord {
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
    /// CONTRACT.md: sell = cost + rule %, margin = sell − cost, marginPct = margin / cost × 100.
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
    /// Indexes of new orders still waiting for their profiles.
    pub awaiting: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct OrderRecord {
    pub provider_order_no: String,
    pub slug: String,
    pub package_code: String,
    pub package_name: String,
    pub location_code: String,
    pub status: Status,
    pub quantity: u32,
    pub sell_price: Decimal,
    pub cost_price: Decimal,
    pub created_at: DateTime<Utc>,
    /// The profiles this order produced; empty while pending, and for top-ups.
    pub esims: Vec<EsimRecord>,
    /// For a top-up: the ICCID it tops up.
    pub topup_of: Option<String>,
    /// For a new order: when its profiles are allocated.
    pub ready_at: Option<Instant>,
    /// Order number, package name and slug in lowercase, for `q`.
    search_text: String,
}

impl OrderRecord {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        provider_order_no: String,
        plan: &PlanRecord,
        status: Status,
        quantity: u32,
        sell_price: Decimal,
        cost_price: Decimal,
        created_at: DateTime<Utc>,
        esims: Vec<EsimRecord>,
    ) -> Self {
        let search_text = format!("{}\n{}\n{}", provider_order_no, plan.name, plan.slug).to_lowercase();
        Self {
            provider_order_no,
            slug: plan.slug.clone(),
            package_code: plan.package_code.clone(),
            package_name: plan.name.clone(),
            location_code: plan.location_code.clone(),
            status,
            quantity,
            sell_price,
            cost_price,
            created_at,
            esims,
            topup_of: None,
            ready_at: None,
            search_text,
        }
    }

    pub fn total_sell_price(&self) -> Decimal {
        self.sell_price * Decimal::from(self.quantity)
    }

    fn matches(&self, status: Option<&str>, q_lower: Option<&str>) -> bool {
        status.is_none_or(|s| self.status.matches_filter(s)) && q_lower.is_none_or(|q| self.search_text.contains(q))
    }
}

#[derive(Debug, Clone)]
pub struct EsimRecord {
    pub esim_tran_no: String,
    pub iccid: String,
    pub activation_code: String,
    /// Whether `rawOrderJson` shows `ac`; without it a client must read the PNG.
    pub publish_ac: bool,
    pub smdp_status: String,
    pub total_volume: u64,
    pub order_usage: u64,
    pub expired_time: DateTime<Utc>,
}

impl EsimRecord {
    /// The file name of its QR image under `/qr/`.
    pub fn qr_name(&self) -> String {
        self.esim_tran_no.to_ascii_lowercase()
    }
}

/// One page of a list and the number of matching items.
pub struct Page<T> {
    pub total: u64,
    pub items: Vec<T>,
}

fn paginate<T>(items: impl Iterator<Item = T>, page: u64, size: u64) -> Page<T> {
    let offset = (page - 1).saturating_mul(size);
    let mut total = 0u64;
    let mut out = Vec::new();
    for item in items {
        if total >= offset && (out.len() as u64) < size {
            out.push(item);
        }
        total += 1;
    }
    Page { total, items: out }
}

/// Statuses whose eSIM can no longer take a top-up.
fn can_top_up(status: &Status) -> bool {
    !matches!(
        status,
        Status::UsedExpired | Status::UnusedExpired | Status::Cancel | Status::Revoked | Status::Pending
    )
}

pub struct Data {
    pub plans: Vec<PlanRecord>,
    pub topups: Vec<PlanRecord>,
    pub resellers: Vec<Reseller>,
    /// QR image name → activation code.
    qr_codes: HashMap<String, String>,
    /// Draws the ICCIDs and codes of eSIMs allocated while running.
    rng: fastrand::Rng,
}

impl Data {
    pub fn new(plans: Vec<PlanRecord>, topups: Vec<PlanRecord>, resellers: Vec<Reseller>, seed: u64) -> Self {
        let qr_codes = resellers
            .iter()
            .flat_map(|r| &r.orders)
            .flat_map(|o| &o.esims)
            .map(|e| (e.qr_name(), e.activation_code.clone()))
            .collect();
        Self {
            plans,
            topups,
            resellers,
            qr_codes,
            rng: fastrand::Rng::with_seed(seed.rotate_left(17)),
        }
    }

    fn reseller(&self, id: usize) -> &Reseller {
        &self.resellers[id]
    }

    pub fn markup(&self, reseller: usize) -> Decimal {
        self.reseller(reseller).markup_pct
    }

    pub fn plan(&self, slug: &str) -> Option<&PlanRecord> {
        self.plans.iter().chain(&self.topups).find(|p| p.slug == slug)
    }

    pub fn activation_code_of_qr(&self, name: &str) -> Option<&str> {
        self.qr_codes.get(name).map(String::as_str)
    }

    /// Gives new orders whose time has come their eSIM profiles.
    pub fn settle(&mut self, reseller: usize, now: Instant) {
        let Data {
            resellers,
            rng,
            qr_codes,
            plans,
            ..
        } = self;
        let Reseller {
            orders,
            next_serial,
            awaiting,
            ..
        } = &mut resellers[reseller];
        let (due, waiting): (Vec<usize>, Vec<usize>) = awaiting
            .iter()
            .partition(|&&i| orders.get(i).and_then(|o| o.ready_at).is_some_and(|t| t <= now));
        *awaiting = waiting;
        for i in due {
            let Some(order) = orders.get_mut(i) else { continue };
            order.ready_at = None;
            order.status = Status::GotResource;
            let Some(plan) = plans.iter().find(|p| p.slug == order.slug) else {
                continue;
            };
            for _ in 0..order.quantity {
                let esim = seed::new_esim(
                    rng,
                    reseller,
                    *next_serial,
                    plan,
                    &order.status,
                    order.created_at,
                    Utc::now(),
                );
                *next_serial += 1;
                qr_codes.insert(esim.qr_name(), esim.activation_code.clone());
                order.esims.push(esim);
            }
        }
    }

    pub fn orders(
        &self,
        reseller: usize,
        status: Option<&str>,
        q: Option<&str>,
        page: u64,
        size: u64,
    ) -> Page<&OrderRecord> {
        let q = q.map(str::to_lowercase);
        let matching = self
            .reseller(reseller)
            .orders
            .iter()
            .rev()
            .filter(|o| o.matches(status, q.as_deref()));
        paginate(matching, page, size)
    }

    pub fn esims(
        &self,
        reseller: usize,
        status: Option<&str>,
        page: u64,
        size: u64,
    ) -> Page<(&OrderRecord, &EsimRecord)> {
        let matching = self
            .reseller(reseller)
            .orders
            .iter()
            .rev()
            .filter(|o| o.matches(status, None))
            .flat_map(|o| o.esims.iter().map(move |e| (o, e)));
        paginate(matching, page, size)
    }

    fn esim_of(&self, reseller: usize, iccid: &str) -> Result<&OrderRecord, Failure> {
        self.reseller(reseller)
            .orders
            .iter()
            .find(|o| o.esims.iter().any(|e| e.iccid == iccid))
            .ok_or_else(|| Failure::not_found("eSIM not found"))
    }

    /// The top-up plans for an eSIM of this reseller: empty when it cannot be topped up.
    pub fn topups_for(&self, reseller: usize, iccid: &str) -> Result<Vec<&PlanRecord>, Failure> {
        let order = self.esim_of(reseller, iccid)?;
        if !can_top_up(&order.status) {
            return Ok(Vec::new());
        }
        Ok(self
            .topups
            .iter()
            .filter(|p| p.location_code == order.location_code)
            .collect())
    }

    /// Debits the wallet and stores the order, or changes nothing.
    fn debit_and_store(
        &mut self,
        reseller: usize,
        plan: PlanRecord,
        qty: u32,
        status: Status,
        topup_of: Option<String>,
        ready_at: Option<Instant>,
    ) -> Result<(&OrderRecord, Decimal), Failure> {
        let r = &mut self.resellers[reseller];
        let priced = plan.priced(r.markup_pct);
        let total = priced.sell * Decimal::from(qty);
        if r.balance < total {
            return Err(Failure::new(StatusCode::PAYMENT_REQUIRED, "Insufficient balance"));
        }
        r.balance -= total;
        let number = format!("B{}{:07}{:04}", reseller + 1, r.orders.len(), self.rng.u32(0..10_000));
        let mut order = OrderRecord::new(
            number,
            &plan,
            status,
            qty,
            priced.sell,
            priced.cost,
            Utc::now(),
            Vec::new(),
        );
        order.topup_of = topup_of;
        order.ready_at = ready_at;
        if ready_at.is_some() {
            r.awaiting.push(r.orders.len());
        }
        r.orders.push(order);
        let balance = r.balance;
        Ok((&r.orders[r.orders.len() - 1], balance))
    }

    pub fn topup(
        &mut self,
        reseller: usize,
        iccid: &str,
        slug: &str,
        qty: u32,
    ) -> Result<(&OrderRecord, Decimal), Failure> {
        let plan = self
            .topups_for(reseller, iccid)?
            .into_iter()
            .find(|p| p.slug == slug)
            .cloned()
            .ok_or_else(|| Failure::bad_request("Slug not available for this eSIM"))?;
        self.debit_and_store(reseller, plan, qty, Status::GotResource, Some(iccid.to_string()), None)
    }

    pub fn place_order(
        &mut self,
        reseller: usize,
        slug: &str,
        qty: u32,
        allocate_after: Duration,
    ) -> Result<(&OrderRecord, Decimal), Failure> {
        let plan = self
            .plans
            .iter()
            .find(|p| p.slug == slug)
            .cloned()
            .ok_or_else(|| Failure::not_found("Plan not found"))?;
        self.debit_and_store(
            reseller,
            plan,
            qty,
            Status::Pending,
            None,
            Some(Instant::now() + allocate_after),
        )
    }

    pub fn reseller_view(&self, reseller: usize) -> &Reseller {
        self.reseller(reseller)
    }

    /// Applies validated company fields, creating the profile record when there is none.
    pub fn update_profile(
        &mut self,
        reseller: usize,
        company_name: Option<String>,
        country: Option<String>,
        website: Option<String>,
    ) -> &Reseller {
        let r = &mut self.resellers[reseller];
        let profile = r.profile.get_or_insert_with(|| CompanyProfile {
            company_name: String::new(),
            country: String::new(),
            website: String::new(),
        });
        if let Some(v) = company_name {
            profile.company_name = v;
        }
        if let Some(v) = country {
            profile.country = v;
        }
        if let Some(v) = website {
            profile.website = v;
        }
        r
    }
}
