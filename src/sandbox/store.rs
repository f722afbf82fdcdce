//! The sandbox's state: catalog, resellers, their orders and eSIMs, and wallets. Every change
//! happens under one lock (held by the caller), so a debit and its order record are one step:
//! two concurrent requests can never spend the same balance twice.

use super::http::Failure;
use super::lifecycle::{self, ProviderState};
use super::lists::{EsimAt, Filter, ListIndex};
use super::seed;
use crate::domain::money::round_cents;
use crate::domain::status::Status;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// Indexes of new orders still waiting for their profiles.
    pub awaiting: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct OrderRecord {
    /// Uppercase ASCII (`B`, digits), which the list index's `q` relies on.
    pub provider_order_no: Box<str>,
    /// Shared with the catalog: a hundred thousand orders do not each copy its texts.
    pub plan: Arc<PlanRecord>,
    pub status: Status,
    pub quantity: u32,
    pub sell_price: Decimal,
    pub cost_price: Decimal,
    pub created_at: DateTime<Utc>,
    /// The profiles this order produced; empty while pending, and for top-ups.
    pub esims: Vec<EsimRecord>,
    /// For a top-up: the ICCID it tops up.
    pub topup_of: Option<Box<str>>,
    /// For a new order: when its profiles are allocated.
    pub ready_at: Option<Instant>,
}

impl OrderRecord {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        provider_order_no: String,
        plan: &Arc<PlanRecord>,
        status: Status,
        quantity: u32,
        sell_price: Decimal,
        cost_price: Decimal,
        created_at: DateTime<Utc>,
        esims: Vec<EsimRecord>,
    ) -> Self {
        Self {
            provider_order_no: provider_order_no.into(),
            plan: plan.clone(),
            status,
            quantity,
            sell_price,
            cost_price,
            created_at,
            esims,
            topup_of: None,
            ready_at: None,
        }
    }

    pub fn total_sell_price(&self) -> Decimal {
        self.sell_price * Decimal::from(self.quantity)
    }
}

#[derive(Debug, Clone)]
pub struct EsimRecord {
    /// The digits of `esimTranNo` (`T` and these); numbers rather than text keep 200 000
    /// records small.
    pub tran_no: u64,
    /// The ICCID's digits as a number: sandbox ICCIDs start `89`, so no leading zero is lost.
    pub iccid: u128,
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
        self.iccid.to_string()
    }

    /// Whether `text` is exactly this eSIM's ICCID.
    pub fn has_iccid(&self, text: &str) -> bool {
        iccid_number(text) == Some(self.iccid)
    }

    pub fn activation_code(&self) -> String {
        format!(
            "LPA:1${}${}",
            seed::SMDP_ADDRESS,
            String::from_utf8_lossy(&self.matching_id)
        )
    }
}

