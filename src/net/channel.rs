//! A gRPC channel: one HTTP/2 connection carrying unary calls, as a gRPC client's
//! channel does, with the HTTP/2 written here for that one use (RFC 9113,
//! <https://www.rfc-editor.org/rfc/rfc9113>; gRPC over HTTP/2,
//! <https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md>). HPACK decoding is
//! `loona-hpack`'s (RFC 7541).
//!
//! Why not the `h2` crate: a unary call through `h2` and `http`'s request and header
//! types cost about 25 µs of client CPU, half of what `tfreq load` spent a call; the
//! floor without them is measured by `examples/grpc_floor.rs` (docs/live.md,
//! "Measured"). Here a call is a header block encoded once per path and deadline
//! ([`request_head`]), one buffer holding its `HEADERS` and `DATA` frames, and an answer
//! read only for the three fields a call needs (`:status`, `grpc-status`,
//! `grpc-message`).
//!
//! What it does of HTTP/2: flow control both ways (a request larger than the server's
//! windows waits for its `WINDOW_UPDATE`s; the answers' windows are opened as they are
//! read), the server's `SETTINGS` (frame size, stream limit, initial window), `PING`
//! answered, `CONTINUATION`, padding, `RST_STREAM`, and `GOAWAY`: a call the server
//! says it did not process ends as [`Fault::Broken`] with `unsent`, for the caller to
//! send again on a new connection. Server push is refused by `SETTINGS`; priority is
//! ignored. Every buffer is bounded: a frame by [`MAX_FRAME`], a header block by
//! [`MAX_HEADER_BLOCK`], HPACK's table by the 4 KiB of RFC 7541's default, an answer's
//! message by the caller's limit ([`Message`]).
//!
//! A connection is a task ([`Channel::open`]) that owns the socket; calls reach it
//! through a queue, and its answers come back through one-shot channels, so many calls
//! at once share the connection. A call whose caller stopped waiting (its deadline) is
//! reset when its answer comes.

use std::collections::{HashMap, VecDeque};
use std::io::IoSlice;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{mpsc, oneshot};

/// The client connection preface (RFC 9113 §3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// Frame types (RFC 9113 §6).
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PUSH_PROMISE: u8 = 0x5;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const WINDOW_UPDATE: u8 = 0x8;
const CONTINUATION: u8 = 0x9;

// Flags.
const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;

// Error codes (RFC 9113 §7).
const NO_ERROR: u32 = 0x0;
const PROTOCOL_ERROR: u32 = 0x1;
const FLOW_CONTROL_ERROR: u32 = 0x3;
const FRAME_SIZE_ERROR: u32 = 0x6;
const REFUSED_STREAM: u32 = 0x7;
const CANCEL: u32 = 0x8;
const COMPRESSION_ERROR: u32 = 0x9;

/// The largest frame payload read: HTTP/2's default `SETTINGS_MAX_FRAME_SIZE`, which
/// this client does not raise.
pub(crate) const MAX_FRAME: usize = 16_384;

/// The largest header block (with its `CONTINUATION`s) read, and the
/// `SETTINGS_MAX_HEADER_LIST_SIZE` offered.
pub(crate) const MAX_HEADER_BLOCK: usize = 1 << 20;

/// HPACK's dynamic table: RFC 7541's default size, which this client does not raise.
const HEADER_TABLE: usize = 4096;

/// The windows offered to the server: large enough that an answer of a few MiB on
/// loopback is not held back by window updates.
const STREAM_WINDOW: u32 = 8 << 20;
const CONNECTION_WINDOW: u32 = 16 << 20;

/// The largest window HTTP/2 allows.
const MAX_WINDOW: i64 = (1 << 31) - 1;

/// A body piece up to this size is copied into the frames' buffer; a larger one is
/// written from where it is, without a copy.
const COPY_BELOW: usize = 16 << 10;

/// The highest stream id a client may open.
const MAX_STREAM_ID: u32 = (1 << 31) - 1;

/// One read's most bytes.
const READ_CHUNK: usize = 64 << 10;

/// A unary call: the request's header block and its one message.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// The `HEADERS` block ([`request_head`]).
    pub head: Bytes,
    /// The message, without gRPC's 5-byte prefix (written here).
    pub message: Bytes,
    /// The largest answer message read ([`Message`]).
    pub limit: usize,
}

/// The fields of a header block a call needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Fields {
    /// `:status`.
    pub status: Option<Bytes>,
    /// `grpc-status`.
    pub grpc_status: Option<Bytes>,
    /// `grpc-message`.
    pub grpc_message: Option<Bytes>,
}

/// An answer: its headers, its trailers (none when the headers ended the stream, gRPC's
/// "Trailers-Only", or the body ended without them), and its message when exactly one
/// came whole.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Answer {
    pub head: Fields,
    pub trailers: Option<Fields>,
    pub message: Option<Bytes>,
}

/// Why a call has no answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fault {
    /// The connection failed or closed. `unsent`: the server did not process the call
    /// (it never reached the connection, or the server said so by `GOAWAY` or
    /// `REFUSED_STREAM`), so it may be sent again.
    Broken { why: String, unsent: bool },
    /// The peer broke HTTP/2: it does not speak it, or not correctly.
    Protocol(String),
    /// The server reset the call, with this error code.
    Reset(u32),
    /// The answer's body is not one gRPC message within the limit.
    Framing(Framing),
}

impl Fault {
    fn unsent(why: &str) -> Fault {
        Fault::Broken {
            why: why.to_string(),
            unsent: true,
        }
    }
}

/// An HTTP/2 error code's name (RFC 9113 §7).
pub(crate) fn error_name(code: u32) -> String {
    const NAMES: [&str; 14] = [
        "NO_ERROR",
        "PROTOCOL_ERROR",
        "INTERNAL_ERROR",
        "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT",
        "STREAM_CLOSED",
        "FRAME_SIZE_ERROR",
        "REFUSED_STREAM",
        "CANCEL",
        "COMPRESSION_ERROR",
        "CONNECT_ERROR",
        "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY",
        "HTTP_1_1_REQUIRED",
    ];
    usize::try_from(code)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| format!("error code {code:#x}"), |n| (*n).to_string())
}

/// A unary request's header block: `POST` of `path` to `authority`, gRPC's content
/// type, `te: trailers`, and the extra fields given (`grpc-timeout`, `user-agent`), all
/// as HPACK literals that are never added to the server's table (RFC 7541 §6.2.2), so
/// the block is the same for every call and no call depends on another's.
pub(crate) fn request_head(
    https: bool,
    authority: &str,
    path: &str,
    extra: &[(&str, &str)],
) -> Bytes {
    let mut b = BytesMut::with_capacity(128);
    // Indexed (§6.1), static table (Appendix A): 3 `:method: POST`, 6/7 `:scheme`.
    b.put_u8(0x80 | 3);
    b.put_u8(0x80 | if https { 7 } else { 6 });
    // Literals without indexing, names from the static table: 4 `:path`, 1
    // `:authority`, 31 `content-type`.
    for (index, value) in [(4, path), (1, authority), (31, "application/grpc")] {
        integer(&mut b, 4, 0x00, index);
        string(&mut b, value);
    }
    for (name, value) in [("te", "trailers")].iter().chain(extra) {
        b.put_u8(0x00);
        string(&mut b, name);
        string(&mut b, value);
    }
    b.freeze()
}

/// An HPACK integer with an `n`-bit prefix after `flags` (RFC 7541 §5.1).
fn integer(b: &mut BytesMut, n: u8, flags: u8, mut v: usize) {
    let max = (1usize << n) - 1;
    if v < max {
        b.put_u8(flags | v as u8);
        return;
    }
    b.put_u8(flags | max as u8);
    v -= max;
    while v >= 128 {
        b.put_u8((v % 128) as u8 | 0x80);
        v /= 128;
    }
    b.put_u8(v as u8);
}

