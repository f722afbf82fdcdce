//! The loop that connects the app to the world: terminal events, answers from background tasks,
//! a timer only when the app asks for one, and signals. It draws only after a change, and at
//! most once a frame (`FRAME`): pages that come faster than that (a whole read of the list)
//! are drawn together.

use super::app::App;
use super::export_jobs;
use super::keymap::Keymap;
use super::money_read::Ledgers;
use super::msg::{Answer, BulkTopup, Effect, ExportJob, JobId, Msg, Request};
use super::terminal::{self, Term};
use super::view::theme::Theme;
use crossterm::event::{Event, EventStream, KeyEventKind};
use esimdash_api::Client;
use esimdash_front::clipboard::{Clipboard, Environment, Strategy};
use esimdash_front::session::{Accounts, Opened};
use esimdash_inventory::kept::{Kept, Writer};
use esimdash_inventory::store::LoadError;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::AbortHandle;

pub struct Options {
    /// Running against the in-process sandbox (shown in the header).
    pub demo: bool,
    /// The key bindings (defaults with the config file's `[keys]`).
    pub keymap: Keymap,
    /// Mouse reporting at start (config `mouse`); a key toggles it.
    pub mouse: bool,
    pub clipboard: Strategy,
    /// Named in the message after a crash.
    pub log_path: Option<PathBuf>,
    /// Where inventory indexes are saved between sessions (one file an account); `None`: not saved.
    pub index_dir: Option<PathBuf>,
    /// The config file's preferences (attention thresholds, low balance, export directory).
    pub preferences: esimdash_front::config::Preferences,
    /// Where the profile picker opens accounts, and the names it offers.
    pub accounts: Accounts,
    pub profiles: Vec<String>,
}

/// The account's saved inventory index: the app's in-memory one is loaded from it at start,
/// and every eSIM the client reads is written to it as it comes, on a thread of its own.
#[derive(Debug, Clone)]
pub struct IndexFile {
    kept: Kept,
    writer: Writer,
}

impl IndexFile {
    fn of(dir: Option<&Path>, opened: &Opened) -> Option<Self> {
        let kept = esimdash_inventory::kept::at(dir?, opened.index_key.as_deref()?);
        let writer = kept.writer();
        Some(Self { kept, writer })
    }

    /// Reads the saved index in the background; it comes to the app as a message. One that
    /// cannot be read is said in the log and read again from the API.
    fn load(file: Option<&Self>, id: JobId, tx: &UnboundedSender<Msg>) {
        let (kept, tx) = (file.map(|f| f.kept.clone()), tx.clone());
        tokio::task::spawn_blocking(move || {
            let (loaded, trouble) = match kept {
                Some(kept) => {
                    let loaded = match kept.load() {
                        Ok(loaded) => Some(Box::new(loaded)),
                        Err(LoadError::Missing) => None,
                        Err(e) => {
                            tracing::warn!("{e}");
                            None
                        }
                    };
                    (loaded, kept.trouble())
                }
                None => (None, None),
            };
            let _ = tx.send(Msg::SavedInventory { id, loaded, trouble });
        });
    }
}

/// Runs the dashboard until the user quits or a signal ends it; the terminal is restored.
/// How a dashboard session ended, for the exit status (docs/commands.md: exit codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// The server refused the credentials (401): exit 3, as the commands do.
    CredentialsRefused,
}

fn outcome(app: &App) -> Outcome {
    match app.halt() {
        Some(crate::kit::status::Halt::Unauthorized { .. }) => Outcome::CredentialsRefused,
        _ => Outcome::Done,
    }
}

pub async fn run(opened: Opened, options: Options) -> std::io::Result<Outcome> {
    terminal::install_panic_hook(options.log_path.clone());
    let mut term = terminal::enter(options.mouse)?;
    let clipboard = Clipboard::new(options.clipboard, Environment::from_env());
    let app = App::new(options.demo)
        .with_keymap(options.keymap.clone())
        .with_mouse(options.mouse)
        .with_preferences(&options.preferences)
        .with_session(opened.session.clone(), options.profiles.clone());
    let result = event_loop(&mut term, opened, app, clipboard, &options).await;
    terminal::leave();
    result
}

