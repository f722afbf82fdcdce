//! Every key of the dashboard as data: one table of (context, action, keys, description).
//!
//! `App::update` looks keys up here, the help overlay and the hint line are drawn from it,
//! docs/keys.md's key table is checked against it, and the config file's `[keys]` table rebinds
//! actions (`quit = ["q", "ctrl-c"]`). A context is where the keyboard goes (a tab's list, a search being
//! typed, a popup, a form); `App` decides which contexts are consulted, in order.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use esimdash_front::config::{ConfigError, KeyTable};
use std::collections::HashMap;
use std::fmt;
use strum::IntoEnumIterator;

/// Where the keyboard goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Context {
    /// Every tab, when no window is open and nothing is being typed.
    Global,
    /// The list of the Catalog, Orders and My eSIMs tabs.
    List,
    Catalog,
    Orders,
    Esims,
    Profile,
    /// A filter or search being typed (other keys edit the text).
    Typing,
    /// My eSIMs on a narrow terminal: the detail pane instead of the table.
    EsimDetail,
    /// My eSIMs: the QR code alone.
    Zoom,
    /// Help and the plan and order details.
    Popup,
    /// The help window.
    Help,
    OrderDetail,
    /// The status filter.
    Picker,
    /// The profile form (other keys edit the focused field).
    ProfileForm,
    /// "Top up which eSIM?" (other keys edit the ICCID).
    IccidPrompt,
    /// The purchase form: choosing a plan and a quantity.
    Purchase,
    /// The purchase form: the confirmation.
    Confirm,
    /// The purchase form: its outcome, or nothing to offer.
    Outcome,
    /// The bulk top-up of the marked eSIMs, paying.
    BulkPaying,
    /// The bulk top-up of the marked eSIMs: some are offered no top-up.
    BulkLeaveOut,
    /// The banner after the API refused the credentials.
    Banner,
    /// "Replace the file?" before a QR image overwrites one.
    Replace,
    /// The requests an assistant proposed.
    Requests,
    /// "Approve (or refuse) this request?"
    Decide,
    /// The command palette (other keys edit its search).
    Palette,
    /// An eSIM's triage: the first-line checks and the escalation pack.
    Triage,
    /// The saved views of the tab shown.
    Views,
}

impl Context {
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "everywhere",
            Context::List => "lists",
            Context::Catalog => "Catalog",
            Context::Orders => "Orders",
            Context::Esims => "My eSIMs",
            Context::Profile => "Profile",
            Context::Typing => "typing a filter or search",
            Context::EsimDetail => "eSIM detail (narrow terminal)",
            Context::Zoom => "QR code alone",
            Context::Popup => "help, plan, order",
            Context::Help => "help",
            Context::OrderDetail => "order detail",
            Context::Picker => "status filter",
            Context::ProfileForm => "profile form",
            Context::IccidPrompt => "ICCID prompt",
            Context::Purchase => "top-up or purchase: choosing",
            Context::Confirm => "top-up or purchase: confirming",
            Context::Outcome => "top-up or purchase: result",
            Context::BulkPaying => "top-up of the marked eSIMs: paying",
            Context::BulkLeaveOut => "top-up of the marked eSIMs: some offered nothing",
            Context::Banner => "credentials refused",
            Context::Replace => "replace a file?",
            Context::Requests => "requests an assistant proposed",
            Context::Decide => "requests: deciding",
            Context::Palette => "command palette",
            Context::Triage => "an eSIM's triage",
            Context::Views => "saved views",
        }
    }
}

/// What a key does. Its config name is the snake_case form of the variant: the names and the
/// list of actions are derived from this one declaration, so neither can drift from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Action {
    Quit,
    Suspend,
    Help,
    Refresh,
    NextTab,
    PreviousTab,
    TabCatalog,
    TabOrders,
    TabEsims,
    TabProfile,
    ToggleMouse,
    TopUp,
    SwitchProfile,
    Down,
    Up,
    PageDown,
    PageUp,
    HalfPageDown,
    HalfPageUp,
    First,
    Last,
    Open,
    Search,
    Clear,
    Sort,
    Buy,
    StatusFilter,
    Zoom,
    CopyIccid,
    CopyCode,
    CopyLink,
    CopySmdp,
    CopyMatchingId,
    SaveQr,
    Attention,
    Export,
    Edit,
    Accept,
    Close,
    NextField,
    PreviousField,
    More,
    Less,
    /// A digit sets the quantity (its keys are fixed: 1–9, and 0 for 10).
    Quantity,
    Pay,
    Back,
    /// From an order: its eSIM on My eSIMs.
    ShowEsim,
    Mark,
    MarkAll,
    /// The eSIM pane: its next screenful, where it holds more than its height.
    PaneDown,
    PaneUp,
    /// The requests an assistant proposed (`esimdash mcp`).
    Requests,
    Approve,
    Refuse,
    /// Every action here, found by typing a few letters.
    Palette,
    /// The first-line checks on the selected eSIM, before escalating.
    Triage,
    /// The triage's escalation pack, to the clipboard.
    CopyPack,
    /// The saved views of the tab shown (`[[views]]`).
    Views,
    /// The tab's search and filter, saved as a view.
    SaveView,
}

