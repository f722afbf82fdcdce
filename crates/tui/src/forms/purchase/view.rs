//! The top-up / purchase form and the "which eSIM?" prompt.

use crate::forms::plan_choice::PlanChoice;
use crate::forms::purchase::{Lookup, PurchaseForm, Stage};
use crate::keymap::{Action, Context};
use crate::kit::input::TextInput;
use crate::view::Look;
use crate::view::theme::Theme;
use crate::view::widgets::{keys_line, paragraph, popup, safe, text_popup};
use esimdash_api::Delivery;
use esimdash_api::model::Order;
use esimdash_domain::purchase::Purchase;
use esimdash_front::format::money::money_or;
use esimdash_front::format::records::validity;
use esimdash_front::format::volume::format_bytes;
use esimdash_front::purchase::shortfall_message;
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};

pub fn usd(v: Option<rust_decimal::Decimal>) -> String {
    money_or(v, "USD", "unknown")
}

pub fn draw(frame: &mut Frame, area: Rect, form: &PurchaseForm, look: &Look<'_>, theme: &Theme) {
    let title = match form.what() {
        Purchase::Topup { iccid } => format!("Top up eSIM {iccid}"),
        Purchase::Order => "Buy new eSIMs".to_string(),
    };
    let inner = popup(frame, area, &title, 76, 22, theme);
    let noun = form.what().noun();
    // Every key named here is the one the keymap in force binds.
    let key = |context, action| look.keymap().first_key(context, action);
    let lines = match form.stage() {
        Stage::Loading { .. } => vec![Line::raw(format!(
            "{} Asking which top-ups are offered for this eSIM…",
            look.spinner()
        ))],
        Stage::Empty(why) => [
            vec![Line::styled(safe(why), theme.error())],
            form.renew_plan()
                .map(|_| {
                    Line::styled(
                        format!("{}: buy a new eSIM of this plan", key(Context::Outcome, Action::Buy)),
                        theme.key(),
                    )
                })
                .into_iter()
                .collect(),
            vec![Line::styled(
                format!("{} to close", key(Context::Outcome, Action::Close)),
                theme.muted(),
            )],
        ]
        .concat(),
        Stage::Choosing => with_unsure(form, choosing(form, look, theme), theme),
        Stage::Confirming { before, .. } => with_unsure(form, confirming(form, before.is_some(), look, theme), theme),
        Stage::Again { earlier, .. } => vec![
            Line::styled(format!("Not sent: {}.", safe(earlier)), theme.error()),
            Line::raw(""),
            keys_line(
                look,
                Context::Confirm,
                "{}: pay the same again, a second time · {}: back",
                &[Action::Pay, Action::Back],
                theme.key(),
            ),
        ],
        Stage::Sending { .. } => vec![
            Line::raw(format!("{} Sending the {noun}, once.", look.spinner())),
            Line::styled("Keys do nothing until the answer comes.", theme.muted()),
        ],
        Stage::Done {
            order,
            balance,
            delivery,
            charged_other,
        } => {
            let mut lines = done(form, order, *balance, *delivery, look, theme);
            if let Some(other) = charged_other {
                lines.insert(1, Line::styled(format!("{}.", other.sentence()), theme.error()));
            }
            lines
        }
        Stage::Failed(message) => vec![
            Line::styled(safe(message), theme.error()),
            Line::styled(
                format!(
                    "Nothing is sent again by itself. {}: close",
                    key(Context::Outcome, Action::Close)
                ),
                theme.muted(),
            ),
        ],
        Stage::Unknown { error, lookup, .. } => unknown(noun, error, lookup, look, theme),
    };
    paragraph(frame, inner, lines);
}

