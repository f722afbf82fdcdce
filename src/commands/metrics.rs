//! `esimdash metrics`: the account's figures in the Prometheus text format, printed once (for
//! node_exporter's textfile collector) or served at `/metrics` (`--listen ADDR`). Every figure
//! is exact, never from whatever part of an index was read: eSIMs and orders by status from the
//! list's `total` for each status (a page of one each), eSIMs needing attention from the usable
//! eSIMs read whole (as `check attention`: one request per 100 of them). Served, the answer is
//! kept for `--every` seconds, so frequent scrapes do not spend the key's budget; the server is
//! bounded (`super::listen`), so that stalled clients cannot keep the scrapes out.

use crate::commands::CommandError;
use crate::commands::output::out;
use esimdash_api::model::{EsimQuery, OrderQuery};
use esimdash_api::{ApiError, Client};
use esimdash_domain::prometheus::{family, label};
use esimdash_domain::status::{Status, StatusFilter};
use esimdash_front::config::Preferences;
use esimdash_inventory::kept::Kept;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the figures are read with, and what lasts from one scrape to the next.
struct Source {
    client: Client,
    index: Option<Kept>,
    prefs: Preferences,
    /// API errors by kind since this process started.
    errors: BTreeMap<&'static str, u64>,
    /// When every request of a scrape last succeeded (Unix seconds).
    last_good: Option<i64>,
    /// The last answer and when it was made.
    cached: Option<(Instant, String)>,
}

pub async fn run(
    client: &Client,
    index: Option<&Kept>,
    prefs: &Preferences,
    listen: Option<SocketAddr>,
    every: Duration,
) -> Result<(), CommandError> {
    let mut source = Source {
        client: client.clone(),
        index: index.cloned(),
        prefs: prefs.clone(),
        errors: BTreeMap::new(),
        last_good: None,
        cached: None,
    };
    let Some(addr) = listen else {
        let text = source.scrape().await;
        out!("{text}");
        // Printed all the same (the errors are in it), but not a success: `metrics > f && mv`
        // keeps the last good file, whose timestamp then tells how old it is.
        return match source.errors.values().sum::<u64>() {
            0 => Ok(()),
            n => Err(CommandError::Refused(format!(
                "{n} request(s) of the scrape failed (esimdash_up 0; see esimdash_api_errors_total)"
            ))),
        };
    };
    let source = Arc::new(tokio::sync::Mutex::new(source));
    let document = super::listen::Document::new("/metrics", "text/plain; version=0.0.4", move || {
        let source = source.clone();
        async move { source.lock().await.cached_or_scrape(every).await }
    });
    let listener = tokio::net::TcpListener::bind(addr).await?;
    crate::commands::notices::say(&format!("serving metrics at http://{}/metrics", listener.local_addr()?));
    super::listen::serve(listener, document, super::listen::Bounds::SCRAPES).await;
    Ok(())
}

impl Source {
    async fn cached_or_scrape(&mut self, every: Duration) -> String {
        if let Some((at, text)) = &self.cached
            && at.elapsed() < every
        {
            return text.clone();
        }
        let text = self.scrape().await;
        self.cached = Some((Instant::now(), text.clone()));
        text
    }

    fn count<T>(&mut self, result: Result<T, ApiError>, ok: &mut bool) -> Option<T> {
        result
            .map_err(|e| {
                *self.errors.entry(e.kind()).or_default() += 1;
                *ok = false;
            })
            .ok()
    }

