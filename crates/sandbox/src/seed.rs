//! The sandbox's deterministic data: a catalog over 55 countries plus regional and global plans,
//! top-up plans, and per reseller a history of orders and eSIMs in every status.
//! The same seed gives the same catalog, orders, ICCIDs and codes; only timestamps follow the
//! epoch (the start time unless pinned).

use super::lifecycle::{self, Smdp};
use super::records::{CompanyProfile, EsimRecord, OrderRecord, PlanRecord, Reseller, order_number};
use super::spread::Calendar;
use chrono::{DateTime, Duration as Days, Utc};
use esimdash_domain::location::{COUNTRIES, GLOBAL, REGIONAL, REGIONS};
use esimdash_domain::status::Status;
use esimdash_domain::volume::{gigabytes, megabytes};
use rust_decimal::Decimal;
use std::sync::Arc;

/// One fixed demo credential (docs/commands.md lists them; the sandbox prints them at start).
pub struct DemoKey {
    pub access_code: Option<&'static str>,
    pub secret_key: &'static str,
    pub reseller: usize,
    pub revoked: bool,
    pub note: &'static str,
}

pub const ACME: usize = 0;
pub const GLOBEX: usize = 1;
/// The resellers' names as the credential table shows them.
pub const RESELLER_NAMES: [&str; 2] = ["Acme Mobile", "Globex Travel"];

pub const DEMO_KEYS: &[DemoKey] = &[
    DemoKey {
        access_code: Some("ak_demo_acme"),
        secret_key: "sk_demo_acme",
        reseller: ACME,
        revoked: false,
        note: "main demo reseller, balance 250.00",
    },
    DemoKey {
        access_code: Some("ak_demo_globex"),
        secret_key: "sk_demo_globex",
        reseller: GLOBEX,
        revoked: false,
        note: "second reseller, for scoping",
    },
    DemoKey {
        access_code: Some("ak_demo_revoked"),
        secret_key: "sk_demo_revoked",
        reseller: ACME,
        revoked: true,
        note: "revoked key: every call is 401",
    },
    DemoKey {
        access_code: None,
        secret_key: "sk_demo_legacy",
        reseller: ACME,
        revoked: false,
        note: "legacy: x-api-key or Authorization: Bearer",
    },
];

/// Portal session cookies (`esim_session=<token>`), one per reseller.
pub const DEMO_SESSIONS: &[(&str, usize)] = &[("sess_demo_acme", ACME), ("sess_demo_globex", GLOBEX)];

const BASE_SHAPES: &[(u64, u32)] = &[(1, 7), (3, 15), (5, 30), (10, 30), (20, 30)];
const TOPUP_SHAPES: &[(u64, u32)] = &[(1, 7), (3, 30), (10, 30)];

/// Cents in steps of five, so that a 20 % rule prices to whole cents.
fn price(rng: &mut fastrand::Rng, per_gb_cents: u32, gb: u64, days: u32) -> Decimal {
    let cents = per_gb_cents as u64 * gb + days as u64 * 3 + rng.u64(0..=40);
    Decimal::new((cents.max(95) / 5 * 5) as i64, 2)
}

fn plan(code: &str, label: &str, location: &str, volume: u64, gb_label: &str, days: u32, price: Decimal) -> PlanRecord {
    PlanRecord {
        id: 0,
        package_code: format!("ESD-{code}-{gb_label}-{days:02}D"),
        slug: format!(
            "{}-{}-{days}d",
            code.to_ascii_lowercase(),
            gb_label.to_ascii_lowercase()
        ),
        name: format!("{label} {gb_label} {days} {}", if days == 1 { "Day" } else { "Days" }),
        location_code: location.to_string(),
        volume,
        duration: days,
        supplier_price: price,
    }
}

fn topup(code: &str, label: &str, location: &str, gb: u64, days: u32, price: Decimal) -> PlanRecord {
    PlanRecord {
        id: 0,
        package_code: format!("TOPUP_{code}_{gb}GB_{days}D"),
        slug: format!("topup-{}-{gb}gb-{days}d", code.to_ascii_lowercase()),
        name: format!("{label} Top-up {gb}GB {days} Days"),
        location_code: location.to_string(),
        volume: gigabytes(gb),
        duration: days,
        supplier_price: price,
    }
}

