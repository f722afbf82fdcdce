//! Which connections are held: up to a fixed number, the oldest idle one pushed out for a
//! newcomer, none that is being answered.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

/// How long a new connection waits for the one it pushed out to close.
const MAKE_ROOM: Duration = Duration::from_secs(1);

/// The connections held, oldest first.
pub(crate) struct Open {
    most: usize,
    /// One per connection held, given back when its socket is closed: the hard bound.
    permits: Arc<Semaphore>,
    held: Mutex<BTreeMap<u64, Held>>,
    next: AtomicU64,
}

struct Held {
    busy: Arc<AtomicBool>,
    /// Dropped to push the connection out.
    _push_out: oneshot::Sender<()>,
}

/// A connection's place among the held ones, given up when it is dropped.
pub(crate) struct Place {
    id: u64,
    busy: Arc<AtomicBool>,
    pub(crate) pushed_out: oneshot::Receiver<()>,
    open: Arc<Open>,
    _permit: OwnedSemaphorePermit,
}

impl Open {
    pub(crate) fn new(most: usize) -> Self {
        Self {
            most: most.max(1),
            permits: Arc::new(Semaphore::new(most.max(1))),
            held: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(0),
        }
    }

    fn held(&self) -> MutexGuard<'_, BTreeMap<u64, Held>> {
        self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A place for a new connection: a free one, or the oldest idle connection's.
    pub(crate) async fn admit(self: &Arc<Self>) -> Option<Place> {
        let permit = match self.permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                if !self.push_out_oldest_idle() {
                    return None;
                }
                tokio::time::timeout(MAKE_ROOM, self.permits.clone().acquire_owned())
                    .await
                    .ok()?
                    .ok()?
            }
        };
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let busy = Arc::new(AtomicBool::new(false));
        let (push_out, pushed_out) = oneshot::channel();
        self.held().insert(
            id,
            Held {
                busy: busy.clone(),
                _push_out: push_out,
            },
        );
        Some(Place {
            id,
            busy,
            pushed_out,
            open: self.clone(),
            _permit: permit,
        })
    }

    /// Whether a connection was pushed out: the oldest one no request of which is being answered.
    fn push_out_oldest_idle(&self) -> bool {
        let mut held = self.held();
        let oldest = held
            .iter()
            .find(|(_, connection)| !connection.busy.load(Ordering::Acquire))
            .map(|(&id, _)| id);
        oldest.and_then(|id| held.remove(&id)).is_some()
    }

    /// Once every connection is closed: idle ones are pushed out as they fall idle, the ones
    /// being answered finish first.
    pub(crate) async fn drained(&self) {
        loop {
            self.held()
                .retain(|_, connection| connection.busy.load(Ordering::Acquire));
            if self.permits.available_permits() == self.most {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Place {
    pub(crate) fn busy(&self) -> Busy {
        Busy(self.busy.clone())
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.open.held().remove(&self.id);
    }
}

/// Whether a connection's request is being answered.
pub(crate) struct Busy(Arc<AtomicBool>);

impl Busy {
    /// Busy until the guard is dropped (also when the answer is dropped unfinished).
    pub(crate) fn mark(&self) -> Answering {
        self.0.store(true, Ordering::Release);
        Answering(self.0.clone())
    }
}

pub(crate) struct Answering(Arc<AtomicBool>);

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}
