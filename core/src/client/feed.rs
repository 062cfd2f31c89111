//! [`Feed`]: an event stream or a task pager as the bindings hand it to their languages. It is
//! shared (a host object may be read from one task and closed from another), closable while a
//! read waits, and ends for good after its first error, so its connection is released at once
//! and never by a garbage collector.

use crate::error::Result;
use futures_util::{Stream, StreamExt};
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use tokio_util::sync::CancellationToken;

type Source<T> = Pin<Box<dyn Stream<Item = Result<T>> + Send>>;

/// A shared handle on a stream of `T` (cheap to clone; every clone reads the same stream).
pub struct Feed<T> {
    source: Arc<tokio::sync::Mutex<Option<Source<T>>>>,
    closed: CancellationToken,
    /// Items [`Feed::fetch`] read and [`Feed::take`] has not taken yet, oldest first.
    held: Arc<Mutex<VecDeque<T>>>,
}

impl<T> Clone for Feed<T> {
    fn clone(&self) -> Self {
        Self { source: self.source.clone(), closed: self.closed.clone(), held: self.held.clone() }
    }
}

impl<T: Send + 'static> Feed<T> {
    pub fn new(stream: impl Stream<Item = Result<T>> + Send + 'static) -> Self {
        Self {
            source: Arc::new(tokio::sync::Mutex::new(Some(Box::pin(stream)))),
            closed: CancellationToken::new(),
            held: Arc::default(),
        }
    }

    /// The next item; `None` once the stream is over, failed before, or is closed (also while
    /// this read waits).
    pub async fn next(&self) -> Option<Result<T>> {
        let mut source = self.source.lock().await;
        self.read(&mut source).await
    }

    async fn read(&self, source: &mut Option<Source<T>>) -> Option<Result<T>> {
        let next = match source.as_mut() {
            Some(stream) => tokio::select! {
                next = stream.next() => next,
                () = self.closed.cancelled() => None,
            },
            None => None,
        };
        if !matches!(next, Some(Ok(_))) {
            // Ended or failed: the connection goes now.
            *source = None;
        }
        next
    }

    /// For hosts whose awaits can be abandoned after the item arrived (asyncio's `wait_for`
    /// timing out): reads the next item into a queue that [`Feed::take`] empties, so an item
    /// read for an abandoned wait is the next one taken, in order. `Some(Ok(()))`: one more is
    /// held; `None`: the stream is over.
    pub async fn fetch(&self) -> Option<Result<()>> {
        let mut source = self.source.lock().await;
        let item = self.read(&mut source).await?;
        // Queued before the source is let go, so the queue is in read order.
        Some(item.map(|item| self.held.lock().unwrap_or_else(PoisonError::into_inner).push_back(item)))
    }

    /// The oldest item [`Feed::fetch`] read and nobody took yet.
    pub fn take(&self) -> Option<T> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).pop_front()
    }

    /// Ends the stream and releases its connection, also while another task waits in
    /// [`Feed::next`] (which then gets `None`). The task the stream watched goes on.
    pub async fn close(&self) {
        self.closed.cancel();
        self.source.lock().await.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::A2AError;

    fn feed(items: Vec<Result<u32>>) -> Feed<u32> {
        Feed::new(futures_util::stream::iter(items))
    }

    #[tokio::test]
    async fn a_feed_ends_for_good_after_its_first_error() {
        let f = feed(vec![Ok(1), Err(A2AError::internal("broken")), Ok(3)]);
        assert_eq!(f.next().await.unwrap().unwrap(), 1);
        assert!(f.next().await.unwrap().is_err());
        assert!(f.next().await.is_none(), "nothing is read after the error");
    }

    #[tokio::test]
    async fn fetched_items_are_taken_oldest_first() {
        let f = feed(vec![Ok(1), Ok(2)]);
        assert!(f.take().is_none());
        assert!(f.fetch().await.unwrap().is_ok());
        assert!(f.fetch().await.unwrap().is_ok());
        assert!(f.fetch().await.is_none());
        assert_eq!((f.take(), f.take(), f.take()), (Some(1), Some(2), None));
    }

    #[tokio::test]
    async fn closing_ends_a_waiting_read() {
        let f: Feed<u32> = Feed::new(futures_util::stream::pending());
        let reader = tokio::spawn({
            let f = f.clone();
            async move { f.next().await.is_none() }
        });
        tokio::task::yield_now().await;
        f.close().await;
        assert!(reader.await.unwrap(), "the waiting read ends with no item");
        assert!(f.next().await.is_none());
    }
}
