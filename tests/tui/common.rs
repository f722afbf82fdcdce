//! Driving the dashboard without a terminal: messages in, effects out, and (for the harness)
//! requests run against an in-process sandbox with a pinned clock, so screens are reproducible.

use chrono::{TimeZone, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use esimdash_api::{BaseUrl, Client, ClientOptions, Credentials};
use esimdash_sandbox::{RunningSandbox, SandboxConfig, spawn};
use esimdash_tui::app::App;
use esimdash_tui::msg::{Answer, Effect, JobId, Msg, Request};
use esimdash_tui::runtime::index_tap;
use esimdash_tui::view::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::{Duration, Instant};

pub fn key(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

pub fn code(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// The requests the effects send, with their job ids.
pub fn sends(effects: &[Effect]) -> Vec<(JobId, Request)> {
    let sent = |e: &Effect| {
        let Effect::Send { id, request } = e else { return None };
        Some((*id, request.clone()))
    };
    effects.iter().filter_map(sent).collect()
}

/// What the effects ask to copy: (what, text).
pub fn copies(effects: &[Effect]) -> Vec<(&'static str, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Copy { what, text } => Some((*what, text.clone())),
            _ => None,
        })
        .collect()
}

/// Cuts the QR code out of a screen (rendered, or captured from tmux): the rows and columns of
/// block glyphs, right of the eSIM pane's border when there is one (the table's usage gauge
/// uses blocks too). Half blocks, or full blocks (two columns a module) where there are no halves.
pub fn qr_from_screen(screen: &str) -> Result<esimdash_qr::QrMatrix, String> {
    let rows: Vec<Vec<char>> = screen.lines().map(|l| l.trim_matches('"').chars().collect()).collect();
    let start = rows.iter().find_map(|r| {
        let text: String = r.iter().collect();
        text.find("┌ eSIM").map(|byte| text[..byte].chars().count() + 1)
    });
    let start = start.unwrap_or(0);
    let is_block = |c: char| matches!(c, '█' | '▀' | '▄');
    let block_at = |r: usize, c: usize| c >= start && rows[r].get(c).is_some_and(|ch| is_block(*ch));
    let with_blocks: Vec<usize> = (0..rows.len())
        .filter(|&r| (0..rows[r].len()).filter(|&c| block_at(r, c)).count() > 10)
        .collect();
    let (first, last) = (
        *with_blocks.first().ok_or("no QR rows")?,
        *with_blocks.last().ok_or("no QR rows")?,
    );
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let cols: Vec<usize> = (start..width)
        .filter(|&c| (first..=last).any(|r| block_at(r, c)))
        .collect();
    let (left, right) = (
        *cols.first().ok_or("no QR columns")?,
        *cols.last().ok_or("no QR columns")?,
    );
    let lines: Vec<String> = (first..=last)
        .map(|r| (left..=right).map(|c| *rows[r].get(c).unwrap_or(&' ')).collect())
        .collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    if lines.iter().any(|l| l.contains(['▀', '▄'])) {
        esimdash_qr::QrMatrix::from_half_blocks(&refs)
    } else {
        esimdash_qr::QrMatrix::from_full_blocks(&refs)
    }
}

#[path = "../support/tools.rs"]
mod tools;
pub use tools::{property_config, sandbox_banner, tmux_available, zbar_decode};

/// Whether tmux is there for the test running now (named as the test harness names the
/// thread it runs each test on), saying so where it is skipped: for the helpers that start a
/// terminal test's setup, so each test need not spell its own name.
pub fn tmux_available_here() -> bool {
    tmux_available(std::thread::current().name().unwrap_or("a terminal test"))
}

/// Renders the app into a `width`×`height` buffer, as text.
pub fn render(app: &App, width: u16, height: u16, now: Instant) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| app.draw(f, &Theme::dark(false), now)).unwrap();
    terminal.backend().to_string()
}

