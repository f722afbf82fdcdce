//! The handlers, one per route of the spec and docs/api-contract.md. Each takes the lock once, so what it
//! reads and changes is one consistent step.

use super::auth::Caller;
use super::http::{Failure, JsonObject, Params};
use super::lists::Filter;
use super::store::Data;
use super::{Shared, wire};
use axum::Extension;
use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use esimdash_domain::profile_fields;
use std::sync::{Arc, MutexGuard};
use std::time::Instant;

type Answer = Result<Response, Failure>;

/// `pageSize` above this is capped (spec).
const MAX_PAGE_SIZE: u64 = 100;

/// A list request as both list routes take it: validated paging, the filter, and the data with
/// new orders settled (so a list never shows an order as pending after its profiles exist).
struct ListAsk<'a> {
    page: u64,
    size: u64,
    filter: Filter,
    data: MutexGuard<'a, Data>,
}

impl<'a> ListAsk<'a> {
    /// `status`, `q` and `iccid` (docs/api-contract.md: exact, after removing spaces and
    /// dashes), unless this sandbox plays a server that predates the lookup and ignores `iccid`.
    fn open(s: &'a Shared, reseller: usize, query: Option<&str>) -> Result<Self, Failure> {
        let params = Params::parse(query);
        let page = params.positive("page", 1)?;
        let size = params.positive("pageSize", 20)?.min(MAX_PAGE_SIZE);
        let iccid = params.text("iccid").filter(|_| s.iccid_lookup);
        let filter = Filter::new(params.text("status"), params.text("q"), iccid);
        let mut data = s.lock();
        data.settle(reseller, Instant::now());
        Ok(Self {
            page,
            size,
            filter,
            data,
        })
    }
}

/// `GET /portal/plans`: the catalog, one plan by `slug`, or top-up availability
/// (`type=topup&iccid=…`).
pub async fn plans(
    State(s): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    RawQuery(q): RawQuery,
) -> Answer {
    let params = Params::parse(q.as_deref());
    let data = s.lock();
    let markup = data.markup(caller.reseller);
    match params.text("type") {
        Some(t) if t.eq_ignore_ascii_case("topup") => {
            let iccid = params
                .text("iccid")
                .ok_or_else(|| Failure::bad_request("Missing iccid"))?;
            let plans: Vec<_> = data
                .topups_for(caller.reseller, iccid)?
                .into_iter()
                .map(|p| wire::plan(p, markup))
                .collect();
            return Ok(Json(wire::Availability { iccid, data: plans }).into_response());
        }
        Some(t) if !t.eq_ignore_ascii_case("base") => return Err(Failure::bad_request("Invalid type")),
        _ => {}
    }
    if let Some(slug) = params.get("slug") {
        let plan = data
            .plan(slug.trim())
            .ok_or_else(|| Failure::not_found("Plan not found"))?;
        return Ok(Json(wire::DataEnvelope {
            data: wire::plan(plan, markup),
        })
        .into_response());
    }
    let plans: Vec<_> = data.plans.iter().map(|p| wire::plan(p, markup)).collect();
    Ok(Json(wire::DataEnvelope { data: plans }).into_response())
}

/// `GET /reseller/orders`.
pub async fn orders(
    State(s): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    RawQuery(q): RawQuery,
) -> Answer {
    let mut ask = ListAsk::open(&s, caller.reseller, q.as_deref())?;
    let found = ask.data.orders(caller.reseller, &ask.filter, ask.page, ask.size);
    let orders: Vec<_> = found.items.into_iter().map(wire::order).collect();
    Ok(Json(wire::OrdersPage {
        page: ask.page,
        page_size: ask.size,
        total: found.total,
        orders,
    })
    .into_response())
}

/// `GET /reseller/esims`.
pub async fn esims(
    State(s): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    RawQuery(q): RawQuery,
) -> Answer {
    let mut ask = ListAsk::open(&s, caller.reseller, q.as_deref())?;
    let found = ask.data.esims(caller.reseller, &ask.filter, ask.page, ask.size);
    let esims: Vec<_> = found
        .items
        .into_iter()
        .map(|(o, e)| wire::esim(o, e, &s.origin))
        .collect();
    Ok(Json(wire::EsimsPage {
        total: found.total,
        page: ask.page,
        page_size: ask.size,
        esims,
    })
    .into_response())
}

