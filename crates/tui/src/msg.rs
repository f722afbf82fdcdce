//! What flows through the dashboard: messages in (keys, mouse, timer, API answers) and effects out
//! (requests to send, quitting). `App::update` turns one into the other without doing any I/O.

use crate::money_read::Ledgers;
use crossterm::event::{KeyEvent, MouseEvent};
use esimdash_api::ApiError;
use esimdash_api::Client;
use esimdash_api::model::{Esim, EsimPage, EsimQuery, Order, OrderPage, OrderQuery, Plan, Profile, ProfileUpdate};
use esimdash_api::{Paid, Payment};
use esimdash_domain::iccid::Iccid;
use esimdash_front::clipboard::Delivery;
use std::collections::HashSet;

/// Page size of the inventory index's own reads (the API's maximum).
pub const SCAN_PAGE_SIZE: u64 = 100;

/// Identifies one background job (a request, an export, a file written), so that its answer
/// can be matched to what is still wanted.
pub type JobId = u64;

/// A call the app wants made.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Profile,
    Plans,
    Plan {
        slug: String,
    },
    Orders(OrderQuery),
    Esims(EsimQuery),
    /// A page of the whole inventory, read in the background for the eSIM search.
    EsimScan {
        page: u64,
    },
    /// One eSIM's current record, by the lookup or from the page at its place.
    FindEsim {
        iccid: Iccid,
        seen: Option<esimdash_inventory::Whereabouts>,
    },
    /// An eSIM's activation code: `ac`, or its QR image decoded.
    ActivationCode {
        esim: Box<Esim>,
    },
    UpdateProfile(ProfileUpdate),
    /// The money of the last 30 days (`Payload::Money`): the orders read from the top until a
    /// known one, in the background share.
    Money,
    /// What may be paid for an eSIM's top-up: the API's offer judged against its record, read
    /// by the lookup or at `seen` (answered with `Payload::TopupOffer`).
    TopupPlans {
        iccid: Iccid,
        seen: Option<esimdash_inventory::Whereabouts>,
    },
    /// The current records of eSIMs this session changed (topped up), so that every view shows
    /// the newer record at once: they reach the index through the client's tap (answered with
    /// `Payload::Refreshed`).
    RefreshEsims {
        iccids: Vec<Iccid>,
    },
    /// The top-up plans offered for each of these eSIMs (the marked ones, for a bulk top-up).
    TopupOffers {
        iccids: Vec<Iccid>,
    },
    /// The order numbers of a plan's newest orders, read before paying.
    OrdersOfPlan {
        slug: String,
        iccid: Option<Iccid>,
    },
    /// Moves money: a top-up or an order, sent by the client's `pay` (never repeated by the
    /// app; the client resends a lost answer once under the same key only where that is safe).
    Pay(Box<Payment>),
    /// The payments an assistant proposed, with the eSIMs' states (`Payload::Requests`).
    Requests,
    /// The first-line checks on an eSIM and its escalation pack (`Payload::Triaged`).
    Triage {
        iccid: Iccid,
        /// Where the index saw it (read there on a server without the lookup).
        seen: Option<esimdash_api::model::Whereabouts>,
    },
    /// A person's decision on one (`Payload::Decided`, in words): approved and paid once, or
    /// refused (`requests::approval::decide`).
    Decide {
        id: String,
        approve: bool,
    },
    /// After an unknown outcome: the order placed, if the order list shows it.
    LookUpPayment {
        payment: Box<Payment>,
        before: HashSet<esimdash_domain::order_no::OrderNo>,
    },
}

