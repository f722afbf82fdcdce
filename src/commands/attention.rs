//! How many eSIMs need attention: from the account's kept picture (`esimdash_inventory::
//! picture`) when it is whole and young enough, confirmed by the top of the list (one request:
//! new eSIMs come there); else read live, every page of the usable eSIMs (the server's `active`
//! filter) with the configured rule applied to each record, within a budget of requests. One
//! count for `check attention` and `metrics`; `esims --attention` lists the same eSIMs by the
//! same means (`list`), and the dashboard's `!` applies the same rule to its index.

use super::lists::{Listed, Shape, every_page};
use super::table::Table;
use super::{CommandError, Output};
use chrono::{DateTime, Utc};
use esimdash_api::model::EsimQuery;
use esimdash_api::pages::{Listing, PAGE_SIZE, Page, Progress};
use esimdash_api::{ApiError, Client};
use esimdash_domain::attention::AttentionRule;
use esimdash_domain::status::StatusFilter;
use esimdash_inventory::kept::Kept;
use esimdash_inventory::picture::{Held, Picture};
use serde_json::json;

/// `esims --attention`: the eSIMs needing attention, newest first, from the kept picture when
/// it is fresh (one request), else read live within the budget. One shape either way (the
/// picture's rows, `Held`): a script's output does not change with whether a keeper runs;
/// where the list comes from and how old it is are in its tail and footer. A chosen `--status`
/// is read live (the picture answers for the usable eSIMs as a whole).
pub async fn list(
    client: &Client,
    kept: Option<&Kept>,
    (status, rule): (StatusFilter, AttentionRule),
    means: Means,
    output: &Output,
) -> Result<(), CommandError> {
    let now = Utc::now();
    if status == StatusFilter::All
        && let Some((held, picture)) = pictured(client, kept, rule, means.max_age, now).await?
    {
        let mut listed = Listed::start(output, &ATTENTION)?;
        listed.page(held)?;
        return finish(listed, (rule, &status), picture.usable, picture.age(now));
    }
    // Only usable eSIMs can need attention: the server's `active` filter saves the pages of
    // the rest, unless the user chose a status.
    let status = match status {
        StatusFilter::All => StatusFilter::Active,
        chosen => chosen,
    };
    let query = EsimQuery {
        status: status.clone(),
        ..EsimQuery::default()
    };
    let take = judged(kept, rule, means, now);
    let (listed, progress) = every_page(client, Listing::Esims(query), output, &ATTENTION, take).await?;
    finish(listed, (rule, &status), progress.items, None)
}

/// A page read live, judged: its eSIMs needing attention as the picture would hold them; past
/// the budget, the refusal in words.
fn judged(
    kept: Option<&Kept>,
    rule: AttentionRule,
    means: Means,
    now: DateTime<Utc>,
) -> impl Fn(Page, &Progress) -> Result<Vec<Held>, CommandError> {
    move |page, progress| {
        if progress.pages > means.budget {
            return Err(CommandError::Usage(over_budget(kept, means, progress.pages, now)));
        }
        Ok(match page {
            Page::Esims(items) => items
                .iter()
                .filter(|e| rule.needs_esim(*e, now))
                .map(|e| Held::now(e, now))
                .collect(),
            Page::Orders(_) => Vec::new(),
        })
    }
}

/// The eSIMs needing attention as the kept picture holds them, with the picture, when it is
/// young enough (`fresh_picture`); `None` otherwise.
async fn pictured(
    client: &Client,
    kept: Option<&Kept>,
    rule: AttentionRule,
    max_age: chrono::Duration,
    now: DateTime<Utc>,
) -> Result<Option<(Vec<Held>, Picture)>, CommandError> {
    let (Some(picture), Some(kept)) = (fresh_picture(client, kept, rule, max_age, now).await?, kept) else {
        return Ok(None);
    };
    let held = kept
        .needing_attention(rule, now)
        .ok_or_else(|| CommandError::Usage("the kept picture could not be read".to_string()))?;
    Ok(Some((held, picture)))
}

/// Every usable eSIM read now within the budget (the first page tells how many it takes):
/// those needing attention, and how many usable eSIMs were read.
async fn read_live(
    client: &Client,
    kept: Option<&Kept>,
    rule: AttentionRule,
    means: Means,
    now: DateTime<Utc>,
) -> Result<(Vec<Held>, u64), CommandError> {
    let query = EsimQuery {
        status: StatusFilter::Active,
        ..EsimQuery::default()
    };
    let (take, mut held) = (judged(kept, rule, means, now), Vec::new());
    let progress = Listing::Esims(query)
        .read_all(client, |page, progress| {
            held.extend(take(page, &progress)?);
            Ok::<_, CommandError>(())
        })
        .await?;
    Ok((held, progress.items))
}

