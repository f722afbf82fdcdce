//! A team command's window (`[[commands]]`, run from the palette): what was run, with each
//! argument as it was passed, then its output and how it ended (its exit status, or stopped at
//! its time limit). It runs off the event loop; closing the window leaves it to end by itself,
//! and its end is said on the status line then.

use crate::keymap::{Action, Context};
use crate::view::Look;
use crate::view::theme::Theme;
use crate::view::widgets::{keys_line, paragraph, popup, safe};
use esimdash_front::team_commands::Ran;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct CommandOutput {
    pub id: u64,
    pub name: String,
    pub argv: Vec<String>,
    pub timeout: Duration,
    /// Its end, once it came.
    pub ran: Option<Ran>,
}

/// An argument as a shell would need it written to mean the same: bare when it is plain.
fn shown(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,?&#".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

pub(crate) fn draw(frame: &mut Frame, area: Rect, window: &CommandOutput, look: &Look<'_>, theme: &Theme) {
    const WIDTH: u16 = 78;
    let height = area.height.min(20);
    let inner = popup(frame, area, &safe(&window.name), WIDTH, height, theme);
    let command: Vec<String> = window.argv.iter().map(|a| shown(a)).collect();
    let mut lines = vec![Line::styled(safe(&format!("$ {}", command.join(" "))), theme.muted())];
    let room = usize::from(inner.height).saturating_sub(4);
    match &window.ran {
        None => lines.push(Line::styled(
            format!(
                "{} running (stopped at {} s)…",
                look.spinner(),
                window.timeout.as_secs()
            ),
            theme.muted(),
        )),
        Some(ran) => {
            let output: Vec<&str> = ran.output.lines().collect();
            let skipped = output.len().saturating_sub(room);
            if skipped > 0 {
                lines.push(Line::styled(format!("… {skipped} lines above"), theme.muted()));
            }
            lines.extend(output.into_iter().skip(skipped).map(|l| Line::raw(safe(l))));
            let style = if ran.status == Some(0) {
                theme.ok()
            } else {
                theme.error()
            };
            lines.push(Line::styled(ran.outcome(window.timeout), style));
        }
    }
    lines.push(keys_line(
        look,
        Context::Popup,
        "{} close",
        &[Action::Close],
        theme.muted(),
    ));
    paragraph(frame, inner, lines);
}
