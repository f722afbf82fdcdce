//! Copying to the clipboard, also over SSH and inside tmux: the system clipboard where there is
//! one (its handle kept for the life of the app: on X11 the content lives only as long as it),
//! and OSC 52 through the terminal otherwise. OSC 52 cannot confirm delivery, so what it does is
//! reported as "sent", never as "copied".

use base64::Engine;
use std::io::Write;

/// Which clipboard to use (`ESIMDASH_CLIPBOARD`, config key `clipboard`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Over SSH or with no display: OSC 52; otherwise the system clipboard, then OSC 52.
    #[default]
    Auto,
    System,
    Osc52,
    Off,
}

impl std::str::FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Strategy::Auto),
            "system" => Ok(Strategy::System),
            "osc52" => Ok(Strategy::Osc52),
            "off" => Ok(Strategy::Off),
            other => Err(format!(
                "unknown clipboard strategy {other:?}: use auto, system, osc52 or off"
            )),
        }
    }
}

/// What the environment says about where we run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Environment {
    pub ssh: bool,
    pub display: bool,
    pub tmux: bool,
    pub screen: bool,
}

impl Environment {
    pub fn from_env() -> Self {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        let term = std::env::var("TERM").unwrap_or_default();
        Self {
            ssh: set("SSH_TTY") || set("SSH_CONNECTION"),
            // macOS and Windows always have a clipboard; elsewhere it takes X11 or Wayland.
            display: cfg!(any(target_os = "macos", target_os = "windows")) || set("DISPLAY") || set("WAYLAND_DISPLAY"),
            tmux: set("TMUX"),
            screen: !set("TMUX") && (set("STY") || term.starts_with("screen")),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    System,
    Osc52,
}

/// The routes to try, in order.
pub fn routes(strategy: Strategy, env: Environment) -> Vec<Route> {
    match strategy {
        Strategy::Auto if env.ssh || !env.display => vec![Route::Osc52],
        Strategy::Auto => vec![Route::System, Route::Osc52],
        Strategy::System => vec![Route::System],
        Strategy::Osc52 => vec![Route::Osc52],
        Strategy::Off => Vec::new(),
    }
}

/// Where the text went, for the message the user sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    System,
    /// Sent to the terminal; `via` names tmux or screen when it went through them.
    Osc52 {
        via: Option<&'static str>,
    },
}

impl Delivery {
    /// "copied to the system clipboard" / "sent to the terminal's clipboard (OSC 52 through tmux)".
    pub fn describe(&self) -> String {
        match self {
            Delivery::System => "copied to the system clipboard".to_string(),
            Delivery::Osc52 { via: Some(via) } => format!("sent to the terminal's clipboard (OSC 52 through {via})"),
            Delivery::Osc52 { via: None } => "sent to the terminal's clipboard (OSC 52)".to_string(),
        }
    }
}

/// Longest text sent by OSC 52 (base64 grows it by a third; many terminals stop near 100 kB).
pub const OSC52_MAX_TEXT: usize = 74_000;

/// The OSC 52 bytes that set the clipboard to `text`. Inside tmux: the plain sequence (tmux keeps
/// it in its buffer with `set-clipboard on` and passes it on) and the same wrapped for tmux's
/// passthrough (for the outer terminal when `allow-passthrough` is on). Inside screen: wrapped in
/// DCS chunks, as screen requires.
pub fn osc52(text: &str, env: Environment) -> Result<Vec<u8>, String> {
    if text.len() > OSC52_MAX_TEXT {
        return Err(format!(
            "the text is too long for OSC 52 ({} bytes, at most {OSC52_MAX_TEXT})",
            text.len()
        ));
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    let plain = format!("\x1b]52;c;{encoded}\x07");
    let bytes = if env.tmux {
        // In passthrough every ESC of the inner sequence is doubled.
        format!("{plain}\x1bPtmux;{}\x1b\\", plain.replace('\x1b', "\x1b\x1b"))
    } else if env.screen {
        plain
            .as_bytes()
            .chunks(76)
            .map(|c| format!("\x1bP{}\x1b\\", String::from_utf8_lossy(c)))
            .collect()
    } else {
        plain
    };
    Ok(bytes.into_bytes())
}

/// What the dashboard copies, each checked to be what it claims before it is put anywhere a
/// shell or a phone could take it from: an ICCID is its digits (Luhn-checked), an activation
/// code passes the QR code's own check (`LPA:1$…`, visible ASCII only), an install link is made
/// from such a code. The error says why nothing was copied.
pub mod guard {
    use esimdash_domain::iccid::EsimIccid;
    use esimdash_domain::lpa::{ActivationCode, apple_install_link, checked_code};

    /// The ICCID as its digits alone (spaces and dashes between groups dropped).
    pub fn iccid(iccid: &EsimIccid) -> Result<String, String> {
        iccid
            .valid()
            .map(|i| i.as_str().to_string())
            .map_err(|e| format!("this eSIM's ICCID from the API is not valid ({e})"))
    }

    /// The activation code, trimmed.
    pub fn activation_code(code: &str) -> Result<String, String> {
        checked_code(code)
    }

    /// The SM-DP+ address of the activation code, for a phone's manual entry.
    pub fn smdp_address(code: &str) -> Result<String, String> {
        parts(code).map(|p| p.smdp_address)
    }

    /// The matching ID of the activation code, for a phone's manual entry; a code may have none
    /// (the SM-DP+ then knows the eSIM by the phone's EID), and then there is nothing to copy.
    pub fn matching_id(code: &str) -> Result<String, String> {
        match parts(code)?.matching_id {
            id if id.is_empty() => Err("this activation code has no matching ID".to_string()),
            id => Ok(id),
        }
    }

    fn parts(code: &str) -> Result<ActivationCode, String> {
        ActivationCode::parse(&checked_code(code)?)
            .ok_or_else(|| "the API's activation code is not an LPA:1$… code".to_string())
    }

    /// The iPhone install link of the activation code.
    pub fn install_link(code: &str) -> Result<String, String> {
        let code = checked_code(code)?;
        apple_install_link(&code).ok_or_else(|| "the API's activation code is not an LPA:1$… code".to_string())
    }
}

/// Nothing with a control or bidirectional character is ever copied, whatever asked for it: a
/// pasted newline runs a shell's line, an escape sequence acts on the terminal it is pasted in.
pub fn refuse_unsafe(text: &str) -> Result<(), String> {
    match text.chars().find(|&c| esimdash_domain::text::is_unsafe(c)) {
        Some(c) => Err(format!("the text holds a control character (U+{:04X})", u32::from(c))),
        None => Ok(()),
    }
}

pub struct Clipboard {
    routes: Vec<Route>,
    env: Environment,
    system: Option<arboard::Clipboard>,
}

impl Clipboard {
    pub fn new(strategy: Strategy, env: Environment) -> Self {
        Self {
            routes: routes(strategy, env),
            env,
            system: None,
        }
    }

    /// Puts `text` on the clipboard by the first route that works; `terminal` receives OSC 52.
    pub fn copy(&mut self, text: &str, terminal: &mut impl Write) -> Result<Delivery, String> {
        if self.routes.is_empty() {
            return Err("copying is switched off (ESIMDASH_CLIPBOARD=off)".to_string());
        }
        refuse_unsafe(text)?;
        let mut failures = Vec::new();
        for route in self.routes.clone() {
            let attempt = match route {
                Route::System => self.copy_system(text),
                Route::Osc52 => osc52(text, self.env)
                    .and_then(|bytes| {
                        terminal
                            .write_all(&bytes)
                            .and_then(|()| terminal.flush())
                            .map_err(|e| e.to_string())
                    })
                    .map(|()| Delivery::Osc52 { via: self.via() }),
            };
            match attempt {
                Ok(delivery) => return Ok(delivery),
                Err(e) => failures.push(e),
            }
        }
        Err(format!("nothing was copied: {}", failures.join("; ")))
    }

    fn via(&self) -> Option<&'static str> {
        if self.env.tmux {
            Some("tmux")
        } else if self.env.screen {
            Some("screen")
        } else {
            None
        }
    }

    fn copy_system(&mut self, text: &str) -> Result<Delivery, String> {
        if self.system.is_none() {
            let clipboard = esimdash_domain::panic_guard::contain(arboard::Clipboard::new)
                .map_err(|p| format!("the system clipboard failed: {p}"))?
                .map_err(|e| format!("no system clipboard: {e}"))?;
            self.system = Some(clipboard);
        }
        let Some(system) = self.system.as_mut() else {
            return Err("no system clipboard".to_string());
        };
        system
            .set_text(text)
            .map(|()| Delivery::System)
            .map_err(|e| format!("the system clipboard refused: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use esimdash_domain::iccid::EsimIccid;

    const SSH: Environment = Environment {
        ssh: true,
        display: true,
        tmux: false,
        screen: false,
    };
    const DESKTOP: Environment = Environment {
        ssh: false,
        display: true,
        tmux: false,
        screen: false,
    };
    const HEADLESS: Environment = Environment {
        ssh: false,
        display: false,
        tmux: false,
        screen: false,
    };

    #[test]
    fn the_route_for_each_environment() {
        assert_eq!(routes(Strategy::Auto, SSH), vec![Route::Osc52]);
        assert_eq!(routes(Strategy::Auto, HEADLESS), vec![Route::Osc52]);
        assert_eq!(routes(Strategy::Auto, DESKTOP), vec![Route::System, Route::Osc52]);
        assert_eq!(routes(Strategy::System, SSH), vec![Route::System]);
        assert_eq!(routes(Strategy::Osc52, DESKTOP), vec![Route::Osc52]);
        assert!(routes(Strategy::Off, DESKTOP).is_empty());
        assert_eq!("OSC52".parse::<Strategy>(), Ok(Strategy::Osc52));
        assert!("clippy".parse::<Strategy>().is_err());
    }

    #[test]
    fn the_exact_osc52_bytes_plain_tmux_and_screen() {
        // base64("8944") = "ODk0NA=="
        assert_eq!(osc52("8944", HEADLESS).unwrap(), b"\x1b]52;c;ODk0NA==\x07");
        let tmux = Environment { tmux: true, ..HEADLESS };
        assert_eq!(
            osc52("8944", tmux).unwrap(),
            b"\x1b]52;c;ODk0NA==\x07\x1bPtmux;\x1b\x1b]52;c;ODk0NA==\x07\x1b\\"
        );
        let screen = Environment {
            screen: true,
            ..HEADLESS
        };
        assert_eq!(osc52("8944", screen).unwrap(), b"\x1bP\x1b]52;c;ODk0NA==\x07\x1b\\");
        // 200 bytes are 268 in base64, 276 with the sequence around them: four chunks of 76.
        let long = osc52(&"x".repeat(200), screen).unwrap();
        assert_eq!(
            String::from_utf8(long).unwrap().matches("\x1bP").count(),
            4,
            "chunks of 76 bytes"
        );
        assert!(
            osc52(&"x".repeat(OSC52_MAX_TEXT + 1), HEADLESS)
                .unwrap_err()
                .contains("too long")
        );
    }

    #[test]
    fn the_guard_lets_through_only_what_each_kind_claims_to_be() {
        // 8944 5000 0000 0000 01 and its Luhn check digit.
        let iccid = "8944500000000000014";
        let guard_iccid = |text: &str| guard::iccid(&EsimIccid::parse(text));
        assert_eq!(guard_iccid(iccid).unwrap(), iccid);
        assert_eq!(guard_iccid("8944 5000 0000 0000 014").unwrap(), iccid, "digits alone");
        for bad in [
            "8944500000000000013",
            "8944500000000000014\x1b[2J",
            "89445\n00000000000014",
            "",
        ] {
            let err = guard_iccid(bad).unwrap_err();
            assert!(err.contains("not valid"), "{bad:?}: {err}");
        }
        let code = "LPA:1$rsp.esim.example$ABC-123";
        assert_eq!(guard::activation_code(&format!(" {code}\n")).unwrap(), code);
        assert_eq!(
            guard::install_link(code).unwrap(),
            format!("{}{code}", esimdash_domain::lpa::APPLE_INSTALL_PREFIX)
        );
        // What `Y` used to copy as it came: pasted into a shell, the newline runs the rest.
        for hostile in [
            "LPA:1$rsp.esim.example$ABC\x1b]52;c;ZWNobyBvd25lZA==\x07",
            "LPA:1$rsp.esim.example$ABC\nrm -rf ~",
            "LPA:1$rsp.esim.example$ABC\u{202e}",
            "https://evil.example/LPA:1$x$y",
        ] {
            assert!(guard::activation_code(hostile).is_err(), "{hostile:?}");
            assert!(guard::install_link(hostile).is_err(), "{hostile:?}");
        }
    }

    #[test]
    fn no_control_character_reaches_any_clipboard() {
        let mut out = Vec::new();
        for text in [
            "8944\x1b[2J",
            "a\nb",
            "a\rb",
            "tab\there",
            "\u{9b}",
            "\u{7f}",
            "\u{2066}x",
        ] {
            let err = Clipboard::new(Strategy::Osc52, SSH).copy(text, &mut out).unwrap_err();
            assert!(err.contains("control character"), "{text:?}: {err}");
        }
        assert!(out.is_empty(), "nothing was sent to the terminal");
        assert!(
            Clipboard::new(Strategy::Osc52, SSH)
                .copy("Türkiye 5 GB", &mut out)
                .is_ok()
        );
    }

    #[test]
    fn it_never_reports_a_copy_that_did_not_happen() {
        let mut out = Vec::new();
        let mut off = Clipboard::new(Strategy::Off, DESKTOP);
        assert!(off.copy("8944", &mut out).unwrap_err().contains("off"));
        assert!(out.is_empty());
        let mut osc = Clipboard::new(Strategy::Osc52, Environment { tmux: true, ..SSH });
        let delivery = osc.copy("8944", &mut out).unwrap();
        assert_eq!(delivery, Delivery::Osc52 { via: Some("tmux") });
        assert!(delivery.describe().starts_with("sent"), "OSC 52 is sent, not confirmed");
        assert!(out.starts_with(b"\x1b]52;c;"));
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("terminal gone"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let err = Clipboard::new(Strategy::Osc52, SSH)
            .copy("8944", &mut Broken)
            .unwrap_err();
        assert!(
            err.starts_with("nothing was copied") && err.contains("terminal gone"),
            "{err}"
        );
    }
}
