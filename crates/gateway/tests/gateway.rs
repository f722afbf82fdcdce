//! The gateway over real HTTP, between agents (the client the dashboard uses, with an agent's
//! token) and the sandbox: roles, revocation, caps under concurrency through two replicas on
//! one store (SQLite here; Postgres too where `ESIMDASH_TEST_POSTGRES` names a server), an
//! agent's key and the rule against repeats across agents. Money is counted at the sandbox.

use esimdash_api::model::{EsimQuery, OrderQuery};
use esimdash_api::relay::ESIMS;
use esimdash_api::relay::Relayed;
use esimdash_api::{BaseUrl, Client, ClientOptions, Credentials, PLACE_ORDER, TOPUP};
use esimdash_domain::iccid::Iccid;
use esimdash_gateway::agents::{Agent, Role, Token, hash_secret};
use esimdash_gateway::{Running, Settings, Store};
use esimdash_sandbox::{RunningSandbox, SandboxConfig};
use rust_decimal::Decimal;
use std::str::FromStr;

const RESELLER_SECRET: &str = "sk_demo_acme";

fn options() -> ClientOptions {
    ClientOptions {
        rate_limit: 1_000_000,
        retries: 0,
        ..ClientOptions::default()
    }
}

fn client(base: &str, access_code: &str, secret: &str) -> Client {
    Client::new(
        BaseUrl::parse(base).unwrap(),
        &Credentials::pair(access_code, secret),
        options(),
    )
    .unwrap()
}

mod lying_api;
#[path = "../../../tests/support/skip.rs"]
mod skip;

use lying_api::{Lie, LyingApi};

struct Team {
    sandbox: RunningSandbox,
    /// What the gateways speak to: the sandbox, or a lying API in front of it.
    upstream: String,
    lying: Option<LyingApi>,
    store: String,
    team_cap: Option<Decimal>,
    gateways: Vec<Running>,
    _dir: tempfile::TempDir,
}

impl Team {
    /// A sandbox with a deep wallet, and `replicas` gateways on one store (a fresh SQLite file
    /// unless `store` names one).
    async fn start(replicas: usize, store: Option<String>, team_cap: Option<&str>) -> Team {
        Self::start_behind(replicas, store, team_cap, false).await
    }

    /// `replicas` gateways in front of a sandbox of `config` without the lookup by ICCID (the
    /// rate limit lifted).
    async fn without_lookup(replicas: usize, config: SandboxConfig) -> Team {
        let mut team = Team::start(0, None, None).await;
        let config = SandboxConfig {
            rate_limit: 1_000_000,
            iccid_lookup: false,
            ..config
        };
        team.sandbox = esimdash_sandbox::spawn(&config, ([127, 0, 0, 1], 0).into())
            .await
            .unwrap();
        team.upstream = team.sandbox.base_url();
        for _ in 0..replicas {
            team.add_replica().await;
        }
        team
    }

    /// A team whose gateway speaks to a lying API in front of the sandbox.
    async fn lied_to(replicas: usize) -> Team {
        Self::start_behind(replicas, None, None, true).await
    }

    async fn start_behind(replicas: usize, store: Option<String>, team_cap: Option<&str>, lying: bool) -> Team {
        let sandbox = esimdash_sandbox::spawn(
            &SandboxConfig {
                rate_limit: 1_000_000,
                balance: Some(Decimal::from(10_000)),
                ..SandboxConfig::default()
            },
            ([127, 0, 0, 1], 0).into(),
        )
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store = store.unwrap_or_else(|| dir.path().join("gateway.db").display().to_string());
        let lying = match lying {
            true => Some(LyingApi::start(sandbox.origin()).await),
            false => None,
        };
        let mut team = Team {
            upstream: lying.as_ref().map_or_else(|| sandbox.base_url(), |l| l.base.clone()),
            lying,
            sandbox,
            store,
            team_cap: team_cap.map(|c| Decimal::from_str(c).unwrap()),
            gateways: Vec::new(),
            _dir: dir,
        };
        for _ in 0..replicas {
            team.add_replica().await;
        }
        team
    }

    /// One more gateway on the team's store, in front of its sandbox.
    async fn add_replica(&mut self) {
        let settings = Settings {
            listen: ([127, 0, 0, 1], 0).into(),
            store: self.store.clone(),
            team_daily_cap: self.team_cap,
            support_can_buy: false,
            allow_http: false,
            index_dir: Some(self._dir.path().join(format!("index-{}", self.gateways.len()))),
            account: esimdash_api::Credentials::pair("ak_demo_acme", RESELLER_SECRET).account(),
            rate_limit: 1_000_000,
            read_fresh: std::time::Duration::from_secs(5),
            tls: None,
        };
        let upstream = client(&self.upstream, "ak_demo_acme", RESELLER_SECRET);
        self.gateways
            .push(esimdash_gateway::start(settings, upstream).await.unwrap());
    }

