//! One registry for everything that runs in the background for the account: API requests,
//! CSV exports, QR images being written and the saved inventory index being read. Each has an id; its answer comes back with that id
//! and its result only, and the registry says what it was. So "is anything loading", "drop a
//! stale answer", "cancel what nobody waits for" and the clean-up after a 401 or a switch of
//! account are each written once, for every kind.

use super::tab::Tab;
use crate::msg::{Effect, ExportJob, JobId, Request};
use esimdash_domain::iccid::Iccid;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Ids are unique in the process, not only in one account's registry: an answer that comes
/// for an account no longer in use can never be taken for one of the new account's.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Who started a job, and so who its answer goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The screen and the account itself: the header's profile and money, the profile being
    /// saved, the inventory index's reads.
    App,
    Tab(Tab),
    /// The window open (a plan's detail, a form).
    Window,
}

/// Something running in the background.
#[derive(Debug, Clone, PartialEq)]
pub enum Job {
    Request(Request),
    /// A CSV export (its progress is the account's `export`).
    Export,
    /// An eSIM's QR code being written as a PNG: what to ask if its file exists.
    SaveQr {
        iccid: Iccid,
        code: String,
    },
    /// The marked eSIMs' QR codes being written into a folder (how many).
    SaveQrFolder(usize),
    /// The inventory index an earlier session saved, being read.
    LoadInventory,
    /// A bulk top-up paying (never cancelled: it is stopped after its payment in flight).
    BulkTopup,
}

impl Job {
    /// Whether it may be cancelled: a read or an export, never a write (its answer tells
    /// whether something changed on the server).
    pub fn cancellable(&self) -> bool {
        match self {
            Job::Request(request) => !request.writes(),
            Job::Export => true,
            Job::SaveQr { .. } | Job::SaveQrFolder(_) | Job::LoadInventory | Job::BulkTopup => false,
        }
    }
}

/// A job and who started it: its answer goes to its owner.
#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    pub job: Job,
    pub owner: Owner,
}

#[derive(Debug, Default)]
pub struct Jobs {
    live: BTreeMap<JobId, Running>,
}

impl Jobs {
    /// Registers `owner`'s job; the caller sends the effect that starts it.
    pub fn start(&mut self, job: Job, owner: Owner) -> JobId {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        self.live.insert(id, Running { job, owner });
        id
    }

    /// Its answer came: what it was and whose, if it is still awaited.
    pub fn finish(&mut self, id: JobId) -> Option<Running> {
        self.live.remove(&id)
    }

    /// What runs now.
    pub fn running(&self) -> impl Iterator<Item = &Job> {
        self.live.values().map(|r| &r.job)
    }

    /// The job of this id, while it runs.
    pub fn running_job(&self, id: JobId) -> Option<&Job> {
        self.live.get(&id).map(|r| &r.job)
    }

    /// Whether anything of the screen is being read or sent (the spinner turns). Writing a
    /// file has its own line on the status bar.
    pub fn loading(&self) -> bool {
        self.running().any(|j| matches!(j, Job::Request(_)))
    }

    /// Whether a write is in flight (its answer tells whether something changed), or a bulk
    /// top-up is paying.
    pub fn writing(&self) -> bool {
        self.running()
            .any(|j| matches!(j, Job::Request(request) if request.writes()) || matches!(j, Job::BulkTopup))
    }

    /// The reads in flight, each with who asked.
    pub fn reads(&self) -> Vec<(JobId, Request, Owner)> {
        self.live
            .iter()
            .filter_map(|(id, running)| match &running.job {
                Job::Request(request) if !request.writes() => Some((*id, request.clone(), running.owner)),
                _ => None,
            })
            .collect()
    }

    /// Stops a job nobody waits for: forgotten here, aborted in the runtime.
    pub fn cancel(&mut self, id: JobId, effects: &mut Vec<Effect>) {
        if let Some(running) = self.live.remove(&id)
            && running.job.cancellable()
        {
            effects.push(Effect::Cancel(id));
        }
    }

    /// The jobs `which` picks, forgotten: what can be is cancelled; the answers of the rest
    /// find nothing waiting.
    pub fn drain(&mut self, which: impl Fn(&Job) -> bool, effects: &mut Vec<Effect>) -> Vec<(JobId, Running)> {
        let (taken, kept) = std::mem::take(&mut self.live)
            .into_iter()
            .partition(|(_, running)| which(&running.job));
        self.live = kept;
        let taken: Vec<(JobId, Running)> = taken.into_iter().collect();
        for (id, running) in &taken {
            if running.job.cancellable() {
                effects.push(Effect::Cancel(*id));
            }
        }
        taken
    }

