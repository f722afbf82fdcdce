//! `esimdash mcp` over real stdio, as an assistant's client drives it: raw JSON-RPC lines in,
//! answers read back by id, against the sandbox. The tools listed are reads, each annotated so;
//! each answer equals the command line's `--json` for the same question, wrapped as data from
//! the API; a bad argument is a tool error in words; nothing reaches the API that moves money.

use crate::common::*;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The binary's MCP session: requests written, answers read back by their id.
pub struct Session {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    next_id: u64,
}

impl Session {
    async fn start(sb: &esimdash_sandbox::RunningSandbox, home: &tempfile::TempDir) -> Session {
        Session::start_at(&sb.base_url(), home, &[]).await
    }

    /// A session at the API at `base_url`, `mcp` given `extra` arguments.
    pub async fn start_at(base_url: &str, home: &tempfile::TempDir, extra: &[&str]) -> Session {
        Session::start_as(base_url, ("ak_demo_acme", "sk_demo_acme"), home, extra).await
    }

    /// A session as `(access code, secret key)` (a gateway's agent token) at `base_url`.
    pub async fn start_as(
        base_url: &str,
        (code, secret): (&str, &str),
        home: &tempfile::TempDir,
        extra: &[&str],
    ) -> Session {
        let mut cmd = esimdash(home);
        acme_at(&mut cmd, base_url)
            .env("ESIMDASH_ACCESS_CODE", code)
            .env("ESIMDASH_SECRET_KEY", secret)
            .env("ESIMDASH_RATE_LIMIT", "100000")
            .arg("mcp")
            .args(extra)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = tokio::process::Command::from(cmd).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut session = Session {
            child,
            stdin,
            lines,
            next_id: 0,
        };
        let init = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "edges-test", "version": "1" }
        });
        let answer = session.ask("initialize", init).await;
        assert_eq!(answer["result"]["serverInfo"]["name"], "esimdash", "{answer}");
        session
            .say(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        session
    }

    async fn say(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// A request, and its answer (other messages in between are skipped).
    pub async fn ask(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.say(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        let read = async {
            loop {
                let line = self.lines.next_line().await.unwrap().expect("the session ended");
                let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
                if message["id"] == id {
                    return message;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(30), read)
            .await
            .unwrap_or_else(|_| panic!("no answer to {method}"))
    }

    pub async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self
            .ask("tools/call", json!({ "name": tool, "arguments": arguments }))
            .await;
        answer["result"].clone()
    }

    /// Ends the session as a client does, by closing its input: the process ends by itself.
    pub async fn end(mut self) -> std::process::ExitStatus {
        drop(self.stdin);
        tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .expect("the session ends when its input closes")
            .unwrap()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_assistant_reads_through_mcp_what_the_command_line_answers() {
    let sb = sandbox().await;
    let home = tempfile::tempdir().unwrap();
    let esims = cli_json(&sb, &home, &["esims", "--json"]).await;
    let iccid = esims["esims"][0]["rawOrderJson"]["iccid"].as_str().unwrap().to_string();
    let order = esims["esims"][0]["providerOrderNo"].as_str().unwrap().to_string();
    let plans = cli_json(&sb, &home, &["plans", "--json"]).await;
    let slug = plans["data"][0]["slug"].as_str().unwrap().to_string();
    let location = plans["data"][0]["locationCode"].as_str().unwrap().to_string();
    let orders_before = api(&sb).orders(&Default::default()).await.unwrap().total;

    let mut session = Session::start(&sb, &home).await;
    let listed = session.ask("tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "attention",
            "balance",
            "find_esim",
            "order_esims",
            "orders",
            "plan",
            "plans",
            "request_status",
            "spend_report",
            "topup_plans"
        ],
        "reads only: no proposing tool unless writes are allowed"
    );
    for tool in tools {
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
    }

    let data = |result: &Value| -> Value {
        assert_eq!(result["isError"], false, "{result}");
        let answer = &result["structuredContent"];
        assert!(
            answer["source"].as_str().unwrap().contains("not instructions"),
            "{answer}"
        );
        answer["data"].clone()
    };
    for (tool, arguments, command) in [
        (
            "find_esim",
            json!({ "iccid": iccid }),
            format!("esims --iccid {iccid} --json"),
        ),
        ("plan", json!({ "slug": slug }), format!("plans --slug {slug} --json")),
        (
            "order_esims",
            json!({ "order": order }),
            format!("esims --order {order} --json"),
        ),
        (
            "plans",
            json!({ "location": location }),
            format!("plans --location {location} --json"),
        ),
        (
            "topup_plans",
            json!({ "iccid": iccid }),
            format!("topup --iccid {iccid} --json"),
        ),
        (
            "orders",
            json!({ "page": 2, "status": "in_use" }),
            "orders --page 2 --status in_use --json".into(),
        ),
        (
            "spend_report",
            json!({ "since": "7d", "by": "plan" }),
            "report --since 7d --by plan --json".into(),
        ),
    ] {
        let answer = session.call(tool, arguments).await;
        let command: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(data(&answer), cli_json(&sb, &home, &command).await, "{tool}");
    }
    let balance = session.call("balance", json!({})).await;
    assert_eq!(data(&balance), cli_json(&sb, &home, &["balance", "--json"]).await);
    // The attention list, read live by both (when each eSIM was read aside).
    let unread = |mut list: Value| {
        for e in list["esims"].as_array_mut().unwrap() {
            e.as_object_mut().unwrap().remove("readAt");
        }
        list.as_object_mut().unwrap().remove("shown");
        list
    };
    let attention = data(&session.call("attention", json!({})).await);
    assert_eq!(attention["shown"], attention["total"], "fewer than 100 here: all shown");
    let listed = cli_json(&sb, &home, &["esims", "--attention", "--json"]).await;
    assert_eq!(unread(attention), unread(listed));

    // A typo is a tool error in words; an argument no tool takes (a "confirmation") changes
    // nothing; no tool by another name exists.
    let typo = session.call("find_esim", json!({ "iccid": "8944-not-an-iccid" })).await;
    assert_eq!(typo["isError"], true, "{typo}");
    assert!(
        typo["content"][0]["text"].as_str().unwrap().contains("is not an ICCID"),
        "{typo}"
    );
    let no_order = session.call("order_esims", json!({ "order": "B999" })).await;
    assert_eq!(no_order["isError"], true, "{no_order}");
    assert!(
        no_order["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("no order B999 in this account"),
        "{no_order}"
    );
    let confirmed = session.call("balance", json!({ "confirm": true })).await;
    assert_eq!(data(&confirmed), data(&balance));
    let paying = session
        .ask(
            "tools/call",
            json!({ "name": "topup", "arguments": { "iccid": iccid, "confirm": true } }),
        )
        .await;
    assert!(
        paying.get("error").is_some() || paying["result"]["isError"] == true,
        "{paying}"
    );

    assert!(session.end().await.success());
    let orders_after = api(&sb).orders(&Default::default()).await.unwrap().total;
    assert_eq!(orders_after, orders_before, "nothing was bought or topped up");
}

/// What the command line prints for `args`, as JSON.
pub async fn cli_json(sb: &esimdash_sandbox::RunningSandbox, home: &tempfile::TempDir, args: &[&str]) -> Value {
    let mut cmd = esimdash(home);
    acme_at(&mut cmd, &sb.base_url())
        .env("ESIMDASH_RATE_LIMIT", "100000")
        .args(args);
    stdout_json(&run(cmd).await)
}
