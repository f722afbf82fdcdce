//! The team's own commands (`[[commands]]` in the config file): a name, what it is about (an
//! eSIM, an order or a plan) and a command line as a list of arguments, with placeholders
//! (`{iccid}`, `{order}`, `{slug}`, `{status}`, `{package}`) filled from the record chosen. Each
//! value is its own argument, never parsed by a shell, so a value cannot become a command; the
//! command runs without esimdash's environment (no secret key there), with its output kept to a
//! bound and stopped at its time limit.

use esimdash_api::model::{Esim, Order, Plan};
use serde::Deserialize;
use std::time::Duration;

/// A command's time limit unless its entry says `timeout_secs`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most output kept of a command (its last bytes past it are dropped, and that is said).
const MOST_OUTPUT: usize = 64 * 1024;

/// What a command is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Subject {
    Esim,
    Order,
    Plan,
}

/// A `[[commands]]` entry as the config file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandEntry {
    name: String,
    on: Subject,
    run: Vec<String>,
    timeout_secs: Option<u64>,
}

/// A team command, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamCommand {
    pub name: String,
    pub on: Subject,
    pub run: Vec<String>,
    pub timeout: Duration,
}

/// The placeholders, and what each is about.
const PLACEHOLDERS: &[(&str, &[Subject])] = &[
    ("iccid", &[Subject::Esim]),
    ("order", &[Subject::Esim, Subject::Order]),
    ("slug", &[Subject::Esim, Subject::Order, Subject::Plan]),
    ("status", &[Subject::Esim, Subject::Order]),
    ("package", &[Subject::Esim, Subject::Order, Subject::Plan]),
];

impl CommandEntry {
    /// The entry checked: a name, a program, and placeholders its subject has; else why not.
    pub fn checked(self) -> Result<TeamCommand, String> {
        let name = self.name.trim().to_string();
        if name.is_empty() {
            return Err("a [[commands]] entry needs a name".to_string());
        }
        if self.run.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(format!(
                "[[commands]] {name:?}: run needs a program first, e.g. run = [\"xdg-open\", \"https://crm.example.com/esim/{{iccid}}\"]"
            ));
        }
        for arg in &self.run {
            for placeholder in placeholders_in(arg) {
                match PLACEHOLDERS.iter().find(|(p, _)| *p == placeholder) {
                    Some((_, subjects)) if subjects.contains(&self.on) => {}
                    Some(_) => {
                        return Err(format!(
                            "[[commands]] {name:?}: {{{placeholder}}} is not known of {}",
                            subject_words(self.on)
                        ));
                    }
                    None => {
                        let known: Vec<String> = PLACEHOLDERS.iter().map(|(p, _)| format!("{{{p}}}")).collect();
                        return Err(format!(
                            "[[commands]] {name:?}: {{{placeholder}}} is not a placeholder ({})",
                            known.join(", ")
                        ));
                    }
                }
            }
        }
        Ok(TeamCommand {
            name,
            on: self.on,
            run: self.run,
            timeout: self
                .timeout_secs
                .map_or(DEFAULT_TIMEOUT, |s| Duration::from_secs(s.clamp(1, 3600))),
        })
    }
}

fn subject_words(subject: Subject) -> &'static str {
    match subject {
        Subject::Esim => "an eSIM",
        Subject::Order => "an order",
        Subject::Plan => "a plan",
    }
}

/// The `{name}`s in `arg`.
fn placeholders_in(arg: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = arg;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        found.push(&after[..close]);
        rest = &after[close + 1..];
    }
    found
}

/// The values a record gives the placeholders.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Values {
    pub subject: Option<Subject>,
    pub fields: Vec<(&'static str, String)>,
}

impl Values {
    pub fn of_esim(esim: &Esim) -> Values {
        Values {
            subject: Some(Subject::Esim),
            fields: vec![
                ("iccid", esim.raw_order_json.iccid.to_string()),
                ("order", esim.record.provider_order_no.to_string()),
                ("slug", esim.record.slug.clone()),
                ("status", esim.record.status.to_string()),
                ("package", esim.record.package_name.clone()),
            ],
        }
    }