/// Base plans and top-up plans.
pub fn catalog(seed: u64) -> (Vec<PlanRecord>, Vec<PlanRecord>) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut plans = Vec::new();
    let mut topups = Vec::new();
    let mut areas: Vec<(String, &str, &str, u32)> = COUNTRIES
        .iter()
        .map(|(code, name)| (code.to_string(), *name, *code, rng.u32(12..=70) * 5))
        .collect();
    areas.extend(
        REGIONS
            .iter()
            .map(|(code, name)| (code.to_string(), *name, REGIONAL, rng.u32(40..=90) * 5)),
    );
    areas.push(("GL".to_string(), "Global", GLOBAL, 120 * 5));
    for (code, name, location, per_gb) in &areas {
        plans.push(plan(
            code,
            name,
            location,
            megabytes(500),
            "500MB",
            1,
            price(&mut rng, per_gb / 2, 1, 1),
        ));
        for &(gb, days) in BASE_SHAPES {
            let p = price(&mut rng, *per_gb, gb, days);
            plans.push(plan(code, name, location, gigabytes(gb), &format!("{gb}GB"), days, p));
        }
    }
    let mut topup_areas: Vec<(&str, &str, &str, u32)> = COUNTRIES
        .iter()
        .map(|(code, name)| (*code, *name, *code, rng.u32(12..=70) * 5))
        .collect();
    topup_areas.push(("RG", "Regional", REGIONAL, 300));
    topup_areas.push(("GL", "Global", GLOBAL, 600));
    for (code, name, location, per_gb) in topup_areas {
        for &(gb, days) in TOPUP_SHAPES {
            topups.push(topup(code, name, location, gb, days, price(&mut rng, per_gb, gb, days)));
        }
    }
    for (id, plan) in plans.iter_mut().chain(&mut topups).enumerate() {
        plan.id = id;
    }
    (plans, topups)
}

/// Statuses by weight, after the showcase.
const STATUS_WEIGHTS: &[(Status, u32)] = &[
    (Status::Pending, 3),
    (Status::GotResource, 20),
    (Status::InUse, 25),
    (Status::Suspended, 5),
    (Status::UsedUp, 10),
    (Status::UsedExpired, 12),
    (Status::UnusedExpired, 10),
    (Status::Cancel, 10),
    (Status::Revoked, 5),
];

fn pick_status(rng: &mut fastrand::Rng) -> Status {
    let total: u32 = STATUS_WEIGHTS.iter().map(|(_, w)| w).sum();
    let mut roll = rng.u32(0..total);
    for (status, weight) in STATUS_WEIGHTS {
        if roll < *weight {
            return status.clone();
        }
        roll -= weight;
    }
    Status::InUse
}

/// A new eSIM profile: ICCID with a valid check digit, activation code, provider numbers, and
/// the provider's state for the order's status (`smdp` fixes its SM-DP+ status).
/// `serial` makes the ICCID unique; every seventh is 20 digits long.
#[allow(clippy::too_many_arguments)]
pub fn new_esim(
    rng: &mut fastrand::Rng,
    reseller: usize,
    serial: u64,
    plan: &PlanRecord,
    status: &Status,
    smdp: Option<Smdp>,
    created: DateTime<Utc>,
    epoch: DateTime<Utc>,
) -> EsimRecord {
    let payload = if serial % 7 == 6 {
        format!("8901{}{serial:08}{:06}", reseller + 1, rng.u32(0..1_000_000))
    } else {
        format!("8944{}{serial:08}{:05}", reseller + 1, rng.u32(0..100_000))
    };
    let matching_id = std::array::from_fn(|_| rng.alphanumeric().to_ascii_uppercase() as u8);
    EsimRecord {
        tran_no: (reseller as u64 + 1) * 10_000_000_000 + serial % 10_000_000_000,
        // The check digit is `luhn_check_digit(&payload)`, derived when the ICCID is served.
        iccid_body: payload.parse().unwrap_or_default(),
        matching_id,
        // Every third record carries no `ac`, so that clients exercise the PNG path too.
        publish_ac: serial % 3 != 2,
        state: lifecycle::state(rng, status, smdp, plan.terms(), created, epoch),
    }
}

/// The newest orders of each reseller show every state an agent meets once (the order's
/// status and the SM-DP+ status), so that the demo has an eSIM of every kind near the top.
const SHOWCASE: &[(Status, Option<Smdp>)] = &[
    (Status::Pending, None),
    (Status::GotResource, Some(lifecycle::RELEASED)),
    (Status::InUse, Some(lifecycle::ENABLED)),
    (Status::GotResource, Some(lifecycle::DOWNLOAD)),
    (Status::GotResource, Some(lifecycle::ENABLED)),
    (Status::InUse, Some(lifecycle::DISABLED)),
    (Status::UsedUp, Some(lifecycle::DELETED)),
    (Status::Suspended, Some(lifecycle::ENABLED)),
    (Status::UsedUp, Some(lifecycle::ENABLED)),
    (Status::UsedExpired, Some(lifecycle::DISABLED)),
    (Status::UnusedExpired, Some(lifecycle::RELEASED)),
    (Status::Cancel, Some(lifecycle::RELEASED)),
    (Status::Revoked, Some(lifecycle::DELETED)),
    (Status::GotResource, Some(lifecycle::INSTALLATION)),
    (Status::UsedExpired, Some(lifecycle::DELETED)),
];