impl Request {
    /// Makes the call the request stands for: each request's call is written here, beside the
    /// request, so that adding one touches its client method, this file and its owner's handler.
    pub async fn run(&self, client: &Client, ledgers: &Ledgers) -> Result<Payload, ApiError> {
        Ok(match self {
            Request::Money => Payload::Money(Box::new(ledgers.overview(client).await?)),
            Request::Profile => Payload::Profile(client.profile().await?),
            Request::Plans => Payload::Plans(client.plans().await?),
            Request::Plan { slug } => Payload::Plan(client.plan(slug).await?),
            Request::Orders(q) => Payload::Orders(client.orders(q).await?),
            Request::Esims(q) => Payload::Esims(client.esims(q).await?),
            Request::EsimScan { page } => {
                // Nobody waits for it: within its share of the budget, after what the user asks.
                let (answer, place) = client.index_page(*page, SCAN_PAGE_SIZE).await?;
                Payload::IndexPage {
                    seen: Box::new(esimdash_inventory::Seen::read(&answer.esims, Some(place))),
                    total: answer.total,
                }
            }
            Request::FindEsim { iccid, seen } => {
                let (found, earlier) = client.find_profiles_at(iccid, *seen).await?;
                Payload::FoundEsim(found, earlier)
            }
            Request::ActivationCode { esim } => Payload::ActivationCode(client.activation_code(esim).await),
            Request::UpdateProfile(u) => Payload::ProfileSaved(client.update_profile(u).await?),
            Request::TopupPlans { iccid, seen } => {
                Payload::TopupOffer(esimdash_front::purchase::topup_offer(client, iccid, *seen).await?)
            }
            Request::RefreshEsims { iccids } => {
                for iccid in iccids {
                    client.find_esim_at(iccid, None).await?;
                }
                Payload::Refreshed
            }
            Request::TopupOffers { iccids } => Payload::Offers(esimdash_front::bulk::offers(client, iccids).await?),
            Request::OrdersOfPlan { slug, iccid } => Payload::OrderNumbers(
                client
                    .recent_orders_for(slug, iccid.as_ref())
                    .await?
                    .into_iter()
                    .map(|o| o.record.provider_order_no)
                    .collect(),
            ),
            Request::Pay(payment) => Payload::Paid(client.pay(payment).await?),
            Request::Requests => Payload::Requests(
                esimdash_front::requests::approval::listed_of(client)
                    .await
                    .map_err(|e| ApiError::Setup(e.to_string()))?,
            ),
            Request::Triage { iccid, seen } => Payload::Triaged(Box::new(
                esimdash_front::triage::of_iccid(client, iccid, *seen, None).await?,
            )),
            Request::Decide { id, approve } => {
                Payload::Decided(esimdash_front::requests::approval::decide(client, id, *approve).await)
            }
            Request::LookUpPayment { payment, before } => {
                Payload::FoundOrder(client.look_up_payment(payment, before).await?)
            }
        })
    }

    /// Whether the request changes something on the server (never sent again by itself).
    pub fn writes(&self) -> bool {
        matches!(
            self,
            Request::UpdateProfile(_) | Request::Pay(_) | Request::Decide { .. }
        )
    }
}

/// A successful answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    Profile(Profile),
    Plans(Vec<Plan>),
    TopupOffer(esimdash_front::purchase::TopupOffer),
    /// `RefreshEsims` read them.
    Refreshed,
    Plan(Plan),
    Orders(OrderPage),
    Esims(EsimPage),
    /// A page of the index's own read of the whole list (`Request::EsimScan`): its eSIMs with
    /// their place, and the list's total as the answer gave it (kept also where the place is
    /// not: a page holding more than its size).
    IndexPage {
        seen: Box<esimdash_inventory::Seen>,
        total: u64,
    },
    /// The code, or why there is none (no QR image, not decodable, not an activation code).
    ActivationCode(Result<String, String>),
    ProfileSaved(Profile),
    OrderNumbers(HashSet<esimdash_domain::order_no::OrderNo>),
    Paid(Paid),
    /// Each eSIM's top-ups offered, or why it has none (not in this account).
    Offers(Vec<(Iccid, Result<Vec<Plan>, String>)>),
    FoundOrder(Option<Order>),
    /// The current record, and the earlier profiles of a reissued ICCID (newest first).
    FoundEsim(esimdash_api::Found, Vec<esimdash_api::model::Esim>),
    Money(Box<esimdash_ledger::overview::Overview>),
    Requests(Vec<esimdash_front::requests::approval::Listed>),
    Decided(esimdash_front::requests::approval::Told),
    /// The triage, or why the eSIM was not found (in words, as the pane says it).
    Triaged(Box<Result<esimdash_front::triage::Triage, String>>),
}