    async fn agent(&self, name: &str, role: Role, cap: Option<&str>) -> Token {
        let token = Token::new().unwrap();
        let store = Store::open(&self.store).await.unwrap();
        store
            .add_agent(Agent {
                name: name.to_string(),
                access_code: token.access_code.clone(),
                secret_hash: hash_secret(&token.secret_key),
                role,
                daily_cap: cap.map(|c| Decimal::from_str(c).unwrap()),
                created_at: 0,
                revoked_at: None,
            })
            .await
            .unwrap();
        token
    }

    /// The agent's client, through replica `replica`.
    fn seat(&self, token: &Token, replica: usize) -> Client {
        let base = format!("http://{}/api/v1", self.gateways[replica].addr);
        client(&base, &token.access_code, &token.secret_key)
    }

    /// The reseller's own view, straight at the sandbox.
    fn reseller(&self) -> Client {
        client(&self.sandbox.base_url(), "ak_demo_acme", RESELLER_SECRET)
    }

    async fn orders(&self) -> u64 {
        let query = OrderQuery {
            page_size: Some(1),
            ..OrderQuery::default()
        };
        self.reseller().orders(&query).await.unwrap().total
    }

    /// Up to `n` eSIMs that take top-ups, each with the cheapest plan it is offered.
    async fn topup_targets(&self, n: usize) -> Vec<(Iccid, String, Decimal)> {
        let reseller = self.reseller();
        let mut targets = Vec::new();
        for page in 1..=4 {
            let query = EsimQuery {
                page: Some(page),
                page_size: Some(100),
                ..EsimQuery::default()
            };
            for esim in reseller.esims(&query).await.unwrap().esims {
                let esimdash_domain::iccid::EsimIccid::Valid(iccid) = esim.raw_order_json.iccid else {
                    continue;
                };
                let plans = reseller.topup_plans(&iccid).await.unwrap();
                if let Some(plan) = plans.iter().min_by_key(|p| p.sell_price()) {
                    targets.push((iccid, plan.slug.clone(), plan.sell_price().unwrap()));
                    if targets.len() == n {
                        return targets;
                    }
                }
            }
        }
        assert!(!targets.is_empty(), "no eSIM of the sandbox takes a top-up");
        targets
    }

    async fn topup_target(&self) -> (Iccid, String, Decimal) {
        self.topup_targets(1).await.remove(0)
    }
}

fn topup_body(iccid: &Iccid, slug: &str) -> Vec<u8> {
    serde_json::json!({ "iccid": iccid.as_str(), "slug": slug })
        .to_string()
        .into_bytes()
}

/// A top-up of `iccid` with `slug` sent through `seat` under idempotency key `key`: the answer.
async fn topup_through(seat: &Client, iccid: &Iccid, slug: &str, key: &str) -> Relayed {
    seat.relay(TOPUP, None, Some(topup_body(iccid, slug)), Some(key))
        .await
        .unwrap()
}

fn json(answer: &Relayed) -> serde_json::Value {
    serde_json::from_slice(&answer.body).unwrap_or_default()
}

fn holds_no_secret(answer: &Relayed) {
    assert!(
        !String::from_utf8_lossy(&answer.body).contains(RESELLER_SECRET),
        "an answer carried the reseller's secret"
    );
}

