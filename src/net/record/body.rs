//! The bodies the proxy passes on: a request read ahead then streamed ([`Replay`]), the
//! upstream's answer, and a body that counts its bytes in flight.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};

use super::activity::{Activity, Awaited};
use crate::net::budget::Held;

/// The request body on its way upstream: the frames read ahead ([`read_ahead`]), then the
/// rest (if the body was larger than the limit) as it comes.
pub(super) struct Replay {
    pub(super) ahead: VecDeque<Frame<Bytes>>,
    pub(super) ahead_len: u64,
    pub(super) rest: Option<Incoming>,
    /// The bytes read ahead, held against the proxy's budget until passed on.
    pub(super) held: Held,
    /// Reading ahead stopped because the budget was spent.
    pub(super) over_budget: bool,
    /// The connection, marked as awaiting the upstream once the body has ended.
    pub(super) ended: Option<(Arc<Activity>, Awaited)>,
}

impl Replay {
    /// The body has ended: the connection now awaits the upstream's answer.
    pub(super) fn end(&mut self) {
        if let Some((activity, awaited)) = self.ended.take()
            && let Ok(mut a) = awaited.lock()
        {
            *a = Some(activity.busy());
        }
    }
}

/// Reads a request body ahead, up to `limit` bytes and as long as `held` can take them
/// from the proxy's budget: the body to send on, and the whole body when it ended
/// within both. A small body is thus handed to the client whole, and hyper's HTTP/2
/// client writes its HEADERS and DATA frames in one write, instead of HEADERS first and
/// DATA once the incoming frame is read (one more wake-up of the upstream a call).
pub(super) async fn read_ahead(
    mut body: Incoming,
    limit: u64,
    mut held: Held,
) -> Result<(Replay, Option<Bytes>), hyper::Error> {
    let mut ahead = VecDeque::new();
    let mut len = 0u64;
    while !body.is_end_stream() {
        match body.frame().await {
            None => break,
            Some(Err(e)) => return Err(e),
            Some(Ok(f)) => {
                let n = f.data_ref().map_or(0, |d| d.len() as u64);
                len += n;
                let over_budget = !held.grow(n);
                ahead.push_back(f);
                if len > limit || over_budget {
                    // The frame just read is held beyond the budget until sent on.
                    let r = Replay {
                        ahead,
                        ahead_len: len,
                        rest: Some(body),
                        held,
                        over_budget: over_budget && len <= limit,
                        ended: None,
                    };
                    return Ok((r, None));
                }
            }
        }
    }
    let data: Vec<&Bytes> = ahead.iter().filter_map(Frame::data_ref).collect();
    let whole = match data.as_slice() {
        [one] => (*one).clone(),
        many => {
            let mut b = BytesMut::with_capacity(len as usize);
            for d in many {
                b.extend_from_slice(d);
            }
            b.freeze()
        }
    };
    let r = Replay {
        ahead,
        ahead_len: len,
        rest: None,
        held,
        over_budget: false,
        ended: None,
    };
    Ok((r, Some(whole)))
}

impl Body for Replay {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = &mut *self;
        if let Some(f) = this.ahead.pop_front() {
            if let Some(d) = f.data_ref() {
                this.ahead_len -= d.len() as u64;
                this.held.shrink(d.len() as u64);
            }
            return Poll::Ready(Some(Ok(f)));
        }
        match &mut this.rest {
            Some(r) => {
                let f = std::task::ready!(Pin::new(&mut *r).poll_frame(cx));
                if f.is_none() || r.is_end_stream() {
                    this.end();
                }
                Poll::Ready(f)
            }
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ahead.is_empty() && self.rest.as_ref().is_none_or(|r| r.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        match &self.rest {
            None => SizeHint::with_exact(self.ahead_len),
            Some(r) => {
                let h = r.size_hint();
                let mut s = SizeHint::new();
                s.set_lower(h.lower().saturating_add(self.ahead_len));
                if let Some(u) = h.upper() {
                    s.set_upper(u.saturating_add(self.ahead_len));
                }
                s
            }
        }
    }
}

/// How long the proxy waits for a connection to the upstream ([`Proxy::forward_whole`],
/// and a relayed connection's own).
pub(super) const UPSTREAM_CONNECT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a new connection may take to send the 24 bytes of the HTTP/2 preface (they
/// come in one piece from every client seen) before it is served by hyper instead.
pub(super) const PREFACE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// An answer read by `h2` as a body for hyper's server: its DATA frames (their
/// flow-control window given back as each is passed on), then its trailers.
pub(super) struct Upstream {
    pub(super) recv: h2::RecvStream,
    pub(super) data_done: bool,
    pub(super) done: bool,
}

impl Body for Upstream {
    type Data = Bytes;
    type Error = h2::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, h2::Error>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if !this.data_done {
            match std::task::ready!(this.recv.poll_data(cx)) {
                Some(Ok(d)) => {
                    let _ = this.recv.flow_control().release_capacity(d.len());
                    return Poll::Ready(Some(Ok(Frame::data(d))));
                }
                Some(Err(e)) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
                None => this.data_done = true,
            }
        }
        let t = std::task::ready!(this.recv.poll_trailers(cx));
        this.done = true;
        Poll::Ready(match t {
            Ok(Some(t)) => Some(Ok(Frame::trailers(t))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        })
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.recv.is_end_stream()
    }
}

/// An answer body passed on unchanged, counted when it ends (or is dropped).
pub(super) struct Counted<B> {
    pub(super) inner: B,
    pub(super) counter: Option<Arc<AtomicU64>>,
    /// The connection awaits this answer until it is dropped.
    pub(super) busy: Option<Awaited>,
}

impl<B> Counted<B> {
    pub(super) fn new(inner: B, counter: Arc<AtomicU64>) -> Self {
        Counted {
            inner,
            counter: Some(counter),
            busy: None,
        }
    }

    fn count(&mut self) {
        if let Some(c) = self.counter.take() {
            c.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl<B> Drop for Counted<B> {
    fn drop(&mut self) {
        self.count();
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Counted<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = r {
            self.count();
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