/// The background tasks that may be cancelled (reads and exports), so that one nobody waits
/// for can be aborted: a read still waiting for the client's rate budget gives its place back,
/// an export leaves no file. A write is not kept here, so it can never be aborted: once it may
/// have left, its answer is what tells whether money moved.
#[derive(Default)]
pub struct Tasks {
    cancellable: HashMap<JobId, AbortHandle>,
    /// The stop flags of bulk runs (shared with their task while it runs).
    bulk_stops: HashMap<JobId, Arc<AtomicBool>>,
}

impl Tasks {
    /// Runs the request as a task whose answer (its id and result) comes back as a message.
    pub fn request(
        &mut self,
        id: JobId,
        request: Request,
        (client, ledgers): (&Client, &Ledgers),
        tx: &UnboundedSender<Msg>,
    ) {
        let writes = request.writes();
        let (client, ledgers, tx) = (client.clone(), ledgers.clone(), tx.clone());
        let task = tokio::spawn(async move {
            let result = request.run(&client, &ledgers).await;
            // The receiver is gone only when the dashboard has quit.
            let _ = tx.send(Msg::Seat {
                id,
                seat: client.seat(),
            });
            let _ = tx.send(Msg::Answer(Box::new(Answer { id, result })));
        });
        if !writes {
            self.keep(id, task.abort_handle());
        }
    }

    /// Writes a CSV export in `dir`, its progress and end coming back as messages.
    pub fn export(&mut self, dir: &Path, id: JobId, job: ExportJob, client: &Client, tx: &UnboundedSender<Msg>) {
        let task = export_jobs::export(dir, id, job, client, tx);
        self.keep(id, task);
    }

    /// Starts a bulk top-up (its steps come back as messages); `stop_bulk` asks it to stop.
    pub fn bulk_topup(&mut self, dir: &Path, id: JobId, order: BulkTopup, client: &Client, tx: &UnboundedSender<Msg>) {
        let stop = Arc::new(AtomicBool::new(false));
        self.bulk_stops.retain(|_, s| Arc::strong_count(s) > 1);
        self.bulk_stops.insert(id, stop.clone());
        super::bulk_run::start(dir, id, order, client, tx, stop);
    }

    /// Whether a bulk run's task still lives (it holds its stop flag until its last word is
    /// sent).
    fn bulk_running(&self) -> bool {
        self.bulk_stops.values().any(|stop| Arc::strong_count(stop) > 1)
    }