/// The order numbers of the orders list's rows read so far, top to bottom.
pub fn listed_order_numbers(app: &App) -> Vec<String> {
    let rows = app.orders().list().loaded();
    rows.map(|o| o.record.provider_order_no.to_string()).collect()
}

/// The ICCIDs of the eSIM list's rows read so far, top to bottom.
pub fn listed_iccids(app: &App) -> Vec<String> {
    let rows = app.esims().list().loaded();
    rows.map(|e| e.raw_order_json.iccid.to_string()).collect()
}

/// The ICCIDs of My eSIMs' search results, in order.
pub fn result_iccids(app: &App) -> Vec<String> {
    let rows = app.esims().result_rows(app.index());
    rows.map(|r| r.iccid().to_string()).collect()
}

/// Client settings with no pacing to speak of: for tests whose subject is not the rate limit.
pub fn unpaced() -> ClientOptions {
    ClientOptions {
        rate_limit: 100_000,
        ..ClientOptions::default()
    }
}

/// A sandbox's settings with no rate limit to speak of (see `unpaced`).
pub fn unpaced_sandbox() -> SandboxConfig {
    SandboxConfig {
        rate_limit: 100_000,
        ..SandboxConfig::default()
    }
}

/// The demo keys of Acme, the reseller most tests act as.
pub const ACME: (&str, &str) = ("ak_demo_acme", "sk_demo_acme");

/// A client of the API at `base_url` as the reseller of these keys, with `options`.
pub fn client_as(base_url: &str, (access_code, secret_key): (&str, &str), options: ClientOptions) -> Client {
    let credentials = Credentials::pair(access_code, secret_key);
    Client::new(BaseUrl::parse(base_url).unwrap(), &credentials, options).unwrap()
}

/// A client of the sandbox as this reseller, the test's own (not the app's, which would hand
/// the pages it reads to the app's index): for setting up and for checking the server.
pub fn api_at(sandbox: &RunningSandbox, access_code: &str, secret_key: &str) -> Client {
    client_as(&sandbox.base_url(), (access_code, secret_key), unpaced())
}

/// Acme's client of the sandbox (see `api_at`).
pub fn api(sandbox: &RunningSandbox) -> Client {
    api_at(sandbox, ACME.0, ACME.1)
}

/// The app wired to a seeded sandbox: every request it asks for is run for real, over loopback.
pub struct Harness {
    pub app: App,
    pub now: Instant,
    client: Client,
    /// What the client read, for the app's index (as the runtime's tap sends it).
    seen: tokio::sync::mpsc::UnboundedReceiver<Msg>,
    seen_tx: tokio::sync::mpsc::UnboundedSender<Msg>,
    pending: Vec<(JobId, Request)>,
    /// Every request the app sent, in order.
    pub sent: Vec<Request>,
    /// How many requests the app cancelled.
    pub cancelled: usize,
    pub sandbox: RunningSandbox,
    /// The account's orders for the money view, kept for the session as the runtime keeps them.
    ledgers: esimdash_tui::money_read::Ledgers,
}

impl Harness {
    pub async fn new(access_code: &str, secret_key: &str) -> Self {
        Self::with_timeout(access_code, secret_key, Duration::from_secs(10)).await
    }

    /// The app's client gives up after `timeout` (the sandbox's latency can be raised past it).
    pub async fn with_timeout(access_code: &str, secret_key: &str, timeout: Duration) -> Self {
        let mut h = Self::unsettled(access_code, secret_key, timeout).await;
        h.settle().await;
        h
    }

