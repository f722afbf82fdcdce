//! The one-shot commands as a user or a script runs them: the real binary, against a sandbox in
//! this test, checking stdout, stderr and exit codes.

use esimdash_sandbox::{RunningSandbox, SandboxConfig, spawn};
use serde_json::Value;
use std::io::Write;
use std::process::Command;

#[path = "support/binary.rs"]
#[allow(dead_code)]
mod binary;
#[path = "support/certs.rs"]
mod certs;
#[path = "support/tmux.rs"]
mod tmux;
#[path = "support/tools.rs"]
mod tools;
use binary::*;

async fn sandbox() -> RunningSandbox {
    let config = SandboxConfig {
        rate_limit: 100_000,
        ..SandboxConfig::default()
    };
    spawn(&config, "127.0.0.1:0".parse().unwrap()).await.unwrap()
}

fn acme<'a>(cmd: &'a mut Command, sb: &RunningSandbox) -> &'a mut Command {
    acme_at(cmd, &sb.base_url())
}

/// The binary as Acme at this test's sandbox, with `args`, and its output.
async fn run_acme<I, S>(sb: &RunningSandbox, home: &tempfile::TempDir, args: I) -> std::process::Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    run_acme_at(home, &sb.base_url(), args).await
}

/// That the command exited 0; fails naming the case and showing what it said on stderr.
#[track_caller]
fn assert_succeeded(out: &std::process::Output, case: &impl std::fmt::Debug) {
    assert_eq!(out.status.code(), Some(0), "{case:?}: {}", stderr(out));
}

/// What a command refused as a usage error (exit 2) said on stderr.
#[track_caller]
fn usage_error_text(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(2));
    stderr(out)
}

/// That `esimdash check balance` came out UNKNOWN (exit 3), as a monitoring plugin says so.
#[track_caller]
fn assert_balance_check_unknown(out: &std::process::Output) {
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stdout(out).starts_with("ESIMDASH BALANCE UNKNOWN - "),
        "{}",
        stdout(out)
    );
}

/// Acme's client straight at the sandbox (no trail, no rate limit to speak of): what a test
/// compares the binary's output with.
fn acme_api(sb: &RunningSandbox) -> esimdash_api::Client {
    esimdash_api::Client::new(
        esimdash_api::BaseUrl::parse(&sb.base_url()).unwrap(),
        &esimdash_api::Credentials::pair("ak_demo_acme", "sk_demo_acme"),
        esimdash_api::ClientOptions {
            rate_limit: 100_000,
            ..Default::default()
        },
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn balance_json_prints_exactly_the_balance() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let out = run_acme(&sb, &home, ["balance", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout_json(&out)["balanceUsd"], "250.00");
    assert!(out.stderr.is_empty());
    assert!(
        home.path().join("state/esimdash/esimdash.log").exists(),
        "logs go to the XDG state dir"
    );

    let out = run_acme(&sb, &home, ["balance"]).await;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.starts_with("Balance: 250.00 USD\nRunway: at the last 7 days' pace ("),
        "{text}"
    );
}

/// Acme's whole order list, read here page by page, and the local day each order was placed.
async fn acme_orders(sb: &RunningSandbox) -> Vec<(chrono::NaiveDate, esimdash_api::model::Order)> {
    let api = acme_api(sb);
    let mut all = Vec::new();
    for page in 1.. {
        let query = esimdash_api::model::OrderQuery {
            page: Some(page),
            page_size: Some(100),
            ..Default::default()
        };
        let orders = api.orders(&query).await.unwrap().orders;
        let n = orders.len();
        all.extend(
            orders
                .into_iter()
                .map(|o| (o.created_at.at().unwrap().with_timezone(&chrono::Local).date_naive(), o)),
        );
        if n < 100 {
            break;
        }
    }
    all
}

/// `balance` tells how long the balance lasts, `report` sums the orders, and `check balance`
/// alerts on the runway: each what the order list summed here by hand says (a cancelled
/// order was refunded and counts for nothing).
#[tokio::test(flavor = "multi_thread")]
async fn the_runway_and_the_report_are_the_order_list_summed_by_hand() {
    use rust_decimal::Decimal;
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let orders = acme_orders(&sb).await;
    let now = chrono::Utc::now();
    let paid: Vec<_> = orders
        .iter()
        .filter(|(_, o)| o.record.status.as_str() != "cancel")
        .collect();
    let week: Decimal = paid
        .iter()
        .filter(|(_, o)| o.created_at.at().unwrap() > now - chrono::Duration::days(7))
        .map(|(_, o)| o.total_sell_price.unwrap())
        .sum();
    let per_day = week / Decimal::from(7);
    let runway = (Decimal::from(250) / per_day).round_dp(1);

    let json = stdout_json(&run_acme(&sb, &home, ["balance", "--json"]).await);
    assert_eq!(
        json["spendPerDay7d"],
        esimdash_domain::money::format_amount(esimdash_domain::money::round_cents(per_day))
    );
    assert_eq!(json["runwayDays"].to_string(), runway.to_string(), "{json}");
    assert!(json["runwayUntil"].as_str().is_some_and(|d| d.len() == 10), "{json}");

    let report = stdout_json(&run_acme(&sb, &home, ["report", "--since", "30d", "--json"]).await);
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 30);
    let mut total = (0u64, Decimal::ZERO);
    for row in rows {
        let day = chrono::NaiveDate::parse_from_str(row["key"].as_str().unwrap(), "%Y-%m-%d").unwrap();
        let on_day: Vec<_> = paid.iter().filter(|(d, _)| *d == day).collect();
        let spend: Decimal = on_day.iter().map(|(_, o)| o.total_sell_price.unwrap()).sum();
        let cost: Decimal = on_day
            .iter()
            .map(|(_, o)| o.cost_price.unwrap() * Decimal::from(o.record.quantity.unwrap()))
            .sum();
        assert_eq!(row["orders"].as_u64(), Some(on_day.len() as u64), "{day}");
        assert_eq!(row["spend"], esimdash_domain::money::format_amount(spend), "{day}");
        assert_eq!(
            row["margin"],
            esimdash_domain::money::format_amount(spend - cost),
            "{day}"
        );
        total = (total.0 + on_day.len() as u64, total.1 + spend);
    }
    assert_eq!(report["total"]["orders"].as_u64(), Some(total.0));
    assert_eq!(report["total"]["spend"], esimdash_domain::money::format_amount(total.1));
    // By plan and by country, the same orders in other rows: the same total.
    for by in ["plan", "country", "week"] {
        let other = stdout_json(&run_acme(&sb, &home, ["report", "--by", by, "--json"]).await);
        assert_eq!(other["total"], report["total"], "{by}");
    }
    let csv = stdout(&run_acme(&sb, &home, ["report", "--by", "week", "--csv"]).await);
    assert_eq!(
        csv.lines().next().map(str::trim_end),
        Some("week,name,orders,spend,cost,margin"),
        "{csv}"
    );
    let table = stdout(&run_acme(&sb, &home, ["report", "--by", "country"]).await);
    assert!(table.lines().any(|l| l.starts_with("total ")), "{table}");
    let out = run_acme(&sb, &home, ["report", "--since", "3000-01-01"]).await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "a period from the future is a usage mistake"
    );

    // The runway check, around the runway told by hand.
    let r = |d: i64| (runway + Decimal::from(d)).max(Decimal::ZERO).to_string();
    for (w, c, code) in [(r(2), r(1), 2), (r(1), r(-1), 1), (r(-1), r(-2), 0)] {
        if runway < Decimal::from(3) && code == 0 {
            continue;
        }
        let out = run_acme(
            &sb,
            &home,
            ["check", "balance", "--runway-warning", &w, "--runway-critical", &c],
        )
        .await;
        let line = stdout(&out);
        assert_eq!(out.status.code(), Some(code), "{line}");
        assert!(line.contains(&format!("runway_days={runway};{w}:;{c}:")), "{line}");
        assert_eq!(state_from_perfdata(&line), code, "{line}");
    }
}

/// A second `balance` within the kept orders' max age costs the balance's request alone, and
/// tells the same runway from the orders kept, saying when they were read; `--max-age 0` reads
/// the newest orders again; `check balance` on the runway says the orders' age in its
/// performance data. Counted at the sandbox.
#[tokio::test(flavor = "multi_thread")]
async fn a_balance_within_the_max_age_reads_the_balance_alone_and_says_when_the_orders_were_read() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let before = sb.requests_received();
    let first = stdout_json(&run_acme(&sb, &home, ["balance", "--json"]).await);
    let reading = sb.requests_received() - before;
    assert!(reading >= 2, "the first reads the balance and the orders: {reading}");
    let read_at = first["ordersReadAt"].as_str().expect("ordersReadAt").to_string();
    chrono::DateTime::parse_from_rfc3339(&read_at).expect("an RFC 3339 time");

    let before = sb.requests_received();
    let second = stdout_json(&run_acme(&sb, &home, ["balance", "--json"]).await);
    assert_eq!(sb.requests_received() - before, 1, "the balance alone: {second}");
    assert_eq!(second["runwayDays"], first["runwayDays"], "{second}");
    assert_eq!(second["spendPerDay7d"], first["spendPerDay7d"], "{second}");
    assert_eq!(second["ordersReadAt"], first["ordersReadAt"], "{second}");

    let before = sb.requests_received();
    let live = stdout_json(&run_acme(&sb, &home, ["balance", "--max-age", "0", "--json"]).await);
    assert!(sb.requests_received() - before >= 2, "the orders read again: {live}");
    assert_eq!(live["runwayDays"], first["runwayDays"], "{live}");

    let before = sb.requests_received();
    let out = run_acme(
        &sb,
        &home,
        ["check", "balance", "--runway-warning", "0", "--runway-critical", "0"],
    )
    .await;
    let line = stdout(&out);
    assert_eq!(sb.requests_received() - before, 1, "{line}");
    assert!(line.contains(" orders_age="), "{line}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_listing_command_gives_json_in_the_apis_shape_and_a_table_for_people() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["plans", "--location", "fr"], "data"),
        (vec!["plans", "--slug", "fr-1gb-7d"], "data"),
        (
            vec!["orders", "--page", "2", "--page-size", "5", "--status", "active"],
            "orders",
        ),
        (vec!["orders", "-q", "france"], "orders"),
        (vec!["esims", "--page-size", "3"], "esims"),
        (vec!["profile"], "profile"),
    ];
    for (args, key) in cases {
        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb).args(&args).arg("--json");
        let out = run(cmd).await;
        assert_succeeded(&out, &args);
        let json = stdout_json(&out);
        assert!(!json[key].is_null(), "{args:?}: {json}");
        let out = run_acme(&sb, &home, &args).await;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(text.lines().count() >= 2, "{args:?}: {text}");
    }
    let plans = stdout_json(&run_acme(&sb, &home, ["plans", "--location", "FR", "--json"]).await);
    let plans = plans["data"].as_array().unwrap();
    assert!(!plans.is_empty() && plans.iter().all(|p| p["locationCode"] == "FR"));
    let page = stdout_json(&run_acme(&sb, &home, ["orders", "--page", "2", "--page-size", "5", "--json"]).await);
    assert_eq!(
        (page["page"].as_u64(), page["orders"].as_array().map(Vec::len)),
        (Some(2), Some(5))
    );
    assert!(
        page["orders"][0]["totalSellPrice"].is_string(),
        "order money stays a decimal string"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn profile_set_updates_and_validation_errors_exit_1_with_the_servers_message() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let out = run_acme(
        &sb,
        &home,
        [
            "profile",
            "set",
            "--company",
            "Acme Mobile Ltd",
            "--country",
            "ie",
            "--json",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0));
    let json = stdout_json(&out);
    assert_eq!(
        (
            json["profile"]["companyName"].as_str(),
            json["profile"]["country"].as_str()
        ),
        (Some("Acme Mobile Ltd"), Some("IE"))
    );

    let out = run_acme(&sb, &home, ["profile", "set", "--website", "gopher://x", "--json"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing on stdout when it fails");
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(
        (err["error"]["kind"].as_str(), err["error"]["status"].as_u64()),
        (Some("api"), Some(400))
    );
    assert!(err["error"]["message"].as_str().unwrap().contains("website"));

    assert_eq!(
        run_acme(&sb, &home, ["profile", "set"]).await.status.code(),
        Some(2),
        "nothing to set is a usage error"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_codes_tell_scripts_what_went_wrong() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let mut cmd = esimdash(&home);
    cmd.env("ESIMDASH_BASE_URL", sb.base_url())
        .env("ESIMDASH_ACCESS_CODE", "ak_demo_revoked")
        .env("ESIMDASH_SECRET_KEY", "sk_demo_revoked")
        .args(["balance", "--json"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3), "revoked key");
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["kind"], "revoked");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("sk_demo_revoked"));

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb)
        .env("ESIMDASH_BASE_URL", format!("http://127.0.0.1:{port}"))
        .arg("balance");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(5), "network");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("127.0.0.1:{port}")));

    assert_eq!(
        run_acme(&sb, &home, ["plans", "--slug", "nope"]).await.status.code(),
        Some(1),
        "API error"
    );

    let mut cmd = esimdash(&home);
    cmd.arg("balance");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2), "no configuration");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("ESIMDASH_BASE_URL") && text.contains("--demo"),
        "says how to set it up: {text}"
    );

    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb)
        .env("ESIMDASH_BASE_URL", "https://example.com/api/v2")
        .arg("balance");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("v1"));
}

