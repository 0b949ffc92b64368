//! [`DropQueue`]: the bounded hand-off between a transport callback and a writer.
//!
//! A zenoh callback must never block: stalling it stalls the whole session, liveliness
//! included. So when the consumer (the disk) falls behind, the queue keeps the newest messages,
//! evicts the oldest, and counts every eviction; the count ends up in `metadata.yaml` as
//! `dropped_messages`, so a gap is reported rather than read as a publisher that stopped.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

struct State<T> {
    items: VecDeque<(T, usize)>,
    bytes: usize,
    dropped: u64,
    closed: bool,
    /// The consumer is blocked in `pop_timeout`.
    consumer_waiting: bool,
}

/// A bounded multi-producer, single-consumer queue that evicts its oldest items instead of
/// blocking.
pub struct DropQueue<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
    max_items: usize,
    max_bytes: usize,
}

impl<T> DropQueue<T> {
    /// A queue holding at most `max_items` items and `max_bytes` bytes (both at least 1).
    pub fn new(max_items: usize, max_bytes: usize) -> Self {
        DropQueue {
            state: Mutex::new(State {
                items: VecDeque::new(),
                bytes: 0,
                dropped: 0,
                closed: false,
                consumer_waiting: false,
            }),
            ready: Condvar::new(),
            max_items: max_items.max(1),
            max_bytes: max_bytes.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // A panicking consumer must not take the producer down with it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds an item of `bytes` bytes, evicting the oldest items while the queue is over either
    /// bound. Never waits for the consumer. Returns how many items this call dropped (an item
    /// larger than the byte bound is itself dropped).
    pub fn push(&self, item: T, bytes: usize) -> u64 {
        let mut state = self.lock();
        if state.closed || bytes > self.max_bytes {
            state.dropped += 1;
            return 1;
        }
        let mut evicted = 0;
        while state.items.len() >= self.max_items || state.bytes + bytes > self.max_bytes {
            let Some((_, old_bytes)) = state.items.pop_front() else {
                break;
            };
            state.bytes -= old_bytes;
            evicted += 1;
        }
        state.dropped += evicted;
        state.bytes += bytes;
        state.items.push_back((item, bytes));
        // The consumer only waits on an empty queue, so only the first item needs to wake it,
        // and only if it is waiting: a wake-up costs a system call.
        let wake = state.items.len() == 1 && state.consumer_waiting;
        drop(state);
        if wake {
            self.ready.notify_one();
        }
        evicted
    }

    /// Takes the oldest item, waiting up to `timeout` for one. `None` on timeout, or when the
    /// queue is closed and empty.
    pub fn pop_timeout(&self, timeout: Duration) -> Option<T> {
        let mut state = self.lock();
        if state.items.is_empty() && !state.closed && !timeout.is_zero() {
            state.consumer_waiting = true;
            state = self
                .ready
                .wait_timeout_while(state, timeout, |s| s.items.is_empty() && !s.closed)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            state.consumer_waiting = false;
        }
        let (item, bytes) = state.items.pop_front()?;
        state.bytes -= bytes;
        Some(item)
    }

    /// Moves every queued item into `out`, oldest first, without waiting.
    ///
    /// The producer is only locked out while the queue's buffer is swapped for an empty one,
    /// not while the items are moved; the emptied buffer then goes back for the producer to
    /// fill, so the queue does not grow its buffer anew after every drain.
    pub fn drain_into(&self, out: &mut Vec<T>) {
        let mut taken = {
            let mut state = self.lock();
            state.bytes = 0;
            std::mem::take(&mut state.items)
        };
        out.extend(taken.drain(..).map(|(item, _)| item));
        let mut state = self.lock();
        if state.items.is_empty() && state.items.capacity() < taken.capacity() {
            std::mem::swap(&mut state.items, &mut taken);
        }
    }

    /// Drops every queued item, counting each as dropped (as a recorder that stops while
    /// behind does with what it will not write); returns how many.
    pub fn discard_all(&self) -> u64 {
        let mut state = self.lock();
        let n = state.items.len() as u64;
        state.items.clear();
        state.bytes = 0;
        state.dropped += n;
        n
    }

    /// Items dropped so far (evicted, oversized, or pushed after close).
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    /// Items waiting.
    pub fn len(&self) -> usize {
        self.lock().items.len()
    }

    /// True when nothing is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Stops accepting items and wakes a waiting consumer; what is queued can still be taken.
    pub fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_oldest_by_count_and_counts() {
        let q = DropQueue::new(3, 1000);
        for i in 0..5 {
            q.push(i, 1);
        }
        assert_eq!(q.dropped(), 2);
        let mut out = Vec::new();
        q.drain_into(&mut out);
        assert_eq!(out, [2, 3, 4]);
    }

    #[test]
    fn evicts_oldest_by_bytes() {
        let q = DropQueue::new(100, 10);
        q.push("a", 4);
        q.push("b", 4);
        assert_eq!(q.push("c", 4), 1);
        assert_eq!(q.bytes(), 8);
        assert_eq!(q.push("huge", 11), 1);
        let mut out = Vec::new();
        q.drain_into(&mut out);
        assert_eq!(out, ["b", "c"]);
        assert_eq!(q.dropped(), 2);
    }

    #[test]
    fn close_wakes_consumer() {
        let q = std::sync::Arc::new(DropQueue::<u8>::new(4, 4));
        let q2 = std::sync::Arc::clone(&q);
        let t = std::thread::spawn(move || q2.pop_timeout(Duration::from_secs(30)));
        std::thread::sleep(Duration::from_millis(20));
        q.close();
        assert_eq!(t.join().ok().flatten(), None);
    }
}