    /// The app with its first requests still pending (to answer them by hand).
    pub async fn unsettled(access_code: &str, secret_key: &str, timeout: Duration) -> Self {
        // The sandbox's data and the app's "now" are pinned together, so what needs attention
        // does not drift with the day the tests run.
        let epoch = Utc.with_ymd_and_hms(2026, 11, 20, 12, 0, 0).unwrap();
        let config = SandboxConfig {
            epoch: Some(epoch),
            ..unpaced_sandbox()
        };
        let sandbox = spawn(&config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
        let options = ClientOptions {
            max_retry_wait: Duration::ZERO,
            request_timeout: timeout,
            ..unpaced()
        };
        let client = client_as(&sandbox.base_url(), (access_code, secret_key), options);
        let mut app = App::new(false).with_clock(epoch);
        let pending = sends(&app.start());
        let (seen_tx, seen) = tokio::sync::mpsc::unbounded_channel();
        client.on_esims_read(index_tap(String::new(), seen_tx.clone(), None));
        Self {
            app,
            now: Instant::now(),
            client,
            seen,
            seen_tx,
            pending,
            sent: Vec::new(),
            cancelled: 0,
            sandbox,
            ledgers: esimdash_tui::money_read::Ledgers::pinned(epoch),
        }
    }

    /// Acme's dashboard through a team gateway in front of its sandbox, as an agent `role`
    /// with a daily cap of `cap` USD, its first answers read. The gateway serves while the
    /// returned handle and folder live.
    pub async fn at_gateway(
        role: esimdash_gateway::agents::Role,
        cap: Option<rust_decimal::Decimal>,
    ) -> (Self, esimdash_gateway::Running, tempfile::TempDir) {
        use esimdash_gateway::agents::{Agent, Token, hash_secret};
        let mut h = Self::unsettled("ak_demo_acme", "sk_demo_acme", Duration::from_secs(10)).await;
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("gateway.db").display().to_string();
        let token = Token::new().unwrap();
        esimdash_gateway::Store::open(&store)
            .await
            .unwrap()
            .add_agent(Agent {
                name: "ana".into(),
                access_code: token.access_code.clone(),
                secret_hash: hash_secret(&token.secret_key),
                role,
                daily_cap: cap,
                created_at: 0,
                revoked_at: None,
            })
            .await
            .unwrap();
        let settings = esimdash_gateway::Settings {
            listen: ([127, 0, 0, 1], 0).into(),
            store,
            team_daily_cap: None,
            support_can_buy: false,
            allow_http: false,
            index_dir: None,
            account: Credentials::pair("ak_demo_acme", "sk_demo_acme").account(),
            rate_limit: 1_000_000,
            read_fresh: Duration::from_secs(5),
            tls: None,
        };
        let upstream = client_as(&h.sandbox.base_url(), ("ak_demo_acme", "sk_demo_acme"), unpaced());
        let gateway = esimdash_gateway::start(settings, upstream).await.unwrap();
        let base = format!("http://{}/api/v1", gateway.addr);
        h.client = client_as(&base, (&token.access_code, &token.secret_key), unpaced());
        h.settle().await;
        (h, gateway, dir)
    }

    pub async fn acme() -> Self {
        Self::new("ak_demo_acme", "sk_demo_acme").await
    }

    /// Acme's dashboard on the tab of key `tab` ('1' to '4'), its first page read.
    pub async fn acme_on(tab: char) -> Self {
        let mut h = Self::acme().await;
        h.send_and_settle(key(tab)).await;
        h
    }

    /// Feeds one message and runs all it asks for: a key press and its answers, as a user sees.
    /// Moves down My eSIMs to the first eSIM of `class` after the one selected.
    pub async fn down_to(&mut self, class: esimdash_domain::esim_state::Class) {
        while self.app.selected_esim().expect("an eSIM selected").facts().classify() != class {
            self.send_and_settle(key('j')).await;
        }
    }

    pub async fn send_and_settle(&mut self, msg: Msg) {
        self.send(msg);
        self.settle().await;
    }

    /// Searches the list in view for `text` as a user does (`/`, the text, Enter) and runs
    /// what the search asks for.
    pub async fn search(&mut self, text: &str) {
        self.type_search(text);
        self.settle().await;
    }

    /// `/`, the text and Enter, with what the search asks for still pending.
    pub fn type_search(&mut self, text: &str) {
        self.send(key('/'));
        self.keys(text);
        self.send(code(KeyCode::Enter));
    }

    /// Feeds one message; what it asks for waits until `settle`. Returns the effects.
    pub fn send(&mut self, msg: Msg) -> Vec<esimdash_tui::msg::Effect> {
        let effects = self.app.update(msg, self.now);
        self.follow(&effects);
        effects
    }

    /// Queues the requests the effects ask for and drops the ones they cancel, as the runtime
    /// does (a cancelled request not yet run is never sent).
    fn follow(&mut self, effects: &[Effect]) {
        for effect in effects {
            if let Effect::Cancel(id) = effect {
                self.pending.retain(|(p, _)| p != id);
                self.cancelled += 1;
            }
        }
        self.pending.extend(sends(effects));
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
            self.step().await;
        }
    }