/// An HPACK string literal, not Huffman-coded (RFC 7541 §5.2).
fn string(b: &mut BytesMut, s: &str) {
    integer(b, 7, 0x00, s.len());
    b.put_slice(s.as_bytes());
}

/// Why an answer's body is not one gRPC message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Framing {
    TooLarge,
    Compressed,
    Extra,
}

/// An answer's one length-prefixed message, gathered from its `DATA` frames: the
/// prefix is checked against the limit as soon as it has come, and a message that came
/// in one frame is kept without a copy.
#[derive(Debug)]
pub(crate) struct Message {
    limit: usize,
    first: Option<Bytes>,
    rest: BytesMut,
    /// The prefix and message's length, once the prefix has come.
    whole: Option<usize>,
}

impl Message {
    pub(crate) fn new(limit: usize) -> Message {
        Message {
            limit,
            first: None,
            rest: BytesMut::new(),
            whole: None,
        }
    }

    fn len(&self) -> usize {
        self.first.as_ref().map_or(0, Bytes::len) + self.rest.len()
    }

    pub(crate) fn push(&mut self, chunk: Bytes) -> Result<(), Framing> {
        if chunk.is_empty() {
            return Ok(());
        }
        if self.first.is_none() && self.rest.is_empty() {
            self.first = Some(chunk);
        } else {
            if let Some(f) = self.first.take() {
                // At most 64 MiB ahead: a length prefix alone makes no allocation.
                let want = self.whole.unwrap_or(0).min(64 << 20);
                self.rest.reserve(want.max(f.len() + chunk.len()));
                self.rest.extend_from_slice(&f);
            }
            self.rest.extend_from_slice(&chunk);
        }
        if self.whole.is_none() && self.len() >= 5 {
            let head: &[u8] = match &self.first {
                Some(f) => f,
                None => &self.rest,
            };
            if head[0] != 0 {
                return Err(Framing::Compressed);
            }
            let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
            if len > self.limit {
                return Err(Framing::TooLarge);
            }
            self.whole = Some(5 + len);
        }
        match self.whole {
            Some(w) if self.len() > w => Err(Framing::Extra),
            _ => Ok(()),
        }
    }

    /// The message, when exactly one came whole.
    pub(crate) fn finish(self) -> Option<Bytes> {
        if self.whole? != self.len() {
            return None;
        }
        let mut all = match self.first {
            Some(f) => f,
            None => self.rest.freeze(),
        };
        all.advance(5);
        Some(all)
    }
}

/// A call on its way to the connection's task.
struct Call {
    req: Request,
    reply: oneshot::Sender<Result<Answer, Fault>>,
}

/// A connection's calls. Clones share the connection; it closes when the last clone is
/// dropped and no call is under way.
#[derive(Clone, Debug)]
pub(crate) struct Channel {
    calls: mpsc::UnboundedSender<Call>,
}

impl Channel {
    /// Starts HTTP/2 on `io` (a TCP or TLS stream, connected) in a task of the current
    /// tokio runtime.
    pub(crate) fn open<T>(io: T) -> Channel
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (calls, rx) = mpsc::unbounded_channel();
        let mut conn = Conn::new(io, rx);
        tokio::spawn(std::future::poll_fn(move |cx| conn.poll(cx)));
        Channel { calls }
    }

    /// Whether the connection has ended (a call now would be [`Fault::Broken`] with
    /// `unsent`).
    pub(crate) fn is_closed(&self) -> bool {
        self.calls.is_closed()
    }

    /// Makes a call and waits for its answer. Dropping the future abandons the call;
    /// the connection resets it when its answer comes.
    pub(crate) async fn call(&self, req: Request) -> Result<Answer, Fault> {
        let (reply, answer) = oneshot::channel();
        self.calls
            .send(Call { req, reply })
            .map_err(|_| Fault::unsent("the connection is closed"))?;
        answer.await.unwrap_or_else(|_| {
            Err(Fault::Broken {
                why: "the connection's task ended".into(),
                unsent: false,
            })
        })
    }
}

/// A call under way.
struct Stream {
    reply: oneshot::Sender<Result<Answer, Fault>>,
    /// The body still to send: the prefix (with the message when small) and the rest.
    unsent: [Bytes; 2],
    /// The send window.
    window: i64,
    /// Bytes received and not yet given back by a `WINDOW_UPDATE`.
    unacked: u32,
    head: Option<Fields>,
    message: Message,
}

impl Stream {
    fn has_unsent(&self) -> bool {
        !self.unsent[0].is_empty() || !self.unsent[1].is_empty()
    }
}

/// A connection error: the socket failed, or the peer broke HTTP/2 (with the code to
/// say so in `GOAWAY`).
enum ConnError {
    Broken(String),
    Protocol(u32, String),
}

fn protocol(code: u32, why: impl Into<String>) -> ConnError {
    ConnError::Protocol(code, why.into())
}

/// A header block being read: its stream, its `HEADERS` frame's `END_STREAM`, and the
/// block so far.
struct Block {
    stream: u32,
    end_stream: bool,
    bytes: BytesMut,
}

/// The connection's task: the socket, the calls under way and waiting, and HTTP/2's
/// state.
struct Conn<T> {
    io: T,
    calls: mpsc::UnboundedReceiver<Call>,
    /// No more calls will come (every [`Channel`] dropped, or the connection closing).
    no_more_calls: bool,
    /// The bytes read and not yet taken as frames.
    read: BytesMut,
    read_chunk: Box<[u8]>,
    /// What is to be written, in order: [`Conn::frames`] and the large bodies.
    out: VecDeque<Bytes>,
    frames: BytesMut,
    next_id: u32,
    streams: HashMap<u32, Stream>,
    /// Streams with body left to send, in the order they opened.
    sending: VecDeque<u32>,
    /// Calls past the server's stream limit.
    waiting: VecDeque<Call>,
    // The server's settings.
    max_frame: usize,
    initial_window: i64,
    max_streams: usize,
    /// The connection's send window.
    window: i64,
    /// Bytes received on the connection and not yet given back.
    unacked: u32,
    hpack: loona_hpack::Decoder<'static>,
    block: Option<Block>,
    /// The server's first frame (its `SETTINGS`) has come.
    greeted: bool,
    /// The server sent `GOAWAY`: no new stream.
    going_away: bool,
}

impl<T: AsyncRead + AsyncWrite + Unpin> Conn<T> {
    fn new(io: T, calls: mpsc::UnboundedReceiver<Call>) -> Conn<T> {
        let mut frames = BytesMut::with_capacity(READ_CHUNK);
        frames.put_slice(PREFACE);
        let settings: [(u16, u32); 3] = [
            (0x2, 0),                       // ENABLE_PUSH
            (0x4, STREAM_WINDOW),           // INITIAL_WINDOW_SIZE
            (0x6, MAX_HEADER_BLOCK as u32), // MAX_HEADER_LIST_SIZE
        ];
        frame_head(&mut frames, 6 * settings.len(), SETTINGS, 0, 0);
        for (id, v) in settings {
            frames.put_u16(id);
            frames.put_u32(v);
        }
        window_update(&mut frames, 0, CONNECTION_WINDOW - 65_535);
        let mut hpack = loona_hpack::Decoder::new();
        hpack.set_max_allowed_table_size(HEADER_TABLE);
        Conn {
            io,
            calls,
            no_more_calls: false,
            read: BytesMut::with_capacity(READ_CHUNK),
            read_chunk: vec![0; READ_CHUNK].into_boxed_slice(),
            out: VecDeque::new(),
            frames,
            next_id: 1,
            streams: HashMap::new(),
            sending: VecDeque::new(),
            waiting: VecDeque::new(),
            max_frame: MAX_FRAME,
            initial_window: 65_535,
            max_streams: usize::MAX,
            window: 65_535,
            unacked: 0,
            hpack,
            block: None,
            greeted: false,
            going_away: false,
        }
    }