/// `esims --attention --json` as one value, its first `most` eSIMs (`shown` says how many):
/// what an assistant's tool answers.
pub async fn as_json(
    client: &Client,
    kept: Option<&Kept>,
    rule: AttentionRule,
    means: Means,
    most: usize,
) -> Result<serde_json::Value, CommandError> {
    let now = Utc::now();
    let (held, usable, age) = match pictured(client, kept, rule, means.max_age, now).await? {
        Some((held, picture)) => (held, picture.usable, picture.age(now)),
        None => {
            let (held, usable) = read_live(client, kept, rule, means, now).await?;
            (held, usable, None)
        }
    };
    let mut value = tail(held.len() as u64, usable, age);
    value["shown"] = json!(held.len().min(most));
    value["esims"] = held.iter().take(most).map(held_json).collect::<Result<_, _>>()?;
    Ok(value)
}

/// What ends the list in JSON: how many of how many usable eSIMs, from where, how old.
fn tail(count: u64, usable: u64, age: Option<chrono::Duration>) -> serde_json::Value {
    json!({
        "total": count,
        "usable": usable,
        "from": if age.is_some() { "picture" } else { "live" },
        "ageSeconds": age.map_or(0, |a| a.num_seconds()),
    })
}

/// The list's end: how many of how many usable eSIMs, and from where.
fn finish(
    listed: Listed<'_, Held>,
    (rule, status): (AttentionRule, &StatusFilter),
    usable: u64,
    age: Option<chrono::Duration>,
) -> Result<(), CommandError> {
    let kept = listed.kept;
    let from = age.map_or_else(
        || "read now".to_string(),
        |a| format!("from the kept picture, {} old", esimdash_domain::text::age(a)),
    );
    // Of the usable eSIMs, or of those of the status asked for.
    let judged = match status {
        StatusFilter::All | StatusFilter::Active => "usable".to_string(),
        chosen => chosen.param().unwrap_or("usable").to_string(),
    };
    let footer = format!(
        "{kept} of {usable} {judged} eSIMs need attention ({}), {from}",
        rule.describe()
    );
    listed.finish(tail(kept, usable, age), &footer)
}

const ATTENTION: Shape<Held> = Shape {
    what: "eSIMs",
    key: "esims",
    header: &[
        "iccid",
        "orderNo",
        "status",
        "state",
        "packageName",
        "slug",
        "packageCode",
        "locationCode",
        "usedPercent",
        "expiresAt",
        "readAt",
    ],
    csv: held_csv,
    json: held_json,
    table: held_table,
    row: held_row,
};

/// A time of the picture (Unix seconds) in RFC 3339, empty where there is none.
fn time(at: Option<i64>) -> String {
    at.and_then(|t| DateTime::from_timestamp(t, 0))
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

fn held_csv(h: &Held) -> Vec<String> {
    use esimdash_front::export::csv_rows::text;
    let (e, p) = (&h.entry, &h.entry.package);
    vec![
        text(&e.iccid),
        text(&e.order),
        text(e.status.as_str()),
        text(e.class.key()),
        text(&p.name),
        text(&p.slug),
        text(&p.code),
        text(&p.location),
        e.limits.used_pct.map(|p| p.to_string()).unwrap_or_default(),
        time(e.limits.expires),
        time(Some(h.read_at)),
    ]
}

fn held_json(h: &Held) -> Result<serde_json::Value, CommandError> {
    let (e, p) = (&h.entry, &h.entry.package);
    let or_null = |t: String| {
        if t.is_empty() {
            serde_json::Value::Null
        } else {
            json!(t)
        }
    };
    Ok(json!({
        "iccid": e.iccid,
        "orderNo": e.order,
        "status": e.status.as_str(),
        "state": e.class.key(),
        "packageName": p.name,
        "slug": p.slug,
        "packageCode": p.code,
        "locationCode": p.location,
        "usedPercent": e.limits.used_pct,
        "expiresAt": or_null(time(e.limits.expires)),
        "readAt": time(Some(h.read_at)),
    }))
}

fn held_table() -> Table {
    Table::of(&["ICCID", "STATUS", "PACKAGE", "LOC", "USED", "EXPIRES", "READ"])
        .right(&["USED", "READ"])
        .listed(1)
}

fn held_row(h: &Held) -> Vec<String> {
    let e = &h.entry;
    let now = Utc::now().timestamp();
    vec![
        e.iccid.clone(),
        esimdash_front::format::verdict::state_words(e.class, &e.status).to_string(),
        e.package.name.clone(),
        esimdash_domain::location::short(&e.package.location).to_string(),
        e.limits.used_pct.map(|p| format!("{p} %")).unwrap_or_default(),
        time(e.limits.expires).get(..10).unwrap_or_default().to_string(),
        format!(
            "{} ago",
            esimdash_domain::text::age(chrono::Duration::seconds(now - h.read_at))
        ),
    ]
}

/// A count, and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    /// eSIMs needing attention, of how many usable ones.
    pub count: u64,
    pub usable: u64,
    /// How old the kept picture it was read from is (`None`: read live now).
    pub age: Option<chrono::Duration>,
}

