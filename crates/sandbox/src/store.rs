//! The sandbox's state: catalog, resellers, their orders and eSIMs, and wallets. Every change
//! happens under one lock (held by the caller), so a debit and its order record are one step:
//! two concurrent requests can never spend the same balance twice.

use super::http::Failure;
use super::lifecycle::{self, ProviderState, Smdp};
use super::lists::{EsimAt, Filter, ListIndex};
use super::seed;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use esimdash_domain::iccid::luhn_check_digit;
use esimdash_domain::money::round_cents;
use esimdash_domain::status::Status;
use rust_decimal::Decimal;
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

/// One page of a list and the number of matching items.
pub struct Page<T> {
    pub total: u64,
    pub items: Vec<T>,
}

/// Whether an eSIM can still take data (the contract's topup availability): not cancelled,
/// revoked, expired, expired unused or pending, and its profile not deleted from the device.
fn can_top_up(status: &Status, smdp: Smdp) -> bool {
    !matches!(
        status,
        Status::UsedExpired | Status::UnusedExpired | Status::Cancel | Status::Revoked | Status::Pending
    ) && smdp != lifecycle::DELETED
}

pub struct Data {
    pub plans: Vec<Arc<PlanRecord>>,
    pub topups: Vec<Arc<PlanRecord>>,
    pub resellers: Vec<Reseller>,
    /// Per reseller, beside `resellers`: the indexes its lists, lookups and QR images are
    /// served from.
    lists: Vec<ListIndex>,
    /// Draws the ICCIDs and codes of eSIMs allocated while running.
    rng: fastrand::Rng,
    /// The next payment is charged this unit price, not the plan's quoted one: a price that
    /// changed between the quote and the debit (a test's control, `reprice_next_payment`).
    pub reprice_next: Option<Decimal>,
}

