//! Bulk top-ups and orders from a file: every row checked before anything is paid (the eSIM
//! owned, the slug offered for it, the quantity, the whole total against the balance), then
//! paid row by row, each a payment of its own through the client (its idempotency key, the
//! audit trail, the account's lock, the rate budget). The journal (`journal`) makes a re-run
//! after a crash, `kill -9` or Ctrl-C skip the rows already placed and settle the one in flight,
//! so that no row is ever paid twice.

pub mod journal;
pub mod result;
pub mod rows;

use crate::purchase::{explain, line_total};
use esimdash_api::audit::{Outcome, PaymentRecord};
use esimdash_api::model::Plan;
use esimdash_api::{ApiError, Client, Payment};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::order_no::OrderNo;
use futures_util::{StreamExt, TryStreamExt};
use journal::{Attempt, Journal, JournalError, Written};
use rows::{Kind, Row, STOP_EVERY};
use rust_decimal::Decimal;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A row and where it stands.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub row: Row,
    /// Its total, once the price is known (checked rows to pay).
    pub total: Option<Decimal>,
    pub state: State,
}

/// What is not right with a placed row, in words: said in the result's `error` column, and in
/// the exit status.
#[derive(Debug, Clone, PartialEq)]
pub enum Caveat {
    /// Placed for another total than the one confirmed (`ChargedOther::sentence`): exit 7.
    ChargedOther(String),
    /// Sent once more after a lost answer, and the answer did not confirm the key: possibly a
    /// second order. Exit 5.
    PossiblySecond(String),
}

impl Caveat {
    pub fn words(&self) -> &str {
        match self {
            Caveat::ChargedOther(words) | Caveat::PossiblySecond(words) => words,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum State {
    /// Checked, not paid yet.
    ToPay,
    /// Placed: this order; `now`, in this run (else by an earlier one); `caveat`: what the user
    /// must check about it.
    Placed {
        order: String,
        now: bool,
        caveat: Option<Caveat>,
    },
    /// The server refused it (nothing moved): a re-run tries it again.
    Failed(String),
    /// No answer and no telling from the order list: not paid again without `--again`.
    Unknown(String),
    /// The checks refuse it: nothing of the file is paid until it is fixed.
    Invalid(String),
    /// It repeats a payment made minutes ago elsewhere (`earlier`, in words), refused as
    /// invalid unless `--again`; `said` is the refusal with that hint.
    Repeat { earlier: String, said: String },
    /// Placed by a run that placed its file whole (`earlier`: when and from which file): paid
    /// again only with `--again`.
    PaidBefore { earlier: String, said: String },
}

/// What became of a row, as runs count it and the result CSV and `--json` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowOutcome {
    NotPaid,
    Placed,
    Failed,
    Unknown,
    Invalid,
    /// Nothing is wrong with the row: it pays what was paid before.
    Repeat,
}

impl RowOutcome {
    pub fn word(self) -> &'static str {
        match self {
            RowOutcome::NotPaid => "not_paid",
            RowOutcome::Placed => "placed",
            RowOutcome::Failed => "failed",
            RowOutcome::Unknown => "unknown",
            RowOutcome::Invalid => "invalid",
            RowOutcome::Repeat => "repeat",
        }
    }
}

impl State {
    pub fn outcome(&self) -> RowOutcome {
        match self {
            State::ToPay => RowOutcome::NotPaid,
            State::Placed { .. } => RowOutcome::Placed,
            State::Failed(_) => RowOutcome::Failed,
            State::Unknown(_) => RowOutcome::Unknown,
            State::Invalid(_) => RowOutcome::Invalid,
            State::Repeat { .. } | State::PaidBefore { .. } => RowOutcome::Repeat,
        }
    }

    /// As the result CSV and `--json` say it.
    pub fn word(&self) -> &'static str {
        self.outcome().word()
    }

    pub fn order(&self) -> Option<&str> {
        match self {
            State::Placed { order, .. } => Some(order),
            _ => None,
        }
    }