/// `GET /reseller/profile`.
pub async fn profile(State(s): State<Arc<Shared>>, Extension(caller): Extension<Caller>) -> Answer {
    let data = s.lock();
    let profile = wire::profile(data.reseller_view(caller.reseller));
    Ok(Json(wire::ProfileEnvelope { ok: None, profile }).into_response())
}

/// `PATCH /reseller/profile`: only `companyName`, `country` and `website`, validated.
pub async fn update_profile(
    State(s): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    body: JsonObject,
) -> Answer {
    if let Some(unknown) = body
        .0
        .keys()
        .find(|k| !matches!(k.as_str(), "companyName" | "country" | "website"))
    {
        return Err(Failure::bad_request(format!(
            "Unknown field: {}",
            esimdash_domain::text::excerpt(unknown, 40)
        )));
    }
    let field = |name: &str| -> Result<Option<String>, Failure> {
        match body.0.get(name) {
            None => Ok(None),
            Some(serde_json::Value::String(v)) => Ok(Some(v.trim().to_string())),
            Some(_) => Err(Failure::bad_request(format!("Invalid {name}: expected a string"))),
        }
    };
    let company = field("companyName")?;
    if let Some(c) = &company {
        profile_fields::check_company(c).map_err(Failure::bad_request)?;
    }
    let country = field("country")?
        .map(|c| profile_fields::check_country(&c))
        .transpose()
        .map_err(Failure::bad_request)?;
    let website = field("website")?;
    if let Some(w) = &website {
        profile_fields::check_website(w).map_err(Failure::bad_request)?;
    }
    let mut data = s.lock();
    let reseller = data.update_profile(caller.reseller, company, country, website);
    Ok(Json(wire::ProfileEnvelope {
        ok: Some(true),
        profile: wire::profile(reseller),
    })
    .into_response())
}

/// `GET /reseller/balance`.
pub async fn balance(State(s): State<Arc<Shared>>, Extension(caller): Extension<Caller>) -> Answer {
    let data = s.lock();
    let balance = esimdash_domain::money::format_amount(data.reseller_view(caller.reseller).balance);
    Ok(Json(wire::Balance { balance_usd: balance }).into_response())
}

/// `POST /portal/topups`.
pub async fn topup(State(s): State<Arc<Shared>>, Extension(caller): Extension<Caller>, body: JsonObject) -> Answer {
    let (iccid, slug) = match (body.string("iccid")?, body.string("slug")?) {
        (Some(i), Some(s)) => (i, s),
        _ => return Err(Failure::bad_request("Missing iccid or slug")),
    };
    let qty = body.qty()?;
    let mut data = s.lock();
    let (order, balance) = data.topup(caller.reseller, &iccid, &slug, qty)?;
    Ok(placed(order, balance))
}

/// `POST /portal/orders`.
pub async fn place_order(
    State(s): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    body: JsonObject,
) -> Answer {
    let slug = body
        .string("slug")?
        .ok_or_else(|| Failure::bad_request("Missing slug"))?;
    let qty = body.qty()?;
    let mut data = s.lock();
    let (order, balance) = data.place_order(caller.reseller, &slug, qty, s.allocate_after)?;
    Ok(placed(order, balance))
}

fn placed(order: &super::records::OrderRecord, balance: rust_decimal::Decimal) -> Response {
    let body = wire::Placed {
        ok: true,
        order: wire::order(order),
        balance_usd: esimdash_domain::money::format_amount(balance),
    };
    (StatusCode::CREATED, Json(body)).into_response()
}

/// `GET /qr/<name>.png`: the QR image of an activation code, public like a CDN.
pub async fn qr_image(State(s): State<Arc<Shared>>, Path(file): Path<String>) -> Answer {
    let name = file
        .strip_suffix(".png")
        .ok_or_else(|| Failure::not_found("Not found"))?;
    let code = s
        .lock()
        .activation_code_of_qr(name)
        .ok_or_else(|| Failure::not_found("Not found"))?;
    let png = esimdash_qr::QrMatrix::encode(&code)
        .and_then(|m| m.to_png(8))
        .map_err(|e| Failure::new(StatusCode::INTERNAL_SERVER_ERROR, e))?;
    Ok(([(header::CONTENT_TYPE, "image/png")], png).into_response())
}

pub async fn not_found() -> Failure {
    Failure::not_found("Not found")
}

pub async fn method_not_allowed() -> Failure {
    Failure::new(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed")
}
