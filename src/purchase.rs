//! What the dashboard and the one-shot commands share about spending money: how a refusal reads
//! in plain words, the balance check made before anything is sent, and why an eSIM cannot be
//! topped up when its status says so.

use crate::api::ApiError;
use crate::domain::money::format_amount;
use crate::domain::status::Status;
use rust_decimal::Decimal;

pub use crate::domain::purchase::{NOTHING_BOUGHT, NOTHING_TOPPED_UP, Purchase};

/// A failure where no money moved, in plain words: what went wrong, then `nothing` (one of the
/// two above).
pub fn nothing_moved(reason: &str, nothing: &str) -> String {
    if reason.ends_with(&format!("{nothing}.")) {
        return reason.to_string();
    }
    format!("{}; {nothing}.", reason.trim_end_matches('.'))
}

/// A payment's total: the unit price times the quantity, computed checked. A server's price
/// can be any number; one that is negative, or a total past what a decimal holds exactly, is
/// refused before anything is sent, in words.
pub fn line_total(unit: Decimal, qty: u32) -> Result<Decimal, String> {
    if unit.is_sign_negative() && !unit.is_zero() {
        return Err(format!(
            "The API gives this plan a negative price ({} USD): refused",
            format_amount(unit)
        ));
    }
    unit.checked_mul(Decimal::from(qty)).ok_or_else(|| {
        format!(
            "The total of {qty} × {} USD is too large to compute exactly: refused",
            format_amount(unit)
        )
    })
}

/// The balance after paying `total`, computed checked.
pub fn balance_after(balance: Decimal, total: Decimal) -> Result<Decimal, String> {
    balance.checked_sub(total).ok_or_else(|| {
        format!(
            "The balance after paying ({} USD − {} USD) is out of range: refused",
            format_amount(balance),
            format_amount(total)
        )
    })
}

/// How much the balance falls short of `total`, if it does (`Decimal::MAX` when even that
/// difference is out of range).
pub fn shortfall(balance: Decimal, total: Decimal) -> Option<Decimal> {
    (balance < total).then(|| total.checked_sub(balance).unwrap_or(Decimal::MAX))
}

/// "Your balance of 10.00 USD is 5.40 USD short of the 15.40 USD total."
pub fn shortfall_message(balance: Decimal, total: Decimal) -> Option<String> {
    shortfall(balance, total).map(|short| {
        format!(
            "Your balance of {} USD is {} USD short of the {} USD total.",
            format_amount(balance),
            format_amount(short),
            format_amount(total)
        )
    })
}

/// Why an eSIM in this status is offered no top-ups, when the status tells.
pub fn not_topupable_reason(status: &Status) -> Option<&'static str> {
    match status {
        Status::UsedExpired | Status::UnusedExpired => Some("its validity has ended"),
        Status::Cancel => Some("it was cancelled"),
        Status::Revoked => Some("its profile was revoked"),
        Status::Pending => Some("its profile is not ready yet"),
        _ => None,
    }
}

/// A refused purchase in plain words, the server's message kept, and that nothing was bought.
pub fn explain(error: &ApiError, what: &Purchase) -> String {
    let server = error.server_message().unwrap_or_default();
    let reason = match (error.status(), what) {
        (Some(402), _) => "Insufficient balance: the wallet does not cover this".to_string(),
        (Some(404), Purchase::Topup { iccid }) => format!("The eSIM {iccid} is not in your account ({server})"),
        (Some(404), Purchase::Order) => format!("This plan is not offered (any more): {server}"),
        (Some(400), _) => format!("The API refused the {}: {server}", what.noun()),
        _ => error.to_string(),
    };
    nothing_moved(&reason, what.nothing_done())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Endpoint;

    #[test]
    fn plain_words_for_each_refusal() {
        let ep = Endpoint::new("POST", "/portal/topups");
        let api = |status, message: &str| ApiError::Api {
            endpoint: ep,
            status,
            message: message.into(),
        };
        let topup = Purchase::Topup {
            iccid: crate::domain::iccid::Iccid::parse("8944100000000000000").unwrap(),
        };
        assert!(explain(&api(402, "Insufficient balance"), &topup).starts_with("Insufficient balance"));
        assert!(explain(&api(404, "eSIM not found"), &topup).contains("not in your account"));
        assert!(explain(&api(400, "Slug not available for this eSIM"), &topup).contains("Slug not available"));
        assert_eq!(
            explain(&api(402, "Insufficient balance"), &topup),
            "Insufficient balance: the wallet does not cover this; nothing was topped up."
        );
        assert!(explain(&api(500, "boom"), &Purchase::Order).ends_with("boom; nothing was bought."));
        assert_eq!(
            shortfall(Decimal::new(1000, 2), Decimal::new(1540, 2)),
            Some(Decimal::new(540, 2))
        );
        assert_eq!(
            shortfall(Decimal::new(1540, 2), Decimal::new(1540, 2)),
            None,
            "exactly enough is enough"
        );
        assert!(
            shortfall_message(Decimal::new(1000, 2), Decimal::new(1540, 2))
                .unwrap()
                .contains("5.40 USD short")
        );
        assert_eq!(not_topupable_reason(&Status::Cancel), Some("it was cancelled"));
        // Amounts at the edges of what a decimal holds are refused in words, never a panic.
        assert!(line_total(Decimal::MAX, 10).unwrap_err().contains("too large"));
        assert!(line_total(Decimal::new(-1, 2), 1).unwrap_err().contains("negative"));
        assert_eq!(line_total(Decimal::new(240, 2), 10), Ok(Decimal::new(2400, 2)));
        assert!(
            balance_after(Decimal::MIN, Decimal::ONE)
                .unwrap_err()
                .contains("out of range")
        );
        assert_eq!(shortfall(Decimal::MIN, Decimal::MAX), Some(Decimal::MAX));
        assert_eq!(not_topupable_reason(&Status::InUse), None);
    }
}