    pub fn of_order(order: &Order) -> Values {
        Values {
            subject: Some(Subject::Order),
            fields: vec![
                ("order", order.record.provider_order_no.to_string()),
                ("slug", order.record.slug.clone()),
                ("status", order.record.status.to_string()),
                ("package", order.record.package_name.clone()),
            ],
        }
    }

    pub fn of_plan(plan: &Plan) -> Values {
        Values {
            subject: Some(Subject::Plan),
            fields: vec![("slug", plan.slug.clone()), ("package", plan.name.clone())],
        }
    }
}

impl TeamCommand {
    /// The arguments for `values`: each placeholder replaced by its value, in place, each
    /// argument one (a value holding spaces, quotes or `$(…)` stays one argument, as written).
    pub fn argv(&self, values: &Values) -> Vec<String> {
        self.run
            .iter()
            .map(|arg| {
                let mut out = String::new();
                let mut rest = arg.as_str();
                while let Some(open) = rest.find('{') {
                    let after = &rest[open + 1..];
                    let Some(close) = after.find('}') else { break };
                    out.push_str(&rest[..open]);
                    let name = &after[..close];
                    let value = values.fields.iter().find(|(n, _)| *n == name).map_or("", |(_, v)| v);
                    out.push_str(value);
                    rest = &after[close + 1..];
                }
                out.push_str(rest);
                out
            })
            .collect()
    }
}

/// What became of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// Its exit status; `None` when it was stopped or could not start.
    pub status: Option<i32>,
    pub timed_out: bool,
    /// Why it could not start, when it could not.
    pub failed: Option<String>,
    /// Its output (stdout then stderr), terminal-safe, at most `MOST_OUTPUT` bytes.
    pub output: String,
}

impl Ran {
    /// What became of it, in a few words.
    pub fn outcome(&self, timeout: Duration) -> String {
        match (self.status, self.timed_out, &self.failed) {
            (_, _, Some(why)) => format!("could not start: {why}"),
            (_, true, _) => format!("stopped at its time limit ({} s)", timeout.as_secs()),
            (Some(0), ..) => "ended with exit status 0".to_string(),
            (Some(code), ..) => format!("failed with exit status {code}"),
            (None, ..) => "ended by a signal".to_string(),
        }
    }
}

/// The environment a command gets: only what finding programs and writing text need. No
/// `ESIMDASH_*` (the secret key among them), nothing else of esimdash's.
const PASSED_ON: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TZ",
    "DISPLAY",
    "WAYLAND_DISPLAY",
];

/// Runs `argv` (no shell), stdin closed, stopped (killed) at `timeout`.
pub async fn run(argv: &[String], timeout: Duration) -> Ran {
    let Some((program, args)) = argv.split_first() else {
        return Ran {
            status: None,
            timed_out: false,
            failed: Some("no program".to_string()),
            output: String::new(),
        };
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(PASSED_ON.iter().filter_map(|k| std::env::var(k).ok().map(|v| (*k, v))))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Ran {
                status: None,
                timed_out: false,
                failed: Some(format!("{program}: {e}")),
                output: String::new(),
            };
        }
    };
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let finished = async {
        let (status, out, err) = tokio::join!(child.wait(), kept(stdout), kept(stderr));
        status.map(|s| (s, out, err))
    };
    match tokio::time::timeout(timeout, finished).await {
        Ok(Ok((status, (out, out_cut), (err, err_cut)))) => Ran {
            status: status.code(),
            timed_out: false,
            failed: None,
            output: bounded([out, err].concat(), out_cut || err_cut),
        },
        Ok(Err(e)) => Ran {
            status: None,
            timed_out: false,
            failed: Some(e.to_string()),
            output: String::new(),
        },
        // Dropping the future drops the child: killed (`kill_on_drop`).
        Err(_) => Ran {
            status: None,
            timed_out: true,
            failed: None,
            output: String::new(),
        },
    }
}

