//! `esimdash triage ICCID`: the first-line checks (`esimdash_front::triage`) on the eSIM as read
//! now, told as a list and a paste-ready escalation pack (`--out FILE` writes the pack too;
//! `--json` gives both to scripts). Its usage is kept for the next triage to tell whether data
//! moved.

use super::{CommandError, Output, find_profiles};
use crate::commands::output::outln;
use esimdash_api::Client;
use esimdash_domain::iccid::Iccid;
use esimdash_front::triage::{self, Outcome};
use esimdash_inventory::kept::Kept;

pub async fn run(
    client: &Client,
    index: Option<&Kept>,
    iccid: &Iccid,
    country: Option<&str>,
    out: Option<&std::path::Path>,
    output: &Output,
) -> Result<(), CommandError> {
    let country = country
        .map(|said| {
            triage::country_code(said).ok_or_else(|| {
                CommandError::Usage(format!(
                    "{said:?} is no country esimdash knows: give its two-letter code (FR) or its name (France)"
                ))
            })
        })
        .transpose()?;
    let mark = client.calls_made();
    let (esim, earlier) = find_profiles(client, index, iccid).await?;
    let read = triage::read(client, &esim, country, mark).await;
    let found = triage::assess(&esim, &earlier, read, chrono::Utc::now());
    let pack = triage::pack(&found);
    if let Some(path) = out {
        triage::write_pack(path, &pack)
            .map_err(|e| CommandError::Io(std::io::Error::other(format!("{}: {e}", path.display()))))?;
    }
    if output.is_json() {
        let mut value = serde_json::to_value(&found).map_err(|e| CommandError::Io(std::io::Error::other(e)))?;
        value["pack"] = serde_json::json!(pack);
        return output.print_json(&value);
    }
    for check in &found.checks {
        let mark = match check.outcome {
            Outcome::Passed => "ok  ",
            Outcome::Failed => "FAIL",
            Outcome::NeedsCustomer => "ASK ",
        };
        outln!("{mark} {}: {}", check.title, check.found);
        if let Some(say) = &check.say {
            outln!("     say: {say}");
        }
    }
    outln!(
        "\nEscalation pack{}:\n\n{pack}",
        out.map_or_else(String::new, |p| format!(" (also in {})", p.display()))
    );
    Ok(())
}