    /// Takes over jobs another registry started (a QR file still being written when the
    /// account changes: its answer is still told).
    pub fn adopt(&mut self, jobs: Vec<(JobId, Running)>) {
        self.live.extend(jobs);
    }
}

/// Where a tab or a form sends what it needs: the registry and the effects of this update. The
/// requests it sends are recorded as its owner's, so their answers come back to it.
pub struct Outbox<'a> {
    jobs: &'a mut Jobs,
    effects: &'a mut Vec<Effect>,
    owner: Owner,
}

impl<'a> Outbox<'a> {
    /// The app's own outbox.
    pub fn new(jobs: &'a mut Jobs, effects: &'a mut Vec<Effect>) -> Self {
        Self {
            jobs,
            effects,
            owner: Owner::App,
        }
    }

    /// An outbox for what `owner` sends.
    pub fn owned(jobs: &'a mut Jobs, effects: &'a mut Vec<Effect>, owner: Owner) -> Self {
        Self { jobs, effects, owner }
    }

    /// What runs now.
    pub fn running(&self) -> impl Iterator<Item = &Job> {
        self.jobs.running()
    }

    /// Whose jobs this outbox starts.
    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// The same registry and effects, for what `owner` sends.
    pub fn owned_by(&mut self, owner: Owner) -> Outbox<'_> {
        Outbox {
            jobs: self.jobs,
            effects: self.effects,
            owner,
        }
    }

    /// Sends a request; the caller records the id in the request's slot.
    pub fn send(&mut self, request: Request) -> JobId {
        let id = self.jobs.start(Job::Request(request.clone()), self.owner);
        self.effects.push(Effect::Send { id, request });
        id
    }

    /// Starts writing a CSV export.
    pub fn export(&mut self, job: ExportJob) -> JobId {
        let id = self.jobs.start(Job::Export, self.owner);
        self.effects.push(Effect::Export { id, job });
        id
    }

    /// Starts reading the account's saved inventory index.
    pub fn load_inventory(&mut self) {
        let id = self.jobs.start(Job::LoadInventory, self.owner);
        self.effects.push(Effect::LoadInventory(id));
    }

    /// Starts writing the QR codes of `wanted` into a new folder.
    pub fn save_qr_folder(&mut self, wanted: Vec<esimdash_front::export::qr_folder::Wanted>) {
        let id = self.jobs.start(Job::SaveQrFolder(wanted.len()), self.owner);
        self.effects.push(Effect::SaveQrFolder { id, wanted });
    }

    /// Starts a bulk top-up.
    pub fn bulk_topup(&mut self, order: crate::msg::BulkTopup) -> JobId {
        let id = self.jobs.start(Job::BulkTopup, self.owner);
        self.effects.push(Effect::BulkTopup { id, order });
        id
    }

    /// Stops a bulk run after its payment in flight.
    pub fn stop_bulk(&mut self, run: JobId) {
        self.effects.push(Effect::StopBulk(run));
    }

    /// Starts writing an eSIM's QR code as a PNG (`replace`: the user said yes to replacing).
    pub fn save_qr(&mut self, iccid: Iccid, code: String, replace: bool) {
        let id = self.jobs.start(
            Job::SaveQr {
                iccid: iccid.clone(),
                code: code.clone(),
            },
            self.owner,
        );
        self.effects.push(Effect::SaveQr {
            id,
            iccid,
            code,
            replace,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whoever sends through an outbox is recorded as the job's owner, and the answer's job
    /// says so: that is how an answer finds its way back.
    #[test]
    fn a_job_remembers_who_started_it() {
        let (mut jobs, mut effects) = (Jobs::default(), Vec::new());
        let mut out = Outbox::new(&mut jobs, &mut effects);
        let own = out.send(Request::Profile);
        let tabs = out.owned_by(Owner::Tab(Tab::Orders)).send(Request::Plans);
        let form = Outbox::owned(&mut jobs, &mut effects, Owner::Window).export(ExportJob::Plans(Vec::new()));
        assert_eq!(jobs.reads().len(), 2);
        assert_eq!(jobs.finish(tabs).map(|r| r.owner), Some(Owner::Tab(Tab::Orders)));
        assert_eq!(jobs.finish(own).map(|r| r.owner), Some(Owner::App));
        assert_eq!(jobs.finish(form).map(|r| r.owner), Some(Owner::Window));
        assert_eq!(jobs.finish(form), None, "an answer is taken once");
        assert_eq!(effects.len(), 3);
    }
}
