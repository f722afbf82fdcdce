//! The one-shot commands: one API call (or two), printed as an aligned table for people or as
//! JSON for scripts. JSON mirrors the API's own envelopes so that integrators see one shape.

mod attention;
mod audit;
mod bulk;
mod buying;
mod check;
mod error;
mod finding;
#[cfg(feature = "gateway")]
mod gateway;
mod listen;
mod lists;
pub(crate) mod mcp;
mod metrics;
mod money;
mod notices;
mod output;
mod qr;
mod requests;
#[cfg(feature = "sandbox")]
mod sandbox;
mod shell;
mod table;
mod triage;
mod watch;
#[cfg(not(feature = "sandbox"))]
mod without_sandbox;

pub use check::unknown_line as check_unknown_line;
pub use error::{CommandError, EXIT_CHARGED_OTHER, EXIT_CREDENTIALS_REFUSED, EXIT_NOT_KNOWN};
#[cfg(feature = "gateway")]
pub use gateway::run as run_gateway;
pub use notices::say;
pub use output::{Form, Output};
#[cfg(feature = "sandbox")]
pub use sandbox::{Demo, run_sandbox, start_demo};
#[cfg(not(feature = "sandbox"))]
pub use without_sandbox::{Demo, start_demo};

/// Runs a command that needs no API connection, if `command` is one.
pub fn run_local(command: &Command, output: &Output) -> Option<Result<(), CommandError>> {
    Some(match command {
        Command::Audit { since, team: false } => audit::run(since.as_deref(), output),
        Command::Completions { shell } => shell::completions(*shell),
        Command::Man => shell::man(),
        _ => return None,
    })
}

use crate::cli::{BulkArgs, Command, ProfileAction};
use crate::commands::output::{out, outln};
use esimdash_api::Client;
use esimdash_api::model::{Esim, EsimQuery, OrderQuery, Plan, ProfileUpdate};
use esimdash_domain::iccid::{EsimIccid, Iccid};
use esimdash_domain::purchase::NOTHING_TOPPED_UP;
use esimdash_front::bulk::rows::Kind;
use esimdash_front::config::Preferences;
use esimdash_front::format::records;
use esimdash_front::format::verdict;
use esimdash_inventory::kept::Kept;
use serde_json::json;
use table::Table;

/// What the account keeps on disk between sessions, where it keeps it: its inventory index and,
/// beside it, the orders the money commands read. Neither for `--demo` or `--no-cache`.
#[derive(Default)]
pub struct Saved {
    pub index: Option<Kept>,
    /// The directory and the account's key (`esimdash_inventory::store::account_key`).
    pub at: Option<(std::path::PathBuf, String)>,
}

impl Saved {
    /// The account's orders as the money commands read them: kept here, else for this command.
    pub fn ledger(&self) -> esimdash_ledger::Ledger {
        ledger_at(self.at.as_ref())
    }

    /// The orders a runway is told from, read on a thread started now (SQLite's open and first
    /// read are blocking: on the runtime's thread they held up a request meant to be in flight
    /// meanwhile): those from `since` on alone where they are young (`Ledger::young`), read
    /// without opening the file to write, else the ledger, to be brought up to date.
    pub fn orders_aside(
        &self,
        since: chrono::DateTime<chrono::Utc>,
        now: chrono::DateTime<chrono::Utc>,
        max_age: chrono::Duration,
    ) -> impl std::future::Future<Output = money::Orders> + use<> {
        let at = self.at.clone();
        let open = move || {
            let young = at.as_ref().and_then(|(dir, account)| {
                esimdash_ledger::Ledger::young((dir.as_path(), account.as_str()), since, now, max_age)
            });
            match young {
                Some((sales, read_at)) => money::Orders::Young { sales, read_at },
                None => money::Orders::Kept(Box::new(ledger_at(at.as_ref()))),
            }
        };
        let reading = tokio::task::spawn_blocking(open);
        let at = self.at.clone();
        async move {
            match reading.await {
                Ok(orders) => orders,
                Err(_) => money::Orders::Kept(Box::new(ledger_at(at.as_ref()))),
            }
        }
    }
}