fn write_config(home: &tempfile::TempDir, text: &str, mode: u32) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = home.path().join("config/esimdash");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.toml");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn config_profiles_secret_commands_and_the_private_file_rule() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let config = format!(
        "default_profile = \"acme\"\n\
         [profiles.acme]\nbase_url = \"{origin}\"\naccess_code = \"ak_demo_acme\"\nsecret_key_cmd = \"printf sk_demo_acme\"\n\
         [profiles.globex]\nbase_url = \"{origin}\"\naccess_code = \"ak_demo_globex\"\nsecret_key = \"sk_demo_globex\"\n\
         [profiles.legacy]\nbase_url = \"{origin}\"\nauth = \"bearer\"\nsecret_key_cmd = \"echo sk_demo_legacy\"\n",
        origin = sb.origin()
    );
    let path = write_config(&home, &config, 0o644);
    // The file holds a secret (globex) and others can read it: refused, with the fix.
    let mut cmd = esimdash(&home);
    cmd.arg("balance");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("chmod 600") && text.contains(&path.display().to_string()),
        "{text}"
    );
    assert!(!text.contains("sk_demo_globex"));

    write_config(&home, &config, 0o600);
    for (profile, company) in [
        (None, "Acme Mobile"),
        (Some("globex"), ""),
        (Some("legacy"), "Acme Mobile"),
    ] {
        let mut cmd = esimdash(&home);
        if let Some(p) = profile {
            cmd.args(["--profile", p]);
        }
        cmd.args(["profile", "--json"]);
        let out = run(cmd).await;
        assert_succeeded(&out, &profile);
        assert_eq!(stdout_json(&out)["profile"]["companyName"], company, "{profile:?}");
    }
    // Environment beats the file; the flag beats the environment.
    let mut cmd = esimdash(&home);
    cmd.env("ESIMDASH_PROFILE", "globex")
        .args(["--profile", "acme", "profile", "--json"]);
    assert_eq!(stdout_json(&run(cmd).await)["profile"]["companyName"], "Acme Mobile");
    let mut cmd = esimdash(&home);
    cmd.env("ESIMDASH_ACCESS_CODE", "ak_demo_globex")
        .env("ESIMDASH_SECRET_KEY", "sk_demo_globex")
        .args(["profile", "--json"]);
    assert_eq!(stdout_json(&run(cmd).await)["profile"]["companyName"], "");

    let mut cmd = esimdash(&home);
    cmd.args(["--profile", "nobody", "balance"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("acme, globex, legacy"));

    write_config(
        &home,
        "[profiles.default]\nbase_url = \"https://x\"\naccess_code = \"a\"\nsecret_key_cmd = \"echo 'gpg: decryption failed: No secret key' >&2; exit 3\"\n",
        0o644,
    );
    let mut cmd = esimdash(&home);
    cmd.arg("balance");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // What the command said is in the one error message (captured, never drawn on its own).
    assert!(stderr.contains("secret_key_cmd"), "{stderr}");
    assert_eq!(stderr.matches("decryption failed").count(), 1, "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("secret_key_cmd") && l.contains("decryption failed")),
        "{stderr}"
    );
}

#[test]
fn the_sandbox_command_prints_the_credentials_and_stops_on_sigterm() {
    let home = tempfile::tempdir().unwrap();
    let mut child = esimdash(&home)
        .args(["sandbox", "--addr", "127.0.0.1:0", "--orders", "50"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let banner = tools::sandbox_banner(&mut child.stdout.take().unwrap());
    for needle in [
        "ak_demo_acme",
        "sk_demo_globex",
        "ak_demo_revoked",
        "sk_demo_legacy",
        "esim_session=",
        "/api/v1",
    ] {
        assert!(banner.contains(needle), "{needle} in {banner}");
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert_eq!(exit.code(), Some(0), "a clean shutdown on SIGTERM");
}

#[tokio::test(flavor = "multi_thread")]
async fn qr_and_esims_by_iccid_for_a_plain_ssh_shell() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let page = stdout_json(&run_acme(&sb, &home, ["esims", "--page-size", "5", "--json"]).await);
    let esims = page["esims"].as_array().unwrap();
    for esim in esims {
        let iccid = esim["rawOrderJson"]["iccid"].as_str().unwrap();
        let out = run_acme(&sb, &home, ["qr", iccid, "--json"]).await;
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let qr = stdout_json(&out);
        let code = qr["activationCode"].as_str().unwrap().to_string();
        if let Some(ac) = esim["rawOrderJson"]["ac"].as_str() {
            assert_eq!(code, ac);
        }
        let lines: Vec<&str> = qr["qr"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        let decoded = esimdash_qr::QrMatrix::from_half_blocks(&lines)
            .unwrap()
            .decode()
            .unwrap();
        assert_eq!(decoded, code, "the printed QR is the activation code");

        // Piped (not a terminal), the human output is plain blocks then the fields.
        let text = String::from_utf8(run_acme(&sb, &home, ["qr", iccid]).await.stdout).unwrap();
        assert!(!text.contains('\u{1b}'), "no colour codes when piped");
        let field = |label: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(label))
                .map(|v| v.trim().to_string())
        };
        assert_eq!(field("Activation code").as_deref(), Some(code.as_str()));
        assert!(field("iPhone install link").is_some_and(|l| l.starts_with("https://esimsetup.apple.com/")));
        assert_eq!(
            stdout_json(&run_acme(&sb, &home, ["esims", "--iccid", iccid, "--json"]).await)["esim"]["rawOrderJson"]["iccid"],
            iccid
        );
    }
    let out = run_acme(&sb, &home, ["qr", "8944000000000000000", "--json"]).await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "a valid-looking ICCID with a wrong check digit"
    );
    let payload = "894400000000000000";
    let valid = format!("{payload}{}", esimdash_domain::iccid::luhn_check_digit(payload));
    let out = run_acme(&sb, &home, ["esims", "--iccid", &valid, "--json"]).await;
    assert_eq!(out.status.code(), Some(1), "not in this account");
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["kind"], "not_found");
}