impl Action {
    /// The name in the config file's `[keys]` table.
    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn from_name(name: &str) -> Option<Action> {
        name.parse().ok()
    }

    /// Keys that cannot be rebound: the digit is the value.
    fn fixed(self) -> bool {
        self == Action::Quantity
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub context: Context,
    pub action: Action,
    pub keys: &'static [&'static str],
    /// For the help overlay and docs/keys.md.
    pub about: &'static str,
    /// For the hint line at the bottom, when the action is worth a place there.
    pub hint: Option<&'static str>,
}

const fn bind(
    context: Context,
    action: Action,
    keys: &'static [&'static str],
    about: &'static str,
    hint: Option<&'static str>,
) -> Binding {
    Binding {
        context,
        action,
        keys,
        about,
        hint,
    }
}

use Action as A;
use Context as C;

/// Every binding, in the order help and docs/keys.md list them: one row a line, as a table.
#[rustfmt::skip]
pub const DEFAULT_BINDINGS: &[Binding] = &[
    bind(C::Global, A::TabCatalog, &["1"], "Catalog tab", None),
    bind(C::Global, A::TabOrders, &["2"], "Orders tab", None),
    bind(C::Global, A::TabEsims, &["3"], "My eSIMs tab", None),
    bind(C::Global, A::TabProfile, &["4"], "Profile tab", None),
    bind(C::Global, A::NextTab, &["tab"], "next tab (a click on a tab works too)", None),
    bind(C::Global, A::PreviousTab, &["shift-tab"], "previous tab", None),
    bind(C::Global, A::Refresh, &["r"], "refresh the view and the balance", Some("refresh")),
    bind(C::Global, A::TopUp, &["t"], "top up: the selected or marked eSIMs, an order's eSIM, any eSIM by ICCID", Some("top up")),
    bind(C::Global, A::Views, &["V"], "saved views of this tab ([[views]]): show one, or save the search and filter shown", None),
    bind(C::Global, A::Requests, &["R"], "requests an assistant proposed: approve or refuse each", None),
    bind(C::Global, A::SwitchProfile, &["P"], "switch to another profile of the config file (another account)", None),
    bind(C::Global, A::ToggleMouse, &["m"], "mouse on or off (off: select text with the mouse)", None),
    bind(C::Global, A::Palette, &[":", "ctrl-p"], "command palette: every action here, found by typing a few letters of what it does", None),
    bind(C::Global, A::Help, &["?"], "all keys", Some("help")),
    bind(C::Global, A::Quit, &["q", "ctrl-c"], "quit", Some("quit")),
    bind(C::Global, A::Suspend, &["ctrl-z"], "suspend to the shell (the terminal restored); fg comes back", None),
    bind(C::List, A::Down, &["down", "j"], "move down (the mouse wheel too)", Some("move")),
    bind(C::List, A::Up, &["up", "k"], "move up", None),
    bind(C::List, A::PageDown, &["pgdn"], "a page down (Orders, My eSIMs: a server page)", None),
    bind(C::List, A::PageUp, &["pgup"], "a page up", None),
    bind(C::List, A::HalfPageDown, &["ctrl-d"], "half a page down", None),
    bind(C::List, A::HalfPageUp, &["ctrl-u"], "half a page up", None),
    bind(C::List, A::First, &["home", "g"], "first", None),
    bind(C::List, A::Last, &["end", "G"], "last", None),
    bind(C::List, A::Open, &["enter"], "detail: a plan with its own pricing, an order, the eSIM pane", Some("detail")),
    bind(C::List, A::Search, &["/"], "filter (Catalog), search (Orders), find by ICCID or package (My eSIMs)", Some("search")),
    bind(C::List, A::Clear, &["esc"], "clear the filter or search", None),
    bind(C::Catalog, A::Sort, &["s"], "sort by name, price, data, location", Some("sort")),
    bind(C::Catalog, A::Buy, &["b"], "buy new eSIMs of the selected plan", Some("buy")),
    bind(C::Catalog, A::Export, &["x"], "export the plans shown (filter and sort kept) to CSV in the export directory", Some("export")),
    bind(C::Orders, A::StatusFilter, &["f"], "status filter (every status, and active)", Some("status")),
    bind(C::Orders, A::Export, &["x"], "export every page of this view (filter and search) to CSV; again: cancel", Some("export")),
    bind(C::Esims, A::StatusFilter, &["f"], "status filter (every status, and active)", Some("status")),
    bind(C::Esims, A::Zoom, &["z"], "the QR code alone, full screen", Some("QR")),
    bind(C::Esims, A::CopyIccid, &["y"], "copy the ICCID", Some("copy ICCID")),
    bind(C::Esims, A::CopyCode, &["Y"], "copy the activation code", Some("copy code")),
    bind(C::Esims, A::CopyLink, &["l"], "copy the iPhone install link (iOS 17.4 and later)", None),
    bind(C::Esims, A::Buy, &["b"], "buy a new eSIM of this eSIM's plan", Some("buy")),
    bind(C::Esims, A::CopySmdp, &["a"], "copy the SM-DP+ address alone, for entering the code by hand", None),
    bind(C::Esims, A::CopyMatchingId, &["i"], "copy the matching ID alone (an iPhone's \"Activation Code\" when entered by hand)", None),
    bind(C::Esims, A::SaveQr, &["w"], "write the QR code as <ICCID>.png to the export directory; with marks, every marked eSIM's into one new folder", None),
    bind(C::Esims, A::Mark, &["space"], "mark or unmark the eSIM (for t and w on many at once)", None),
    bind(C::Esims, A::MarkAll, &["*"], "mark every result of the search (no search: the page); again: unmark them", None),
    bind(C::Esims, A::Export, &["x"], "export every eSIM of this view (filter, search, attention) to CSV; again: cancel", None),
    bind(C::Esims, A::Attention, &["!"], "needs attention: usable eSIMs near their data or time limit (again: all)", None),
    bind(C::Esims, A::Triage, &["T"], "triage: the first-line checks before escalating (state, installed, data moving, validity, APN, manual install) and the escalation pack", None),
    bind(C::Esims, A::PaneDown, &["J"], "the eSIM pane's next screenful (where it holds more than fits)", None),
    bind(C::Esims, A::PaneUp, &["K"], "the eSIM pane's screenful before", None),
    bind(C::Profile, A::Edit, &["e"], "edit company name, country and website", Some("edit")),
    bind(C::Typing, A::Accept, &["enter"], "stop typing, keep the text (Orders: search now)", Some("done")),
    bind(C::Typing, A::Clear, &["esc"], "clear the text and stop typing", Some("clear")),
    bind(C::EsimDetail, A::Close, &["esc"], "back to the table", Some("back")),
    bind(C::Zoom, A::Close, &["esc", "z"], "back to the pane or list it was opened from", Some("back")),
    bind(C::Popup, A::Close, &["esc", "enter", "q", "?"], "close", Some("close")),
    bind(C::Help, A::Down, &["down", "j"], "scroll down", Some("scroll")),
    bind(C::Help, A::Up, &["up", "k"], "scroll up", None),
    bind(C::OrderDetail, A::TopUp, &["t"], "top up this order's eSIM", Some("top up")),
    bind(C::OrderDetail, A::ShowEsim, &["e"], "show this order's eSIM on My eSIMs", Some("its eSIM")),
    bind(C::OrderDetail, A::Refresh, &["r"], "read this order (and its eSIM) again", Some("refresh")),
    bind(C::Picker, A::Down, &["down", "j"], "next choice", Some("choose")),
    bind(C::Picker, A::Up, &["up", "k"], "previous choice", None),
    bind(C::Picker, A::Accept, &["enter"], "apply", Some("apply")),
    bind(C::Picker, A::Close, &["esc", "q", "f"], "cancel", Some("cancel")),
    bind(C::ProfileForm, A::NextField, &["tab", "down"], "next field", Some("next field")),
    bind(C::ProfileForm, A::PreviousField, &["shift-tab", "up"], "previous field", None),
    bind(C::ProfileForm, A::Accept, &["enter"], "save", Some("save")),
    bind(C::ProfileForm, A::Close, &["esc"], "cancel", Some("cancel")),
    bind(C::IccidPrompt, A::Accept, &["enter"], "continue with this ICCID", Some("continue")),
    bind(C::IccidPrompt, A::Close, &["esc"], "cancel", Some("cancel")),
    bind(C::Purchase, A::Down, &["down", "j"], "next plan", Some("plan")),
    bind(C::Purchase, A::Up, &["up", "k"], "previous plan", None),
    bind(C::Purchase, A::More, &["right", "+"], "one more", Some("quantity")),
    bind(C::Purchase, A::Less, &["left", "-"], "one less", None),
    bind(C::Purchase, A::Quantity, &["1", "2", "3", "4", "5", "6", "7", "8", "9", "0"], "quantity 1 to 9, 0 for 10", None),
    bind(C::Purchase, A::Accept, &["enter"], "to the confirmation", Some("next")),
    bind(C::Purchase, A::Close, &["esc", "q"], "cancel", Some("cancel")),
    bind(C::Confirm, A::Pay, &["enter"], "pay: sent once, never again", Some("pay")),
    bind(C::Confirm, A::Back, &["esc"], "back to the choice", Some("back")),
    bind(C::Confirm, A::Close, &["q"], "cancel, nothing sent", None),
    bind(C::Outcome, A::Close, &["esc", "enter", "q"], "close", Some("close")),
    bind(C::Outcome, A::Buy, &["b"], "where the eSIM can never take data: buy a new eSIM of its plan", None),
    bind(C::BulkPaying, A::Close, &["esc", "q"], "stop after the payment in flight (no further eSIM is paid)", Some("stop")),
    bind(C::BulkLeaveOut, A::Accept, &["enter"], "unmark those offered nothing and top up the others", Some("the others")),
    bind(C::BulkLeaveOut, A::Close, &["esc", "q"], "close (the marks stay)", Some("close")),
    bind(C::Banner, A::Quit, &["q", "ctrl-c"], "quit", Some("quit")),
    bind(C::Banner, A::Close, &["esc"], "quit", None),
    bind(C::Views, A::Down, &["down", "j"], "next view", Some("move")),
    bind(C::Views, A::Up, &["up", "k"], "previous view", None),
    bind(C::Views, A::Accept, &["enter"], "show the view: its search, status, attention and sort", Some("show")),
    bind(C::Views, A::SaveView, &["s"], "save the search and filter shown as a view in the config file", Some("save")),
    bind(C::Views, A::Close, &["esc", "q", "V"], "close", Some("close")),
    bind(C::Triage, A::CopyPack, &["c"], "copy the escalation pack: ICCID, profiles, checks, requests made", Some("copy pack")),
    bind(C::Triage, A::Refresh, &["r"], "read the eSIM again and check once more (tells whether data moved)", Some("again")),
    bind(C::Triage, A::Close, &["esc", "q"], "close", Some("close")),
    bind(C::Requests, A::Down, &["down", "j"], "next request", Some("move")),
    bind(C::Requests, A::Up, &["up", "k"], "previous request", None),
    bind(C::Requests, A::Approve, &["a"], "approve the request: asked once more, checked again at this moment's price, paid once", Some("approve")),
    bind(C::Requests, A::Refuse, &["n"], "refuse the request: nothing is paid, the assistant reads why", Some("refuse")),
    bind(C::Requests, A::Refresh, &["r"], "read the requests again", None),
    bind(C::Requests, A::Close, &["esc", "q"], "close", Some("close")),
    bind(C::Decide, A::Accept, &["enter", "y"], "yes: approve and pay, or refuse, as asked", Some("yes")),
    bind(C::Decide, A::Back, &["esc", "n"], "no: back to the list, nothing decided", Some("no")),
    bind(C::Palette, A::Down, &["down", "ctrl-n"], "next action", Some("choose")),
    bind(C::Palette, A::Up, &["up", "ctrl-k"], "previous action", None),
    bind(C::Palette, A::Accept, &["enter"], "run the action, as its key would", Some("run")),
    bind(C::Palette, A::Close, &["esc"], "close, nothing run", Some("close")),
    bind(C::Replace, A::Accept, &["y"], "replace the file", Some("replace")),
    bind(C::Replace, A::Close, &["n", "esc"], "keep the file", Some("keep")),
];