    /// Runs the requests pending now (one round), feeding their answers back.
    pub async fn step(&mut self) {
        let round: Vec<JobId> = self.pending.iter().map(|(id, _)| *id).collect();
        for id in round {
            // An earlier answer of this round may have cancelled it.
            let Some(at) = self.pending.iter().position(|(p, _)| *p == id) else {
                continue;
            };
            let (id, request) = self.pending.remove(at);
            self.sent.push(request.clone());
            let result = request.run(&self.client, &self.ledgers).await;
            self.take_seen();
            // The seat at a team gateway, as the runtime hands it over before each answer.
            let seat = self.client.seat();
            self.app.update(Msg::Seat { id, seat }, self.now);
            let effects = self.app.update(Msg::Answer(Box::new(Answer { id, result })), self.now);
            self.follow(&effects);
        }
    }

    /// Hands the app what the client read (before the answer, as the runtime does), as of
    /// the account in use now.
    fn take_seen(&mut self) {
        while let Ok(msg) = self.seen.try_recv() {
            if let Msg::IndexSeen { seen, .. } = msg {
                let profile = self.app.session().profile.clone();
                let effects = self.app.update(Msg::IndexSeen { profile, seen }, self.now);
                self.follow(&effects);
            }
        }
    }

    /// The requests asked for and not yet run.
    pub fn pending(&self) -> &[(JobId, Request)] {
        &self.pending
    }

    /// Runs the app's requests with this client from now on (another account, or read-only).
    pub fn use_client(&mut self, client: Client) {
        client.on_esims_read(index_tap(String::new(), self.seen_tx.clone(), None));
        self.client = client;
    }

    /// The app given this session (profile, colour, read-only) and picker choices.
    pub fn with_session(&mut self, session: esimdash_front::session::Session, profiles: &[&str]) {
        let app = std::mem::replace(&mut self.app, App::new(false));
        let profiles = profiles.iter().map(|p| p.to_string()).collect();
        self.app = app.with_session(session, profiles);
    }

    /// "Now" for the app from here on (the sandbox's data stays as seeded).
    pub fn pin_clock(&mut self, at: chrono::DateTime<Utc>) {
        let app = std::mem::replace(&mut self.app, App::new(false));
        self.app = app.with_clock(at);
    }

    /// A client of another reseller of the same sandbox.
    pub fn api_as(&self, access_code: &str, secret_key: &str) -> Client {
        api_at(&self.sandbox, access_code, secret_key)
    }

    /// A client of the same reseller for checking what happened on the server.
    pub fn api(&self) -> Client {
        api(&self.sandbox)
    }

    /// How many requests of a kind the app sent.
    pub fn count(&self, kind: impl Fn(&Request) -> bool) -> usize {
        self.sent.iter().filter(|r| kind(r)).count()
    }

    /// Answers every pending request with this error instead of running it.
    pub fn fail_pending(&mut self, error: esimdash_api::ApiError) {
        for (id, request) in std::mem::take(&mut self.pending) {
            self.sent.push(request.clone());
            let answer = Answer {
                id,
                result: Err(error.clone()),
            };
            let effects = self.app.update(Msg::Answer(Box::new(answer)), self.now);
            self.follow(&effects);
        }
    }

