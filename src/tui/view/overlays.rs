//! Windows over the tab: help, plan / order / eSIM detail, the status picker, the profile form.

use super::catalog::{location, validity};
use super::lists::short_time;
use super::spinner;
use super::theme::Theme;
use super::widgets::{fields, paragraph, popup, safe};
use crate::api::model::Plan;
use crate::esim::money::format_amount;
use crate::esim::volume::format_bytes;
use crate::tui::app::{App, Overlay, PROFILE_FIELDS, Remote};
use crate::tui::keymap::Context;
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};

fn money(v: Option<rust_decimal::Decimal>, currency: &str) -> String {
    v.map_or_else(
        || "-".to_string(),
        |v| format!("{} {}", format_amount(v), safe(currency)),
    )
}

fn plan_rows(p: &Plan) -> Vec<(&'static str, String)> {
    let pricing = p.pricing.as_ref();
    vec![
        ("Plan", p.name.clone()),
        ("Slug", p.slug.clone()),
        ("Package code", p.package_code.clone()),
        (
            "Location",
            format!("{} ({})", location(&p.location_code), p.location_code),
        ),
        ("Data", p.volume.map(format_bytes).unwrap_or_default()),
        ("Validity", validity(p)),
        (
            "Cost price",
            money(pricing.and_then(|x| x.cost_price), &p.currency_code),
        ),
        ("Sell price", money(p.sell_price(), &p.currency_code)),
        ("Margin", money(pricing.and_then(|x| x.margin), &p.currency_code)),
        (
            "Margin %",
            pricing
                .and_then(|x| x.margin_pct)
                .map(format_amount)
                .unwrap_or_default(),
        ),
        (
            "Rule",
            pricing
                .map(|x| format!("{} / {}", x.rule_scope, x.rule_type))
                .unwrap_or_default(),
        ),
        ("Supplier price", money(p.supplier_price, &p.currency_code)),
    ]
}

pub fn draw(frame: &mut Frame, area: Rect, overlay: &Overlay, app: &App, theme: &Theme) {
    match overlay {
        Overlay::Purchase(form) => super::purchase::draw(frame, area, form, app, theme),
        Overlay::IccidPrompt { input, error } => super::purchase::draw_iccid_prompt(frame, area, input, error, theme),
        Overlay::Help { scroll } => draw_help(frame, area, app, *scroll, theme),
        Overlay::PlanDetail { summary, fetched } => {
            let inner = popup(frame, area, "Plan", 64, 16, theme);
            let plan = fetched.value().map_or(summary.as_ref(), |p| p.as_ref());
            let mut lines = fields(&plan_rows(plan), theme);
            lines.push(Line::raw(""));
            match fetched {
                Remote::Failed { error, .. } => lines.push(Line::styled(
                    format!(
                        "Could not fetch your pricing for this plan: {} (these are the catalog's figures)",
                        safe(&error.server_message().map_or_else(|| error.to_string(), str::to_string))
                    ),
                    theme.error(),
                )),
                Remote::Loading { .. } => lines.push(Line::styled(
                    format!("{} fetching your pricing…", spinner(app)),
                    theme.muted(),
                )),
                _ => {}
            }
            paragraph(frame, inner, lines);
        }
        Overlay::OrderDetail(o) => {
            let inner = popup(frame, area, "Order", 64, 14, theme);
            let r = &o.record;
            let rows = [
                ("Order number", r.provider_order_no.clone()),
                ("Created", short_time(&o.created_at)),
                ("Status", r.status.to_string()),
                ("Package", r.package_name.clone()),
                ("Package code", r.package_code.clone()),
                ("Slug", r.slug.clone()),
                (
                    "Location",
                    format!("{} ({})", location(&r.location_code), r.location_code),
                ),
                ("Quantity", r.quantity.map(|q| q.to_string()).unwrap_or_default()),
                ("Cost price", money(o.cost_price, "USD")),
                ("Sell price", money(o.sell_price, "USD")),
                ("Total", money(o.total_sell_price, "USD")),
            ];
            paragraph(frame, inner, fields(&rows, theme));
        }
        Overlay::StatusPicker { choices, cursor, .. } => {
            let inner = popup(frame, area, "Status filter", 30, choices.len() as u16 + 2, theme);
            let lines = choices
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let name = safe(c.label());
                    if i == *cursor {
                        Line::styled(format!("› {name}"), theme.selected())
                    } else {
                        Line::raw(format!("  {name}"))
                    }
                })
                .collect();
            paragraph(frame, inner, lines);
        }
        Overlay::ProfileForm(form) => {
            let inner = popup(frame, area, "Edit company profile", 70, 12, theme);
            let mut lines = Vec::new();
            let mut cursor = None;
            for (i, label) in PROFILE_FIELDS.iter().enumerate() {
                let focused = i == form.focus;
                let marker = if focused { "›" } else { " " };
                let prefix = format!("{marker} {label:<13} ");
                if focused {
                    let x = inner.x + prefix.chars().count() as u16 + form.inputs[i].cursor as u16;
                    cursor = Some(Position::new(
                        x.min(inner.right().saturating_sub(1)),
                        inner.y + lines.len() as u16,
                    ));
                }
                lines.push(Line::from(vec![
                    Span::styled(prefix, if focused { theme.key() } else { theme.muted() }),
                    Span::raw(safe(&form.inputs[i].value)),
                ]));
                match &form.errors[i] {
                    Some(e) => lines.push(Line::styled(format!("                {e}"), theme.error())),
                    None => lines.push(Line::raw("")),
                }
            }
            if app.is_saving() {
                lines.push(Line::styled(format!("{} saving…", spinner(app)), theme.muted()));
            } else if let Some(e) = &form.server_error {
                lines.push(Line::styled(format!("The server refused: {}", safe(e)), theme.error()));
            } else {
                lines.push(Line::styled(
                    "Enter saves, Esc cancels. An empty field clears it.",
                    theme.muted(),
                ));
            }
            paragraph(frame, inner, lines);
            if let Some(position) = cursor {
                frame.set_cursor_position(position);
            }
        }
    }
}

/// `?`: the keys of the screen the help was opened from (its tab, the lists, everywhere, and
/// its modes), from the keymap in force, so a rebound key shows as rebound.
fn draw_help(frame: &mut Frame, area: Rect, app: &App, scroll: u16, theme: &Theme) {
    let mut contexts = crate::tui::app::Mode::Browse.contexts(app.tab());
    contexts.push(Context::Typing);
    if app.tab() == crate::tui::app::Tab::Esims {
        contexts.extend([Context::EsimDetail, Context::Zoom]);
    }
    let mut lines = Vec::new();
    for context in contexts {
        let rows: Vec<_> = app
            .keymap()
            .rows()
            .iter()
            .filter(|r| r.binding.context == context)
            .collect();
        if rows.is_empty() {
            continue;
        }
        lines.push(Line::styled(context.title().to_string(), theme.title()));
        for row in rows {
            lines.push(Line::from(vec![
                Span::styled(format!("  {:<18} ", row.keys_text()), theme.key()),
                Span::raw(row.binding.about),
            ]));
        }
    }
    lines.push(Line::styled(
        "Windows and forms show their keys on the bottom line; README lists them all.",
        theme.muted(),
    ));
    let height = lines.len() as u16 + 2;
    let inner = popup(frame, area, "Keys", 96, height, theme);
    let scroll = scroll.min((lines.len() as u16).saturating_sub(inner.height));
    frame.render_widget(
        ratatui::widgets::Paragraph::new(lines)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .scroll((scroll, 0)),
        inner,
    );
}