    pub fn error(&self) -> Option<&str> {
        match self {
            State::Placed {
                caveat: Some(caveat), ..
            } => Some(caveat.words()),
            State::Failed(e)
            | State::Unknown(e)
            | State::Invalid(e)
            | State::Repeat { said: e, .. }
            | State::PaidBefore { said: e, .. } => Some(e),
            _ => None,
        }
    }
}

/// The file checked: every row's state, and the balance it is paid from.
#[derive(Debug, Clone)]
pub struct Batch {
    pub lines: Vec<Line>,
    /// The file's lines that are no rows at all (a malformed ICCID, a quantity out of range):
    /// with any, nothing is paid.
    pub problems: Vec<String>,
    /// Read only when something is left to pay.
    pub balance: Option<Decimal>,
    /// The server refused the credentials during the run (the run stopped there).
    pub refused: Option<ApiError>,
}

impl Batch {
    pub fn to_pay(&self) -> impl Iterator<Item = &Line> {
        self.lines.iter().filter(|l| l.state == State::ToPay)
    }

    /// The total of the rows left to pay, computed checked (`None`: past what a decimal holds).
    pub fn total(&self) -> Option<Decimal> {
        self.to_pay()
            .try_fold(Decimal::ZERO, |sum, l| sum.checked_add(l.total.unwrap_or_default()))
    }

    /// The rows placed by this run.
    pub fn placed_now(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| matches!(l.state, State::Placed { now: true, .. }))
            .count()
    }

    /// The rows placed with this kind of caveat.
    pub fn with_caveat(&self, kind: fn(&Caveat) -> bool) -> usize {
        self.lines
            .iter()
            .filter(|l| matches!(&l.state, State::Placed { caveat: Some(c), .. } if kind(c)))
            .count()
    }

    pub fn count(&self, outcome: RowOutcome) -> usize {
        self.lines.iter().filter(|l| l.state.outcome() == outcome).count()
    }
}

/// A file ready to pay: its rows checked, its journal open (locked unless a dry run).
pub struct Prepared {
    pub batch: Batch,
    pub journal: Journal,
}

/// How a run goes with the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Locked for this run (a dry run only reads the journal).
    pub lock: bool,
    /// Rows whose outcome is unknown, and rows paid by an earlier run, are paid again.
    pub again: bool,
    /// The file was written for this run alone (the dashboard's marks): a run of the same rows
    /// later is a new payment, not this run going on.
    pub own_file: bool,
}

/// Reads `file`, opens the account's journal (beside the audit trail) and checks every row.
/// Refused in a read-only session.
pub async fn prepare(client: &Client, kind: Kind, file: &Path, run: Run) -> Result<Prepared, CheckError> {
    client.ensure_writable(match kind {
        Kind::Topup => esimdash_api::TOPUP,
        Kind::Order => esimdash_api::PLACE_ORDER,
    })?;
    // The file, the journal and the trail are read, and each row judged by them, on a thread
    // of their own: on the runtime's one thread a large file held every signal unheard until it
    // was done. The thread looks for a stop every few thousand rows, so a process that ends on
    // one does not wait for it either.
    let recalled = {
        let (client, file) = (client.clone(), file.to_path_buf());
        tokio::task::spawn_blocking(move || recall(&client, kind, &file, run, &esimdash_api::signals::stopping))
    };
    let Recalled {
        lines,
        problems,
        mut journal,
        records,
    } = match recalled.await {
        Ok(recalled) => recalled?,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => return Err(CheckError::Stopped),
    };
    let batch = check(client, kind, lines, problems, &mut journal, &records, run.again).await?;
    Ok(Prepared { batch, journal })
}

/// What the file, its journal and the trail say before the API is asked.
struct Recalled {
    lines: Vec<Line>,
    problems: Vec<String>,
    journal: Journal,
    /// The account's payments in the trail, by key.
    records: HashMap<String, PaymentRecord>,
}

