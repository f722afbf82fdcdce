//! Styles, in the theme the config file names (`dark`, `light`, `high-contrast`: the colours
//! each reads best on). With `NO_COLOR` set, only bold and reverse video remain, whatever the
//! theme.

use esimdash_domain::esim_state::Tone;
use esimdash_front::config::{Colour, ThemeName};
use esimdash_front::format::verdict::StatusTone;
use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
    pub name: ThemeName,
}

/// The colours a theme gives the few roles that differ between terminals' backgrounds.
struct Colours {
    /// Secondary text (hints, units, the age of a figure).
    muted: Color,
    /// A key named in a sentence, and a question's keys.
    key: Color,
    /// The selected row: its background and text.
    selected: (Color, Color),
    ok: Color,
    /// A status or state that waits (pending, ready to install).
    waiting: Color,
    /// Spend bars and the header's sparkline.
    spend: Color,
    spark: Color,
}

impl Theme {
    /// `name`'s colours unless `NO_COLOR` is set to anything non-empty (no-color.org).
    pub fn from_env(name: ThemeName) -> Self {
        Self {
            color: esimdash_domain::text::colour_allowed(),
            name,
        }
    }

    /// Colours in the default theme (`dark`), or none: what tests draw with.
    pub fn dark(color: bool) -> Self {
        Self {
            color,
            name: ThemeName::Dark,
        }
    }

    fn colours(&self) -> Colours {
        match self.name {
            ThemeName::Dark => Colours {
                muted: Color::DarkGray,
                key: Color::Yellow,
                selected: (Color::Blue, Color::White),
                ok: Color::Green,
                waiting: Color::Yellow,
                spend: Color::Cyan,
                spark: Color::Blue,
            },
            // On white: no yellow or light grey text; a light selection with black text.
            ThemeName::Light => Colours {
                muted: Color::DarkGray,
                key: Color::Blue,
                selected: (Color::LightBlue, Color::Black),
                ok: Color::Green,
                waiting: Color::Magenta,
                spend: Color::Blue,
                spark: Color::Black,
            },
            // No dim text anywhere; bright colours.
            ThemeName::HighContrast => Colours {
                muted: Color::White,
                key: Color::LightYellow,
                selected: (Color::White, Color::Black),
                ok: Color::LightGreen,
                waiting: Color::LightYellow,
                spend: Color::LightCyan,
                spark: Color::Black,
            },
        }
    }

    fn pick(&self, colored: Style, plain: Style) -> Style {
        if self.color { colored } else { plain }
    }

    /// Text in `colour`, or plain without colour.
    fn tint(&self, colour: Color) -> Style {
        self.pick(Style::new().fg(colour), Style::new())
    }

    /// Bold text in `colour`, or bold without colour.
    fn bold_tint(&self, colour: Color) -> Style {
        self.tint(colour).add_modifier(Modifier::BOLD)
    }

    /// Bold black on `bg`, or bold in reverse video (with `also`) without colour.
    fn bold_on(&self, bg: Color, also: Modifier) -> Style {
        let bold = Modifier::BOLD;
        self.pick(
            Style::new().fg(Color::Black).bg(bg).add_modifier(bold),
            Style::new().add_modifier(bold | also),
        )
    }

    pub fn header(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Black).bg(Color::Cyan),
            Style::new().add_modifier(Modifier::REVERSED),
        )
    }

    /// The header in a profile's own colour, with text that stays readable on it.
    pub fn header_in(&self, color: Option<Colour>) -> Style {
        match color.map(terminal_color) {
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
        self.bold_on(Color::White, Modifier::REVERSED)
    }

    pub fn selected(&self) -> Style {
        let (bg, fg) = self.colours().selected;
        let style = Style::new().bg(bg).fg(fg);
        let style = if self.name == ThemeName::HighContrast {
            style.add_modifier(Modifier::BOLD)
        } else {
            style
        };
        self.pick(style, Style::new().add_modifier(Modifier::REVERSED))
    }

    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn muted(&self) -> Style {
        self.tint(self.colours().muted)
    }

    pub fn error(&self) -> Style {
        self.bold_tint(Color::Red)
    }

    /// A warning in the header (on its cyan): black on yellow, or bold without colour.
    pub fn warning(&self) -> Style {
        self.bold_on(Color::Yellow, Modifier::REVERSED)
    }

    pub fn ok(&self) -> Style {
        self.tint(self.colours().ok)
    }

    /// A status by its tone; without colour, plain (the marker and bold of the selected row stay).
    pub fn status(&self, tone: StatusTone) -> Style {
        match tone {
            StatusTone::Usable => self.tint(Color::Green),
            StatusTone::Waiting => self.tint(self.colours().waiting),
            StatusTone::Ended if self.name == ThemeName::HighContrast => Style::new(),
            StatusTone::Ended => self.pick(Style::new().add_modifier(Modifier::DIM), Style::new()),
            StatusTone::Failed => self.tint(Color::Red),
            StatusTone::Unknown => Style::new(),
        }
    }

    /// An eSIM's state by its tone, bold: the first thing an agent reads in the pane.
    pub fn verdict(&self, tone: Tone) -> Style {
        let colour = match tone {
            Tone::Good => Some(Color::Green),
            Tone::Waiting => Some(self.colours().waiting),
            Tone::Warning => Some(Color::LightRed),
            Tone::Ended => Some(Color::Red),
            Tone::Unknown => None,
        };
        colour
            .map_or(Style::new(), |c| self.tint(c))
            .add_modifier(Modifier::BOLD)
    }

    /// Spend in the money charts: its bars (their heights carry it without colour).
    pub fn spend(&self) -> Style {
        self.tint(self.colours().spend)
    }

    /// Margin in the money charts.
    pub fn margin(&self) -> Style {
        self.tint(Color::Green)
    }

    /// The header's sparkline, on the header's own background.
    pub fn spark(&self) -> Style {
        self.tint(self.colours().spark)
    }

    pub fn key(&self) -> Style {
        self.bold_tint(self.colours().key)
    }
}