/// What a command writes to one of its pipes: the first `MOST_OUTPUT` bytes kept, the rest read
/// and dropped (a command that writes without end fills no memory, and is not held on a full
/// pipe), and whether there was more.
async fn kept(pipe: Option<impl tokio::io::AsyncRead + Unpin>) -> (Vec<u8>, bool) {
    use tokio::io::AsyncReadExt;
    let Some(mut pipe) = pipe else {
        return (Vec::new(), false);
    };
    let mut kept = Vec::new();
    let _ = (&mut pipe).take(MOST_OUTPUT as u64).read_to_end(&mut kept).await;
    let rest = tokio::io::copy(&mut pipe, &mut tokio::io::sink()).await.unwrap_or(0);
    (kept, rest > 0)
}

fn bounded(mut bytes: Vec<u8>, cut: bool) -> String {
    let cut = cut || bytes.len() > MOST_OUTPUT;
    bytes.truncate(MOST_OUTPUT);
    let mut text = esimdash_domain::text::sanitize_lines(&String::from_utf8_lossy(&bytes)).into_owned();
    if cut {
        text.push_str("\n… (the rest of its output left out)");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(on: Subject, run: &[&str]) -> CommandEntry {
        CommandEntry {
            name: "crm".into(),
            on,
            run: run.iter().map(|s| s.to_string()).collect(),
            timeout_secs: None,
        }
    }

    #[test]
    fn placeholders_are_checked_and_each_value_stays_one_argument() {
        let command = entry(Subject::Esim, &["open", "https://crm/{iccid}?o={order}", "{package}"])
            .checked()
            .unwrap();
        let values = Values {
            subject: Some(Subject::Esim),
            fields: vec![
                ("iccid", "8944".into()),
                ("order", "B1".into()),
                ("package", "x; rm -rf ~ $(touch /tmp/pwned) 'q'".into()),
            ],
        };
        assert_eq!(
            command.argv(&values),
            ["open", "https://crm/8944?o=B1", "x; rm -rf ~ $(touch /tmp/pwned) 'q'"]
        );
        let unknown = entry(Subject::Esim, &["open", "{secret}"]).checked().unwrap_err();
        assert!(unknown.contains("{secret} is not a placeholder"), "{unknown}");
        let not_of = entry(Subject::Plan, &["open", "{iccid}"]).checked().unwrap_err();
        assert!(not_of.contains("not known of a plan"), "{not_of}");
        assert!(entry(Subject::Plan, &[]).checked().is_err());
    }

    #[tokio::test]
    async fn a_command_gets_no_secret_and_a_hung_one_is_stopped() {
        let ran = run(&["env".to_string()], Duration::from_secs(10)).await;
        assert_eq!(ran.status, Some(0), "{ran:?}");
        assert!(!ran.output.contains("ESIMDASH"), "{}", ran.output);
        assert!(
            ran.output
                .lines()
                .all(|l| PASSED_ON.iter().any(|k| l.starts_with(&format!("{k}=")))),
            "{}",
            ran.output
        );
        let started = std::time::Instant::now();
        let hung = run(&["sleep".to_string(), "30".to_string()], Duration::from_millis(300)).await;
        assert!(
            hung.timed_out && started.elapsed() < Duration::from_secs(10),
            "{hung:?}"
        );
        let endless = run(&["yes".to_string()], Duration::from_millis(300)).await;
        assert!(endless.timed_out, "{endless:?}");
        let much = run(
            &[
                "head".to_string(),
                "-c".to_string(),
                "1000000".to_string(),
                "/dev/zero".to_string(),
            ],
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(much.status, Some(0), "{much:?}");
        // 64 KiB kept (each NUL shown as U+FFFD, three bytes), the rest read and dropped.
        assert!(
            much.output.len() <= 3 * MOST_OUTPUT + 100 && much.output.ends_with("left out)"),
            "{}",
            much.output.len()
        );
        let missing = run(&["/no/such/program".to_string()], Duration::from_secs(1)).await;
        assert!(missing.failed.is_some(), "{missing:?}");
    }
}
