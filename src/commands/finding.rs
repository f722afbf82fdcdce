//! Finding an eSIM by ICCID (or an order's eSIMs) for a command: by the lookup where the server has it; else by
//! searching the list (`Client::sweep`): the page at the place the account's index saw it, the
//! pages either side, then every other page while the rate budget has room, those the index
//! lacks before those it holds. Every page read goes into the index on the way.

use esimdash_api::model::Esim;
use esimdash_api::{ApiError, Client, Later, Lookup, Reach, Searched, Sweep};
use esimdash_domain::iccid::Iccid;
use esimdash_inventory::kept::Kept;

/// The eSIM list's page size for reading it whole.
const PAGE: u64 = esimdash_api::pages::PAGE_SIZE;

/// What looking for an ICCID came to.
#[derive(Debug)]
pub enum Finding {
    /// Every profile of the ICCID, the current one first (of a list without the lookup, only
    /// the one found: finding the rest would read the whole list).
    Profiles(Vec<Esim>),
    /// The server's lookup says this account has none.
    Absent,
    /// Not in the pages read; whether that proves it absent is `Searched::proves_absence`.
    Missed(Searched),
}

/// Looks for `iccid`, with the account's index where one is kept.
pub async fn profiles(client: &Client, index: Option<&Kept>, iccid: &Iccid) -> Result<Finding, ApiError> {
    let mut first = match client.lookup_esim(iccid).await? {
        Lookup::Found(esim, earlier) => {
            return Ok(Finding::Profiles(std::iter::once(*esim).chain(earlier).collect()));
        }
        Lookup::Absent => return Ok(Finding::Absent),
        Lookup::Unsupported(first) => first,
    };
    let seen = index.and_then(|i| i.whereabouts(iccid.as_str()));
    // Asked of the index only if the pages near its place do not have it.
    let later = match index {
        Some(index) => {
            let index = index.clone();
            Later::asked(move || index.pages_held_whole(PAGE))
        }
        None => Later::pages(Vec::new()),
    };
    Ok(
        match client.sweep(iccid, seen, &mut first, &Reach::Whole { later }).await? {
            Sweep::Found(esim) => Finding::Profiles(vec![*esim]),
            Sweep::Missed(searched) => Finding::Missed(searched),
        },
    )
}

/// The newest eSIMs read when the index knows none of an order's: a new order's eSIM is near
/// the top of the list.
const ORDER_PAGES: u64 = 3;

/// The ICCIDs of an order's eSIMs: as the account's index saw them, else among the newest
/// `ORDER_PAGES` pages of the list; empty when neither has one.
pub async fn iccids_of_order(
    client: &Client,
    index: Option<&Kept>,
    order_no: &str,
) -> Result<Vec<esimdash_domain::iccid::EsimIccid>, ApiError> {
    let kept = index.map(|i| i.iccids_of_order(order_no)).unwrap_or_default();
    if !kept.is_empty() {
        return Ok(kept
            .iter()
            .map(|i| esimdash_domain::iccid::EsimIccid::parse(i))
            .collect());
    }
    let mut found = Vec::new();
    for page in 1..=ORDER_PAGES {
        let query = esimdash_api::model::EsimQuery {
            page: Some(page),
            page_size: Some(PAGE),
            ..Default::default()
        };
        let read = client.esims(&query).await?;
        for esim in read.esims.iter().filter(|e| e.record.provider_order_no == order_no) {
            if !found.contains(&esim.raw_order_json.iccid) {
                found.push(esim.raw_order_json.iccid.clone());
            }
        }
        if !found.is_empty() || read.esims.len() < PAGE as usize {
            break;
        }
    }
    Ok(found)
}
