//! How the client talks HTTP: the URL of a route, a GET retried within bounds, a write sent
//! once, each attempt paced, its redirects followed only within the rules, its body read within
//! a cap, its status classified, and what the server quotes scrubbed of the secret.

use super::client::*;
use super::error::{ApiError, Endpoint, RedirectRefused};
use esimdash_domain::text;
use reqwest::header::{CONTENT_TYPE, HeaderMap, LOCATION, RETRY_AFTER};
use reqwest::{Method, StatusCode, Url};
use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;

impl Client {
    pub(super) async fn download_qr_image(&self, url: &str) -> Result<Vec<u8>, String> {
        let mut url = Url::parse(url).map_err(|_| "the QR image address is not a URL".to_string())?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err("the QR image address is not http(s)".to_string());
        }
        let fail = |what: String| format!("the QR image could not be downloaded: {what}");
        let timeout = QR_IMAGE_TIMEOUT.min(self.inner.opts.request_timeout);
        let late = || fail(format!("no answer within {} s", super::error::whole_seconds(timeout)));
        let deadline = Instant::now() + timeout;
        let mut hops = 0;
        let response = loop {
            let response = tokio::time::timeout_at(deadline, self.inner.http.get(url.clone()).send())
                .await
                .map_err(|_| late())?
                .map_err(|e| if e.is_timeout() { late() } else { fail(error_chain(&e)) })?;
            // The same rule as for the API (docs/api-contract.md, "Transport"): within one origin only.
            match redirect_target(&response, &url) {
                None => break response,
                Some(next) => {
                    url = follow(&url, next, false, hops)
                        .map_err(|(to, _)| fail(format!("its address redirected to {to}, which is not followed")))?;
                    hops += 1;
                }
            }
        };
        if !response.status().is_success() {
            return Err(fail(format!("HTTP {}", response.status().as_u16())));
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        let read = tokio::time::timeout(remaining, read_capped(response, MAX_QR_IMAGE_BYTES));
        read.await.map_err(|_| late())?.map_err(|e| match e {
            BodyError::TooLarge => fail(format!("it is larger than {} MiB", MAX_QR_IMAGE_BYTES / (1024 * 1024))),
            BodyError::Transport(e) if e.is_timeout() => late(),
            BodyError::Transport(e) => fail(error_chain(&e)),
        })
    }

    pub(super) fn url(&self, endpoint: Endpoint, query: &[(&str, &str)]) -> Url {
        let mut url = self.inner.base.join(endpoint.path);
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        url
    }

    pub(crate) async fn get(&self, endpoint: Endpoint, query: &[(&str, &str)]) -> Result<Answer, ApiError> {
        let url = self.url(endpoint, query);
        let opts = &self.inner.opts;
        let mut attempt = 0;
        loop {
            let err = match self
                .send_once(Method::GET, endpoint, url.clone(), None, Write::default())
                .await
            {
                Ok(answer) => return Ok(answer),
                Err(e) => e,
            };
            let wait = match &err {
                ApiError::RateLimited { retry_after, .. } => Some(*retry_after).filter(|w| *w <= opts.max_retry_wait),
                ApiError::Api { status, .. } if *status >= 500 => Some(opts.backoff * 2u32.pow(attempt)),
                ApiError::Network { .. } => Some(opts.backoff * 2u32.pow(attempt)),
                _ => None,
            };
            match wait {
                Some(wait) if attempt < opts.retries => {
                    tracing::warn!(%endpoint, attempt, wait_ms = wait.as_millis() as u64, kind = err.kind(), "retrying");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                _ => return Err(err),
            }
        }
    }

    /// Sends a write once (a JSON body, its key and confirmation where given); never resent here.
    pub(super) async fn send_write(
        &self,
        method: Method,
        endpoint: Endpoint,
        body: Vec<u8>,
        write: Write<'_>,
    ) -> Result<Answer, ApiError> {
        self.send_once(method, endpoint, self.url(endpoint, &[]), Some(body), write)
            .await
    }

    /// One attempt: pace, send, read the body (capped), classify the status.
    pub(super) async fn send_once(
        &self,
        method: Method,
        endpoint: Endpoint,
        url: Url,
        body: Option<Vec<u8>>,
        write: Write<'_>,
    ) -> Result<Answer, ApiError> {
        let inner = &self.inner;
        let writes = method != Method::GET;
        let started = Instant::now();
        let key = write.key;
        let response = self.send_within_origin(method, endpoint, url, body, write).await?;
        let status = response.status().as_u16();
        let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok());
        if key.is_some() {
            // As the last answer says: a server can stop honouring keys.
            let echoed = if header(IDEMPOTENCY_KEY) == key {
                KEY_ECHOED
            } else {
                KEY_NOT_ECHOED
            };
            inner.key_echoed.store(echoed, Ordering::Relaxed);
        }
        let replayed = header("idempotent-replayed").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let retry_after = retry_after(response.headers());
        let body = self.read_answer(endpoint, status, response, writes).await?;
        tracing::debug!(%endpoint, status, bytes = body.len(), ms = started.elapsed().as_millis() as u64, "answer");
        let answer = Answer {
            endpoint,
            status,
            body,
            replayed,
        };
        if (200..300).contains(&status) {
            return Ok(answer);
        }
        let error = answer.into_error(retry_after, &inner.secret);
        if let ApiError::RateLimited { retry_after, .. } = &error {
            inner.pacer.refused_until(Instant::now() + *retry_after);
        }
        Err(error)
    }