/// The orders kept at `at` (the directory and the account), else for this command.
fn ledger_at(at: Option<&(std::path::PathBuf, String)>) -> esimdash_ledger::Ledger {
    esimdash_ledger::Ledger::open(at.map(|(dir, account)| (dir.as_path(), account.as_str())))
}

/// Runs one API command as a session of its own: notices (earlier payments settled, waiting
/// for another process) go to stderr, payments an earlier session left unsettled are settled
/// first, and a stop signal ends it at once unless a payment waits for its answer.
pub async fn run_session(
    command: &Command,
    client: &Client,
    prefs: &Preferences,
    saved: &Saved,
    output: &Output,
) -> Result<(), CommandError> {
    notices::listen(client, output);
    if client.base_url().is_cleartext() && !client.base_url().is_loopback() {
        notices::say(&format!(
            "the connection to {} is not encrypted (allow_http): the secret key and every request travel in clear",
            client.base_url().origin()
        ));
    }
    let work = async {
        client.settle_earlier().await;
        run(command, (client, prefs, saved), output).await
    };
    match notices::until_done_or_stopped(work, client.request_timeout()).await {
        // A stop is how a watch or a metrics server ends (Ctrl-C, systemd's SIGTERM): done.
        Err(CommandError::Interrupted(stop)) if command.serves() => {
            notices::say(&format!("{}: stopped", stop.name()));
            Ok(())
        }
        other => other,
    }
}

/// Runs one API command and prints its result: against the account's client, with the user's
/// preferences and what the account keeps (`saved`).
async fn run(
    command: &Command,
    (client, prefs, saved): (&Client, &Preferences, &Saved),
    output: &Output,
) -> Result<(), CommandError> {
    let index = saved.index.as_ref();
    match command {
        Command::Balance { orders } => {
            let max_age = attention::max_age(orders.max_age, prefs);
            money::balance(client, saved, max_age, output).await
        }
        Command::Report { since, by, .. } => money::report(client, since, by, saved, output).await,
        Command::Check { what } => check::run(client, what, prefs, saved).await,
        Command::Watch(args) => {
            // A keeper is a process that stays: not `--once`. Its polls read every page in
            // turn: the keeper holds the account and reads the orders' totals.
            if !args.once {
                start_keeper(client, saved, prefs, esimdash_front::keeper::Reads::BESIDE_A_WATCH);
            }
            watch::run(client, prefs, args).await
        }
        Command::Mcp { allow_writes } => mcp::serve(client, prefs, saved, *allow_writes).await,
        Command::Requests { .. } | Command::Approve { .. } | Command::Refuse { .. } => {
            requests::run(command, client, output).await
        }
        Command::Metrics { listen, every } => {
            if listen.is_some() {
                start_keeper(client, saved, prefs, esimdash_front::keeper::Reads::ALL);
            }
            metrics::run(client, index, prefs, *listen, std::time::Duration::from_secs(*every)).await
        }
        Command::Plans { slug: Some(slug), .. } => plan(client, slug, output).await,
        Command::Plans {
            location, slug: None, ..
        } => lists::plans(client, location.as_deref(), output).await,
        Command::Orders { list, q, .. } => {
            let query = OrderQuery {
                page: list.page,
                page_size: list.page_size,
                status: list.status.clone().unwrap_or_default(),
                q: q.clone(),
                iccid: None,
            };
            lists::orders(client, query, list, output).await
        }
        Command::Esims { .. } => esims(command, client, (prefs, index), output).await,
        Command::Triage { iccid, country, out } => {
            let iccid = typed_iccid(iccid)?;
            triage::run(client, index, &iccid, country.as_deref(), out.as_deref(), output).await
        }
        Command::Qr { iccid, link, png, svg } => {
            let esim = find(client, index, &typed_iccid(iccid)?).await?;
            let files = qr::Files {
                png: png.as_deref(),
                svg: svg.as_deref(),
            };
            qr::run(client, &esim, *link, files, output).await
        }
        Command::Profile { action } => profile(client, action.as_ref(), output).await,
        Command::Topup { .. } | Command::Buy { .. } => spend(command, client, index, output).await,
        #[cfg(feature = "sandbox")]
        Command::Sandbox(_) => Err(runs_on_its_own()),
        #[cfg(feature = "gateway")]
        Command::Gateway { .. } => Err(runs_on_its_own()),
        Command::Audit { since, team: true } => audit::team(client, since.as_deref(), output).await,
        Command::Audit { team: false, .. } | Command::Completions { .. } | Command::Man => Err(runs_on_its_own()),
    }
}

