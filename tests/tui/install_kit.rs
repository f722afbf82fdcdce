//! The install kit of an eSIM: the SM-DP+ address and matching ID copied apart for entering by
//! hand.

use crate::common::*;
use crate::esims::code_of;
use crossterm::event::KeyCode;

/// An agent on My eSIMs with the first eSIM's activation code known, zoomed in.
async fn zoomed() -> (Harness, esimdash::api::model::Esim, String) {
    let mut h = Harness::acme().await;
    h.send(key('3'));
    h.settle().await;
    let esim = h.app.esims().selected().unwrap().clone();
    let code = code_of(&h, &esim.raw_order_json.iccid);
    h.send(key('z'));
    (h, esim, code)
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