/// Reads the file and its journal and the trail, and tells each row's earlier payment.
fn recall(
    client: &Client,
    kind: Kind,
    file: &Path,
    run: Run,
    stopped: &dyn Fn() -> bool,
) -> Result<Recalled, CheckError> {
    let rows::Parsed { rows, problems } = rows::read(file, kind, stopped).map_err(|e| match e {
        rows::ReadError::File(e) => CheckError::File(format!("{}:\n{e}", file.display())),
        rows::ReadError::Stopped => CheckError::Stopped,
    })?;
    let (dir, account) = client.state_place().ok_or(CheckError::NoStateDir)?;
    let name = match kind {
        Kind::Topup => "topup",
        Kind::Order => "order",
    };
    let identities: Vec<String> = rows.iter().map(Row::identity).collect();
    let source = journal::Source::of(name, identities.iter().map(String::as_str), file, run.own_file);
    let mut journal = Journal::open(&journal::path_for(&dir, &account, name), run.lock, source)?;
    let records: HashMap<String, PaymentRecord> = client
        .payment_records()
        .map_err(CheckError::Trail)?
        .into_iter()
        .map(|r| (r.key.clone(), r))
        .collect();
    let ours: std::collections::HashSet<&str> = records.keys().map(String::as_str).collect();
    journal.adopt_legacy(&dir, name, &ours, file)?;
    let mut lines = Vec::with_capacity(rows.len());
    for (n, row) in rows.into_iter().enumerate() {
        if n % STOP_EVERY == 0 && stopped() {
            return Err(CheckError::Stopped);
        }
        let state = match journal.attempt(&row.identity()) {
            None => State::ToPay,
            Some(attempt) => earlier(attempt, &records, &mut journal, run.again)?,
        };
        lines.push(Line {
            row,
            total: None,
            state,
        });
    }
    Ok(Recalled {
        lines,
        problems,
        journal,
        records,
    })
}

/// Checks the rows left to pay: whether the API offers them (one request per eSIM or plan,
/// each row then found among its answers), the rule against repeats, and the balance. `again`:
/// rows whose outcome is unknown are paid again.
async fn check(
    client: &Client,
    kind: Kind,
    mut lines: Vec<Line>,
    problems: Vec<String>,
    journal: &mut Journal,
    records: &HashMap<String, PaymentRecord>,
    again: bool,
) -> Result<Batch, CheckError> {
    let mut prices = Prices::default();
    for (n, line) in lines.iter_mut().filter(|l| l.state == State::ToPay).enumerate() {
        breathe(n).await;
        match prices.of(client, kind, &line.row).await? {
            Ok(total) => line.total = Some(total),
            Err(problem) => line.state = State::Invalid(problem),
        }
    }
    if !again {
        // The rule against paying the same twice within minutes, said in the plan (a dry run
        // too) rather than met row after row: a payment made elsewhere (another file, a single
        // top-up) that this row repeats.
        let repeats = Repeats::index(records.values(), &journal.keys());
        for (n, line) in lines
            .iter_mut()
            .filter(|l| l.state == State::ToPay && l.row.occurrence == 1)
            .enumerate()
        {
            breathe(n).await;
            if let Some(earlier) = repeats.latest(&line.row.spend) {
                let earlier = esimdash_api::describe_earlier(earlier);
                let said = format!("{earlier}, not by this file: add --again to pay it a second time");
                line.state = State::Repeat { earlier, said };
            }
        }
    }
    let mut plan = Batch {
        lines,
        problems,
        balance: None,
        refused: None,
    };
    if plan.to_pay().next().is_some() {
        plan.balance = Some(client.balance().await?);
    }
    Ok(plan)
}

/// Every few thousand rows of a loop that may not wait for anything, lets the runtime run the
/// rest (a signal's listener on the same thread).
async fn breathe(n: usize) {
    if n % STOP_EVERY == STOP_EVERY - 1 {
        tokio::task::yield_now().await;
    }
}

/// The payments of the trail, not of this file, that a row would repeat within the repeat
/// window: the latest of each payment (action, eSIM, slug, quantity), found in one look.
struct Repeats<'a> {
    latest: HashMap<(&'a str, Option<&'a str>, &'a str, u32), &'a PaymentRecord>,
}

