//! Cleartext HTTP/2 relayed byte for byte, and read on the side: `tfreq record`'s path
//! for gRPC (and any HTTP/2 with prior knowledge) to a plaintext upstream.
//!
//! [`relay`] copies each direction's bytes as they come, unchanged, and only then hands
//! a copy of what the client sent to a second HTTP/2 server of its own (the *shadow*),
//! whose writes go nowhere. The shadow decodes the frames and header blocks (HPACK) and
//! hands each request's path, headers and body to the caller ([`Seen`]). Reading thus
//! happens after the bytes are on their way, while the upstream works, and a request
//! the shadow cannot read still passes through: the caller is told it was not read
//! ([`Noted::Lost`]).
//!
//! Terminating HTTP/2 in the proxy instead (a server to the client, a client to the
//! upstream) put decoding and re-encoding on every call's path: 130 µs added at p50 on
//! loopback, against 83 µs for this relay, and 110 against 75 µs of the proxy's CPU a
//! call (docs/live.md, "record" > "Overhead").
//!
//! The shadow sees the client's frames with three kinds left out, since they answer
//! frames of the upstream that the shadow never sent (RFC 9113, §6.5, §6.9):
//! `WINDOW_UPDATE` (its send windows would only grow, past 2³¹ − 1 on a long
//! connection), and `SETTINGS` acknowledgements past the first (the first one is taken
//! as the acknowledgement of the shadow's own `SETTINGS`; h2 refuses any other).
//! `PING` acknowledgements it ignores itself.
//!
//! The answers are not decoded: frame headers only, to count the calls answered (a
//! server's `END_STREAM` or a `RST_STREAM` from either side ends a call).

use std::collections::{HashSet, VecDeque};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;

use super::budget::{Budget, Held};

/// What every HTTP/2 connection with prior knowledge opens with (RFC 9113, §3.4).
pub(crate) const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The most client bytes waiting for the shadow on one connection: past it the shadow
/// is dropped and the connection's later requests pass through unread.
const MAX_BEHIND: usize = 64 << 20;

/// The most calls of one connection counted as open at once (a client opening streams
/// the upstream refuses is still bounded).
const MAX_OPEN: usize = 1 << 16;

/// One request the shadow read.
#[derive(Debug)]
pub(crate) struct Seen {
    /// The request's method.
    pub method: ::http::Method,
    /// The URL path.
    pub path: String,
    /// The request's headers.
    pub headers: ::http::HeaderMap,
    /// The body, or `None` when it was larger than the limit given to [`relay`] or
    /// the budget was spent.
    pub body: Option<Bytes>,
    /// The body was not kept because the budget ([`Limits::budget`]) was spent.
    pub over_budget: bool,
}

/// What bounds one relayed connection.
#[derive(Debug)]
pub(crate) struct Limits {
    /// The largest request body kept for the caller.
    pub max_size: u64,
    /// The request bytes kept, shared with every connection.
    pub budget: Arc<Budget>,
    /// The connection ends when nothing moved for this long and no call awaits the
    /// upstream's answer.
    pub idle: std::time::Duration,
    /// Once true, the connection ends as soon as no call is open.
    pub stopped: tokio::sync::watch::Receiver<bool>,
}

/// What [`relay`] tells its caller.
#[derive(Debug)]
pub(crate) enum Noted {
    /// A request read whole (or up to the limit).
    Request(Seen),
    /// The connection's requests from here on were not read, and why.
    Lost(String),
}

/// How [`relay`] tells its caller about requests.
pub(crate) type Note = Arc<dyn Fn(Noted) + Send + Sync>;