/// The key of a QR image name (`t` and the `esimTranNo` digits).
fn qr_key(name: &str) -> Option<u64> {
    let digits = name.strip_prefix('t')?;
    if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// An ICCID's text as the number it is stored as: digits only, no leading zero.
pub fn iccid_number(text: &str) -> Option<u128> {
    let plain = !text.is_empty() && text.len() <= 38 && !text.starts_with('0');
    (plain && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// One page of a list and the number of matching items.
pub struct Page<T> {
    pub total: u64,
    pub items: Vec<T>,
}

/// Whether an eSIM can still take data (the contract's topup availability): not cancelled,
/// revoked, expired, expired unused or pending, and its profile not deleted from the device.
fn can_top_up(status: &Status, smdp: &str) -> bool {
    !matches!(
        status,
        Status::UsedExpired | Status::UnusedExpired | Status::Cancel | Status::Revoked | Status::Pending
    ) && smdp != lifecycle::DELETED
}

/// Where a QR image's eSIM is kept.
#[derive(Debug, Clone, Copy)]
struct QrAt {
    reseller: usize,
    at: EsimAt,
}

pub struct Data {
    pub plans: Vec<Arc<PlanRecord>>,
    pub topups: Vec<Arc<PlanRecord>>,
    pub resellers: Vec<Reseller>,
    /// Per reseller, beside `resellers`: the indexes its lists are served from.
    lists: Vec<ListIndex>,
    /// QR image key (see `qr_key`) → the eSIM whose code it encodes.
    qr_images: HashMap<u64, QrAt>,
    /// Draws the ICCIDs and codes of eSIMs allocated while running.
    rng: fastrand::Rng,
    /// The next payment is charged this unit price, not the plan's quoted one: a price that
    /// changed between the quote and the debit (a test's control, `reprice_next_payment`).
    pub reprice_next: Option<Decimal>,
}

impl Data {
    pub fn new(plans: Vec<Arc<PlanRecord>>, topups: Vec<Arc<PlanRecord>>, resellers: Vec<Reseller>, seed: u64) -> Self {
        let lists = resellers.iter().map(|r| ListIndex::build(&r.orders)).collect();
        let mut data = Self {
            plans,
            topups,
            resellers,
            lists,
            qr_images: HashMap::new(),
            rng: fastrand::Rng::with_seed(seed.rotate_left(17)),
            reprice_next: None,
        };
        for reseller in 0..data.resellers.len() {
            for order in 0..data.resellers[reseller].orders.len() {
                data.index_qr_images(reseller, order);
            }
        }
        data
    }

    fn index_qr_images(&mut self, reseller: usize, order: usize) {
        let Some(record) = self.resellers[reseller].orders.get(order) else {
            return;
        };
        for (k, esim) in record.esims.iter().enumerate() {
            {
                let key = esim.tran_no;
                let at = EsimAt {
                    order: order as u32,
                    esim: k as u32,
                };
                self.qr_images.insert(key, QrAt { reseller, at });
            }
        }
    }

    fn reseller(&self, id: usize) -> &Reseller {
        &self.resellers[id]
    }

    pub fn markup(&self, reseller: usize) -> Decimal {
        self.reseller(reseller).markup_pct
    }

    pub fn plan(&self, slug: &str) -> Option<&Arc<PlanRecord>> {
        self.plans.iter().chain(&self.topups).find(|p| p.slug == slug)
    }

    fn esim_at(&self, reseller: usize, at: EsimAt) -> Option<(&OrderRecord, &EsimRecord)> {
        let order = self.reseller(reseller).orders.get(at.order as usize)?;
        Some((order, order.esims.get(at.esim as usize)?))
    }

    pub fn activation_code_of_qr(&self, name: &str) -> Option<String> {
        let found = self.qr_images.get(&qr_key(name)?)?;
        let (_, esim) = self.esim_at(found.reseller, found.at)?;
        (esim.qr_name() == name).then(|| esim.activation_code())
    }

    /// Gives new orders whose time has come their eSIM profiles.
    pub fn settle(&mut self, reseller: usize, now: Instant) {
        let Data {
            resellers, rng, plans, ..
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
        for &i in &due {
            let Some(order) = orders.get_mut(i) else { continue };
            order.ready_at = None;
            order.status = Status::GotResource;
            let Some(plan) = plans.iter().find(|p| p.slug == order.plan.slug) else {
                continue;
            };
            for _ in 0..order.quantity {
                let esim = seed::new_esim(
                    rng,
                    reseller,
                    *next_serial,
                    plan,
                    &order.status,
                    None,
                    order.created_at,
                    Utc::now(),
                );
                *next_serial += 1;
                order.esims.push(esim);
            }
        }
        for i in due {
            self.lists[reseller].esims_allocated(i, &self.resellers[reseller].orders);
            self.index_qr_images(reseller, i);
        }
    }

    pub fn orders(&mut self, reseller: usize, filter: &Filter, page: u64, size: u64) -> Page<&OrderRecord> {
        let plans = self.plans.iter().chain(&self.topups).map(|p| &**p);
        let orders = &self.resellers[reseller].orders;
        let (total, found) = self.lists[reseller].orders(orders, plans, filter, page, size);
        Page {
            total,
            items: found.into_iter().map(|i| &orders[i]).collect(),
        }
    }

    pub fn esims(
        &mut self,
        reseller: usize,
        filter: &Filter,
        page: u64,
        size: u64,
    ) -> Page<(&OrderRecord, &EsimRecord)> {
        let (total, found) = self.lists[reseller].esims(&self.resellers[reseller].orders, filter, page, size);
        Page {
            total,
            items: found.into_iter().filter_map(|at| self.esim_at(reseller, at)).collect(),
        }
    }

    fn esim_at_iccid(&self, reseller: usize, iccid: &str) -> Result<EsimAt, Failure> {
        self.lists[reseller]
            .esim(&self.reseller(reseller).orders, iccid)
            .ok_or_else(|| Failure::not_found("eSIM not found"))
    }

    /// The top-up plans for an eSIM of this reseller: empty when it cannot be topped up.
    pub fn topups_for(&self, reseller: usize, iccid: &str) -> Result<Vec<&Arc<PlanRecord>>, Failure> {
        let at = self.esim_at_iccid(reseller, iccid)?;
        let (order, esim) = self
            .esim_at(reseller, at)
            .ok_or_else(|| Failure::not_found("eSIM not found"))?;
        if !can_top_up(&order.status, esim.state.smdp_status) {
            return Ok(Vec::new());
        }
        Ok(self
            .topups
            .iter()
            .filter(|p| p.location_code == order.plan.location_code)
            .collect())
    }

    /// Debits the wallet and stores the order, or changes nothing.
    fn debit_and_store(
        &mut self,
        reseller: usize,
        plan: Arc<PlanRecord>,
        qty: u32,
        status: Status,
        topup_of: Option<Box<str>>,
        ready_at: Option<Instant>,
    ) -> Result<(&OrderRecord, Decimal), Failure> {
        let r = &mut self.resellers[reseller];
        let mut priced = plan.priced(r.markup_pct);
        if let Some(unit) = self.reprice_next.take() {
            priced.sell = unit;
        }
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
        let i = r.orders.len();
        if ready_at.is_some() {
            r.awaiting.push(i);
        }
        self.lists[reseller].order_added(i, &order);
        r.orders.push(order);
        let balance = r.balance;
        Ok((&r.orders[i], balance))
    }

    pub fn topup(
        &mut self,
        reseller: usize,
        iccid: &str,
        slug: &str,
        qty: u32,
    ) -> Result<(&OrderRecord, Decimal), Failure> {
        let offered = self.topups_for(reseller, iccid)?;
        if offered.is_empty() {
            return Err(Failure::bad_request("This eSIM cannot be topped up"));
        }
        let plan = offered
            .into_iter()
            .find(|p| p.slug == slug)
            .cloned()
            .ok_or_else(|| Failure::bad_request("Slug not available for this eSIM"))?;
        let at = self.esim_at_iccid(reseller, iccid)?;
        let (volume, days) = (
            plan.volume.saturating_mul(u64::from(qty)),
            plan.duration.saturating_mul(qty),
        );
        self.debit_and_store(reseller, plan, qty, Status::GotResource, Some(iccid.into()), None)?;
        self.topped_up(reseller, at, volume, days);
        let r = &self.resellers[reseller];
        Ok((
            r.orders.last().ok_or_else(|| Failure::not_found("eSIM not found"))?,
            r.balance,
        ))
    }

    /// A device installs the profile with this ICCID (of any reseller), as a customer does
    /// with the QR code: downloaded and enabled on an eUICC, installed now, activated now where
    /// validity starts at installation, and the order in use. `false`: no such profile, or one
    /// installed already.
    pub fn install(&mut self, iccid: &str, now: DateTime<Utc>) -> bool {
        for reseller in 0..self.resellers.len() {
            let Ok(at) = self.esim_at_iccid(reseller, iccid) else {
                continue;
            };
            let Some(order) = self.resellers[reseller].orders.get_mut(at.order as usize) else {
                return false;
            };
            let Some(esim) = order.esims.get_mut(at.esim as usize) else {
                return false;
            };
            let state = &mut esim.state;
            if state.installation_time.is_some() || state.smdp_status == lifecycle::DELETED {
                return false;
            }
            state.smdp_status = lifecycle::ENABLED;
            state.eid = state
                .eid
                .or(Some(89_049_032_u128 * 10u128.pow(24) + u128::from(esim.tran_no)));
            state.installation_time = Some(now);
            if state.active_type == 1 {
                state.activate_time = Some(now);
                state.expired_time = now + chrono::Duration::days(i64::from(state.duration_days));
            }
            if order.status == Status::GotResource {
                order.status = Status::InUse;
                self.lists[reseller].status_changed(at.order as usize, &order.status);
            }
            return true;
        }
        false
    }

    /// The provider's record of a topped-up eSIM: more data and days at once (the sandbox does
    /// not keep upstream's delay), and a used-up eSIM is in use again.
    fn topped_up(&mut self, reseller: usize, at: EsimAt, volume: u64, days: u32) {
        let Some(order) = self.resellers[reseller].orders.get_mut(at.order as usize) else {
            return;
        };
        if let Some(esim) = order.esims.get_mut(at.esim as usize) {
            esim.state.top_up(volume, days, Utc::now());
        }
        if order.status == Status::UsedUp {
            order.status = Status::InUse;
            self.lists[reseller].status_changed(at.order as usize, &order.status);
        }
    }

    /// The provider purges its oldest records: the `n` oldest eSIMs of every reseller leave
    /// the eSIM list, the lookup and the QR images. The orders that made them stay in the order
    /// list, as an order history outlives the profiles it made. How many were purged.
    pub fn purge_oldest_esims(&mut self, n: usize) -> usize {
        let Data {
            resellers,
            lists,
            qr_images,
            ..
        } = self;
        let mut purged = 0;
        for (reseller, list) in resellers.iter_mut().zip(lists.iter_mut()) {
            let mut left = n;
            // Oldest order first; within an order the list shows its last eSIM last.
            for order in &mut reseller.orders {
                while left > 0
                    && let Some(esim) = order.esims.pop()
                {
                    qr_images.remove(&esim.tran_no);
                    left -= 1;
                    purged += 1;
                }
                if left == 0 {
                    break;
                }
            }
            // Every eSIM's place in the list index moved: rebuilt, as at start.
            *list = ListIndex::build(&reseller.orders);
        }
        purged
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
