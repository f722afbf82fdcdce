//! `esimdash metrics`: the account's figures in the Prometheus text format, printed once (for
//! node_exporter's textfile collector) or served at `/metrics` (`--listen ADDR`). The eSIM and
//! order figures come from the account's kept picture when it is young enough (a keeper keeps
//! it: `--listen` is one), at the cost of the balance and the top of the list; else they are
//! read now, exactly: eSIMs and orders by status from the list's `total` for each status (a
//! page of one each), eSIMs needing attention as `check attention` counts them. Never from
//! whatever part of an index was read. Served, the answer is kept for `--every` seconds, so
//! frequent scrapes do not spend the key's budget; the server is bounded (`super::listen`), so
//! that stalled clients cannot keep the scrapes out.

use crate::commands::CommandError;
use crate::commands::output::out;
use esimdash_api::model::EsimQuery;
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

    /// eSIMs by status, the list's total and those needing attention: from the kept picture
    /// when it is young enough (one request, the top of the list), else read now: the list's
    /// `total` for each status filter (a page of one each) and the usable eSIMs as `check
    /// attention` reads them.
    async fn esims(&mut self, text: &mut String, ok: &mut bool) {
        let client = self.client.clone();
        let (rule, now) = (self.prefs.attention, chrono::Utc::now());
        let max_age = self.prefs.picture_max_age;
        let picture = super::attention::fresh_picture(&client, self.index.as_ref(), rule, max_age, now).await;
        let Some(picture) = self.count(picture, ok).flatten() else {
            return self.esims_read_now(text, ok).await;
        };
        let held: BTreeMap<&str, u64> = picture.by_status.iter().map(|(s, n)| (s.as_str(), *n)).collect();
        let by_status = Status::KNOWN
            .iter()
            .map(|s| (s.as_str().to_string(), held.get(s.as_str()).copied().unwrap_or(0)))
            .collect();
        let total = picture.facts.total.unwrap_or(picture.facts.held);
        esim_figures(text, by_status, total);
        attention_figures(text, picture.attention, picture.age(now));
        self.index_figure(text);
    }

    async fn esims_read_now(&mut self, text: &mut String, ok: &mut bool) {
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
            esim_figures(text, by_status, all.total);
        }
        let means = super::attention::Means {
            max_age: self.prefs.picture_max_age,
            budget: crate::cli::DEFAULT_BUDGET,
        };
        let rule = self.prefs.attention;
        match super::attention::counted(&client, self.index.as_ref(), rule, means, chrono::Utc::now()).await {
            Ok(counted) => attention_figures(text, counted.count, counted.age),
            // Not a figure: a partial count is never given as the count.
            Err(why) => {
                tracing::warn!("the attention count is not known: {why}");
                *self.errors.entry("attention_unknown").or_default() += 1;
                *ok = false;
            }
        }
        self.index_figure(text);
    }

    /// Pages read went into the index on the way; how much of the list it holds (not said when
    /// the index cannot be read: 0 would be a figure, and a wrong one).
    fn index_figure(&self, text: &mut String) {
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

    /// Orders by status: as a keeper kept them when young enough, else a request each, a page
    /// of one.
    async fn orders(&mut self, text: &mut String, ok: &mut bool) {
        let now = chrono::Utc::now();
        let kept = self
            .index
            .as_ref()
            .and_then(Kept::order_totals)
            .filter(|t| t.fresh(now, self.prefs.picture_max_age));
        let totals = match kept {
            Some(totals) => totals,
            None => match self.count(esimdash_front::keeper::order_totals(&self.client).await, ok) {
                Some(totals) => totals,
                None => return,
            },
        };
        family(text, "esimdash_orders", "gauge", "Orders, by status.");
        for (status, n) in &totals.by_status {
            let _ = writeln!(text, "esimdash_orders{{status=\"{}\"}} {n}", label(status));
        }
    }
}

/// eSIMs by status, with `status="other"` for statuses this version does not know, so that
/// they sum to the list's total.
fn esim_figures(text: &mut String, mut by_status: Vec<(String, u64)>, total: u64) {
    let known: u64 = by_status.iter().map(|(_, n)| n).sum();
    by_status.push(("other".to_string(), total.saturating_sub(known)));
    family(text, "esimdash_esims", "gauge", "eSIMs the API lists, by status.");
    for (status, n) in &by_status {
        let _ = writeln!(text, "esimdash_esims{{status=\"{}\"}} {n}", label(status));
    }
    family(text, "esimdash_list_esims", "gauge", "eSIMs the API lists.");
    let _ = writeln!(text, "esimdash_list_esims {total}");
}

/// eSIMs needing attention, and how old the picture they were counted from is (0: read now).
fn attention_figures(text: &mut String, count: u64, age: Option<chrono::Duration>) {
    family(
        text,
        "esimdash_esims_needing_attention",
        "gauge",
        "Usable eSIMs near their data or time limit (config [attention]), as check attention counts them.",
    );
    let _ = writeln!(text, "esimdash_esims_needing_attention {count}");
    family(
        text,
        "esimdash_attention_age_seconds",
        "gauge",
        "How old the kept picture the attention count comes from is (0: read live).",
    );
    let _ = writeln!(
        text,
        "esimdash_attention_age_seconds {}",
        age.map_or(0, |a| a.num_seconds())
    );
}
