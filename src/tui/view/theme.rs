//! Styles. With `NO_COLOR` set, only bold and reverse video remain.

use crate::present::StatusTone;
use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    /// Colours unless `NO_COLOR` is set to anything non-empty (no-color.org).
    pub fn from_env() -> Self {
        Self {
            color: crate::present::colour_allowed(),
        }
    }

    fn pick(&self, colored: Style, plain: Style) -> Style {
        if self.color { colored } else { plain }
    }

    pub fn header(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Black).bg(Color::Cyan),
            Style::new().add_modifier(Modifier::REVERSED),
        )
    }

    /// The header in a profile's own colour, with text that stays readable on it.
    pub fn header_in(&self, color: Option<Color>) -> Style {
        match color {
            Some(bg) if self.color => {
                let dark = matches!(
                    bg,
                    Color::Black | Color::Red | Color::Blue | Color::Magenta | Color::DarkGray | Color::Green
                ) || matches!(bg, Color::Rgb(r, g, b) if u32::from(r) * 299 + u32::from(g) * 587 + u32::from(b) * 114 < 128_000);
                Style::new()
                    .bg(bg)
                    .fg(if dark { Color::White } else { Color::Black })
                    .add_modifier(Modifier::BOLD)
            }
            _ => self.header(),
        }
    }

    pub fn tab_active(&self) -> Style {
        self.pick(
            Style::new()
                .fg(Color::Black)
                .bg(Color::White)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )
    }

    pub fn selected(&self) -> Style {
        self.pick(
            Style::new().bg(Color::Blue).fg(Color::White),
            Style::new().add_modifier(Modifier::REVERSED),
        )
    }

    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn muted(&self) -> Style {
        self.pick(Style::new().fg(Color::DarkGray), Style::new())
    }

    pub fn error(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// A warning in the header (on its cyan): black on yellow, or bold without colour.
    pub fn warning(&self) -> Style {
        self.pick(
            Style::new()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        )
    }

    pub fn ok(&self) -> Style {
        self.pick(Style::new().fg(Color::Green), Style::new())
    }

    /// A status by its tone; without colour, plain (the marker and bold of the selected row stay).
    pub fn status(&self, tone: StatusTone) -> Style {
        let colour = match tone {
            StatusTone::Usable => Style::new().fg(Color::Green),
            StatusTone::Waiting => Style::new().fg(Color::Yellow),
            StatusTone::Ended => Style::new().add_modifier(Modifier::DIM),
            StatusTone::Failed => Style::new().fg(Color::Red),
            StatusTone::Unknown => Style::new(),
        };
        self.pick(colour, Style::new())
    }

    pub fn key(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
}