fn runs_on_its_own() -> CommandError {
    CommandError::Usage("this command needs no API connection and runs on its own".to_string())
}

/// `topup` and `buy`: a single payment, a bulk file, or the top-ups offered for an eSIM.
async fn spend(command: &Command, client: &Client, index: Option<&Kept>, output: &Output) -> Result<(), CommandError> {
    // Where the index saw the eSIM: its record is read there when the server has no lookup.
    let seen = |iccid: &Iccid| index.and_then(|i| i.whereabouts(iccid.as_str()));
    match command {
        Command::Topup {
            bulk: BulkArgs {
                from: None,
                dry_run,
                result,
            },
            ..
        }
        | Command::Buy {
            bulk: BulkArgs {
                from: None,
                dry_run,
                result,
            },
            ..
        } if *dry_run || result.is_some() => Err(CommandError::Usage(
            "--dry-run and --result go with --from FILE.csv (a bulk file); nothing was paid".to_string(),
        )),
        Command::Topup {
            iccid: Some(iccid),
            slug: None,
            ..
        } => {
            let iccid = typed_iccid(iccid)?;
            buying::offered(client, &iccid, seen(&iccid), output).await
        }
        Command::Topup {
            bulk: bulk @ BulkArgs { from: Some(file), .. },
            spend,
            ..
        } => bulk::run(client, Kind::Topup, file, bulk, spend, output).await,
        Command::Buy {
            bulk: bulk @ BulkArgs { from: Some(file), .. },
            spend,
            ..
        } => bulk::run(client, Kind::Order, file, bulk, spend, output).await,
        Command::Topup {
            iccid: Some(iccid),
            slug: Some(slug),
            spend,
            ..
        } => {
            // A read-only session says so first, whatever was typed.
            let iccid = client
                .ensure_writable(esimdash_api::TOPUP)
                .map_err(CommandError::from)
                .and_then(|()| typed_iccid(iccid))
                .map_err(|e| e.nothing_moved(NOTHING_TOPPED_UP))?;
            buying::topup(client, &iccid, slug, seen(&iccid), spend, output).await
        }
        Command::Buy {
            slug: Some(slug),
            spend,
            ..
        } => buying::buy(client, slug, spend, output).await,
        _ => Err(CommandError::Usage(
            "say what to pay: --iccid and --slug (a top-up), --slug (an order), or --from FILE.csv".to_string(),
        )),
    }
}

async fn plan(client: &Client, slug: &str, output: &Output) -> Result<(), CommandError> {
    let plan = client.plan(slug).await?;
    if output.is_json() {
        return output.print_json(&plan_json(&plan));
    }
    out!("{}", plan_detail(&plan));
    Ok(())
}

/// `plans --slug S --json`: the plan, as the API gives it.
pub(crate) fn plan_json(plan: &Plan) -> serde_json::Value {
    json!({ "data": plan })
}

/// `esims --iccid X --json`: the eSIM as the API gives it, its verdict (its state in words and
/// what to tell the customer), and the earlier profiles of a reissued ICCID.
pub(crate) fn esim_json(esim: &Esim, earlier: &[Esim]) -> serde_json::Value {
    let verdict = verdict::of(esim, chrono::Utc::now());
    json!({ "esim": esim, "verdict": verdict, "earlierProfiles": earlier })
}