impl<'a> Repeats<'a> {
    fn index(records: impl Iterator<Item = &'a PaymentRecord>, ours: &HashSet<&str>) -> Self {
        let mut latest: HashMap<_, &PaymentRecord> = HashMap::new();
        let theirs = records.filter(|r| !ours.contains(r.key.as_str()) && esimdash_api::counts_as_repeated(r));
        for record in theirs {
            let key = (
                record.action.as_str(),
                record.iccid.as_deref(),
                record.slug.as_str(),
                record.quantity,
            );
            let kept = latest.entry(key).or_insert(record);
            if record.asked_at >= kept.asked_at {
                *kept = record;
            }
        }
        Self { latest }
    }

    fn latest(&self, spend: &esimdash_domain::purchase::Spend) -> Option<&'a PaymentRecord> {
        let key = (
            spend.what.action(),
            spend.what.iccid().map(Iccid::as_str),
            spend.slug.as_str(),
            spend.qty,
        );
        self.latest
            .get(&key)
            .copied()
            .filter(|r| esimdash_api::pays_the_same(r, spend))
    }
}

/// Why the rows could not be checked: nothing was paid.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The file cannot be read as rows (every problem, each with its line).
    #[error("{0}")]
    File(String),
    #[error(
        "a bulk payment keeps its journal beside the audit trail, and this session has none (no state directory: is HOME set?)"
    )]
    NoStateDir,
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The trail must be read to know what earlier runs paid.
    #[error("{0}; nothing was paid")]
    Trail(String),
    /// A stop (a signal) came while the rows were checked.
    #[error("stopped while the rows were checked; nothing was paid")]
    Stopped,
}

/// Where a row with an earlier payment stands: the journal's outcome, or for one that was in
/// flight, the audit trail's (the client settled it at the start of this session).
fn earlier(
    attempt: Attempt,
    records: &HashMap<String, PaymentRecord>,
    journal: &mut Journal,
    again: bool,
) -> Result<State, JournalError> {
    let unknown = |why: String| if again { State::ToPay } else { State::Unknown(why) };
    let (earlier_run, when_and_where) = (attempt.earlier_run, attempt.when_and_where());
    // The trail has the last word: a payment the journal left open, unknown or failed may
    // have been settled since (sent again under its key, or found in the order list).
    let trail = records.get(&attempt.key);
    let written = match (trail, attempt.outcome) {
        (Some(r), outcome) if r.outcome.is_some() => {
            let told = from_trail(r).unwrap_or(Written::Failed { error: String::new() });
            // The attempt is the row's last, under its own key: its outcome is the journal's.
            // One the journal tells alike (placed, refused, unknown) keeps the run's own words
            // and costs no line; only a different one is written.
            match outcome {
                Some(own) if std::mem::discriminant(&own) == std::mem::discriminant(&told) => own,
                _ => {
                    journal.outcome(&attempt.key, told.clone())?;
                    told
                }
            }
        }
        // Never recorded, or never sent: it did not leave.
        (None, None) => return Ok(State::ToPay),
        (Some(r), None) if r.sent_at.is_none() => return Ok(State::ToPay),
        (Some(_), None) => {
            return Ok(State::Unknown(
                "its payment is not settled yet (the server could not be asked, or another esimdash holds the account's payment lock): run again later".to_string(),
            ));
        }
        (_, Some(written)) => written,
    };
    Ok(match written {
        // Placed by an earlier run: paying it again is a new payment, made on purpose.
        Written::Placed { order } if earlier_run => {
            if again {
                State::ToPay
            } else {
                let earlier = format!("was placed {when_and_where} (order {order})");
                let said = format!("{earlier}: add --again to pay it a second time");
                State::PaidBefore { earlier, said }
            }
        }
        Written::Placed { order } => State::Placed {
            order,
            now: false,
            caveat: None,
        },
        Written::Failed { .. } => State::ToPay,
        Written::Unknown { error } => unknown(error),
    })
}

