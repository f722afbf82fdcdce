//! The top-up of the marked eSIMs: the plans offered to all of them, the confirmation of the
//! whole, the run's progress, and what became of each eSIM.

use crate::forms::bulk::{BulkForm, BulkStage, Progress as BulkProgress};
use crate::forms::purchase::view::{choice_lines, refreshing, usd};
use crate::keymap::{Action, Context};
use crate::msg::BulkEnded;
use crate::view::Look;
use crate::view::theme::Theme;
use crate::view::widgets::{keys_line, paragraph, popup, safe};
use esimdash_domain::iccid::EsimIccid;
use esimdash_front::bulk::Ended;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

/// How many eSIMs that were not placed are named, each with why (the rest are in the result).
const NAMED: usize = 4;

pub fn draw(frame: &mut Frame, area: Rect, form: &BulkForm, look: &Look<'_>, theme: &Theme) {
    let title = format!("Top up the {} marked eSIMs", form.count());
    let inner = popup(frame, area, &title, 76, 22, theme);
    let close = look.keymap().first_key(Context::Outcome, Action::Close);
    let lines = match form.stage() {
        BulkStage::Loading { .. } => vec![
            Line::raw(format!(
                "{} Asking which top-ups are offered for each of them…",
                look.spinner()
            )),
            Line::styled(format!("{close}: cancel, nothing is paid"), theme.muted()),
        ],
        BulkStage::Refused(why) => vec![
            Line::styled(safe(why), theme.error()),
            Line::styled(format!("{close}: close"), theme.muted()),
        ],
        BulkStage::LeaveOut { out, kept } => leave_out(out, kept.len(), look, theme),
        BulkStage::Choosing => choosing(form, look, theme),
        BulkStage::Confirming => confirming(form, look, theme),
        BulkStage::Paying(progress) => paying(form, progress, look, theme),
        BulkStage::Ended(ended) => done(form, ended, look, theme),
    };
    paragraph(frame, inner, lines);
}

/// How many eSIMs offered nothing are named (the rest counted).
const LEFT_OUT_NAMED: usize = 12;

fn leave_out(out: &[(EsimIccid, String)], others: usize, look: &Look<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(
        format!("{} of the marked eSIMs cannot be topped up with the others:", out.len()),
        theme.error(),
    )];
    for (iccid, why) in out.iter().take(LEFT_OUT_NAMED) {
        lines.push(Line::raw(format!("  {iccid}  {}", safe(why))));
    }
    if out.len() > LEFT_OUT_NAMED {
        lines.push(Line::raw(format!("  … and {} more", out.len() - LEFT_OUT_NAMED)));
    }
    lines.push(Line::raw(""));
    lines.push(keys_line(
        look,
        Context::BulkLeaveOut,
        &format!("{{}}: unmark them and top up the other {others} · {{}}: close, nothing paid"),
        &[Action::Accept, Action::Close],
        theme.key(),
    ));
    lines
}

fn choosing(form: &BulkForm, look: &Look<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(
        format!("Top-ups the API offers for all {} eSIMs:", form.count()),
        theme.title(),
    )];
    lines.extend(choice_lines(form.choice(), "Each eSIM ", form.total(), look, theme));
    lines
}

fn confirming(form: &BulkForm, look: &Look<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let balance = look.profile().and_then(|p| p.balance_usd);
    let plan = form.plan();
    let total = form.total();
    let after = balance
        .zip(total)
        .and_then(|(b, t)| esimdash_front::purchase::balance_after(b, t).ok());
    let mut lines = vec![
        Line::raw(format!(
            "eSIMs          {}, each its own payment, sent once",
            form.count()
        )),
        Line::raw(format!(
            "Plan           {}",
            plan.map_or_else(String::new, |p| safe(&p.name))
        )),
        Line::raw(format!(
            "               {}",
            plan.map_or_else(String::new, |p| safe(&p.slug))
        )),
        Line::raw(format!("Each eSIM      {}", form.choice().qty())),
        Line::styled(format!("Total          {}", usd(total)), theme.title()),
        Line::raw(format!("Balance now    {}", usd(balance))),
        Line::raw(format!("Balance after  {}", usd(after))),
        Line::raw(""),
        Line::styled(
            "The eSIMs are written to a file in the export directory first: if this session ends mid-way, `esimdash topup --from` that file pays the rest, none twice.",
            theme.muted(),
        ),
        Line::raw(""),
    ];
    lines.push(match form.refusal(balance) {
        Some(why) => Line::styled(why, theme.error()),
        None => Line::styled(
            format!(
                "{}: pay {} · {}: back",
                look.keymap().first_key(Context::Confirm, Action::Pay),
                usd(total),
                look.keymap().first_key(Context::Confirm, Action::Back)
            ),
            theme.key(),
        ),
    });
    lines
}

