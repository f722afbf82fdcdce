//! Driving the dashboard without a terminal: messages in, effects out, and (for the harness)
//! requests run against an in-process sandbox with a pinned clock, so screens are reproducible.

use chrono::{TimeZone, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use esimdash::api::{BaseUrl, Client, ClientOptions, Credentials};
use esimdash::sandbox::{RunningSandbox, SandboxConfig, spawn};
use esimdash::tui::app::App;
use esimdash::tui::msg::{Answer, Effect, Msg, Request, RequestId};
use esimdash::tui::runtime::execute;
use esimdash::tui::view::{self, theme::Theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::{Duration, Instant};

pub fn key(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

pub fn code(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn sends(effects: &[Effect]) -> Vec<(RequestId, Request)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send { id, request } => Some((*id, request.clone())),
            Effect::Quit => None,
        })
        .collect()
}

/// Renders the app into a `width`×`height` buffer, as text.
pub fn render(app: &App, width: u16, height: u16, now: Instant) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| view::draw(f, app, &Theme { color: false }, now))
        .unwrap();
    terminal.backend().to_string()
}

/// The app wired to a seeded sandbox: every request it asks for is run for real, over loopback.
pub struct Harness {
    pub app: App,
    pub now: Instant,
    client: Client,
    pending: Vec<(RequestId, Request)>,
    /// Every request the app sent, in order.
    pub sent: Vec<Request>,
    _sandbox: RunningSandbox,
}

impl Harness {
    pub async fn new(access_code: &str, secret_key: &str) -> Self {
        let config = SandboxConfig {
            rate_limit: 100_000,
            epoch: Some(Utc.with_ymd_and_hms(2026, 11, 20, 12, 0, 0).unwrap()),
            ..SandboxConfig::default()
        };
        let sandbox = spawn(&config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
        let client = Client::new(
            BaseUrl::parse(&sandbox.base_url()).unwrap(),
            &Credentials::pair(access_code, secret_key),
            ClientOptions {
                rate_limit: 100_000,
                max_retry_wait: Duration::ZERO,
                ..ClientOptions::default()
            },
        )
        .unwrap();
        let mut app = App::new(false);
        let pending = sends(&app.start());
        let mut h = Self {
            app,
            now: Instant::now(),
            client,
            pending,
            sent: Vec::new(),
            _sandbox: sandbox,
        };
        h.settle().await;
        h
    }

    pub async fn acme() -> Self {
        Self::new("ak_demo_acme", "sk_demo_acme").await
    }

    /// Feeds one message; what it asks for waits until `settle`.
    pub fn send(&mut self, msg: Msg) {
        let effects = self.app.update(msg, self.now);
        self.pending.extend(sends(&effects));
    }

    pub fn keys(&mut self, text: &str) {
        for c in text.chars() {
            self.send(key(c));
        }
    }

    /// Runs every pending request against the sandbox and feeds the answers back, until the app
    /// asks for nothing more.
    pub async fn settle(&mut self) {
        while !self.pending.is_empty() {
            for (id, request) in std::mem::take(&mut self.pending) {
                self.sent.push(request.clone());
                let result = execute(&self.client, &request).await;
                let effects = self
                    .app
                    .update(Msg::Answer(Box::new(Answer { id, request, result })), self.now);
                self.pending.extend(sends(&effects));
            }
        }
    }

    /// Answers every pending request with this error instead of running it.
    pub fn fail_pending(&mut self, error: esimdash::api::ApiError) {
        for (id, request) in std::mem::take(&mut self.pending) {
            self.sent.push(request.clone());
            let answer = Answer {
                id,
                request,
                result: Err(error.clone()),
            };
            let effects = self.app.update(Msg::Answer(Box::new(answer)), self.now);
            self.pending.extend(sends(&effects));
        }
    }

    pub fn screen(&self, width: u16, height: u16) -> String {
        render(&self.app, width, height, self.now)
    }
}
