//! The install kit of an eSIM: its QR code alone as large as the terminal allows, with whose it
//! is under it; the SM-DP+ address and matching ID copied apart for entering by hand; and every
//! copy saying what it sent, in the zoom too.

use crate::common::*;
use crate::esims::code_of;
use crossterm::event::KeyCode;
use esimdash_front::clipboard::Delivery;
use esimdash_tui::msg::Msg;

/// An agent on My eSIMs with the first eSIM's activation code known, zoomed in.
async fn zoomed() -> (Harness, esimdash_api::model::Esim, String) {
    let mut h = Harness::acme_on('3').await;
    let esim = h.app.selected_esim().unwrap().clone();
    let code = code_of(&h, &esim.raw_order_json.iccid);
    h.send(key('z'));
    (h, esim, code)
}

/// At 120×40 the code is drawn two columns a module (full blocks) and reads back as the eSIM's
/// activation code; at 80×24 it is drawn in half blocks. Either way the ICCID and the package
/// are under it.
#[tokio::test]
async fn the_zoom_draws_the_largest_code_with_whose_it_is_under_it() {
    let (h, esim, code) = zoomed().await;
    for (width, height, full) in [(120, 40, true), (80, 24, false), (100, 30, false)] {
        let screen = h.screen(width, height);
        let halves = screen.contains(['▀', '▄']);
        assert_eq!(!halves, full, "{width}×{height}: full blocks {full}:\n{screen}");
        let qr = qr_from_screen(&screen).unwrap_or_else(|e| panic!("{e}:\n{screen}"));
        assert_eq!(qr.decode().unwrap(), code, "{width}×{height}");
        let iccid = format!("ICCID {}", esim.raw_order_json.iccid);
        assert!(screen.contains(&iccid), "{width}×{height}: the ICCID:\n{screen}");
        assert!(
            screen.contains(&esim.record.package_name),
            "{width}×{height}: the package:\n{screen}"
        );
        assert!(screen.contains("Esc, z: back"), "{width}×{height}: the keys:\n{screen}");
    }
    if let Some(read) = zbar_decode(&[qr_from_screen(&h.screen(120, 40)).unwrap().to_png(6).unwrap()]) {
        assert_eq!(read, vec![code.clone()], "zbarimg on the full-block code");
    }
}

/// `y`, `Y` and `l` in the zoom say what they sent, on the zoom's own screen (before, the
/// message was drawn nowhere while the code was shown alone).
#[tokio::test]
async fn copies_in_the_zoom_say_what_they_sent_there() {
    let (mut h, esim, _) = zoomed().await;
    for (k, what) in [('y', "ICCID"), ('Y', "Activation code"), ('l', "iPhone install link")] {
        let effects = h.send(key(k));
        assert_eq!(copies(&effects).first().map(|c| c.0), Some(what), "{k}");
        h.send(Msg::Copied {
            what,
            result: Ok(Delivery::Osc52 { via: Some("tmux") }),
        });
        let said = format!("{what} sent to the terminal's clipboard (OSC 52 through tmux)");
        for (width, height) in [(120, 40), (80, 24)] {
            let screen = h.screen(width, height);
            assert!(screen.contains(&said), "{k} at {width}×{height}:\n{screen}");
            assert!(screen.contains(&format!("ICCID {}", esim.raw_order_json.iccid)));
        }
    }
}

/// `a` copies the SM-DP+ address and `i` the matching ID, each alone (what a phone asks for when
/// the code is entered by hand), from the list, the pane and the zoom; the pane names the keys.
#[tokio::test]
async fn the_smdp_address_and_the_matching_id_are_copied_apart() {
    let (mut h, _, ac) = zoomed().await;
    let (smdp, matching) = ac.strip_prefix("LPA:1$").and_then(|rest| rest.split_once('$')).unwrap();
    for mode in ["zoom", "list"] {
        assert_eq!(
            copies(&h.send(key('a'))),
            vec![("SM-DP+ address", smdp.to_string())],
            "{mode}"
        );
        assert_eq!(
            copies(&h.send(key('i'))),
            vec![("Matching ID", matching.to_string())],
            "{mode}"
        );
        h.send(code(KeyCode::Esc));
    }
    // Tall enough for the whole pane, whatever it says above the code's lines.
    let screen = h.screen(120, 60);
    assert!(screen.contains("a copies the SM-DP+, i the matching ID"), "{screen}");
}

/// In a real terminal at 120×40: the zoomed code, captured off the pane, is drawn in full blocks
/// and reads back (ZBar reads it as a phone app would), and `y`, `a` and `i` there put the ICCID
/// shown under it and that code's SM-DP+ address and matching ID in tmux's buffer, saying so on
/// the zoom.
#[test]
fn in_a_terminal_the_zoomed_code_reads_and_each_copy_says_what_it_sent() {
    use crate::terminal_e2e::Tmux;
    let Some((_home, tmux)) = Tmux::copying_demo_on_esims("zoom", "ESIMDASH_CLIPBOARD=osc52") else {
        return;
    };
    tmux.keys(&["z"]);
    let screen = tmux.wait_for("copy: y ICCID");
    assert!(!screen.contains(['▀', '▄']), "full blocks at 120×40:\n{screen}");
    let qr = qr_from_screen(&screen).unwrap_or_else(|e| panic!("{e}:\n{screen}"));
    let code = qr.decode().unwrap();
    if let Some(read) = zbar_decode(&[qr.to_png(6).unwrap()]) {
        assert_eq!(read, vec![code.clone()], "zbarimg on the captured code");
    }
    let iccid = screen
        .lines()
        .find_map(|l| l.trim().strip_prefix("ICCID "))
        .unwrap()
        .to_string();
    let (smdp, matching) = code.strip_prefix("LPA:1$").and_then(|r| r.split_once('$')).unwrap();
    for (k, what, sent) in [
        ("y", "ICCID", iccid.as_str()),
        ("a", "SM-DP+ address", smdp),
        ("i", "Matching ID", matching),
    ] {
        tmux.run(&["delete-buffer"]);
        tmux.keys(&[k]);
        let screen = tmux.wait_for(&format!("{what} sent to the terminal's clipboard"));
        assert!(
            screen.contains(&format!("ICCID {iccid}")),
            "{k}: still the zoom:\n{screen}"
        );
        assert_eq!(tmux.run(&["show-buffer"]).trim(), sent, "{k}");
    }
    tmux.quit();
}

/// `w` a second time: the question whether to replace the file stands alone, with its keys on
/// the bottom line, not under the message of the first save (which read as if it were done).
#[tokio::test]
async fn a_second_w_asks_to_replace_without_the_first_saves_message() {
    use std::time::Duration;
    let mut live = Live::new(unpaced_sandbox(), unpaced()).await;
    live.send(key('3'));
    let has_code =
        |app: &esimdash_tui::app::App| app.esims().selected_code(app.index()).and_then(|c| c.value()).is_some();
    assert!(live.until(Duration::from_secs(10), has_code).await);
    live.send(key('w'));
    let saved = |app: &esimdash_tui::app::App| app.flash_message().is_some_and(|f| f.text.contains("saved"));
    assert!(live.until(Duration::from_secs(10), saved).await);
    live.send(key('w'));
    assert!(live.until(Duration::from_secs(10), |app| app.overlay().is_some()).await);
    let screen = live.screen_text(100, 30);
    assert!(screen.contains("Replace the file?"), "{screen}");
    assert!(
        !screen.contains("QR code saved"),
        "the first save's message is gone:\n{screen}"
    );
    assert!(
        screen.contains("y replace"),
        "the question's keys are on the bottom line:\n{screen}"
    );
}