    /// Runs the connection until it ends: takes new calls, writes, reads.
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            while !self.no_more_calls {
                match self.calls.poll_recv(cx) {
                    Poll::Ready(Some(call)) => self.admit(call),
                    Poll::Ready(None) => self.no_more_calls = true,
                    Poll::Pending => break,
                }
            }
            self.send_bodies();
            if let Poll::Ready(Err(e)) = self.poll_write(cx) {
                self.end(ConnError::Broken(format!("writing: {e}")));
                return Poll::Ready(());
            }
            if self.done() {
                return Poll::Ready(());
            }
            match self.poll_read(cx) {
                Poll::Ready(Ok(0)) => {
                    let why = if self.streams.is_empty() {
                        "the server closed the connection"
                    } else {
                        "the server closed the connection before answering"
                    };
                    self.end(ConnError::Broken(why.into()));
                    return Poll::Ready(());
                }
                Poll::Ready(Ok(_)) => {
                    if let Err(e) = self.take_frames() {
                        self.end(e);
                        return Poll::Ready(());
                    }
                }
                Poll::Ready(Err(e)) => {
                    self.end(ConnError::Broken(format!("reading: {e}")));
                    return Poll::Ready(());
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Whether the connection has nothing left to do: no caller can send a call, and
    /// no call is under way whose caller still waits.
    fn done(&mut self) -> bool {
        if self.going_away && self.streams.is_empty() {
            self.end(ConnError::Broken("the server closed the connection".into()));
            return true;
        }
        self.no_more_calls
            && self.waiting.is_empty()
            && self.out.is_empty()
            && self.streams.values().all(|s| s.reply.is_closed())
    }

    /// Ends the connection: every call under way or waiting gets `e`, and a protocol
    /// error is said to the server in a `GOAWAY` (written if the socket takes it now).
    fn end(&mut self, e: ConnError) {
        self.calls.close();
        let (why, protocol_error) = match e {
            ConnError::Broken(why) => (why, None),
            ConnError::Protocol(code, why) => (why, Some(code)),
        };
        if let Some(code) = protocol_error {
            self.frames.clear();
            self.out.clear();
            frame_head(&mut self.frames, 8, GOAWAY, 0, 0);
            // The last stream the server opened: none (push is off).
            self.frames.put_u32(0);
            self.frames.put_u32(code);
            // Written if the socket takes it at once; not waited for.
            let _ = self.poll_write(&mut Context::from_waker(std::task::Waker::noop()));
        }
        let fault = |unsent: bool| match protocol_error {
            Some(_) => Fault::Protocol(why.clone()),
            None => Fault::Broken {
                why: why.clone(),
                unsent,
            },
        };
        for (_, s) in self.streams.drain() {
            let _ = s.reply.send(Err(fault(false)));
        }
        for c in self.waiting.drain(..) {
            let _ = c.reply.send(Err(Fault::unsent(&why)));
        }
        while let Ok(c) = self.calls.try_recv() {
            let _ = c.reply.send(Err(Fault::unsent(&why)));
        }
    }

    /// Opens a stream for `call`, or keeps it waiting at the server's stream limit.
    fn admit(&mut self, call: Call) {
        if call.reply.is_closed() {
            return;
        }
        if self.going_away || self.next_id > MAX_STREAM_ID {
            self.going_away = true;
            // The ids are spent: callers see the channel closed and open a new one.
            self.calls.close();
            let _ = call
                .reply
                .send(Err(Fault::unsent("the server is closing the connection")));
            return;
        }
        if self.streams.len() >= self.max_streams {
            self.waiting.push_back(call);
            return;
        }
        let id = self.next_id;
        self.next_id += 2;
        let Call { req, reply } = call;
        // HEADERS and as many CONTINUATIONs as the server's frame size needs.
        let mut head = req.head;
        let mut kind = HEADERS;
        loop {
            let piece = head.split_to(head.len().min(self.max_frame));
            let flags = if head.is_empty() { END_HEADERS } else { 0 };
            frame_head(&mut self.frames, piece.len(), kind, flags, id);
            self.frames.put_slice(&piece);
            if head.is_empty() {
                break;
            }
            kind = CONTINUATION;
        }
        // gRPC's prefix: not compressed, the length (under 4 GiB: the caller checks).
        let len = req.message.len();
        let mut prefix = BytesMut::with_capacity(5 + if len < COPY_BELOW { len } else { 0 });
        prefix.put_u8(0);
        prefix.put_u32(len as u32);
        let rest = if len < COPY_BELOW {
            prefix.put_slice(&req.message);
            Bytes::new()
        } else {
            req.message
        };
        self.streams.insert(
            id,
            Stream {
                reply,
                unsent: [prefix.freeze(), rest],
                window: self.initial_window,
                unacked: 0,
                head: None,
                message: Message::new(req.limit),
            },
        );
        self.sending.push_back(id);
    }

    /// Writes the bodies' `DATA` frames that the windows allow, in the order the streams
    /// opened.
    fn send_bodies(&mut self) {
        let mut i = 0;
        while i < self.sending.len() && self.window > 0 {
            let id = self.sending[i];
            let Some(s) = self.streams.get_mut(&id) else {
                self.sending.remove(i);
                continue;
            };
            while s.window > 0 && self.window > 0 && s.has_unsent() {
                let which = usize::from(s.unsent[0].is_empty());
                let allowed = (s.window.min(self.window) as usize).min(self.max_frame);
                // Fill the frame from both pieces when the first is short.
                let take0 = s.unsent[which].len().min(allowed);
                let take1 = if which == 0 {
                    s.unsent[1].len().min(allowed - take0)
                } else {
                    0
                };
                let n = take0 + take1;
                let last = n == s.unsent[0].len() + s.unsent[1].len();
                frame_head(
                    &mut self.frames,
                    n,
                    DATA,
                    if last { END_STREAM } else { 0 },
                    id,
                );
                for (piece, take) in [(which, take0), (1, take1)] {
                    if take == 0 {
                        continue;
                    }
                    let bytes = s.unsent[piece].split_to(take);
                    if take < COPY_BELOW {
                        self.frames.put_slice(&bytes);
                    } else {
                        self.out.push_back(self.frames.split().freeze());
                        self.out.push_back(bytes);
                    }
                }
                s.window -= n as i64;
                self.window -= n as i64;
            }
            if s.has_unsent() {
                i += 1;
            } else {
                self.sending.remove(i);
            }
        }
    }

    /// Writes what is queued, as far as the socket takes it now.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if !self.frames.is_empty() {
            self.out.push_back(self.frames.split().freeze());
        }
        // No early return when nothing is queued: a TLS stream may still hold the
        // encrypted end of what was written (its `poll_write` took it, its flush was
        // Pending), and nothing else would flush it.
        while !self.out.is_empty() {
            let io = Pin::new(&mut self.io);
            let n = if self.out.len() > 1 && io.is_write_vectored() {
                let mut slices = [IoSlice::new(&[]); 16];
                let k = self.out.len().min(slices.len());
                for (s, b) in slices.iter_mut().zip(self.out.iter()) {
                    *s = IoSlice::new(b);
                }
                ready!(Pin::new(&mut self.io).poll_write_vectored(cx, &slices[..k]))?
            } else {
                ready!(io.poll_write(cx, &self.out[0]))?
            };
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            let mut n = n;
            while n > 0 {
                let Some(front) = self.out.front_mut() else {
                    break;
                };
                if n >= front.len() {
                    n -= front.len();
                    self.out.pop_front();
                } else {
                    front.advance(n);
                    n = 0;
                }
            }
        }
        Pin::new(&mut self.io).poll_flush(cx)
    }

