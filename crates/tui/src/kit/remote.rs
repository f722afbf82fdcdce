//! One state for everything fetched (Elm's RemoteData): not asked, loading (with the request id,
//! so a stale answer can be told apart), loaded (with when), or failed (with the error and when).
//! A reload keeps what was shown before as `previous`, so a view can show it marked as stale
//! instead of going blank.

use crate::msg::JobId;
use esimdash_api::ApiError;
use std::time::Instant;

#[derive(Debug, Clone, PartialEq)]
pub struct Loaded<T> {
    pub value: T,
    pub at: Instant,
}

#[derive(Debug, Clone)]
pub enum Remote<T> {
    NotAsked {
        previous: Option<Loaded<T>>,
    },
    Loading {
        id: JobId,
        previous: Option<Loaded<T>>,
    },
    Loaded(Loaded<T>),
    Failed {
        error: ApiError,
        at: Instant,
        previous: Option<Loaded<T>>,
    },
}

impl<T> Default for Remote<T> {
    fn default() -> Self {
        Remote::NotAsked { previous: None }
    }
}

impl<T> Remote<T> {
    /// The freshest value there is: the loaded one, or the one shown before a reload.
    pub fn value(&self) -> Option<&T> {
        self.loaded().map(|l| &l.value)
    }

    pub fn loaded(&self) -> Option<&Loaded<T>> {
        match self {
            Remote::Loaded(l) => Some(l),
            Remote::NotAsked { previous } | Remote::Loading { previous, .. } | Remote::Failed { previous, .. } => {
                previous.as_ref()
            }
        }
    }

    pub fn value_mut(&mut self) -> Option<&mut T> {
        match self {
            Remote::Loaded(l) => Some(&mut l.value),
            Remote::NotAsked { previous } | Remote::Loading { previous, .. } | Remote::Failed { previous, .. } => {
                previous.as_mut().map(|l| &mut l.value)
            }
        }
    }

    /// Whether a request should be sent for it now.
    pub fn wanted(&self) -> bool {
        matches!(self, Remote::NotAsked { .. })
    }

    pub fn is_loading(&self) -> bool {
        matches!(self, Remote::Loading { .. })
    }

    pub fn error(&self) -> Option<&ApiError> {
        match self {
            Remote::Failed { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Whether the value shown is not the answer to the latest request (reloading or failed).
    pub fn is_stale(&self) -> bool {
        !matches!(self, Remote::Loaded(_)) && self.loaded().is_some()
    }

    fn take_previous(&mut self) -> Option<Loaded<T>> {
        match std::mem::take(self) {
            Remote::Loaded(l) => Some(l),
            Remote::NotAsked { previous } | Remote::Loading { previous, .. } | Remote::Failed { previous, .. } => {
                previous
            }
        }
    }

    /// A request for it was sent.
    pub fn start(&mut self, id: JobId) {
        let previous = self.take_previous();
        *self = Remote::Loading { id, previous };
    }

    /// Whether `id` is the request it waits for.
    pub fn awaits(&self, id: JobId) -> bool {
        matches!(self, Remote::Loading { id: mine, .. } if *mine == id)
    }

    /// Stores the answer if it is the one awaited; `false`: stale, dropped.
    pub fn resolve(&mut self, id: JobId, value: T, at: Instant) -> bool {
        if !self.awaits(id) {
            return false;
        }
        *self = Remote::Loaded(Loaded { value, at });
        true
    }

    /// Records the failure if it is of the request awaited.
    pub fn fail(&mut self, id: JobId, error: ApiError, at: Instant) -> bool {
        if !self.awaits(id) {
            return false;
        }
        let previous = self.take_previous();
        *self = Remote::Failed { error, at, previous };
        true
    }

    /// Wanted again (after `r`, or a change on the server); what is shown stays until then.
    pub fn invalidate(&mut self) {
        let previous = self.take_previous();
        *self = Remote::NotAsked { previous };
    }

    /// The request in flight is no longer awaited (its answer will be dropped): asked again
    /// when next wanted.
    pub fn abandon(&mut self, id: JobId) {
        if self.awaits(id) {
            self.invalidate();
        }
    }
}

/// A place that awaits one answer: how `App` matches any answer to where it goes, and how it
/// finds requests nobody waits for any more, without listing the places by hand.
pub trait Slot {
    fn awaits(&self, id: JobId) -> bool;
    fn abandon(&mut self, id: JobId);
    fn fail(&mut self, id: JobId, error: ApiError, at: Instant);
}

impl<T> Slot for Remote<T> {
    fn awaits(&self, id: JobId) -> bool {
        Remote::awaits(self, id)
    }
    fn abandon(&mut self, id: JobId) {
        Remote::abandon(self, id)
    }
    fn fail(&mut self, id: JobId, error: ApiError, at: Instant) {
        Remote::fail(self, id, error, at);
    }
}

/// The purchase form's one request at a time.
impl Slot for Option<JobId> {
    fn awaits(&self, id: JobId) -> bool {
        *self == Some(id)
    }
    fn abandon(&mut self, id: JobId) {
        if *self == Some(id) {
            *self = None;
        }
    }
    /// The form shows the error itself (its stage says what happened).
    fn fail(&mut self, id: JobId, _error: ApiError, _at: Instant) {
        self.abandon(id);
    }
}

/// What a place shows when the answer it got is not the kind its request asks for.
pub fn misfit() -> ApiError {
    ApiError::Setup("the API's answer did not fit the request".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use esimdash_api::Endpoint;

    #[test]
    fn a_reload_keeps_the_old_value_as_stale_and_drops_stale_answers() {
        let now = Instant::now();
        let mut r: Remote<u32> = Remote::default();
        assert!(r.wanted());
        r.start(1);
        assert!(!r.resolve(2, 9, now), "another request's answer is dropped");
        assert!(r.resolve(1, 5, now));
        assert_eq!((r.value(), r.is_stale()), (Some(&5), false));
        r.invalidate();
        r.start(3);
        assert_eq!((r.value(), r.is_stale(), r.is_loading()), (Some(&5), true, true));
        let error = ApiError::Api {
            endpoint: Endpoint::new("GET", "/x"),
            status: 500,
            message: "boom".into(),
        };
        assert!(r.fail(3, error, now));
        assert!(
            r.error().is_some() && !r.wanted(),
            "a failure is not asked again by itself"
        );
        assert_eq!(r.value(), Some(&5));
        r.invalidate();
        r.start(4);
        r.abandon(4);
        assert!(r.wanted());
    }
}