/// The showcase's cancelled eSIM's ICCID issued again, as providers do, to its newest eSIM
/// (ready to install): one ICCID with an old and a current profile, the current one with the
/// newer `esimTranNo`. Whether it was done (the history is long enough).
fn reissue(newest_first: &mut [OrderRecord], reseller: usize, serial: u64) -> bool {
    let old = SHOWCASE.iter().position(|(s, _)| *s == Status::Cancel);
    let new = SHOWCASE
        .iter()
        .position(|(s, smdp)| *s == Status::GotResource && *smdp == Some(lifecycle::RELEASED));
    let (Some(old), Some(new)) = (old, new) else {
        return false;
    };
    let Some(iccid) = newest_first
        .get(old)
        .and_then(|o| o.esims.first())
        .map(|e| e.iccid_body)
    else {
        return false;
    };
    let Some(esim) = newest_first.get_mut(new).and_then(|o| o.esims.first_mut()) else {
        return false;
    };
    esim.iccid_body = iccid;
    esim.tran_no = (reseller as u64 + 1) * 10_000_000_000 + serial % 10_000_000_000;
    true
}

/// The longest drawn gap between two orders, in minutes (the shortest is 5).
const MAX_GAP_MINUTES: i64 = 600;

/// A status and plan that can both be true of an order made at `created`: an eSIM expired
/// after use had the plan's whole validity since, so a younger order is of its area's shortest
/// plan, and one younger than that used its data up instead.
fn possible<'a>(
    status: Status,
    plan: &'a Arc<PlanRecord>,
    plans: &'a [Arc<PlanRecord>],
    created: DateTime<Utc>,
    epoch: DateTime<Utc>,
) -> (Status, &'a Arc<PlanRecord>) {
    if status != Status::UsedExpired {
        return (status, plan);
    }
    // The hour is lifecycle's: an eSIM expired after use ended at least an hour ago.
    let fits = |p: &PlanRecord| created + Days::days(i64::from(p.duration)) + Days::hours(1) < epoch;
    if fits(plan) {
        return (status, plan);
    }
    let area = |p: &PlanRecord| p.slug.split('-').next().map(str::to_string);
    let shortest = plans
        .iter()
        .filter(|p| area(p) == area(plan))
        .min_by_key(|p| p.duration);
    match shortest {
        Some(short) if fits(short) => (status, short),
        _ => (Status::UsedUp, plan),
    }
}

/// The demo reseller `index` is: its name, email, company profile, balance and markup (%).
fn identity(index: usize) -> (&'static str, &'static str, Option<CompanyProfile>, Decimal, Decimal) {
    match index {
        ACME => (
            "Ada Park",
            "ada@acme-mobile.example",
            Some(CompanyProfile {
                company_name: "Acme Mobile".into(),
                country: "GB".into(),
                website: "https://acme-mobile.example".into(),
            }),
            Decimal::new(25000, 2),
            Decimal::new(20, 0),
        ),
        _ => (
            "Hank Scorpio",
            "hank@globex.example",
            None,
            Decimal::new(100000, 2),
            Decimal::new(15, 0),
        ),
    }
}

fn reseller(index: usize, seed: u64, orders: usize, plans: &[Arc<PlanRecord>], epoch: DateTime<Utc>) -> Reseller {
    let mut rng = fastrand::Rng::with_seed(seed ^ (0x9E37_79B9_7F4A_7C15u64.wrapping_mul(index as u64 + 1)));
    let (name, email, company, balance, markup) = identity(index);
    let mut records = Vec::with_capacity(orders);
    // The showcase's states need their hours (an eSIM expired after use had its days): its
    // gaps are as drawn; the rest of the history follows the calendar of sales from there back.
    let showcase = SHOWCASE.len().min(orders);
    // Laid from the showcase's oldest order back, so that its weekdays are the calendar's.
    let mut calendar: Option<Calendar> = None;
    let (mut created, mut drawn) = (epoch, 0.0);
    for i in 0..orders {
        let gap = rng.i64(5..=MAX_GAP_MINUTES);
        if i < showcase {
            created -= Days::minutes(gap);
        } else {
            drawn += gap as f64;
            let showcase_end = created.min(epoch);
            let calendar = calendar.get_or_insert_with(|| Calendar::new(showcase_end, orders - showcase));
            created = calendar.newest() - calendar.age(drawn);
        }
        let (status, smdp) = SHOWCASE
            .get(i)
            .cloned()
            .unwrap_or_else(|| (pick_status(&mut rng), None));
        let mut plan = &plans[rng.usize(0..plans.len())];
        // One-day plans sell less than the rest (and are always near their end once in use).
        if plan.duration == 1 && rng.u8(0..10) < 7 {
            plan = &plans[rng.usize(0..plans.len())];
        }
        let (status, plan) = possible(status, plan, plans, created, epoch);
        let quantity = if i % 25 == 24 { 2 } else { 1 };
        let serial = i as u64 * 2;
        let esims = if status == Status::Pending {
            Vec::new()
        } else {
            (0..quantity as u64)
                .map(|k| new_esim(&mut rng, index, serial + k, plan, &status, smdp, created, epoch))
                .collect()
        };
        records.push(OrderRecord::new(
            order_number(index, i as u64, rng.u32(0..10_000)),
            plan,
            status,
            quantity,
            plan.priced(markup).sell,
            created,
            esims,
        ));
    }
    let reissued = reissue(&mut records, index, orders as u64 * 2);
    records.reverse();
    Reseller {
        name: name.to_string(),
        email: email.to_string(),
        profile: company,
        status: "approved".to_string(),
        balance,
        markup_pct: markup,
        orders: records,
        next_serial: orders as u64 * 2 + u64::from(reissued),
        awaiting: Vec::new(),
    }
}