/// The modules of an SVG we wrote: each `M x,y` of its path is a dark module.
fn svg_modules(svg: &str) -> esimdash_qr::QrMatrix {
    let side: usize = svg
        .split("viewBox=\"0 0 ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let q = esimdash_qr::QUIET_ZONE;
    let width = side - 2 * q;
    let mut dark = vec![false; width * width];
    let path = svg.split(" d=\"").nth(1).unwrap();
    for part in path.split('M').skip(1) {
        let xy = part.split('h').next().unwrap();
        let (x, y) = xy.split_once(',').unwrap();
        let (x, y): (usize, usize) = (x.parse().unwrap(), y.parse().unwrap());
        dark[(y - q) * width + (x - q)] = true;
    }
    esimdash_qr::QrMatrix { width, dark }
}

#[tokio::test(flavor = "multi_thread")]
async fn qr_files_and_the_install_link_carry_the_activation_code() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let mut cmd = esimdash(&home);
    // Six eSIMs: every third record has no `ac`, so the PNG download path is among them.
    acme(&mut cmd, &sb).args(["esims", "--page-size", "6", "--json"]);
    let page = stdout_json(&run(cmd).await);
    let mut pngs = Vec::new();
    let mut codes = Vec::new();
    for esim in page["esims"].as_array().unwrap() {
        let iccid = esim["rawOrderJson"]["iccid"].as_str().unwrap();
        let png = home.path().join(format!("{iccid}.png"));
        let svg = home.path().join(format!("{iccid}.svg"));
        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb)
            .args(["qr", iccid, "--json", "--png"])
            .arg(&png)
            .arg("--svg")
            .arg(&svg);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let answer = stdout_json(&out);
        let code = answer["activationCode"].as_str().unwrap().to_string();
        assert_eq!(answer["files"].as_array().unwrap().len(), 2);
        assert!(answer.get("qr").is_none(), "with files, no drawing in the JSON");

        let link = answer["iosInstallLink"].as_str().unwrap();
        let carddata = link
            .strip_prefix("https://esimsetup.apple.com/esim_qrcode_provisioning?carddata=")
            .unwrap();
        let decoded = percent_encoding::percent_decode_str(carddata).decode_utf8().unwrap();
        assert_eq!(decoded, code, "the link decodes to the activation code");

        assert_eq!(
            String::from_utf8(run_acme(&sb, &home, ["qr", iccid, "--link"]).await.stdout).unwrap(),
            format!("{link}\n")
        );

        let svg_text = std::fs::read_to_string(&svg).unwrap();
        assert!(svg_text.contains("fill=\"#fff\"") && svg_text.contains("width=\"40mm\""));
        assert_eq!(svg_modules(&svg_text).decode().unwrap(), code, "the SVG holds the code");
        let png_bytes = std::fs::read(&png).unwrap();
        assert_eq!(esimdash_qr::decode_png(&png_bytes).unwrap(), code);
        pngs.push(png);
        codes.push(code);
    }
    assert!(codes.len() == 6);
    if let Some(read) = tools::zbar_decode_files(&pngs) {
        assert_eq!(read, codes, "ZBar reads each PNG to its activation code");
    }
    let mut cmd = esimdash(&home);
    let iccid = page["esims"][0]["rawOrderJson"]["iccid"].as_str().unwrap();
    acme(&mut cmd, &sb).args(["qr", iccid, "--png", "/nonexistent-dir/x.png"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write /nonexistent-dir/x.png"));
}

/// The first slug of the "offered: a, b, c" list in a refusal.
fn first_offered(stderr: &str) -> String {
    let list = stderr.rsplit("offered: ").next().unwrap_or_default();
    list.split([',', ';']).next().unwrap_or_default().trim().to_string()
}

/// An ICCID of Acme's that can be topped up.
async fn in_use_iccid(sb: &RunningSandbox, home: &tempfile::TempDir) -> String {
    stdout_json(&run_acme(sb, home, ["esims", "--status", "in_use", "--page-size", "1", "--json"]).await)["esims"][0]["rawOrderJson"]["iccid"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A check that could not tell: exit 3 and its one line saying UNKNOWN.
fn assert_check_unknown(out: &std::process::Output) {
    assert_eq!(out.status.code(), Some(3), "{}", stderr(out));
    assert!(stdout(out).starts_with("ESIMDASH CHECK UNKNOWN - "), "{}", stdout(out));
}

/// An ICCID of Acme's that can be topped up, and a top-up offered for it (as
/// `esimdash topup --iccid I` lists them).
async fn topupable(sb: &RunningSandbox, home: &tempfile::TempDir) -> (String, String) {
    let iccid = in_use_iccid(sb, home).await;
    let offered = stdout_json(&run_acme(sb, home, ["topup", "--iccid", &iccid, "--json"]).await);
    let slug = offered["data"][0]["slug"]
        .as_str()
        .expect("a top-up offered")
        .to_string();
    (iccid, slug)
}

async fn order_total(sb: &RunningSandbox, home: &tempfile::TempDir) -> u64 {
    stdout_json(&run_acme(sb, home, ["orders", "--json"]).await)["total"]
        .as_u64()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn topup_and_buy_check_first_ask_or_need_yes_and_debit_once() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let iccid = in_use_iccid(&sb, &home).await;
    let orders = order_total(&sb, &home).await;

    // A slug that is not offered is refused, and the offered ones are listed.
    let out = run_acme(&sb, &home, ["topup", "--iccid", &iccid, "--slug", "fr-1gb-7d", "--yes"]).await;
    let text = usage_error_text(&out);
    assert!(
        text.contains("is not offered") && text.contains("offered: topup-"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("; nothing was topped up."), "{text}");
    let offered = first_offered(&text);

    // No terminal and no --yes: refused, nothing sent.
    let out = run_acme(
        &sb,
        &home,
        ["topup", "--iccid", &iccid, "--slug", &offered, "--qty", "2"],
    )
    .await;
    let text = usage_error_text(&out);
    assert!(
        text.contains("--yes") && text.contains("USD in all"),
        "shows the total it would pay: {text}"
    );
    assert!(text.contains("nothing was topped up"), "{text}");
    assert_eq!(order_total(&sb, &home).await, orders, "nothing was placed");

    let out = run_acme(
        &sb,
        &home,
        [
            "topup", "--iccid", &iccid, "--slug", &offered, "--qty", "2", "--yes", "--json",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let placed = stdout_json(&out);
    let total: rust_decimal::Decimal = placed["order"]["totalSellPrice"].as_str().unwrap().parse().unwrap();
    let balance: rust_decimal::Decimal = placed["balanceUsd"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        balance,
        rust_decimal::Decimal::new(25000, 2) - total,
        "debited once by totalSellPrice"
    );
    assert_eq!(placed["order"]["iccid"], iccid.as_str());
    assert_eq!(order_total(&sb, &home).await, orders + 1);

    // buy: a plan, --yes; and a total beyond the balance, refused before sending.
    let out = run_acme(&sb, &home, ["buy", "--slug", "fr-1gb-7d", "--yes", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout_json(&out)["order"]["status"], "pending");
    let out = run_acme(
        &sb,
        &home,
        ["buy", "--slug", "gl-20gb-30d", "--qty", "10", "--yes", "--json"],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["kind"], "refused");
    let message = err["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("short of") && message.ends_with("; nothing was bought."),
        "{message}"
    );
    assert_eq!(err["error"]["moneyMoved"], false);
    assert_eq!(
        order_total(&sb, &home).await,
        orders + 2,
        "the refused purchase sent nothing"
    );
    assert_eq!(
        run_acme(&sb, &home, ["buy", "--slug", &offered, "--yes"])
            .await
            .status
            .code(),
        Some(2),
        "a top-up plan is not bought as a new eSIM"
    );
}

/// A check before paying that gets no answer in time says so, and that nothing was topped up
/// (exit 5, as for any timeout); no payment reached the server.
#[tokio::test(flavor = "multi_thread")]
async fn a_check_that_times_out_says_nothing_was_topped_up() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let iccid = in_use_iccid(&sb, &home).await;
    let orders = order_total(&sb, &home).await;
    sb.set_latency(std::time::Duration::from_millis(2500));
    let out = run_acme(
        &sb,
        &home,
        ["--timeout", "1", "topup", "--iccid", &iccid, "--slug", "x", "--yes"],
    )
    .await;
    sb.set_latency(std::time::Duration::ZERO);
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{text}");
    assert!(
        text.contains("no answer") && text.trim_end().ends_with("; nothing was topped up."),
        "{text}"
    );
    assert_eq!(order_total(&sb, &home).await, orders);
}

/// On a terminal, `topup` without `--yes` asks, showing the total; "n" sends nothing, "y" pays.
#[tokio::test(flavor = "multi_thread")]
async fn topup_asks_on_a_terminal() {
    if !tools::tmux_available("topup_asks_on_a_terminal") {
        return;
    }
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let iccid = in_use_iccid(&sb, &home).await;
    let text = String::from_utf8_lossy(
        &run_acme(&sb, &home, ["topup", "--iccid", &iccid, "--slug", "x", "--yes"])
            .await
            .stderr,
    )
    .into_owned();
    let slug = first_offered(&text);
    let orders = order_total(&sb, &home).await;
    for (answer, placed) in [("n", false), ("y", true)] {
        let tmux = tmux::Tmux::new(&format!("ask-{answer}"));
        let command = format!(
            "HOME={home} ESIMDASH_BASE_URL={base} ESIMDASH_ACCESS_CODE=ak_demo_acme ESIMDASH_SECRET_KEY=sk_demo_acme {bin} topup --iccid {iccid} --slug {slug}",
            home = home.path().display(),
            base = sb.base_url(),
            bin = env!("CARGO_BIN_EXE_esimdash"),
        );
        tmux.start(160, 20, &command);
        let screen = tokio::task::block_in_place(|| tmux.wait_for("Proceed? [y/N]"));
        assert!(screen.contains("USD in all") && screen.contains("Balance"), "{screen}");
        tmux.keys(&[answer, "Enter"]);
        let code = tokio::task::block_in_place(|| tmux.exit_code());
        let screen = tmux.screen();
        drop(tmux);
        let expected = orders + u64::from(placed);
        assert_eq!(order_total(&sb, &home).await, expected, "{answer}: {screen}");
        assert_eq!(code == 0, placed, "{answer}: exit {code}\n{screen}");
    }
}

#[test]
fn a_keys_table_with_a_mistake_stops_the_dashboard_with_the_line_named() {
    let home = tempfile::tempdir().unwrap();
    for (text, line, says) in [
        (
            "mouse = false\n\n[keys]\nquit = [\"x\"]\nqiut = [\"y\"]\n",
            5,
            "no such action",
        ),
        ("[keys]\n\nquit = [\"ctrl-banana\"]\n", 3, "not a key name"),
        ("[keys]\nquit = \"s\"\n", 2, "would do two things"),
    ] {
        write_config(&home, text, 0o600);
        let out = esimdash(&home).arg("--demo").output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("line {line}:")) && stderr.contains(says),
            "{text:?}: {stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn orders_all_as_csv_has_exactly_total_rows_that_a_csv_reader_takes() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let total = order_total(&sb, &home).await;
    assert!(total > 300, "several pages: {total}");
    let file = home.path().join("orders.csv");
    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb).args(["orders", "--all", "--csv", "-o"]).arg(&file);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(&file).unwrap();
    assert!(bytes.windows(2).any(|w| w == b"\r\n"), "RFC 4180 line ends");
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let header = reader.headers().unwrap().clone();
    assert_eq!(&header[0], "orderNo");
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len() as u64, total, "one data row per order");
    let numbers: std::collections::HashSet<&str> = rows.iter().map(|r| &r[0]).collect();
    assert_eq!(numbers.len() as u64, total, "no order twice");
    let total_col = header.iter().position(|h| h == "totalSellPrice").unwrap();
    for row in &rows {
        let money: rust_decimal::Decimal = row[total_col].parse().expect("an exact decimal");
        assert!(money.scale() == 2, "as the API gave it: {}", &row[total_col]);
    }

    // The first page of JSON and the CSV agree, field for field, on the newest order.
    let newest =
        stdout_json(&run_acme(&sb, &home, ["orders", "--page-size", "1", "--json"]).await)["orders"][0].clone();
    assert_eq!(newest["providerOrderNo"], rows[0][0]);
    assert_eq!(newest["totalSellPrice"], rows[0][total_col]);
    assert_eq!(newest["createdAt"], rows[0][1], "timestamps as given");

    // To stdout, piped: the same rows; `| head` ends it quietly.
    let out = run_acme(&sb, &home, ["orders", "--all", "--csv"]).await;
    assert_eq!(out.stdout, bytes);
    assert!(out.stderr.is_empty(), "no progress line when stderr is not a terminal");
}

/// The attention rule written out again, independently of the program's.
fn needs_attention(esim: &Value, now: chrono::DateTime<chrono::Utc>) -> bool {
    let usable = matches!(esim["status"].as_str(), Some("got_resource" | "in_use" | "suspended"));
    let raw = &esim["rawOrderJson"];
    let (used, total) = (
        raw["orderUsage"].as_u64().unwrap_or(0),
        raw["totalVolume"].as_u64().unwrap_or(0),
    );
    let data = total > 0 && used * 100 >= 80 * total;
    let expires = chrono::DateTime::parse_from_rfc3339(raw["expiredTime"].as_str().unwrap_or("")).unwrap();
    let time = expires <= now + chrono::Duration::days(3);
    usable && (data || time)
}

#[tokio::test(flavor = "multi_thread")]
async fn esims_attention_is_the_rule_applied_to_the_apis_own_data() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let all = stdout_json(&run_acme(&sb, &home, ["esims", "--all", "--json"]).await);
    let read = all["esims"].as_array().unwrap().len() as u64;
    let listed = stdout_json(&run_acme(&sb, &home, ["esims", "--page-size", "1", "--json"]).await)["total"]
        .as_u64()
        .unwrap();
    assert_eq!(read, listed, "every profile, a reissued ICCID's old one too");
    let now = chrono::Utc::now();
    let expected: Vec<&str> = all["esims"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| needs_attention(e, now))
        .map(|e| e["rawOrderJson"]["iccid"].as_str().unwrap())
        .collect();
    assert!(!expected.is_empty() && expected.len() < all["total"].as_u64().unwrap() as usize);

    // The whole list was just read: the kept picture answers (one request, the top); read live
    // (`--max-age 0`), the same eSIMs in the same order and shape.
    let iccids = |found: &serde_json::Value| -> Vec<String> {
        let listed = found["esims"].as_array().unwrap().iter();
        listed.map(|e| e["iccid"].as_str().unwrap().to_string()).collect()
    };
    let pictured = stdout_json(&run_acme(&sb, &home, ["esims", "--attention", "--json"]).await);
    assert_eq!(iccids(&pictured), expected);
    assert_eq!(pictured["from"], "picture", "{}", pictured["from"]);
    let live = stdout_json(&run_acme(&sb, &home, ["esims", "--attention", "--max-age", "0", "--json"]).await);
    assert_eq!(iccids(&live), expected);
    assert_eq!(
        (live["from"].as_str(), live["ageSeconds"].as_i64()),
        (Some("live"), Some(0))
    );
    let without_times = |found: &serde_json::Value| {
        let mut listed = found["esims"].clone();
        for e in listed.as_array_mut().unwrap() {
            e.as_object_mut().unwrap().remove("readAt");
        }
        listed
    };
    assert_eq!(
        without_times(&pictured),
        without_times(&live),
        "one shape, the same facts"
    );
    assert_eq!(pictured["usable"], live["usable"]);
    // Live within a budget too small: an error in words, nothing printed as the list (no
    // document, no CSV header).
    for form in ["--json", "--csv"] {
        let args = ["esims", "--attention", "--max-age", "0", "--budget", "1", form];
        let short = run_acme(&sb, &home, args).await;
        assert_eq!(short.status.code(), Some(2), "{form}: {}", stderr(&short));
        assert!(stderr(&short).contains("more than --budget 1"), "{}", stderr(&short));
        assert!(
            short.stdout.is_empty(),
            "{form}: {}",
            String::from_utf8_lossy(&short.stdout)
        );
    }

    // Thresholds from the config file: 100 % and 0 days leave only the used-up-but-usable.
    let config = write_config(&home, "[attention]\nused_percent = 100\ndays = 0\n", 0o600);
    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb)
        .arg("--config")
        .arg(&config)
        .args(["esims", "--attention", "--csv"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let strict = String::from_utf8(out.stdout).unwrap();
    assert!(strict.lines().count() - 1 < expected.len());

    let config = write_config(&home, "[attention]\nused_percent = 180\n", 0o600);
    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb)
        .arg("--config")
        .arg(&config)
        .args(["esims", "--attention"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("used_percent = 180: it must be 1 to 100"));
}

/// `--all --json` writes each page as it is read: whole, it is one document with every item
/// and the total after them; a read that fails midway (the key revoked after the first page)
/// leaves a document no JSON reader takes for the whole, the error on stderr and its exit code.
#[tokio::test(flavor = "multi_thread")]
async fn a_json_list_cut_short_midway_is_no_document_and_no_success() {
    let config = SandboxConfig {
        rate_limit: 100_000,
        ..SandboxConfig::default()
    };
    let sb = spawn(&config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    for key in ["esims", "orders"] {
        let out = run_acme(&sb, &home, [key, "--all", "--json"]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let whole = stdout_json(&out);
        let items = whole[key].as_array().unwrap().len() as u64;
        assert!(items > 200, "several pages of {key}: {items}");
        assert_eq!(whole["total"].as_u64(), Some(items), "{key}");
        assert!(stdout(&out).ends_with("}\n"));

        // Each page's answer waits: the key is revoked once the first page was asked for.
        sb.set_latency(std::time::Duration::from_millis(300));
        let before = sb.requests_received();
        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb).args([key, "--all", "--json"]);
        let revoke = async {
            while sb.requests_received() == before {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            sb.revoke_after_writes(0);
        };
        let (out, ()) = tokio::join!(run(cmd), revoke);
        sb.set_latency(std::time::Duration::ZERO);
        sb.revoke_after_writes(u64::MAX);
        let printed = stdout(&out);
        assert_eq!(out.status.code(), Some(3), "{key}: {}", stderr(&out));
        assert!(
            printed.starts_with(&format!("{{\"{key}\":[{{")),
            "the first page was written as it came: {printed:.80}"
        );
        assert!(
            serde_json::from_str::<Value>(&printed).is_err(),
            "{key}: the part is not a document"
        );
        let error: Value = serde_json::from_slice(&out.stderr).unwrap_or_else(|_| panic!("{}", stderr(&out)));
        assert_eq!(error["error"]["kind"], "revoked", "{key}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_export_interrupted_midway_leaves_no_file() {
    let config = SandboxConfig {
        rate_limit: 100_000,
        latency: std::time::Duration::from_millis(400),
        ..SandboxConfig::default()
    };
    let sb = spawn(&config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("out");
    std::fs::create_dir(&dir).unwrap();
    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb)
        .args(["orders", "--all", "--csv", "-o"])
        .arg(dir.join("orders.csv"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    // Four pages at 0.4 s each: stop it after the first page is written.
    let start = std::time::Instant::now();
    while sb.requests_received() < 2 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "the export started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "the temporary file exists meanwhile"
    );
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "no file and no temporary file: {left:?}");
}

/// Read-only from the flag, the environment or a profile: every write exits 2 naming the
/// setting, and nothing at all reaches the server for it.
#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_session_refuses_every_write_with_exit_2_naming_the_setting() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let iccid = in_use_iccid(&sb, &home).await;
    let writes: [&[&str]; 3] = [
        &["topup", "--iccid", &iccid, "--slug", "topup-any", "--yes"],
        &["buy", "--slug", "fr-1gb-7d", "--yes"],
        &["profile", "set", "--company", "Taken over"],
    ];
    let config = write_config(
        &home,
        "[profiles.support]\nbase_url = \"http://127.0.0.1:9/api/v1\"\naccess_code = \"ak_demo_acme\"\nread_only = true\n",
        0o600,
    );
    let before = sb.api_requests_received();
    for args in writes {
        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb).arg("--read-only").args(args);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_stderr_has(&out, "read-only (--read-only)");

        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb)
            .env("ESIMDASH_READ_ONLY", "1")
            .args(args)
            .arg("--json");
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(2));
        let err: Value = serde_json::from_slice(&out.stderr).unwrap();
        assert_eq!(err["error"]["kind"], "read_only");
        assert!(
            err["error"]["message"]
                .as_str()
                .unwrap()
                .contains("ESIMDASH_READ_ONLY=1")
        );

        // The profile's setting holds whatever the environment says.
        let mut cmd = esimdash(&home);
        cmd.env("ESIMDASH_CONFIG", &config)
            .env("ESIMDASH_PROFILE", "support")
            .env("ESIMDASH_BASE_URL", sb.base_url())
            .env("ESIMDASH_SECRET_KEY", "sk_demo_acme")
            .env("ESIMDASH_READ_ONLY", "0")
            .args(args);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(2));
        assert_stderr_has(&out, "read_only = true in profile \"support\"");
    }
    assert_eq!(
        sb.api_requests_received(),
        before,
        "not one request for a refused write"
    );

    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb).env("ESIMDASH_READ_ONLY", "maybe").arg("balance");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert_stderr_has(&out, "ESIMDASH_READ_ONLY=\"maybe\"");
    // Reading is what a read-only seat is for.
    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb).arg("--read-only").arg("balance");
    assert_eq!(run(cmd).await.status.code(), Some(0));
}

/// Every stage of a top-up is in `esimdash audit`; a lost answer is sent once more under its
/// key where the server has echoed one, and looked up in the order list where it has not; the
/// command says which.
#[tokio::test(flavor = "multi_thread")]
async fn the_audit_trail_and_what_a_lost_answer_became() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let (iccid, slug) = topupable(&sb, &home).await;
    // The same top-up three times on purpose: each confirmed twice (--again).
    let topup = [
        "topup",
        "--iccid",
        &iccid,
        "--slug",
        &slug,
        "--yes",
        "--again",
        "--timeout",
        "1",
    ];

    let out = run_acme(&sb, &home, topup).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("Placed: order"), "{}", stdout(&out));

    // Each answer lost once more. The server echoed the key (the trail says so), but a resend
    // trusts only what it sees: the server carried the payment out, the order list shows it,
    // and it is not sent again. Another machine (no trail) has never seen this server echo a
    // key: it looks it up.
    let orders = order_total(&sb, &home).await;
    let other = tempfile::tempdir().unwrap();
    let lost_answers = [
        (
            "this machine",
            &home,
            "the order list was read (esimdash sends a payment once more",
        ),
        (
            "another machine",
            &other,
            "not sent again; the order list was read instead",
        ),
    ];
    for (paid, (machine, from, said)) in (1..).zip(lost_answers) {
        sb.lose_next_writes(1);
        let out = run_acme(&sb, from, topup).await;
        assert_eq!(out.status.code(), Some(0), "{machine}: {}", stderr(&out));
        assert!(
            stdout(&out).contains(said) && stdout(&out).contains("shows the top-up was placed"),
            "{machine}: {}",
            stdout(&out)
        );
        assert_eq!(order_total(&sb, &home).await, orders + paid, "{machine}: paid once");
    }

    let stages = |home: &tempfile::TempDir| {
        let mut cmd = esimdash(home);
        cmd.args(["audit", "--json"]);
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect::<Vec<_>>()
    };
    let mine = stages(&home);
    let names: Vec<&str> = mine.iter().map(|e| e["stage"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["asked", "sent", "answered", "asked", "sent", "unknown", "looked_up"]
    );
    assert!(mine[6]["orderNo"].is_string(), "{}", mine[6]);
    for e in &mine {
        assert_eq!(e["iccid"], iccid.as_str());
        assert_eq!(e["accessCode"], "ak_demo_acme");
        assert_eq!(e["profile"], "default");
    }
    let theirs = stages(&other);
    let names: Vec<&str> = theirs.iter().map(|e| e["stage"].as_str().unwrap()).collect();
    assert_eq!(names, ["asked", "sent", "unknown", "looked_up"]);

    let trail = home.path().join("state/esimdash/audit.jsonl");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&trail).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(!std::fs::read_to_string(&trail).unwrap().contains("sk_demo_acme"));

    // The table, --since, and a line that is not an entry (reported, not dropped silently).
    std::fs::OpenOptions::new()
        .append(true)
        .open(&trail)
        .unwrap()
        .write_all(b"not json\n")
        .unwrap();
    let mut cmd = esimdash(&home);
    cmd.args(["audit", "--since", "2000-01-01"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("STAGE") && stdout(&out).contains("answered"),
        "{}",
        stdout(&out)
    );
    assert_stderr_has(&out, "line 8");
    let mut cmd = esimdash(&home);
    cmd.args(["audit", "--since", "2999-01-01"]);
    assert!(stdout(&run(cmd).await).starts_with("No audit entries since then"));
    let mut cmd = esimdash(&home);
    cmd.args(["audit", "--since", "yesterday"]);
    assert_eq!(run(cmd).await.status.code(), Some(2));
}