fn paying(form: &BulkForm, p: &BulkProgress, look: &Look<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let of = form.count();
    let mut lines = vec![if p.paying {
        Line::raw(format!(
            "{} Paying: {} of {of} done · {} placed · {} not placed",
            look.spinner(),
            p.done(),
            p.placed,
            p.not_placed
        ))
    } else {
        Line::raw(format!(
            "{} Checking every eSIM and the balance before paying…",
            look.spinner()
        ))
    }];
    const WIDTH: usize = 40;
    let filled = (p.done() * WIDTH).checked_div(of).unwrap_or(0).min(WIDTH);
    lines.push(Line::styled(
        format!("[{}{}]", "#".repeat(filled), "-".repeat(WIDTH - filled)),
        theme.key(),
    ));
    lines.push(Line::raw(p.last.as_deref().map(safe).unwrap_or_default()));
    lines.push(Line::raw(""));
    lines.push(if p.stopping {
        Line::styled(
            "Stopping after the payment in flight: no further eSIM is paid.",
            theme.error(),
        )
    } else {
        keys_line(
            look,
            Context::BulkPaying,
            "{}: stop after the payment in flight",
            &[Action::Close],
            theme.muted(),
        )
    });
    lines
}

fn done(form: &BulkForm, e: &BulkEnded, look: &Look<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let of = form.count();
    let all = e.placed.len() == of;
    let mut lines = vec![if all {
        Line::styled(format!("All {of} eSIMs topped up."), theme.ok())
    } else {
        Line::styled(
            format!(
                "{} of {of} topped up{}: {} failed, {} unknown, {} not paid.",
                e.placed.len(),
                match e.ended {
                    Ended::Done => "",
                    Ended::Stopped => " (stopped)",
                    Ended::AtUnknown => " (stopped: an outcome is unknown)",
                    Ended::Refused => " (stopped: the API refused the credentials)",
                },
                e.failed.len(),
                e.unknown.len(),
                e.not_paid
            ),
            theme.error(),
        )
    }];
    let named = e
        .unknown
        .iter()
        .map(|u| (u, "unknown"))
        .chain(e.failed.iter().map(|f| (f, "failed")));
    for ((iccid, why), word) in named.take(NAMED) {
        lines.push(Line::styled(format!("{iccid} {word}: {}", safe(why)), theme.error()));
    }
    if let Some(problem) = &e.problem {
        lines.push(Line::styled(safe(problem), theme.error()));
    }
    if !all {
        lines.push(Line::raw(
            "The eSIMs topped up are unmarked; those not paid stay marked: t pays them.",
        ));
    }
    if !e.unknown.is_empty() {
        lines.push(Line::raw(format!(
            "Those of unknown outcome are unmarked too: they may have been placed. Check Orders; `esimdash topup --from {} --again` pays them.",
            e.file.display()
        )));
    }
    lines.push(Line::raw(""));
    lines.push(Line::raw(format!("eSIMs   {}", e.file.display())));
    lines.push(match &e.result {
        Ok(path) => Line::raw(format!("Result  {}", path.display())),
        Err(why) => Line::styled(format!("Result not written: {}", safe(why)), theme.error()),
    });
    lines.push(refreshing(look, theme));
    lines
}