    /// The body of an answer, capped.
    pub(crate) async fn read_answer(
        &self,
        endpoint: Endpoint,
        status: u16,
        response: reqwest::Response,
        writes: bool,
    ) -> Result<Vec<u8>, ApiError> {
        read_capped(response, MAX_BODY).await.map_err(|e| match e {
            BodyError::Transport(e) => self.transport_error(endpoint, &e, writes),
            BodyError::TooLarge => ApiError::Decode {
                endpoint,
                status,
                detail: format!("the body is larger than {} MiB", MAX_BODY / (1024 * 1024)),
                excerpt: String::new(),
            },
        })
    }

    /// The key's secret, for scrubbing it from what is passed on.
    pub(crate) fn secret(&self) -> &SecretString {
        &self.inner.secret
    }

    /// Sends the request within the pace and returns the response that is not a redirect. A
    /// redirect is followed only for a read within the API's origin; any other is an error
    /// naming both places, and nothing is sent to the other one.
    pub(crate) async fn send_within_origin(
        &self,
        method: Method,
        endpoint: Endpoint,
        mut url: Url,
        mut body: Option<Vec<u8>>,
        write: Write<'_>,
    ) -> Result<reqwest::Response, ApiError> {
        let inner = &self.inner;
        let writes = method != Method::GET;
        let mut hops = 0;
        loop {
            if IN_BACKGROUND.try_with(|_| ()).is_ok() {
                inner.pacer.acquire_background(inner.opts.background_share).await;
            } else {
                // Another process of the key met the server's 429: as if this one had.
                let left = inner.pacer.refused_left(Instant::now());
                if let Some(retry_after) = left.filter(|left| *left > inner.opts.max_retry_wait) {
                    return Err(ApiError::RateLimited { endpoint, retry_after });
                }
                inner
                    .pacer
                    .acquire(|wait| self.notify(super::Notice::WaitingForBudget(wait)))
                    .await;
            }
            let mut request = inner
                .http
                .request(method.clone(), url.clone())
                .headers(inner.auth_headers.clone());
            if let Some(body) = body.take() {
                request = request.header(CONTENT_TYPE, "application/json").body(body);
            }
            if let Some(key) = write.key {
                request = request.header(IDEMPOTENCY_KEY, key);
            }
            if write.confirmed_repeat {
                request = request.header(CONFIRM_REPEAT, "true");
            }
            if let Some(id) = write.request {
                request = request.header(crate::requests::REQUEST_HEADER, id);
            }
            let sent_at = chrono::Utc::now();
            let response = request.send().await.map_err(|e| {
                let error = self.transport_error(endpoint, &e, writes);
                self.note_call(sent_at, method.as_str(), &url, format!("no answer: {error}"));
                error
            })?;
            self.note_call(sent_at, method.as_str(), &url, response.status().as_u16().to_string());
            self.observe_rate_headers(response.headers());
            let Some(next) = redirect_target(&response, &url) else {
                return Ok(response);
            };
            match follow(&url, next, writes, hops) {
                Ok(next) => {
                    let to = scrub(&shown(&next), &inner.secret);
                    tracing::info!(%endpoint, %to, "following a redirect within the API's origin");
                    url = next;
                    hops += 1;
                }
                Err((to, refused)) => {
                    // A redirect's address is the server's text: it may carry our secret back.
                    let to = scrub(&to, &inner.secret);
                    tracing::warn!(%endpoint, %to, ?refused, "a redirect was not followed");
                    return Err(ApiError::Redirected {
                        endpoint,
                        from: origin_of(&url),
                        to,
                        refused,
                        status: response.status().as_u16(),
                    });
                }
            }
        }
    }

