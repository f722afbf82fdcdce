//! What the dashboard and the one-shot commands share about spending money: how a refusal reads
//! in plain words, the balance check made before anything is sent, and what may be paid for an
//! eSIM's top-up: the API's offer judged against the eSIM's own state, one rule for the
//! dashboard's form, `esimdash topup` and bulk runs.

use esimdash_api::model::{Esim, Plan, Whereabouts};
use esimdash_api::{ApiError, Client, Found};
use esimdash_domain::esim_state::Class;
use esimdash_domain::iccid::Iccid;
use esimdash_domain::money::format_amount;
use rust_decimal::Decimal;

use esimdash_domain::purchase::Purchase;

/// A failure where no money moved, in plain words: what went wrong, then `nothing` (one of the
/// two above).
pub fn nothing_moved(reason: &str, nothing: &str) -> String {
    if reason.ends_with(&format!("{nothing}.")) {
        return reason.to_string();
    }
    format!("{}; {nothing}.", reason.trim_end_matches('.'))
}

/// The smallest price a plan can plausibly have: a cent. A quote below it (zero, `-0.00`,
/// `1e-28`) is a server's mistake, and paying on it would confirm one total and be charged
/// another.
pub const SMALLEST_PRICE: Decimal = Decimal::from_parts(1, 0, 0, false, 2);