/// An order's eSIMs, each as `esims --iccid` gives it (`esim_json`), under `esims`; an order
/// none of whose eSIMs is found is said in words (no order by that number, or where its eSIM
/// may be).
pub(crate) async fn order_esims_json(
    client: &Client,
    index: Option<&Kept>,
    number: &str,
) -> Result<serde_json::Value, CommandError> {
    let number = number.trim();
    let iccids = finding::iccids_of_order(client, index, number).await?;
    if iccids.is_empty() {
        let query = OrderQuery {
            q: Some(number.to_string()),
            ..OrderQuery::default()
        };
        let orders = client.orders(&query).await?.orders;
        let number = esimdash_domain::text::sanitize(number);
        return Err(CommandError::NotFound(
            match orders.iter().find(|o| o.record.provider_order_no == *number) {
                None => format!("no order {number} in this account"),
                Some(order) => format!(
                    "order {number} ({}) has no eSIM in the account's kept index nor among the newest 300 eSIMs: a pending order's eSIM comes once allocated; an older one is found by its ICCID (esims --iccid)",
                    order.record.status
                ),
            },
        ));
    }
    let mut esims = Vec::new();
    for iccid in &iccids {
        let (esim, earlier) = find_profiles(client, index, &typed_iccid(iccid)?).await?;
        esims.push(esim_json(&esim, &earlier));
    }
    Ok(json!({ "order": number, "esims": esims }))
}

/// `esims`: one eSIM, an order's, those needing attention, or a page of the list (or all).
async fn esims(
    command: &Command,
    client: &Client,
    (prefs, index): (&Preferences, Option<&Kept>),
    output: &Output,
) -> Result<(), CommandError> {
    match command {
        Command::Esims { iccid: Some(iccid), .. } => esim(client, index, &typed_iccid(iccid)?, output).await,
        Command::Esims {
            order: Some(number), ..
        } => order_esims(client, index, number, output).await,
        Command::Esims {
            list,
            iccid: None,
            attention: true,
            max_age,
            budget,
            ..
        } => {
            let picture = crate::cli::PictureArgs {
                max_age: *max_age,
                budget: *budget,
            };
            let status = list.status.clone().unwrap_or_default();
            let means = attention::means(&picture, prefs);
            attention::list(client, index, (status, prefs.attention), means, output).await
        }
        Command::Esims { list, iccid: None, .. } => {
            let query = EsimQuery {
                page: list.page,
                page_size: list.page_size,
                status: list.status.clone().unwrap_or_default(),
                iccid: None,
            };
            lists::esims(client, query, list, output).await
        }
        _ => Err(CommandError::Usage("not an eSIM list's command".into())),
    }
}

/// `esims --order NUMBER`: each of the order's eSIMs as `esims --iccid` shows it.
async fn order_esims(client: &Client, index: Option<&Kept>, number: &str, output: &Output) -> Result<(), CommandError> {
    let found = order_esims_json(client, index, number).await?;
    if output.is_json() {
        return output.print_json(&found);
    }
    for (i, item) in found["esims"].as_array().into_iter().flatten().enumerate() {
        let esim: Esim =
            serde_json::from_value(item["esim"].clone()).map_err(|e| CommandError::Usage(e.to_string()))?;
        let verdict = verdict::of(&esim, chrono::Utc::now());
        outln!("{}{}", if i > 0 { "\n" } else { "" }, verdict::text(&verdict));
        out!("{}", esim_detail(&esim));
    }
    Ok(())
}

async fn esim(client: &Client, index: Option<&Kept>, iccid: &Iccid, output: &Output) -> Result<(), CommandError> {
    let (esim, earlier) = find_profiles(client, index, iccid).await?;
    if output.is_json() {
        return output.print_json(&esim_json(&esim, &earlier));
    }
    let verdict = verdict::of(&esim, chrono::Utc::now());
    outln!("{}", verdict::text(&verdict));
    out!("{}", esim_detail(&esim));
    for old in &earlier {
        let words = verdict::of(old, chrono::Utc::now()).label;
        outln!(
            "\nThis ICCID was issued before: an earlier profile, {} ({words}), is not the current one.",
            old.raw_order_json.esim_tran_no
        );
    }
    Ok(())
}