/// What a count may take: a picture no older than `max_age`, else `budget` requests.
#[derive(Debug, Clone, Copy)]
pub struct Means {
    pub max_age: chrono::Duration,
    pub budget: u64,
}

/// What `--max-age` and `--budget` (over the config's `max_age_minutes`) allow.
pub fn means(args: &crate::cli::PictureArgs, prefs: &esimdash_front::config::Preferences) -> Means {
    Means {
        max_age: max_age(args.max_age, prefs),
        budget: args.budget,
    }
}

/// How old a kept fact may be: `--max-age` (minutes) over the config's `max_age_minutes`.
pub fn max_age(minutes: Option<u32>, prefs: &esimdash_front::config::Preferences) -> chrono::Duration {
    minutes.map_or(prefs.picture_max_age, |m| chrono::Duration::minutes(i64::from(m)))
}

/// The count: from the picture when fresh, else live within the budget, else why not.
pub async fn counted(
    client: &Client,
    kept: Option<&Kept>,
    rule: AttentionRule,
    means: Means,
    now: DateTime<Utc>,
) -> Result<Counted, String> {
    let fresh = fresh_picture(client, kept, rule, means.max_age, now)
        .await
        .map_err(|e| e.to_string())?;
    if let Some(picture) = fresh {
        return Ok(Counted {
            count: picture.attention,
            usable: picture.usable,
            age: picture.age(now),
        });
    }
    let (held, usable) = read_live(client, kept, rule, means, now)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Counted {
        count: held.len() as u64,
        usable,
        age: None,
    })
}

/// Why a count or a list was not answered: the picture is missing or too old, and a live read
/// takes `pages` requests, more than the budget; what to do about it.
fn over_budget(kept: Option<&Kept>, means: Means, pages: u64, now: DateTime<Utc>) -> String {
    let why_not = match kept.and_then(Kept::freshness).and_then(|f| f.age(now)) {
        _ if means.max_age <= chrono::Duration::zero() => "--max-age 0 reads live".to_string(),
        Some(age) => format!(
            "the kept picture is {} old, older than --max-age {} min",
            esimdash_domain::text::age(age),
            means.max_age.num_minutes()
        ),
        None if kept.is_some() => "no whole picture of the account is kept".to_string(),
        None => "no picture is kept (--no-cache)".to_string(),
    };
    format!(
        "{why_not}, and reading live takes {pages} requests, more than --budget {}: run a keeper (esimdash watch, metrics --listen or the dashboard), read the list whole once (esims --all), or raise --budget",
        means.budget
    )
}

/// The kept picture when it is whole and no older than `max_age`, confirmed by the top of the
/// list read now (one request: new eSIMs come there, and go into the index); `None` otherwise.
pub async fn fresh_picture(
    client: &Client,
    kept: Option<&Kept>,
    rule: AttentionRule,
    max_age: chrono::Duration,
    now: DateTime<Utc>,
) -> Result<Option<Picture>, ApiError> {
    let Some(kept) = kept else { return Ok(None) };
    if !kept.freshness().is_some_and(|f| f.fresh(now, max_age)) {
        return Ok(None);
    }
    let top = EsimQuery {
        page: Some(1),
        page_size: Some(PAGE_SIZE),
        ..EsimQuery::default()
    };
    client.esims(&top).await?;
    Ok(kept.picture(rule, now).filter(|p| p.fresh(now, max_age)))
}
