//! A colour as the config file names it (a profile's `color`), kept as data: the dashboard turns
//! it into its terminal styles. The names and forms are those terminal libraries take (ratatui's
//! among them), so a file that worked before keeps working.

use std::str::FromStr;

/// One of the 16 terminal colours (or the terminal's own, `reset`), an entry of the 256-colour
/// palette, or a 24-bit colour.
/// The dashboard's built-in themes (`theme` in the config file): `dark` (the default, for a
/// dark terminal), `light` (for a light one: no yellow or grey text on white) and
/// `high-contrast` (no dim text, bold bright colours). `NO_COLOR` wins over any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThemeName {
    #[default]
    Dark,
    Light,
    HighContrast,
}

impl ThemeName {
    pub const ALL: [ThemeName; 3] = [ThemeName::Dark, ThemeName::Light, ThemeName::HighContrast];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Colour {
    Reset,
    Black,
    Red,
    Green,
    Yellow,
    Blue,
    Magenta,
    Cyan,
    Gray,
    DarkGray,
    LightRed,
    LightGreen,
    LightYellow,
    LightBlue,
    LightMagenta,
    LightCyan,
    White,
    Indexed(u8),
    Rgb(u8, u8, u8),
}

/// The text is not a colour name, a palette index or `#rrggbb`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a colour")]
pub struct NotAColour;

impl FromStr for Colour {
    type Err = NotAColour;

    /// `red`, `Light Blue`, `bright-red`, `grey`, `silver`, `9`, `#ff8800`: case, spaces, dashes
    /// and underscores do not matter in a name, and the common synonyms are taken.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let name = text
            .to_lowercase()
            .replace([' ', '-', '_'], "")
            .replace("bright", "light")
            .replace("grey", "gray")
            .replace("silver", "gray")
            .replace("lightblack", "darkgray")
            .replace("lightwhite", "white")
            .replace("lightgray", "white");
        Ok(match name.as_str() {
            "reset" => Colour::Reset,
            "black" => Colour::Black,
            "red" => Colour::Red,
            "green" => Colour::Green,
            "yellow" => Colour::Yellow,
            "blue" => Colour::Blue,
            "magenta" => Colour::Magenta,
            "cyan" => Colour::Cyan,
            "gray" => Colour::Gray,
            "darkgray" => Colour::DarkGray,
            "lightred" => Colour::LightRed,
            "lightgreen" => Colour::LightGreen,
            "lightyellow" => Colour::LightYellow,
            "lightblue" => Colour::LightBlue,
            "lightmagenta" => Colour::LightMagenta,
            "lightcyan" => Colour::LightCyan,
            "white" => Colour::White,
            _ => match text.parse::<u8>() {
                Ok(index) => Colour::Indexed(index),
                Err(_) => hex(text).ok_or(NotAColour)?,
            },
        })
    }
}

/// `#rrggbb`.
fn hex(text: &str) -> Option<Colour> {
    let digits = text.strip_prefix('#').filter(|d| d.len() == 6)?;
    let byte = |at: usize| u8::from_str_radix(digits.get(at..at + 2)?, 16).ok();
    Some(Colour::Rgb(byte(0)?, byte(2)?, byte(4)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_palette_entries_and_hex_are_colours() {
        assert_eq!("red".parse(), Ok(Colour::Red));
        assert_eq!("Bright-Blue".parse(), Ok(Colour::LightBlue));
        assert_eq!("light grey".parse(), Ok(Colour::White));
        assert_eq!("light_black".parse(), Ok(Colour::DarkGray));
        assert_eq!("208".parse(), Ok(Colour::Indexed(208)));
        assert_eq!("#Ff8800".parse(), Ok(Colour::Rgb(255, 136, 0)));
        for bad in [
            "", "reddish", "256", "#ff880", "#ff88001", "ff8800", "#gg0000", "#ff88é",
        ] {
            assert_eq!(bad.parse::<Colour>(), Err(NotAColour), "{bad:?}");
        }
    }
}