/// The bottom line's order in each view, most used first (an agent's day: find the eSIM, read
/// it, top it up or copy what the customer needs); the hints of actions not named follow in
/// the table's order. Quit and help are not here: the line always ends with them. One view a
/// line.
#[rustfmt::skip]
const HINT_ORDER: &[(Context, &[Action])] = &[
    (C::Catalog, &[A::Search, A::Open, A::Buy, A::Sort, A::Down, A::Export, A::Refresh]),
    (C::Orders, &[A::Search, A::Open, A::TopUp, A::StatusFilter, A::Down, A::Refresh, A::Export]),
    (C::Esims, &[A::Search, A::Open, A::TopUp, A::Refresh, A::CopyIccid, A::Zoom, A::Down, A::StatusFilter, A::CopyCode, A::Buy]),
    (C::EsimDetail, &[A::Close, A::TopUp, A::CopyIccid, A::CopyCode, A::Zoom, A::Buy, A::Down, A::Search, A::Refresh]),
    (C::Profile, &[A::Edit, A::TopUp, A::Refresh]),
    (C::Typing, &[A::Accept, A::Clear, A::Down, A::Open]),
];

/// The contexts that are on screen together and must not share a key: a tab's own keys, the
/// list keys and the global keys. Every other context stands alone (a window over the tab may
/// give a key another meaning on purpose: Esc closes it).
const SHARED: [&[Context]; 4] = [
    &[C::Catalog, C::List, C::Global],
    &[C::Orders, C::List, C::Global],
    &[C::Esims, C::List, C::Global],
    &[C::Profile, C::Global],
];

