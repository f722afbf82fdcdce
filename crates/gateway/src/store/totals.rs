//! What each agent's payments hold each UTC day, and the team's, kept in the `day_totals` table
//! by the transaction that reserves or settles a payment: a cap check and `gateway/me` read a
//! row or two, whatever the day's number of payments. A day no payment has touched since the
//! table came (an older store's) is summed from the journal, and kept from its first change on.

use super::sql::{Sql, Value};
use super::{StoreError, day_rows, decimal};
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// The team's row: no agent has an empty name.
pub const TEAM: &str = "";

/// The day's totals by agent, the team's under `TEAM`.
pub(super) fn read(db: &mut dyn Sql, day: &str) -> Result<BTreeMap<String, Decimal>, StoreError> {
    let totals = read_kept(db, day)?;
    if totals.contains_key(TEAM) {
        return Ok(totals);
    }
    // Not kept yet: summed from the journal.
    let mut summed: BTreeMap<String, Decimal> = BTreeMap::new();
    for payment in day_rows(db, day)? {
        let held = payment.held();
        *summed.entry(payment.asked.agent.clone()).or_default() += held;
        *summed.entry(TEAM.to_string()).or_default() += held;
    }
    Ok(summed)
}

/// What one agent's payments hold on the day, and the team's: two rows, whatever the day's
/// payments and agents.
pub(super) fn read_of(db: &mut dyn Sql, day: &str, agent: &str) -> Result<(Decimal, Decimal), StoreError> {
    let rows = db.query(
        "SELECT agent, held FROM day_totals WHERE day = $1 AND (agent = $2 OR agent = $3)",
        &[Value::text(day), Value::text(agent), Value::text(TEAM)],
    )?;
    let mut totals = BTreeMap::new();
    for row in &rows {
        let who = row.first().and_then(Value::as_text).unwrap_or_default().to_string();
        totals.insert(who, decimal(row.get(1).and_then(Value::as_text).unwrap_or("0"))?);
    }
    if !totals.contains_key(TEAM) {
        totals = read(db, day)?;
    }
    let of = |who: &str| totals.get(who).copied().unwrap_or_default();
    Ok((of(agent), of(TEAM)))
}

/// The rows kept for the day (none for a day not kept yet).
fn read_kept(db: &mut dyn Sql, day: &str) -> Result<BTreeMap<String, Decimal>, StoreError> {
    let rows = db.query("SELECT agent, held FROM day_totals WHERE day = $1", &[Value::text(day)])?;
    let mut totals = BTreeMap::new();
    for row in &rows {
        let agent = row.first().and_then(Value::as_text).unwrap_or_default().to_string();
        let held = decimal(row.get(1).and_then(Value::as_text).unwrap_or("0"))?;
        totals.insert(agent, held);
    }
    Ok(totals)
}

/// Adds `change` to the agent's and the team's totals of the day; within the exclusive
/// transaction of the payment that changed, after its row was written. A day not kept yet is
/// written whole from the journal, which holds the change already.
pub(super) fn add(db: &mut dyn Sql, day: &str, agent: &str, change: Decimal) -> Result<(), StoreError> {
    let kept = read_kept(db, day)?;
    if !kept.contains_key(TEAM) {
        for (who, held) in read(db, day)? {
            write(db, day, &who, held, false)?;
        }
        return Ok(());
    }
    for who in [agent, TEAM] {
        let known = kept.get(who).copied();
        write(db, day, who, known.unwrap_or_default() + change, known.is_some())?;
    }
    Ok(())
}

fn write(db: &mut dyn Sql, day: &str, who: &str, held: Decimal, exists: bool) -> Result<(), StoreError> {
    let held = held.to_string();
    if exists {
        db.execute(
            "UPDATE day_totals SET held = $1 WHERE day = $2 AND agent = $3",
            &[Value::text(held), Value::text(day), Value::text(who)],
        )?;
    } else {
        db.execute(
            "INSERT INTO day_totals (day, agent, held) VALUES ($1, $2, $3)",
            &[Value::text(day), Value::text(who), Value::text(held)],
        )?;
    }
    Ok(())
}
