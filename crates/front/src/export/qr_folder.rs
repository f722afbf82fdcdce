//! Every marked eSIM's QR code, written as `<ICCID>.png` into one new folder of the export
//! directory: for an agent handing a business customer the codes of all their eSIMs at once.
//! An eSIM whose record the dashboard does not have is found first (by the lookup, or at the
//! index's place in the list); one that fails is named with its reason in `errors.txt` there,
//! so that no failure is told only by a message that fades.

use super::file::{self, Existing};
use esimdash_api::model::{Esim, Whereabouts};
use esimdash_api::{Client, Found};
use esimdash_domain::iccid::EsimIccid;
use esimdash_qr::{FILE_SCALE, QrMatrix};
use std::path::{Path, PathBuf};

/// An eSIM whose QR code is wanted: its record when at hand, else where the index saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Wanted {
    pub iccid: EsimIccid,
    pub esim: Option<Box<Esim>>,
    pub seen: Option<Whereabouts>,
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub folder: PathBuf,
    pub written: usize,
    /// (ICCID, why), also in `errors.txt` in the folder.
    pub failed: Vec<(EsimIccid, String)>,
}

/// Writes the QR codes of `wanted` into a new folder `esimdash-qr-<time>` of `dir`.
pub async fn write(client: &Client, dir: &Path, wanted: Vec<Wanted>) -> Result<Written, String> {
    let folder = new_folder(dir)?;
    let mut written = 0;
    let mut failed = Vec::new();
    for one in wanted {
        match write_one(client, &folder, &one).await {
            Ok(()) => written += 1,
            Err(why) => failed.push((one.iccid, why)),
        }
    }
    if !failed.is_empty() {
        let text: String = failed.iter().map(|(iccid, why)| format!("{iccid}: {why}\n")).collect();
        file::write(&folder.join("errors.txt"), text.as_bytes(), Existing::Replace).map_err(|e| e.to_string())?;
    }
    Ok(Written {
        folder,
        written,
        failed,
    })
}

/// `esimdash-qr-<time>`, `-2`, `-3` … : never an existing folder.
fn new_folder(dir: &Path) -> Result<PathBuf, String> {
    let stem = file::timed_stem("qr");
    for folder in file::numbered(dir, &stem, "") {
        match std::fs::create_dir(&folder) {
            Ok(()) => return Ok(folder),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("{}: {e}", folder.display())),
        }
    }
    Err(format!("no free folder name for {stem} in {}", dir.display()))
}

async fn write_one(client: &Client, folder: &Path, one: &Wanted) -> Result<(), String> {
    // A name from the API is only used once it is a valid ICCID: it could name any path.
    let iccid = one.iccid.valid().map_err(|e| format!("not a valid ICCID ({e})"))?;
    let found;
    let esim = match &one.esim {
        Some(esim) => esim,
        None => {
            found = client.find_esim_at(iccid, one.seen).await.map_err(|e| e.to_string())?;
            match &found {
                Found::Esim(esim) => esim,
                Found::Absent => return Err("no such eSIM in this account".to_string()),
                Found::Unknown(searched) => return Err(searched.describe(iccid)),
            }
        }
    };
    let code = client
        .activation_code(esim)
        .await
        .and_then(|code| esimdash_domain::lpa::checked_code(&code))?;
    let png = QrMatrix::encode(&code).and_then(|m| m.to_png(FILE_SCALE))?;
    file::write(&folder.join(format!("{iccid}.png")), &png, Existing::Keep).map_err(|e| e.to_string())?;
    Ok(())
}