impl Data {
    pub fn new(plans: Vec<Arc<PlanRecord>>, topups: Vec<Arc<PlanRecord>>, resellers: Vec<Reseller>, seed: u64) -> Self {
        let lists = resellers.iter().map(|r| ListIndex::build(&r.orders)).collect();
        Self {
            plans,
            topups,
            resellers,
            lists,
            rng: fastrand::Rng::with_seed(seed.rotate_left(17)),
            reprice_next: None,
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
        let key = qr_key(name)?;
        (0..self.resellers.len()).find_map(|reseller| {
            let at = self.lists[reseller].esim_of_tran_no(key)?;
            let (_, esim) = self.esim_at(reseller, at)?;
            (esim.qr_name() == name).then(|| esim.activation_code())
        })
    }

    /// Gives new orders whose time has come their eSIM profiles.
    pub fn settle(&mut self, reseller: usize, now: Instant) {
        let Data {
            resellers,
            rng,
            plans,
            lists,
            ..
        } = self;
        let Reseller {
            orders,
            next_serial,
            awaiting,
            ..
        } = &mut resellers[reseller];
        let (due, waiting): (Vec<_>, Vec<_>) = awaiting.iter().partition(|(_, ready_at)| *ready_at <= now);
        *awaiting = waiting;
        for &(i, _) in &due {
            let Some(order) = orders.get_mut(i) else { continue };
            let Some(plan) = plans.iter().find(|p| p.slug == order.plan.slug) else {
                continue;
            };
            let was = std::mem::replace(&mut order.status, Status::GotResource);
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
            lists[reseller].esims_allocated(i, &was, orders);
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
        let number = order_number(reseller, r.orders.len() as u64, self.rng.u32(0..10_000));
        let mut order = OrderRecord::new(number, &plan, status, qty, priced.sell, Utc::now(), Vec::new());
        order.topup_of = topup_of;
        let i = r.orders.len();
        if let Some(ready_at) = ready_at {
            r.awaiting.push((i, ready_at));
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
            state.download_to(u128::from(esim.tran_no));
            state.installation_time = Some(now);
            if state.active_type == 1 {
                state.activate_time = Some(now);
                state.expired_time = now + chrono::Duration::days(i64::from(state.duration_days));
            }
            if order.status == Status::GotResource {
                order.status = Status::InUse;
                self.lists[reseller].status_changed(at.order as usize, &Status::GotResource, order);
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
            self.lists[reseller].status_changed(at.order as usize, &Status::UsedUp, order);
        }
    }

    /// The provider purges its oldest records: the `n` oldest eSIMs of every reseller leave
    /// the eSIM list, the lookup and the QR images. The orders that made them stay in the order
    /// list, as an order history outlives the profiles it made. How many were purged.
    pub fn purge_oldest_esims(&mut self, n: usize) -> usize {
        let Data { resellers, lists, .. } = self;
        let mut purged = 0;
        for (reseller, list) in resellers.iter_mut().zip(lists.iter_mut()) {
            let mut left = n;
            // Oldest order first; within an order the list shows its last eSIM last.
            for order in &mut reseller.orders {
                while left > 0 && order.esims.pop().is_some() {
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

    /// The memory the orders, their eSIMs and the indexes take, in bytes, as allocated (the
    /// allocator's own few bytes a block left out).
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        let records: usize = self
            .resellers
            .iter()
            .map(|r| {
                let esims: usize = r.orders.iter().map(|o| o.esims.capacity()).sum();
                let topups: usize = r
                    .orders
                    .iter()
                    .filter_map(|o| o.topup_of.as_ref())
                    .map(|t| t.len())
                    .sum();
                r.orders.capacity() * size_of::<OrderRecord>() + esims * size_of::<EsimRecord>() + topups
            })
            .sum();
        records + self.lists.iter().map(ListIndex::heap_bytes).sum::<usize>()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a seeded order costs in memory, with its eSIMs and its share of the indexes: the
    /// design that lets `sandbox --orders 1000000` fit in 1 GB. Records of fixed size (texts
    /// derived from numbers when served, none allocated per record), lists sized exactly, sorted
    /// pairs rather than hash maps. 20 000 orders a reseller show it as well as a million.
    #[test]
    fn a_seeded_order_with_its_esims_and_indexes_takes_under_320_bytes() {
        assert!(size_of::<OrderRecord>() <= 112, "{}", size_of::<OrderRecord>());
        assert!(size_of::<EsimRecord>() <= 104, "{}", size_of::<EsimRecord>());
        let n = 20_000;
        let data = seed::data(crate::DEFAULT_SEED, n, Utc::now());
        let orders: usize = data.resellers.iter().map(|r| r.orders.len()).sum();
        assert_eq!(orders, 2 * n);
        let per_order = data.heap_bytes() / orders;
        eprintln!("{per_order} bytes an order");
        assert!(per_order < 320, "{per_order} bytes an order");
    }

    /// Every status page after the changes a running sandbox makes (an order allocated late, an
    /// eSIM installed, a used-up one topped up) lists what a walk over the records finds.
    #[test]
    fn status_lists_kept_as_statuses_change_match_a_walk_over_the_records() {
        let mut data = seed::data(crate::DEFAULT_SEED, 300, Utc::now());
        data.resellers[0].balance = Decimal::new(1_000_000, 0);
        let slug = data.plans[0].slug.clone();
        data.place_order(0, &slug, 2, Duration::ZERO).map(|_| ()).unwrap();
        data.settle(0, Instant::now() + Duration::from_secs(1));
        // The newest eSIM of this status whose profile is still on a device or not yet on one.
        let iccid_of = |data: &Data, status: Status| {
            let orders = data.resellers[0].orders.iter().rev().filter(|o| o.status == status);
            let mut esims = orders.flat_map(|o| &o.esims);
            esims
                .find(|e| e.state.smdp_status != lifecycle::DELETED)
                .map(EsimRecord::iccid)
                .unwrap()
        };
        let got = iccid_of(&data, Status::GotResource);
        assert!(data.install(&got, Utc::now()));
        let used_up = iccid_of(&data, Status::UsedUp);
        let topup = data.topups_for(0, &used_up).unwrap()[0].slug.clone();
        data.topup(0, &used_up, &topup, 1).map(|_| ()).unwrap();
        for status in [
            "active",
            "pending",
            "got_resource",
            "in_use",
            "used_up",
            "cancel",
            "bogus",
        ] {
            let filter = Filter::new(Some(status), None, None);
            let wanted = esimdash_domain::status::StatusFilter::exact(status);
            let orders = &data.resellers[0].orders;
            let walk: Vec<String> = orders
                .iter()
                .rev()
                .filter(|o| wanted.matches(&o.status))
                .map(OrderRecord::provider_order_no)
                .collect();
            let esims: Vec<String> = orders
                .iter()
                .rev()
                .filter(|o| wanted.matches(&o.status))
                .flat_map(|o| o.esims.iter().map(EsimRecord::iccid))
                .collect();
            let listed = data.orders(0, &filter, 1, 1000);
            let listed: Vec<String> = listed.items.iter().map(|o| o.provider_order_no()).collect();
            assert_eq!(listed, walk, "{status}");
            let listed = data.esims(0, &filter, 1, 1000);
            let listed: Vec<String> = listed.items.iter().map(|(_, e)| e.iccid()).collect();
            assert_eq!(listed, esims, "{status}");
        }
    }
}
