//! `GET /reseller/esims?iccid=I` for an agent: the API's own lookup where it has one; where it
//! has none (it answers the whole list), the team index says where the eSIM sits and the page
//! there is read (shared with every agent asking meanwhile), so a lookup costs one page at
//! most and the answer holds only that eSIM, as the contract's lookup does.

use crate::index::TeamIndex;
use crate::reads::Reads;
use crate::refused::Refused;
use crate::state::Gateway;
use esimdash_api::relay::ESIMS;
use esimdash_api::relay::Relayed;
use serde_json::{Value, json};

/// The ICCID a query looks up, when it asks nothing else of the list but its page.
pub(crate) fn asked_iccid(query: Option<&str>) -> Option<String> {
    let mut iccid = None;
    for (name, value) in form_urlencoded::parse(query?.as_bytes()) {
        match name.as_ref() {
            "iccid" => iccid = Some(value.chars().filter(|c| !matches!(c, ' ' | '-')).collect::<String>()),
            "page" | "pageSize" => {}
            _ => return None,
        }
    }
    iccid.filter(|i| !i.is_empty())
}

pub(crate) async fn answer(
    gateway: &Gateway,
    agent: &str,
    iccid: &str,
    query: Option<&str>,
) -> Result<Relayed, Refused> {
    let Some(index) = &gateway.index else {
        return as_asked(gateway, agent, query).await;
    };
    // The same lookup again within the freshness: the answer the index gave, as a kept read.
    let key = Reads::key(ESIMS, query);
    // (Only one that holds this eSIM alone: the API's unfiltered list, kept under the same
    // question before the index answered it, is not an answer to give again.)
    if let Some(kept) = gateway.reads.kept_answer(&key)
        && kept.status == 200
        && only_this(&kept, iccid)
    {
        gateway.counters.read(false, Some(kept.status));
        return Ok(kept);
    }
    if !index.upstream_lacks_lookup() {
        let answer = gateway.read(agent, ESIMS, query).await?;
        if answer.status != 200 || only_this(&answer, iccid) {
            return Ok(answer);
        }
        index.saw_no_lookup();
    }
    let Some(seen) = index.whereabouts(iccid).await else {
        // Not seen: it may be new since the index last looked (just bought, here or on another
        // replica). What is new is read from the top first.
        return match from_the_top(gateway, index, agent, iccid).await? {
            New::Found(found) => Ok(listed(gateway, key, found)),
            New::ReachedKnown if index.is_complete() => Ok(listed(gateway, key, Vec::new())),
            // Not seen yet: the list as the API gives it, as a server without the lookup does.
            _ => as_asked(gateway, agent, query).await,
        };
    };
    let mut total = seen.total;
    for _ in 0..2 {
        let Some(place) = seen.place_in(total) else { break };
        let page = place / crate::index::PAGE + 1;
        let page_query = format!("page={page}&pageSize={}", crate::index::PAGE);
        let answer = gateway.read(agent, ESIMS, Some(&page_query)).await?;
        let body: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
        let found = find(&body, iccid);
        if !found.is_empty() {
            return Ok(listed(gateway, key, found));
        }
        // Newer eSIMs pushed it down since the index saw it: the page by today's total.
        match body["total"].as_u64() {
            Some(now) if now != total => total = now,
            _ => break,
        }
    }
    // Not where the index saw it (purged, or the list changed under it): the list as the API
    // gives it, which the agent's client reads as from a server without the lookup.
    tracing::info!(from_end = seen.from_end, "an eSIM was not where the team index saw it");
    as_asked(gateway, agent, query).await
}

/// Pages read from the top for an eSIM the index has not seen, before it is said not to exist.
const NEW_PAGES: u64 = 5;

/// What the newest pages of the list showed of an eSIM the index has not seen.
enum New {
    Found(Vec<Value>),
    /// Not there, and the pages read cover every eSIM added since the index read the list.
    ReachedKnown,
    /// Not there within `NEW_PAGES`, or the list could not be read as expected.
    Unsure,
}

/// The newest pages, read (and so fed to the index) until the eSIM is found or the pages
/// cover every eSIM added since the index last read the list's total.
async fn from_the_top(gateway: &Gateway, index: &TeamIndex, agent: &str, iccid: &str) -> Result<New, Refused> {
    let (_, known_total) = index.coverage();
    for page in 1..=NEW_PAGES {
        let page_query = format!("page={page}&pageSize={}", crate::index::PAGE);
        let answer = gateway.read(agent, ESIMS, Some(&page_query)).await?;
        let body: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
        let found = find(&body, iccid);
        if !found.is_empty() {
            return Ok(New::Found(found));
        }
        let (Some(total), Some(esims)) = (body["total"].as_u64(), body["esims"].as_array()) else {
            return Ok(New::Unsure);
        };
        let added = total.saturating_sub(known_total);
        if known_total > 0 && page * crate::index::PAGE >= added {
            return Ok(New::ReachedKnown);
        }
        if esims.is_empty() {
            return Ok(New::Unsure);
        }
    }
    Ok(New::Unsure)
}

/// The lookup as the agent asked it, the API's answer passed on (or the gateway's refusal).
async fn as_asked(gateway: &Gateway, agent: &str, query: Option<&str>) -> Result<Relayed, Refused> {
    gateway.read(agent, ESIMS, query).await
}

fn iccid_of(esim: &Value) -> Option<&str> {
    esim["rawOrderJson"]["iccid"]
        .as_str()
        .or_else(|| esim["iccid"].as_str())
}

/// Whether every eSIM of the answer is the one asked for: a server with the lookup.
fn only_this(answer: &Relayed, iccid: &str) -> bool {
    let body: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
    body["esims"]
        .as_array()
        .is_some_and(|esims| esims.iter().all(|e| iccid_of(e) == Some(iccid)))
}

/// The page's records of this ICCID, newest first: its current profile, and any earlier one a
/// provider reissued it from.
fn find(body: &Value, iccid: &str) -> Vec<Value> {
    body["esims"]
        .as_array()
        .map(|esims| esims.iter().filter(|e| iccid_of(e) == Some(iccid)).cloned().collect())
        .unwrap_or_default()
}

/// The contract's lookup answer, this eSIM's records or none, kept as the answer to the same
/// lookup.
fn listed(gateway: &Gateway, key: String, esims: Vec<Value>) -> Relayed {
    let answer = Relayed {
        status: 200,
        content_type: Some("application/json".to_string()),
        body: json!({ "total": esims.len(), "page": 1, "pageSize": 20, "esims": esims })
            .to_string()
            .into_bytes(),
        retry_after: None,
        key_echoed: false,
        replayed: false,
    };
    gateway.reads.keep(key, answer.clone());
    answer
}