#[test]
fn completions_and_the_man_page_come_from_the_command_definitions() {
    let home = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef esimdash"),
        ("fish", "complete -c esimdash"),
    ] {
        let out = esimdash(&home).args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let text = stdout(&out);
        assert!(text.contains(marker), "{shell}: {text}");
        assert!(
            text.contains("read-only") && text.contains("audit"),
            "{shell}: every flag and command"
        );
    }
    let out = esimdash(&home).arg("man").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let page = stdout(&out);
    assert!(page.starts_with(".ie") || page.contains(".TH esimdash"), "{page}");
    assert!(page.contains("read\\-only"), "{page}");
}

/// A server whose profile and error messages carry terminal escapes, C1 controls, DEL and bidi
/// overrides: `--json` escapes every one of them, and the table replaces them.
#[tokio::test(flavor = "multi_thread")]
async fn json_and_tables_never_pass_control_or_bidi_characters_to_the_terminal() {
    let hostile = "Evil\u{1b}]52;c;aGk=\u{7}\u{7f}\u{9b}2J\u{85}\u{202e}moc.live\u{2066}";
    let profile = serde_json::json!({ "profile": {
        "name": "Eve", "email": "eve@example.com", "companyName": hostile, "country": "US",
        "website": "", "status": "active", "balanceUsd": "1.00" } });
    let failure = serde_json::json!({ "message": hostile });
    let app = axum::Router::new()
        .route(
            "/api/v1/reseller/profile",
            axum::routing::get(move || async move { axum::Json(profile) }),
        )
        .fallback(move || async move { (axum::http::StatusCode::BAD_REQUEST, axum::Json(failure)) });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/api/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let home = tempfile::tempdir().unwrap();
    let unsafe_char = |c: char| esimdash_domain::text::is_unsafe(c) && c != '\n';
    let with = |args: &[&str]| {
        let mut cmd = esimdash(&home);
        cmd.env("ESIMDASH_BASE_URL", &base)
            .env("ESIMDASH_ACCESS_CODE", "ak_x")
            .env("ESIMDASH_SECRET_KEY", "sk_x")
            .args(args);
        cmd
    };

    let out = run(with(&["--json", "profile"])).await;
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!text.chars().any(unsafe_char), "raw control in {text:?}");
    assert!(
        text.contains(r"Evil\u001b]52;c;aGk=\u0007\u007f\u009b2J\u0085\u202emoc.live\u2066"),
        "{text}"
    );
    assert_eq!(
        stdout_json(&out)["profile"]["companyName"],
        hostile,
        "escapes read back whole"
    );

    let out = run(with(&["profile"])).await;
    assert!(
        out.status.success() && stdout(&out).contains("Evil"),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).chars().any(unsafe_char), "{:?}", stdout(&out));

    let out = run(with(&["--json", "balance"])).await;
    assert!(!out.status.success());
    let error = stderr(&out);
    assert!(!error.chars().any(unsafe_char), "raw control in {error:?}");
    assert!(error.contains("Evil") && error.contains("400"), "{error}");
}