/// Whether `stream` opens with the HTTP/2 preface, looked at without reading it. Gives
/// up (false) after `patience` when the preface comes in pieces that stop.
pub(crate) async fn opens_with_preface(stream: &TcpStream, patience: std::time::Duration) -> bool {
    let mut buf = [0u8; PREFACE.len()];
    let give_up = tokio::time::Instant::now() + patience;
    loop {
        let n = match tokio::time::timeout_at(give_up, stream.peek(&mut buf)).await {
            Ok(Ok(n)) => n,
            _ => return false,
        };
        if n == 0 || buf[..n] != PREFACE[..n] {
            return false;
        }
        if n == PREFACE.len() {
            return true;
        }
        // `peek` returns at once while any byte waits: wait before looking again.
        if tokio::time::Instant::now() >= give_up {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

/// Relays `client` to `upstream` and back until both directions end, unchanged, and
/// tells `note` about every request the client sent (bodies past `limits.max_size`
/// bytes, or past the budget, as `None`). `answered` counts the calls that ended
/// (answered, reset, or cut off with the connection). The connection is dropped when
/// it was quiet for `limits.idle` with no call awaiting the upstream, or when no call is
/// open once `limits.stopped` turned true.
pub(crate) async fn relay(
    client: TcpStream,
    upstream: TcpStream,
    limits: Limits,
    answered: Arc<AtomicU64>,
    note: Note,
) {
    let feed = Feed::default();
    tokio::spawn(shadow(
        feed.clone(),
        limits.max_size,
        limits.budget.clone(),
        note.clone(),
    ));
    let calls = Arc::new(Mutex::new(Calls::default()));
    let moved = Moved::default();
    let (cr, cw) = client.into_split();
    let (ur, uw) = upstream.into_split();
    let up = pump(
        cr,
        uw,
        Frames::client(),
        Some(feed.clone()),
        &calls,
        &answered,
        &moved,
    );
    let down = pump(ur, cw, Frames::server(), None, &calls, &answered, &moved);
    tokio::select! {
        _ = futures_util::future::join(up, down) => {}
        _ = moved.ended(&calls, limits.idle, limits.stopped) => {}
    }
    feed.close();
    // Calls still open when the connection ended are over too.
    if let Ok(c) = calls.lock() {
        answered.fetch_add(c.open.len() as u64, Ordering::SeqCst);
    }
    if feed.overflowed() {
        note(Noted::Lost(format!(
            "the recorder fell behind on one connection by over {} MiB: its later requests passed through unrecorded",
            MAX_BEHIND >> 20
        )));
    }
}

/// Copies one direction, then shuts the other end's writing down. What was copied goes
/// on to `frames` (and, for the client's direction, to the shadow's `feed`).
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut frames: Frames,
    feed: Option<Feed>,
    calls: &Mutex<Calls>,
    answered: &AtomicU64,
    moved: &Moved,
) {
    let mut buf = vec![0u8; 64 << 10];
    let mut kept = BytesMut::new();
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        moved.touch();
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
        // Read after the bytes are on their way.
        let keep = feed.as_ref().filter(|f| f.open());
        frames.read(&buf[..n], keep.map(|_| &mut kept), |f| {
            if let Ok(mut c) = calls.lock() {
                answered.fetch_add(c.saw(f), Ordering::SeqCst);
            }
        });
        if let Some(f) = keep
            && !kept.is_empty()
        {
            f.push(kept.split().freeze());
        }
    }
    let _ = to.shutdown().await;
}

/// When a relayed connection's bytes last moved, either way.
#[derive(Debug)]
struct Moved {
    since: tokio::time::Instant,
    last_ms: AtomicU64,
}

impl Default for Moved {
    fn default() -> Moved {
        Moved {
            since: tokio::time::Instant::now(),
            last_ms: AtomicU64::new(0),
        }
    }
}

impl Moved {
    fn touch(&self) {
        let ms = self.since.elapsed().as_millis() as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// Completes once nothing moved for `idle` while no call awaits the upstream's answer
    /// (a call whose client stalled mid-request does not keep the connection), or, once
    /// `stopped` turned true, when no call is open.
    async fn ended(
        &self,
        calls: &Mutex<Calls>,
        idle: std::time::Duration,
        mut stopped: tokio::sync::watch::Receiver<bool>,
    ) {
        // How often a stopping connection looks for its last call's end.
        const LOOK: std::time::Duration = std::time::Duration::from_millis(20);
        loop {
            let (open, awaited) = calls
                .lock()
                .map_or((0, 0), |c| (c.open.len(), c.sent.len()));
            let last = std::time::Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
            let quiet = self.since.elapsed().saturating_sub(last);
            let stopping = *stopped.borrow();
            if (stopping && open == 0) || (awaited == 0 && quiet >= idle) {
                return;
            }
            let wait = match (stopping, awaited) {
                (true, _) => LOOK,
                (false, 0) => idle.saturating_sub(quiet),
                (false, _) => idle,
            };
            tokio::select! {
                _ = tokio::time::sleep(wait.max(std::time::Duration::from_millis(10))) => {}
                r = stopped.changed(), if !stopping => {
                    if r.is_err() {
                        // No stop can come any more: only idleness ends the connection.
                        std::future::pending::<()>().await;
                    }
                }
            }
        }
    }
}

/// One frame's header (RFC 9113, §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Head {
    len: u32,
    kind: u8,
    flags: u8,
    stream: u32,
    /// Sent by the client (else by the server).
    from_client: bool,
}

const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const WINDOW_UPDATE: u8 = 0x8;
const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;

/// Frame headers read from one direction's bytes, across any split of them.
#[derive(Debug)]
struct Frames {
    from_client: bool,
    /// Preface bytes still to pass (the client's 24).
    preface: usize,
    head: [u8; 9],
    have: usize,
    /// Payload bytes of the current frame still to pass.
    payload: u64,
    /// Whether the current frame goes on to the shadow.
    keeping: bool,
    /// `SETTINGS` acknowledgements seen (the first goes to the shadow).
    acks: u64,
}

impl Frames {
    fn client() -> Frames {
        Frames {
            from_client: true,
            preface: PREFACE.len(),
            head: [0; 9],
            have: 0,
            payload: 0,
            keeping: true,
            acks: 0,
        }
    }

    fn server() -> Frames {
        Frames {
            preface: 0,
            from_client: false,
            ..Frames::client()
        }
    }

    /// Reads `bytes`, calling `saw` with every frame header completed; when `keep` is
    /// given, appends to it the bytes the shadow is to see.
    fn read(
        &mut self,
        mut bytes: &[u8],
        mut keep: Option<&mut BytesMut>,
        mut saw: impl FnMut(Head),
    ) {
        while !bytes.is_empty() {
            if self.preface > 0 {
                let n = self.preface.min(bytes.len());
                if let Some(k) = keep.as_deref_mut() {
                    k.extend_from_slice(&bytes[..n]);
                }
                self.preface -= n;
                bytes = &bytes[n..];
            } else if self.payload > 0 {
                let n = (self.payload.min(bytes.len() as u64)) as usize;
                if self.keeping
                    && let Some(k) = keep.as_deref_mut()
                {
                    k.extend_from_slice(&bytes[..n]);
                }
                self.payload -= n as u64;
                bytes = &bytes[n..];
            } else {
                let n = (9 - self.have).min(bytes.len());
                self.head[self.have..self.have + n].copy_from_slice(&bytes[..n]);
                self.have += n;
                bytes = &bytes[n..];
                if self.have < 9 {
                    break;
                }
                self.have = 0;
                let h = &self.head;
                let head = Head {
                    len: u32::from_be_bytes([0, h[0], h[1], h[2]]),
                    kind: h[3],
                    flags: h[4],
                    stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff,
                    from_client: self.from_client,
                };
                self.keeping = match head.kind {
                    WINDOW_UPDATE => false,
                    SETTINGS if head.flags & ACK != 0 => {
                        self.acks += 1;
                        self.acks == 1
                    }
                    _ => true,
                };
                if self.keeping
                    && let Some(k) = keep.as_deref_mut()
                {
                    k.extend_from_slice(&self.head);
                }
                self.payload = u64::from(head.len);
                saw(head);
            }
        }
    }
}

/// The calls of one connection still open, to count those that end.
#[derive(Debug, Default)]
struct Calls {
    open: HashSet<u32>,
    /// The open calls whose request the client has sent to its end: they await the
    /// upstream's answer.
    sent: HashSet<u32>,
}

impl Calls {
    /// Takes one frame header into account: how many calls it ended (0 or 1).
    fn saw(&mut self, f: Head) -> u64 {
        let ends = match (f.kind, f.from_client) {
            (HEADERS, true) => {
                if self.open.len() < MAX_OPEN {
                    self.open.insert(f.stream);
                }
                false
            }
            (HEADERS | DATA, false) => f.flags & END_STREAM != 0,
            (RST_STREAM, _) => true,
            _ => false,
        };
        if f.from_client
            && matches!(f.kind, HEADERS | DATA)
            && f.flags & END_STREAM != 0
            && self.open.contains(&f.stream)
        {
            self.sent.insert(f.stream);
        }
        let ended = ends && self.open.remove(&f.stream);
        if ended {
            self.sent.remove(&f.stream);
        }
        u64::from(ended)
    }
}

/// The client's bytes on their way to the shadow: a queue the relay pushes to and the
/// shadow reads as its connection (its writes are dropped).
#[derive(Debug, Clone, Default)]
struct Feed(Arc<Mutex<FeedState>>);

#[derive(Debug, Default)]
struct FeedState {
    chunks: VecDeque<Bytes>,
    queued: usize,
    closed: bool,
    overflowed: bool,
    waker: Option<Waker>,
}

impl Feed {
    /// Whether the shadow still takes bytes.
    fn open(&self) -> bool {
        self.0.lock().is_ok_and(|s| !s.closed)
    }

    fn push(&self, b: Bytes) {
        let Ok(mut s) = self.0.lock() else { return };
        if s.closed {
            return;
        }
        if s.queued + b.len() > MAX_BEHIND {
            s.overflowed = true;
            s.closed = true;
            s.chunks.clear();
        } else {
            s.queued += b.len();
            s.chunks.push_back(b);
        }
        if let Some(w) = s.waker.take() {
            w.wake();
        }
    }

    fn close(&self) {
        let Ok(mut s) = self.0.lock() else { return };
        s.closed = true;
        if let Some(w) = s.waker.take() {
            w.wake();
        }
    }

    /// Closes the feed from the shadow's side: what waits is dropped, and the relay
    /// keeps no more.
    fn stop(&self) {
        let Ok(mut s) = self.0.lock() else { return };
        s.closed = true;
        s.chunks.clear();
        s.queued = 0;
    }

    fn overflowed(&self) -> bool {
        self.0.lock().is_ok_and(|s| s.overflowed)
    }
}

impl AsyncRead for Feed {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let Ok(mut s) = self.0.lock() else {
            return Poll::Ready(Ok(()));
        };
        while buf.remaining() > 0 {
            let Some(front) = s.chunks.front_mut() else {
                break;
            };
            let n = front.len().min(buf.remaining());
            buf.put_slice(&front.split_to(n));
            if front.is_empty() {
                s.chunks.pop_front();
            }
            s.queued -= n;
        }
        if buf.filled().is_empty() && !s.closed {
            s.waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Feed {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(b.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// The shadow: an HTTP/2 server reading `feed`. Its windows and frame size are the
/// largest HTTP/2 allows, since the client sends within the upstream's, not its own.
async fn shadow(feed: Feed, max_size: u64, budget: Arc<Budget>, note: Note) {
    read_connection(&feed, max_size, budget, note).await;
    // Whether it ended or failed, nothing more is read.
    feed.stop();
}

async fn read_connection(feed: &Feed, max_size: u64, budget: Arc<Budget>, note: Note) {
    let mut b = h2::server::Builder::new();
    b.initial_window_size(MAX_WINDOW)
        .initial_connection_window_size(MAX_WINDOW)
        .max_frame_size(MAX_FRAME)
        .header_table_size(1 << 16)
        .max_header_list_size(super::grpc::MAX_HEADER_LIST)
        .max_concurrent_streams(MAX_STREAMS)
        .max_pending_accept_reset_streams(MAX_RESETS)
        .max_concurrent_reset_streams(MAX_RESETS)
        .max_local_error_reset_streams(Some(MAX_RESETS))
        .max_send_buffer_size(MAX_SEND_BUFFER);
    let lost = |e: &dyn std::fmt::Display| {
        note(Noted::Lost(format!(
            "a connection's HTTP/2 could not be read ({e}): its later requests passed through unrecorded"
        )))
    };
    let mut conn = match b.handshake::<_, Bytes>(feed.clone()).await {
        Ok(c) => c,
        Err(e) => {
            if !feed.overflowed() && is_loss(&e) {
                lost(&e);
            }
            return;
        }
    };
    while let Some(next) = conn.accept().await {
        match next {
            Ok((req, respond)) => {
                let held = budget.hold();
                tokio::spawn(read_request(req, respond, max_size, held, note.clone()));
            }
            Err(e) => {
                if !feed.overflowed() && is_loss(&e) {
                    lost(&e);
                }
                break;
            }
        }
    }
    // Keep reading to the end (closing streams) after a GOAWAY.
    std::future::poll_fn(|cx| conn.poll_closed(cx)).await.ok();
}

/// Whether the shadow's connection error lost requests: not when the connection ended
/// (mid-frame, too: the upstream got no whole call either) or the client sent GOAWAY.
fn is_loss(e: &h2::Error) -> bool {
    !(e.is_io() || e.is_go_away() && e.is_remote())
}

/// The largest flow-control window (RFC 9113, §6.9.1).
const MAX_WINDOW: u32 = (1 << 31) - 1;
/// The largest frame (RFC 9113, §4.2).
const MAX_FRAME: u32 = (1 << 24) - 1;
/// The most requests of one connection the shadow reads at once: 1024 (the client sends
/// within the upstream's stream limit, which the shadow does not see; past this one the
/// shadow refuses the stream into nothing, and the request passes through unread).
const MAX_STREAMS: u32 = 1024;
/// Reset streams the shadow remembers or queues: 64 of each kind.
const MAX_RESETS: usize = 64;
/// Bytes the shadow's answers (written into nothing) may queue a stream: 64 KiB.
const MAX_SEND_BUFFER: usize = 64 << 10;

/// Reads one request's body (up to `max_size` bytes kept, as long as `held` can take
/// them from the budget) and tells `note`; the shadow then answers it (into nothing),
/// which closes the stream on its side.
async fn read_request(
    req: ::http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    max_size: u64,
    mut held: Held,
    note: Note,
) {
    let (parts, mut body) = req.into_parts();
    let mut kept = BytesMut::new();
    let mut len = 0u64;
    let mut over_budget = false;
    while let Some(chunk) = body.data().await {
        let Ok(chunk) = chunk else {
            // Reset by the client, or the connection ended: the call did not go
            // through whole, as the terminating proxy does not record it either.
            return;
        };
        let _ = body.flow_control().release_capacity(chunk.len());
        len += chunk.len() as u64;
        if len <= max_size && !over_budget && held.grow(chunk.len() as u64) {
            kept.extend_from_slice(&chunk);
        } else {
            over_budget |= len <= max_size;
            kept = BytesMut::new();
            held.release();
        }
    }
    let whole = len <= max_size && !over_budget;
    note(Noted::Request(Seen {
        method: parts.method,
        path: parts.uri.path().to_string(),
        headers: parts.headers,
        body: whole.then(|| kept.freeze()),
        over_budget,
    }));
    drop(held);
    let _ = respond.send_response(::http::Response::new(()), true);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    /// Limits that never end a connection: no budget, no idle timeout, no stop.
    fn limits(max_size: u64) -> Limits {
        Limits {
            max_size,
            budget: Budget::new(u64::MAX),
            idle: std::time::Duration::from_secs(3600),
            stopped: tokio::sync::watch::channel(false).1,
        }
    }

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = payload.len() as u32;
        let mut f = len.to_be_bytes()[1..].to_vec();
        f.extend([kind, flags]);
        f.extend(stream.to_be_bytes());
        f.extend(payload);
        f
    }

    /// The client's bytes, split anywhere: the frames seen and the bytes kept for the
    /// shadow are the same, and leave out exactly the WINDOW_UPDATEs and later ACKs.
    #[test]
    fn frames_are_read_across_any_split_and_the_shadow_misses_only_answers_to_the_upstream() {
        let mut bytes = PREFACE.to_vec();
        let settings = frame(SETTINGS, 0, 0, &[0, 4, 0, 0, 0xff, 0xff]);
        let ack = frame(SETTINGS, ACK, 0, &[]);
        let headers = frame(HEADERS, 0x4, 1, b"\x83\x86");
        let data = frame(DATA, END_STREAM, 1, &[7; 300]);
        let window = frame(WINDOW_UPDATE, 0, 0, &[0, 0, 1, 0]);
        for f in [&settings, &ack, &headers, &window, &data, &ack, &window] {
            bytes.extend(f);
        }
        let mut want = PREFACE.to_vec();
        for f in [&settings, &ack, &headers, &data] {
            want.extend(f);
        }
        for step in [1, 2, 8, 9, 10, 23, 24, 25, 100, bytes.len()] {
            let mut frames = Frames::client();
            let mut kept = BytesMut::new();
            let mut seen = Vec::new();
            for piece in bytes.chunks(step) {
                frames.read(piece, Some(&mut kept), |h| {
                    seen.push((h.kind, h.flags, h.stream, h.len))
                });
            }
            assert_eq!(&kept[..], &want[..], "step {step}");
            assert_eq!(
                seen,
                [
                    (SETTINGS, 0, 0, 6),
                    (SETTINGS, ACK, 0, 0),
                    (HEADERS, 0x4, 1, 2),
                    (WINDOW_UPDATE, 0, 0, 4),
                    (DATA, END_STREAM, 1, 300),
                    (SETTINGS, ACK, 0, 0),
                    (WINDOW_UPDATE, 0, 0, 4),
                ],
                "step {step}"
            );
        }
    }

    #[test]
    fn a_call_ends_once_whether_answered_or_reset() {
        let mut c = Calls::default();
        let h = |kind, flags, stream, from_client| Head {
            len: 0,
            kind,
            flags,
            stream,
            from_client,
        };
        assert_eq!(c.saw(h(HEADERS, 0x4, 1, true)), 0);
        assert_eq!(c.saw(h(HEADERS, 0x4, 3, true)), 0);
        // The answer's HEADERS, then DATA, then trailers ending it.
        assert_eq!(c.saw(h(HEADERS, 0x4, 1, false)), 0);
        assert_eq!(c.saw(h(DATA, 0, 1, false)), 0);
        assert_eq!(c.saw(h(HEADERS, 0x5, 1, false)), 1);
        // A reset after the end counts nothing more.
        assert_eq!(c.saw(h(RST_STREAM, 0, 1, false)), 0);
        // A call reset by the client ends too.
        assert_eq!(c.saw(h(RST_STREAM, 0, 3, true)), 1);
        assert!(c.open.is_empty());
        // A call awaits the upstream from the end of its request to the end of its answer.
        c.saw(h(HEADERS, 0x4, 5, true));
        c.saw(h(DATA, 0, 5, true));
        assert!(c.sent.is_empty());
        c.saw(h(DATA, END_STREAM, 5, true));
        assert!(c.sent.contains(&5));
        assert_eq!(c.saw(h(HEADERS, 0x5, 5, false)), 1);
        assert!(c.sent.is_empty());
    }

    /// An upstream: an h2 server that answers every request with `answer_len` bytes,
    /// changing its SETTINGS (which the client acknowledges: a second ACK) and pinging
    /// the client after the first request.
    async fn upstream(
        listener: tokio::net::TcpListener,
        answer_len: usize,
        changed_settings: Arc<std::sync::atomic::AtomicBool>,
    ) {
        let (s, _) = listener.accept().await.unwrap();
        let mut conn = h2::server::handshake(s).await.unwrap();
        let mut changed = false;
        while let Some(r) = conn.accept().await {
            let (req, mut respond) = r.unwrap();
            // Once the client acknowledged the first SETTINGS.
            if !changed && conn.set_initial_window_size(1 << 20).is_ok() {
                changed = true;
                changed_settings.store(true, Ordering::SeqCst);
                if let Some(mut p) = conn.ping_pong() {
                    tokio::spawn(async move {
                        let _ = p.ping(h2::Ping::opaque()).await;
                    });
                }
            }
            tokio::spawn(async move {
                let mut body = req.into_body();
                while let Some(c) = body.data().await {
                    let _ = body.flow_control().release_capacity(c.unwrap().len());
                }
                let mut send = respond
                    .send_response(::http::Response::new(()), false)
                    .unwrap();
                send.reserve_capacity(answer_len);
                send.send_data(Bytes::from(vec![1u8; answer_len]), true)
                    .unwrap();
            });
        }
    }

    /// h2's client through the relay to h2's server: every call answered in full, each
    /// request read whole by the shadow (headers through HPACK's dynamic table, bodies
    /// over many frames, one past the limit as `None`), although the upstream changed
    /// its settings, pinged, and the client sent WINDOW_UPDATEs for the large answers.
    #[test]
    fn requests_are_read_on_the_side_of_a_real_http2_exchange() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answered = Arc::new(AtomicU64::new(0));
        let (seen2, answered2) = (seen.clone(), answered.clone());
        block_on(async move {
            let up = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let up_addr = up.local_addr().unwrap();
            let changed_settings = Arc::new(std::sync::atomic::AtomicBool::new(false));
            tokio::spawn(upstream(up, 200_000, changed_settings.clone()));
            let front = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let front_addr = front.local_addr().unwrap();
            let note: Note = Arc::new(move |n| seen2.lock().unwrap().push(n));
            let relayed = tokio::spawn(async move {
                let (c, _) = front.accept().await.unwrap();
                let u = TcpStream::connect(up_addr).await.unwrap();
                relay(c, u, limits(100_000), answered2, note).await;
            });
            let s = TcpStream::connect(front_addr).await.unwrap();
            let (client, conn) = h2::client::handshake(s).await.unwrap();
            tokio::spawn(conn);
            let bodies = [vec![5u8; 10], vec![6u8; 90_000], vec![7u8; 150_000], vec![]];
            let mut calls = Vec::new();
            for (i, b) in bodies.iter().enumerate() {
                let mut client = client.clone().ready().await.unwrap();
                let req = ::http::Request::post(format!(
                    "http://x/tensorflow.serving.PredictionService/Predict{i}"
                ))
                .header("content-type", "application/grpc")
                .header("x-same", "v")
                .body(())
                .unwrap();
                let (answer, mut send) = client.send_request(req, b.is_empty()).unwrap();
                if !b.is_empty() {
                    send.reserve_capacity(b.len());
                    send.send_data(Bytes::from(b.clone()), true).unwrap();
                }
                let call = tokio::spawn(async move {
                    let mut body = answer.await.unwrap().into_body();
                    let mut n = 0;
                    while let Some(c) = body.data().await {
                        let c = c.unwrap();
                        n += c.len();
                        let _ = body.flow_control().release_capacity(c.len());
                    }
                    n
                });
                // The first two one after the other (the upstream changes its
                // settings on the second), the last two at once.
                if i < 2 {
                    assert_eq!(call.await.unwrap(), 200_000);
                } else {
                    calls.push(call);
                }
            }
            for c in calls {
                assert_eq!(c.await.unwrap(), 200_000);
            }
            assert!(changed_settings.load(Ordering::SeqCst));
            drop(client);
            relayed.await.unwrap();
        });
        assert_eq!(answered.load(Ordering::SeqCst), 4);
        let seen = seen.lock().unwrap();
        let mut got: Vec<_> = seen
            .iter()
            .map(|n| match n {
                Noted::Request(s) => {
                    assert_eq!(s.headers["content-type"], "application/grpc");
                    assert_eq!(s.headers["x-same"], "v");
                    (s.path.clone(), s.body.as_ref().map(|b| b.to_vec()))
                }
                Noted::Lost(why) => panic!("lost: {why}"),
            })
            .collect();
        got.sort();
        let p = |i: usize| format!("/tensorflow.serving.PredictionService/Predict{i}");
        assert_eq!(
            got,
            [
                (p(0), Some(vec![5u8; 10])),
                (p(1), Some(vec![6u8; 90_000])),
                (p(2), None),
                (p(3), Some(vec![])),
            ]
        );
    }

    /// Bytes that are not HTTP/2 after the preface still pass through unchanged both
    /// ways; the shadow says it could not read them.
    #[test]
    fn garbage_passes_through_unchanged_and_is_named_unread() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        // A DATA frame on stream 0 where SETTINGS must come first, then noise.
        let mut sent = PREFACE.to_vec();
        sent.extend(frame(DATA, 0, 0, b"abc"));
        sent.extend((0..5000u32).map(|i| (i * 7919 % 251) as u8));
        let sent2 = sent.clone();
        let (got_up, got_back) = block_on(async move {
            let up = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let up_addr = up.local_addr().unwrap();
            let echo = tokio::spawn(async move {
                let (mut s, _) = up.accept().await.unwrap();
                let mut got = Vec::new();
                s.read_to_end(&mut got).await.unwrap();
                s.write_all(b"answer").await.unwrap();
                got
            });
            let front = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let front_addr = front.local_addr().unwrap();
            let note: Note = Arc::new(move |n| seen2.lock().unwrap().push(n));
            tokio::spawn(async move {
                let (c, _) = front.accept().await.unwrap();
                let u = TcpStream::connect(up_addr).await.unwrap();
                relay(c, u, limits(1 << 20), Arc::default(), note).await;
            });
            let mut s = TcpStream::connect(front_addr).await.unwrap();
            s.write_all(&sent2).await.unwrap();
            s.shutdown().await.unwrap();
            let mut back = Vec::new();
            s.read_to_end(&mut back).await.unwrap();
            // Let the shadow finish.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            (echo.await.unwrap(), back)
        });
        assert_eq!(got_up, sent);
        assert_eq!(got_back, b"answer");
        let seen = seen.lock().unwrap();
        assert!(
            matches!(&seen[..], [Noted::Lost(why)] if why.contains("could not be read")),
            "{seen:?}"
        );
    }

    /// A request whose header block decodes to more than the header-list limit (a 4 KB
    /// table entry referenced 1000 times: 4 MB from 5 KB) is not read: `h2` takes a list
    /// that far over the limit for an attack and stops reading the connection, which
    /// the shadow reports as lost.
    #[test]
    fn the_shadow_counts_decoded_header_lists_against_the_limit() {
        let mut bytes = PREFACE.to_vec();
        bytes.extend(frame(SETTINGS, 0, 0, &[]));
        bytes.extend(frame(SETTINGS, ACK, 0, &[]));
        // :method POST, :scheme http, :path /, then x-big: 4000 bytes, added to the
        // table, then referenced again and again.
        let mut block = vec![0x83, 0x86, 0x84, 0x40, 5];
        block.extend_from_slice(b"x-big");
        // 4000 as HPACK writes it: 127, then 3873 in 7-bit groups (33, 30).
        block.extend_from_slice(&[0x7f, 0x80 | 33, 30]);
        block.extend_from_slice(&[b'a'; 4000]);
        block.extend(std::iter::repeat_n(0x80 | 62, 1000));
        bytes.extend(frame(HEADERS, 0x4 | END_STREAM, 1, &block));
        bytes.extend(frame(HEADERS, 0x4 | END_STREAM, 3, &[0x83, 0x86, 0x84]));
        let feed = Feed::default();
        feed.push(Bytes::from(bytes));
        feed.close();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        let note: Note = Arc::new(move |n| seen2.lock().unwrap().push(n));
        block_on(async {
            shadow(feed, 1 << 20, Budget::new(u64::MAX), note).await;
            // The requests' tasks.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        });
        let seen = seen.lock().unwrap();
        assert!(
            matches!(&seen[..], [Noted::Lost(why)] if why.contains("could not be read")),
            "{seen:?}"
        );
    }

    #[test]
    fn the_feed_reads_what_was_pushed_then_ends_when_closed() {
        let feed = Feed::default();
        feed.push(Bytes::from_static(b"abc"));
        feed.push(Bytes::from_static(b"defg"));
        feed.close();
        feed.push(Bytes::from_static(b"late"));
        let mut out = Vec::new();
        block_on(async { feed.clone().read_to_end(&mut out).await }).unwrap();
        assert_eq!(out, b"abcdefg");
        assert!(!feed.overflowed());
        // Stopped by the shadow: what waited is dropped, nothing more is kept.
        let feed = Feed::default();
        feed.push(Bytes::from_static(b"abc"));
        assert!(feed.open());
        feed.stop();
        assert!(!feed.open());
        feed.push(Bytes::from_static(b"def"));
        let mut out = Vec::new();
        block_on(async { feed.clone().read_to_end(&mut out).await }).unwrap();
        assert!(out.is_empty());
    }
}
