//! The contract's other routes, passed on under the reseller's key: reads for every role
//! (shared and kept, `reads`; lookups by ICCID answered with the team index, `lookup`), the
//! profile's change where the role may. Payments never pass here (`payments`).

use crate::agents::{Agent, Deed};
use crate::counters::Refusal;
use crate::lookup;
use crate::refused::Refused;
use crate::state::Gateway;
use esimdash_api::relay::{ESIMS, ROUTES, Relayed};
use esimdash_api::{PLACE_ORDER, TOPUP};

/// A request to pass on: its method, its path under `/api/v1`, its query and body as sent.
pub(crate) struct Passing<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub body: Vec<u8>,
}

pub(crate) async fn relay(gateway: &Gateway, agent: &Agent, asked: Passing<'_>) -> Result<Relayed, Refused> {
    // Once: `/api/v1/api/v1/portal/topups` is no route (it would pass a payment on unchecked).
    let path = asked.path.strip_prefix("/api/v1").unwrap_or_default();
    let endpoint = ROUTES
        .into_iter()
        .filter(|e| *e != TOPUP && *e != PLACE_ORDER)
        .find(|e| e.path == path && e.method == asked.method)
        .ok_or_else(Refused::not_found)?;
    if asked.method != "GET" {
        if !agent.role.may(Deed::EditProfile, gateway.settings.support_can_buy) {
            gateway.counters.refused(&agent.name, Refusal::Role);
            return Err(Refused::forbidden(agent, Deed::EditProfile, ""));
        }
        let answer = gateway
            .upstream
            .relay(endpoint, asked.query, Some(asked.body), None)
            .await
            .map_err(|e| Refused::upstream(&e))?;
        gateway.reads.forget();
        return Ok(answer);
    }
    if endpoint == ESIMS
        && let Some(iccid) = lookup::asked_iccid(asked.query)
    {
        return lookup::answer(gateway, &agent.name, &iccid, asked.query).await;
    }
    gateway.read(&agent.name, endpoint, asked.query).await
}
