//! What an agent hands a customer or a spreadsheet, driven through the app and the runtime's
//! own file writers against a sandbox: the QR code as a PNG (ZBar reads it), "needs attention"
//! (the rule applied to the API's own data), and CSV exports (complete, or no file at all).

use crate::common::{Live, api, key, result_iccids, unpaced, unpaced_sandbox, zbar_decode};
use esimdash_domain::attention::AttentionRule;
use esimdash_domain::attention::Judged;
use esimdash_domain::iccid::Iccid;
use esimdash_tui::app::{ExportState, Remote};
use std::time::Duration;

#[tokio::test]
async fn the_qr_png_reads_back_to_the_code_and_an_existing_file_is_replaced_only_on_yes() {
    let mut live = Live::new(unpaced_sandbox(), unpaced()).await;
    live.send(key('3'));
    let code_of_selected = |app: &esimdash_tui::app::App| {
        let iccid = app.selected_iccid()?;
        match app.esims().selected_code(app.index()).and_then(Remote::value) {
            Some(Ok(code)) => Some((iccid, code.clone())),
            _ => None,
        }
    };
    assert!(
        live.until(Duration::from_secs(10), |app| code_of_selected(app).is_some())
            .await
    );
    let (iccid, code) = code_of_selected(&live.app).unwrap();

    live.send(key('w'));
    let name = format!("{iccid}.png");
    assert!(
        live.until(Duration::from_secs(10), |app| app
            .flash_message()
            .is_some_and(|f| f.text.contains("saved")))
            .await
    );
    assert_eq!(live.exported(), vec![name.clone()]);
    let path = live.export_dir.path().join(&name);
    let png = std::fs::read(&path).unwrap();
    assert_eq!(esimdash_qr::decode_png(&png).unwrap(), code);
    if let Some(read) = zbar_decode(std::slice::from_ref(&png)) {
        assert_eq!(read, vec![code.clone()], "ZBar reads the file to the activation code");
    }

    // Again: the file exists, so the app asks; "n" keeps it, "y" replaces it.
    std::fs::write(&path, b"the customer's copy").unwrap();
    live.send(key('w'));
    assert!(live.until(Duration::from_secs(10), |app| app.overlay().is_some()).await);
    assert!(live.screen_text(100, 30).contains("Replace the file?"));
    live.send(key('n'));
    assert!(live.app.overlay().is_none());
    assert_eq!(std::fs::read(&path).unwrap(), b"the customer's copy");
    live.send(key('w'));
    assert!(live.until(Duration::from_secs(10), |app| app.overlay().is_some()).await);
    live.send(key('y'));
    assert!(
        live.until(Duration::from_secs(10), |app| app
            .flash_message()
            .is_some_and(|f| f.text.contains("saved")))
            .await
    );
    assert_eq!(std::fs::read(&path).unwrap(), png);

    // The install link goes to the clipboard as Apple's universal link of this code.
    let effects = live.app.update(key('l'), std::time::Instant::now());
    let copied = effects.iter().find_map(|e| match e {
        esimdash_tui::msg::Effect::Copy { text, .. } => Some(text.clone()),
        _ => None,
    });
    let link = copied.expect("l copies the link");
    let carddata = link.strip_prefix(esimdash_domain::lpa::APPLE_INSTALL_PREFIX).unwrap();
    assert_eq!(
        percent_encoding::percent_decode_str(carddata).decode_utf8().unwrap(),
        code
    );
}

/// My eSIMs with the attention filter on, once the whole inventory is in the index.
async fn attention_shown() -> Live {
    let mut live = Live::new(unpaced_sandbox(), unpaced()).await;
    live.send(key('3'));
    live.send(key('!'));
    assert!(
        live.until(Duration::from_secs(20), |app| app.index().read().is_complete())
            .await
    );
    live
}

#[tokio::test]
async fn needs_attention_is_the_rule_applied_to_the_apis_own_data_and_its_count_is_in_the_tab() {
    let mut live = attention_shown().await;
    let now = chrono::Utc::now();
    let rule = AttentionRule::default();
    let mut urgent: Vec<_> = live
        .all_esims()
        .await
        .into_iter()
        .filter(|e| rule.needs_esim(e, now))
        .collect();
    // The most urgent first: the nearer limit, as a share of the rule's room.
    urgent.sort_by_key(|e| rule.urgency(e.limits(), now));
    let expected: Vec<String> = urgent.iter().map(|e| e.raw_order_json.iccid.to_string()).collect();
    assert!(!expected.is_empty());
    let shown = result_iccids(&live.app);
    assert_eq!(shown, expected);
    let labels = live.app.tab_labels();
    assert!(labels[2].1.contains(&format!("(! {})", expected.len())), "{labels:?}");
    let screen = live.screen_text(120, 40);
    assert!(screen.contains("attention (≥ 80 % or ≤ 3 d)"), "{screen}");
    // How old the count is: its oldest usable eSIM's read, just now (said from a minute on).
    let age = live
        .app
        .index()
        .attention_age()
        .expect("an age once the index is whole");
    assert!(age < chrono::Duration::seconds(60), "{age:?}");
    assert!(!screen.contains(" old"), "{screen}");
    // Why each is there: its data used and time left, on the first row the most urgent.
    let first = screen.lines().find(|l| l.contains(&expected[0])).unwrap();
    let used = urgent[0].limits().used_pct.unwrap();
    assert!(first.contains(&format!("{used}%")), "{first}");
    assert!(first.contains(" h ") || first.contains(" d "), "{first}");
    // `!` again: back to the list.
    live.send(key('!'));
    assert!(!live.app.esims().search_active());
}