/// A settled payment's outcome in the journal's words (`None`: not settled).
fn from_trail(record: &PaymentRecord) -> Option<Written> {
    Some(match record.outcome.as_ref()? {
        Outcome::Placed { order_no } => Written::Placed {
            order: order_no.clone(),
        },
        Outcome::NotPlaced => Written::Failed {
            error: "not placed (an earlier run was interrupted)".to_string(),
        },
        Outcome::NotFound => Written::Unknown {
            error: "its answer was lost and the order list showed no such order: most likely not placed; check `esimdash orders`, then run again with --again to pay it".to_string(),
        },
        Outcome::Ambiguous { orders } => Written::Unknown {
            error: format!(
                "its answer was lost and the order list shows several orders that could be it ({}); check them, then run again with --again to pay it",
                orders.join(", ")
            ),
        },
    })
}

/// What the API offers, asked once per eSIM (top-ups) or plan (orders); each row then finds
/// its plan by its slug, never by a scan or a copy of the offer.
#[derive(Default)]
struct Prices {
    topups: HashMap<String, Result<Offered, String>>,
    plans: HashMap<String, Result<Plan, String>>,
}

/// The top-ups offered for an eSIM, by slug.
struct Offered {
    plans: HashMap<String, Plan>,
    /// In the API's order, for a row whose slug is not among them.
    slugs: Vec<String>,
}

impl Offered {
    fn new(plans: Vec<Plan>) -> Self {
        let slugs = plans.iter().map(|p| p.slug.clone()).collect();
        let mut by_slug = HashMap::with_capacity(plans.len());
        for plan in plans {
            // The first of a slug offered twice, as a scan in order found it.
            by_slug.entry(plan.slug.clone()).or_insert(plan);
        }
        Self { plans: by_slug, slugs }
    }

    fn plan(&self, iccid: &Iccid, slug: &str) -> Result<&Plan, String> {
        if self.slugs.is_empty() {
            return Err(format!("no top-up is offered for {iccid} now"));
        }
        self.plans.get(slug).ok_or_else(|| {
            format!(
                "{slug:?} is not offered for {iccid}; offered: {}",
                self.slugs.join(", ")
            )
        })
    }
}

impl Prices {
    /// The row's total, or why it cannot be paid.
    async fn of(&mut self, client: &Client, kind: Kind, row: &Row) -> Result<Result<Decimal, String>, ApiError> {
        let slug = &row.spend.slug;
        let plan = match (kind, row.iccid()) {
            (Kind::Topup, Some(iccid)) => self.topup(client, iccid, slug).await?,
            _ => self.order(client, slug).await?,
        };
        Ok(plan.and_then(|plan| {
            let unit = plan
                .sell_price()
                .ok_or_else(|| format!("the plan {} has no price", plan.slug))?;
            line_total(unit, row.spend.qty)
        }))
    }

    async fn topup(&mut self, client: &Client, iccid: &Iccid, slug: &str) -> Result<Result<&Plan, String>, ApiError> {
        let offered = match self.topups.entry(iccid.to_string()) {
            std::collections::hash_map::Entry::Occupied(known) => known.into_mut(),
            std::collections::hash_map::Entry::Vacant(new) => {
                new.insert(topup_plans_of(client, iccid).await?.map(Offered::new))
            }
        };
        Ok(match offered {
            Ok(offered) => offered.plan(iccid, slug),
            Err(why) => Err(why.clone()),
        })
    }

    async fn order(&mut self, client: &Client, slug: &str) -> Result<Result<&Plan, String>, ApiError> {
        let plan = match self.plans.entry(slug.to_string()) {
            std::collections::hash_map::Entry::Occupied(known) => known.into_mut(),
            std::collections::hash_map::Entry::Vacant(new) => {
                let asked = not_found_as(client.plan(slug).await, || format!("no plan {slug:?} in the catalog"))?;
                new.insert(asked)
            }
        };
        Ok(match plan {
            Ok(p) if p.is_topup() => Err(format!(
                "{slug:?} is a top-up plan: it goes in a top-up file, with an ICCID"
            )),
            Ok(p) => Ok(p),
            Err(why) => Err(why.clone()),
        })
    }
}

