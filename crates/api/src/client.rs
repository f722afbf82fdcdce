//! The HTTP client: one method per route of the spec and docs/api-contract.md.
//!
//! GETs are retried a bounded number of times (429, 5xx, connection errors), with backoff or the
//! server's `Retry-After`. POST and PATCH are sent exactly once: a request that moves money is
//! never repeated by this layer, and a timeout on one is reported as an unknown outcome.

use super::error::{ApiError, Endpoint};
use super::model::{
    self, Esim, EsimPage, EsimQuery, Order, OrderPage, OrderQuery, PagePlace, Plan, Profile, Whereabouts,
};
use super::{BaseUrl, Credentials, Pacer};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::status::StatusFilter;
use reqwest::header::HeaderMap;
use rust_decimal::Decimal;
use secrecy::SecretString;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;
use tokio::time::Instant;

pub(crate) const PLANS: Endpoint = Endpoint::new("GET", "/portal/plans");
pub const ORDERS: Endpoint = Endpoint::new("GET", "/reseller/orders");
pub(crate) const ESIMS: Endpoint = Endpoint::new("GET", "/reseller/esims");
pub(crate) const PROFILE: Endpoint = Endpoint::new("GET", "/reseller/profile");
pub const PROFILE_UPDATE: Endpoint = Endpoint::new("PATCH", "/reseller/profile");
pub(crate) const BALANCE: Endpoint = Endpoint::new("GET", "/reseller/balance");

/// Largest response body read; anything bigger is refused as unreadable, not buffered.
pub(super) const MAX_BODY: usize = 16 * 1024 * 1024;
/// Largest QR image downloaded from `qrCodeUrl`.
pub const MAX_QR_IMAGE_BYTES: usize = 2 * 1024 * 1024;
/// How long a QR image download may take (or the request timeout, when that is shorter).
pub(super) const QR_IMAGE_TIMEOUT: Duration = Duration::from_secs(10);
/// Page size used when looking through the whole inventory.
pub(super) const SCAN_PAGE_SIZE: u64 = 100;
/// Redirects within the API's origin followed in a row, at most (docs/api-contract.md, "Transport").
pub(super) const MAX_REDIRECTS: u32 = 5;
/// How much of an unreadable body an error quotes.
pub(super) const EXCERPT_CHARS: usize = 120;

/// What the client read of the eSIM list, as `on_esims_read` tells it.
#[derive(Debug, Clone, Copy)]
pub struct EsimsRead<'a> {
    pub esims: &'a [Esim],
    /// Where a page of the whole list sits in it; `None` for records read otherwise (a
    /// filtered page, a lookup).
    pub place: Option<PagePlace>,
    /// The request that read it carries it in its answer, with its place (`index_page`): a
    /// keeper that takes that answer takes the page from there, once.
    pub answered: bool,
}

/// Told of every eSIM the client reads (`on_esims_read`).
pub type EsimsTap = Arc<dyn Fn(&EsimsRead<'_>) + Send + Sync>;

tokio::task_local! {
    /// Set while a read nobody waits for runs (`Client::in_background`).
    pub(super) static IN_BACKGROUND: ();
}

/// Tunables of the client; `Default` is what the product uses.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Requests allowed per `rate_window` for this key (spec: per minute, default 120).
    pub rate_limit: u32,
    pub rate_window: Duration,
    pub connect_timeout: Duration,
    /// For the whole request, body included.
    pub request_timeout: Duration,
    /// Extra attempts of a GET after a 429, a 5xx or a connection error.
    pub retries: u32,
    /// First backoff; doubled each retry.
    pub backoff: Duration,
    /// A `Retry-After` longer than this is not slept through in place: the caller gets
    /// `RateLimited` and can show a countdown (the dashboard sets zero: it always counts down).
    pub max_retry_wait: Duration,
    /// Set: every write is refused before it is sent; the text names the setting that made the
    /// session read-only ("--read-only").
    pub read_only: Option<String>,
    /// Where every write is recorded, stage by stage; `None` records nothing (tests).
    pub audit: Option<crate::audit::Trail>,
    /// The share of the rate budget a read nobody waits for may take (`in_background`).
    pub background_share: f64,
    /// Roots trusted besides the system's (`ca_file`).
    pub extra_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    /// Set when the account's money lives on one server instance only (the demo's sandbox,
    /// new with each process): the guards then know the account by its credential *on that
    /// instance*, so one demo's payments are never another's repeats.
    pub account_scope: Option<String>,
}