    /// The figures now, as Prometheus text.
    async fn scrape(&mut self) -> String {
        let mut ok = true;
        let mut text = String::new();
        let client = self.client.clone();
        let balance = client.balance().await;
        // Nobody at the address, or the key refused: the other ten requests would fail alike.
        let hopeless = balance
            .as_ref()
            .is_err_and(|e| e.is_auth() || matches!(e, ApiError::Network { .. } | ApiError::Timeout { .. }));
        if let Some(balance) = self.count(balance, &mut ok) {
            family(&mut text, "esimdash_balance_usd", "gauge", "The wallet balance in USD.");
            let _ = writeln!(text, "esimdash_balance_usd {balance}");
        }
        if !hopeless {
            self.esims(&mut text, &mut ok).await;
            self.orders(&mut text, &mut ok).await;
        }
        if ok {
            self.last_good = Some(chrono::Utc::now().timestamp());
        }
        family(
            &mut text,
            "esimdash_up",
            "gauge",
            "1 when every request of this scrape succeeded, else 0 (the figures missing or from the saved index).",
        );
        let _ = writeln!(text, "esimdash_up {}", u8::from(ok));
        family(
            &mut text,
            "esimdash_last_good_read_timestamp_seconds",
            "gauge",
            "When every request of a scrape last succeeded (0: not yet).",
        );
        let _ = writeln!(
            text,
            "esimdash_last_good_read_timestamp_seconds {}",
            self.last_good.unwrap_or(0)
        );
        family(
            &mut text,
            "esimdash_api_errors_total",
            "counter",
            "API errors since this process started, by kind.",
        );
        for (kind, n) in &self.errors {
            let _ = writeln!(text, "esimdash_api_errors_total{{kind=\"{kind}\"}} {n}");
        }
        text
    }

    /// eSIMs by status: the list's `total` for each status filter (a page of one each), and the
    /// whole list's, so that they sum to what the API lists at the first scrape; needing
    /// attention: the usable eSIMs read whole, as `check attention` counts them.
    async fn esims(&mut self, text: &mut String, ok: &mut bool) {
        let client = self.client.clone();
        let one = |status: StatusFilter| EsimQuery {
            page: Some(1),
            page_size: Some(1),
            status,
            ..EsimQuery::default()
        };
        let Some(all) = self.count(client.esims(&one(StatusFilter::All)).await, ok) else {
            return;
        };
        let mut by_status = Vec::new();
        for status in Status::KNOWN {
            if let Some(page) = self.count(client.esims(&one(StatusFilter::Is(status.clone()))).await, ok) {
                by_status.push((status.as_str().to_string(), page.total));
            }
        }
        if by_status.len() == Status::KNOWN.len() {
            // Statuses this version does not know, so that the figures add up to the list.
            let known: u64 = by_status.iter().map(|(_, n)| n).sum();
            by_status.push(("other".to_string(), all.total.saturating_sub(known)));
        }
        family(text, "esimdash_esims", "gauge", "eSIMs the API lists, by status.");
        for (status, n) in &by_status {
            let _ = writeln!(text, "esimdash_esims{{status=\"{}\"}} {n}", label(status));
        }
        family(text, "esimdash_list_esims", "gauge", "eSIMs the API lists.");
        let _ = writeln!(text, "esimdash_list_esims {}", all.total);
        let attention = super::attention::count(&client, self.prefs.attention, chrono::Utc::now()).await;
        if let Some((attention, _)) = self.count(attention, ok) {
            family(
                text,
                "esimdash_esims_needing_attention",
                "gauge",
                "Usable eSIMs near their data or time limit (config [attention]), read whole as check attention reads them.",
            );
            let _ = writeln!(text, "esimdash_esims_needing_attention {attention}");
        }
        // Pages read above went into the index on the way; how much of the list it holds (not
        // said when the index cannot be read: 0 would be a figure, and a wrong one).
        if let Some(held) = self.index.as_ref().and_then(Kept::held) {
            family(
                text,
                "esimdash_index_esims",
                "gauge",
                "eSIMs the saved index holds (complete when equal to esimdash_list_esims).",
            );
            let _ = writeln!(text, "esimdash_index_esims {held}");
        }
    }

    /// Orders by status: one request each, a page of one.
    async fn orders(&mut self, text: &mut String, ok: &mut bool) {
        let client = self.client.clone();
        let mut orders = Vec::new();
        for status in Status::KNOWN {
            let query = OrderQuery {
                page: Some(1),
                page_size: Some(1),
                status: StatusFilter::Is(status.clone()),
                ..OrderQuery::default()
            };
            if let Some(page) = self.count(client.orders(&query).await, ok) {
                orders.push((status, page.total));
            }
        }
        if !orders.is_empty() {
            family(text, "esimdash_orders", "gauge", "Orders, by status.");
            for (status, n) in orders {
                let _ = writeln!(text, "esimdash_orders{{status=\"{}\"}} {n}", label(status.as_str()));
            }
        }
    }
}