    /// Reads what the socket has: the number of bytes, 0 at its end.
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<usize>> {
        let mut buf = ReadBuf::new(&mut self.read_chunk);
        ready!(Pin::new(&mut self.io).poll_read(cx, &mut buf))?;
        let n = buf.filled().len();
        self.read.extend_from_slice(buf.filled());
        Poll::Ready(Ok(n))
    }

    /// Takes the whole frames read.
    fn take_frames(&mut self) -> Result<(), ConnError> {
        loop {
            if !self.greeted && self.read.starts_with(b"HTTP/") {
                let line = self.read[..].split(|&b| b == b'\r' || b == b'\n').next();
                let line = String::from_utf8_lossy(line.unwrap_or_default());
                return Err(protocol(
                    PROTOCOL_ERROR,
                    format!("it answered in HTTP/1: {}", super::shown(line.as_bytes())),
                ));
            }
            if self.read.len() < 9 {
                return Ok(());
            }
            let len = u32::from_be_bytes([0, self.read[0], self.read[1], self.read[2]]) as usize;
            if len > MAX_FRAME {
                return Err(protocol(
                    FRAME_SIZE_ERROR,
                    format!("a frame of {len} bytes, over HTTP/2's {MAX_FRAME}-byte limit this client set"),
                ));
            }
            if self.read.len() < 9 + len {
                return Ok(());
            }
            let head = self.read.split_to(9);
            let payload = self.read.split_to(len).freeze();
            let (kind, flags) = (head[3], head[4]);
            let id = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & MAX_STREAM_ID;
            if !self.greeted {
                if kind != SETTINGS || flags & ACK != 0 {
                    return Err(protocol(
                        PROTOCOL_ERROR,
                        format!(
                            "its first frame is of type {kind:#x}, not SETTINGS (HTTP/2's preface)"
                        ),
                    ));
                }
                self.greeted = true;
            }
            self.frame(kind, flags, id, payload)?;
        }
    }

