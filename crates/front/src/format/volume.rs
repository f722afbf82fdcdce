//! Data volumes as people read them: `1 GB`, `1.5 GB`, `500 MB`.

use esimdash_domain::volume::{GB, KB, MB};

/// `1 GB`, `1.5 GB`, `500 MB`, `0 B`: one decimal at most, none when whole.
pub fn format_bytes(bytes: u64) -> String {
    // Tenths of a unit, rounded half up, in integers so that no float decides what is shown.
    let tenths_of = |unit: u64| (u128::from(bytes) * 10 + u128::from(unit) / 2) / u128::from(unit);
    // The largest unit of which there is at least one, after rounding (1023.99 MB is 1 GB).
    let (unit, name) = [(GB, "GB"), (MB, "MB"), (KB, "KB")]
        .into_iter()
        .find(|(unit, _)| tenths_of(*unit) >= 10)
        .unwrap_or((1, "B"));
    if unit == 1 {
        return format!("{bytes} B");
    }
    let tenths = tenths_of(unit);
    if tenths % 10 == 0 {
        format!("{} {name}", tenths / 10)
    } else {
        format!("{}.{} {name}", tenths / 10, tenths % 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use esimdash_domain::volume::gigabytes;

    #[test]
    fn contract_examples() {
        assert_eq!(format_bytes(1_073_741_824), "1 GB");
        assert_eq!(format_bytes(524_288_000), "500 MB");
        assert_eq!(format_bytes(gigabytes(3) / 2), "1.5 GB");
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(2048), "2 KB");
        assert_eq!(format_bytes(u64::MAX), "17179869184 GB");
        assert_eq!(
            format_bytes(gigabytes(1) - 10),
            "1 GB",
            "rounding up reaches the next unit"
        );
        assert_eq!(format_bytes(900), "900 B");
    }
}
