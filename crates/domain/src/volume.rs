//! Data volumes are bytes (upstream): 1073741824 is 1 GB, 524288000 is 500 MB.

pub const KB: u64 = 1024;
pub const MB: u64 = 1024 * KB;
pub const GB: u64 = 1024 * MB;

/// Whole gigabytes or megabytes as bytes, for building plans.
pub const fn gigabytes(n: u64) -> u64 {
    n * GB
}

pub const fn megabytes(n: u64) -> u64 {
    n * MB
}
