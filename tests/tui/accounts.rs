//! A team's dashboard: a read-only seat that no key sequence gets to pay or change the
//! profile, and a profile switch after which nothing of the old account is shown.

use crate::common::*;
use crossterm::event::KeyCode;
use esimdash_api::ClientOptions;
use esimdash_api::model::EsimQuery;
use esimdash_domain::iccid::Iccid;
use esimdash_front::session::{Accounts, Session};
use esimdash_tui::app::Overlay;
use esimdash_tui::keymap::DEFAULT_BINDINGS;
use esimdash_tui::msg::{Answer, Effect, Msg, Request};

fn read_only_session() -> Session {
    Session {
        profile: "support".into(),
        color: None,
        read_only: Some("read_only = true in profile \"support\"".into()),
        ..Session::default()
    }
}

/// Every key of the keymap (quitting aside), each followed by Enter four times (which would
/// pick, confirm and pay in a purchase form), on every tab and in a typed ICCID prompt: no
/// write is ever asked for, no form that changes something opens, and the wallet is untouched.
#[tokio::test]
async fn a_read_only_seat_cannot_pay_or_change_the_profile_by_any_key() {
    let mut h = Harness::acme().await;
    let balance = h.api().balance().await.unwrap();
    let api = h.api();
    let options = ClientOptions {
        read_only: Some("read_only = true in profile \"support\"".into()),
        ..unpaced()
    };
    let read_only = client_as(&h.sandbox.base_url(), ACME, options);
    h.use_client(read_only);
    h.with_session(read_only_session(), &["support"]);
    let header = h.screen(120, 40);
    assert!(header.lines().next().unwrap().contains("support │"), "{header}");
    assert!(header.lines().next().unwrap().contains("read-only"), "{header}");

    let keys: Vec<&str> = DEFAULT_BINDINGS
        .iter()
        .filter(|b| !matches!(b.action, esimdash_tui::keymap::Action::Quit))
        .flat_map(|b| b.keys.iter().copied())
        // `x` starts an export, whose progress would hold the status line.
        .filter(|k| k.chars().count() == 1 && !["q", "x"].contains(k))
        .collect();
    for tab in ['1', '2', '3', '4'] {
        for k in &keys {
            h.send(code(KeyCode::Esc));
            h.send(key(tab));
            h.send(key(k.chars().next().unwrap()));
            for _ in 0..4 {
                h.send(code(KeyCode::Enter));
            }
            let overlay = h.app.overlay();
            assert!(
                !matches!(
                    overlay,
                    Some(Overlay::Purchase(_) | Overlay::ProfileForm(_) | Overlay::IccidPrompt { .. })
                ),
                "tab {tab}, key {k}: {overlay:?}"
            );
            h.settle().await;
        }
    }
    // The order detail's `t` too.
    h.send(code(KeyCode::Esc));
    h.send_and_settle(key('2')).await;
    h.send(code(KeyCode::Enter));
    h.send(key('t'));
    assert!(!matches!(h.app.overlay(), Some(Overlay::Purchase(_))));
    let screen = h.screen(120, 40);
    assert!(
        screen.contains("Top-ups are off: this session is read-only (read_only = true in profile"),
        "the reason is said: {screen}"
    );
    assert_eq!(h.count(Request::writes), 0, "no write was ever asked for");
    assert_eq!(api.balance().await.unwrap(), balance);
}

