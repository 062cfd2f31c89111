//! Per-task fan-out: the live state of every task someone is working on or watching.
//!
//! A [`Live`] entry holds the task's current snapshot (behind an async lock: the one writer),
//! a broadcast bus carrying every applied event in order to any number of streams and waiters,
//! and the cancellation token of its executions. Entries exist only while held: executions,
//! streams, waiters and in-flight requests each hold a [`LiveGuard`], and the last guard to go
//! removes the entry (the store stays the source of truth). Taking a guard and registering on
//! the map happen under one lock, so a task never has two live entries at once.

use crate::error::A2AError;
use crate::model::{Message, Task};
use crate::store::LogEntry;
use crate::store::log::SnapshotPolicy;
use foldhash::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// How many events a slow stream may fall behind before it is re-synchronised from the log. As
/// many as a stream's own queue holds: a stream that far behind has a slow client, and reading
/// the log once is cheaper than a larger bus for every task. The bus is made (and filled, slot
/// by slot) for every new task, under the registry's lock: at 256 that was 3% of a SendMessage.
const BUS_CAPACITY: usize = 64;

/// (tenant, task id)
pub(crate) type Key = (String, String);

/// What the bus carries. Payloads are shared, not inline: the bus keeps BUS_CAPACITY slots of
/// this type for every live task, and an inline StreamResponse (hundreds of bytes) made each
/// new task allocate and fill ~100 KB, which showed as the top cost of a SendMessage.
#[derive(Debug, Clone)]
pub(crate) enum BusItem {
    /// A committed change, in sequence order (streams send the ones that are events).
    Entry(Arc<LogEntry>),
    /// The execution answered with a direct Message instead of a task.
    DirectReply(Arc<Message>),
    /// A change could not be stored: whoever waits on the task ends with this error (nothing
    /// that was not stored is ever shown).
    Failed(Arc<A2AError>),
    /// The execution with this id returned; a waiter for that execution stops waiting (a
    /// later turn of the same task may already be running: its waiters keep waiting).
    ExecutionEnded(u64),
}

/// The task's snapshot as the writer keeps it.
#[derive(Debug, Default)]
pub(crate) struct Slot {
    /// `None` until loaded from the store or created by the first event.
    pub task: Option<Task>,
    /// Whether `task` has been looked up in the store (a new task has nothing to load).
    pub loaded: bool,
    /// The execution answered with a direct Message: no task will exist.
    pub replied_with_message: bool,
    /// The task was made by a blocking wait that ended before the agent said anything, and
    /// nothing has been added to it since (see `Inner::wait`).
    pub placeholder: bool,
    /// The sequence number of the last change `task` includes (0: no task yet).
    pub version: u64,
    /// When the SQL stores get the whole body again.
    pub snapshots: SnapshotPolicy,
    /// Who runs the task, as last loaded (stores shared by several instances).
    pub lease: Option<crate::store::Lease>,
    /// The execution here that holds the task's current turn, from the message that started it
    /// until the task waits for input or ends (or the execution returns).
    pub turn: Option<u64>,
    /// A push config was set with the message that created the task: its first commit is
    /// logged (the outbox refers to log entries). See [`crate::store::Commit::log`].
    pub pushed_from_start: bool,
}

impl Slot {
    /// Forgets the task: the next use reloads it from the store. The turn is kept: it says
    /// what runs here, which a reload does not change (forgetting it made the running
    /// execution's next commit give up the task's lease).
    pub fn unload(&mut self) {
        self.task = None;
        self.loaded = false;
        self.placeholder = false;
        self.version = 0;
        self.snapshots = SnapshotPolicy::default();
        self.lease = None;
    }
}

pub(crate) struct Live {
    pub key: Key,
    pub slot: tokio::sync::Mutex<Slot>,
    pub bus: broadcast::Sender<BusItem>,
    /// Fired to stop the task's executions (each runs on a child of it); a fresh one replaces
    /// it when a cancel could not be written, so the next execution does not start stopped.
    canceller: Mutex<CancellationToken>,
    /// Open streams on this task (SendStreamingMessage and SubscribeToTask).
    pub streams: std::sync::atomic::AtomicUsize,
    /// The newest log version this instance's streams and waiters know the task at: the last
    /// entry published on the bus, or the version a stream opened at. A reload from the store
    /// past it publishes what lies between (see the task manager's `load`).
    pub shown: std::sync::atomic::AtomicU64,
    /// Executions of this task running here.
    pub executions: std::sync::atomic::AtomicUsize,
    /// Set once the task is seen terminal (committed or loaded so): every execution's sink
    /// then refuses events, also one whose task another turn or a cancel ended.
    pub ended: Arc<std::sync::atomic::AtomicBool>,
    /// Held by a CancelTask from its first look at the task to its end: concurrent cancels of
    /// one task run the executor's `cancel` once, the later ones then find the task ended.
    pub cancelling: Arc<tokio::sync::Mutex<()>>,
    /// Guards holding this entry. Counted here rather than in the map, so that a guard that
    /// shares or drops a hold while others remain needs no map lock and no key hashing.
    holds: std::sync::atomic::AtomicUsize,
}

impl Live {
    /// Publishes to every current subscriber (none is fine).
    pub fn publish(&self, item: BusItem) {
        if let BusItem::Entry(e) = &item {
            self.shown.fetch_max(e.seq, Ordering::AcqRel);
        }
        let _ = self.bus.send(item);
    }