impl ClientOptions {
    /// How many requests the background share of the budget allows in `span` (the budget is
    /// `rate_limit` per `rate_window`).
    pub fn background_requests(&self, span: Duration) -> u64 {
        let per_window = f64::from(self.rate_limit) * self.background_share;
        (per_window * span.as_secs_f64() / self.rate_window.as_secs_f64().max(1.0)) as u64
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            rate_limit: 120,
            rate_window: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            retries: 2,
            backoff: Duration::from_millis(250),
            max_retry_wait: Duration::from_secs(10),
            read_only: None,
            audit: None,
            background_share: 0.5,
            extra_roots: Vec::new(),
            account_scope: None,
        }
    }
}

/// A cheap-to-clone handle; clones share the connection pool and the pacing budget.
#[derive(Clone)]
pub struct Client {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) http: reqwest::Client,
    /// The roots https servers are verified against, read when first needed.
    pub(super) roots: Arc<super::tls::Roots>,
    pub(super) base: BaseUrl,
    pub(super) auth_headers: HeaderMap,
    /// Kept only to scrub it from any text of the server's that an error quotes.
    pub(super) secret: SecretString,
    pub(super) pacer: Pacer,
    pub(super) opts: ClientOptions,
    /// Set once this server answered a lookup by ICCID with other eSIMs: it ignores `iccid`.
    pub(super) no_iccid_lookup: AtomicBool,
    /// Whether the last answer to a request that carried an idempotency key echoed it
    /// (`KEY_*`): a server that echoes honours keys.
    pub(super) key_echoed: AtomicU8,
    /// Who the audit trail names.
    pub(super) who: crate::audit::Who,
    /// Whether the audit trail shows an earlier echo: read once, when first needed.
    pub(super) echo_on_record: std::sync::OnceLock<bool>,
    /// Who hears the client's notices (waiting for another process, payments settled).
    pub(super) listener: std::sync::Mutex<Option<super::Listener>>,
    /// Told of every eSIM read (`on_esims_read`).
    pub(super) esims_read: std::sync::Mutex<Option<EsimsTap>>,
    /// The account's payment lock, kept after a lost answer until its lookup is done.
    pub(super) held_lock: std::sync::Mutex<Option<super::lock::AccountLock>>,
    /// Keys of payments the server said it was still handling (409): an order list that does
    /// not show them yet says nothing.
    pub(super) in_progress: std::sync::Mutex<std::collections::HashSet<String>>,
    /// The agent this key is at a team gateway, as its last answer said.
    pub(super) seat: std::sync::Mutex<Option<crate::seat::Seat>>,
    /// The latest requests sent, for an account of what a command asked (`calls_since`).
    pub(super) calls: crate::calls::Log,
    /// Some answer came in this session (so `seat` tells whether the server is a gateway).
    pub(super) answered: std::sync::atomic::AtomicBool,
}

/// What the dashboard learnt of one eSIM.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    Esim(Box<Esim>),
    /// This account has no such eSIM.
    Absent,
    /// The server has no lookup and the eSIM was not near where the index last saw it (or no
    /// index had it): only reading the rest of the list can tell. What was read.
    Unknown(super::Searched),
}

/// The answer to a lookup by ICCID.
#[derive(Debug)]
pub enum Lookup {
    /// The current profile, and any earlier ones of the same ICCID (newest first).
    Found(Box<Esim>, Vec<Esim>),
    /// The server looked and this account has no such eSIM.
    Absent,
    /// The server ignores the lookup; the page it sent instead, if a request was made (page 1
    /// of the inventory, 100 a page), so that reading the list can start from it.
    Unsupported(Option<EsimPage>),
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.inner.base.as_str())
            .finish_non_exhaustive()
    }
}

/// A response that came back, before it is read.
pub(super) struct Answer {
    pub(super) endpoint: Endpoint,
    pub(super) status: u16,
    pub(super) body: Vec<u8>,
    /// The server sent its stored answer to an earlier request with the same idempotency key.
    pub(super) replayed: bool,
}

pub(super) const KEY_NOT_SEEN: u8 = 0;
pub(super) const KEY_NOT_ECHOED: u8 = 1;
pub(super) const KEY_ECHOED: u8 = 2;

