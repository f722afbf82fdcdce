//! The loop that connects the app to the world: terminal events, answers from background tasks,
//! a timer only when the app asks for one, and signals. It draws only after a change.

use super::app::App;
use super::app::SCAN_PAGE_SIZE;
use super::msg::{Answer, Effect, Msg, Payload, Request};
use super::terminal::{self, Term};
use super::view::{self, theme::Theme};
use crate::api::model::EsimQuery;
use crate::api::{ApiError, Client};
use crate::clipboard::{Clipboard, Environment, Strategy};
use crossterm::event::{Event, EventStream, KeyEventKind};
use futures_util::StreamExt;
use std::path::PathBuf;
use std::time::Instant;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

pub struct Options {
    /// Running against the in-process sandbox (shown in the header).
    pub demo: bool,
    pub clipboard: Strategy,
    /// Named in the message after a crash.
    pub log_path: Option<PathBuf>,
}

/// Runs the dashboard until the user quits or a signal ends it; the terminal is restored.
pub async fn run(client: Client, options: Options) -> std::io::Result<()> {
    terminal::install_panic_hook(options.log_path.clone());
    let mut term = terminal::enter()?;
    let clipboard = Clipboard::new(options.clipboard, Environment::from_env());
    let result = event_loop(&mut term, client, options.demo, clipboard).await;
    terminal::leave();
    result
}

/// Makes the call a request stands for (also used by tests that drive the app).
pub async fn execute(client: &Client, request: &Request) -> Result<Payload, ApiError> {
    Ok(match request {
        Request::Profile => Payload::Profile(client.profile().await?),
        Request::Plans => Payload::Plans(client.plans().await?),
        Request::Plan { slug } => Payload::Plan(client.plan(slug).await?),
        Request::Orders(q) => Payload::Orders(client.orders(q).await?),
        Request::Esims(q) => Payload::Esims(client.esims(q).await?),
        Request::EsimScan { page } => {
            let query = EsimQuery {
                page: Some(*page),
                page_size: Some(SCAN_PAGE_SIZE),
                status: None,
            };
            Payload::Esims(client.esims(&query).await?)
        }
        Request::ActivationCode { esim } => Payload::ActivationCode(client.activation_code(esim).await),
        Request::UpdateProfile(u) => Payload::ProfileSaved(client.update_profile(u).await?),
        Request::TopupPlans { iccid } => Payload::Plans(client.topup_plans(iccid).await?),
        Request::OrdersOfPlan { slug } => Payload::OrderNumbers(
            client
                .recent_orders_for(slug)
                .await?
                .into_iter()
                .map(|o| o.record.provider_order_no)
                .collect(),
        ),
        Request::Topup(r) => Payload::Placed(client.topup(r).await?),
        Request::PlaceOrder(r) => Payload::Placed(client.place_order(r).await?),
        Request::FindNewOrder { slug, iccid, before } => {
            Payload::FoundOrder(client.find_new_order(slug, iccid.as_deref(), before).await?)
        }
    })
}

/// Carries out effects: each request becomes a background task whose answer comes back as a
/// message; a copy is done at once (OSC 52 goes to the terminal we draw on). `true` to quit.
fn perform(
    effects: Vec<Effect>,
    client: &Client,
    tx: &UnboundedSender<Msg>,
    clipboard: &mut Clipboard,
    term: &mut Term,
) -> bool {
    let mut quit = false;
    for effect in effects {
        match effect {
            Effect::Quit => quit = true,
            Effect::Copy { what, text } => {
                let result = clipboard.copy(&text, term.backend_mut());
                let _ = tx.send(Msg::Copied { what, result });
            }
            Effect::Send { id, request } => {
                let (client, tx) = (client.clone(), tx.clone());
                tokio::spawn(async move {
                    let result = execute(&client, &request).await;
                    // The receiver is gone only when the dashboard has quit.
                    let _ = tx.send(Msg::Answer(Box::new(Answer { id, request, result })));
                });
            }
        }
    }
    quit
}

/// Terminal events the app cares about: key presses (not releases or repeats of releases),
/// the mouse, and resizes.
fn to_msg(event: Event) -> Option<Msg> {
    match event {
        Event::Key(key) if key.kind == KeyEventKind::Press => Some(Msg::Key(key)),
        Event::Mouse(mouse) => Some(Msg::Mouse(mouse)),
        Event::Resize(..) => Some(Msg::Resize),
        _ => None,
    }
}

/// SIGTERM, SIGHUP (the SSH connection dropped) and SIGINT end the dashboard cleanly.
#[cfg(unix)]
async fn end_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM"),
        _ = hup.recv() => tracing::info!("SIGHUP"),
        _ = int.recv() => tracing::info!("SIGINT"),
    }
}

#[cfg(not(unix))]
async fn end_signal() {
    std::future::pending::<()>().await
}

async fn event_loop(term: &mut Term, client: Client, demo: bool, mut clipboard: Clipboard) -> std::io::Result<()> {
    let theme = Theme::from_env();
    let (tx, mut rx) = unbounded_channel();
    let mut app = App::new(demo);
    let mut events = EventStream::new();
    let signal = end_signal();
    tokio::pin!(signal);
    perform(app.start(), &client, &tx, &mut clipboard, term);
    term.draw(|f| view::draw(f, &app, &theme, Instant::now()))?;
    loop {
        let wake = app.next_wake(Instant::now());
        let timer = async {
            match wake {
                Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
                None => std::future::pending().await,
            }
        };
        let msg = tokio::select! {
            event = events.next() => match event {
                Some(Ok(event)) => match to_msg(event) {
                    Some(msg) => msg,
                    None => continue,
                },
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            },
            Some(msg) = rx.recv() => msg,
            () = timer => Msg::Tick,
            () = &mut signal => return Ok(()),
        };
        let effects = app.update(msg, Instant::now());
        if perform(effects, &client, &tx, &mut clipboard, term) || app.should_quit() {
            return Ok(());
        }
        if app.take_dirty() {
            term.draw(|f| view::draw(f, &app, &theme, Instant::now()))?;
        }
    }
}