/// A form's lines under the warning that the eSIM's state could not be confirmed, if it could
/// not: the confirmation then asks knowing it.
fn with_unsure(form: &PurchaseForm, lines: Vec<Line<'static>>, theme: &Theme) -> Vec<Line<'static>> {
    match form.unsure() {
        Some(unsure) => std::iter::once(Line::styled(format!("Note: {}.", safe(unsure)), theme.warning()))
            .chain(lines)
            .collect(),
        None => lines,
    }
}

/// The plans offered, the quantity and the total.
fn choosing(form: &PurchaseForm, look: &Look<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled("Plans offered by the API:", theme.title())];
    lines.extend(choice_lines(form.choice(), "Quantity  ", form.total(), look, theme));
    lines
}

/// The plans of a choice (the chosen one marked), the quantity (`qty_label`), the total and
/// the keys: the top-up form's and the marked eSIMs' top-up's.
pub fn choice_lines(
    choice: &PlanChoice,
    qty_label: &'static str,
    total: Option<rust_decimal::Decimal>,
    look: &Look<'_>,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for (i, p) in choice.plans().iter().enumerate() {
        let text = format!(
            "{} {:<34} {:>7} {:>8} {:>11}",
            if i == choice.cursor() { "›" } else { " " },
            safe(&p.name),
            p.volume.map(format_bytes).unwrap_or_default(),
            validity(p),
            usd(p.sell_price())
        );
        lines.push(if i == choice.cursor() {
            Line::styled(text, theme.selected())
        } else {
            Line::raw(text)
        });
    }
    lines.push(Line::raw(""));
    lines.push(Line::from(vec![
        Span::raw(qty_label),
        Span::styled(format!("◀ {} ▶", choice.qty()), theme.key()),
        Span::styled(
            look.keymap().say(
                Context::Purchase,
                "   {} {} or 1–9, 0 for 10",
                &[Action::Less, Action::More],
            ),
            theme.muted(),
        ),
    ]));
    lines.push(Line::raw(format!("Total     {}", usd(total))));
    lines.push(Line::raw(""));
    lines.push(keys_line(
        look,
        Context::Purchase,
        "{}: review · {}: cancel",
        &[Action::Accept, Action::Close],
        theme.muted(),
    ));
    lines
}

/// What is paid, the balance before and after, and the key that pays (once the order list
/// was read, `ready`), or why it cannot be paid.
fn confirming(form: &PurchaseForm, ready: bool, look: &Look<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let balance = look.profile().and_then(|p| p.balance_usd);
    let plan = form.plan();
    let mut lines = Vec::new();
    if let Some(iccid) = form.iccid() {
        lines.push(Line::raw(format!("eSIM           {iccid}")));
    }
    lines.push(Line::raw(format!(
        "Plan           {}",
        plan.map_or_else(String::new, |p| safe(&p.name))
    )));
    lines.push(Line::raw(format!(
        "               {}",
        plan.map_or_else(String::new, |p| safe(&p.slug))
    )));
    lines.push(Line::raw(format!("Quantity       {}", form.qty())));
    lines.push(Line::raw(format!("Unit price     {}", usd(form.unit_price()))));
    lines.push(Line::styled(
        format!("Total          {}", usd(form.total())),
        theme.title(),
    ));
    lines.push(Line::raw(format!("Balance now    {}", usd(balance))));
    let after = balance
        .zip(form.total())
        .and_then(|(b, t)| esimdash_front::purchase::balance_after(b, t).ok());
    lines.push(Line::raw(format!("Balance after  {}", usd(after))));
    lines.push(Line::raw(""));
    let refusal = form
        .amount_problem(balance)
        .map(|why| format!("{why}; nothing will be sent."))
        .or_else(|| balance.zip(form.total()).and_then(|(b, t)| shortfall_message(b, t)));
    lines.push(match (refusal, ready) {
        (Some(short), _) => Line::styled(short, theme.error()),
        (None, false) => Line::styled(
            format!("{} Preparing (reading the order list)…", look.spinner()),
            theme.muted(),
        ),
        (None, true) => Line::styled(
            format!(
                "{}: pay {} · {}: back",
                look.keymap().first_key(Context::Confirm, Action::Pay),
                usd(form.total()),
                look.keymap().first_key(Context::Confirm, Action::Back)
            ),
            theme.key(),
        ),
    });
    lines
}