    /// Takes one frame.
    fn frame(&mut self, kind: u8, flags: u8, id: u32, payload: Bytes) -> Result<(), ConnError> {
        if let Some(b) = &mut self.block {
            if kind != CONTINUATION || id != b.stream {
                return Err(protocol(
                    PROTOCOL_ERROR,
                    format!("a frame of type {kind:#x} inside a header block"),
                ));
            }
            if b.bytes.len() + payload.len() > MAX_HEADER_BLOCK {
                return Err(protocol(
                    PROTOCOL_ERROR,
                    format!("a header block over {MAX_HEADER_BLOCK} bytes"),
                ));
            }
            b.bytes.put_slice(&payload);
            if flags & END_HEADERS != 0 {
                let b = self.block.take().expect("a block is being read");
                return self.headers(b.stream, b.end_stream, &b.bytes);
            }
            return Ok(());
        }
        match kind {
            DATA => self.data(flags, id, payload),
            HEADERS => {
                let end_stream = flags & END_STREAM != 0;
                let mut block = unpad(flags, payload)?;
                if flags & PRIORITY != 0 {
                    if block.len() < 5 {
                        return Err(protocol(
                            FRAME_SIZE_ERROR,
                            "a HEADERS frame too short for its priority",
                        ));
                    }
                    block.advance(5);
                }
                if id == 0 {
                    return Err(protocol(PROTOCOL_ERROR, "HEADERS on stream 0"));
                }
                if flags & END_HEADERS != 0 {
                    self.headers(id, end_stream, &block)
                } else {
                    self.block = Some(Block {
                        stream: id,
                        end_stream,
                        bytes: BytesMut::from(&block[..]),
                    });
                    Ok(())
                }
            }
            CONTINUATION => Err(protocol(
                PROTOCOL_ERROR,
                "CONTINUATION without a header block",
            )),
            RST_STREAM => {
                if payload.len() != 4 || id == 0 {
                    return Err(protocol(FRAME_SIZE_ERROR, "a malformed RST_STREAM"));
                }
                let code = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]);
                if let Some(s) = self.streams.remove(&id) {
                    let fault = if code == REFUSED_STREAM {
                        Fault::unsent("the server refused the stream (REFUSED_STREAM)")
                    } else {
                        Fault::Reset(code)
                    };
                    let _ = s.reply.send(Err(fault));
                    self.ended();
                }
                Ok(())
            }
            SETTINGS => self.settings(flags, id, &payload),
            PUSH_PROMISE => Err(protocol(
                PROTOCOL_ERROR,
                "PUSH_PROMISE, though push was disabled",
            )),
            PING => {
                if payload.len() != 8 || id != 0 {
                    return Err(protocol(FRAME_SIZE_ERROR, "a malformed PING"));
                }
                if flags & ACK == 0 {
                    frame_head(&mut self.frames, 8, PING, ACK, 0);
                    self.frames.put_slice(&payload);
                }
                Ok(())
            }
            GOAWAY => {
                if payload.len() < 8 || id != 0 {
                    return Err(protocol(FRAME_SIZE_ERROR, "a malformed GOAWAY"));
                }
                let last = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]])
                    & MAX_STREAM_ID;
                let code = u32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
                self.going_away = true;
                let said = String::from_utf8_lossy(&payload[8..payload.len().min(8 + 256)]);
                let why = format!(
                    "the server is closing the connection (GOAWAY {}{})",
                    error_name(code),
                    if said.is_empty() {
                        String::new()
                    } else {
                        format!(": {said}")
                    }
                );
                let unprocessed: Vec<u32> =
                    self.streams.keys().copied().filter(|&s| s > last).collect();
                for s in unprocessed {
                    if let Some(s) = self.streams.remove(&s) {
                        let _ = s.reply.send(Err(Fault::unsent(&why)));
                    }
                }
                for c in self.waiting.drain(..) {
                    let _ = c.reply.send(Err(Fault::unsent(&why)));
                }
                self.calls.close();
                Ok(())
            }
            WINDOW_UPDATE => {
                if payload.len() != 4 {
                    return Err(protocol(FRAME_SIZE_ERROR, "a malformed WINDOW_UPDATE"));
                }
                let inc = i64::from(
                    u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]])
                        & MAX_STREAM_ID,
                );
                if inc == 0 {
                    return Err(protocol(PROTOCOL_ERROR, "a WINDOW_UPDATE of 0"));
                }
                let window = if id == 0 {
                    &mut self.window
                } else if let Some(s) = self.streams.get_mut(&id) {
                    &mut s.window
                } else {
                    return Ok(());
                };
                *window += inc;
                if *window > MAX_WINDOW {
                    return Err(protocol(FLOW_CONTROL_ERROR, "a window over 2^31 - 1 bytes"));
                }
                Ok(())
            }
            // PRIORITY, and types this client does not know, are ignored (§5.5).
            _ => Ok(()),
        }
    }

    /// The server's `SETTINGS`: acknowledged, and the ones a client sending requests
    /// must follow taken.
    fn settings(&mut self, flags: u8, id: u32, payload: &[u8]) -> Result<(), ConnError> {
        if id != 0 {
            return Err(protocol(PROTOCOL_ERROR, "SETTINGS on a stream"));
        }
        if flags & ACK != 0 {
            return if payload.is_empty() {
                Ok(())
            } else {
                Err(protocol(
                    FRAME_SIZE_ERROR,
                    "a SETTINGS acknowledgement with a payload",
                ))
            };
        }
        if !payload.len().is_multiple_of(6) {
            return Err(protocol(
                FRAME_SIZE_ERROR,
                "a SETTINGS frame not of 6-byte settings",
            ));
        }
        for s in payload.chunks_exact(6) {
            let v = u32::from_be_bytes([s[2], s[3], s[4], s[5]]);
            match u16::from_be_bytes([s[0], s[1]]) {
                // MAX_CONCURRENT_STREAMS
                0x3 => self.max_streams = v as usize,
                // INITIAL_WINDOW_SIZE: applies to the streams open (§6.9.2).
                0x4 => {
                    if i64::from(v) > MAX_WINDOW {
                        return Err(protocol(
                            FLOW_CONTROL_ERROR,
                            "an initial window over 2^31 - 1 bytes",
                        ));
                    }
                    let delta = i64::from(v) - self.initial_window;
                    self.initial_window = i64::from(v);
                    for s in self.streams.values_mut() {
                        s.window += delta;
                        if s.window > MAX_WINDOW {
                            return Err(protocol(
                                FLOW_CONTROL_ERROR,
                                "a window over 2^31 - 1 bytes",
                            ));
                        }
                    }
                }
                // MAX_FRAME_SIZE
                0x5 => {
                    if !(16_384..=16_777_215).contains(&v) {
                        return Err(protocol(PROTOCOL_ERROR, format!("a frame size of {v}")));
                    }
                    self.max_frame = v as usize;
                }
                // HEADER_TABLE_SIZE (this client's literals use no table), ENABLE_PUSH,
                // MAX_HEADER_LIST_SIZE (a request's block is small), and unknown ones.
                _ => {}
            }
        }
        frame_head(&mut self.frames, 0, SETTINGS, ACK, 0);
        // A raised limit lets waiting calls open.
        self.ended();
        Ok(())
    }

    /// A header block, whole: decoded (always, for HPACK's table), and taken as the
    /// answer's headers or trailers.
    fn headers(&mut self, id: u32, end_stream: bool, block: &[u8]) -> Result<(), ConnError> {
        let mut f = Fields::default();
        self.hpack
            .decode_with_cb(block, |name, value| {
                let slot = match &*name {
                    b":status" => &mut f.status,
                    b"grpc-status" => &mut f.grpc_status,
                    b"grpc-message" => &mut f.grpc_message,
                    _ => return,
                };
                *slot = Some(Bytes::copy_from_slice(&value));
            })
            .map_err(|e| {
                protocol(
                    COMPRESSION_ERROR,
                    format!("a header block HPACK cannot decode ({e:?})"),
                )
            })?;
        let Some(s) = self.streams.get_mut(&id) else {
            return Ok(());
        };
        if s.reply.is_closed() {
            return self.abandon(id);
        }
        match s.head {
            None if f
                .status
                .as_deref()
                .is_some_and(|v| v.first() == Some(&b'1'))
                && !end_stream =>
            {
                // An informational answer (1xx): the real one follows.
                Ok(())
            }
            None => {
                s.head = Some(f);
                if end_stream {
                    self.finish(id, None);
                }
                Ok(())
            }
            Some(_) if end_stream => {
                self.finish(id, Some(f));
                Ok(())
            }
            Some(_) => {
                self.fail(
                    id,
                    Fault::Protocol("a second header block that does not end the answer".into()),
                );
                Ok(())
            }
        }
    }

    /// A `DATA` frame: counted for flow control, and its bytes added to the answer.
    fn data(&mut self, flags: u8, id: u32, payload: Bytes) -> Result<(), ConnError> {
        if id == 0 {
            return Err(protocol(PROTOCOL_ERROR, "DATA on stream 0"));
        }
        let size = payload.len() as u32;
        self.unacked += size;
        if self.unacked >= CONNECTION_WINDOW / 2 {
            window_update(&mut self.frames, 0, self.unacked);
            self.unacked = 0;
        }
        let body = unpad(flags, payload)?;
        let Some(s) = self.streams.get_mut(&id) else {
            return Ok(());
        };
        if s.reply.is_closed() {
            return self.abandon(id);
        }
        if s.head.is_none() {
            self.fail(
                id,
                Fault::Protocol("DATA before the answer's headers".into()),
            );
            return Ok(());
        }
        if let Err(f) = s.message.push(body) {
            self.fail(id, Fault::Framing(f));
            return Ok(());
        }
        if flags & END_STREAM != 0 {
            self.finish(id, None);
            return Ok(());
        }
        s.unacked += size;
        if s.unacked >= STREAM_WINDOW / 2 {
            window_update(&mut self.frames, id, s.unacked);
            s.unacked = 0;
        }
        Ok(())
    }

    /// The answer of `id` has ended: it goes to its caller. A body not yet all sent is
    /// given up (the server answered without it).
    fn finish(&mut self, id: u32, trailers: Option<Fields>) {
        let Some(s) = self.streams.remove(&id) else {
            return;
        };
        if s.has_unsent() {
            reset(&mut self.frames, id, NO_ERROR);
        }
        let answer = Answer {
            head: s.head.unwrap_or_default(),
            trailers,
            message: s.message.finish(),
        };
        let _ = s.reply.send(Ok(answer));
        self.ended();
    }

    /// The call `id` fails with `fault`; the stream is reset.
    fn fail(&mut self, id: u32, fault: Fault) {
        if let Some(s) = self.streams.remove(&id) {
            reset(&mut self.frames, id, CANCEL);
            let _ = s.reply.send(Err(fault));
            self.ended();
        }
    }

    /// The caller of `id` stopped waiting: the stream is reset.
    fn abandon(&mut self, id: u32) -> Result<(), ConnError> {
        if self.streams.remove(&id).is_some() {
            reset(&mut self.frames, id, CANCEL);
            self.ended();
        }
        Ok(())
    }

    /// A stream ended (or the limit rose): waiting calls open as far as the limit lets.
    fn ended(&mut self) {
        while self.streams.len() < self.max_streams && !self.going_away {
            let Some(c) = self.waiting.pop_front() else {
                break;
            };
            self.admit(c);
        }
    }
}

/// A frame's 9-byte header.
fn frame_head(b: &mut BytesMut, len: usize, kind: u8, flags: u8, id: u32) {
    b.put_slice(&(len as u32).to_be_bytes()[1..]);
    b.put_u8(kind);
    b.put_u8(flags);
    b.put_u32(id);
}

fn window_update(b: &mut BytesMut, id: u32, inc: u32) {
    frame_head(b, 4, WINDOW_UPDATE, 0, id);
    b.put_u32(inc);
}

fn reset(b: &mut BytesMut, id: u32, code: u32) {
    frame_head(b, 4, RST_STREAM, 0, id);
    b.put_u32(code);
}