/// A colour of the config file, as the terminal draws it.
fn terminal_color(colour: Colour) -> Color {
    match colour {
        Colour::Reset => Color::Reset,
        Colour::Black => Color::Black,
        Colour::Red => Color::Red,
        Colour::Green => Color::Green,
        Colour::Yellow => Color::Yellow,
        Colour::Blue => Color::Blue,
        Colour::Magenta => Color::Magenta,
        Colour::Cyan => Color::Cyan,
        Colour::Gray => Color::Gray,
        Colour::DarkGray => Color::DarkGray,
        Colour::LightRed => Color::LightRed,
        Colour::LightGreen => Color::LightGreen,
        Colour::LightYellow => Color::LightYellow,
        Colour::LightBlue => Color::LightBlue,
        Colour::LightMagenta => Color::LightMagenta,
        Colour::LightCyan => Color::LightCyan,
        Colour::White => Color::White,
        Colour::Indexed(i) => Color::Indexed(i),
        Colour::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The config file's colours are read as ratatui reads colours, so a profile's `color` that
    /// worked when ratatui read it still means the same colour.
    #[test]
    fn a_config_colour_is_the_colour_ratatui_reads_from_the_same_text() {
        let names = [
            "reset",
            "black",
            "red",
            "green",
            "yellow",
            "blue",
            "magenta",
            "cyan",
            "gray",
            "grey",
            "silver",
            "dark gray",
            "darkgrey",
            "light-red",
            "bright_green",
            "LightYellow",
            "lightblue",
            "light magenta",
            "lightcyan",
            "white",
            "light white",
            "light black",
            "light gray",
            "bright grey",
        ];
        let others = [
            "0", "15", "255", "256", "-1", "+7", "#000000", "#FFffFF", "#12ab9z", "#12ab9", "#12ab9cd", "#+f0000",
            "12ab9c", "", " ", "redd", "dark", "#ff88é", "light", "purple",
        ];
        for text in names.into_iter().chain(others) {
            let ours = text.parse::<Colour>().ok().map(terminal_color);
            let theirs = text.parse::<Color>().ok();
            assert_eq!(ours, theirs, "{text:?}");
        }
    }

    /// Each theme colours what it names; without colour (`NO_COLOR`) every theme is the same
    /// plain text, bold and reverse video. The light theme writes no yellow, white or light grey
    /// text (unreadable on white), the high-contrast one no dark grey or dim text.
    #[test]
    fn themes_colour_as_named_and_no_color_wins_over_each() {
        use ratatui::style::Color;
        let plain = Theme::dark(false);
        for name in ThemeName::ALL {
            let coloured = Theme { color: true, name };
            let uncoloured = Theme { color: false, name };
            for (with, without) in [
                (coloured.key(), uncoloured.key()),
                (coloured.muted(), uncoloured.muted()),
                (coloured.selected(), uncoloured.selected()),
                (
                    coloured.status(StatusTone::Waiting),
                    uncoloured.status(StatusTone::Waiting),
                ),
            ] {
                assert!(with.fg.is_some() || with.bg.is_some(), "{name:?} colours");
                assert_eq!((without.fg, without.bg), (None, None), "{name:?} without colour");
            }
            assert_eq!(uncoloured.key(), plain.key(), "{name:?}: one plain look");
        }
        let light = Theme {
            color: true,
            name: ThemeName::Light,
        };
        for style in [
            light.key(),
            light.muted(),
            light.status(StatusTone::Waiting),
            light.ok(),
        ] {
            assert!(
                !matches!(
                    style.fg,
                    Some(Color::Yellow | Color::LightYellow | Color::White | Color::Gray)
                ),
                "{style:?}"
            );
        }
        let high = Theme {
            color: true,
            name: ThemeName::HighContrast,
        };
        assert_ne!(high.muted().fg, Some(Color::DarkGray));
        assert!(!high.status(StatusTone::Ended).add_modifier.contains(Modifier::DIM));
    }
}
