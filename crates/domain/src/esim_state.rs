//! What state an eSIM is in, for the person on the phone: read from the order's status and the
//! provider's profile record (SM-DP+ status, EID, usage) by the combinations the provider gives
//! (docs/api-contract.md, "eSIM states in detail"). A combination outside that table is
//! `Unknown`: shown as it is, never guessed at. The words for each are in `format::verdict`.

use super::status::Status;
use chrono::{DateTime, Utc};

/// The provider's fields the state is read from.
#[derive(Debug, Clone, Copy, Default)]
pub struct Facts<'a> {
    pub status: Option<&'a Status>,
    /// `smdpStatus`, as sent (`RELEASED`, `DOWNLOAD`, `INSTALLATION`, `ENABLED`, `DISABLED`,
    /// `DELETED`).
    pub smdp: &'a str,
    /// The device's eUICC id; empty until the profile is downloaded.
    pub eid: &'a str,
    /// 1: validity starts at installation; 2: at the first connection.
    pub active_type: Option<u64>,
    pub installed: Option<DateTime<Utc>>,
    pub activated: Option<DateTime<Utc>>,
    pub expires: Option<DateTime<Utc>>,
    pub used: Option<u64>,
    pub total: Option<u64>,
    /// Validity in days, when the provider counts it in days.
    pub days: Option<u64>,
    pub apn: &'a str,
}

/// The states an agent tells apart, each with its own words and colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Allocated, not on any device: the QR code can be scanned.
    ReadyToInstall,
    /// A device started the download (`DOWNLOAD`, `INSTALLATION`) and has not finished.
    Downloading,
    /// Installed and on, no data used yet.
    InstalledNoData,
    /// Installed, on, and data used.
    InUse,
    /// Installed and turned off on the device.
    TurnedOff,
    /// Removed from the device; cannot be installed again.
    Deleted,
    UsedUp,
    ExpiredUnused,
    ExpiredUsed,
    Cancelled,
    Revoked,
    Suspended,
    /// The order has no eSIM yet.
    Pending,
    /// A combination not in the provider's table.
    Unknown,
}

/// How a class reads at a glance: the colour it is drawn in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Works, or is ready to.
    Good,
    /// Something is under way or waits for the customer.
    Waiting,
    /// Needs the customer or the agent to act.
    Warning,
    /// Cannot be used any more.
    Ended,
    Unknown,
}

impl Class {
    pub const ALL: [Class; 14] = [
        Class::ReadyToInstall,
        Class::Downloading,
        Class::InstalledNoData,
        Class::InUse,
        Class::TurnedOff,
        Class::Deleted,
        Class::UsedUp,
        Class::ExpiredUnused,
        Class::ExpiredUsed,
        Class::Cancelled,
        Class::Revoked,
        Class::Suspended,
        Class::Pending,
        Class::Unknown,
    ];

    /// The state's name in `--json` and CSV: stable, lowercase.
    pub fn key(self) -> &'static str {
        match self {
            Class::ReadyToInstall => "ready_to_install",
            Class::Downloading => "downloading",
            Class::InstalledNoData => "installed_no_data",
            Class::InUse => "in_use",
            Class::TurnedOff => "turned_off",
            Class::Deleted => "deleted",
            Class::UsedUp => "used_up",
            Class::ExpiredUnused => "expired_unused",
            Class::ExpiredUsed => "expired_used",
            Class::Cancelled => "cancelled",
            Class::Revoked => "revoked",
            Class::Suspended => "suspended",
            Class::Pending => "pending",
            Class::Unknown => "unknown",
        }
    }

    /// The class of a `key()`, as written in a saved index.
    pub fn from_key(key: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.key() == key)
    }

    /// A profile that exists and may still connect: what the attention rule watches.
    pub fn is_usable(self) -> bool {
        matches!(
            self,
            Class::ReadyToInstall
                | Class::Downloading
                | Class::InstalledNoData
                | Class::InUse
                | Class::TurnedOff
                | Class::Suspended
        )
    }

    /// Whether its QR code can still be installed: allocated and on no device, or a state nobody
    /// can tell (shown, with no guess). The pane draws the code, `l` copies the install link
    /// and `qr` prints them without a warning only then.
    pub fn installable(self) -> bool {
        matches!(self, Class::ReadyToInstall | Class::Unknown)
    }

    /// Why a top-up cannot help an eSIM of this class: it can never take data again (or has no
    /// profile yet). `None` where a top-up adds data, and for `Unknown`, which nobody can tell.
    /// Every path that pays for a top-up asks this (`purchase::judge_topup`).
    pub fn cannot_take_data(self) -> Option<&'static str> {
        Some(match self {
            Class::Deleted => "it was deleted from the phone, and a deleted eSIM cannot be installed again",
            Class::ExpiredUnused => "its validity ended before it was ever used",
            Class::ExpiredUsed => "its validity has ended",
            Class::Cancelled => "it was cancelled, and refunded",
            Class::Revoked => "its profile was revoked by the provider",
            Class::Pending => "its profile is not ready yet",
            _ => return None,
        })
    }

    pub fn tone(self) -> Tone {
        match self {
            Class::ReadyToInstall | Class::InUse => Tone::Good,
            Class::Downloading | Class::InstalledNoData | Class::Pending => Tone::Waiting,
            Class::TurnedOff | Class::UsedUp | Class::Suspended => Tone::Warning,
            Class::Deleted | Class::ExpiredUnused | Class::ExpiredUsed | Class::Cancelled | Class::Revoked => {
                Tone::Ended
            }
            Class::Unknown => Tone::Unknown,
        }
    }
}