    /// The agent this key is at a team gateway, as its last answer said; `None` at the API
    /// itself.
    pub fn seat(&self) -> Option<crate::seat::Seat> {
        esimdash_domain::sync::lock(&self.inner.seat).clone()
    }

    /// A request sent, kept among the latest (`calls_since`): what was asked, when, and the
    /// answer's status (or why none came); the URL whole (its query names what was asked), the
    /// secret scrubbed from it.
    fn note_call(&self, at: chrono::DateTime<chrono::Utc>, method: &str, url: &Url, answer: String) {
        let call = crate::calls::Call {
            at,
            request: format!("{method} {}", scrub(&text::sanitize(url.as_str()), &self.inner.secret)),
            answer,
        };
        self.inner.calls.note(call);
    }

    /// How many requests this client has sent: a mark for `calls_since`.
    pub fn calls_made(&self) -> u64 {
        self.inner.calls.made()
    }

    /// The requests sent since `mark` (`calls_made`), oldest first: the latest ones only, and
    /// said so when older ones were let go.
    pub fn calls_since(&self, mark: u64) -> crate::calls::Calls {
        self.inner.calls.since(mark)
    }

    /// Whether the server is a team gateway, as the answers of this session tell (its seat
    /// header); `None` before any answer came.
    pub fn at_gateway(&self) -> Option<bool> {
        self.inner
            .answered
            .load(std::sync::atomic::Ordering::Relaxed)
            .then(|| self.seat().is_some())
    }

