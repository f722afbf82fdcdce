//! The sandbox's state: catalog, resellers, their orders and eSIMs, and wallets. Every change
//! happens under one lock (held by the caller), so a debit and its order record are one step:
//! two concurrent requests can never spend the same balance twice.

use super::http::Failure;
use super::lifecycle::{self, Smdp};
use super::lists::{EsimAt, Filter, ListIndex};
use super::records::{CompanyProfile, EsimRecord, OrderRecord, PlanRecord, Reseller, order_number, qr_key};
use super::seed;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use esimdash_domain::status::Status;
use rust_decimal::Decimal;
use std::sync::Arc;
use std::time::{Duration, Instant};

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

    /// The seeded data (`seed`), the same for the same seed, size and epoch.
    pub fn seeded(seed: u64, orders_per_reseller: usize, epoch: DateTime<Utc>) -> Self {
        let seed::Seeded {
            plans,
            topups,
            resellers,
        } = seed::data(seed, orders_per_reseller, epoch);
        Self::new(plans, topups, resellers, seed)
    }

    fn reseller(&self, id: usize) -> &Reseller {
        &self.resellers[id]
    }

    pub fn markup(&self, reseller: usize) -> Decimal {
        self.reseller(reseller).markup_pct
    }

    /// See `RunningSandbox::set_markup`.
    pub fn set_markup(&mut self, percent: Decimal) {
        for reseller in &mut self.resellers {
            reseller.markup_pct = percent;
        }
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
        let data = Data::seeded(crate::DEFAULT_SEED, n, Utc::now());
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
        let mut data = Data::seeded(crate::DEFAULT_SEED, 300, Utc::now());
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
