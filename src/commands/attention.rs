//! How many eSIMs need attention, read live: every page of the usable eSIMs (the server's
//! `active` filter) with the configured rule applied to each record. One count for `check
//! attention` and `metrics`; `esims --attention` lists the same eSIMs, and the dashboard's `!`
//! applies the same rule to its index once the index holds the whole inventory.

use chrono::{DateTime, Utc};
use esimdash_api::model::EsimQuery;
use esimdash_api::pages::{Listing, Page};
use esimdash_api::{ApiError, Client};
use esimdash_domain::attention::AttentionRule;
use esimdash_domain::status::StatusFilter;

/// The eSIMs needing attention now, of how many usable ones read.
pub async fn count(client: &Client, rule: AttentionRule, now: DateTime<Utc>) -> Result<(u64, u64), ApiError> {
    let query = EsimQuery {
        status: StatusFilter::Active,
        ..EsimQuery::default()
    };
    let mut count = 0u64;
    let progress = Listing::Esims(query)
        .read_all(client, |page, _| {
            if let Page::Esims(esims) = page {
                count += esims.iter().filter(|e| rule.needs_esim(*e, now)).count() as u64;
            }
            Ok::<(), ApiError>(())
        })
        .await?;
    Ok((count, progress.items))
}
