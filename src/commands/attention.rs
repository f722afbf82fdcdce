//! How many eSIMs need attention: from the account's kept picture (`esimdash_inventory::
//! picture`) when it is whole and young enough, confirmed by the top of the list (one request:
//! new eSIMs come there); else read live, every page of the usable eSIMs (the server's `active`
//! filter) with the configured rule applied to each record, within a budget of requests. One
//! count for `check attention` and `metrics`; `esims --attention` lists the same eSIMs, and the
//! dashboard's `!` applies the same rule to its index.

use chrono::{DateTime, Utc};
use esimdash_api::model::EsimQuery;
use esimdash_api::pages::{Listing, PAGE_SIZE, Page};
use esimdash_api::{ApiError, Client};
use esimdash_domain::attention::AttentionRule;
use esimdash_domain::status::StatusFilter;
use esimdash_inventory::kept::Kept;
use esimdash_inventory::picture::Picture;

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
        max_age: args
            .max_age
            .map_or(prefs.picture_max_age, |m| chrono::Duration::minutes(i64::from(m))),
        budget: args.budget,
    }
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
    let why_not = match kept.and_then(Kept::freshness).and_then(|f| f.age(now)) {
        Some(age) => format!(
            "the kept picture is {} old, older than --max-age {} min",
            esimdash_domain::text::age(age),
            means.max_age.num_minutes()
        ),
        None if kept.is_some() => "no whole picture of the account is kept".to_string(),
        None => "no picture is kept (--no-cache)".to_string(),
    };
    live(client, rule, means.budget, now)
        .await
        .map_err(|e| match e {
            Live::Api(e) => e.to_string(),
            Live::OverBudget { pages } => format!(
                "{why_not}, and counting live takes {pages} requests, more than --budget {}: run a keeper (esimdash watch, or metrics --listen) or raise --budget",
                means.budget
            ),
        })
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

enum Live {
    Api(ApiError),
    OverBudget { pages: u64 },
}

impl From<ApiError> for Live {
    fn from(e: ApiError) -> Self {
        Live::Api(e)
    }
}

/// Every usable eSIM read now, within `budget` requests (the first page tells how many it takes).
async fn live(client: &Client, rule: AttentionRule, budget: u64, now: DateTime<Utc>) -> Result<Counted, Live> {
    let query = EsimQuery {
        status: StatusFilter::Active,
        ..EsimQuery::default()
    };
    let mut count = 0u64;
    let progress = Listing::Esims(query)
        .read_all(client, |page, progress| {
            if progress.pages > budget {
                return Err(Live::OverBudget { pages: progress.pages });
            }
            if let Page::Esims(esims) = page {
                count += esims.iter().filter(|e| rule.needs_esim(*e, now)).count() as u64;
            }
            Ok(())
        })
        .await?;
    Ok(Counted {
        count,
        usable: progress.items,
        age: None,
    })
}