    pub(super) fn observe_rate_headers(&self, headers: &HeaderMap) {
        self.inner.answered.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(seat) = headers
            .get(crate::seat::SEAT_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(crate::seat::Seat::parse)
        {
            *esimdash_domain::sync::lock(&self.inner.seat) = Some(seat);
        }
        let number = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<u64>().ok();
        if let Some(limit) = number("x-ratelimit-limit") {
            self.inner.pacer.observe_limit(u32::try_from(limit).unwrap_or(u32::MAX));
        }
        if number("x-ratelimit-remaining") == Some(0) {
            let reset = number("x-ratelimit-reset").unwrap_or(1).clamp(1, 3600);
            self.inner
                .pacer
                .pause_until(Instant::now() + Duration::from_secs(reset));
        }
    }

    pub(super) fn transport_error(&self, endpoint: Endpoint, e: &reqwest::Error, writes: bool) -> ApiError {
        if e.is_timeout() {
            return ApiError::Timeout {
                endpoint,
                after: self.inner.opts.request_timeout,
                outcome_unknown: writes,
            };
        }
        // A refused connection never carried the request; anything later may have.
        let outcome_unknown = writes && !e.is_connect();
        let mut detail = error_chain(e);
        if detail.contains("invalid peer certificate") {
            detail.push_str(
                " (the server's certificate is not trusted; if a private authority issued it, trust that with --ca-file or ca_file)",
            );
        }
        ApiError::Network {
            endpoint,
            host: self.inner.base.host(),
            detail,
            outcome_unknown,
        }
    }
}

/// Where a redirect answer points: `None` when the answer is not a redirect; `Err` with the
/// header as text when its `Location` is no URL.
pub(super) fn redirect_target(response: &reqwest::Response, current: &Url) -> Option<Result<Url, String>> {
    let status = response.status();
    if !status.is_redirection() || status == StatusCode::NOT_MODIFIED {
        return None;
    }
    let location = response.headers().get(LOCATION)?;
    let text = String::from_utf8_lossy(location.as_bytes());
    Some(
        current
            .join(text.trim())
            .map_err(|_| text::sanitize(&text).into_owned()),
    )
}

/// The next address of a redirect, when it may be followed: for a read, within the same origin
/// (scheme, host and port: so never from https to http), a few times in a row. Otherwise where
/// it pointed (as shown to people) and why it is refused.
pub(super) fn follow(
    current: &Url,
    next: Result<Url, String>,
    writes: bool,
    hops: u32,
) -> Result<Url, (String, RedirectRefused)> {
    let next = next.map_err(|text| (text, RedirectRefused::OtherOrigin))?;
    let refused = if writes {
        RedirectRefused::Write
    } else if next.origin() != current.origin() {
        RedirectRefused::OtherOrigin
    } else if hops >= MAX_REDIRECTS {
        RedirectRefused::TooMany
    } else {
        return Ok(next);
    };
    Err((shown(&next), refused))
}

/// "https://host:port", as messages name a server.
pub(super) fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// An address as messages show it: origin and path, never the query (it may hold search text).
pub(super) fn shown(url: &Url) -> String {
    text::sanitize(&format!("{}{}", origin_of(url), url.path())).into_owned()
}

/// `Retry-After` in seconds (what docs/api-contract.md sends); an HTTP date or nonsense falls back to
/// `X-RateLimit-Reset`, then to one second.
pub(crate) fn retry_after(headers: &HeaderMap) -> Duration {
    let seconds = |name| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let secs = seconds(RETRY_AFTER.as_str())
        .or_else(|| seconds("x-ratelimit-reset"))
        .unwrap_or(1);
    Duration::from_secs(secs.clamp(1, 3600))
}

/// The causes of a transport error joined up: "error sending request: connection refused".
pub(super) fn error_chain(e: &reqwest::Error) -> String {
    let mut parts = vec![e.without_url_ref().to_string()];
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    text::sanitize(&parts.join(": ")).into_owned()
}

pub(super) trait WithoutUrl {
    fn without_url_ref(&self) -> String;
}

impl WithoutUrl for reqwest::Error {
    fn without_url_ref(&self) -> String {
        // The URL is in the endpoint already; repeating it (with its query) only adds noise.
        let text = self.to_string();
        match self.url() {
            Some(url) => text.replace(&format!(" for url ({url})"), ""),
            None => text,
        }
    }
}

pub(super) enum BodyError {
    Transport(reqwest::Error),
    TooLarge,
}

async fn read_capped(mut response: reqwest::Response, cap: usize) -> Result<Vec<u8>, BodyError> {
    if response.content_length().is_some_and(|len| len > cap as u64) {
        return Err(BodyError::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Transport)? {
        if body.len() + chunk.len() > cap {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Server text as an error may quote it: sanitised, cut short, and with our secret scrubbed
/// in case a server or proxy echoes request headers back.
pub(super) fn quote(body: &[u8], secret: &SecretString) -> String {
    let scrubbed = scrub(&String::from_utf8_lossy(body), secret);
    text::excerpt(scrubbed.trim(), EXCERPT_CHARS)
}

/// Server text with our secret replaced, however it was encoded (`scrub`).
pub(super) fn scrub(text: &str, secret: &SecretString) -> String {
    crate::scrub::scrub_text(text, secret.expose_secret())
}

impl Answer {
    pub(super) fn decode<T: DeserializeOwned>(&self, client: &Client) -> Result<T, ApiError> {
        self.json(&client.inner.secret)
    }

    pub(crate) fn json<T: DeserializeOwned>(&self, secret: &SecretString) -> Result<T, ApiError> {
        // The body checked as UTF-8 in one pass, then read as text: read as bytes, every string
        // in it was checked on its own (a twentieth of a whole list's read).
        self.parse_with(
            |body| {
                let text = std::str::from_utf8(body).map_err(|e| format!("the answer is not UTF-8 text: {e}"))?;
                serde_json::from_str(text).map_err(|e| e.to_string())
            },
            secret,
        )
    }

    pub(super) fn parse_with<T>(
        &self,
        parse: impl FnOnce(&[u8]) -> Result<T, String>,
        secret: &SecretString,
    ) -> Result<T, ApiError> {
        parse(&self.body).map_err(|detail| ApiError::Decode {
            endpoint: self.endpoint,
            status: self.status,
            detail: quote(detail.as_bytes(), secret),
            excerpt: quote(&self.body, secret),
        })
    }

    /// A non-2xx answer as the error a screen shows; the server's `error` message when it has one.
    pub(super) fn into_error(self, retry_after: Duration, secret: &SecretString) -> ApiError {
        #[derive(serde::Deserialize)]
        struct ErrorBody {
            error: String,
        }
        let message = match serde_json::from_slice::<ErrorBody>(&self.body) {
            Ok(b) => quote(b.error.as_bytes(), secret),
            Err(_) if self.body.is_empty() => "no message".to_string(),
            Err(_) => quote(&self.body, secret),
        };
        let endpoint = self.endpoint;
        match self.status {
            401 => {
                let lower = message.to_ascii_lowercase();
                if lower.contains("revoked") || lower.contains("expired") {
                    ApiError::Revoked { endpoint }
                } else {
                    ApiError::Unauthorized { endpoint, message }
                }
            }
            429 => ApiError::RateLimited { endpoint, retry_after },
            // A team gateway's rule against repeats across its agents: the same payment made
            // minutes ago by another seat; confirmed, it is sent again (`Payment::again`).
            428 => ApiError::Repeat {
                endpoint,
                earlier: message,
            },
            status => ApiError::Api {
                endpoint,
                status,
                message,
            },
        }
    }
}
