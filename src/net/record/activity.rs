//! A client connection's activity (last byte, answers awaited), for its idle timeout.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

/// A client connection's last byte in either direction, and the answers it awaits from
/// the upstream, for its idle timeout.
#[derive(Debug)]
pub(super) struct Activity {
    since: tokio::time::Instant,
    last_ms: AtomicU64,
    pub(super) busy: AtomicUsize,
}

impl Activity {
    pub(super) fn new() -> Arc<Activity> {
        Arc::new(Activity {
            since: tokio::time::Instant::now(),
            last_ms: AtomicU64::new(0),
            busy: AtomicUsize::new(0),
        })
    }

    fn touch(&self) {
        let ms = self.since.elapsed().as_millis() as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// Marks an answer awaited until the guard is dropped.
    pub(super) fn busy(self: &Arc<Self>) -> BusyGuard {
        self.busy.fetch_add(1, Ordering::SeqCst);
        BusyGuard(self.clone())
    }

    /// Completes once the connection has been quiet for `limit` with no answer awaited.
    pub(super) async fn idle(&self, limit: Duration) {
        loop {
            let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
            let quiet = self.since.elapsed().saturating_sub(last);
            let busy = self.busy.load(Ordering::SeqCst) > 0;
            if !busy && quiet >= limit {
                return;
            }
            let wait = if busy {
                limit
            } else {
                limit.saturating_sub(quiet)
            };
            tokio::time::sleep(wait.max(Duration::from_millis(10))).await;
        }
    }
}

/// An answer awaited on a connection ([`Activity::busy`]).
pub(super) struct BusyGuard(Arc<Activity>);

/// Where a request's [`BusyGuard`] is kept from the request's end (as the upstream
/// reads it, [`Replay::end`]) until its answer is dropped.
pub(super) type Awaited = Arc<Mutex<Option<BusyGuard>>>;

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.touch();
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A client's stream, noting each byte read or written in its [`Activity`].
pub(super) struct Watched {
    pub(super) io: tokio::net::TcpStream,
    pub(super) activity: Arc<Activity>,
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        r
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        b: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write(cx, b);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        b: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write_vectored(cx, b);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