/// `sandbox --chaos` takes a share from 0 to 1 and says so otherwise.
#[test]
fn the_sandbox_chaos_rate_is_a_share() {
    let home = tempfile::tempdir().unwrap();
    let out = esimdash(&home).args(["sandbox", "--chaos", "1.5"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_stderr_has(&out, "is not a share from 0 to 1");
}

/// A script that reads only the start of the output (`esimdash … | head`): esimdash ends quietly
/// when the pipe closes, as Unix tools do, instead of panicking on the write.
#[tokio::test(flavor = "multi_thread")]
async fn a_reader_that_stops_early_ends_the_command_quietly() {
    use std::io::Read;
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    for args in [&["plans", "--json"][..], &["esims", "--all"][..]] {
        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut start = [0u8; 10];
        child.stdout.take().unwrap().read_exact(&mut start).unwrap();
        // The reader is gone: the rest of the output meets a closed pipe.
        let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// Set-up as a newcomer meets it: `--demo` after the command works as before it, each
/// command's help lists its own options first and the connection ones under their heading, and
/// an export is named by its absolute path.
#[tokio::test(flavor = "multi_thread")]
async fn global_flags_after_the_command_help_headings_and_absolute_export_paths() {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = esimdash(&home);
    cmd.args(["orders", "--demo", "--page-size", "2", "--json"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"orders\""));

    let mut cmd = esimdash(&home);
    cmd.args(["topup", "--help"]);
    let help = String::from_utf8_lossy(&run(cmd).await.stdout).to_string();
    let own = help.find("--qty").expect("its own option");
    let heading = help.find("Connection options:").expect("the heading");
    assert!(own < heading && help.find("--base-url").unwrap() > heading, "{help}");
    assert!(help.contains("1 to 10"), "the range is said: {help}");
    for offline in [
        &["sandbox", "--help"][..],
        &["man", "--help"],
        &["completions", "--help"],
    ] {
        let mut cmd = esimdash(&home);
        cmd.args(offline);
        let help = stdout(&run(cmd).await);
        assert!(
            help.contains("Usage:") && !help.contains("--base-url"),
            "{offline:?}: {help}"
        );
    }
    let mut cmd = esimdash(&home);
    cmd.arg("--help");
    let top = String::from_utf8_lossy(&run(cmd).await.stdout).to_string();
    assert!(top.contains("With no command, esimdash opens the dashboard"), "{top}");

    let sb = sandbox().await;
    let base = sb.base_url();
    let key = ["--access-code", "ak_demo_acme", "--secret-key", "sk_demo_acme"];
    for args in [
        [&["--base-url", base.as_str()][..], &key, &["balance", "--json"]].concat(),
        [&["balance", "--json", "--base-url", base.as_str()][..], &key].concat(),
    ] {
        let mut cmd = esimdash(&home);
        cmd.args(&args);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).contains("balanceUsd"), "{args:?}");
    }
    let mut cmd = esimdash(&home);
    cmd.current_dir(home.path());
    acme(&mut cmd, &sb).args(["orders", "--csv", "-o", "orders.csv"]);
    let out = run(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let absolute = home.path().join("orders.csv").canonicalize().unwrap();
    assert!(stderr.contains(&format!("Wrote {}", absolute.display())), "{stderr}");
}

/// A mistyped `--status` (none this version knows) that finds nothing is an error naming the
/// statuses there are, never an empty list and exit 0; a known status with nothing is fine, and
/// `--all` to a file leaves no file.
#[tokio::test(flavor = "multi_thread")]
async fn a_status_no_one_knows_that_finds_nothing_is_a_usage_error() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let file = home.path().join("bogus.csv");
    let file = file.to_str().unwrap();
    for args in [
        &["orders", "--status", "bogus"][..],
        &["esims", "--status", "bogus", "--json"][..],
        &["orders", "--status", "bogus", "--all", "--csv", "-o", file][..],
    ] {
        let out = run_acme(&sb, &home, args).await;
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(
            text.contains("bogus") && text.contains("got_resource, in_use"),
            "{args:?}: {text}"
        );
    }
    assert!(!std::path::Path::new(file).exists(), "no file for a mistyped status");
    let out = run_acme(&sb, &home, ["orders", "--status", "revoked", "--page", "999"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `esimdash balance` over https: the sandbox with a test certificate, trusted through
/// ESIMDASH_CA_FILE without reading the system's roots (the debug log would say so), nor for
/// plain http; without the extra root they are read, and the certificate refused; a ca_file that is no certificate stops the command with exit 2, before any
/// request.
#[tokio::test(flavor = "multi_thread")]
async fn balance_over_https_with_ca_file_and_the_roots_read_only_for_https() {
    let certs = certs::make();
    let tls = esimdash_sandbox::spawn_with(
        &SandboxConfig::default(),
        "127.0.0.1:0".parse().unwrap(),
        Some(certs::acceptor(&certs)),
    )
    .await
    .unwrap();
    let plain = sandbox().await;
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("debug.log");
    let balance = |base_url: &str, ca_file: &std::path::Path| {
        let mut cmd = esimdash(&home);
        acme_at(&mut cmd, base_url)
            .env("ESIMDASH_CA_FILE", ca_file)
            .env("ESIMDASH_LOG", "debug")
            .arg("--log-file")
            .arg(&log)
            .arg("balance");
        cmd
    };
    let reads_roots = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("loading the system's root certificates")
    };

    let out = run(balance(&tls.base_url(), &certs.ca)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("Balance: 250.00 USD\n"), "{}", stdout(&out));
    assert!(!reads_roots(), "the chain ends at the extra root");

    std::fs::remove_file(&log).unwrap();
    let out = run(balance(&plain.base_url(), &certs.ca)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!reads_roots(), "never for plain http");

    let not_pem = home.path().join("not.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    let before = tls.requests_received();
    let out = run(balance(&tls.base_url(), &not_pem)).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--ca-file")
            && stderr(&out).contains("no PEM certificate")
            && !stderr(&out).contains("config file"),
        "{}",
        stderr(&out)
    );
    assert_eq!(tls.requests_received(), before, "nothing sent");
    // A device that never ends (or a pipe) is refused at once, not read for ever.
    let started = std::time::Instant::now();
    let out = run(balance(&tls.base_url(), std::path::Path::new("/dev/zero"))).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "not a regular file");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));

    // Without the extra root, the certificate is refused and the error says so.
    let mut cmd = esimdash(&home);
    acme_at(&mut cmd, &tls.base_url())
        .env("ESIMDASH_LOG", "debug")
        .arg("--log-file")
        .arg(&log)
        .arg("balance");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(reads_roots(), "the system's roots are read to verify it");
    eprintln!("untrusted: {}", stderr(&out));
    assert!(
        stderr(&out).contains("certificate is not trusted") && stderr(&out).contains("--ca-file"),
        "{}",
        stderr(&out)
    );
}

/// The state a monitoring plugin's reader gives a check line from its performance data alone
/// (`label=value;warn;crit`, each threshold a range: `10` alerts outside 0..10, `10:` below
/// 10, `~:10` above 10, `@10:20` inside): 0 OK, 1 WARNING, 2 CRITICAL.
fn state_from_perfdata(line: &str) -> i32 {
    fn alerts(range: &str, value: f64) -> bool {
        let (inside, range) = match range.strip_prefix('@') {
            Some(r) => (true, r),
            None => (false, range),
        };
        let (start, end) = range.split_once(':').unwrap_or(("0", range));
        let start = match start {
            "~" => f64::NEG_INFINITY,
            "" => 0.0,
            s => s.parse().unwrap(),
        };
        let end = if end.is_empty() {
            f64::INFINITY
        } else {
            end.parse().unwrap()
        };
        let within = start <= value && value <= end;
        within == inside
    }
    let (_, perfdata) = line.trim_end().split_once(" | ").expect("performance data");
    // The worst of its labels (`balance=… runway_days=…`); one without thresholds never alerts.
    let state = |label: &str| {
        let (_, fields) = label.split_once('=').unwrap();
        let fields: Vec<&str> = fields.split(';').collect();
        // The value with its unit of measure, if any (`age=12s`), as the plugins' format has it.
        let value: f64 = fields[0]
            .trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '%')
            .parse()
            .unwrap();
        if fields.len() < 3 {
            0
        } else if alerts(fields[2], value) {
            2
        } else if alerts(fields[1], value) {
            1
        } else {
            0
        }
    };
    perfdata.split(' ').map(state).max().unwrap_or(0)
}

/// `esimdash check`: each state by the monitoring-plugin conventions, its one line and exit
/// status, performance data whose thresholds alert exactly when the check does, and UNKNOWN
/// (3) when it cannot tell: a refused key, a server that is not there, thresholds the wrong
/// way round, no credentials at all.
#[tokio::test(flavor = "multi_thread")]
async fn check_balance_and_attention_say_ok_warning_critical_or_unknown() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let check = |args: &[&str]| {
        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb).arg("check").args(args);
        cmd
    };
    for (args, code, line) in [
        (
            ["balance", "--warning", "100", "--critical", "20"],
            0,
            "ESIMDASH BALANCE OK - 250.00 USD | balance=250.00;100:;20:\n",
        ),
        (
            ["balance", "--warning", "300", "--critical", "20"],
            1,
            "ESIMDASH BALANCE WARNING - 250.00 USD | balance=250.00;300:;20:\n",
        ),
        (
            ["balance", "--warning", "300.50", "--critical", "250.01"],
            2,
            "ESIMDASH BALANCE CRITICAL - 250.00 USD | balance=250.00;300.50:;250.01:\n",
        ),
        (
            ["balance", "--warning", "250", "--critical", "250"],
            0,
            "ESIMDASH BALANCE OK - 250.00 USD | balance=250.00;250:;250:\n",
        ),
    ] {
        let out = run(check(&args)).await;
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), line);
        assert_eq!(state_from_perfdata(line), code, "{line}");
        assert!(out.stderr.is_empty(), "{}", stderr(&out));
    }

    // Attention, against the count `esims --attention` gives.
    let n = stdout_json(&run_acme(&sb, &home, ["esims", "--attention", "--json"]).await)["total"]
        .as_u64()
        .unwrap();
    assert!(n > 0, "the demo data has eSIMs needing attention");
    for (warning, critical, code, word) in [
        (n + 1, n + 2, 0, "OK"),
        (n, n + 1, 1, "WARNING"),
        (n - 1, n, 2, "CRITICAL"),
    ] {
        let (w, c) = (warning.to_string(), critical.to_string());
        let out = run(check(&["attention", "--warning", &w, "--critical", &c])).await;
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.starts_with(&format!("ESIMDASH ATTENTION {word} - {n} eSIMs need attention")),
            "{text}"
        );
        // The plugins' `N` alerts above N, so "from w" is w - 1 for a count.
        let (w1, c1) = (warning - 1, critical - 1);
        assert!(text.contains(&format!("| attention={n};{w1};{c1} age=")), "{text}");
        assert_eq!(state_from_perfdata(&text), code, "{text}");
    }

    // UNKNOWN: the key refused, nobody at the address, thresholds the wrong way round.
    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb)
        .env("ESIMDASH_ACCESS_CODE", "ak_demo_revoked")
        .env("ESIMDASH_SECRET_KEY", "sk_demo_revoked")
        .args(["check", "balance", "--warning", "100", "--critical", "20"]);
    let out = run(cmd).await;
    assert_balance_check_unknown(&out);
    assert_eq!(stdout(&out).lines().count(), 1);
    let mut cmd = esimdash(&home);
    acme_at(&mut cmd, "http://127.0.0.1:9/api/v1").args(["check", "balance", "--warning", "100", "--critical", "20"]);
    let out = run(cmd).await;
    assert_balance_check_unknown(&out);
    let out = run(check(&["balance", "--warning", "20", "--critical", "100"])).await;
    assert_eq!(out.status.code(), Some(3));
    assert_stdout_has(&out, "UNKNOWN - --critical 100 is above --warning 20");
    let mut cmd = esimdash(&home);
    cmd.args(["check", "balance", "--warning", "100", "--critical", "20"]);
    let out = run(cmd).await;
    assert_check_unknown(&out);
}

/// A check's line as a monitoring system reads it, whatever goes wrong: a threshold left out
/// is named by its flag; text from the server (here with a `|` and a new line) stays in the
/// words and cannot add performance data; "from 0" eSIMs is a range that alerts at every count.
#[tokio::test(flavor = "multi_thread")]
async fn check_lines_name_what_is_missing_and_carry_only_their_own_performance_data() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    for (args, missing) in [
        (vec!["balance"], vec!["--warning", "--runway-warning"]),
        (vec!["balance", "--warning", "10"], vec!["--critical"]),
        (vec!["attention", "--critical", "5"], vec!["--warning"]),
    ] {
        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb).arg("check").args(&args);
        let out = run(cmd).await;
        assert_check_unknown(&out);
        let line = stdout(&out);
        assert_eq!(line.lines().count(), 1, "{line}");
        for flag in missing {
            assert!(line.contains(flag), "{args:?} names {flag}: {line}");
        }
        assert!(!line.contains('|'), "{line}");
    }

    let out = run_acme(&sb, &home, ["check", "attention", "--warning", "0", "--critical", "0"]).await;
    let line = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{line}");
    assert!(line.contains(";~:-1;~:-1 age="), "{line}");
    assert_eq!(state_from_perfdata(&line), 2, "{line}");

    // A server whose every answer is a refusal with a message of its own.
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/api/v1", server.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::Read;
        let body = r#"{"error":"a|b=1\nwarn|x=2;3;4"}"#;
        for stream in server.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let _ = write!(
                stream,
                "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    for what in ["balance", "attention"] {
        let mut cmd = esimdash(&home);
        acme_at(&mut cmd, &base).args(["check", what, "--warning", "1", "--critical", "1"]);
        let out = run(cmd).await;
        let line = stdout(&out);
        assert_eq!(out.status.code(), Some(3), "{line}{}", stderr(&out));
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(
            line.starts_with(&format!("ESIMDASH {} UNKNOWN - ", what.to_uppercase())),
            "{line}"
        );
        assert!(
            line.contains("a/b=1") && line.contains("warn/x=2;3;4"),
            "the server's words, on the line: {line}"
        );
        assert!(!line.contains('|'), "no performance data: {line}");
    }
}

/// The sandbox at its largest (`sandbox --orders 100000`), paged to its end as a user would:
/// no order or eSIM date older than three years (it once dated its oldest in 1969).
#[tokio::test(flavor = "multi_thread")]
async fn the_largest_sandbox_history_reaches_back_three_years_at_most() {
    let (sb, home) = sandbox_of(100_000, 100_000).await;
    let three_years_ago = chrono::Utc::now() - chrono::Duration::days(3 * 365);
    for list in ["orders", "esims"] {
        let page = |n: u64| {
            let mut cmd = esimdash(&home);
            let n = n.to_string();
            acme(&mut cmd, &sb).args([list, "--page-size", "100", "--page", &n, "--json"]);
            cmd
        };
        let total = stdout_json(&run(page(1)).await)["total"].as_u64().unwrap();
        assert!(total >= 100_000, "{list}: {total}");
        let oldest = stdout_json(&run(page(total.div_ceil(100))).await);
        let rows = oldest[list].as_array().unwrap();
        assert!(!rows.is_empty(), "{oldest}");
        for row in rows {
            let raw = &row["rawOrderJson"];
            for date in [
                &row["createdAt"],
                &raw["installationTime"],
                &raw["activateTime"],
                &raw["expiredTime"],
            ] {
                let Some(text) = date.as_str().filter(|t| !t.is_empty()) else {
                    continue;
                };
                let at = chrono::DateTime::parse_from_rfc3339(text).unwrap();
                assert!(at >= three_years_ago, "{list}: {text} in {row}");
            }
        }
    }
}