    pub fn screen(&self, width: u16, height: u16) -> String {
        render(&self.app, width, height, self.now)
    }
}

/// The app driven as the runtime drives it: each request a real task (aborted when the app
/// cancels it), on the wall clock, against a sandbox over loopback.
pub struct Live {
    pub app: App,
    pub sandbox: RunningSandbox,
    client: Client,
    tasks: esimdash_tui::runtime::Tasks,
    tx: tokio::sync::mpsc::UnboundedSender<Msg>,
    rx: tokio::sync::mpsc::UnboundedReceiver<Msg>,
    /// Every request the app asked to send, and how many it cancelled.
    pub sent: Vec<Request>,
    pub cancelled: usize,
    /// The account's saved index, as the runtime keeps it: every eSIM the client reads is
    /// written to it as it comes.
    pub kept: esimdash_inventory::kept::Kept,
    writer: esimdash_inventory::kept::Writer,
    /// The account's orders for the money view, as the runtime keeps them.
    ledgers: esimdash_tui::money_read::Ledgers,
    _index_dir: tempfile::TempDir,
    /// Where QR images and exports go, as the runtime writes them.
    pub export_dir: tempfile::TempDir,
    /// The saved index the app asked for at start, answered by `saved_inventory`.
    inventory_load: Option<JobId>,
    /// The client's options, for a new session's client.
    options: ClientOptions,
}

impl Live {
    /// A new session (app and client) against the same server, as when the dashboard is
    /// started again; what the old one still had running is dropped with it.
    pub fn new_session(&mut self) {
        self.app = App::new(false);
        self.client = client_as(&self.sandbox.base_url(), ACME, self.options.clone());
        (self.tx, self.rx) = tokio::sync::mpsc::unbounded_channel();
        self.client.on_esims_read(index_tap(
            self.app.session().profile.clone(),
            self.tx.clone(),
            Some(self.writer.clone()),
        ));
        self.tasks = Default::default();
        self.sent.clear();
        self.inventory_load = None;
        let effects = self.app.start();
        self.perform(effects);
    }

    pub async fn new(sandbox: SandboxConfig, client: ClientOptions) -> Self {
        let pinned = sandbox.epoch;
        let app = match sandbox.epoch {
            Some(epoch) => App::new(false).with_clock(epoch),
            None => App::new(false),
        };
        let sandbox = spawn(&sandbox, "127.0.0.1:0".parse().unwrap()).await.unwrap();
        let options = ClientOptions {
            max_retry_wait: Duration::ZERO,
            ..client
        };
        let client = client_as(&sandbox.base_url(), ACME, options.clone());
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let index_dir = tempfile::tempdir().unwrap();
        let kept = esimdash_inventory::kept::at(index_dir.path(), "acme");
        let writer = kept.writer();
        client.on_esims_read(index_tap(
            app.session().profile.clone(),
            tx.clone(),
            Some(writer.clone()),
        ));
        let mut live = Self {
            app,
            sandbox,
            client,
            tasks: Default::default(),
            tx,
            rx,
            sent: Vec::new(),
            cancelled: 0,
            kept,
            writer,
            ledgers: pinned.map_or_else(Default::default, esimdash_tui::money_read::Ledgers::pinned),
            _index_dir: index_dir,
            export_dir: tempfile::tempdir().unwrap(),
            inventory_load: None,
            options,
        };
        let effects = live.app.start();
        live.perform(effects);
        live
    }