/// Everything the sandbox serves, built from one seed.
/// What the store is seeded with (`Data::seeded`).
pub struct Seeded {
    pub plans: Vec<Arc<PlanRecord>>,
    pub topups: Vec<Arc<PlanRecord>>,
    pub resellers: Vec<Reseller>,
}

pub fn data(seed: u64, orders_per_reseller: usize, epoch: DateTime<Utc>) -> Seeded {
    let (plans, topups) = catalog(seed);
    let plans: Vec<_> = plans.into_iter().map(Arc::new).collect();
    let topups = topups.into_iter().map(Arc::new).collect();
    let resellers = [ACME, GLOBEX]
        .map(|i| reseller(i, seed, orders_per_reseller, &plans, epoch))
        .into();
    Seeded {
        plans,
        topups,
        resellers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spread::HISTORY;

    /// What an agent reads of the seeded history, at the demo's length and the largest the
    /// sandbox takes: nothing older than three years, no eSIM installed, activated or expired
    /// before its order, expired states in the past and the in-use ones' expiry ahead, and the
    /// showcase of every state still at the top.
    #[test]
    fn any_history_is_at_most_three_years_long_and_each_esims_dates_follow_its_order() {
        let epoch = Utc::now();
        for n in [crate::DEFAULT_ORDERS, 100_000] {
            let data = super::data(crate::DEFAULT_SEED, n, epoch);
            for reseller in &data.resellers {
                let orders = &reseller.orders;
                assert_eq!(orders.len(), n);
                assert!(
                    orders.windows(2).all(|w| w[0].created_at <= w[1].created_at),
                    "oldest first"
                );
                let oldest = orders.first().map(|o| o.created_at).unwrap_or(epoch);
                assert!(epoch - oldest <= HISTORY, "{n}: {} days", (epoch - oldest).num_days());
                for o in orders {
                    for e in &o.esims {
                        let s = &e.state;
                        let says = || format!("{n}: {:?} ordered {} {s:?}", o.status, o.created_at);
                        assert!(s.installation_time.is_none_or(|t| t >= o.created_at), "{}", says());
                        assert!(s.activate_time.is_none_or(|t| t >= o.created_at), "{}", says());
                        assert!(s.expired_time > o.created_at, "{}", says());
                        match o.status {
                            Status::UsedExpired | Status::UnusedExpired => {
                                assert!(s.expired_time < epoch, "{}", says())
                            }
                            Status::InUse => assert!(s.expired_time > epoch, "{}", says()),
                            _ => {}
                        }
                    }
                }
                let newest: Vec<Status> = orders
                    .iter()
                    .rev()
                    .take(SHOWCASE.len())
                    .map(|o| o.status.clone())
                    .collect();
                let showcase: Vec<Status> = SHOWCASE.iter().map(|(s, _)| s.clone()).collect();
                assert_eq!(newest, showcase, "{n}");
            }
        }
    }

    /// A history of 100 000 orders is a reseller selling about 140 a day at the end: the last
    /// 30 days are at most 45 pages of 100 (the money view's first read), and more were sold in
    /// the last 90 days than in the 90 before them.
    #[test]
    fn a_long_history_grows_to_about_140_orders_a_day() {
        let epoch = Utc::now();
        let data = super::data(crate::DEFAULT_SEED, 100_000, epoch);
        let orders = &data.resellers[ACME].orders;
        let within = |from: i64, to: i64| {
            orders
                .iter()
                .filter(|o| o.created_at > epoch - Days::days(to) && o.created_at <= epoch - Days::days(from))
                .count()
        };
        let month = within(0, 30);
        assert!((3_000..=4_400).contains(&month), "{month} orders in 30 days");
        assert!(
            within(0, 90) > within(90, 180),
            "{} then {}",
            within(90, 180),
            within(0, 90)
        );
    }
}
