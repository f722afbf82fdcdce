//! What the provider reports of a sandbox eSIM profile in each state: the SM-DP+ status, the
//! device's EID, install and activation times, expiry and usage, in the combinations upstream
//! gives them (docs/api-contract.md, "eSIM states in detail"): no EID before a download, no
//! usage before an install, expiry counted from activation once there is one.

use chrono::{DateTime, Duration, Utc};
use esimdash_domain::location::{GLOBAL, REGIONAL};
use esimdash_domain::status::Status;

/// How long an unused profile may wait to be installed (upstream's usual 180 days).
pub const INSTALL_WINDOW_DAYS: i64 = 180;

/// An SM-DP+ status (spec values): one byte in each of a million records, not a `&str`'s 16.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Smdp {
    Released,
    Download,
    Installation,
    Enabled,
    Disabled,
    Deleted,
}

impl Smdp {
    pub fn as_str(self) -> &'static str {
        match self {
            Smdp::Released => "RELEASED",
            Smdp::Download => "DOWNLOAD",
            Smdp::Installation => "INSTALLATION",
            Smdp::Enabled => "ENABLED",
            Smdp::Disabled => "DISABLED",
            Smdp::Deleted => "DELETED",
        }
    }
}

pub const RELEASED: Smdp = Smdp::Released;
pub const DOWNLOAD: Smdp = Smdp::Download;
pub const INSTALLATION: Smdp = Smdp::Installation;
pub const ENABLED: Smdp = Smdp::Enabled;
pub const DISABLED: Smdp = Smdp::Disabled;
pub const DELETED: Smdp = Smdp::Deleted;

/// Every sandbox profile's APN.
pub const APN: &str = "internet.esim.example";

/// The first digits of every sandbox EID; the 24 after them are the device's.
const EID_PREFIX: u128 = 89_049_032;
const EID_DEVICE_DIGITS: u32 = 24;

/// The provider's side of one profile. Kept small: a sandbox holds two million of them.
#[derive(Debug, Clone)]
pub struct ProviderState {
    pub smdp_status: Smdp,
    /// The device part of the EID (see `eid`), little-endian: ten bytes hold its 24 digits,
    /// where an `Option<u128>` takes 32.
    eid_device: Option<[u8; 10]>,
    /// 1: validity starts at installation; 2: at the first connection to a network.
    pub active_type: u8,
    /// 1: one volume for the whole validity; 2: a daily volume, then throttled.
    pub data_type: u8,
    pub installation_time: Option<DateTime<Utc>>,
    pub activate_time: Option<DateTime<Utc>>,
    pub expired_time: DateTime<Utc>,
    pub total_volume: u64,
    pub order_usage: u64,
    pub duration_days: u32,
    /// Where the traffic leaves the network: the plan's country, or a hub for wider plans;
    /// always two ASCII letters.
    ip_export: [u8; 2],
}

impl ProviderState {
    /// The device's eUICC id (32 digits), once the profile has been downloaded.
    pub fn eid(&self) -> Option<u128> {
        let device = self.eid_device?;
        let mut bytes = [0u8; 16];
        bytes[..10].copy_from_slice(&device);
        Some(EID_PREFIX * 10u128.pow(EID_DEVICE_DIGITS) + u128::from_le_bytes(bytes))
    }

    /// Gives the profile the EID of the device with this number (below 10^24), unless it has one.
    pub fn download_to(&mut self, device: u128) {
        if self.eid_device.is_none() {
            self.eid_device = Some(device_bytes(device));
        }
    }

    pub fn ip_export(&self) -> &str {
        std::str::from_utf8(&self.ip_export).unwrap_or("SG")
    }

    /// Data and days bought on top (a top-up): more volume, and the validity extended from
    /// whichever is later, the old end or now. A used-up profile has data again.
    pub fn top_up(&mut self, volume: u64, days: u32, now: DateTime<Utc>) {
        self.total_volume = self.total_volume.saturating_add(volume);
        self.expired_time = self.expired_time.max(now) + Duration::days(i64::from(days));
        self.duration_days = self.duration_days.saturating_add(days);
    }
}

/// The ten low bytes of a device number below 10^24 (< 2^80, so nothing is lost).
fn device_bytes(device: u128) -> [u8; 10] {
    let mut bytes = [0u8; 10];
    bytes.copy_from_slice(&(device % 10u128.pow(EID_DEVICE_DIGITS)).to_le_bytes()[..10]);
    bytes
}

/// Where a plan's traffic leaves the network: its country, or Singapore for wider plans.
fn ip_export(location_code: &str) -> [u8; 2] {
    match location_code {
        REGIONAL | GLOBAL => *b"SG",
        code => match code.as_bytes() {
            [a, b, ..] if code.is_char_boundary(2) => [*a, *b],
            _ => *b"SG",
        },
    }
}

/// SM-DP+ statuses by weight for each order status; `GOT_RESOURCE` goes with a profile not yet
/// used, `IN_USE` with one installed (CONTRACT).
fn smdp_weights(status: &Status) -> &'static [(Smdp, u32)] {
    match status {
        Status::GotResource => &[(RELEASED, 70), (DOWNLOAD, 8), (INSTALLATION, 4), (ENABLED, 18)],
        Status::InUse => &[(ENABLED, 85), (DISABLED, 15)],
        Status::Suspended => &[(ENABLED, 70), (DISABLED, 30)],
        Status::UsedUp => &[(ENABLED, 70), (DELETED, 30)],
        Status::UsedExpired => &[(ENABLED, 40), (DISABLED, 30), (DELETED, 30)],
        Status::Revoked => &[(RELEASED, 40), (DELETED, 60)],
        _ => &[(RELEASED, 1)],
    }
}