/// What a write carries besides its body.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Write<'a> {
    /// Its idempotency key.
    pub key: Option<&'a str>,
    /// The user confirmed the same payment again, minutes after the last (`--again`): a team
    /// gateway, which keeps the rule against repeats for every agent at once, asks for that.
    pub confirmed_repeat: bool,
    /// The request kept at a team gateway that this payment pays (`requests::REQUEST_HEADER`).
    pub request: Option<&'a str>,
}

/// The header a team gateway reads as that confirmation.
pub(super) const CONFIRM_REPEAT: &str = "x-confirm-repeat";

/// The header of docs/api-contract.md's idempotency keys, sent and echoed.
pub(crate) const IDEMPOTENCY_KEY: &str = "idempotency-key";

impl Client {
    pub fn new(base: BaseUrl, credentials: &Credentials, opts: ClientOptions) -> Result<Self, ApiError> {
        let auth_headers = credentials.headers().map_err(ApiError::Setup)?;
        let (tls, roots) =
            super::tls::client_config(opts.extra_roots.clone()).map_err(|e| ApiError::Setup(e.to_string()))?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .connect_timeout(opts.connect_timeout)
            .timeout(opts.request_timeout)
            .user_agent(concat!("esimdash/", env!("CARGO_PKG_VERSION")))
            // Redirects are followed here, by `follow`, never by reqwest: its policy would carry
            // our credential headers (and a payment's body) to whatever host a server names.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ApiError::Setup(e.to_string()))?;
        let who = crate::audit::Who {
            profile: opts.audit.as_ref().map_or_else(String::new, |t| t.profile.clone()),
            api_host: base.host(),
            access_code: credentials.access_code().unwrap_or_default().to_string(),
            account: crate::audit::account_of(&credentials.account(), opts.account_scope.as_deref()),
            user: crate::audit::local_user(),
        };
        // The key's budget is one for every process of the account that keeps a state folder
        // (the trail's); a session without one (tests) paces alone.
        let pacer = match &opts.audit {
            Some(trail) => {
                let log = crate::shared_log::path_for(&trail.path, &who.account);
                Pacer::shared(opts.rate_limit, opts.rate_window, &log)
            }
            None => Pacer::new(opts.rate_limit, opts.rate_window),
        };
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                roots,
                base,
                auth_headers,
                secret: credentials.secret().clone(),
                pacer,
                opts,
                no_iccid_lookup: AtomicBool::new(false),
                key_echoed: AtomicU8::new(KEY_NOT_SEEN),
                who,
                echo_on_record: std::sync::OnceLock::new(),
                listener: std::sync::Mutex::new(None),
                esims_read: std::sync::Mutex::new(None),
                held_lock: std::sync::Mutex::new(None),
                in_progress: std::sync::Mutex::default(),
                seat: std::sync::Mutex::default(),
                answered: std::sync::atomic::AtomicBool::new(false),
                calls: crate::calls::Log::default(),
            }),
        })
    }

    pub fn base_url(&self) -> &BaseUrl {
        &self.inner.base
    }

    /// Whether this client read the system's root certificates (only once an https server's
    /// certificate was to be verified).
    pub fn read_system_roots(&self) -> bool {
        self.inner.roots.loaded()
    }

    /// How long one request may take.
    pub fn request_timeout(&self) -> Duration {
        self.inner.opts.request_timeout
    }

    pub(super) fn pacer(&self) -> &Pacer {
        &self.inner.pacer
    }

    pub(super) fn options(&self) -> &ClientOptions {
        &self.inner.opts
    }

    /// Whose requests these are, as the trail and the money guards know them.
    pub fn who(&self) -> &crate::audit::Who {
        &self.inner.who
    }

    /// Sends the client's notices to `listener` from now on (a command prints them, the
    /// dashboard shows them).
    pub fn on_notice(&self, listener: super::Listener) {
        *esimdash_domain::sync::lock(&self.inner.listener) = Some(listener);
    }

    /// Hands every eSIM read from now on to `tap`, whatever asked for it: pages of the whole
    /// list with their place, other answers as records (the inventory index keeps them).
    pub fn on_esims_read(&self, tap: EsimsTap) {
        *esimdash_domain::sync::lock(&self.inner.esims_read) = Some(tap);
    }

    fn tell_esims_read(&self, read: &EsimsRead<'_>) {
        let tap = esimdash_domain::sync::lock(&self.inner.esims_read).clone();
        if let Some(tap) = tap {
            tap(read);
        }
    }

    /// A webhook at `url` signed with `secret`, its https server verified as the API's is.
    pub fn webhook(&self, url: &str, secret: secrecy::SecretString) -> Result<crate::webhook::Webhook, String> {
        crate::webhook::Webhook::new(url, secret, self.options().extra_roots.clone())
    }

    /// The key's budget: requests allowed per window, and the window.
    pub fn rate_budget(&self) -> (u32, Duration) {
        (self.options().rate_limit, self.options().rate_window)
    }

    /// How many requests the background share of the key's budget allows in `span`.
    pub fn background_requests(&self, span: Duration) -> u64 {
        self.options().background_requests(span)
    }

    /// Runs `read` as a read nobody waits for (the inventory's background read): its requests
    /// take at most `background_share` of the rate budget and never go ahead of the user's.
    pub async fn in_background<T>(&self, read: impl std::future::Future<Output = T>) -> T {
        IN_BACKGROUND.scope((), read).await
    }

    pub(super) fn notify(&self, notice: super::Notice) {
        let listener = esimdash_domain::sync::lock(&self.inner.listener).clone();
        match listener {
            Some(listener) => listener(notice),
            None => tracing::info!(?notice, "a notice nobody listens to"),
        }
    }

    pub(super) fn hold_lock(&self, lock: Option<super::lock::AccountLock>) {
        *esimdash_domain::sync::lock(&self.inner.held_lock) = lock;
    }

    pub(super) fn release_held_lock(&self) {
        self.take_held_lock();
    }

    /// Notes that the server said it was still handling the payment of `key` (409).
    pub(super) fn note_in_progress(&self, key: &str) {
        esimdash_domain::sync::lock(&self.inner.in_progress).insert(key.to_string());
    }

    /// Whether the server said it was still handling the payment of `key`.
    pub(super) fn is_in_progress(&self, key: &str) -> bool {
        esimdash_domain::sync::lock(&self.inner.in_progress).contains(key)
    }

    pub(super) fn take_held_lock(&self) -> Option<super::lock::AccountLock> {
        esimdash_domain::sync::lock(&self.inner.held_lock).take()
    }

    /// What the last answer to a keyed request said of the key in this session, if one came.
    pub(super) fn seen_key_echo(&self) -> Option<bool> {
        match self.inner.key_echoed.load(Ordering::Relaxed) {
            KEY_NOT_SEEN => None,
            seen => Some(seen == KEY_ECHOED),
        }
    }

    /// What `read` (the audit trail) says of an earlier echo, read at most once a session.
    pub(super) fn echo_on_record(&self, read: impl FnOnce() -> bool) -> bool {
        *self.inner.echo_on_record.get_or_init(read)
    }

    /// The whole catalog, with the reseller's pricing.
    pub async fn plans(&self) -> Result<Vec<Plan>, ApiError> {
        let answer = self.get(PLANS, &[]).await?;
        answer.parse_with(model::parse_plan_list, &self.inner.secret)
    }

    /// One plan by slug, priced for this reseller.
    pub async fn plan(&self, slug: &str) -> Result<Plan, ApiError> {
        let answer = self.get(PLANS, &[("slug", slug)]).await?;
        answer
            .json::<crate::envelope::PlanEnvelope>(&self.inner.secret)
            .map(|e| e.data)
    }

    /// The top-up plans offered for one eSIM; empty when it cannot be topped up.
    pub async fn topup_plans(&self, iccid: &Iccid) -> Result<Vec<Plan>, ApiError> {
        let answer = self.get(PLANS, &[("type", "topup"), ("iccid", iccid.as_str())]).await?;
        answer.parse_with(model::parse_plan_list, &self.inner.secret)
    }

    /// A page of orders. With `iccid`, only that eSIM's: an answer of a server without the
    /// filter (another eSIM's top-up, or more than one order that made an eSIM) is not shown;
    /// the order that made the eSIM is then found by its number instead.
    pub async fn orders(&self, query: &OrderQuery) -> Result<OrderPage, ApiError> {
        let filters = [
            ("status", query.status.param()),
            ("q", query.q.as_deref()),
            ("iccid", query.iccid.as_ref().map(Iccid::as_str)),
        ];
        let page: OrderPage = self.list_page(ORDERS, (query.page, query.page_size), &filters).await?;
        match query.iccid.as_ref() {
            Some(iccid) if !filtered_by(&page, iccid) => self.orders_that_made(iccid, query).await,
            _ => Ok(page),
        }
    }

    /// The order that made an eSIM, by the number on its record (its top-ups cannot be told
    /// without the server's filter).
    async fn orders_that_made(&self, iccid: &Iccid, query: &OrderQuery) -> Result<OrderPage, ApiError> {
        let Some(esim) = self.find_esim(iccid).await? else {
            return Ok(OrderPage::default());
        };
        let number = esim.record.provider_order_no.to_string();
        let by_number = OrderQuery {
            page: Some(1),
            page_size: Some(100),
            status: query.status.clone(),
            q: Some(number.clone()),
            iccid: None,
        };
        let filters = [("status", by_number.status.param()), ("q", by_number.q.as_deref())];
        let mut page: OrderPage = self
            .list_page(ORDERS, (by_number.page, by_number.page_size), &filters)
            .await?;
        page.orders.retain(|o| o.record.provider_order_no == number.as_str());
        page.total = page.orders.len() as u64;
        page.page = 1;
        Ok(page)
    }

    pub async fn esims(&self, query: &EsimQuery) -> Result<EsimPage, ApiError> {
        let answer = self.esim_page(query).await?;
        let whole_list = query.status == StatusFilter::All && query.iccid.is_none();
        let place = match (whole_list, query.page, query.page_size) {
            (true, Some(page), Some(size)) => Some(PagePlace::of(&answer, page, size)),
            _ => None,
        };
        self.tell_esims_read(&EsimsRead {
            esims: &answer.esims,
            place,
            answered: false,
        });
        Ok(answer)
    }

    /// A page of the eSIM list, told to no tap (its callers tell it).
    async fn esim_page(&self, query: &EsimQuery) -> Result<EsimPage, ApiError> {
        let filters = [
            ("status", query.status.param()),
            ("iccid", query.iccid.as_ref().map(Iccid::as_str)),
        ];
        self.list_page(ESIMS, (query.page, query.page_size), &filters).await
    }

    /// Page `page` of the whole list read for an index, `size` a page, within the background
    /// share of the budget: it comes with its place, and the tap hears of it as `answered`.
    pub async fn index_page(&self, page: u64, size: u64) -> Result<(EsimPage, PagePlace), ApiError> {
        let query = EsimQuery {
            page: Some(page),
            page_size: Some(size),
            ..EsimQuery::default()
        };
        let answer = self.in_background(self.esim_page(&query)).await?;
        let place = PagePlace::of(&answer, page, size);
        self.tell_esims_read(&EsimsRead {
            esims: &answer.esims,
            place: Some(place),
            answered: true,
        });
        Ok((answer, place))
    }

    /// A page of a list: `page` and `pageSize` (page, size), then the filters that are set.
    async fn list_page<T: DeserializeOwned>(
        &self,
        endpoint: Endpoint,
        (page, size): (Option<u64>, Option<u64>),
        filters: &[(&str, Option<&str>)],
    ) -> Result<T, ApiError> {
        let (page, size) = (page.map(|p| p.to_string()), size.map(|s| s.to_string()));
        let mut params = vec![("page", page.as_deref()), ("pageSize", size.as_deref())];
        params.extend_from_slice(filters);
        let answer = self.get(endpoint, &present(&params)).await?;
        answer.json(&self.inner.secret)
    }

    pub async fn profile(&self) -> Result<Profile, ApiError> {
        let answer = self.get(PROFILE, &[]).await?;
        answer
            .json::<crate::envelope::ProfileEnvelope>(&self.inner.secret)
            .map(|e| e.profile)
    }

    /// The wallet balance in USD: from the balance route, or from the profile where a server
    /// has no such route (docs/api-contract.md allows both).
    pub async fn balance(&self) -> Result<Decimal, ApiError> {
        let (endpoint, balance) = match self.get(BALANCE, &[]).await {
            Ok(answer) => (
                BALANCE,
                answer
                    .json::<crate::envelope::BalanceEnvelope>(&self.inner.secret)?
                    .balance_usd,
            ),
            Err(ApiError::Api { status: 404, .. }) => (PROFILE, self.profile().await?.balance_usd),
            Err(e) => return Err(e),
        };
        balance.ok_or_else(|| ApiError::Decode {
            endpoint,
            status: 200,
            detail: "the answer has no balanceUsd".to_string(),
            excerpt: String::new(),
        })
    }

    /// The newest orders of a plan (top-up or not), for one eSIM where `iccid` is given: taken
    /// before a request that moves money, so that an order appearing after an unknown outcome
    /// can be told apart from older ones. The same query before and after, so that a server
    /// that ignores `iccid` answers both alike.
    pub async fn recent_orders_for(&self, slug: &str, iccid: Option<&Iccid>) -> Result<Vec<Order>, ApiError> {
        let query = OrderQuery {
            page: Some(1),
            page_size: Some(SCAN_PAGE_SIZE),
            status: StatusFilter::All,
            q: Some(slug.to_string()),
            iccid: iccid.cloned(),
        };
        Ok(self
            .orders(&query)
            .await?
            .orders
            .into_iter()
            .filter(|o| o.record.slug == slug)
            .collect())
    }

    /// Asks the server for one eSIM by ICCID (docs/api-contract.md's lookup), unless this server was
    /// already seen to ignore it. An answer holding any other eSIM means the server ignored the
    /// parameter: that is remembered for the session and the caller gets the page it sent
    /// (page 1 of the whole inventory, 100 a page), never another eSIM as the one asked for.
    pub async fn lookup_esim(&self, iccid: &Iccid) -> Result<Lookup, ApiError> {
        if self.inner.no_iccid_lookup.load(Ordering::Relaxed) {
            return Ok(Lookup::Unsupported(None));
        }
        let query = EsimQuery {
            page: Some(1),
            page_size: Some(SCAN_PAGE_SIZE),
            status: StatusFilter::All,
            iccid: Some(iccid.clone()),
        };
        let page = self.esims(&query).await?;
        // Several profiles of one ICCID (a provider reissues ICCIDs) are one eSIM's history:
        // the current one is the newest `esimTranNo`.
        let whole = page.total == page.esims.len() as u64;
        if whole
            && page
                .esims
                .iter()
                .all(|e| e.raw_order_json.iccid.as_str() == iccid.as_str())
        {
            let mut profiles = page.esims;
            profiles.sort_by_key(|e| std::cmp::Reverse(tran_no_order(&e.raw_order_json.esim_tran_no)));
            let mut profiles = profiles.into_iter();
            return Ok(match profiles.next() {
                Some(current) => Lookup::Found(Box::new(current), profiles.collect()),
                None => Lookup::Absent,
            });
        }
        tracing::info!("the server ignores iccid on the eSIM list; reading the list instead");
        self.inner.no_iccid_lookup.store(true, Ordering::Relaxed);
        // What came is page 1 of the whole list.
        self.tell_esims_read(&EsimsRead {
            esims: &page.esims,
            place: Some(PagePlace::of(&page, 1, SCAN_PAGE_SIZE)),
            answered: false,
        });
        Ok(Lookup::Unsupported(Some(page)))
    }

    /// One eSIM's current record: by the lookup, or where the server has none, from the pages
    /// near its place in the list, where an index saw it (`seen`): the page its place names,
    /// then the pages either side (`Reach::Near`). The place is counted from the oldest eSIM,
    /// so the list's total in any answer tells the page it is on now. `Absent` only when the
    /// server's lookup says so or every page was read (a list of three pages or fewer);
    /// `Unknown` with what was read otherwise.
    pub async fn find_esim_at(&self, iccid: &Iccid, seen: Option<Whereabouts>) -> Result<Found, ApiError> {
        Ok(self.find_profiles_at(iccid, seen).await?.0)
    }

    /// As `find_esim_at`, with the earlier profiles of a reissued ICCID that the lookup brought
    /// (newest first; none where the record was found in the pages).
    pub async fn find_profiles_at(
        &self,
        iccid: &Iccid,
        seen: Option<Whereabouts>,
    ) -> Result<(Found, Vec<Esim>), ApiError> {
        let mut first = match self.lookup_esim(iccid).await? {
            Lookup::Found(esim, earlier) => return Ok((Found::Esim(esim), earlier)),
            Lookup::Absent => return Ok((Found::Absent, Vec::new())),
            Lookup::Unsupported(first) => first,
        };
        let found = match self.sweep(iccid, seen, &mut first, &super::Reach::Near).await? {
            super::Sweep::Found(esim) => Found::Esim(esim),
            super::Sweep::Missed(searched) if searched.proves_absence() => Found::Absent,
            super::Sweep::Missed(searched) => Found::Unknown(searched),
        };
        Ok((found, Vec::new()))
    }

    /// Page `page` of the whole inventory, 100 a page; `first` is page 1 when already at hand
    /// (the answer of a server that ignored a lookup).
    pub async fn inventory_page(&self, page: u64, first: &mut Option<EsimPage>) -> Result<EsimPage, ApiError> {
        if page == 1
            && let Some(answer) = first.take()
        {
            return Ok(answer);
        }
        let query = EsimQuery {
            page: Some(page),
            page_size: Some(SCAN_PAGE_SIZE),
            ..EsimQuery::default()
        };
        self.esims(&query).await
    }

    /// Until when a request is held back by the client's own pacing (not a 429), if one is.
    pub fn paced_until(&self) -> Option<std::time::Instant> {
        self.inner.pacer.waiting_until(Instant::now()).map(Instant::into_std)
    }

    /// Until when requests are held back by the client's own pacing, as it changes.
    pub fn pacing(&self) -> tokio::sync::watch::Receiver<Option<std::time::Instant>> {
        self.inner.pacer.watch()
    }

    /// Whether this server was seen to ignore the lookup by ICCID.
    pub fn lacks_iccid_lookup(&self) -> bool {
        self.inner.no_iccid_lookup.load(Ordering::Relaxed)
    }

    /// Finds one eSIM by ICCID: by the lookup, or where the server has none, reading the
    /// inventory a page at a time; `None` when the reseller has no such eSIM.
    pub async fn find_esim(&self, iccid: &Iccid) -> Result<Option<Esim>, ApiError> {
        Ok(self.find_profiles(iccid).await?.into_iter().next())
    }

    /// Every profile of an ICCID, the current one (newest `esimTranNo`) first: more than one
    /// where the provider reissued it. Read from a list without the lookup, only the first
    /// found (the newest order's) is given: finding the rest would read the whole inventory.
    pub async fn find_profiles(&self, iccid: &Iccid) -> Result<Vec<Esim>, ApiError> {
        let mut page = 1;
        let mut found = match self.lookup_esim(iccid).await? {
            Lookup::Found(esim, earlier) => return Ok(std::iter::once(*esim).chain(earlier).collect()),
            Lookup::Absent => return Ok(Vec::new()),
            Lookup::Unsupported(first) => first,
        };
        loop {
            let answer = self.inventory_page(page, &mut found).await?;
            if let Some(esim) = answer
                .esims
                .iter()
                .find(|e| e.raw_order_json.iccid.as_str() == iccid.as_str())
            {
                return Ok(vec![esim.clone()]);
            }
            if answer.esims.is_empty() || page * SCAN_PAGE_SIZE >= answer.total {
                return Ok(Vec::new());
            }
            page += 1;
        }
    }

    /// The activation code of an eSIM: `rawOrderJson.ac` when present; otherwise the QR image
    /// at `qrCodeUrl`, downloaded (timeout, size cap, no credentials: it is not an API address)
    /// and decoded. The error says why, in a sentence.
    pub async fn activation_code(&self, esim: &Esim) -> Result<String, String> {
        let raw = &esim.raw_order_json;
        if let Some(ac) = raw.ac.as_deref().map(str::trim).filter(|ac| !ac.is_empty()) {
            return Ok(ac.to_string());
        }
        let url = raw.qr_code_url.trim();
        if url.is_empty() {
            return Err("this eSIM has neither an activation code nor a QR image".to_string());
        }
        let bytes = self.download_qr_image(url).await?;
        esimdash_qr::activation_code_from_png(&bytes)
    }
}

/// Whether a page asked for one eSIM's orders holds only such orders: its top-ups name it, and
/// at most one order made it.
fn filtered_by(page: &OrderPage, iccid: &Iccid) -> bool {
    let made = page.orders.iter().filter(|o| o.iccid.is_empty()).count();
    made <= 1
        && page
            .orders
            .iter()
            .all(|o| o.iccid.is_empty() || o.iccid.as_str() == iccid.as_str())
}

/// How `esimTranNo`s sort: by their digits as a number (`T20000000810` after `T10000000022`),
/// a value without digits first.
pub fn tran_no_order(tran_no: &str) -> (usize, String) {
    let digits: String = tran_no.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_start_matches('0').to_string();
    (digits.len(), digits)
}

fn present<'a>(params: &[(&'a str, Option<&'a str>)]) -> Vec<(&'a str, &'a str)> {
    params.iter().filter_map(|(k, v)| v.map(|v| (*k, v))).collect()
}