#[tokio::test]
async fn x_exports_every_page_of_the_view_and_a_cancelled_export_leaves_no_file() {
    let mut live = Live::new(unpaced_sandbox(), unpaced()).await;
    live.send(key('2'));
    live.idle(Duration::from_secs(10)).await;
    let total = live.app.orders().list().total().unwrap();
    live.send(key('x'));
    assert!(live.until(Duration::from_secs(20), |app| app.export().is_none()).await);
    let files = live.exported();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].starts_with("esimdash-orders-") && files[0].ends_with(".csv"));
    let text = std::fs::read_to_string(live.export_dir.path().join(&files[0])).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(reader.records().count() as u64, total);

    // A slow server: cancel after the first page; the directory is as it was.
    live.sandbox.set_latency(Duration::from_millis(300));
    live.send(key('x'));
    assert!(
        live.until(Duration::from_secs(20), |app| matches!(
            app.export().map(|e| &e.state),
            Some(ExportState::Running(Some(_)))
        ))
        .await
    );
    live.send(key('x'));
    assert!(live.app.export().is_none());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(live.exported(), files, "no second file, no temporary file");
}

/// Marks: `space` marks eSIMs one by one, `*` every result of a search, the table shows them
/// and the title counts them; `w` then writes every marked eSIM's QR code into one new
/// folder, each PNG reading back to that eSIM's activation code (those found by the search
/// whose record the dashboard never had are looked up first).
#[tokio::test]
async fn marked_esims_qr_codes_go_into_one_folder_each_reading_back_to_its_code() {
    let mut live = Live::new(unpaced_sandbox(), unpaced()).await;
    live.send(key('3'));
    assert!(
        live.until(Duration::from_secs(10), |app| app.selected_esim().is_some())
            .await
    );
    let first = live.app.selected_iccid().unwrap().as_str().to_string();
    live.send(key(' '));
    live.send(key('j'));
    let second = live.app.selected_iccid().unwrap().as_str().to_string();
    live.send(key(' '));
    assert_eq!(live.app.esims().marks().len(), 2);
    let screen = live.screen_text(120, 30);
    assert!(screen.contains("2 marked"), "{screen}");
    let marked_rows: Vec<String> = screen
        .lines()
        .map(|l| l.trim_matches('"').chars().skip(2).collect::<String>())
        .filter(|row| row.starts_with("✓ 89"))
        .collect();
    for iccid in [&first, &second] {
        assert!(
            marked_rows.iter().any(|r| r.contains(iccid.as_str())),
            "{iccid} marked: {screen}"
        );
    }
    // A reissued ICCID has a row per profile: each shows the mark; no other row does.
    assert!(
        marked_rows
            .iter()
            .all(|r| r.contains(first.as_str()) || r.contains(second.as_str())),
        "{screen}"
    );
    live.send(key(' '));
    assert_eq!(live.app.esims().marks().len(), 1, "space again unmarks");
    live.send(key(' '));

    // A search's results, marked at once: ICCIDs of the index whose records are not loaded.
    let all = live.all_esims().await;
    let package = all[150].record.package_name.clone();
    live.send(key('/'));
    for c in package.chars() {
        live.send(key(c));
    }
    live.send(crate::common::code(crossterm::event::KeyCode::Enter));
    assert!(
        live.until(Duration::from_secs(20), |app| app.index().read().is_complete()
            && app.esims().result_count() > 0)
            .await
    );
    let found = result_iccids(&live.app);
    live.send(key('*'));
    let mut wanted: Vec<String> = vec![first.clone(), second.clone()];
    wanted.extend(found.iter().filter(|i| **i != first && **i != second).cloned());
    assert_eq!(live.app.esims().marks().len(), wanted.len());

    live.send(key('w'));
    // Again while it writes: said, and no second folder.
    live.send(key('w'));
    assert!(
        live.app
            .flash_message()
            .is_some_and(|f| f.text.starts_with("Still writing"))
    );
    assert!(
        live.until(Duration::from_secs(30), |app| app
            .flash_message()
            .is_some_and(|f| f.text.contains("written to")))
            .await,
        "{:?}",
        live.app.flash_message()
    );
    let text = live.app.flash_message().unwrap().text.clone();
    assert!(text.contains("Marks cleared"), "{text}");
    assert!(live.app.esims().marks().is_empty());
    let folders = live.exported();
    assert_eq!(folders.len(), 1, "one folder: {folders:?}");
    let folder = live.export_dir.path().join(&folders[0]);
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = wanted.iter().map(|i| format!("{i}.png")).collect();
    expected.sort();
    assert_eq!(names, expected);
    let client = api(&live.sandbox);
    for iccid in &wanted {
        let esim = all.iter().find(|e| e.raw_order_json.iccid == iccid.as_str()).unwrap();
        let code = client.activation_code(esim).await.unwrap();
        let png = std::fs::read(folder.join(format!("{iccid}.png"))).unwrap();
        assert_eq!(esimdash_qr::decode_png(&png).unwrap(), code, "{iccid}");
    }
}

