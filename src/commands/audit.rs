//! `esimdash audit`: the audit trail, as a table for people or as JSON lines (the file's own
//! form) for scripts. Lines that are not entries are counted on stderr, never skipped silently.

use super::table::Table;
use super::{CommandError, Output};
use chrono::{DateTime, Utc};
use esimdash_api::audit::{self, Entry};
use std::io::Write;

pub fn run(since: Option<&str>, output: &Output) -> Result<(), CommandError> {
    let since = since.map(parse_since).transpose()?;
    let path = audit::default_path()
        .ok_or_else(|| CommandError::Usage("no state directory (is HOME set?): there is no audit trail".to_string()))?;
    let read = audit::read(&path)
        .map_err(|e| CommandError::Io(std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))))?;
    let numbers = |lines: &[usize]| lines.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
    if !read.torn.is_empty() {
        eprintln!(
            "esimdash: {} line(s) of {} were cut short as they were written (a full disk or a crash) and are not shown: line {}; the lines after them are read on, and a payment's other lines tell its outcome",
            read.torn.len(),
            path.display(),
            numbers(&read.torn)
        );
    }
    let other: Vec<usize> = read
        .unreadable
        .iter()
        .copied()
        .filter(|n| !read.torn.contains(n))
        .collect();
    if !other.is_empty() {
        eprintln!(
            "esimdash: {} line(s) of {} are not audit entries and are not shown: line {}",
            other.len(),
            path.display(),
            numbers(&other)
        );
    }
    let shown = read.entries.iter().filter(|e| since.is_none_or(|s| e.time >= s));
    let mut out = std::io::stdout().lock();
    if output.is_json() {
        for entry in shown {
            let line = esimdash_domain::text::json_line(entry).map_err(|e| CommandError::Usage(e.to_string()))?;
            writeln!(out, "{line}")?;
        }
        return Ok(());
    }
    let rows: Vec<&Entry> = shown.collect();
    if rows.is_empty() {
        writeln!(
            out,
            "No audit entries{} in {}.",
            if since.is_some() { " since then" } else { "" },
            path.display()
        )?;
        return Ok(());
    }
    write!(out, "{}", table(&rows).render())?;
    Ok(())
}

fn table(rows: &[&Entry]) -> Table {
    let mut t = Table::of(&[
        "TIME (UTC)",
        "STAGE",
        "PROFILE",
        "USER",
        "ACTION",
        "ICCID",
        "SLUG",
        "QTY",
        "TOTAL",
        "ORDER",
        "BALANCE AFTER",
        "OUTCOME",
    ])
    .right(&["QTY", "TOTAL", "BALANCE AFTER"]);
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    for e in rows {
        t.row(vec![
            e.time.format("%Y-%m-%d %H:%M:%S").to_string(),
            e.stage.label().to_string(),
            e.profile.clone(),
            e.user.clone(),
            e.action.clone(),
            e.iccid.as_ref().map_or_else(String::new, ToString::to_string),
            text(&e.slug),
            e.quantity.map(|q| q.to_string()).unwrap_or_default(),
            text(&e.total),
            text(&e.order_no),
            text(&e.balance_after),
            esimdash_domain::text::excerpt(&text(&e.outcome), 60),
        ]);
    }
    t
}

/// `audit --team`: the team gateway's journal, through the connection (the agent's token):
/// a table, or one JSON line per payment with `--json`.
pub async fn team(client: &esimdash_api::Client, since: Option<&str>, output: &Output) -> Result<(), CommandError> {
    if let Some(since) = since {
        parse_since(since)?;
    }
    let journal = client.team_journal(since).await.map_err(|e| match e.status() {
        Some(404) => CommandError::Usage(format!(
            "{} is no team gateway: --team reads a gateway's journal (without it, this seat's own trail)",
            client.base_url().as_str()
        )),
        _ => CommandError::Api(e),
    })?;
    let entries = journal["entries"].as_array().cloned().unwrap_or_default();
    let mut out = std::io::stdout().lock();
    if output.is_json() {
        for entry in &entries {
            let line = esimdash_domain::text::json_line(entry).map_err(|e| CommandError::Usage(e.to_string()))?;
            writeln!(out, "{line}")?;
        }
        return Ok(());
    }
    if entries.is_empty() {
        writeln!(
            out,
            "No payments in the team's journal{}.",
            if since.is_some() { " since then" } else { "" }
        )?;
        return Ok(());
    }
    let mut t = Table::of(&[
        "ASKED (UTC)",
        "AGENT",
        "ACTION",
        "ICCID",
        "SLUG",
        "QTY",
        "HELD",
        "CHARGED",
        "STAGE",
        "ORDER",
        "NOTE",
    ])
    .right(&["QTY", "HELD", "CHARGED"]);
    for e in &entries {
        let text = |field: &str| match &e[field] {
            serde_json::Value::String(s) => esimdash_domain::text::sanitize(s).into_owned(),
            serde_json::Value::Null => String::new(),
            other => other.to_string(),
        };
        t.row(vec![
            text("askedAt").replace('T', " ").trim_end_matches('Z').to_string(),
            text("agent"),
            text("kind"),
            text("iccid"),
            text("slug"),
            text("qty"),
            text("amount"),
            text("charged"),
            text("stage"),
            text("orderNo"),
            esimdash_domain::text::excerpt(&text("note"), 60),
        ]);
    }
    write!(out, "{}", t.render())?;
    Ok(())
}

/// `--since`, read as the trail reads it.
fn parse_since(text: &str) -> Result<DateTime<Utc>, CommandError> {
    audit::since(text).map_err(|e| CommandError::Usage(format!("--since {e}")))
}