fn done(
    form: &PurchaseForm,
    order: &Order,
    balance: Option<rust_decimal::Decimal>,
    delivery: Delivery,
    look: &Look<'_>,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(
        format!("Placed: order {}", safe(&order.record.provider_order_no)),
        theme.ok(),
    )];
    match delivery {
        Delivery::Resent { replayed } => lines.push(Line::styled(
            if replayed {
                "The first answer was lost; sent once more under the same key, the server replayed it: paid once."
            } else {
                "The first answer was lost; sent once more under the same key, the server carried it out then."
            },
            theme.muted(),
        )),
        Delivery::ResentUnconfirmed => lines.push(Line::styled(
            "The first answer was lost; sent once more, and the answer did not confirm the key: possibly a second order. Check Orders.",
            theme.error(),
        )),
        Delivery::Answered => {}
    }
    lines.push(Line::raw(format!(
        "{} × {} · {}",
        order.record.quantity.unwrap_or(u64::from(form.qty())),
        safe(&order.record.package_name),
        usd(order.total_sell_price)
    )));
    lines.push(Line::raw(format!("Balance now {}", usd(balance))));
    lines.push(refreshing(look, theme));
    lines
}

/// After money moved: the lists are read again, and the key that closes the window.
pub fn refreshing(look: &Look<'_>, theme: &Theme) -> Line<'static> {
    Line::styled(
        format!(
            "Orders and My eSIMs are being refreshed. {}: close",
            look.keymap().first_key(Context::Outcome, Action::Close)
        ),
        theme.muted(),
    )
}

/// No answer came: what the order list says of the payment.
fn unknown(noun: &str, error: &str, lookup: &Lookup, look: &Look<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let found = match lookup {
        Lookup::Checking => Line::raw(format!("{} Looking in the order list…", look.spinner())),
        Lookup::Found(order) => Line::styled(
            format!(
                "The order list shows it was placed: order {}.",
                safe(&order.record.provider_order_no)
            ),
            theme.ok(),
        ),
        Lookup::NotFound => Line::styled(
            format!(
                "The order list shows no new {noun} for this plan: it was most likely not placed. Check Orders before trying again."
            ),
            theme.error(),
        ),
        Lookup::Ambiguous(orders) => Line::styled(
            format!(
                "The order list shows {} new orders that could each be this {noun} ({}): esimdash cannot tell which. Check them in Orders before trying again.",
                orders.len(),
                safe(&orders.join(", "))
            ),
            theme.error(),
        ),
        Lookup::Failed(why) => Line::styled(
            format!(
                "The order list could not be read either ({}): check Orders before trying again.",
                safe(why)
            ),
            theme.error(),
        ),
    };
    vec![
        Line::styled(format!("No answer came: {}", safe(error)), theme.error()),
        Line::raw(format!("The {noun} is not sent again.")),
        Line::raw(""),
        found,
    ]
}

pub fn draw_iccid_prompt(
    frame: &mut Frame,
    area: Rect,
    look: &Look<'_>,
    input: &TextInput,
    error: &Option<String>,
    theme: &Theme,
) {
    let prefix = "ICCID  ";
    let mut lines = vec![Line::from(vec![
        Span::styled(prefix, theme.muted()),
        Span::raw(safe(&input.value)),
    ])];
    lines.push(match error {
        Some(e) => Line::styled(safe(e), theme.error()),
        None => Line::raw(""),
    });
    lines.push(keys_line(
        look,
        Context::IccidPrompt,
        "19 or 20 digits, spaces allowed · {}: continue · {}: cancel",
        &[Action::Accept, Action::Close],
        theme.muted(),
    ));
    let inner = text_popup(frame, area, "Top up which eSIM?", 60, lines, theme);
    let x = inner.x + (prefix.len() + input.cursor) as u16;
    frame.set_cursor_position(Position::new(x.min(inner.right().saturating_sub(1)), inner.y));
}
