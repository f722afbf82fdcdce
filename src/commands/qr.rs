//! `esimdash qr`: what installs an eSIM, for the agent to hand to a customer: the QR code drawn
//! on the terminal, the activation code and its parts, the iPhone install link, and the QR code
//! as PNG or SVG files.

use super::table::Table;
use super::{CommandError, Output};
use crate::commands::output::{out, outln};
use esimdash_api::Client;
use esimdash_api::model::Esim;
use esimdash_domain::lpa::{ActivationCode, apple_install_link};
use esimdash_front::export::file::{self, Existing};
use esimdash_front::format::verdict;
use esimdash_qr::{FILE_SCALE, FILE_SIZE_MM, QrMatrix};
use serde_json::json;
use std::io::IsTerminal;
use std::path::Path;

/// The image files asked for.
pub struct Files<'a> {
    pub png: Option<&'a Path>,
    pub svg: Option<&'a Path>,
}

pub async fn run(
    client: &Client,
    esim: &Esim,
    link_only: bool,
    files: Files<'_>,
    output: &Output,
) -> Result<(), CommandError> {
    // `ac` goes through the check a decoded QR image does: nothing else is drawn or printed.
    let code = client
        .activation_code(esim)
        .await
        .and_then(|code| esimdash_domain::lpa::checked_code(&code))
        .map_err(CommandError::Qr)?;
    let matrix = QrMatrix::encode(&code).map_err(CommandError::Qr)?;
    let link = apple_install_link(&code);
    // The user named these paths, so an existing file is replaced, as `cp` or `curl -o` would.
    let mut written = Vec::new();
    if let Some(path) = files.png {
        let bytes = matrix.to_png(FILE_SCALE).map_err(CommandError::Qr)?;
        written.push(file::write(path, &bytes, Existing::Replace).map_err(file_error)?);
    }
    if let Some(path) = files.svg {
        let text = matrix.to_svg(FILE_SIZE_MM);
        written.push(file::write(path, text.as_bytes(), Existing::Replace).map_err(file_error)?);
    }
    let iccid = &esim.raw_order_json.iccid;
    let parts = ActivationCode::parse(&code);
    let class = esim.facts().classify();
    if let Some(why) = verdict::not_installable(class).filter(|_| !output.is_json()) {
        // Printed all the same (a record, a ticket), but never as if it would install.
        crate::commands::notices::say(&format!("Note: eSIM {iccid}: {why}."));
    }
    if output.is_json() {
        let mut out = json!({
            "iccid": iccid,
            "activationCode": code,
            "smdpAddress": parts.as_ref().map(|p| p.smdp_address.as_str()),
            "matchingId": parts.as_ref().map(|p| p.matching_id.as_str()),
            "iosInstallLink": link,
            "verdict": verdict::of(esim, chrono::Utc::now()),
        });
        if written.is_empty() && !link_only {
            out["qr"] = json!(matrix.to_half_blocks());
        }
        if !written.is_empty() {
            out["files"] = json!(written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>());
        }
        return output.print_json(&out);
    }
    if link_only {
        let link = link.ok_or_else(|| {
            CommandError::Qr(format!(
                "the activation code of {iccid} is not an LPA code, so it has no install link"
            ))
        })?;
        outln!("{link}");
        return Ok(());
    }
    if !written.is_empty() {
        for path in &written {
            outln!("Wrote {} (QR code of eSIM {iccid})", path.display());
        }
        return Ok(());
    }
    // Said first: an installed eSIM's code cannot be scanned again, whatever the picture.
    outln!("{}", verdict::text(&verdict::of(esim, chrono::Utc::now())));
    out!("{}", qr_text(&matrix.to_half_blocks(), std::io::stdout().is_terminal()));
    let mut t = Table::of(&["FIELD", "VALUE"]);
    t.row(vec!["ICCID".into(), iccid.to_string()]);
    t.row(vec!["Activation code".into(), code.clone()]);
    if let Some(p) = parts {
        t.row(vec!["SM-DP+ address".into(), p.smdp_address]);
        t.row(vec!["Matching ID".into(), p.matching_id]);
    }
    if let Some(link) = link {
        t.row(vec!["iPhone install link".into(), link]);
    }
    out!("{}", t.render());
    Ok(())
}

fn file_error(e: file::FileError) -> CommandError {
    CommandError::Io(std::io::Error::other(e.to_string()))
}

/// The QR drawing for stdout: on a terminal, black on white whatever its colours (a camera
/// needs dark modules on a light ground, so these colours are kept even with NO_COLOR); piped,
/// the plain blocks.
fn qr_text(lines: &[String], terminal: bool) -> String {
    let mut out = String::new();
    for line in lines {
        if terminal {
            out.push_str(&format!("\x1b[30;47m{line}\x1b[0m\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