/// A payment's total: the unit price times the quantity, computed checked. A server's price
/// can be any number; one below the smallest plausible price (zero and negative ones too), or
/// a total past what a decimal holds exactly, is refused before anything is confirmed or sent,
/// in words that name the value as the server gave it.
pub fn line_total(unit: Decimal, qty: u32) -> Result<Decimal, String> {
    if unit < SMALLEST_PRICE {
        let kind = if unit.is_sign_negative() && !unit.is_zero() {
            "a negative price"
        } else if unit.is_zero() {
            "a price of nothing"
        } else {
            "a price below a cent"
        };
        return Err(format!(
            "The API quotes this plan at {unit} USD, {kind}: not a price any plan has, so it is not trusted; refused"
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

/// Why this eSIM cannot take a top-up, when its record tells (its class: `Class::cannot_take_data`).
pub fn no_topup_reason(esim: &Esim) -> Option<&'static str> {
    esim.facts().classify().cannot_take_data()
}

/// What may be paid for an eSIM's top-up.
#[derive(Debug, Clone, PartialEq)]
pub enum TopupOffer {
    /// Plans to choose from. `unsure` says why the eSIM's state could not be confirmed: the
    /// payment then asks once more, saying so.
    Plans { plans: Vec<Plan>, unsure: Option<String> },
    /// Nothing may be paid: why, in words that name the state. `class` where the record told.
    Refused { class: Option<Class>, why: String },
}

impl TopupOffer {
    /// The eSIM's class, when the refusal is that it cannot take data (not merely that the
    /// API offers nothing now): one test for the form, the CLI and bulk runs.
    pub fn cannot_take_data(&self) -> Option<Class> {
        match self {
            TopupOffer::Refused { class: Some(class), .. } if class.cannot_take_data().is_some() => Some(*class),
            _ => None,
        }
    }

    /// The plans that may be paid for (none when refused).
    pub fn plans(&self) -> &[Plan] {
        match self {
            TopupOffer::Plans { plans, .. } => plans,
            TopupOffer::Refused { .. } => &[],
        }
    }
}

/// The API's offer for an eSIM judged against its record: an eSIM whose class cannot take data
/// is offered nothing even when a server offers plans for it (defence in depth: the contract
/// says a server must not); an eSIM whose record could not be read, or whose state is not one
/// the provider documents, is offered the plans with a caveat.
pub fn judge_topup(iccid: &Iccid, plans: Vec<Plan>, record: Option<&Esim>) -> TopupOffer {
    let class = record.map(|e| e.facts().classify());
    if let Some(class) = class
        && let Some(reason) = class.cannot_take_data()
    {
        if !plans.is_empty() {
            tracing::warn!(%iccid, state = class.key(), "the server offers top-ups for an eSIM that cannot take data");
        }
        let next = match class {
            Class::Pending => "a top-up can follow once the provider allocates it",
            _ => "a top-up would buy data it can never use: the customer needs a new eSIM of the plan",
        };
        return TopupOffer::Refused {
            class: Some(class),
            why: format!("{reason}; {next}"),
        };
    }
    if plans.is_empty() {
        return TopupOffer::Refused {
            class,
            why: "the API offers no top-up for it now".to_string(),
        };
    }
    let unsure = match (record, class) {
        (None, _) => {
            Some("its record could not be read now, so whether it can still take data is not confirmed".to_string())
        }
        (Some(e), Some(Class::Unknown)) => Some(format!(
            "its state is not one the provider documents (status {}, SM-DP+ {}), so whether it can still take data is not confirmed",
            e.record.status,
            match e.raw_order_json.smdp_status.trim() {
                "" => "none",
                smdp => smdp,
            }
        )),
        _ => None,
    };
    TopupOffer::Plans { plans, unsure }
}

/// The top-ups that may be paid for an eSIM: the API's availability (a 404 is the caller's:
/// not in this account), and its current record (by the lookup, or the page at `seen`, where
/// the server has none), judged by `judge_topup`. Two requests with the lookup.
pub async fn topup_offer(client: &Client, iccid: &Iccid, seen: Option<Whereabouts>) -> Result<TopupOffer, ApiError> {
    let plans = client.topup_plans(iccid).await?;
    let record = match client.find_esim_at(iccid, seen).await {
        Ok(Found::Esim(esim)) => Some(*esim),
        Ok(Found::Absent | Found::Unknown(_)) => None,
        // Refused credentials refuse the payment too; any other failure leaves the state
        // unconfirmed, which the payment then says and asks about.
        Err(e) if e.is_auth() => return Err(e),
        Err(e) => {
            tracing::warn!(%iccid, error = %e, "the eSIM's record could not be read before a top-up");
            None
        }
    };
    Ok(judge_topup(iccid, plans, record.as_ref()))
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
    use esimdash_api::Endpoint;

    #[test]
    fn plain_words_for_each_refusal() {
        let ep = Endpoint::new("POST", "/portal/topups");
        let api = |status, message: &str| ApiError::Api {
            endpoint: ep,
            status,
            message: message.into(),
        };
        let topup = Purchase::Topup {
            iccid: esimdash_domain::iccid::Iccid::parse("8944100000000000000").unwrap(),
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
        // Amounts at the edges of what a decimal holds are refused in words, never a panic.
        assert!(line_total(Decimal::MAX, 10).unwrap_err().contains("too large"));
        assert!(line_total(Decimal::new(-1, 2), 1).unwrap_err().contains("negative"));
        // A decimal keeps no sign on zero: "-0.00" is named as 0.00.
        for (quote, named) in [
            ("0", "0"),
            ("-0.00", "0.00"),
            ("1e-28", "0.0000000000000000000000000001"),
            ("0.009", "0.009"),
        ] {
            let unit = Decimal::from_scientific(quote).or_else(|_| quote.parse()).unwrap();
            let refused = line_total(unit, 1).unwrap_err();
            assert!(refused.contains(&format!("at {named} USD")), "{refused}");
        }
        assert_eq!(line_total(SMALLEST_PRICE, 3), Ok(Decimal::new(3, 2)));
        assert_eq!(line_total(Decimal::new(240, 2), 10), Ok(Decimal::new(2400, 2)));
        assert!(
            balance_after(Decimal::MIN, Decimal::ONE)
                .unwrap_err()
                .contains("out of range")
        );
        assert_eq!(shortfall(Decimal::MIN, Decimal::MAX), Some(Decimal::MAX));
    }

    fn record(status: &str, smdp: &str, eid: &str, used: u64) -> Esim {
        serde_json::from_value(serde_json::json!({
            "status": status,
            "rawOrderJson": {
                "iccid": "8944100000000000018", "smdpStatus": smdp, "eid": eid,
                "orderUsage": used, "totalVolume": 100
            }
        }))
        .unwrap()
    }

    fn plan() -> Plan {
        serde_json::from_value(serde_json::json!({"slug": "topup-jo-1gb-7d", "price": 3.36})).unwrap()
    }

    #[test]
    fn a_top_up_offer_is_judged_by_the_esims_own_state() {
        let iccid = Iccid::parse("8944100000000000018").unwrap();
        // A server that offers plans for an eSIM deleted from the phone: nothing may be paid.
        let deleted = record("in_use", "DELETED", "8904", 10);
        match judge_topup(&iccid, vec![plan()], Some(&deleted)) {
            TopupOffer::Refused { class, why } => {
                assert_eq!(class, Some(Class::Deleted));
                assert!(
                    why.contains("deleted from the phone") && why.contains("new eSIM"),
                    "{why}"
                );
            }
            other => panic!("{other:?}"),
        }
        let in_use = record("in_use", "ENABLED", "8904", 10);
        assert_eq!(
            judge_topup(&iccid, vec![plan()], Some(&in_use)),
            TopupOffer::Plans {
                plans: vec![plan()],
                unsure: None
            }
        );
        // Not known: offered, with the reason to ask once more.
        let odd = record("in_use", "RELEASED", "", 10);
        assert!(matches!(
            judge_topup(&iccid, vec![plan()], Some(&odd)),
            TopupOffer::Plans { unsure: Some(_), .. }
        ));
        assert!(matches!(
            judge_topup(&iccid, vec![plan()], None),
            TopupOffer::Plans { unsure: Some(_), .. }
        ));
        // Offered nothing now, by an eSIM that can take data: a refusal, not "cannot take data".
        let none_now = judge_topup(&iccid, Vec::new(), Some(&in_use));
        assert!(matches!(none_now, TopupOffer::Refused { .. }));
        assert_eq!(none_now.cannot_take_data(), None);
        assert_eq!(
            judge_topup(&iccid, vec![plan()], Some(&deleted)).cannot_take_data(),
            Some(Class::Deleted)
        );
    }
}