/// How many eSIMs' offers are asked at once (the client paces them within the budget).
const OFFERS_AT_ONCE: usize = 4;

/// The top-ups offered for each eSIM, in their order; one not in this account says so, any
/// other failure fails the whole (the form says it, nothing is paid).
pub async fn offers(client: &Client, iccids: &[Iccid]) -> Result<Vec<(Iccid, Result<Vec<Plan>, String>)>, ApiError> {
    futures_util::stream::iter(iccids.iter().cloned())
        .map(|iccid| async move { topup_plans_of(client, &iccid).await.map(|offered| (iccid, offered)) })
        .buffered(OFFERS_AT_ONCE)
        .try_collect()
        .await
}

/// The top-ups that may be paid for an eSIM (`purchase::topup_offer`: the API's offer judged
/// against its record), or (`Ok(Err)`) why none may: not in this account, or its state cannot
/// take data. Any other failure is the caller's (the check stops, the dashboard's window says
/// so).
pub async fn topup_plans_of(client: &Client, iccid: &Iccid) -> Result<Result<Vec<Plan>, String>, ApiError> {
    let offer = not_found_as(crate::purchase::topup_offer(client, iccid, None).await, || {
        format!("no eSIM with ICCID {iccid} in this account")
    })?;
    Ok(offer.and_then(|offer| match (offer.cannot_take_data(), offer) {
        (Some(_), crate::purchase::TopupOffer::Refused { why, .. }) => Err(format!("no top-up: {why}")),
        (_, other) => Ok(other.plans().to_vec()),
    }))
}

/// A 404 as the row's problem; any other failure stops the check.
fn not_found_as<T>(
    result: Result<T, ApiError>,
    problem: impl FnOnce() -> String,
) -> Result<Result<T, String>, ApiError> {
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(e) if e.status() == Some(404) => Ok(Err(problem())),
        Err(e) => Err(e),
    }
}

/// How a run of payments ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Every row to pay was tried.
    Done,
    /// A stop was asked (a signal, the dashboard's key): the payment in flight was waited for,
    /// no further row was started.
    Stopped,
    /// A payment's outcome is unknown: no further row was paid while the server's state is not
    /// known.
    AtUnknown,
    /// The server refused the credentials (`Batch::refused`): every further row would be too.
    Refused,
}

/// Pays the rows left to pay, in order, each recorded in the journal before it leaves and
/// after its outcome. `stop` is asked before each row (a signal, the dashboard's stop key):
/// once it holds no further row is started. `told` hears each row once it is done (for a
/// progress bar).
pub async fn pay(
    client: &Client,
    plan: &mut Batch,
    journal: &mut Journal,
    again: bool,
    stop: impl Fn() -> bool,
    mut told: impl FnMut(&Line),
) -> Result<Ended, JournalError> {
    let mut placed: HashSet<String> = plan
        .lines
        .iter()
        .filter(|l| l.state.order().is_some())
        .map(|l| l.row.identity())
        .collect();
    let left = plan.to_pay().count();
    for (n, line) in plan.lines.iter_mut().filter(|l| l.state == State::ToPay).enumerate() {
        if stop() {
            return Ok(Ended::Stopped);
        }
        let mut payment = Payment::new(line.row.spend.clone(), line.total);
        // A twin row is wanted as much as the first once the first is placed (the user confirmed
        // the file), not before: a copy of a file just paid meets the repeat rule, twins too.
        if again || line.row.twin_before().is_some_and(|twin| placed.contains(&twin)) {
            payment = payment.again();
        }
        journal.paying(&line.row.identity(), line.row.line, &payment.key)?;
        let refused = match pay_one(client, payment.clone()).await {
            Ok(state) => {
                line.state = state;
                None
            }
            Err(auth) => {
                line.state = State::Failed(explain(&auth, &line.row.spend.what));
                Some(auth)
            }
        };
        let written = match &line.state {
            State::Placed { order, .. } => Written::Placed { order: order.clone() },
            State::Unknown(error) => Written::Unknown { error: error.clone() },
            other => Written::Failed {
                error: other.error().unwrap_or_default().to_string(),
            },
        };
        journal.outcome(&payment.key, written)?;
        if line.state.order().is_some() {
            placed.insert(line.row.identity());
        }
        told(line);
        if let Some(auth) = refused {
            plan.refused = Some(auth);
            return Ok(Ended::Refused);
        }
        if matches!(line.state, State::Unknown(_)) {
            return Ok(Ended::AtUnknown);
        }
        if n + 1 < left && stop() {
            return Ok(Ended::Stopped);
        }
    }
    close_if_whole(plan, journal)?;
    Ok(Ended::Done)
}