/// A `DATA` or `HEADERS` payload without its padding (§6.1).
fn unpad(flags: u8, mut payload: Bytes) -> Result<Bytes, ConnError> {
    if flags & PADDED == 0 {
        return Ok(payload);
    }
    let Some(&pad) = payload.first() else {
        return Err(protocol(
            FRAME_SIZE_ERROR,
            "a padded frame with no pad length",
        ));
    };
    let pad = usize::from(pad);
    if pad >= payload.len() {
        return Err(protocol(PROTOCOL_ERROR, "padding as long as its frame"));
    }
    payload.truncate(payload.len() - pad);
    payload.advance(1);
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// Runs `f` to its end, within 30 s.
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(async { tokio::time::timeout(Duration::from_secs(30), f).await })
            .expect("the test's calls end within 30 s")
    }

    fn framed(m: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8];
        v.extend_from_slice(&(m.len() as u32).to_be_bytes());
        v.extend_from_slice(m);
        v
    }

    fn request(message: &[u8], limit: usize) -> Request {
        Request {
            head: request_head(false, "127.0.0.1:1", "/p.S/M", &[("grpc-timeout", "5S")]),
            message: Bytes::copy_from_slice(message),
            limit,
        }
    }

    #[test]
    fn request_heads_decode_as_written() {
        let long = format!("/{}", "a".repeat(300));
        let head = request_head(true, "h:8500", &long, &[("grpc-timeout", "30000m")]);
        let got = loona_hpack::Decoder::new().decode(&head).unwrap();
        let want: Vec<(Vec<u8>, Vec<u8>)> = [
            (":method", "POST"),
            (":scheme", "https"),
            (":path", long.as_str()),
            (":authority", "h:8500"),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
            ("grpc-timeout", "30000m"),
        ]
        .iter()
        .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn messages_are_framed_checked_and_kept_whole() {
        // One frame, or split anywhere, gives the same message.
        let f = framed(b"hello");
        for cut in 0..=f.len() {
            let mut m = Message::new(100);
            m.push(Bytes::copy_from_slice(&f[..cut])).unwrap();
            m.push(Bytes::copy_from_slice(&f[cut..])).unwrap();
            assert_eq!(m.finish().as_deref(), Some(&b"hello"[..]), "cut at {cut}");
        }
        // Over the limit: refused on the prefix alone.
        let mut m = Message::new(4);
        assert_eq!(
            m.push(Bytes::copy_from_slice(&f[..5])),
            Err(Framing::TooLarge)
        );
        // Compressed, a second message, a cut message.
        let mut c = f.clone();
        c[0] = 1;
        assert_eq!(Message::new(100).push(c.into()), Err(Framing::Compressed));
        let mut two = f.clone();
        two.extend_from_slice(&f);
        assert_eq!(Message::new(100).push(two.into()), Err(Framing::Extra));
        let mut short = Message::new(100);
        short.push(Bytes::copy_from_slice(&f[..7])).unwrap();
        assert_eq!(short.finish(), None);
        assert_eq!(Message::new(100).finish(), None);
    }

    /// h2's server answering each call with `answer(request message)` and the
    /// trailers `grpc-status: 0` and `grpc-message: trailer`; counts its connections.
    async fn h2_server(
        builder: h2::server::Builder,
        answer: fn(Bytes) -> Bytes,
        trailer: String,
    ) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let conns = Arc::new(AtomicUsize::new(0));
        let counted = conns.clone();
        tokio::spawn(async move {
            loop {
                let (s, _) = l.accept().await.unwrap();
                counted.fetch_add(1, Ordering::SeqCst);
                let mut conn = builder.handshake::<_, Bytes>(s).await.unwrap();
                let trailer = trailer.clone();
                tokio::spawn(async move {
                    while let Some(r) = conn.accept().await {
                        let (req, mut respond) = r.unwrap();
                        let trailer = trailer.clone();
                        tokio::spawn(async move {
                            let mut body = req.into_body();
                            let mut got = Vec::new();
                            while let Some(c) = body.data().await {
                                let c = c.unwrap();
                                let _ = body.flow_control().release_capacity(c.len());
                                got.extend_from_slice(&c);
                            }
                            let out = Bytes::from(framed(&answer(Bytes::from(got[5..].to_vec()))));
                            let mut send = respond
                                .send_response(::http::Response::new(()), false)
                                .unwrap();
                            send.reserve_capacity(out.len());
                            send.send_data(out, false).unwrap();
                            let mut t = ::http::HeaderMap::new();
                            t.insert("grpc-status", "0".parse().unwrap());
                            t.insert("grpc-message", trailer.parse().unwrap());
                            send.send_trailers(t).unwrap();
                        });
                    }
                });
            }
        });
        (addr, conns)
    }

    /// Many calls at once on one connection, past the server's limit of 2 streams at a
    /// time; each answer is its own call's.
    #[test]
    fn calls_at_once_share_one_connection_past_the_stream_limit() {
        block_on(async {
            let mut b = h2::server::Builder::new();
            b.max_concurrent_streams(2);
            let (addr, conns) = h2_server(b, |m| m, "ok".into()).await;
            let ch = Channel::open(TcpStream::connect(addr).await.unwrap());
            // After one call the server's SETTINGS (the limit) are known; before, calls
            // past it would be refused (REFUSED_STREAM, `unsent`: `Grpc` sends them again).
            ch.call(request(b"first", 100)).await.unwrap();
            let calls: Vec<_> = (0..40u32)
                .map(|i| {
                    let ch = ch.clone();
                    tokio::spawn(async move {
                        let m = i.to_be_bytes().repeat(i as usize + 1);
                        (m.clone(), ch.call(request(&m, 1 << 20)).await.unwrap())
                    })
                })
                .collect();
            for c in calls {
                let (m, a) = c.await.unwrap();
                assert_eq!(a.message.as_deref(), Some(&m[..]));
                assert_eq!(a.head.status.as_deref(), Some(&b"200"[..]));
                let t = a.trailers.unwrap();
                assert_eq!(t.grpc_status.as_deref(), Some(&b"0"[..]));
                assert_eq!(t.grpc_message.as_deref(), Some(&b"ok"[..]));
            }
            assert_eq!(conns.load(Ordering::SeqCst), 1);
        });
    }

    /// A 3 MiB request against h2's default 64 KiB windows waits for the server's
    /// WINDOW_UPDATEs; a 20 MiB answer is over this client's own windows (8 MiB a
    /// stream, 16 MiB the connection), so it only comes whole if this client opens them
    /// as it reads. A trailer of 40 kB comes in CONTINUATION frames.
    #[test]
    fn large_bodies_wait_for_windows_both_ways_and_large_trailers_continue() {
        block_on(async {
            let long = "m".repeat(40_000);
            let (addr, _) = h2_server(
                h2::server::Builder::new(),
                |m| Bytes::from(m.repeat(7).into_iter().take(20 << 20).collect::<Vec<u8>>()),
                long.clone(),
            )
            .await;
            let ch = Channel::open(TcpStream::connect(addr).await.unwrap());
            let m: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
            let a = ch.call(request(&m, 64 << 20)).await.unwrap();
            let want: Vec<u8> = m.repeat(7).into_iter().take(20 << 20).collect();
            assert!(
                a.message.as_deref() == Some(&want[..]),
                "the answer differs"
            );
            let t = a.trailers.unwrap();
            assert_eq!(t.grpc_message.as_deref(), Some(long.as_bytes()));
            // The connection goes on.
            let a = ch.call(request(b"x", 64 << 20)).await.unwrap();
            assert_eq!(a.message.as_deref(), Some(&b"xxxxxxx"[..]));
        });
    }

    /// An answer over the limit fails its call alone; the next call on the connection
    /// is answered.
    #[test]
    fn an_answer_over_the_limit_fails_its_call_alone() {
        block_on(async {
            let (addr, conns) = h2_server(h2::server::Builder::new(), |m| m, "ok".into()).await;
            let ch = Channel::open(TcpStream::connect(addr).await.unwrap());
            let e = ch.call(request(&[1; 100], 99)).await.unwrap_err();
            assert_eq!(e, Fault::Framing(Framing::TooLarge));
            let a = ch.call(request(&[1; 99], 99)).await.unwrap();
            assert_eq!(a.message.as_deref(), Some(&[1u8; 99][..]));
            assert_eq!(conns.load(Ordering::SeqCst), 1);
        });
    }

    /// A server written frame by frame, for what h2's server never sends.
    struct Peer {
        s: TcpStream,
        buf: Vec<u8>,
    }

    /// A frame: type, flags, stream, payload.
    type Frame = (u8, u8, u32, Vec<u8>);

    impl Peer {
        /// Accepts a client and reads its preface.
        async fn accept(l: &TcpListener) -> Peer {
            let (s, _) = l.accept().await.unwrap();
            let mut p = Peer { s, buf: Vec::new() };
            let mut preface = [0u8; 24];
            p.s.read_exact(&mut preface).await.unwrap();
            assert_eq!(&preface[..], PREFACE);
            p
        }

        /// Sends the server's preface: its SETTINGS.
        async fn greet(mut self, settings: &[(u16, u32)]) -> Peer {
            let mut b = Vec::new();
            for (id, v) in settings {
                b.extend(id.to_be_bytes());
                b.extend(v.to_be_bytes());
            }
            self.send(SETTINGS, 0, 0, &b).await;
            self
        }

        async fn frame(&mut self) -> Option<Frame> {
            loop {
                if self.buf.len() >= 9 {
                    let len =
                        u32::from_be_bytes([0, self.buf[0], self.buf[1], self.buf[2]]) as usize;
                    if self.buf.len() >= 9 + len {
                        let f: Vec<u8> = self.buf.drain(..9 + len).collect();
                        let id = u32::from_be_bytes([f[5], f[6], f[7], f[8]]);
                        return Some((f[3], f[4], id, f[9..].to_vec()));
                    }
                }
                let mut b = [0u8; 65536];
                let n = self.s.read(&mut b).await.ok()?;
                if n == 0 {
                    return None;
                }
                self.buf.extend_from_slice(&b[..n]);
            }
        }

        /// The next frame of `kind` (others skipped).
        async fn next(&mut self, kind: u8) -> Option<Frame> {
            loop {
                let f = self.frame().await?;
                if f.0 == kind {
                    return Some(f);
                }
            }
        }

        async fn send(&mut self, kind: u8, flags: u8, id: u32, payload: &[u8]) {
            let mut b = BytesMut::new();
            frame_head(&mut b, payload.len(), kind, flags, id);
            b.put_slice(payload);
            self.s.write_all(&b).await.unwrap();
        }

        /// A whole answer to `id`: headers, `message` in one DATA frame, trailers.
        async fn answer(&mut self, id: u32, message: &[u8]) {
            self.send(HEADERS, END_HEADERS, id, &block(&[(":status", "200")]))
                .await;
            self.send(DATA, 0, id, &framed(message)).await;
            self.send(
                HEADERS,
                END_HEADERS | END_STREAM,
                id,
                &block(&[("grpc-status", "0")]),
            )
            .await;
        }
    }

    /// A header block of literals with new names, not indexed.
    fn block(fields: &[(&str, &str)]) -> Vec<u8> {
        let mut b = BytesMut::new();
        for (n, v) in fields {
            b.put_u8(0);
            string(&mut b, n);
            string(&mut b, v);
        }
        b.to_vec()
    }

    /// Runs `client` against a [`Peer`] running `server`.
    fn against<S, C>(
        server: impl FnOnce(Peer) -> S + Send + 'static,
        client: impl FnOnce(Channel) -> C,
    ) where
        S: std::future::Future<Output = ()> + Send + 'static,
        C: std::future::Future<Output = ()>,
    {
        block_on(async {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = l.local_addr().unwrap();
            let srv = tokio::spawn(async move { server(Peer::accept(&l).await).await });
            let ch = Channel::open(TcpStream::connect(addr).await.unwrap());
            client(ch).await;
            srv.await.unwrap();
        });
    }

    /// Padded HEADERS (with priority) and DATA, a PING (answered), a header block in
    /// CONTINUATIONs: the answer reads as sent.
    #[test]
    fn padding_priority_ping_and_continuation_are_read() {
        against(
            |p| async move {
                let mut p = p.greet(&[]).await;
                let (_, _, id, _) = p.next(HEADERS).await.unwrap();
                p.send(PING, 0, 0, b"12345678").await;
                let mut h = vec![3u8]; // pad length
                h.extend([0, 0, 0, 0, 16]); // priority: dependency, weight
                h.extend(block(&[(":status", "200")]));
                h.extend([0, 0, 0]);
                p.send(HEADERS, PADDED | PRIORITY | END_HEADERS, id, &h)
                    .await;
                let mut d = vec![200u8];
                d.extend(framed(b"padded"));
                d.extend([0u8; 200]);
                p.send(DATA, PADDED, id, &d).await;
                let t = block(&[("grpc-status", "0"), ("grpc-message", "split")]);
                p.send(HEADERS, END_STREAM, id, &t[..4]).await;
                p.send(CONTINUATION, 0, id, &t[4..9]).await;
                p.send(CONTINUATION, END_HEADERS, id, &t[9..]).await;
                let (_, flags, _, payload) = p.next(PING).await.unwrap();
                assert_eq!((flags, &payload[..]), (ACK, &b"12345678"[..]));
            },
            |ch| async move {
                let a = ch.call(request(b"q", 100)).await.unwrap();
                assert_eq!(a.message.as_deref(), Some(&b"padded"[..]));
                let t = a.trailers.unwrap();
                assert_eq!(t.grpc_message.as_deref(), Some(&b"split"[..]));
            },
        );
    }

    /// A server that lowers every window to 0 holds the body back until its
    /// WINDOW_UPDATEs, which it then gets in order, whole.
    #[test]
    fn a_body_waits_for_the_window() {
        against(
            |p| async move {
                let mut p = p.greet(&[(0x4, 0)]).await;
                let f = p.next(SETTINGS).await.unwrap();
                assert_eq!(f.1, 0, "the client's own SETTINGS");
                let f = p.next(SETTINGS).await.unwrap();
                assert_eq!(f.1, ACK, "the client took the window of 0");
                let (_, _, id, _) = p.next(HEADERS).await.unwrap();
                let mut got = Vec::new();
                for _ in 0..3 {
                    p.send(WINDOW_UPDATE, 0, id, &4u32.to_be_bytes()).await;
                    let (_, flags, _, d) = p.next(DATA).await.unwrap();
                    assert_eq!(d.len(), 4);
                    got.extend(d);
                    if flags & END_STREAM != 0 {
                        break;
                    }
                }
                assert_eq!(got, framed(b"abcdefg"));
                p.answer(id, b"ok").await;
            },
            |ch| async move {
                // After the client took the server's SETTINGS.
                tokio::time::sleep(Duration::from_millis(200)).await;
                let a = ch.call(request(b"abcdefg", 100)).await.unwrap();
                assert_eq!(a.message.as_deref(), Some(&b"ok"[..]));
            },
        );
    }

    /// GOAWAY and REFUSED_STREAM: the calls the server did not process are `unsent`
    /// (to be sent again), the one it did is answered, a reset one is a reset, and no
    /// call is taken after GOAWAY.
    #[test]
    fn goaway_and_refusals_say_what_was_not_processed() {
        against(
            |p| async move {
                let mut p = p.greet(&[]).await;
                let mut ids = Vec::new();
                for _ in 0..3 {
                    ids.push(p.next(HEADERS).await.unwrap().2);
                }
                p.send(RST_STREAM, 0, ids[1], &REFUSED_STREAM.to_be_bytes())
                    .await;
                let mut g = ids[0].to_be_bytes().to_vec();
                g.extend(NO_ERROR.to_be_bytes());
                g.extend(b"restarting");
                p.send(GOAWAY, 0, 0, &g).await;
                p.answer(ids[0], b"first").await;
            },
            |ch| async move {
                let calls: Vec<_> = (0..3)
                    .map(|_| {
                        let ch = ch.clone();
                        tokio::spawn(async move { ch.call(request(b"q", 100)).await })
                    })
                    .collect();
                let mut got = Vec::new();
                for c in calls {
                    got.push(c.await.unwrap());
                }
                assert_eq!(
                    got[0].as_ref().unwrap().message.as_deref(),
                    Some(&b"first"[..])
                );
                for g in &got[1..] {
                    assert!(
                        matches!(g, Err(Fault::Broken { unsent: true, .. })),
                        "{g:?}"
                    );
                }
                let Err(Fault::Broken { why, .. }) = &got[2] else {
                    unreachable!()
                };
                assert!(why.contains("GOAWAY NO_ERROR: restarting"), "{why}");
                let e = ch.call(request(b"q", 100)).await.unwrap_err();
                assert!(matches!(e, Fault::Broken { unsent: true, .. }), "{e:?}");
                assert!(ch.is_closed());
            },
        );
    }

    /// A call whose caller stopped waiting is reset when its answer starts; the server
    /// resetting a call fails that call alone.
    #[test]
    fn abandoned_calls_are_reset_and_resets_fail_one_call() {
        against(
            |p| async move {
                let mut p = p.greet(&[]).await;
                let first = p.next(HEADERS).await.unwrap().2;
                let second = p.next(HEADERS).await.unwrap().2;
                p.send(RST_STREAM, 0, second, &0x2u32.to_be_bytes()).await;
                // The first call's caller gave up after 200 ms.
                tokio::time::sleep(Duration::from_millis(400)).await;
                p.send(HEADERS, END_HEADERS, first, &block(&[(":status", "200")]))
                    .await;
                let (_, _, id, code) = p.next(RST_STREAM).await.unwrap();
                assert_eq!((id, &code[..]), (first, &CANCEL.to_be_bytes()[..]));
                let third = p.next(HEADERS).await.unwrap().2;
                p.answer(third, b"3").await;
            },
            |ch| async move {
                let a =
                    tokio::time::timeout(Duration::from_millis(200), ch.call(request(b"1", 100)));
                let b = ch.call(request(b"2", 100));
                let (a, b) = tokio::join!(a, b);
                assert!(a.is_err(), "the first call timed out");
                assert_eq!(b.unwrap_err(), Fault::Reset(0x2));
                // After the server answered the abandoned call (and saw it reset).
                tokio::time::sleep(Duration::from_millis(600)).await;
                let c = ch.call(request(b"3", 100)).await.unwrap();
                assert_eq!(c.message.as_deref(), Some(&b"3"[..]));
            },
        );
    }

    /// What breaks HTTP/2 is a protocol fault naming what came, with a GOAWAY to the
    /// server; a server that closes mid-call leaves the call broken, not unsent.
    #[test]
    fn broken_http2_is_named() {
        let cases: [(&[u8], &str); 4] = [
            (
                b"HTTP/1.1 400 Bad Request\r\n\r\n",
                "it answered in HTTP/1: HTTP/1.1 400 Bad Request",
            ),
            (&[0, 0x40, 1, DATA, 0, 0, 0, 0, 1], "a frame of 16385 bytes"),
            (
                &[0, 0, 0, CONTINUATION, 0, 0, 0, 0, 1],
                "CONTINUATION without a header block",
            ),
            (
                &[0, 0, 4, WINDOW_UPDATE, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                "a WINDOW_UPDATE of 0",
            ),
        ];
        for (bytes, want) in cases {
            let http1 = bytes.starts_with(b"HTTP");
            against(
                move |p| async move {
                    // HTTP/1 answers in place of SETTINGS.
                    let mut p = if http1 { p } else { p.greet(&[]).await };
                    p.next(HEADERS).await.unwrap();
                    p.s.write_all(bytes).await.unwrap();
                    if !http1 {
                        let (_, _, _, g) = p.next(GOAWAY).await.unwrap();
                        assert_ne!(&g[4..8], &NO_ERROR.to_be_bytes()[..]);
                    }
                },
                move |ch| async move {
                    match ch.call(request(b"q", 100)).await {
                        Err(Fault::Protocol(why)) => assert!(why.contains(want), "{why}"),
                        other => panic!("{want}: {other:?}"),
                    }
                },
            );
        }
        against(
            |p| async move {
                p.greet(&[]).await.next(HEADERS).await.unwrap();
            },
            |ch| async move {
                let e = ch.call(request(b"q", 100)).await.unwrap_err();
                assert!(matches!(e, Fault::Broken { unsent: false, .. }), "{e:?}");
            },
        );
    }

    /// A server's frame, most often one of the shapes a server sends (a header block,
    /// a framed message, a window or error code, a setting), else random bytes.
    fn any_frame() -> impl proptest::strategy::Strategy<Value = Frame> {
        use proptest::prelude::*;
        let kind = prop_oneof![
            Just(DATA),
            Just(HEADERS),
            Just(RST_STREAM),
            Just(SETTINGS),
            Just(PING),
            Just(GOAWAY),
            Just(WINDOW_UPDATE),
            Just(CONTINUATION),
            0u8..12,
        ];
        let flags = prop_oneof![
            Just(0),
            Just(END_STREAM),
            Just(END_HEADERS),
            Just(END_HEADERS | END_STREAM),
            Just(PADDED),
            any::<u8>(),
        ];
        let id = prop_oneof![Just(1u32), Just(0), Just(3)];
        let payload = prop_oneof![
            Just(Vec::new()),
            proptest::collection::vec(any::<u8>(), 0..4),
            proptest::collection::vec(any::<u8>(), 0..40),
            Just(block(&[(":status", "200")])),
            Just(block(&[("grpc-status", "0"), ("grpc-message", "m")])),
            Just(vec![0x88]),
            Just(vec![0x3f, 0xe1, 0x1f]),
            Just(framed(b"ok")),
            (0u32..70_000).prop_map(|v| v.to_be_bytes().to_vec()),
            (0u16..8, any::<u32>()).prop_map(|(k, v)| {
                let mut b = k.to_be_bytes().to_vec();
                b.extend(v.to_be_bytes());
                b
            }),
        ];
        (kind, flags, id, payload)
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(500))]

        /// Whatever frames a server sends after its SETTINGS, a call ends, answered or
        /// failed, and nothing panics.
        #[test]
        fn any_frames_end_the_call_without_a_panic(
            frames in proptest::collection::vec(any_frame(), 1..24)
        ) {
            let before = panics_here();
            block_on(async move {
                let (client, mut server) = tokio::io::duplex(1 << 16);
                let ch = Channel::open(client);
                let call = tokio::spawn({
                    let ch = ch.clone();
                    async move { ch.call(request(b"q", 100)).await }
                });
                // The call's stream (1) opens before the server's frames come.
                let mut preface = [0u8; 24];
                server.read_exact(&mut preface).await.unwrap();
                tokio::task::yield_now().await;
                let mut b = BytesMut::new();
                frame_head(&mut b, 0, SETTINGS, 0, 0);
                for (kind, flags, id, payload) in &frames {
                    frame_head(&mut b, payload.len(), *kind, *flags, *id);
                    b.put_slice(payload);
                }
                server.write_all(&b).await.unwrap();
                // Then the server stops sending (and still reads): the call must end
                // either way.
                server.shutdown().await.unwrap();
                let _ = call.await.expect("the call's task does not panic");
                drop(server);
            });
            // The connection's task runs on this thread: a panic in it is counted here.
            proptest::prop_assert_eq!(panics_here(), before, "the connection's task panicked");
        }
    }

    /// Panics so far on this test's thread (a task's panic is caught by tokio, so it is
    /// counted by a panic hook).
    fn panics_here() -> usize {
        use std::sync::{Mutex, Once};
        static HOOK: Once = Once::new();
        static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                let name = std::thread::current()
                    .name()
                    .unwrap_or_default()
                    .to_string();
                PANICS.lock().unwrap_or_else(|e| e.into_inner()).push(name);
                previous(info);
            }));
        });
        let me = std::thread::current()
            .name()
            .unwrap_or_default()
            .to_string();
        let panics = PANICS.lock().unwrap_or_else(|e| e.into_inner());
        panics.iter().filter(|n| **n == me).count()
    }
}
