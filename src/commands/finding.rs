//! Finding an eSIM by ICCID for a command: by the lookup where the server has it; else by
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
