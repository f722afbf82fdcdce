//! Finding an eSIM by ICCID with the account's inventory index: by the lookup where the server
//! has it; else the page at the place the index saw it; else the pages the index does not
//! cover, from the top, each read once. Every page read goes into the index on the way.

use crate::api::model::Esim;
use crate::api::{ApiError, Client, Lookup};
use crate::inventory::kept::Kept;
use std::collections::HashSet;

/// The eSIM list's page size for reading it whole.
const PAGE: u64 = 100;

/// Every profile of `iccid`, the current one first (of a list without the lookup, only the
/// one found first, as `Client::find_profiles`).
pub async fn profiles(client: &Client, index: &Kept, iccid: &str) -> Result<Vec<Esim>, ApiError> {
    let mut first = match client.lookup_esim(iccid).await? {
        Lookup::Found(esim, earlier) => return Ok(std::iter::once(*esim).chain(earlier).collect()),
        Lookup::Absent => return Ok(Vec::new()),
        Lookup::Unsupported(first) => first,
    };
    if let Some(seen) = index.whereabouts(iccid)
        && let Some(esim) = client.esim_at(iccid, seen, &mut first).await?
    {
        return Ok(vec![esim]);
    }
    if !index.knows_total() {
        first = Some(client.inventory_page(1, &mut first).await?);
    }
    let mut read = HashSet::new();
    let mut from = 0;
    while let Some(gap) = index.first_gap_from(from) {
        let page = gap / PAGE + 1;
        from = page * PAGE;
        if !read.insert(page) {
            continue;
        }
        let answer = client.inventory_page(page, &mut first).await?;
        if let Some(esim) = answer.esims.into_iter().find(|e| e.raw_order_json.iccid == iccid) {
            return Ok(vec![esim]);
        }
        if answer.total <= (page - 1) * PAGE {
            break;
        }
        // The index now covers this page: the next gap is after it, or where it was if the
        // page left one (a list that changed as it was read).
        from = gap.min(from);
    }
    Ok(Vec::new())
}