/// Once every row of the file is placed, its rows are closed in the journal: the same rows
/// run again (from any path) are a new payment, paid only with `--again`.
pub fn close_if_whole(plan: &Batch, journal: &mut Journal) -> Result<(), JournalError> {
    if plan.lines.is_empty() || !plan.problems.is_empty() || plan.lines.iter().any(|l| l.state.order().is_none()) {
        return Ok(());
    }
    let identities: Vec<String> = plan.lines.iter().map(|l| l.row.identity()).collect();
    journal.close(identities.iter().map(String::as_str))
}

/// One row's payment, sent once; a lost answer is settled as a single payment's is. `Err`: the
/// server refused the credentials (nothing moved, and nothing further can be paid).
async fn pay_one(client: &Client, payment: Payment) -> Result<State, ApiError> {
    let what = payment.spend.what.clone();
    // A lost answer (also of the resend, where keys are honoured) is looked up in the order
    // list against the plan's orders read before: without them any older order could pass.
    let before: HashSet<OrderNo> = match client.recent_orders_for(payment.slug(), payment.iccid()).await {
        Ok(orders) => orders.into_iter().map(|o| o.record.provider_order_no).collect(),
        Err(e) if e.is_auth() => return Err(e),
        Err(e) => {
            return Ok(State::Failed(crate::purchase::nothing_moved(
                &e.to_string(),
                what.nothing_done(),
            )));
        }
    };
    let payment = payment.with_orders_before(&before);
    Ok(match client.pay(&payment).await {
        Ok(paid) => State::Placed {
            order: paid.placed.order.record.provider_order_no.to_string(),
            now: true,
            caveat: match (paid.charged_other, paid.delivery) {
                (Some(other), _) => Some(Caveat::ChargedOther(other.sentence())),
                (None, esimdash_api::Delivery::ResentUnconfirmed) => Some(Caveat::PossiblySecond(
                    "its answer was lost and it was sent once more, and the answer did not confirm its key: possibly a second order; check `esimdash orders`".to_string(),
                )),
                (None, _) => None,
            },
        },
        Err(error) if error.outcome_unknown() => match client.look_up_payment(&payment, &before).await {
            Ok(Some(order)) => State::Placed {
                order: order.record.provider_order_no.to_string(),
                now: true,
                caveat: esimdash_domain::purchase::charged_other(payment.total, order.total_sell_price, (None, None))
                    .map(|other| Caveat::ChargedOther(other.sentence())),
            },
            Ok(None) => State::Unknown(format!(
                "no answer came ({error}); the order list shows no such order: most likely not placed; check `esimdash orders`, then run again with --again to pay it"
            )),
            Err(lookup) => State::Unknown(format!(
                "no answer came ({error}) and the order list could not tell ({lookup}): it may or may not have been placed"
            )),
        },
        Err(error) if error.is_auth() => return Err(error),
        Err(error @ ApiError::Api { .. }) => State::Failed(explain(&error, &what)),
        Err(error) => State::Failed(crate::purchase::nothing_moved(&error.to_string(), what.nothing_done())),
    })
}
