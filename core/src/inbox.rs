//! How runtime threads hand work to a host language's event loop (asyncio's, say) without
//! waiting for it: an [`Inbox`] of jobs, and a socket the loop watches for "there is work".
//!
//! A runtime thread queues a job and, only when the queue was empty, writes one byte to the
//! socket; the loop (its reader callback on that socket) takes every queued job at once. So a
//! burst of requests costs the loop one wake-up, and no runtime thread waits on the host (its
//! lock, or its interpreter). After a batch the loop should keep looking for the next one for a
//! moment ([`Inbox::stay_awake`]) instead of sleeping: a wake-up costs tens of microseconds
//! on a virtual machine, about what a short executor's whole run costs.
//!
//! [`Run`] is one job's host task once the loop started it, kept so that it can be canceled.

use crate::executor::HOST_SPIN;
use std::io::{self, Read, Write};
use std::mem;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Queue<J> {
    jobs: Vec<J>,
    /// A wake-up byte is in the socket and not yet read.
    armed: bool,
    closed: bool,
}

/// Jobs of type `J` for one host loop.
pub struct Inbox<J> {
    queue: Mutex<Queue<J>>,
    wake: UnixStream,
    /// Until when the loop keeps looking for jobs without sleeping.
    awake_until: Mutex<Option<Instant>>,
}

/// The loop's end of the wake-up socket: watch its file descriptor for reading, and hand it to
/// [`Inbox::take`].
pub struct Watched(pub UnixStream);

impl<J> Inbox<J> {
    pub fn new() -> io::Result<(Arc<Self>, Watched)> {
        let (wake, watched) = UnixStream::pair()?;
        wake.set_nonblocking(true)?;
        watched.set_nonblocking(true)?;
        let queue = Mutex::new(Queue { jobs: Vec::new(), armed: false, closed: false });
        Ok((Arc::new(Inbox { queue, wake, awake_until: Mutex::default() }), Watched(watched)))
    }

    /// Queues `job`; gives it back once the inbox is closed (no loop will run it).
    pub fn push(&self, job: J) -> Result<(), J> {
        let mut queue = lock(&self.queue);
        if queue.closed {
            return Err(job);
        }
        queue.jobs.push(job);
        if mem::replace(&mut queue.armed, true) {
            return Ok(());
        }
        drop(queue);
        // WouldBlock: the socket is full of unread wake-ups already.
        let _ = (&self.wake).write(&[1]);
        Ok(())
    }

    /// On the loop: every queued job, oldest first. `from_socket`: called because the socket is
    /// readable, so its bytes are read whatever the queue says; otherwise (a turn of
    /// [`Inbox::stay_awake`]) only when a byte was written, as a read that finds nothing is a
    /// wasted system call on every turn of a busy loop.
    pub fn take(&self, watched: &Watched, from_socket: bool) -> Vec<J> {
        if from_socket || lock(&self.queue).armed {
            // One read empties the socket in practice (a byte is written only when the queue
            // was not armed); a full buffer means more may wait. Outside the queue's lock, so no
            // runtime thread waits on a system call to queue a job.
            let mut buf = [0u8; 64];
            while matches!((&watched.0).read(&mut buf), Ok(n) if n == buf.len()) {}
        }
        let mut queue = lock(&self.queue);
        queue.armed = false;
        mem::take(&mut queue.jobs)
    }

    /// Refuses new jobs from now on, and gives back the queued ones (for the loop to fail them).
    pub fn close(&self) -> Vec<J> {
        let mut queue = lock(&self.queue);
        queue.closed = true;
        mem::take(&mut queue.jobs)
    }

    /// On the loop, after a [`Inbox::take`]: whether to look for jobs again on the loop's next
    /// turn instead of sleeping until the socket wakes it. Yes for [`HOST_SPIN`] after the
    /// last batch that had jobs; idle, the loop sleeps again.
    pub fn stay_awake(&self, had_jobs: bool) -> bool {
        let now = Instant::now();
        let mut until = lock(&self.awake_until);
        if had_jobs {
            *until = Some(now + HOST_SPIN);
        }
        let awake = until.is_some_and(|deadline| now < deadline) && !lock(&self.queue).closed;
        if !awake {
            *until = None;
        }
        awake
    }
}

/// One job's host task (`T`), from the loop's start of it until it ends, so that it can be
/// canceled; and whether it was canceled before it began.
pub struct Run<T> {
    /// The task, and whether it has reported its outcome.
    task: Mutex<(Option<T>, bool)>,
    canceled: AtomicBool,
}

impl<T> Default for Run<T> {
    fn default() -> Self {
        Self { task: Mutex::new((None, false)), canceled: AtomicBool::new(false) }
    }
}

impl<T> Run<T> {
    /// Keeps the task to cancel, unless it ended already (a host may run the task's first
    /// step, even all of it, as it is made).
    pub fn began(&self, task: T) {
        let mut slot = lock(&self.task);
        if !slot.1 {
            slot.0 = Some(task);
        }
    }

    /// Forgets the task as it ends (call on the loop, so a runtime thread dropping the last
    /// `Arc<Run>` drops no host object).
    pub fn finished(&self) {
        let mut task = lock(&self.task);
        task.1 = true;
        drop(task.0.take());
    }

    /// Marks the run canceled and gives its task (to cancel on the loop), if it is running.
    pub fn cancel(&self) -> Option<T> {
        self.canceled.store(true, Ordering::Release);
        lock(&self.task).0.take()
    }

    /// Canceled before the loop began it: it should not begin.
    pub fn is_canceled(&self) -> bool {
        self.canceled.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_jobs_writes_one_wake_up_and_is_taken_at_once() {
        let (inbox, watched) = Inbox::new().unwrap();
        for job in 0..3 {
            inbox.push(job).unwrap();
        }
        let mut buf = [0u8; 8];
        assert_eq!((&watched.0).read(&mut buf).unwrap(), 1, "one byte for three jobs");
        assert_eq!(inbox.take(&watched, true), vec![0, 1, 2]);
        // Not armed: a turn without the socket reads nothing and finds nothing.
        assert!(inbox.take(&watched, false).is_empty());
        inbox.push(3).unwrap();
        assert_eq!(inbox.take(&watched, false), vec![3], "an armed turn reads the new byte");
        assert!((&watched.0).read(&mut buf).is_err());
    }

    #[test]
    fn a_closed_inbox_refuses_jobs_and_gives_back_the_queued_ones() {
        let (inbox, _watched) = Inbox::new().unwrap();
        inbox.push("queued").unwrap();
        assert_eq!(inbox.close(), vec!["queued"]);
        assert_eq!(inbox.push("late"), Err("late"));
        assert!(!inbox.stay_awake(true), "a closed inbox's loop sleeps");
    }

    #[test]
    fn the_loop_stays_awake_only_for_a_moment_after_jobs() {
        let (inbox, _watched) = Inbox::<()>::new().unwrap();
        assert!(!inbox.stay_awake(false), "idle: sleep");
        assert!(inbox.stay_awake(true));
        std::thread::sleep(HOST_SPIN * 2);
        assert!(!inbox.stay_awake(false), "the moment passed");
    }

    #[test]
    fn a_run_canceled_before_it_began_is_known_and_a_finished_one_keeps_no_task() {
        let run = Run::default();
        assert!(!run.is_canceled());
        run.began("task");
        assert_eq!(run.cancel(), Some("task"));
        assert!(run.is_canceled());
        let run = Run::default();
        run.finished();
        run.began("eager task that already ended");
        assert_eq!(run.cancel(), None);
    }
}