/// A key with its modifiers, normalised so that `Y` and shift-`y` are one chord.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Chord {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

impl Chord {
    pub fn char(c: char) -> Self {
        Self {
            code: KeyCode::Char(c),
            ctrl: false,
            alt: false,
        }
    }

    /// The digit of a digit key.
    pub fn digit(self) -> Option<u32> {
        match self.code {
            KeyCode::Char(c) if !self.ctrl && !self.alt => c.to_digit(10),
            _ => None,
        }
    }

    /// Parses a key name as the config file writes it: `q`, `G`, `?`, `ctrl-c`, `alt-x`,
    /// `enter`, `esc`, `tab`, `shift-tab`, `up`, `pgdn`, `home`, `f5`, `space`…
    pub fn parse(name: &str) -> Result<Chord, String> {
        let mut ctrl = false;
        let mut alt = false;
        let mut shift = false;
        let mut rest = name;
        loop {
            let lower = rest.to_ascii_lowercase();
            let cut = |p: &str| rest.len() > p.len() && lower.starts_with(p);
            if cut("ctrl-") {
                ctrl = true;
                rest = &rest[5..];
            } else if cut("alt-") {
                alt = true;
                rest = &rest[4..];
            } else if cut("shift-") {
                shift = true;
                rest = &rest[6..];
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) if !c.is_control() => {
                let c = if ctrl { c.to_ascii_lowercase() } else { c };
                if shift {
                    KeyCode::Char(c.to_ascii_uppercase())
                } else {
                    KeyCode::Char(c)
                }
            }
            _ => {
                let named = match rest.to_ascii_lowercase().as_str() {
                    "enter" | "return" => KeyCode::Enter,
                    "esc" | "escape" => KeyCode::Esc,
                    "tab" if shift => KeyCode::BackTab,
                    "tab" => KeyCode::Tab,
                    "backtab" => KeyCode::BackTab,
                    "up" => KeyCode::Up,
                    "down" => KeyCode::Down,
                    "left" => KeyCode::Left,
                    "right" => KeyCode::Right,
                    "pgup" | "pageup" => KeyCode::PageUp,
                    "pgdn" | "pagedown" => KeyCode::PageDown,
                    "home" => KeyCode::Home,
                    "end" => KeyCode::End,
                    "backspace" => KeyCode::Backspace,
                    "delete" | "del" => KeyCode::Delete,
                    "insert" | "ins" => KeyCode::Insert,
                    "space" => KeyCode::Char(' '),
                    other => match other.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
                        Some(n @ 1..=12) => KeyCode::F(n),
                        _ => return Err(format!("{name:?} is not a key name")),
                    },
                };
                if shift && named != KeyCode::BackTab {
                    return Err(format!("{name:?}: shift- goes only with tab or a letter"));
                }
                named
            }
        };
        Ok(Chord { code, ctrl, alt })
    }
}