/// `esimdash metrics`, read by a Prometheus text parser: the balance, eSIMs by status and
/// needing attention (from the index, filled here by `esims --all`), orders by status, each
/// equal to what the API says; served with `--listen`, a second scrape within `--every` costs
/// the API nothing.
#[tokio::test(flavor = "multi_thread")]
async fn metrics_are_prometheus_text_equal_to_the_apis_figures_and_served_from_a_cache() {
    use esimdash_api::model::OrderQuery;
    use esimdash_domain::status::{Status, StatusFilter};
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let command = |args: &[&str]| {
        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb).args(args);
        cmd
    };
    // The first scrape of a fresh account is exact: nothing read before it.
    let out = run(command(&["metrics"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap();
    let value = |name: &str, label: Option<(&str, &str)>| -> f64 {
        let sample = scrape
            .samples
            .iter()
            .find(|s| s.metric == name && label.is_none_or(|(k, v)| s.labels.get(k) == Some(v)))
            .unwrap_or_else(|| panic!("{name} {label:?} in:\n{text}"));
        match sample.value {
            prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Counter(v) => v,
            ref other => panic!("{name}: {other:?}"),
        }
    };
    assert_eq!(value("esimdash_balance_usd", None), 250.0);

    let api = acme_api(&sb);
    let total = api.esims(&Default::default()).await.unwrap().total;
    let by_status: f64 = scrape
        .samples
        .iter()
        .filter(|s| s.metric == "esimdash_esims")
        .map(|s| match s.value {
            prometheus_parse::Value::Gauge(v) => v,
            _ => 0.0,
        })
        .sum();
    assert_eq!(by_status, total as f64, "every eSIM counted once");
    assert_eq!(value("esimdash_list_esims", None), total as f64);
    for status in Status::KNOWN {
        let query = OrderQuery {
            page_size: Some(1),
            status: StatusFilter::Is(status.clone()),
            ..Default::default()
        };
        let n = api.orders(&query).await.unwrap().total;
        assert_eq!(
            value("esimdash_orders", Some(("status", status.as_str()))),
            n as f64,
            "{status}"
        );
    }
    let out = run(command(&["esims", "--attention", "--json"])).await;
    let attention = stdout_json(&out)["total"].as_u64().unwrap();
    assert_eq!(value("esimdash_esims_needing_attention", None), attention as f64);
    // The check counts the same eSIMs by the same rule.
    let out = run(command(&[
        "check",
        "attention",
        "--warning",
        "100000",
        "--critical",
        "100000",
    ]))
    .await;
    let line = stdout(&out);
    let checked: u64 = line
        .split(" - ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert_eq!(checked, attention, "{line}");
    assert!(attention > 0, "the demo has eSIMs needing attention");
    assert!(value("esimdash_last_good_read_timestamp_seconds", None) > 1.7e9);

    // Served: the second scrape within --every is the first's answer, with no request.
    let mut cmd = command(&["metrics", "--listen", "127.0.0.1:0", "--every", "60"]);
    cmd.stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stderr.take().unwrap()), &mut line).unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string();
    // As the product's client does: rustls on ring (a test run alone has installed none yet).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let first = reqwest::get(&url).await.unwrap().text().await.unwrap();
    let before = sb.requests_received();
    let second = reqwest::get(&url).await.unwrap().text().await.unwrap();
    assert_eq!(sb.requests_received(), before, "answered from the cache");
    assert_eq!(first, second);
    prometheus_parse::Scrape::parse(second.lines().map(|l| Ok(l.to_string()))).unwrap();
    let _ = child.kill();
    let _ = child.wait();
}

/// `metrics --listen` stays answerable under a flood, as the report had it: 1 100 connections
/// that each send half a request line and stall, against a server given 1 024 descriptors. A
/// real scrape after them is answered within 1 s (the oldest stalled connections make room),
/// and a stalled connection is closed once its few seconds for the request head are over.
#[tokio::test(flavor = "multi_thread")]
async fn metrics_listen_answers_a_scrape_within_a_second_while_1100_connections_stall() {
    use std::os::unix::process::CommandExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const STALLED: usize = 1100;
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let (stalled, hard) = raise_open_files(STALLED);
    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb)
        .args(["metrics", "--listen", "127.0.0.1:0", "--every", "600"])
        .stderr(std::process::Stdio::piped());
    // The server gets the 1 024 descriptors of the report, fewer than the connections.
    let server = libc::rlimit {
        rlim_cur: hard.min(1024),
        rlim_max: hard,
    };
    // SAFETY: setrlimit(2) is async-signal-safe, as a pre_exec hook must be.
    unsafe {
        cmd.pre_exec(move || match libc::setrlimit(libc::RLIMIT_NOFILE, &server) {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        });
    }
    let mut child = Stopped(cmd.spawn().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.0.stderr.take().unwrap()), &mut line).unwrap();
    let addr: std::net::SocketAddr = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .and_then(|w| w.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("{line}"))
        .parse()
        .unwrap();
    let scrape = || async move {
        let started = std::time::Instant::now();
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: esimdash\r\nConnection: close\r\n\r\n")
            .await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        Ok::<_, std::io::Error>((started.elapsed(), String::from_utf8_lossy(&answer).into_owned()))
    };
    // Filled once before the flood: what is timed below is the listener, not the API.
    let patience = std::time::Duration::from_secs(10);
    let (_, first) = tokio::time::timeout(patience, scrape()).await.unwrap().unwrap();
    assert!(
        first.starts_with("HTTP/1.1 200") && first.contains("esimdash_up 1"),
        "{first}"
    );

    let mut flood = Vec::new();
    for _ in 0..stalled {
        // A connection the server no longer takes waits in its backlog: not one of the flood.
        let Ok(Ok(mut stream)) =
            tokio::time::timeout(std::time::Duration::from_secs(2), tokio::net::TcpStream::connect(addr)).await
        else {
            break;
        };
        stream.write_all(b"GET /metr").await.unwrap();
        flood.push(stream);
    }
    let (took, answer) = tokio::time::timeout(patience, scrape())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "no answer within {patience:?} behind {} stalled connections",
                flood.len()
            )
        })
        .unwrap();
    // Straight to stderr, past the capture: the figure the issue asks for.
    let _ = writeln!(
        std::io::stderr(),
        "metrics --listen: a scrape behind {} stalled connections answered in {took:?}",
        flood.len()
    );
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.contains("esimdash_up 1"),
        "{answer}"
    );
    assert!(took < std::time::Duration::from_secs(1), "{took:?}");
    assert_eq!(flood.len(), stalled, "each stalled connection connected");

    // The newest stalled connection is still held; its time for the request head runs out.
    let mut newest = flood.pop().unwrap();
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(patience, newest.read_to_end(&mut rest)).await;
    assert!(closed.is_ok(), "a stalled connection was never closed");
}

/// A server the test started, stopped also when the test fails (else it would hold the test
/// harness's output open).
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Lets this test process open `wanted` more files: the soft limit raised towards the hard
/// one. How many it may open, 100 kept for the sandbox and the runtime (fewer than `wanted`
/// where the hard limit is lower, said on stderr), and the hard limit.
fn raise_open_files(wanted: usize) -> (usize, libc::rlim_t) {
    const HEADROOM: libc::rlim_t = 100;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit with a valid pointer to a struct of ours.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        let need = wanted as libc::rlim_t + HEADROOM;
        if limit.rlim_cur < need {
            limit.rlim_cur = need.min(limit.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        }
    }
    let can = usize::try_from(limit.rlim_cur.saturating_sub(HEADROOM)).unwrap_or(wanted);
    if can < wanted {
        let _ = writeln!(
            std::io::stderr(),
            "only {can} stalled connections: this process may open {} files",
            limit.rlim_cur
        );
    }
    (can.min(wanted), limit.rlim_max)
}