/// A top-up of an eSIM that needs attention: its newer record is read at once, so it leaves
/// the attention rows without the agent moving onto it, and the cursor stays where it was (on
/// the next eSIM), never back on the first row.
#[tokio::test]
async fn a_topped_up_esim_leaves_the_attention_rows_at_once_and_the_cursor_stays_put() {
    use crossterm::event::KeyCode;
    use esimdash_tui::app::Overlay;
    use esimdash_tui::forms::purchase::Stage;
    let mut live = attention_shown().await;
    let rows = |live: &Live| result_iccids(&live.app);
    // An eSIM there for its data (a top-up adds data; one there for its days might stay).
    let now = chrono::Utc::now();
    let api = live.api();
    let mut target = None;
    for (at, iccid) in rows(&live).into_iter().enumerate().skip(1) {
        let esim = api.find_esim(&Iccid::parse(&iccid).unwrap()).await.unwrap().unwrap();
        let soon = esim.limits().expires.is_some_and(|t| t < now.timestamp() + 10 * 86_400);
        if !soon
            && !api
                .topup_plans(&Iccid::parse(&iccid).unwrap())
                .await
                .unwrap()
                .is_empty()
        {
            target = Some((at, iccid));
            break;
        }
    }
    let (at, iccid) = target.expect("an eSIM needing attention for its data, which can be topped up");
    // The cursor followed its eSIM while the read put more urgent ones above it: from the top.
    live.send(crate::common::code(KeyCode::Home));
    for _ in 0..at {
        live.send(key('j'));
    }
    let before = rows(&live);
    live.idle(Duration::from_secs(5)).await;
    assert_eq!(live.app.esims().result_cursor(), at, "{before:?}\n{:?}", rows(&live));
    live.send(key('t'));
    assert!(
        live.until(Duration::from_secs(10), |app| matches!(
            app.overlay(),
            Some(Overlay::Purchase(f)) if *f.stage() == Stage::Choosing
        ))
        .await
    );
    live.send(esimdash_tui::msg::Msg::Key(crossterm::event::KeyEvent::new(
        KeyCode::Char('0'),
        crossterm::event::KeyModifiers::NONE,
    )));
    live.send(crate::common::code(KeyCode::Enter));
    assert!(
        live.until(Duration::from_secs(10), |app| matches!(
            app.overlay(),
            Some(Overlay::Purchase(f)) if f.ready_to_pay()
        ))
        .await
    );
    live.send(crate::common::code(KeyCode::Enter));
    assert!(
        live.until(Duration::from_secs(10), |app| matches!(
            app.overlay(),
            Some(Overlay::Purchase(f)) if matches!(f.stage(), Stage::Done { .. })
        ))
        .await
    );
    live.send(crate::common::code(KeyCode::Esc));
    assert!(
        live.until(Duration::from_secs(10), |app| !app
            .esims()
            .result_rows(app.index())
            .any(|r| r.iccid() == iccid))
            .await,
        "the topped-up eSIM still needs attention: {:?}",
        rows(&live)
    );
    assert_eq!(live.app.esims().result_cursor(), at.min(rows(&live).len() - 1));
}

/// On a server that answers slowly, an order's detail finds the order's eSIM (the index's
/// pages are not cancelled for not being on My eSIMs' tab), and `e` goes there.
#[tokio::test]
async fn a_slow_servers_order_detail_finds_its_esim_and_e_goes_there() {
    use crossterm::event::KeyCode;
    let mut live = Live::new(unpaced_sandbox(), unpaced()).await;
    live.sandbox.set_latency(Duration::from_millis(150));
    live.send(key('2'));
    assert!(
        live.until(Duration::from_secs(10), |app| app.orders().list().selected().is_some())
            .await
    );
    // An allocated order of one eSIM, a few rows down.
    for _ in 0..2 {
        live.send(key('j'));
    }
    let order = live.app.orders().list().selected().unwrap().clone();
    assert!(order.iccid.is_empty(), "an order, not a top-up");
    live.send(crate::common::code(KeyCode::Enter));
    let found = live
        .until(Duration::from_secs(20), |app| {
            matches!(
                app.index()
                    .order_esims(&order, app.esims().at_hand(app.index()).into_iter()),
                esimdash_tui::index::OrderEsims::Found(_)
            )
        })
        .await;
    assert!(found, "{}", live.screen_text(120, 40));
    live.send(key('e'));
    assert!(
        live.until(Duration::from_secs(10), |app| app
            .selected_esim()
            .is_some_and(|e| e.record.provider_order_no == order.record.provider_order_no))
            .await,
        "{}",
        live.screen_text(120, 40)
    );
}