    fn perform(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Send { id, request } => {
                    self.sent.push(request.clone());
                    self.tasks.request(id, request, (&self.client, &self.ledgers), &self.tx);
                }
                Effect::LoadInventory(id) => self.inventory_load = Some(id),
                Effect::Cancel(id) => {
                    self.cancelled += 1;
                    self.tasks.cancel(id);
                }
                Effect::SaveQr {
                    id,
                    iccid,
                    code,
                    replace,
                } => esimdash_tui::export_jobs::save_qr(self.export_dir.path(), id, (iccid, code), replace, &self.tx),
                Effect::Export { id, job } => {
                    self.tasks
                        .export(self.export_dir.path(), id, job, &self.client, &self.tx)
                }
                Effect::BulkTopup { id, order } => {
                    self.tasks
                        .bulk_topup(self.export_dir.path(), id, order, &self.client, &self.tx);
                }
                Effect::StopBulk(id) => self.tasks.stop_bulk(id),
                Effect::SaveQrFolder { id, wanted } => esimdash_tui::export_jobs::save_qr_folder(
                    self.export_dir.path(),
                    id,
                    wanted,
                    &self.client,
                    &self.tx,
                ),
                _ => {}
            }
        }
    }

    /// The session ends: the saved index as the next session loads it, once every page read
    /// is written (as the runtime waits at the end).
    pub fn quit_saving(&mut self) -> esimdash_inventory::store::SavedIndex {
        assert!(self.writer.flush(Duration::from_secs(10)), "the index was written");
        self.kept.load().expect("the session read eSIMs into its index")
    }

    /// The index an earlier session saved, read as the runtime reads it at start.
    pub fn saved_inventory(&mut self, loaded: esimdash_inventory::store::SavedIndex) {
        let id = self.inventory_load.expect("the app asks for the saved index at start");
        self.send(Msg::SavedInventory {
            id,
            loaded: Some(Box::new(loaded)),
            trouble: None,
        });
    }

    pub fn send(&mut self, msg: Msg) {
        let effects = self.app.update(msg, Instant::now());
        self.perform(effects);
    }

    /// How many requests of a kind the app asked to send.
    pub fn count(&self, kind: impl Fn(&Request) -> bool) -> usize {
        self.sent.iter().filter(|r| kind(r)).count()
    }

    /// Feeds every message (answers, files written, export steps) until `done` holds or
    /// `limit` passes; `false` if it never held.
    pub async fn until(&mut self, limit: Duration, done: impl Fn(&App) -> bool) -> bool {
        let end = tokio::time::Instant::now() + limit;
        while !done(&self.app) {
            let wake = self.app.next_wake(Instant::now());
            let tick_at = wake.map_or(end, |w| tokio::time::Instant::from_std(w).min(end));
            tokio::select! {
                Some(msg) = self.rx.recv() => self.send(msg),
                () = tokio::time::sleep_until(tick_at) => self.send(Msg::Tick),
            }
            if tokio::time::Instant::now() >= end {
                return done(&self.app);
            }
        }
        true
    }

    pub fn screen_text(&self, width: u16, height: u16) -> String {
        render(&self.app, width, height, Instant::now())
    }

    /// The files in the export directory, by name.
    pub fn exported(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.export_dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A client of the same reseller, the test's own (the app's would hand the pages it reads
    /// to its index), for checking what happened on the server.
    pub fn api(&self) -> Client {
        api(&self.sandbox)
    }

    /// Every eSIM of the account, read from the API by the test's own client.
    pub async fn all_esims(&self) -> Vec<esimdash_api::model::Esim> {
        let client = self.api();
        let mut all = Vec::new();
        for page in 1.. {
            let answer = client.esims(&crate::pages::esims_page(page)).await.unwrap();
            let last = (answer.esims.len() as u64) < crate::pages::PAGE_SIZE;
            all.extend(answer.esims);
            if last {
                break;
            }
        }
        all
    }

    /// Feeds answers and timer ticks until nothing is in flight or due, or `limit` passes.
    pub async fn idle(&mut self, limit: Duration) {
        self.until(limit, |app| {
            !app.is_loading() && app.next_wake(Instant::now()).is_none()
        })
        .await;
    }
}