impl From<KeyEvent> for Chord {
    fn from(key: KeyEvent) -> Self {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let code = match key.code {
            // Terminals send Ctrl with the letter as typed; the binding is written lowercase.
            KeyCode::Char(c) if ctrl => KeyCode::Char(c.to_ascii_lowercase()),
            other => other,
        };
        Chord {
            code,
            ctrl,
            alt: key.modifiers.contains(KeyModifiers::ALT),
        }
    }
}

impl fmt::Display for Chord {
    /// As help shows it: `q`, `Ctrl-c`, `Enter`, `↑`, `PgDn`, `Shift-Tab`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("Ctrl-")?;
        }
        if self.alt {
            f.write_str("Alt-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::BackTab => f.write_str("Shift-Tab"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::Backspace => f.write_str("Backspace"),
            KeyCode::Delete => f.write_str("Del"),
            KeyCode::Insert => f.write_str("Ins"),
            KeyCode::F(n) => write!(f, "F{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// A `[keys]` entry of the config file, as the file gives it.
pub use esimdash_front::config::Rebinding;

/// Why the `[keys]` table cannot be used; `line` is the config file's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct KeymapError {
    pub line: usize,
    pub message: String,
}

/// One row as it is in force: the default row with the user's keys.
#[derive(Debug, Clone)]
pub struct Row {
    pub binding: Binding,
    pub keys: Vec<Chord>,
}

impl Row {
    /// `q, Ctrl-c`.
    pub fn keys_text(&self) -> String {
        self.keys.iter().map(Chord::to_string).collect::<Vec<_>>().join(", ")
    }
}

#[derive(Debug, Clone)]
pub struct Keymap {
    rows: Vec<Row>,
    lookup: HashMap<(Context, Chord), Action>,
}

impl Default for Keymap {
    fn default() -> Self {
        Self::new(&[]).unwrap_or_else(|e| unreachable!("the default keymap is consistent: {e}"))
    }
}

impl Keymap {
    /// The default table with the config file's `[keys]` applied; a mistake in it is an error
    /// of the config file that names the file and the line.
    pub fn from_config(table: &KeyTable) -> Result<Self, ConfigError> {
        Self::new(&table.rebindings).map_err(|e| table.refused(e.line, e.message))
    }

    /// The default table with the config file's rebindings applied; each rebinding replaces the
    /// keys of its action in every context the action has. Unknown actions or key names, and
    /// two actions on one key where both could act, are errors naming the line.
    pub fn new(rebindings: &[Rebinding]) -> Result<Self, KeymapError> {
        let mut rows: Vec<Row> = DEFAULT_BINDINGS
            .iter()
            .map(|b| Row {
                binding: *b,
                keys: b.keys.iter().filter_map(|k| Chord::parse(k).ok()).collect(),
            })
            .collect();
        // Which line set each action's keys, to name it in a conflict.
        let mut line_of: HashMap<Action, usize> = HashMap::new();
        for r in rebindings {
            let fail = |message: String| KeymapError { line: r.line, message };
            let action = Action::from_name(&r.action).ok_or_else(|| {
                let known: Vec<_> = Action::iter().map(Action::name).collect();
                fail(format!(
                    "keys.{}: no such action (actions: {})",
                    r.action,
                    known.join(", ")
                ))
            })?;
            if action.fixed() {
                return Err(fail(format!(
                    "keys.{}: its keys are the digits and cannot change",
                    r.action
                )));
            }
            if r.keys.is_empty() {
                return Err(fail(format!("keys.{}: give at least one key", r.action)));
            }
            let keys = r
                .keys
                .iter()
                .map(|k| Chord::parse(k).map_err(|e| fail(format!("keys.{}: {e}", r.action))))
                .collect::<Result<Vec<_>, _>>()?;
            for row in rows.iter_mut().filter(|row| row.binding.action == action) {
                row.keys = keys.clone();
            }
            line_of.insert(action, r.line);
        }
        let mut lookup = HashMap::new();
        for row in &rows {
            for chord in &row.keys {
                lookup.insert((row.binding.context, *chord), row.binding.action);
            }
        }
        let map = Self { rows, lookup };
        map.check(&line_of)?;
        Ok(map)
    }

    /// One key, one action: within each context, and across the contexts on screen together.
    fn check(&self, line_of: &HashMap<Action, usize>) -> Result<(), KeymapError> {
        let groups = self
            .rows
            .iter()
            .map(|r| vec![r.binding.context])
            .chain(SHARED.iter().map(|g| g.to_vec()));
        for group in groups {
            let mut seen: HashMap<Chord, (Action, Context)> = HashMap::new();
            for row in self.rows.iter().filter(|r| group.contains(&r.binding.context)) {
                let (action, context) = (row.binding.action, row.binding.context);
                for chord in &row.keys {
                    match seen.get(chord) {
                        Some((other, _)) if *other == action => {}
                        Some((other, other_context)) => {
                            let line = line_of.get(&action).or(line_of.get(other)).copied().unwrap_or(0);
                            return Err(KeymapError {
                                line,
                                message: format!(
                                    "key {chord} would do two things: {} ({}) and {} ({})",
                                    other.name(),
                                    other_context.title(),
                                    action.name(),
                                    context.title()
                                ),
                            });
                        }
                        None => {
                            seen.insert(*chord, (action, context));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    pub fn action(&self, context: Context, chord: Chord) -> Option<Action> {
        self.lookup.get(&(context, chord)).copied()
    }

    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The row binding an action in a context, or where the context has none, in the global
    /// one (whose keys work in every context that does not take them): a hint never names an
    /// empty key for `t` on My eSIMs.
    fn row_of(&self, context: Context, action: Action) -> Option<&Row> {
        let of = |context| {
            self.rows
                .iter()
                .find(|r| r.binding.context == context && r.binding.action == action && !r.keys.is_empty())
        };
        of(context).or_else(|| of(Context::Global))
    }

    /// The keys of an action in a context, as help writes them.
    pub fn keys_text(&self, context: Context, action: Action) -> String {
        self.row_of(context, action).map(Row::keys_text).unwrap_or_default()
    }

    /// `template` with the first key of each of `actions` (in `context`) where its `{}` stand,
    /// in order: "{}: pay · {}: back" reads "p: pay · Esc: back" with the keys in force.
    pub fn say(&self, context: Context, template: &str, actions: &[Action]) -> String {
        let mut keys = actions.iter().map(|a| self.first_key(context, *a));
        let mut parts = template.split("{}");
        let mut text = parts.next().unwrap_or_default().to_string();
        for part in parts {
            text.push_str(&keys.next().unwrap_or_default());
            text.push_str(part);
        }
        text
    }

    /// The first key of an action, as prose names it ("r to try again").
    pub fn first_key(&self, context: Context, action: Action) -> String {
        self.row_of(context, action)
            .and_then(|r| r.keys.first())
            .map(Chord::to_string)
            .unwrap_or_default()
    }

    /// The hints for the contexts the keyboard goes to, each with its action: `↓ move`,
    /// `/ search`, `q quit` (the status line keeps as many as fit), in the first context's
    /// `HINT_ORDER`. A key an earlier context takes is not shown again for a later one, nor are
    /// printable keys while text is typed (they go to the text).
    pub fn hint_parts(&self, contexts: &[Context], typing: bool) -> Vec<(Action, String)> {
        let mut parts: Vec<(Action, String)> = Vec::new();
        let mut taken: Vec<Chord> = Vec::new();
        let mut shown: Vec<Action> = Vec::new();
        for context in contexts {
            let rows: Vec<&Row> = self.rows.iter().filter(|r| r.binding.context == *context).collect();
            for row in &rows {
                let usable = row.keys.iter().find(|k| {
                    let text = typing && !k.ctrl && matches!(k.code, KeyCode::Char(_));
                    !taken.contains(k) && !text
                });
                if let (Some(hint), Some(first)) = (row.binding.hint, usable)
                    && !shown.contains(&row.binding.action)
                {
                    shown.push(row.binding.action);
                    parts.push((row.binding.action, format!("{first} {hint}")));
                }
            }
            taken.extend(rows.iter().flat_map(|r| r.keys.iter().copied()));
        }
        let order = contexts
            .first()
            .and_then(|focus| HINT_ORDER.iter().find(|(c, _)| c == focus))
            .map_or(&[][..], |(_, order)| *order);
        parts.sort_by_key(|(action, _)| order.iter().position(|a| a == action).unwrap_or(order.len()));
        parts
    }

    /// Whether `chord` is one of the quit keys of the global context (they work everywhere that
    /// does not give them a meaning of its own, even mid-payment: quitting never resends).
    pub fn is_global_quit(&self, chord: Chord) -> bool {
        self.action(Context::Global, chord) == Some(Action::Quit)
    }
}

/// docs/keys.md's key table, from the default table: a test keeps the page equal to it.
pub fn markdown_table() -> String {
    let map = Keymap::default();
    let mut out = String::from("| where | keys | action | what it does |\n|---|---|---|---|\n");
    for row in map.rows() {
        let keys = row
            .keys
            .iter()
            .map(|k| format!("`{}`", k.to_string().replace('|', "\\|")))
            .collect::<Vec<_>>()
            .join(" ");
        out.push_str(&format!(
            "| {} | {} | `{}` | {} |\n",
            row.binding.context.title(),
            keys,
            row.binding.action.name(),
            row.binding.about
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rebind(action: &str, keys: &[&str], line: usize) -> Rebinding {
        Rebinding {
            action: action.to_string(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
            line,
        }
    }

    #[test]
    fn key_names_parse_and_match_what_terminals_send() {
        let ctrl_c = Chord::parse("ctrl-c").unwrap();
        assert_eq!(
            ctrl_c,
            Chord::from(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL))
        );
        assert_eq!(
            Chord::parse("Y").unwrap(),
            Chord::from(KeyEvent::new(KeyCode::Char('Y'), KeyModifiers::SHIFT))
        );
        assert_eq!(Chord::parse("shift-tab").unwrap().code, KeyCode::BackTab);
        assert_eq!(Chord::parse("PgDn").unwrap().code, KeyCode::PageDown);
        assert_eq!(Chord::parse("f5").unwrap().code, KeyCode::F(5));
        assert_eq!(Chord::parse("-").unwrap().code, KeyCode::Char('-'));
        assert!(Chord::parse("hyper-x").is_err());
        assert!(Chord::parse("").is_err());
        assert!(Chord::parse("shift-enter").is_err());
        assert_eq!(Chord::parse("ctrl-d").unwrap().to_string(), "Ctrl-d");
    }

    #[test]
    fn rebinding_replaces_the_keys_of_an_action_everywhere() {
        let map = Keymap::new(&[rebind("quit", &["Q", "ctrl-c"], 3)]).unwrap();
        assert_eq!(map.action(C::Global, Chord::char('Q')), Some(A::Quit));
        assert_eq!(map.action(C::Global, Chord::char('q')), None);
        assert_eq!(map.action(C::Banner, Chord::char('Q')), Some(A::Quit));
        assert_eq!(map.keys_text(C::Global, A::Quit), "Q, Ctrl-c");
    }

    #[test]
    fn bad_rebindings_are_errors_naming_the_line() {
        let e = Keymap::new(&[rebind("qiut", &["x"], 4)]).unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.message.contains("no such action"), "{e}");
        let e = Keymap::new(&[rebind("quit", &["ctrl-banana"], 5)]).unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.message.contains("not a key name"), "{e}");
        // `s` sorts the catalog: quitting on it too would make one key do two things there.
        let e = Keymap::new(&[rebind("quit", &["s"], 6)]).unwrap_err();
        assert_eq!(e.line, 6);
        assert!(e.message.contains("sort") && e.message.contains("quit"), "{e}");
        let e = Keymap::new(&[rebind("quantity", &["x"], 7)]).unwrap_err();
        assert_eq!(e.line, 7);
        let e = Keymap::new(&[rebind("help", &[], 8)]).unwrap_err();
        assert_eq!(e.line, 8);
    }

    /// An action nobody can press is dead code; one the docs leave out is a key nobody learns.
    /// Every action has a default key, a config name that reads back as itself, and a row in
    /// the documented key table.
    #[test]
    fn every_action_is_bound_named_and_documented() {
        let table = markdown_table();
        for action in Action::iter() {
            assert!(
                DEFAULT_BINDINGS
                    .iter()
                    .any(|b| b.action == action && !b.keys.is_empty()),
                "{action:?} has no default key"
            );
            assert_eq!(Action::from_name(action.name()), Some(action));
            assert!(
                table.contains(&format!("| `{}` |", action.name())),
                "{action:?} is missing from the key table"
            );
        }
    }

    #[test]
    fn every_default_key_parses() {
        for b in DEFAULT_BINDINGS {
            for k in b.keys {
                assert!(Chord::parse(k).is_ok(), "{k}");
            }
        }
    }
}

#[cfg(test)]
mod example_config {
    use super::Keymap;
    use esimdash_front::config::ConnectionArgs;

    /// The key bindings of `assets/config.example.toml` apply, as the dashboard reads them.
    #[test]
    fn the_example_configs_keys_apply() {
        let args = ConnectionArgs {
            config: Some(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/config.example.toml").into()),
            ..ConnectionArgs::default()
        };
        let settings = esimdash_front::config::dashboard_settings(&args).expect("the example's settings are valid");
        Keymap::from_config(&settings.keys).expect("its key bindings are valid");
    }
}

#[cfg(test)]
mod docs {
    /// docs/keys.md's key table is the keymap's: change a key and this fails until the page follows.
    #[test]
    fn docs_keys_lists_exactly_the_keymap() {
        let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/keys.md"))
            .unwrap_or_else(|e| panic!("docs/keys.md: {e}"));
        let (start, end) = ("<!-- keys:start -->\n", "<!-- keys:end -->");
        let from = page
            .find(start)
            .map(|i| i + start.len())
            .unwrap_or_else(|| panic!("no {start:?} in docs/keys.md"));
        let to = page[from..]
            .find(end)
            .map(|i| from + i)
            .unwrap_or_else(|| panic!("no {end:?} in docs/keys.md"));
        let expected = super::markdown_table();
        assert!(
            page[from..to] == expected,
            "docs/keys.md's key table differs from the keymap; put this between the markers:\n{expected}"
        );
    }
}