#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    /// Text pasted into the terminal (bracketed paste): one edit, however long.
    Paste(String),
    /// A stop signal (SIGTSTP from `kill` or a job-control shell): suspend as Ctrl-Z does.
    Suspend,
    /// The process was continued (`fg`, SIGCONT) and the terminal taken again: redraw it whole.
    Resumed,
    Mouse(MouseEvent),
    /// The terminal changed size: only a redraw is needed.
    Resize,
    /// A deadline the app asked for has come (spinner, countdown, fade, typing pause).
    Tick,
    /// The answer to a request: its id and its result (the app's registry knows the request).
    Answer(Box<Answer>),
    /// The key's seat at a team gateway as the answer to request `id` told it (sent before
    /// that answer), or `None` at the API itself.
    Seat {
        id: JobId,
        seat: Option<esimdash_api::relay::Seat>,
    },
    /// A team command ended (or was stopped at its time limit).
    CommandRan {
        id: u64,
        ran: esimdash_front::team_commands::Ran,
    },
    /// What became of a copy to the clipboard.
    Copied {
        what: &'static str,
        result: Result<Delivery, String>,
    },
    /// The client holds requests back for its rate budget until then (`None`: it does not).
    Pacing(Option<std::time::Instant>),
    /// The inventory index saved by an earlier session of this account was read.
    SavedInventory {
        id: JobId,
        /// `None`: there is none, or none to trust (it is replaced once the inventory is read).
        loaded: Option<Box<esimdash_inventory::store::SavedIndex>>,
        /// What the user is to be told of it: it cannot be used, or a damaged file was set aside.
        trouble: Option<String>,
    },
    /// eSIMs the client of `profile`'s account read, for its inventory index (whatever asked,
    /// but the index's own pages: `Payload::IndexPage`). Sent before the answer of the request
    /// that read them (one channel), so a refresh's answer finds them merged.
    IndexSeen {
        profile: String,
        seen: esimdash_inventory::Seen,
    },
    /// What became of writing an eSIM's QR code as a PNG file.
    QrSaved {
        id: JobId,
        result: Result<std::path::PathBuf, SaveError>,
    },
    /// What became of writing the marked eSIMs' QR codes into a folder.
    QrFolderSaved {
        id: JobId,
        result: Result<esimdash_front::export::qr_folder::Written, String>,
    },
    /// The picker's account was opened (or why not).
    Switched {
        name: String,
        result: Result<Box<esimdash_front::session::Opened>, String>,
    },
    /// The API client's notice (an earlier payment settled, waiting for another process),
    /// for the account of `profile`.
    Notice {
        profile: String,
        notice: esimdash_api::Notice,
    },
    /// An export went on, or ended.
    Export {
        id: JobId,
        step: ExportStep,
    },
    /// A bulk top-up went on, or ended.
    Bulk {
        id: JobId,
        step: BulkStep,
    },
}

/// A bulk top-up of marked eSIMs: each eSIM topped up with `qty` of the plan `slug`, the whole
/// confirmed at `total` (the run pays nothing if the check finds another).
#[derive(Debug, Clone, PartialEq)]
pub struct BulkTopup {
    pub iccids: Vec<Iccid>,
    pub slug: String,
    pub qty: u32,
    pub total: rust_decimal::Decimal,
}

#[derive(Debug, Clone, PartialEq)]
pub enum BulkStep {
    /// Every row was checked and the payments begin.
    Paying,
    /// A row is done: its eSIM and where it stands.
    Row {
        iccid: Iccid,
        state: esimdash_front::bulk::State,
    },
    /// The run ended: what became of it, or why nothing was paid.
    Ended(Result<BulkEnded, String>),
    /// The run paid nothing: these eSIMs (ICCID, the earlier payment in words) were topped up
    /// with the same minutes ago; the others could go on without them.
    Repeats(Vec<(Iccid, String)>),
}