#[tokio::test]
async fn a_viewer_reads_but_its_top_up_is_refused_and_nothing_is_ordered() {
    let team = Team::start(1, None, None).await;
    let viewer = team.seat(&team.agent("vic", Role::VIEWER, None).await, 0);
    let (iccid, slug, _) = team.topup_target().await;
    assert!(viewer.balance().await.is_ok(), "a viewer reads");
    let before = team.orders().await;
    let answer = topup_through(&viewer, &iccid, &slug, "k1").await;
    assert_eq!(answer.status, 403, "{}", json(&answer));
    assert!(json(&answer)["error"].as_str().unwrap().contains("viewer"));
    let order = viewer
        .relay(PLACE_ORDER, None, Some(br#"{"slug":"fr-5gb-30d"}"#.to_vec()), None)
        .await
        .unwrap();
    assert_eq!(order.status, 403);
    assert_eq!(team.orders().await, before, "the sandbox took no order");
    holds_no_secret(&answer);
}

#[tokio::test]
async fn a_revoked_token_is_refused_at_its_next_request_and_a_wrong_one_never_passes() {
    let team = Team::start(1, None, None).await;
    let token = team.agent("ana", Role::SUPPORT, None).await;
    let seat = team.seat(&token, 0);
    assert!(seat.balance().await.is_ok());
    let store = Store::open(&team.store).await.unwrap();
    assert!(store.revoke("ana", 1).await.unwrap());
    let refused = seat.balance().await.unwrap_err();
    assert_eq!(refused.status(), Some(401), "{refused}");
    let wrong = team.seat(
        &Token {
            access_code: token.access_code.clone(),
            secret_key: "gs_guess".into(),
        },
        0,
    );
    assert_eq!(wrong.balance().await.unwrap_err().status(), Some(401));
    // The reseller's own key is no agent's token: the gateway is no way around its agents.
    let reseller_through = team.seat(
        &Token {
            access_code: "ak_demo_acme".into(),
            secret_key: RESELLER_SECRET.into(),
        },
        0,
    );
    assert_eq!(reseller_through.balance().await.unwrap_err().status(), Some(401));
}

/// 20 agents, each paying top-ups of three eSIMs at once through two replicas of one store,
/// against a team cap of 10.00: never more is charged, every payment refused would have
/// passed the cap, and what the sandbox charged is what the journal says.
async fn caps_hold_under_concurrency(store: Option<String>) {
    let team = Team::start(2, store, Some("10.00")).await;
    let targets = team.topup_targets(60).await;
    let balance_before = team.reseller().balance().await.unwrap();
    let mut seats = Vec::new();
    for n in 0..20 {
        let token = team.agent(&format!("agent{n}"), Role::SUPPORT, Some("10.00")).await;
        seats.push(team.seat(&token, n % 2));
    }
    let mut payments = tokio::task::JoinSet::new();
    for (k, (iccid, slug, price)) in targets.iter().cycle().take(60).enumerate() {
        let (seat, body, price) = (seats[k % 20].clone(), topup_body(iccid, slug), *price);
        payments.spawn(async move {
            let answer = seat
                .relay(TOPUP, None, Some(body), Some(&format!("pay-{k}")))
                .await
                .unwrap();
            holds_no_secret(&answer);
            (answer.status, price)
        });
    }
    let answers = payments.join_all().await;
    let charged = balance_before - team.reseller().balance().await.unwrap();
    let cap = Decimal::from(10);
    assert!(charged <= cap, "charged {charged}");
    let placed: Decimal = answers.iter().filter(|a| a.0 == 201).map(|a| a.1).sum();
    assert_eq!(charged, placed, "the sandbox charged what was placed");
    for (status, price) in &answers {
        assert!(matches!(status, 201 | 403 | 428), "{answers:?}");
        if *status == 403 {
            assert!(
                charged + price > cap,
                "a payment of {price} was refused with {charged} charged"
            );
        }
    }
    assert!(answers.iter().any(|a| a.0 == 403), "the cap was reached: {answers:?}");
    let journal = Store::open(&team.store).await.unwrap().journal(None, 0).await.unwrap();
    let journalled: Decimal = journal.iter().filter_map(|p| p.charged).sum();
    assert_eq!(journalled, charged, "the journal says what the sandbox charged");
}

#[tokio::test]
async fn caps_hold_to_the_cent_with_twenty_agents_on_two_replicas_of_one_sqlite_file() {
    caps_hold_under_concurrency(None).await;
}

/// A fresh database on the server `ESIMDASH_TEST_POSTGRES` names (`.ci/postgres` starts one
/// and prints its URL). Without it: a failure under `CI`, else `None` after saying what is
/// skipped.
async fn postgres_store(test: &str) -> Option<String> {
    let Some(admin) = std::env::var("ESIMDASH_TEST_POSTGRES").ok().filter(|v| !v.is_empty()) else {
        skip::skip(
            test,
            "no Postgres server (ESIMDASH_TEST_POSTGRES unset; .ci/postgres starts one with Debian's postgresql)",
            "test the Postgres store: .ci/run starts a server and sets ESIMDASH_TEST_POSTGRES",
        );
        return None;
    };
    let name = format!(
        "esimdash_test_{}",
        Token::new().unwrap().access_code.trim_start_matches("gw_")
    );
    let create = format!("CREATE DATABASE {name}");
    let admin_url = admin.clone();
    tokio::task::spawn_blocking(move || {
        let mut client = postgres::Client::connect(&admin_url, postgres::NoTls).expect("the test server answers");
        client.batch_execute(&create).expect("a test database is made");
    })
    .await
    .unwrap();
    let mut url = url::Url::parse(&admin).unwrap();
    url.set_path(&name);
    Some(url.to_string())
}

#[tokio::test]
async fn caps_hold_to_the_cent_with_twenty_agents_on_two_replicas_of_one_postgres() {
    if let Some(store) = postgres_store("caps_hold_…_postgres").await {
        caps_hold_under_concurrency(Some(store)).await;
    }
}

/// 20 stores on one database (as 20 replicas, each its own connection) reserving 1.00 five
/// times each at once against a team cap of 10.00: exactly ten are held, whatever the
/// interleaving.
async fn reservations_never_pass_the_cap(spec: String) {
    let mut stores = Vec::new();
    for _ in 0..20 {
        stores.push(Store::open(&spec).await.unwrap());
    }
    let caps = esimdash_gateway::store::Caps {
        team: Some(Decimal::from(10)),
    };
    let mut tries = tokio::task::JoinSet::new();
    for (n, store) in stores.into_iter().enumerate() {
        for k in 0..5 {
            let store = store.clone();
            tries.spawn(async move {
                let asked = esimdash_gateway::store::Asked {
                    agent: format!("agent{n}"),
                    kind: "topup".into(),
                    iccid: Some(format!("89000000000000{n:03}{k:02}")),
                    slug: "plan".into(),
                    qty: 1,
                    body: "{}".into(),
                    agent_key: None,
                    amount: Decimal::ONE,
                };
                store.reserve(asked, caps, 1_800_000_000, None).await.unwrap().is_ok()
            });
        }
    }
    let held = tries.join_all().await.into_iter().filter(|ok| *ok).count();
    assert_eq!(held, 10, "reservations held against a cap of 10 × 1.00");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reservations_on_one_sqlite_file_never_pass_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    reservations_never_pass_the_cap(dir.path().join("gateway.db").display().to_string()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reservations_on_one_postgres_never_pass_the_cap() {
    if let Some(store) = postgres_store("reservations_on_one_postgres_never_pass_the_cap").await {
        reservations_never_pass_the_cap(store).await;
    }
}

/// A figure of the gateway's metrics.
async fn figure(running: &Running, name: &str) -> Option<f64> {
    let text = running.metrics().render().await;
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// Waits (up to 60 s) until the replica's team index holds the whole list.
async fn index_whole(running: &Running) {
    let started = std::time::Instant::now();
    loop {
        let held = figure(running, "esimdash_gateway_index_esims").await.unwrap_or(0.0);
        let total = figure(running, "esimdash_gateway_index_list_total")
            .await
            .unwrap_or(0.0);
        if total > 0.0 && held >= total {
            return;
        }
        assert!(
            started.elapsed().as_secs() < 60,
            "the index was not read whole: {held} of {total}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Against an API without the lookup (it answers the whole list), once the team index holds
/// every eSIM: 20 agents looking up ICCIDs in a loop each get exactly their eSIM, the reads of
/// one serve the others, and the API is asked far less than the key allows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_agents_find_iccids_through_the_team_index_of_an_api_without_the_lookup() {
    let team = Team::without_lookup(
        1,
        SandboxConfig {
            orders: 2_000,
            ..SandboxConfig::default()
        },
    )
    .await;
    let running = &team.gateways[0];
    index_whole(running).await;
    let reseller = team.reseller();
    let mut iccids = Vec::new();
    for page in [1, 7, 15] {
        let query = EsimQuery {
            page: Some(page),
            page_size: Some(100),
            ..EsimQuery::default()
        };
        for esim in reseller.esims(&query).await.unwrap().esims.into_iter().step_by(10) {
            if let esimdash_domain::iccid::EsimIccid::Valid(i) = esim.raw_order_json.iccid {
                iccids.push(i);
            }
        }
    }
    let sent_before = figure(running, "esimdash_gateway_upstream_reads_total")
        .await
        .unwrap_or(0.0);
    let mut agents = tokio::task::JoinSet::new();
    for n in 0..20 {
        let seat = team.seat(&team.agent(&format!("agent{n}"), Role::VIEWER, None).await, 0);
        let iccids = iccids.clone();
        agents.spawn(async move {
            let mut times = Vec::new();
            let until = std::time::Instant::now() + std::time::Duration::from_secs(3);
            let mut k = n;
            while std::time::Instant::now() < until {
                let iccid = &iccids[k % iccids.len()];
                let asked = std::time::Instant::now();
                match seat.lookup_esim(iccid).await.unwrap() {
                    esimdash_api::Lookup::Found(esim, _) => {
                        assert_eq!(esim.raw_order_json.iccid.as_str(), iccid.as_str());
                    }
                    other => panic!("{iccid}: {other:?}"),
                }
                times.push(asked.elapsed());
                k += 1;
            }
            times
        });
    }
    let mut times: Vec<_> = agents.join_all().await.into_iter().flatten().collect();
    times.sort();
    let p95 = times[times.len() * 95 / 100];
    let sent = figure(running, "esimdash_gateway_upstream_reads_total")
        .await
        .unwrap_or(0.0)
        - sent_before;
    let limited = figure(running, "esimdash_gateway_upstream_rate_limited_total")
        .await
        .unwrap_or(0.0);
    eprintln!(
        "{} lookups by 20 agents in 3 s: p95 {p95:?}, {sent} reads sent to the API",
        times.len()
    );
    assert!(times.len() > 200, "{} lookups", times.len());
    assert!(sent <= 60.0, "{sent} reads went to the API for {} lookups", times.len());
    assert_eq!(limited, 0.0);
}

/// Ten failed sign-ins from one address within a minute: the eleventh request, even with a
/// good token, is told to wait (429 with Retry-After); the agents of other addresses are not.
#[tokio::test]
async fn an_address_that_keeps_failing_to_sign_in_is_told_to_wait() {
    let team = Team::start(1, None, None).await;
    let token = team.agent("ana", Role::VIEWER, None).await;
    let wrong = team.seat(
        &Token {
            access_code: token.access_code.clone(),
            secret_key: "gs_wrong".into(),
        },
        0,
    );
    for _ in 0..10 {
        assert_eq!(wrong.balance().await.unwrap_err().status(), Some(401));
    }
    let told = team.seat(&token, 0).balance().await.unwrap_err();
    assert_eq!(told.status(), Some(429), "{told}");
}

/// Two agents topping up one eSIM with one plan within ten minutes: the second is asked (428,
/// naming who paid), nothing is sent; an agent's own key sent again gets the first answer
/// (replayed), not a second payment; the same key with another request is 422.
#[tokio::test]
async fn a_second_agent_paying_the_same_top_up_is_asked_and_a_key_sent_again_is_replayed() {
    let team = Team::start(1, None, None).await;
    let (iccid, slug, _) = team.topup_target().await;
    let ana = team.seat(&team.agent("ana", Role::SUPPORT, None).await, 0);
    let bob = team.seat(&team.agent("bob", Role::SUPPORT, None).await, 0);
    let before = team.orders().await;
    let first = topup_through(&ana, &iccid, &slug, "ana-1").await;
    assert_eq!(first.status, 201, "{}", json(&first));
    let again = topup_through(&ana, &iccid, &slug, "ana-1").await;
    assert_eq!((again.status, again.replayed), (201, true));
    assert_eq!(json(&again)["order"], json(&first)["order"]);
    let other = ana
        .relay(
            TOPUP,
            None,
            Some(br#"{"iccid":"8944100000000000000","slug":"x"}"#.to_vec()),
            Some("ana-1"),
        )
        .await
        .unwrap();
    assert_eq!(other.status, 422, "{}", json(&other));
    let second = topup_through(&bob, &iccid, &slug, "bob-1").await;
    assert_eq!(second.status, 428, "{}", json(&second));
    assert!(
        json(&second)["error"].as_str().unwrap().contains("agent ana"),
        "{}",
        json(&second)
    );
    assert_eq!(team.orders().await, before + 1, "one top-up placed");
}

/// Postgres restarted under a running gateway (its connection ended by the server): the next
/// question connects again instead of failing from then on.
#[tokio::test]
async fn the_postgres_store_connects_again_after_the_server_ended_its_connection() {
    let Some(spec) = postgres_store("the_postgres_store_connects_again").await else {
        return;
    };
    let store = Store::open(&spec).await.unwrap();
    assert!(store.agents().await.unwrap().is_empty());
    let (admin, database) = (
        std::env::var("ESIMDASH_TEST_POSTGRES").unwrap(),
        url::Url::parse(&spec)
            .unwrap()
            .path()
            .trim_start_matches('/')
            .to_string(),
    );
    tokio::task::spawn_blocking(move || {
        let mut client = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
        client
            .execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                &[&database],
            )
            .unwrap();
    })
    .await
    .unwrap();
    let mut answered = false;
    for _ in 0..2 {
        // The first question may meet the closed connection; the next connects again.
        answered |= store.agents().await.is_ok();
    }
    assert!(answered, "the store never connected again");
}

/// What reaches the API: every byte the gateway sends upstream, recorded by a proxy in front of
/// the sandbox, never holds an agent's token; and no answer to an agent holds the reseller's
/// secret, whatever the agent asked.
#[tokio::test]
async fn the_api_never_sees_an_agents_token() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut team = Team::start(0, None, None).await;
    let sandbox = team.sandbox.addr;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let recorder = listener.local_addr().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut agent_side, _)) = listener.accept().await {
            let record = record.clone();
            tokio::spawn(async move {
                let Ok(mut api) = tokio::net::TcpStream::connect(sandbox).await else {
                    return;
                };
                let (mut from_gateway, mut to_gateway) = agent_side.split();
                let (mut from_api, mut to_api) = api.split();
                let up = async {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n) = from_gateway.read(&mut buf).await {
                        if n == 0 || to_api.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                        record.lock().unwrap().extend_from_slice(&buf[..n]);
                    }
                };
                let down = tokio::io::copy(&mut from_api, &mut to_gateway);
                let _ = tokio::join!(up, down);
            });
        }
    });
    // The gateway's upstream is the recorder.
    let settings = Settings {
        listen: ([127, 0, 0, 1], 0).into(),
        store: team.store.clone(),
        team_daily_cap: None,
        support_can_buy: true,
        allow_http: false,
        index_dir: None,
        account: esimdash_api::Credentials::pair("ak_demo_acme", RESELLER_SECRET).account(),
        rate_limit: 1_000_000,
        read_fresh: std::time::Duration::ZERO,
        tls: None,
    };
    let upstream = client(&format!("http://{recorder}/api/v1"), "ak_demo_acme", RESELLER_SECRET);
    team.gateways
        .push(esimdash_gateway::start(settings, upstream).await.unwrap());
    let token = team.agent("ana", Role::ADMIN, None).await;
    let seat = team.seat(&token, 0);
    let (iccid, slug, _) = team.topup_target().await;
    assert!(seat.balance().await.is_ok());
    assert!(seat.lookup_esim(&iccid).await.is_ok());
    for answer in [
        topup_through(&seat, &iccid, &slug, "k").await,
        seat.relay(TOPUP, None, Some(br#"{"iccid":"x"}"#.to_vec()), None)
            .await
            .unwrap(),
        seat.relay(PLACE_ORDER, None, Some(br#"{"slug":"no-such-plan"}"#.to_vec()), None)
            .await
            .unwrap(),
    ] {
        holds_no_secret(&answer);
    }
    let sent = String::from_utf8_lossy(&seen.lock().unwrap()).into_owned();
    assert!(sent.contains("ak_demo_acme"), "the recorder saw the gateway's requests");
    assert!(!sent.contains(&token.access_code), "the API saw an agent's access code");
    assert!(!sent.contains(&token.secret_key), "the API saw an agent's secret");
}

/// A payment reaches the API only through the payment routes: the path with its prefix twice
/// (`/api/v1/api/v1/portal/topups`, a base URL mistyped) is no route, for an admin too, and
/// nothing is ordered.
#[tokio::test]
async fn a_payment_cannot_go_around_the_caps_by_another_path() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let team = Team::start(1, None, None).await;
    let admin = team.agent("root", Role::ADMIN, None).await;
    let (iccid, slug, _) = team.topup_target().await;
    let before = team.orders().await;
    let body = String::from_utf8(topup_body(&iccid, &slug)).unwrap();
    let mut stream = tokio::net::TcpStream::connect(team.gateways[0].addr).await.unwrap();
    let request = format!(
        "POST /api/v1/api/v1/portal/topups HTTP/1.1\r\nhost: gateway\r\nx-access-code: {}\r\nx-secret-key: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        admin.access_code,
        admin.secret_key,
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    assert_eq!(team.orders().await, before, "nothing was ordered");
}

impl Team {
    async fn wallet(&self) -> Decimal {
        self.reseller().balance().await.unwrap()
    }

    /// A top-up through replica 0 as an agent's script sends it (repeats confirmed): the status
    /// and the body.
    async fn pay(&self, token: &Token, iccid: &Iccid, slug: &str, key: &str) -> (u16, serde_json::Value) {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let answer = reqwest::Client::new()
            .post(format!("http://{}/api/v1/portal/topups", self.gateways[0].addr))
            .header("x-access-code", &token.access_code)
            .header("x-secret-key", &token.secret_key)
            .header("idempotency-key", key)
            .header("x-confirm-repeat", "true")
            .header("content-type", "application/json")
            .body(topup_body(iccid, slug))
            .send()
            .await
            .unwrap();
        let status = answer.status().as_u16();
        (
            status,
            serde_json::from_str(&answer.text().await.unwrap()).unwrap_or_default(),
        )
    }

    /// The journal once nothing in it is being settled any more (waits up to 40 s): what it
    /// says was charged, and how many payments it leaves unknown.
    async fn journal_settled(&self) -> (Decimal, usize, Vec<esimdash_gateway::store::Payment>) {
        let store = Store::open(&self.store).await.unwrap();
        for _ in 0..400 {
            let journal = store.journal(None, 0).await.unwrap();
            let open = journal.iter().any(|p| {
                p.stage.name() == "sent"
                    || (p.stage.name() == "unknown" && !p.note.as_deref().unwrap_or("").contains("person"))
            });
            if !open {
                let charged = journal.iter().filter_map(|p| p.charged).sum();
                let unknown = journal.iter().filter(|p| p.stage.name() == "unknown").count();
                return (charged, unknown, journal);
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("payments still being settled after 40 s");
    }
}

/// An API that charges and then answers 500, 503, 429, 400 or 401 (a load balancer after the
/// API committed), or drops the connection: a support seat with a 10.00 cap makes 8 top-ups
/// each way. The wallet pays no more than the cap, the journal says to the cent what the wallet
/// paid, and no agent is answered with an error that invites paying again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_that_charges_then_fails_is_held_against_the_cap_and_journalled() {
    charges_then_fails(None).await;
}

/// As above, the journal in Postgres.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_that_charges_then_fails_is_journalled_in_postgres_too() {
    if let Some(store) = postgres_store("charges_then_fails_postgres").await {
        charges_then_fails(Some(store)).await;
    }
}

async fn charges_then_fails(store: Option<String>) {
    let lies = [
        Lie::ChargeThen(500),
        Lie::ChargeThen(503),
        Lie::ChargeThen(429),
        Lie::ChargeThen(400),
        Lie::ChargeThen(401),
        Lie::ChargeThenDrop,
    ];
    let team = Team::start_behind(1, store, None, true).await;
    let targets = team.topup_targets(8).await;
    for (n, lie) in lies.into_iter().enumerate() {
        team.lying.as_ref().unwrap().lie(lie);
        let agent = format!("sup{n}");
        let token = team.agent(&agent, Role::SUPPORT, Some("10.00")).await;
        let before = team.wallet().await;
        for (i, (iccid, slug, _)) in targets.iter().cycle().take(8).enumerate() {
            let (status, body) = team.pay(&token, iccid, slug, &format!("{agent}-{i}")).await;
            let said = body["error"].as_str().unwrap_or_default().to_string();
            assert!(
                status == 201 || status == 403 || (status == 502 && said.contains("Do not pay again")),
                "{lie:?}: payment {i} answered {status} {body}"
            );
        }
        let (charged, unknown, journal) = team.journal_settled().await;
        let spent = before - team.wallet().await;
        let journalled: Decimal = journal
            .iter()
            .filter(|p| p.asked.agent == agent)
            .filter_map(|p| p.charged)
            .sum();
        assert!(
            spent <= Decimal::TEN,
            "{lie:?}: the wallet paid {spent} past a 10.00 cap"
        );
        assert!(
            spent > Decimal::ZERO,
            "{lie:?}: nothing was charged: the lie was not told"
        );
        assert_eq!(
            journalled, spent,
            "{lie:?}: the journal says {journalled}, the wallet paid {spent}"
        );
        assert_eq!(unknown, 0, "{lie:?}: {charged} charged, yet payments left unknown");
    }
}

/// An API that quotes 0.50 and charges the plan's real price, 10 top-ups of one seat at once
/// against a 10.00 cap: the wallet pays at most the cap plus one payment (the one in flight when
/// the drift is found), and the journal and the metrics say the charges passed what was held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charge_past_the_quote_counts_and_one_payment_at_a_time_is_sent() {
    let team = Team::lied_to(1).await;
    let targets = team.topup_targets(10).await;
    let most = targets.iter().map(|t| t.2).max().unwrap();
    assert!(most > Decimal::new(50, 2), "the plans must cost more than the quote");
    team.lying.as_ref().unwrap().lie(Lie::QuotesBelow);
    let token = team.agent("ana", Role::SUPPORT, Some("10.00")).await;
    let before = team.wallet().await;
    let keys: Vec<String> = (0..targets.len()).map(|i| format!("k{i}")).collect();
    let paid = futures_util::future::join_all(
        targets
            .iter()
            .zip(&keys)
            .map(|((iccid, slug, _), key)| team.pay(&token, iccid, slug, key)),
    )
    .await;
    let spent = before - team.wallet().await;
    assert!(
        spent <= Decimal::TEN + most,
        "the wallet paid {spent}: past the cap by more than one payment ({paid:?})"
    );
    let (charged, _, journal) = team.journal_settled().await;
    assert_eq!(charged, spent, "the journal counts what was charged");
    assert!(
        journal
            .iter()
            .any(|p| p.note.as_deref().unwrap_or("").contains("more than the 0.50 held")),
        "the journal says the charge passed the quote"
    );
    let over = figure(
        &team.gateways[0],
        "esimdash_gateway_charges_over_held_total{agent=\"ana\"}",
    )
    .await;
    assert!(over.unwrap_or(0.0) >= 1.0, "{over:?}");
}

/// An API that echoes the reseller's secret raw, JSON-escaped, percent-encoded and in two
/// base64 forms, in a 200, a 400 and a 500: no agent's answer carries any of them.
#[tokio::test]
async fn a_secret_echoed_in_five_encodings_reaches_no_agent() {
    let team = Team::lied_to(1).await;
    team.lying.as_ref().unwrap().lie(Lie::EchoesSecret);
    let seat = team.seat(&team.agent("vic", Role::VIEWER, None).await, 0);
    let mut statuses = Vec::new();
    for (endpoint, query) in [
        (esimdash_api::relay::ROUTES[5], None),
        (esimdash_api::ORDERS, Some("page=0")),
        (esimdash_api::relay::ROUTES[3], None),
    ] {
        let answer = seat.relay(endpoint, query, None, None).await.unwrap();
        statuses.push(answer.status);
        let body = String::from_utf8_lossy(&answer.body).into_owned();
        for (i, encoded) in lying_api::encodings(RESELLER_SECRET).iter().enumerate() {
            // The whole encoding, and any long piece of a base64 one (a scrubbed run may leave
            // a character at either end).
            let piece = if i >= 3 {
                &encoded[8..encoded.len() - 4]
            } else {
                encoded.as_str()
            };
            assert!(!body.contains(piece), "encoding {i} reached the agent: {body}");
        }
    }
    assert_eq!(statuses, [200, 400, 500], "a 200, a 400 and a 500 were passed on");
}

/// A replica starting with 15 payments left sent (their outcome not known) in front of an API
/// that takes 2 s an answer: it serves at once, the payments settle behind it, each held
/// against the cap meanwhile, and an agent's retry of one under its key is told that it is
/// still being settled (a 502 a client reads as "may have been placed"), not a 409.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_with_unfinished_payments_serves_at_once() {
    let mut team = Team::lied_to(0).await;
    let targets = team.topup_targets(15).await;
    let token = team.agent("ana", Role::SUPPORT, Some("100.00")).await;
    let store = Store::open(&team.store).await.unwrap();
    let now = chrono::Utc::now().timestamp();
    for (i, (iccid, slug, price)) in targets.iter().enumerate() {
        let asked = esimdash_gateway::store::Asked {
            agent: "ana".into(),
            kind: "topup".into(),
            iccid: Some(iccid.as_str().to_string()),
            slug: slug.clone(),
            qty: 1,
            body: serde_json::json!({ "slug": slug, "qty": 1, "iccid": iccid.as_str() }).to_string(),
            agent_key: Some(format!("k{i}")),
            amount: *price,
        };
        let caps = esimdash_gateway::store::Caps::default();
        let payment = store.reserve(asked, caps, now, None).await.unwrap().unwrap();
        assert!(store.mark_sent(&payment.id, now).await.unwrap());
    }
    let held: Decimal = targets.iter().map(|t| t.2).sum();
    team.lying.as_ref().unwrap().lie(Lie::Slow);
    team.add_replica().await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let me = reqwest::Client::new()
        .get(format!("http://{}/api/v1/gateway/me", team.gateways[0].addr))
        .header("x-access-code", &token.access_code)
        .header("x-secret-key", &token.secret_key)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let me: serde_json::Value = serde_json::from_str(&me).unwrap();
    let open = store.unsettled().await.unwrap().len();
    assert_eq!(open, 15, "the replica served before settling ({me})");
    assert_eq!(
        Decimal::from_str(me["spentToday"].as_str().unwrap()).unwrap(),
        held,
        "each unfinished payment is held against the cap: {me}"
    );
    let (iccid, slug, _) = &targets[0];
    let (status, body) = team.pay(&token, iccid, slug, "k0").await;
    assert_eq!(status, 502, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("still being settled"),
        "{body}"
    );
}

/// Against an API without the lookup, two replicas whose team indexes hold the whole list: an
/// eSIM just bought through one is found by a lookup at once on both (each reads what is new
/// from the top before saying "no such eSIM").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_just_bought_esim_is_found_at_once_on_both_replicas() {
    let team = Team::without_lookup(
        2,
        SandboxConfig {
            balance: Some(Decimal::from(1_000)),
            ..SandboxConfig::default()
        },
    )
    .await;
    for running in &team.gateways {
        index_whole(running).await;
    }
    let ada = team.agent("ada", Role::ADMIN, None).await;
    let plan = team
        .reseller()
        .plans()
        .await
        .unwrap()
        .into_iter()
        .find(|p| !p.is_topup())
        .unwrap();
    let body = serde_json::json!({ "slug": plan.slug, "qty": 1 })
        .to_string()
        .into_bytes();
    let bought = team
        .seat(&ada, 0)
        .relay(PLACE_ORDER, None, Some(body), Some("ada-1"))
        .await
        .unwrap();
    assert_eq!(bought.status, 201, "{}", json(&bought));
    let order_no = json(&bought)["order"]["providerOrderNo"].as_str().unwrap().to_string();
    // The order is pending until the provider allocates its eSIM (moments, in the sandbox).
    let mut newest = None;
    for _ in 0..200 {
        let query = EsimQuery {
            page: Some(1),
            page_size: Some(100),
            ..EsimQuery::default()
        };
        newest = team
            .reseller()
            .esims(&query)
            .await
            .unwrap()
            .esims
            .into_iter()
            .find(|e| e.record.provider_order_no.as_str() == order_no);
        if newest.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let newest = newest.expect("the new eSIM was allocated");
    let esimdash_domain::iccid::EsimIccid::Valid(iccid) = newest.raw_order_json.iccid else {
        panic!("the new eSIM has no ICCID");
    };
    for replica in 0..2 {
        let query = format!("iccid={}", iccid.as_str());
        let found = team
            .seat(&ada, replica)
            .relay(ESIMS, Some(&query), None, None)
            .await
            .unwrap();
        let esims = json(&found)["esims"].as_array().cloned().unwrap_or_default();
        assert!(
            esims.iter().any(|e| e["providerOrderNo"] == order_no.as_str()),
            "replica {replica}: {}",
            json(&found)
        );
    }
}