/// After switching to another account, what was in flight for the old one is dropped when
/// its answer comes, and the screen fills with the new account's data only.
#[tokio::test]
async fn after_a_switch_a_late_answer_of_the_old_account_is_dropped() {
    let mut h = Harness::acme().await;
    let accounts = Accounts::Demo {
        base_url: h.sandbox.base_url(),
        args: Default::default(),
    };
    on_demo_of_two(&mut h).await;
    let acme_first = h
        .app
        .esims()
        .list()
        .loaded()
        .next()
        .unwrap()
        .raw_order_json
        .iccid
        .to_string();
    // Acme's orders and profile asked for, not answered yet.
    h.send(key('2'));
    h.send(key('r'));
    let late: Vec<_> = h.pending().to_vec();
    assert!(late.iter().any(|(_, r)| matches!(r, Request::Orders(_))), "{late:?}");

    h.send(key('P'));
    assert!(matches!(h.app.overlay(), Some(Overlay::AccountPicker { .. })));
    h.send(code(KeyCode::Down));
    let effects = h.send(code(KeyCode::Enter));
    assert!(
        effects.contains(&Effect::SwitchAccount("demo-globex".into())),
        "{effects:?}"
    );
    assert!(h.screen(120, 40).contains("opening demo-globex…"));

    let opened = accounts.open(Some("demo-globex"), true).unwrap();
    h.use_client(opened.client.clone());
    h.send(Msg::Switched {
        name: "demo-globex".into(),
        result: Ok(Box::new(opened)),
    });
    // The old account's answers arrive late.
    let acme_client = h.api();
    for (id, request) in late {
        let result = request.run(&acme_client, &Default::default()).await;
        h.send(Msg::Answer(Box::new(Answer { id, result })));
    }
    assert!(h.app.profile().is_none(), "Acme's profile was not taken for Globex's");
    assert!(
        h.app.orders().list().loaded().next().is_none(),
        "Acme's orders are not shown"
    );
    h.settle().await;
    let profile = h.app.profile().expect("Globex's profile loaded");
    let globex = h.api_as("ak_demo_globex", "sk_demo_globex").profile().await.unwrap();
    assert_eq!(profile, &globex);
    let header = h.screen(120, 40);
    assert!(header.lines().next().unwrap().contains("demo-globex │"), "{header}");
    assert!(header.contains(globex.display_name()), "{header}");
    let all = esimdash_api::model::OrderQuery {
        page_size: Some(100),
        ..Default::default()
    };
    let globex_orders = h.api_as("ak_demo_globex", "sk_demo_globex").orders(&all).await.unwrap();
    let shown = listed_order_numbers(&h.app);
    let theirs: Vec<_> = globex_orders
        .orders
        .iter()
        .map(|o| o.record.provider_order_no.to_string())
        .collect();
    assert!(!shown.is_empty());
    assert_eq!(
        shown[..],
        theirs[..shown.len()],
        "Globex's orders, newest first, and only those"
    );
    // Globex's inventory holds nothing of Acme's.
    h.send_and_settle(key('3')).await;
    let q = EsimQuery {
        iccid: Some(Iccid::parse(&acme_first).unwrap()),
        ..Default::default()
    };
    assert_eq!(
        h.api_as("ak_demo_globex", "sk_demo_globex")
            .esims(&q)
            .await
            .unwrap()
            .total,
        0
    );
    assert!(
        h.app
            .esims()
            .list()
            .loaded()
            .all(|e| e.raw_order_json.iccid != acme_first)
    );
}

/// An account allowed plain http to another machine says so first in the header, at 80
/// columns too, so that nobody takes it for an encrypted one.
#[tokio::test]
async fn a_plain_http_account_says_it_is_not_encrypted_at_any_width() {
    let mut h = Harness::acme().await;
    let session = Session {
        profile: "staging".into(),
        cleartext: true,
        ..Session::default()
    };
    h.with_session(session, &["staging"]);
    h.settle().await;
    for width in [80, 120] {
        let screen = h.screen(width, 24);
        let header = screen.lines().next().unwrap();
        assert!(header.contains("NOT ENCRYPTED (http)"), "{width}: {header}");
    }
    h.with_session(Session::default(), &[]);
    assert!(!h.screen(120, 24).contains("NOT ENCRYPTED"));
}

/// While another account is being opened, no window that would move money or change the
/// profile opens: its answer would come for an account no longer in use and be forgotten.
#[tokio::test]
async fn nothing_that_changes_the_account_starts_while_another_is_being_opened() {
    let mut h = Harness::acme().await;
    on_demo_of_two(&mut h).await;
    h.send(key('P'));
    h.send(code(KeyCode::Down));
    let effects = h.send(code(KeyCode::Enter));
    assert!(
        effects.contains(&Effect::SwitchAccount("demo-globex".into())),
        "{effects:?}"
    );
    for (k, what) in [
        ('t', "Top-ups"),
        ('1', ""),
        ('b', "Purchases"),
        ('4', ""),
        ('e', "Profile changes"),
    ] {
        h.send(key(k));
        if what.is_empty() {
            continue;
        }
        assert!(h.app.overlay().is_none(), "{k} opened {:?}", h.app.overlay());
        let flash = h.app.flash_message().expect("a message says why");
        assert!(
            flash.text.contains(what) && flash.text.contains("wait until profile demo-globex is open"),
            "{}",
            flash.text
        );
    }
    assert_eq!(h.count(Request::writes), 0, "nothing was sent that changes the account");
}

/// On profile demo, the picker offering demo and demo-globex, with My eSIMs read.
async fn on_demo_of_two(h: &mut Harness) {
    let acme = Session {
        profile: "demo".into(),
        ..Session::default()
    };
    h.with_session(acme, &["demo", "demo-globex"]);
    h.send_and_settle(key('3')).await;
}
