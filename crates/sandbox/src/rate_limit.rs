//! Per-key request budget in fixed windows (default 120 a minute, spec), with what the
//! `X-RateLimit-*` headers and `Retry-After` report.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct RateLimiter {
    window: Duration,
    windows: Mutex<HashMap<String, (Instant, u32)>>,
    /// Requests refused with 429 so far (tests count them).
    refused: std::sync::atomic::AtomicU64,
}

/// The outcome of counting one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Whole seconds until the window resets, at least 1.
    pub reset_secs: u64,
}

impl RateLimiter {
    pub fn new(window: Duration) -> Self {
        Self {
            window,
            windows: Mutex::new(HashMap::new()),
            refused: Default::default(),
        }
    }

    pub fn check(&self, key: &str, limit: u32, now: Instant) -> Verdict {
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let entry = windows.entry(key.to_string()).or_insert((now, 0));
        if now.duration_since(entry.0) >= self.window {
            *entry = (now, 0);
        }
        let left = self.window.saturating_sub(now.duration_since(entry.0));
        let reset_secs = (left.as_millis().div_ceil(1000) as u64).max(1);
        if entry.1 >= limit {
            self.refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Verdict {
                allowed: false,
                limit,
                remaining: 0,
                reset_secs,
            };
        }
        entry.1 += 1;
        Verdict {
            allowed: true,
            limit,
            remaining: limit - entry.1,
            reset_secs,
        }
    }
}

impl RateLimiter {
    /// How many requests were refused for their key's budget.
    pub fn refused(&self) -> u64 {
        self.refused.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_key_and_resets_with_the_window() {
        let rl = RateLimiter::new(Duration::from_secs(60));
        let t0 = Instant::now();
        assert_eq!(rl.check("a", 2, t0).remaining, 1);
        assert_eq!(rl.check("a", 2, t0).remaining, 0);
        let refused = rl.check("a", 2, t0 + Duration::from_secs(10));
        assert!(!refused.allowed);
        assert_eq!(refused.reset_secs, 50);
        assert!(rl.check("b", 2, t0).allowed, "another key has its own budget");
        assert!(rl.check("a", 2, t0 + Duration::from_secs(60)).allowed);
    }
}