    /// No further row of any bulk run is started (the dashboard is ending).
    fn stop_all_bulk(&self) {
        for stop in self.bulk_stops.values() {
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// No further row of the bulk run is started (its payment in flight is answered first).
    pub fn stop_bulk(&mut self, id: JobId) {
        if let Some(stop) = self.bulk_stops.get(&id) {
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    fn keep(&mut self, id: JobId, task: AbortHandle) {
        self.cancellable.retain(|_, t| !t.is_finished());
        self.cancellable.insert(id, task);
    }

    /// Aborts a job nobody waits for (a write is not here to abort).
    pub fn cancel(&mut self, id: JobId) {
        if let Some(task) = self.cancellable.remove(&id) {
            task.abort();
        }
    }
}

/// Carries out effects: each request becomes a background task whose answer comes back as a
/// message; a copy is done at once (OSC 52 goes to the terminal we draw on). `true` to quit.
fn perform(effects: Vec<Effect>, world: &mut World<'_>) -> bool {
    let mut quit = false;
    for effect in effects {
        match effect {
            Effect::Quit => quit = true,
            Effect::Suspend => suspend(world.term, world.tx),
            Effect::Copy { what, text } => {
                let result = world.clipboard.copy(&text, world.term.backend_mut());
                let _ = world.tx.send(Msg::Copied { what, result });
            }
            Effect::Send { id, request } => world
                .tasks
                .request(id, request, (&world.client, &world.ledgers), world.tx),
            Effect::Cancel(id) => world.tasks.cancel(id),
            Effect::RunCommand { id, argv, timeout } => {
                let tx = world.tx.clone();
                tokio::spawn(async move {
                    let ran = esimdash_front::team_commands::run(&argv, timeout).await;
                    let _ = tx.send(Msg::CommandRan { id, ran });
                });
            }
            Effect::LoadInventory(id) => IndexFile::load(world.index.as_ref(), id, world.tx),
            Effect::UseAccount(opened) => world.switch_to(&opened),
            Effect::Mouse(on) => {
                if let Err(e) = terminal::set_mouse(on) {
                    tracing::warn!(%e, "could not switch mouse reporting");
                }
            }
            Effect::SaveQr {
                id,
                iccid,
                code,
                replace,
            } => export_jobs::save_qr(world.export_dir, id, (iccid, code), replace, world.tx),
            Effect::Export { id, job } => world.tasks.export(world.export_dir, id, job, &world.client, world.tx),
            Effect::SaveQrFolder { id, wanted } => {
                export_jobs::save_qr_folder(world.export_dir, id, wanted, &world.client, world.tx);
            }
            Effect::BulkTopup { id, order } => {
                world
                    .tasks
                    .bulk_topup(world.export_dir, id, order, &world.client, world.tx);
            }
            Effect::StopBulk(id) => world.tasks.stop_bulk(id),
            Effect::SwitchAccount(name) => {
                // Opening may run a profile's secret_key_cmd: off the event loop.
                let (accounts, tx) = (world.accounts.clone(), world.tx.clone());
                tokio::task::spawn_blocking(move || {
                    let result = accounts
                        .open(Some(&name), true)
                        .map(Box::new)
                        .map_err(|e| e.to_string());
                    let _ = tx.send(Msg::Switched { name, result });
                });
            }
        }
    }
    quit
}

/// What effects act on.
struct World<'a> {
    /// The account in use; replaced when the picker switches.
    client: Client,
    tx: &'a UnboundedSender<Msg>,
    clipboard: &'a mut Clipboard,
    term: &'a mut Term,
    tasks: Tasks,
    /// Until when the client's pacing holds requests, as the client tells it.
    pacing: tokio::sync::watch::Receiver<Option<Instant>>,
    index: Option<IndexFile>,
    /// The account's keeper, sweeping once the dashboard's own read has the whole list.
    keeper: Option<tokio::task::JoinHandle<()>>,
    preferences: &'a esimdash_front::config::Preferences,
    /// The account's orders for the money view.
    ledgers: Ledgers,
    export_dir: &'a Path,
    accounts: &'a Accounts,
    index_dir: Option<&'a Path>,
}

impl World<'_> {
    /// The session ends: what the client read is written to the index before it does.
    fn end(&mut self, app: &mut App) -> Outcome {
        if let Some(file) = &self.index
            && !file.kept.flush()
        {
            tracing::warn!("the last pages read were not all kept in the inventory index");
        }
        outcome(app)
    }

    /// Another account is in use from now on: its client, its pacing, where its index is
    /// saved. (The app has cancelled what ran for the old one and drops any answer that still
    /// comes.)
    fn switch_to(&mut self, opened: &Opened) {
        self.client = opened.client.clone();
        self.pacing = self.client.pacing();
        // A new watcher has seen the value it starts with: the app is told it here.
        let _ = self.tx.send(Msg::Pacing(*self.pacing.borrow_and_update()));
        self.index = IndexFile::of(self.index_dir, opened);
        self.ledgers = Ledgers::of(self.index_dir, opened);
        settle_earlier(opened, self.tx, self.index.as_ref());
        self.keep();
    }

    /// The account in use is kept (`esimdash_front::keeper`): the last account's keeper ends.
    fn keep(&mut self) {
        if let Some(old) = self.keeper.take() {
            old.abort();
        }
        let (Some(file), Some((dir, account))) = (&self.index, self.client.state_place()) else {
            return;
        };
        let keeping = esimdash_front::keeper::Keeping {
            share: self.preferences.keeper_share,
            reads: esimdash_front::keeper::Reads::BESIDE_A_DASHBOARD,
            lock: esimdash_front::keeper::lock_path(&dir, &account),
        };
        let keeper = esimdash_front::keeper::keep(self.client.clone(), file.kept.clone(), keeping);
        self.keeper = Some(tokio::spawn(keeper));
    }
}

/// The client's notices and the eSIMs it reads come to the app as messages, and payments an
/// earlier session of this account left unsettled are settled in the background (each told in
/// a window that stays).
fn settle_earlier(opened: &Opened, tx: &UnboundedSender<Msg>, index: Option<&IndexFile>) {
    let (profile, tx) = (opened.session.profile.clone(), tx.clone());
    let (seen_by, seen_tx) = (profile.clone(), tx.clone());
    opened.client.on_notice(std::sync::Arc::new(move |notice| {
        let _ = tx.send(Msg::Notice {
            profile: profile.clone(),
            notice,
        });
    }));
    let writer = index.map(|f| f.writer.clone());
    opened.client.on_esims_read(index_tap(seen_by, seen_tx, writer));
    let client = opened.client.clone();
    tokio::spawn(async move { client.settle_earlier().await });
}

/// Sends every eSIM the client reads to the account's saved index, when there is one (the one
/// save policy: `inventory::kept::Writer`), and to the app's index, tagged with its account,
/// unless its request's answer carries it (a page of the index's own read comes once, with
/// its place, as that answer). What it sends the app goes before the answer of the request
/// that read it, on the same channel: a refresh (`Request::RefreshEsims`) is answered with
/// its records merged.
pub fn index_tap(profile: String, tx: UnboundedSender<Msg>, writer: Option<Writer>) -> esimdash_api::EsimsTap {
    std::sync::Arc::new(move |read| {
        let seen = esimdash_inventory::Seen::read(read.esims, read.place);
        if !read.answered {
            let _ = tx.send(Msg::IndexSeen {
                profile: profile.clone(),
                seen: seen.clone(),
            });
        }
        if let Some(writer) = &writer {
            writer.send(seen);
        }
    })
}

/// How the dashboard ends, once it is ending: whether the terminal is gone (a hang-up), and
/// until when it waits for a payment's answer.
struct Ending {
    patience: Duration,
    leaving: Option<tokio::time::Instant>,
    terminal_gone: bool,
}

impl Ending {
    /// Ends the loop now, unless a payment waits for its answer: then the app says so and the
    /// loop goes on until the answer is in (its outcome written) or `patience` has passed.
    fn leave(&mut self, app: &mut App, tasks: &Tasks) -> bool {
        // A bulk run starts no further row once the dashboard is ending (by a key as by a signal).
        tasks.stop_all_bulk();
        if esimdash_api::payments_in_flight() == 0 && !tasks.bulk_running() {
            return true;
        }
        if self.leaving.is_none() {
            app.wait_to_quit(format!(
                "Quitting once the payment's answer is in and recorded (at most {} s)…",
                self.patience.as_secs()
            ));
            self.leaving = Some(tokio::time::Instant::now() + self.patience);
        }
        false
    }
}

/// Where the loop's messages come from besides the app's own timer.
struct Inputs {
    events: EventStream,
    rx: UnboundedReceiver<Msg>,
    /// SIGTERM, SIGHUP (the SSH connection dropped) and SIGINT end the dashboard cleanly, after
    /// a payment in flight has its answer.
    stops: esimdash_api::signals::Stops,
    job: JobSignals,
}

/// What the loop does next.
/// The shortest time between two frames: changes within it are drawn together. A page of
/// the list can come every 3 ms; drawing each cost a fifth of a whole read's CPU.
const FRAME: Duration = Duration::from_millis(25);

enum Next {
    Msg(Msg),
    /// A frame held back is due.
    Draw,
    /// Nothing for the app (an event it ignores); wait again.
    Again,
    Exit,
}

/// Waits for the next message: a terminal event, a background answer, the client's pacing,
/// the app's timer, a signal, or the end of the wait for a payment's answer.
async fn next(
    inputs: &mut Inputs,
    world: &mut World<'_>,
    (app, draw_at): (&mut App, Option<Instant>),
    ending: &mut Ending,
) -> Next {
    let wake = app.next_wake(Instant::now());
    let frame = async {
        match draw_at {
            Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
            None => std::future::pending().await,
        }
    };
    let timer = async {
        match wake {
            Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
            None => std::future::pending().await,
        }
    };
    let leaving = ending.leaving;
    let deadline = async {
        match leaving {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    let gone = ending.terminal_gone;
    tokio::select! {
        event = inputs.events.next(), if !gone => match event {
            Some(Ok(event)) => to_msg(event).map_or(Next::Again, Next::Msg),
            // The terminal is gone (a hang-up): nothing more to read or draw.
            Some(Err(_)) | None => {
                ending.terminal_gone = true;
                if ending.leave(app, &world.tasks) { Next::Exit } else { Next::Again }
            }
        },
        Some(msg) = inputs.rx.recv() => Next::Msg(msg),
        Ok(()) = world.pacing.changed() => Next::Msg(Msg::Pacing(*world.pacing.borrow_and_update())),
        () = timer => Next::Msg(Msg::Tick),
        () = frame => Next::Draw,
        // A hang-up is not taken to mean the terminal is gone: when it is, reading and
        // drawing fail and say so; when it is not (a SIGHUP sent by hand), it is restored.
        _ = inputs.stops.next() => {
            if ending.leave(app, &world.tasks) { Next::Exit } else { Next::Msg(Msg::Resize) }
        }
        () = deadline => {
            tracing::warn!("quitting without the payment's answer; the next start settles it");
            Next::Exit
        }
        job_signal = inputs.job.recv(), if !gone => match job_signal {
            JobSignal::Stop => Next::Msg(Msg::Suspend),
            JobSignal::Continue => {
                resume(world.term, world.tx);
                Next::Again
            }
        },
    }
}

/// Terminal events the app cares about: key presses (not releases or repeats of releases),
/// pastes, the mouse, and resizes.
fn to_msg(event: Event) -> Option<Msg> {
    match event {
        Event::Key(key) if key.kind == KeyEventKind::Press => Some(Msg::Key(key)),
        Event::Mouse(mouse) => Some(Msg::Mouse(mouse)),
        Event::Paste(text) => Some(Msg::Paste(text)),
        Event::Resize(..) => Some(Msg::Resize),
        _ => None,
    }
}

/// Ctrl-Z or SIGTSTP: the terminal is given back and the process stops; once continued, the
/// terminal is taken again and the app told, so it draws the whole screen (and sets the mouse).
fn suspend(term: &mut Term, tx: &UnboundedSender<Msg>) {
    tracing::info!("suspended");
    terminal::stop_process();
    tracing::info!("continued");
    resume(term, tx);
}

/// After the process was continued (by us or from outside, as after a SIGSTOP the dashboard
/// never saw): raw mode and the alternate screen again, the screen cleared, a full redraw.
/// (`resize` clears the screen and forgets the last frame; `clear` would first ask the terminal
/// for the cursor's position, a reply the event reader may swallow, failing after 2 s.)
fn resume(term: &mut Term, tx: &UnboundedSender<Msg>) {
    let whole = |term: &mut Term| term.size().and_then(|size| term.resize(size.into()));
    if let Err(e) = terminal::resume().and_then(|()| whole(term)) {
        tracing::warn!(%e, "could not take the terminal again");
    }
    let _ = tx.send(Msg::Resumed);
}

/// Job control from outside: SIGTSTP (`kill -TSTP`, a shell) asks to suspend; SIGCONT says the
/// process was continued. Handling SIGTSTP replaces its default stop, which would leave the
/// terminal in raw mode under the shell.
#[cfg(unix)]
struct JobSignals {
    stop: Option<tokio::signal::unix::Signal>,
    cont: Option<tokio::signal::unix::Signal>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JobSignal {
    Stop,
    Continue,
}

#[cfg(unix)]
impl JobSignals {
    fn new() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        Self {
            stop: signal(SignalKind::from_raw(libc::SIGTSTP)).ok(),
            cont: signal(SignalKind::from_raw(libc::SIGCONT)).ok(),
        }
    }

    async fn recv(&mut self) -> JobSignal {
        async fn next(signal: &mut Option<tokio::signal::unix::Signal>) {
            let received = match signal {
                Some(s) => s.recv().await.is_some(),
                None => false,
            };
            if !received {
                std::future::pending::<()>().await;
            }
        }
        tokio::select! {
            () = next(&mut self.stop) => JobSignal::Stop,
            () = next(&mut self.cont) => JobSignal::Continue,
        }
    }
}

#[cfg(not(unix))]
struct JobSignals;

#[cfg(not(unix))]
impl JobSignals {
    fn new() -> Self {
        Self
    }

    async fn recv(&mut self) -> JobSignal {
        std::future::pending().await
    }
}

async fn event_loop(
    term: &mut Term,
    opened: Opened,
    mut app: App,
    mut clipboard: Clipboard,
    options: &Options,
) -> std::io::Result<Outcome> {
    let theme = Theme::from_env(options.preferences.theme);
    let (tx, rx) = unbounded_channel();
    let mut inputs = Inputs {
        events: EventStream::new(),
        rx,
        stops: esimdash_api::signals::Stops::new(),
        job: JobSignals::new(),
    };
    let mut ending = Ending {
        patience: opened.client.request_timeout() + Duration::from_secs(5),
        leaving: None,
        terminal_gone: false,
    };
    let index_dir = options.index_dir.as_deref();
    let mut world = World {
        client: opened.client.clone(),
        tx: &tx,
        clipboard: &mut clipboard,
        term,
        tasks: Tasks::default(),
        pacing: opened.client.pacing(),
        index: IndexFile::of(index_dir, &opened),
        keeper: None,
        preferences: &options.preferences,
        ledgers: Ledgers::of(index_dir, &opened),
        export_dir: &options.preferences.export_dir,
        accounts: &options.accounts,
        index_dir,
    };
    settle_earlier(&opened, &tx, world.index.as_ref());
    world.keep();
    perform(app.start(), &mut world);
    world.term.draw(|f| app.draw(f, &theme, Instant::now()))?;
    let (mut drawn_at, mut draw_at) = (Instant::now(), None::<Instant>);
    loop {
        match next(&mut inputs, &mut world, (&mut app, draw_at), &mut ending).await {
            Next::Msg(msg) => {
                let effects = app.update(msg, Instant::now());
                let quit = perform(effects, &mut world) || app.should_quit();
                if (quit || ending.leaving.is_some()) && ending.leave(&mut app, &world.tasks) {
                    return Ok(world.end(&mut app));
                }
            }
            Next::Again | Next::Draw => {}
            Next::Exit => return Ok(world.end(&mut app)),
        }
        if app.take_dirty() {
            draw_at = draw_at.or(Some(drawn_at + FRAME));
        }
        if draw_at.is_some_and(|at| at <= Instant::now()) {
            (drawn_at, draw_at) = (Instant::now(), None);
            let drawn = world.term.draw(|f| app.draw(f, &theme, Instant::now()));
            // Without a terminal (a hang-up) the loop goes on until the payment's answer is in.
            if let Err(e) = drawn
                && !ending.terminal_gone
            {
                ending.terminal_gone = true;
                esimdash_api::signals::detach_stdio();
                if ending.leave(&mut app, &world.tasks) {
                    world.end(&mut app);
                    return Err(e);
                }
            }
        }
    }
}
