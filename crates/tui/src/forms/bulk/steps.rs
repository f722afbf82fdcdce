//! What a bulk top-up's run tells as it goes: its window shows each step; at its end the eSIMs
//! done leave the marks (what is left marked is what was not topped up), and money moved.

use super::{BulkForm, one_line};
use crate::kit::status::Tone;
use crate::kit::then::Event;
use crate::kit::then::Then;
use crate::msg::{BulkEnded, BulkStep};
use esimdash_domain::iccid::EsimIccid;

/// A step of a run: `form` is its window, if it still shows this run; `ours`: the run is of
/// the account in use.
pub fn on_step(form: Option<&mut BulkForm>, ours: bool, step: BulkStep) -> Vec<Then> {
    match (step, form) {
        (BulkStep::Paying, Some(form)) => form.paying(),
        (BulkStep::Row { iccid, state }, Some(form)) => form.row_done(&iccid, &state),
        (BulkStep::Repeats(repeats), Some(form)) => form.repeated(repeats),
        (BulkStep::Repeats(repeats), None) => {
            return vec![Then::Flash(
                format!(
                    "Bulk top-up: nothing was paid; {} were topped up with the same minutes ago",
                    repeats.len()
                ),
                Tone::Error,
            )];
        }
        (BulkStep::Ended(result), form) => return ended(form, ours, result),
        (BulkStep::Paying | BulkStep::Row { .. }, None) => {}
    }
    Vec::new()
}

fn ended(form: Option<&mut BulkForm>, ours: bool, result: Result<BulkEnded, String>) -> Vec<Then> {
    let mut then = Vec::new();
    if let (true, Ok(ended)) = (ours, &result) {
        // Those of unknown outcome too: `t` again must not pay what may have been paid.
        let unknown = ended.unknown.iter().map(|(iccid, _)| iccid);
        let done = ended
            .placed
            .iter()
            .chain(unknown)
            .cloned()
            .map(EsimIccid::from)
            .collect();
        then.push(Then::Tell(Event::Unmark(done)));
        if !ended.placed.is_empty() {
            then.push(Then::MoneyMoved(None));
            then.push(Then::Tell(Event::ToppedUpMany(ended.placed.clone())));
        }
    }
    match (form, result) {
        (Some(form), result) => {
            let chosen = form.chosen();
            form.ended(result);
            if let Some((slug, qty)) = chosen {
                then.push(Then::Tell(Event::BulkChoice(slug, qty)));
            }
            // "Stopping…" is over: the window tells how it ended.
            then.push(Then::Quiet);
        }
        // The window was closed under it (credentials refused): said on the status line.
        (None, Ok(ended)) => {
            let clean = ended.failed.is_empty() && ended.unknown.is_empty() && ended.not_paid == 0;
            let tone = if clean { Tone::Success } else { Tone::Error };
            then.push(Then::Flash(one_line(&ended), tone));
        }
        (None, Err(why)) => then.push(Then::Flash(format!("Bulk top-up: {why}"), Tone::Error)),
    }
    then
}