/// What a bulk run did, for the window's last word.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkEnded {
    pub ended: esimdash_front::bulk::Ended,
    /// Why the run stopped short, beyond a stop or an unknown outcome (its journal failed).
    pub problem: Option<String>,
    /// The eSIMs topped up by this run.
    pub placed: Vec<Iccid>,
    /// (ICCID, why) of the rows refused (nothing moved) and of those whose outcome is unknown.
    pub failed: Vec<(Iccid, String)>,
    pub unknown: Vec<(Iccid, String)>,
    /// Rows not tried (the run was stopped, or stopped at an unknown outcome).
    pub not_paid: usize,
    /// The rows' file, which `esimdash topup --from` goes on with.
    pub file: std::path::PathBuf,
    /// The result CSV, or why it was not written.
    pub result: Result<std::path::PathBuf, String>,
}

/// Why a file was not written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveError {
    /// A file of that name exists: the user is asked before it is replaced.
    Exists(std::path::PathBuf),
    Failed(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExportStep {
    Progress(esimdash_api::pages::Progress),
    /// The file and its number of data rows, or why there is none.
    Done(Result<(std::path::PathBuf, u64), String>),
}

/// What an export writes: rows the app has already, or a list read page by page, kept to the
/// ICCIDs given when the view is a search (its filter and search applied).
#[derive(Debug, Clone, PartialEq)]
pub enum ExportJob {
    Plans(Vec<Plan>),
    Orders(OrderQuery),
    Esims {
        query: EsimQuery,
        only: Option<HashSet<esimdash_domain::iccid::EsimIccid>>,
    },
}

impl ExportJob {
    /// The name's first part, and what the rows are, in messages.
    pub fn what(&self) -> &'static str {
        match self {
            ExportJob::Plans(_) => "plans",
            ExportJob::Orders(_) => "orders",
            ExportJob::Esims { .. } => "esims",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Answer {
    pub id: JobId,
    pub result: Result<Payload, ApiError>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Send {
        id: JobId,
        request: Request,
    },
    /// Nobody waits for this job any more: a read is dropped from the client's queue if it has
    /// not been sent and aborted if it has; an export stops and leaves no file. Never given
    /// for a write.
    Cancel(JobId),
    /// Put `text` on the clipboard; `what` names it in the message ("ICCID").
    Copy {
        what: &'static str,
        text: String,
    },
    /// Turn the terminal's mouse reporting on or off.
    Mouse(bool),
    /// Write an eSIM's QR code as `<ICCID>.png` in the export directory; an existing file only
    /// with `replace` (the user said yes).
    SaveQr {
        id: JobId,
        iccid: Iccid,
        code: String,
        replace: bool,
    },
    /// Write the QR codes of these eSIMs into a new folder of the export directory (finding
    /// those whose record is not at hand), in the background.
    SaveQrFolder {
        id: JobId,
        wanted: Vec<esimdash_front::export::qr_folder::Wanted>,
    },
    /// Write a CSV export in the export directory, in the background.
    Export {
        id: JobId,
        job: ExportJob,
    },
    /// Top up the marked eSIMs through the bulk engine, in the background: the rows written as
    /// a CSV in the export directory, checked, then paid one by one with a journal.
    BulkTopup {
        id: JobId,
        order: BulkTopup,
    },
    /// Stop the bulk run after its payment in flight (no further row is started).
    StopBulk(JobId),
    /// Give the terminal back and stop the process until it is continued (`fg`), as Ctrl-Z
    /// does in other programs; then take the terminal again and draw the whole screen.
    Suspend,
    /// Read the account's inventory index saved by an earlier session (answered by
    /// `Msg::SavedInventory`, if there is one to trust).
    LoadInventory(JobId),
    /// Run a team command (`[[commands]]`), off the event loop (answered by `Msg::CommandRan`).
    RunCommand {
        id: u64,
        argv: Vec<String>,
        timeout: std::time::Duration,
    },
    /// Open the config profile (or demo account) of this name (answered by `Msg::Switched`).
    SwitchAccount(String),
    /// Use this opened account from now on: its client, its saved index, its earlier payments
    /// settled.
    UseAccount(Box<esimdash_front::session::Opened>),
    Quit,
}