/// The profile, or (`set`) the profile after changing the fields given.
async fn profile(client: &Client, action: Option<&ProfileAction>, output: &Output) -> Result<(), CommandError> {
    let profile = match action {
        None => client.profile().await?,
        Some(ProfileAction::Set {
            company,
            country,
            website,
        }) => {
            if company.is_none() && country.is_none() && website.is_none() {
                return Err(CommandError::Usage(
                    "profile set needs at least one of --company, --country, --website".to_string(),
                ));
            }
            client.ensure_writable(esimdash_api::PROFILE_UPDATE)?;
            let update = ProfileUpdate {
                company_name: company.clone(),
                country: country.clone(),
                website: website.clone(),
            };
            client.update_profile(&update).await?
        }
    };
    if output.is_json() {
        return output.print_json(&json!({ "profile": profile }));
    }
    out!("{}", fields_table(records::profile_fields(&profile)));
    Ok(())
}

/// Keeps the account's picture young beside a long-running command (`esimdash_front::keeper`),
/// when it keeps an index and has a state folder for the keeper's lock.
fn start_keeper(client: &Client, saved: &Saved, prefs: &Preferences, reads: esimdash_front::keeper::Reads) {
    let (Some(kept), Some((dir, account))) = (saved.index.clone(), client.state_place()) else {
        return;
    };
    let keeping = esimdash_front::keeper::Keeping {
        share: prefs.keeper_share,
        reads,
        lock: esimdash_front::keeper::lock_path(&dir, &account),
    };
    tokio::spawn(esimdash_front::keeper::keep(client.clone(), kept, keeping));
}

/// An ICCID as typed on the command line, checked once, where the command starts (after what
/// the command says first, such as a read-only session's refusal).
pub(crate) fn typed_iccid(typed: &EsimIccid) -> Result<Iccid, CommandError> {
    typed
        .valid()
        .cloned()
        .map_err(|e| CommandError::Usage(format!("{:?} is not an ICCID: {e}", typed.as_str())))
}

/// Finds an eSIM of this account by its ICCID: its current profile.
async fn find(client: &Client, index: Option<&Kept>, iccid: &Iccid) -> Result<Esim, CommandError> {
    find_profiles(client, index, iccid).await.map(|(current, _)| current)
}

/// The current profile of an ICCID and the earlier ones (a provider reissues ICCIDs).
async fn find_profiles(
    client: &Client,
    index: Option<&Kept>,
    iccid: &Iccid,
) -> Result<(Esim, Vec<Esim>), CommandError> {
    let not_found = || CommandError::NotFound(format!("no eSIM with ICCID {iccid} in this account"));
    let profiles = match finding::profiles(client, index, iccid).await? {
        finding::Finding::Profiles(profiles) => profiles,
        finding::Finding::Absent => return Err(not_found()),
        finding::Finding::Missed(searched) => {
            return Err(CommandError::Missed {
                iccid: iccid.clone(),
                searched,
            });
        }
    };
    let mut profiles = profiles.into_iter();
    let current = profiles.next().ok_or_else(not_found)?;
    Ok((current, profiles.collect()))
}

fn esim_detail(e: &Esim) -> String {
    let raw = &e.raw_order_json;
    let mut rows = records::esim_fields(e);
    rows.push((
        "Activation code",
        raw.ac
            .clone()
            .unwrap_or_else(|| "(in the QR image only: esimdash qr ICCID)".to_string()),
    ));
    rows.push(("QR image", raw.qr_code_url.clone()));
    fields_table(rows)
}

/// A record's fields as a two-column table.
fn fields_table(rows: records::Fields) -> String {
    let mut t = Table::of(&["FIELD", "VALUE"]);
    for (k, v) in rows {
        t.row(vec![k.to_string(), v]);
    }
    t.render()
}

pub(crate) fn page_footer(page: u64, size: u64, total: u64, what: &str) -> String {
    if total == 0 {
        return format!("no {what}");
    }
    let pages = if size == 0 { 0 } else { total.div_ceil(size) };
    format!("page {page} of {pages} ({total} {what})")
}

fn plan_detail(p: &Plan) -> String {
    fields_table(records::plan_fields(p))
}