impl Facts<'_> {
    pub fn has_eid(&self) -> bool {
        !self.eid.trim().is_empty()
    }

    /// Data used, when reported and above zero.
    pub fn data_used(&self) -> bool {
        self.used.is_some_and(|u| u > 0)
    }

    /// The bytes left, when both volume and usage are reported.
    pub fn left(&self) -> Option<u64> {
        Some(self.total?.saturating_sub(self.used?))
    }

    pub fn classify(&self) -> Class {
        let smdp = self.smdp.trim().to_ascii_uppercase();
        let Some(status) = self.status else {
            return Class::Unknown;
        };
        match status {
            Status::Pending => Class::Pending,
            Status::Cancel => Class::Cancelled,
            Status::Revoked => Class::Revoked,
            // Deleted from the device it cannot come back, whatever the provider's pause says.
            Status::Suspended if smdp == "DELETED" => Class::Deleted,
            Status::Suspended => Class::Suspended,
            Status::UnusedExpired if !self.data_used() => Class::ExpiredUnused,
            Status::UsedExpired => Class::ExpiredUsed,
            Status::UsedUp if smdp == "DELETED" => Class::Deleted,
            Status::UsedUp => Class::UsedUp,
            Status::GotResource | Status::InUse => self.on_device(status, &smdp),
            Status::UnusedExpired | Status::Other(_) => Class::Unknown,
        }
    }

    /// A profile that may be used: where it is between the QR code and the network.
    fn on_device(&self, status: &Status, smdp: &str) -> Class {
        let in_use = *status == Status::InUse;
        match smdp {
            "RELEASED" if !in_use && !self.has_eid() && !self.data_used() => Class::ReadyToInstall,
            "DOWNLOAD" | "INSTALLATION" if !in_use && !self.data_used() => Class::Downloading,
            "ENABLED" if self.data_used() => Class::InUse,
            "ENABLED" => Class::InstalledNoData,
            "DISABLED" => Class::TurnedOff,
            "DELETED" => Class::Deleted,
            _ => Class::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(status: &'a Status, smdp: &'a str, eid: &'a str, used: u64) -> Facts<'a> {
        Facts {
            status: Some(status),
            smdp,
            eid,
            used: Some(used),
            total: Some(1000),
            ..Facts::default()
        }
    }

    #[test]
    fn each_provider_combination_has_its_class_and_others_are_unknown() {
        let cases = [
            (Status::GotResource, "RELEASED", "", 0, Class::ReadyToInstall),
            (Status::GotResource, "DOWNLOAD", "8904", 0, Class::Downloading),
            (Status::GotResource, "INSTALLATION", "8904", 0, Class::Downloading),
            (Status::GotResource, "ENABLED", "8904", 0, Class::InstalledNoData),
            (Status::InUse, "ENABLED", "8904", 10, Class::InUse),
            (Status::InUse, "enabled", "8904", 10, Class::InUse),
            (Status::InUse, "DISABLED", "8904", 10, Class::TurnedOff),
            (Status::UsedUp, "DELETED", "8904", 1000, Class::Deleted),
            (Status::UsedUp, "ENABLED", "8904", 1000, Class::UsedUp),
            (Status::UsedExpired, "DISABLED", "8904", 10, Class::ExpiredUsed),
            (Status::UnusedExpired, "RELEASED", "", 0, Class::ExpiredUnused),
            (Status::Cancel, "RELEASED", "", 0, Class::Cancelled),
            (Status::Revoked, "DELETED", "8904", 5, Class::Revoked),
            (Status::Suspended, "ENABLED", "8904", 5, Class::Suspended),
            (Status::Suspended, "DELETED", "8904", 5, Class::Deleted),
            (Status::Pending, "", "", 0, Class::Pending),
            // Not in the provider's table: said as it is.
            (Status::GotResource, "RELEASED", "8904", 0, Class::Unknown),
            (Status::InUse, "RELEASED", "", 10, Class::Unknown),
            (Status::UnusedExpired, "ENABLED", "8904", 10, Class::Unknown),
            (Status::InUse, "", "", 0, Class::Unknown),
            (Status::Other("teleported".into()), "ENABLED", "8904", 0, Class::Unknown),
        ];
        for (status, smdp, eid, used, class) in cases {
            assert_eq!(
                facts(&status, smdp, eid, used).classify(),
                class,
                "{status} {smdp} {eid:?} {used}"
            );
        }
        assert_eq!(Facts::default().classify(), Class::Unknown);
    }

    #[test]
    fn the_classes_that_cannot_take_data_are_the_ended_ones() {
        for class in Class::ALL {
            let ended = class.tone() == Tone::Ended;
            assert_eq!(
                class.cannot_take_data().is_some(),
                ended || class == Class::Pending,
                "{class:?}"
            );
            assert!(!(class.is_usable() && class.cannot_take_data().is_some()), "{class:?}");
            assert_eq!(Class::from_key(class.key()), Some(class));
        }
    }
}