/// A bulk file is checked whole before anything is paid: every row's problem is said with its
/// line and nothing moves; a file the balance does not cover is refused; a good one is paid
/// row by row, with a result CSV beside it.
#[tokio::test(flavor = "multi_thread")]
async fn bulk_files_are_checked_whole_before_anything_is_paid() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let (iccid, offered) = topupable(&sb, &home).await;
    let orders = order_total(&sb, &home).await;
    let bulk = |file: &std::path::Path, what: &str, extra: &[&str]| {
        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb)
            .args([what, "--from"])
            .arg(file)
            .arg("--yes")
            .args(extra);
        cmd
    };

    let file = home.path().join("topups.csv");
    std::fs::write(
        &file,
        format!("iccid,slug,qty\n{iccid},{offered},1\n8944100000000099994,{offered},1\n{iccid},fr-1gb-7d,2\n{iccid},{offered},0\n"),
    )
    .unwrap();
    // Every problem at once, malformed rows and refused ones alike.
    let out = run(bulk(&file, "topup", &[])).await;
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let plan = stdout(&out);
    assert!(plan.contains("line 5: qty \"0\""), "{plan}");
    assert!(
        plan.contains("line 3: no eSIM with ICCID 8944100000000099994"),
        "{plan}"
    );
    assert!(plan.contains("line 4: \"fr-1gb-7d\" is not offered"), "{plan}");
    assert!(stderr(&out).contains("3 row(s) cannot be paid") && stderr(&out).contains("nothing was topped up"));
    // --dry-run and --result belong to a file: with a single top-up they are refused.
    assert_eq!(
        run_acme(
            &sb,
            &home,
            ["topup", "--iccid", &iccid, "--slug", &offered, "--dry-run", "--yes"]
        )
        .await
        .status
        .code(),
        Some(2),
        "a dry run never pays"
    );
    assert_eq!(order_total(&sb, &home).await, orders, "nothing paid");

    let file = home.path().join("orders.csv");
    std::fs::write(&file, "slug,qty\ngl-20gb-30d,10\ngl-20gb-30d,10\n").unwrap();
    let out = run(bulk(&file, "buy", &[])).await;
    assert_eq!(out.status.code(), Some(1));
    assert_stderr_has(&out, "short of");
    assert_eq!(order_total(&sb, &home).await, orders, "nothing paid");

    std::fs::write(&file, "qty,slug\n1,fr-1gb-7d\n2,fr-1gb-7d\n").unwrap();
    let out = run(bulk(&file, "buy", &["--dry-run", "--json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(order_total(&sb, &home).await, orders, "a dry run pays nothing");
    let out = run(bulk(&file, "buy", &["--json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let done = stdout_json(&out);
    assert_eq!(
        (done["placed"].as_u64(), done["placedNow"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(done["rows"][1]["quantity"], 2);
    assert_eq!(order_total(&sb, &home).await, orders + 2);
    let result = std::fs::read_to_string(home.path().join("orders.result.csv")).unwrap();
    let lines: Vec<&str> = result.lines().collect();
    assert_eq!(lines[0], "row,iccid,slug,quantity,outcome,order,error");
    assert!(
        lines[1].starts_with("2,,fr-1gb-7d,1,placed,") && lines[2].starts_with("3,,fr-1gb-7d,2,placed,"),
        "{result}"
    );
    // The same rows in another file: a file is its rows, so they were paid, and the plan says
    // when and from which file.
    let copy = home.path().join("orders-copy.csv");
    std::fs::copy(&file, &copy).unwrap();
    let out = run(bulk(&copy, "buy", &["--dry-run"])).await;
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("was placed on")
            && stdout(&out).contains("orders.csv (order")
            && stdout(&out).contains("add --again"),
        "{}",
        stdout(&out)
    );
    assert_eq!(order_total(&sb, &home).await, orders + 2);
}

/// `esimdash watch`: the first poll learns; a top-up and an install made at the sandbox are
/// each told once, as a JSON line and to `--exec`; the balance below the threshold once per
/// crossing; and what changed while no watch ran is told by the next one, once.
#[tokio::test(flavor = "multi_thread")]
async fn watch_tells_each_change_once_also_across_a_restart() {
    use esimdash_api::model::EsimQuery;
    use esimdash_domain::status::StatusFilter;
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let events_file = home.path().join("events.jsonl");
    let exec = format!("cat >> {}", events_file.display());
    let watch = |extra: &[&str]| {
        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb).args(["watch", "--exec", &exec]).args(extra);
        cmd
    };
    let lines = |out: &std::process::Output| -> Vec<Value> {
        stdout(out).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let out = run(watch(&["--once", "--balance-below", "100"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(lines(&out).is_empty(), "the first poll only learns: {}", stdout(&out));

    let api = acme_api(&sb);
    let unused = |n: usize| {
        let api = api.clone();
        async move {
            let query = EsimQuery {
                page_size: Some(100),
                status: StatusFilter::Is(esimdash_domain::status::Status::GotResource),
                ..Default::default()
            };
            let page = api.esims(&query).await.unwrap().esims;
            page.into_iter()
                .filter(|e| e.raw_order_json.smdp_status == "RELEASED")
                .nth(n)
                .unwrap()
                .raw_order_json
                .iccid
                .to_string()
        }
    };
    let installed = unused(0).await;
    assert!(sb.install(&installed));
    let (iccid, offered) = topupable(&sb, &home).await;
    let order = stdout_json(
        &run_acme(
            &sb,
            &home,
            ["topup", "--iccid", &iccid, "--slug", &offered, "--yes", "--json"],
        )
        .await,
    )["order"]["providerOrderNo"]
        .as_str()
        .unwrap()
        .to_string();

    let out = run(watch(&["--once", "--balance-below", "1000"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let told = lines(&out);
    assert_eq!(told.len(), 3, "{}", stdout(&out));
    let event = |kind: &str| {
        told.iter()
            .find(|e| e["event"] == kind)
            .cloned()
            .unwrap_or_else(|| panic!("{kind}: {told:?}"))
    };
    assert_eq!(event("balance_below")["thresholdUsd"], "1000.00");
    let topup = event("new_order");
    assert_eq!(
        (topup["orderNo"].as_str(), topup["iccid"].as_str()),
        (Some(order.as_str()), Some(iccid.as_str()))
    );
    let install = event("esim_changed");
    assert_eq!(install["iccid"], installed.as_str());
    assert_eq!(
        (install["what"].as_str(), install["smdpTo"].as_str()),
        (Some("installed"), Some("ENABLED"))
    );
    let executed: Vec<Value> = std::fs::read_to_string(&events_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(executed, told, "--exec ran once per change, with its line");

    let out = run(watch(&["--once", "--balance-below", "1000"])).await;
    assert!(lines(&out).is_empty(), "each told once: {}", stdout(&out));

    // While no watch runs, another eSIM is installed; a watch started later tells it, once.
    let later = unused(0).await;
    assert!(sb.install(&later));
    let mut child = watch(&["--interval", "10s", "--balance-below", "1000"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // What the watch's memory holds but the eSIMs: its time changes with each poll kept.
    let memory = || {
        let dir = home.path().join("state/esimdash/watch");
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "sqlite3"));
        esimdash_front::watch::memory::Memory::open(&file.unwrap()).unwrap().1
    };
    let before = memory();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
    // Told, then remembered: stopped once it is (a kill in between tells it again, never loses it).
    let started = std::time::Instant::now();
    while memory() == before {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the poll was never saved"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    let told: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (told["event"].as_str(), told["iccid"].as_str()),
        (Some("esim_changed"), Some(later.as_str()))
    );
    let out = run(watch(&["--once", "--balance-below", "1000"])).await;
    assert!(lines(&out).is_empty(), "told once: {}", stdout(&out));
}

/// `watch --exec` hands each change over at least once: a hook that fails the first time is
/// handed the same change again at the next poll, with the same id, and the failure is said
/// on stderr naming the id, the watch going on; once taken, it is not handed over again.
#[tokio::test(flavor = "multi_thread")]
async fn watch_hands_a_change_the_hook_failed_to_take_over_again_with_the_same_id() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let received = home.path().join("received.jsonl");
    let failed = home.path().join("failed-once");
    let flaky = format!(
        "cat >> {received}; if [ ! -e {failed} ]; then touch {failed}; exit 7; fi",
        received = received.display(),
        failed = failed.display()
    );
    let watch = || {
        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb).args(["watch", "--once", "--exec", &flaky]);
        cmd
    };
    let out = run(watch()).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(sb.install(&released_iccid(&sb).await));

    let out = run(watch()).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "a failed hand-over does not stop the watch: {}",
        stderr(&out)
    );
    let told: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let id = told["id"].as_str().unwrap().to_string();
    assert_eq!(told["event"], "esim_changed");
    assert_stderr_has(&out, &format!("did not take change {id}: it ended with exit status: 7"));

    let out = run(watch()).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "told once on stdout");
    assert!(!stderr(&out).contains("did not take"), "{}", stderr(&out));
    let run_again = run(watch()).await;
    assert_eq!(stdout(&run_again), "");
    let handed: Vec<Value> = std::fs::read_to_string(&received)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        handed,
        [told.clone(), told],
        "the same change, with the same id, twice; then no more"
    );
}

/// A hook that neither reads its stdin nor ends, handed a change of 200 KB (more than a pipe
/// holds, so the writing itself blocks): stopped at --exec-timeout, the change kept for the
/// next poll. The sandbox makes no change that large: a proxy pads the orders' slugs.
#[tokio::test(flavor = "multi_thread")]
async fn watch_stops_a_hook_that_does_not_read_a_large_change_at_its_time_limit() {
    const PAD: usize = 200_000;
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let padded = format!("{}/api/v1", slug_padding_proxy(sb.origin(), PAD).await);
    let watch = |exec: &str, extra: &[&str]| {
        let mut cmd = esimdash(&home);
        acme_at(&mut cmd, &padded)
            .args(["watch", "--once", "--exec", exec])
            .args(extra);
        cmd
    };
    let out = run(watch("cat", &[])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (iccid, offered) = topupable(&sb, &home).await;
    assert_eq!(
        run_acme(&sb, &home, ["topup", "--iccid", &iccid, "--slug", &offered, "--yes"])
            .await
            .status
            .code(),
        Some(0)
    );

    let started = std::time::Instant::now();
    let out = run(watch("sleep 30", &["--exec-timeout", "2s"])).await;
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let told: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(told["event"], "new_order");
    assert_eq!(told["slug"].as_str().map(str::len), Some(PAD));
    let id = told["id"].as_str().unwrap();
    assert_stderr_has(
        &out,
        &format!("did not take change {id}: it was stopped at the time limit, 2 s"),
    );
    let _ = writeln!(
        std::io::stderr(),
        "watch --exec: a 200 KB change to a hook that does not read, cut in {took:?}"
    );
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");

    let received = home.path().join("received.jsonl");
    let out = run(watch(&format!("cat > {}", received.display()), &[])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let handed: Value = serde_json::from_str(&std::fs::read_to_string(&received).unwrap()).unwrap();
    assert_eq!(handed, told, "handed over again, whole, at the next poll");
}

/// The ICCID of one of Acme's eSIMs not yet installed, to install at the sandbox.
async fn released_iccid(sb: &RunningSandbox) -> String {
    let query = esimdash_api::model::EsimQuery {
        page_size: Some(100),
        status: esimdash_domain::status::StatusFilter::Is(esimdash_domain::status::Status::GotResource),
        ..Default::default()
    };
    let page = acme_api(sb).esims(&query).await.unwrap().esims;
    page.into_iter()
        .find(|e| e.raw_order_json.smdp_status == "RELEASED")
        .unwrap()
        .raw_order_json
        .iccid
        .to_string()
}

/// A proxy in front of `upstream` that makes the slug of the first order of every list of
/// orders it passes on `pad` bytes long (one only: a page of such orders is more than a
/// client reads); its origin.
async fn slug_padding_proxy(upstream: String, pad: usize) -> String {
    fn padded(value: &mut Value, pad: usize) {
        match value {
            Value::Object(fields) => {
                if let Some(Value::String(slug)) = fields
                    .get_mut("orders")
                    .and_then(|orders| orders.get_mut(0))
                    .and_then(|first| first.get_mut("slug"))
                {
                    *slug = "x".repeat(pad);
                    return;
                }
                fields.values_mut().for_each(|field| padded(field, pad));
            }
            Value::Array(items) => items.iter_mut().for_each(|item| padded(item, pad)),
            _ => {}
        }
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let forward = move |request: axum::extract::Request| {
        let (client, upstream) = (client.clone(), upstream.clone());
        async move {
            let (parts, body) = request.into_parts();
            let body = axum::body::to_bytes(body, 1 << 20).await.unwrap();
            let mut headers = parts.headers.clone();
            headers.remove(axum::http::header::HOST);
            let answer = client
                .request(parts.method, format!("{upstream}{}", parts.uri))
                .headers(headers)
                .body(body)
                .send()
                .await
                .unwrap();
            let status = answer.status();
            let bytes = answer.bytes().await.unwrap();
            let body = match serde_json::from_slice::<Value>(&bytes) {
                Ok(mut json) => {
                    padded(&mut json, pad);
                    serde_json::to_vec(&json).unwrap()
                }
                Err(_) => bytes.to_vec(),
            };
            (status, [(axum::http::header::CONTENT_TYPE, "application/json")], body)
        }
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, axum::Router::new().fallback(forward)).await });
    origin
}

/// How the operations commands end, as the tools around them read it: a check's usage
/// mistake is UNKNOWN (3) on its one line; a scrape that could not reach the API prints
/// `esimdash_up 0` and exits 1 (so `metrics > f && mv` keeps the last good file); a watch
/// stopped by SIGTERM (systemd) exits 0.
#[tokio::test(flavor = "multi_thread")]
async fn operations_commands_end_as_their_tools_expect() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let out = run_acme(&sb, &home, ["check", "balance", "--warning", "10"]).await;
    assert_check_unknown(&out);
    assert_stdout_has(&out, "--critical");

    let nobody = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let gone = format!("http://{}/api/v1", nobody.local_addr().unwrap());
    drop(nobody);
    let mut cmd = esimdash(&home);
    acme_at(&mut cmd, &gone).args(["metrics"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_stdout_has(&out, "esimdash_up 0");
    assert_stdout_has(&out, "esimdash_api_errors_total{kind=\"network\"}");

    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb)
        .args(["watch", "--interval", "10s"])
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut said = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stderr.take().unwrap()), &mut said).unwrap();
    assert!(said.contains("watching every 10 s"), "{said}");
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "a stop is how a watch ends");
}

/// The ICCID of one of Acme's eSIMs deleted from the phone (its status may still say it is in
/// use: the SM-DP+ status tells), as the demo has.
async fn deleted_iccid(sb: &RunningSandbox, home: &tempfile::TempDir) -> String {
    let all = stdout_json(&run_acme(sb, home, ["esims", "--all", "--json"]).await);
    all["esims"]
        .as_array()
        .unwrap()
        .iter()
        // Each eSIM carries its state, the words every view shows; this one's SM-DP+ says so.
        .find(|e| e["state"] == "deleted" && e["rawOrderJson"]["smdpStatus"] == "DELETED")
        .and_then(|e| e["rawOrderJson"]["iccid"].as_str())
        .expect("the demo has an eSIM deleted from a phone")
        .to_string()
}

/// No money to an eSIM that cannot use it: `topup` refuses with exit 2, naming the state, and
/// `"moneyMoved": false`; the offers say why; a bulk file names it before paying anything.
/// Counted at the server: no order.
#[tokio::test(flavor = "multi_thread")]
async fn no_top_up_is_paid_for_an_esim_deleted_from_the_phone() {
    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let iccid = deleted_iccid(&sb, &home).await;
    let orders = order_total(&sb, &home).await;

    let out = run_acme(
        &sb,
        &home,
        [
            "topup",
            "--iccid",
            &iccid,
            "--slug",
            "topup-jo-1gb-7d",
            "--yes",
            "--json",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["kind"], "cannot_take_data", "{err}");
    assert_eq!(err["error"]["state"], "deleted", "{err}");
    assert_eq!(err["error"]["moneyMoved"], false, "{err}");
    let message = err["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("deleted from the phone") && message.contains("new eSIM"),
        "{message}"
    );

    let out = run_acme(&sb, &home, ["topup", "--iccid", &iccid]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_stdout_has(&out, "No top-up can be paid");

    let (payable, slug) = topupable(&sb, &home).await;
    let file = home.path().join("two.csv");
    std::fs::write(&file, format!("iccid,slug,qty\n{payable},{slug},1\n{iccid},{slug},1\n")).unwrap();
    let out = run_acme(&sb, &home, ["topup", "--from", file.to_str().unwrap(), "--yes"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(said.contains(&iccid), "{said}");
    assert!(
        said.contains("line 3: no top-up: it was deleted from the phone"),
        "{said}"
    );
    assert_eq!(order_total(&sb, &home).await, orders, "nothing was paid");
}

/// The table of exit codes in docs/commands.md, row by row: each code it lists comes out of a real
/// invocation that the row describes (against a sandbox where the API is involved), and the
/// table lists no code this test cannot produce. A set but empty secret key is a mistake in the
/// configuration (2), said before any request.
#[tokio::test(flavor = "multi_thread")]
async fn every_exit_code_in_the_docs_table_is_what_the_binary_does() {
    let page =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands.md")).unwrap();
    let table = page
        .split_once("Exit codes:")
        .and_then(|(_, rest)| rest.split("\n\n").find(|block| block.trim_start().starts_with('|')))
        .expect("docs/commands.md has the table of exit codes");
    let codes: Vec<i32> = table
        .lines()
        .filter_map(|row| row.trim_start_matches('|').split('|').next()?.trim().parse().ok())
        .collect();

    let (sb, home) = (sandbox().await, tempfile::tempdir().unwrap());
    let limited = spawn(
        &SandboxConfig {
            rate_limit: 1,
            ..SandboxConfig::default()
        },
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    let without_lookup = spawn(
        &SandboxConfig {
            iccid_lookup: false,
            ..SandboxConfig::default()
        },
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // `--help` lists the same codes, so that no code is known from one place alone.
    let help = stdout(&esimdash(&home).arg("--help").output().unwrap());
    for code in &codes {
        assert!(
            help.contains(&format!("\n  {code}  ")),
            "--help does not list exit code {code}:\n{help}"
        );
    }
    for code in codes {
        // (what the row says, the invocation) for each cause of the row tried here.
        let mut cases: Vec<(&str, Command)> = Vec::new();
        let mut cmd = esimdash(&home);
        match code {
            0 => {
                acme(&mut cmd, &sb).arg("balance");
                cases.push(("done", cmd));
            }
            1 => {
                acme(&mut cmd, &sb).args(["plans", "--slug", "no-such-plan"]);
                cases.push(("the API refused", cmd));
                let mut cmd = esimdash(&home);
                acme(&mut cmd, &sb).args(["esims", "--iccid", "8944100000000099994"]);
                cases.push(("no such eSIM", cmd));
            }
            2 => {
                acme(&mut cmd, &sb).args(["balance", "--no-such-option"]);
                cases.push(("usage", cmd));
                let mut cmd = esimdash(&home);
                acme(&mut cmd, &sb).env("ESIMDASH_SECRET_KEY", "").arg("balance");
                cases.push(("configuration: an empty secret key", cmd));
                let mut cmd = esimdash(&home);
                acme(&mut cmd, &sb).env("ESIMDASH_ACCESS_CODE", "").arg("balance");
                cases.push(("configuration: an empty access code", cmd));
                let mut cmd = esimdash(&home);
                acme(&mut cmd, &sb)
                    .env("ESIMDASH_BASE_URL", "http://example.com/api/v1")
                    .arg("balance");
                cases.push(("configuration: plain http to another host", cmd));
                let mut cmd = esimdash(&home);
                acme(&mut cmd, &sb).args(["--read-only", "buy", "--slug", "fr-1gb-7d", "--yes"]);
                cases.push(("a write in a read-only session", cmd));
                let dead = deleted_iccid(&sb, &home).await;
                let mut cmd = esimdash(&home);
                acme(&mut cmd, &sb).args(["topup", "--iccid", &dead, "--slug", "topup-jo-1gb-7d", "--yes"]);
                cases.push(("a top-up for an eSIM that cannot take data", cmd));
            }
            3 => {
                acme(&mut cmd, &sb)
                    .env("ESIMDASH_ACCESS_CODE", "ak_demo_revoked")
                    .env("ESIMDASH_SECRET_KEY", "sk_demo_revoked")
                    .arg("balance");
                cases.push(("credentials refused", cmd));
            }
            4 => {
                // The sandbox's budget is one request a minute, spent by another program (an
                // esimdash of another machine: another state): this one is answered 429.
                let mut first = esimdash(&home);
                let elsewhere = home.path().join("another-machine");
                acme(&mut first, &limited)
                    .env("XDG_STATE_HOME", &elsewhere)
                    .arg("balance");
                assert_eq!(run(first).await.status.code(), Some(0), "the one request of the minute");
                let here = home.path().join("state-rate-limited");
                acme(&mut cmd, &limited).env("XDG_STATE_HOME", here).arg("balance");
                cases.push(("rate limited", cmd));
            }
            5 => {
                acme(&mut cmd, &sb)
                    .env("ESIMDASH_BASE_URL", format!("http://127.0.0.1:{closed}/api/v1"))
                    .arg("balance");
                cases.push(("network error", cmd));
            }
            6 => {
                // No lookup, and a key of two requests a minute: the ignored lookup (page 1)
                // and one page more, short of the whole list.
                // Another sandbox with the same demo key: its budget kept apart from the others'.
                acme(&mut cmd, &without_lookup)
                    .env("ESIMDASH_RATE_LIMIT", "2")
                    .env("XDG_STATE_HOME", home.path().join("state-of-two"))
                    .args(["esims", "--iccid", "8944100000000099994"]);
                cases.push(("not found in the pages read, not every page read", cmd));
            }
            7 => {
                // The price changes between the quote and the debit.
                sb.reprice_next_payment(rust_decimal::Decimal::new(9999, 2));
                acme(&mut cmd, &sb).args(["buy", "--slug", "fr-1gb-7d", "--yes", "--again"]);
                cases.push(("charged another total than confirmed", cmd));
            }
            other => panic!("docs/commands.md lists exit code {other}, which this test has no invocation for"),
        }
        for (what, cmd) in cases {
            let out = run(cmd).await;
            assert_eq!(out.status.code(), Some(code), "{what}: {}", stderr(&out));
            if code != 0 {
                assert!(!stderr(&out).trim().is_empty(), "{what}: the message says why");
            }
        }
    }
    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb).env("ESIMDASH_SECRET_KEY", "").arg("balance");
    let said = stderr(&run(cmd).await);
    assert!(
        said.contains("secret key is empty") && said.contains("ESIMDASH_SECRET_KEY"),
        "{said}"
    );
}

/// The bulk examples of docs/operations.md (assets/examples/) with the demo's eSIMs and plans: each of its
/// `--demo … --dry-run` lines, run as written from a clone, plans every row with nothing
/// refused; then each file is paid whole against the same seeded sandbox, one order per row at
/// the server. Every example file is on the page, and every file it names is there.
#[tokio::test(flavor = "multi_thread")]
async fn the_bulk_examples_of_the_docs_run_as_written_on_the_demo() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/operations.md")).unwrap();
    let lines: Vec<Vec<&str>> = page
        .lines()
        .filter(|l| l.starts_with("esimdash ") && l.contains(" --from assets/examples/") && l.contains(" --dry-run"))
        .map(|l| l.split('#').next().unwrap_or_default().split_whitespace().collect())
        .collect();
    let named: std::collections::BTreeSet<&str> = lines
        .iter()
        .filter_map(|args| args.iter().find(|a| a.starts_with("assets/examples/")).copied())
        .collect();
    // The example files, not what running them as documented leaves beside them (a result
    // file each, which git ignores).
    let files: std::collections::BTreeSet<String> = std::fs::read_dir(root.join("assets/examples"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with(".result.csv"))
        .map(|name| format!("assets/examples/{name}"))
        .collect();
    assert_eq!(
        named
            .iter()
            .map(|n| n.to_string())
            .collect::<std::collections::BTreeSet<_>>(),
        files,
        "docs/operations.md tries every example file, and only those"
    );

    for args in &lines {
        let home = tempfile::tempdir().unwrap();
        let mut cmd = esimdash(&home);
        cmd.current_dir(root).args(&args[1..]);
        let out = run(cmd).await;
        let plan = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {plan}{}", stderr(&out));
        let rows = std::fs::read_to_string(root.join(args.iter().find(|a| a.starts_with("assets/")).unwrap()))
            .unwrap()
            .lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .count();
        assert!(
            plan.contains(&format!("To pay: {rows} of {rows} row(s)")) && plan.contains("nothing was paid"),
            "{args:?}: every row planned, nothing paid:\n{plan}"
        );

        // Paid for real, at a sandbox seeded as the demo's; the result goes to the test's folder.
        let sb = sandbox().await;
        let orders = order_total(&sb, &home).await;
        let result = home.path().join("result.csv");
        let mut cmd = esimdash(&home);
        acme(&mut cmd, &sb)
            .current_dir(root)
            .args(args[1..].iter().filter(|a| !matches!(**a, "--demo" | "--dry-run")))
            .arg("--yes")
            .arg("--result")
            .arg(&result);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}{}", stdout(&out), stderr(&out));
        let written = std::fs::read_to_string(&result).unwrap();
        assert_eq!(written.matches(",placed,").count(), rows, "{written}");
        assert_eq!(order_total(&sb, &home).await, orders + rows as u64, "one order per row");
    }
}

/// Each `--demo` is a sandbox of its own, its money new: the docs' bulk example paid in one
/// demo pays again in the next (its guards know the account on that sandbox alone; the same
/// file twice in one real account is refused, `tests/edges/bulk.rs`).
#[tokio::test(flavor = "multi_thread")]
async fn each_demo_is_an_account_of_its_own() {
    let home = tempfile::tempdir().unwrap();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/topup.csv");
    for run_ in 0..2 {
        let mut cmd = esimdash(&home);
        cmd.args(["topup", "--demo", "--from"])
            .arg(&file)
            .args(["--yes", "--result"])
            .arg(home.path().join(format!("result-{run_}.csv")));
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(0), "demo {run_}: {}", stderr(&out));
    }
}

/// `gateway serve --demo`, as its help offers: a sandbox in the process, demo agents with their
/// tokens printed, and an agent served through it (a support seat reads, a viewer's payment is
/// refused); a daily cap on a viewer is refused when the agent is added.
#[tokio::test(flavor = "multi_thread")]
async fn gateway_serve_demo_serves_its_demo_agents() {
    use std::io::BufRead;
    let home = tempfile::tempdir().unwrap();
    let mut cmd = esimdash(&home);
    cmd.args(["gateway", "serve", "--demo", "--listen", "127.0.0.1:0"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let out = child.stdout.take().unwrap();
    let banner = tokio::task::spawn_blocking(move || {
        let mut lines = Vec::new();
        for line in std::io::BufReader::new(out).lines() {
            let line = line.unwrap();
            let done = line.contains("to agents");
            lines.push(line);
            if done {
                break;
            }
        }
        lines
    })
    .await
    .unwrap();
    // Each agent: a line naming it, its role and cap, then its access code and secret key.
    assert!(
        banner.iter().any(|l| l.contains("ana (support, 10.00 USD a day)")),
        "{banner:?}"
    );
    let seat = |name: &str| {
        let at = banner.iter().position(|l| l.trim_start().starts_with(name)).unwrap();
        let value = |key: &str| {
            banner[at + 1..at + 3]
                .iter()
                .find_map(|l| l.trim().strip_prefix(key))
                .unwrap()
                .to_string()
        };
        (value("ESIMDASH_ACCESS_CODE="), value("ESIMDASH_SECRET_KEY="))
    };
    let url = banner
        .last()
        .unwrap()
        .split_whitespace()
        .find(|w| w.starts_with("http"))
        .unwrap()
        .to_string();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let (code, secret) = seat("ana");
    let balance = http
        .get(format!("{url}/reseller/balance"))
        .header("x-access-code", code)
        .header("x-secret-key", secret)
        .send()
        .await
        .unwrap();
    assert_eq!(balance.status(), 200);
    let body: Value = serde_json::from_str(&balance.text().await.unwrap()).unwrap();
    assert_eq!(body["balanceUsd"], "250.00");
    let (code, secret) = seat("vic");
    let paid = http
        .post(format!("{url}/portal/orders"))
        .header("x-access-code", code)
        .header("x-secret-key", secret)
        .header("content-type", "application/json")
        .body(r#"{"slug":"jp-3gb-15d","qty":1}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(paid.status(), 403, "a viewer pays for nothing");
    let _ = child.kill();
    let _ = child.wait();

    let store = home.path().join("gw.db");
    let mut cmd = esimdash(&home);
    cmd.args([
        "gateway",
        "agent",
        "add",
        "v",
        "--role",
        "viewer",
        "--daily-cap",
        "10",
        "--store",
    ])
    .arg(&store);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("a viewer pays for nothing"), "{}", stderr(&out));
}

/// `/metrics` asks no token and names agents and their spend: an address that is not loopback
/// is refused at start (exit 2), before any demo agent is made and printed.
#[tokio::test(flavor = "multi_thread")]
async fn gateway_metrics_stay_on_loopback_unless_said_public() {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = esimdash(&home);
    cmd.args([
        "gateway",
        "serve",
        "--demo",
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        "0.0.0.0:0",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--metrics-public"), "{}", stderr(&out));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        !printed.contains("ESIMDASH_SECRET_KEY"),
        "no demo agent made first: {printed}"
    );
}

/// A config file that is a FIFO is refused at once (never waited on), and one larger than any
/// configuration before the TOML reader sees it: exit 2, the file named.
#[tokio::test(flavor = "multi_thread")]
async fn a_config_file_that_is_a_fifo_or_huge_is_refused_at_once() {
    let home = tempfile::tempdir().unwrap();
    let fifo = home.path().join("fifo.toml");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    let huge = home.path().join("huge.toml");
    std::fs::write(&huge, format!("# {}\n", "x".repeat(2 * 1024 * 1024))).unwrap();
    let mut cases = vec![(huge, "larger than 1024 KiB")];
    if made.is_ok_and(|s| s.success()) {
        cases.push((fifo, "not a regular file"));
    }
    for (path, said) in cases {
        let mut cmd = esimdash(&home);
        cmd.arg("--config").arg(&path).arg("balance");
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(said), "{}", stderr(&out));
    }
}

/// A bulk file's problems are listed in its line order, whether reading the file found them
/// (lines 2, 3, 5) or checking the rows with the API did (line 4: an eSIM not this account's).
#[tokio::test(flavor = "multi_thread")]
async fn a_bulk_files_problems_come_in_line_order() {
    let sb = sandbox().await;
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("rows.csv");
    std::fs::write(
        &file,
        "iccid,slug,qty\n12,jp-3gb-15d,1\n8944100000012841011,,1\n8949999999999999994,jp-3gb-15d,1\n8944100000012841011,jp-3gb-15d,11\n",
    )
    .unwrap();
    let mut cmd = esimdash(&home);
    acme(&mut cmd, &sb).args(["topup", "--dry-run", "--from"]).arg(&file);
    let out = run(cmd).await;
    let text = stdout(&out);
    let lines: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("line ")?.split(':').next()?.parse().ok())
        .collect();
    assert_eq!(lines, [2, 3, 4, 5], "{text}{}", stderr(&out));
}

/// A gateway told to listen where another program does is a set-up to mend: exit 2, the
/// address named.
#[tokio::test(flavor = "multi_thread")]
async fn a_gateway_port_in_use_is_a_setup_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let home = tempfile::tempdir().unwrap();
    let mut cmd = esimdash(&home);
    cmd.args(["gateway", "serve", "--demo", "--listen", &addr])
        .stdin(std::process::Stdio::null());
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("cannot listen on {addr}")),
        "{}",
        stderr(&out)
    );
}