    fn canceller(&self) -> std::sync::MutexGuard<'_, CancellationToken> {
        self.canceller.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stops every execution of the task running here.
    pub fn cancel(&self) {
        self.canceller().cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.canceller().is_cancelled()
    }

    /// The token that stops the task's executions now.
    pub fn cancel_token(&self) -> CancellationToken {
        self.canceller().clone()
    }

    /// After a cancel that could not be written (the task lives on, stopped): the next
    /// execution gets a token of its own instead of one already fired.
    pub fn rearm_cancel(&self) {
        let mut token = self.canceller();
        if token.is_cancelled() {
            *token = CancellationToken::new();
        }
    }
}

/// The map of live entries, shared by the manager and every guard.
#[derive(Clone, Default)]
pub(crate) struct Registry {
    map: Arc<Mutex<HashMap<Key, Arc<Live>>>>,
}

impl Registry {
    /// The live entry of `key` (created empty if absent), held until the guard drops.
    pub fn acquire(&self, key: Key) -> LiveGuard {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let live = map.entry(key.clone()).or_insert_with(|| {
            let (bus, _) = broadcast::channel(BUS_CAPACITY);
            Arc::new(Live {
                key,
                slot: Default::default(),
                bus,
                canceller: Default::default(),
                streams: Default::default(),
                shown: Default::default(),
                executions: Default::default(),
                ended: Default::default(),
                cancelling: Default::default(),
                holds: Default::default(),
            })
        });
        self.hold(live)
    }

    /// A guard on `live`; called with the map's lock held, so no release can remove the entry
    /// between the lookup and the count.
    fn hold(&self, live: &Arc<Live>) -> LiveGuard {
        live.holds.fetch_add(1, Ordering::AcqRel);
        LiveGuard { registry: self.clone(), live: live.clone() }
    }

    /// The live entry of `key` if someone holds it now.
    pub fn get(&self, key: &Key) -> Option<LiveGuard> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        Some(self.hold(map.get(key)?))
    }

    /// A hold on every live entry (to check each against the store).
    pub fn all(&self) -> Vec<LiveGuard> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.values().map(|live| self.hold(live)).collect()
    }

    /// A hold on every entry with an execution running here.
    pub fn running(&self) -> Vec<LiveGuard> {
        self.all().into_iter().filter(|g| g.executions.load(Ordering::Acquire) > 0).collect()
    }

    /// Number of live entries (for tests and metrics).
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Drops one hold on `live`; the last one removes the entry from the map. A hold taken
    /// meanwhile (only under the map's lock) keeps it: the count is read again under the lock.
    fn release(&self, live: &Arc<Live>) {
        if live.holds.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if live.holds.load(Ordering::Acquire) == 0 && map.get(&live.key).is_some_and(|l| Arc::ptr_eq(l, live)) {
            map.remove(&live.key);
        }
    }
}

/// A hold on a live entry; the entry goes away with its last guard.
pub(crate) struct LiveGuard {
    registry: Registry,
    live: Arc<Live>,
}

impl LiveGuard {
    /// The entry itself, without a hold: it stays usable but may leave the map meanwhile.
    pub fn live(&self) -> Arc<Live> {
        self.live.clone()
    }

    /// Another hold on the same entry: it stays in the map while this guard holds it, so no
    /// lookup is needed.
    pub fn share(&self) -> LiveGuard {
        self.live.holds.fetch_add(1, Ordering::AcqRel);
        LiveGuard { registry: self.registry.clone(), live: self.live.clone() }
    }
}

impl std::ops::Deref for LiveGuard {
    type Target = Live;
    fn deref(&self) -> &Live {
        &self.live
    }
}

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.registry.release(&self.live);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str) -> Key {
        ("t".to_owned(), id.to_owned())
    }

    #[test]
    fn an_entry_lives_while_any_guard_holds_it() {
        let registry = Registry::default();
        let first = registry.acquire(key("a"));
        let shared = first.share();
        let looked_up = registry.get(&key("a")).expect("held, so found");
        assert!(Arc::ptr_eq(&first.live(), &looked_up.live()));
        drop(first);
        drop(looked_up);
        assert_eq!(registry.len(), 1, "the shared guard still holds it");
        drop(shared);
        assert_eq!(registry.len(), 0);
        assert!(registry.get(&key("a")).is_none());
        // A new entry after the last guard went is a fresh one.
        let again = registry.acquire(key("a"));
        assert_eq!(again.live.holds.load(Ordering::Acquire), 1);
    }

    /// Guards taken and dropped on many threads at once, by acquire, get and share: the entry is
    /// never removed while held (a guard always finds itself in the map), and the map ends empty.
    #[test]
    fn concurrent_holds_never_lose_a_held_entry_and_leave_nothing_behind() {
        let registry = Registry::default();
        std::thread::scope(|scope| {
            for thread in 0..8 {
                let registry = registry.clone();
                scope.spawn(move || {
                    for i in 0..2_000 {
                        let k = key(&format!("{}", (i + thread) % 3));
                        let guard = if i % 2 == 0 {
                            registry.acquire(k.clone())
                        } else {
                            registry.get(&k).unwrap_or_else(|| registry.acquire(k.clone()))
                        };
                        let shared = guard.share();
                        drop(guard);
                        let found = registry.get(&k).expect("a held entry stays in the map");
                        assert!(Arc::ptr_eq(&found.live(), &shared.live()));
                    }
                });
            }
        });
        assert_eq!(registry.len(), 0);
    }
}