fn pick<T: Copy>(rng: &mut fastrand::Rng, weighted: &[(T, u32)]) -> Option<T> {
    let total: u32 = weighted.iter().map(|(_, w)| w).sum();
    let mut roll = rng.u32(0..total.max(1));
    for &(item, weight) in weighted {
        if roll < weight {
            return Some(item);
        }
        roll -= weight;
    }
    None
}

fn hours(rng: &mut fastrand::Rng, range: std::ops::Range<i64>) -> Duration {
    Duration::minutes(rng.i64(range.start * 60..range.end.max(range.start + 1) * 60))
}

/// What of a plan decides a profile's life: its volume, days and where it is sold.
#[derive(Debug, Clone, Copy)]
pub struct Terms<'a> {
    pub volume: u64,
    pub duration: u32,
    pub location_code: &'a str,
}

/// A profile of `plan` ordered at `created`, in `status`, as seen at `now`; `smdp` fixes the
/// SM-DP+ status (the demo's showcase of every state), else it is drawn by weight.
pub fn state(
    rng: &mut fastrand::Rng,
    status: &Status,
    smdp: Option<Smdp>,
    plan: Terms<'_>,
    created: DateTime<Utc>,
    now: DateTime<Utc>,
) -> ProviderState {
    let smdp_status = smdp.or_else(|| pick(rng, smdp_weights(status))).unwrap_or(RELEASED);
    let downloaded = smdp_status != RELEASED;
    let installed = matches!(smdp_status, ENABLED | DISABLED | DELETED);
    let duration = Duration::days(i64::from(plan.duration));
    let mut state = ProviderState {
        smdp_status,
        eid_device: downloaded.then(|| device_bytes(rng.u128(0..10u128.pow(EID_DEVICE_DIGITS)))),
        active_type: if rng.u8(0..4) == 0 { 2 } else { 1 },
        data_type: if rng.u8(0..8) == 0 { 2 } else { 1 },
        installation_time: None,
        activate_time: None,
        expired_time: created + Duration::days(INSTALL_WINDOW_DAYS),
        total_volume: plan.volume,
        order_usage: 0,
        duration_days: plan.duration,
        ip_export: ip_export(plan.location_code),
    };
    if !installed {
        if *status == Status::UnusedExpired {
            let lapsed = now - hours(rng, 1..240);
            // Never before the order: a young order's profile lapsed since it was made.
            let lapsed = if lapsed > created {
                lapsed
            } else {
                created + (now - created) / 2
            };
            state.expired_time = state.expired_time.min(lapsed);
        }
        return state;
    }
    // Installed: when it was activated decides when it expires (activeType).
    let activated = match status {
        // Not used yet: validity runs only when it started at installation.
        Status::GotResource => (state.active_type == 1).then(|| created.max(now - hours(rng, 1..48).min(duration))),
        // Never before the order: the seed gives this status only to an order older than
        // its validity.
        Status::UsedExpired => Some(
            (created + hours(rng, 0..24))
                .min(now - hours(rng, 1..480) - duration)
                .max(created),
        ),
        _ => Some(active_start(rng, status, plan, duration, created, now)),
    };
    let installed_at = match activated {
        Some(a) => a - hours(rng, 0..3),
        None => created + hours(rng, 0..24),
    };
    state.installation_time = Some(installed_at.max(created).min(now));
    if let Some(activated) = activated {
        state.activate_time = Some(activated);
        state.expired_time = activated + duration;
        state.order_usage = usage(rng, status, plan.volume, activated + duration, now);
    }
    state
}

/// When an installed profile in use was activated: so that it expires after `now`, within the
/// attention window for about one in ten (the demo's realistic share of urgent eSIMs).
fn active_start(
    rng: &mut fastrand::Rng,
    status: &Status,
    plan: Terms<'_>,
    duration: Duration,
    created: DateTime<Utc>,
    now: DateTime<Utc>,
) -> DateTime<Utc> {
    let urgent = *status != Status::UsedUp && rng.u8(0..100) < 6;
    let left = if urgent || plan.duration <= 3 {
        hours(rng, 2..(i64::from(plan.duration) * 24).min(72))
    } else {
        hours(rng, 80..i64::from(plan.duration) * 24)
    };
    (now + left - duration).max(created + Duration::minutes(5)).min(now)
}

/// Bytes used by an activated profile: all of it when used up, else mostly well below the
/// attention threshold, a few near it.
fn usage(rng: &mut fastrand::Rng, status: &Status, volume: u64, expires: DateTime<Utc>, now: DateTime<Utc>) -> u64 {
    let pct = match status {
        Status::UsedUp => 100,
        Status::GotResource => 0,
        Status::UsedExpired => rng.u64(5..100),
        _ if expires > now && rng.u8(0..100) < 5 => rng.u64(82..100),
        _ => rng.u64(1..75),
    };
    u64::try_from(u128::from(volume) * u128::from(pct) / 100).unwrap_or(volume)
}
