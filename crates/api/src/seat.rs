//! A seat at a team gateway, as the gateway's answers tell it (`x-esimdash-agent`): who the
//! token is, its role and what is left of its daily cap.

use esimdash_domain::role::{Deed, Role};

/// The header a team gateway puts on its answers: who the token is, and what is left of its
/// daily cap (`name=ana; role=support; cap=10.00; left=5.62`).
pub const SEAT_HEADER: &str = "x-esimdash-agent";

/// An agent's seat at a team gateway, as its answers tell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    pub name: String,
    pub role: String,
    /// USD a UTC day, and what is left of it today; `None`: no cap of its own.
    pub cap: Option<rust_decimal::Decimal>,
    pub left: Option<rust_decimal::Decimal>,
}

impl Seat {
    /// The header's value for this seat.
    pub fn header(&self) -> String {
        let mut value = format!("name={}; role={}", self.name, self.role);
        if let (Some(cap), Some(left)) = (self.cap, self.left) {
            value.push_str(&format!("; cap={cap}; left={left}"));
        }
        value
    }

    /// Whether the seat may pay (top up, buy) at its gateway: a viewer only reads. A role
    /// this build does not know pays for nothing here (the gateway decides all the same).
    pub fn pays(&self) -> bool {
        Role::named(&self.role).is_some_and(Role::pays)
    }

    /// Whether the seat may change the account's profile (an admin's).
    pub fn edits(&self) -> bool {
        Role::named(&self.role).is_some_and(|r| r.may(Deed::EditProfile, false))
    }

    /// What is left today of the seat's cap, where it has one and may pay.
    pub fn left_today(&self) -> Option<rust_decimal::Decimal> {
        self.cap.and(self.left).filter(|_| self.pays())
    }

    /// A header's value read back; `None` when it names no agent.
    pub fn parse(value: &str) -> Option<Seat> {
        let mut seat = Seat {
            name: String::new(),
            role: String::new(),
            cap: None,
            left: None,
        };
        for part in value.split(';') {
            let Some((key, value)) = part.split_once('=') else {
                continue;
            };
            let value = value.trim();
            match key.trim() {
                "name" => seat.name = esimdash_domain::text::sanitize(value).into_owned(),
                "role" => seat.role = esimdash_domain::text::sanitize(value).into_owned(),
                "cap" => seat.cap = value.parse().ok(),
                "left" => seat.left = value.parse().ok(),
                _ => {}
            }
        }
        (!seat.name.is_empty()).then_some(seat)
    }
}
