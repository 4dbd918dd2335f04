//! Hostile servers against the network clients: each a listener on 127.0.0.1 written
//! here (the HTTP/2 frames by hand), bounded in time, that floods, stalls, amplifies,
//! breaks the protocol mid-frame or never ends its answers. The command line runs as a
//! child whose peak memory is read from `wait4`'s resource usage.
//!
//! `HOSTILE_TFREQ=/path/to/tfreq` runs the command-line cases against another build (an
//! older one, to see them fail).
#![cfg(feature = "net")]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;

/// HTTP/2's client connection preface (https://www.rfc-editor.org/rfc/rfc9113#section-3.4).
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Frame types and flags (RFC 9113 §6).
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const WINDOW_UPDATE: u8 = 0x8;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;

/// The peak resident memory allowed to the client, whatever the server does.
const MAX_RSS_KIB: i64 = 200 << 10;

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(9 + payload.len());
    f.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    f.push(kind);
    f.push(flags);
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
    let mut p = Vec::new();
    for (k, v) in pairs {
        p.extend_from_slice(&k.to_be_bytes());
        p.extend_from_slice(&v.to_be_bytes());
    }
    frame(SETTINGS, 0, 0, &p)
}

/// One frame as read: type, flags, stream, payload.
#[derive(Debug, Clone)]
struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

/// Reads the client's preface, then frames, until the deadline, the end of the stream
/// or `stop` says so; every frame is passed to `on` (which may answer on the socket).
fn read_frames(
    s: &mut TcpStream,
    deadline: Instant,
    mut on: impl FnMut(&mut TcpStream, &Frame) -> bool,
) {
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut buf = Vec::new();
    let mut preface = false;
    let mut chunk = [0u8; 64 << 10];
    while Instant::now() < deadline {
        match s.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(_) => return,
        }
        if !preface {
            if buf.len() < PREFACE.len() {
                continue;
            }
            assert_eq!(&buf[..PREFACE.len()], PREFACE, "the client's preface");
            buf.drain(..PREFACE.len());
            preface = true;
        }
        while buf.len() >= 9 {
            let len = u32::from_be_bytes([0, buf[0], buf[1], buf[2]]) as usize;
            if buf.len() < 9 + len {
                break;
            }
            let f = Frame {
                kind: buf[3],
                flags: buf[4],
                stream: u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]) & 0x7fff_ffff,
                payload: buf[9..9 + len].to_vec(),
            };
            buf.drain(..9 + len);
            if !on(s, &f) {
                return;
            }
        }
    }
}

/// A listener on 127.0.0.1 whose connections each run `serve` on a thread of their own;
/// the count of connections taken.
fn serve(
    serve: impl Fn(TcpStream, usize) + Send + Sync + 'static,
) -> (u16, Arc<AtomicUsize>, Arc<AtomicBool>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let conns = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (c, st) = (conns.clone(), stop.clone());
    let serve = Arc::new(serve);
    l.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let end = Instant::now() + Duration::from_secs(120);
        while Instant::now() < end && !st.load(Ordering::Relaxed) {
            match l.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(false).unwrap();
                    let n = c.fetch_add(1, Ordering::SeqCst);
                    let serve = serve.clone();
                    std::thread::spawn(move || serve(s, n));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    });
    (port, conns, stop)
}

/// The command line under test.
fn tfreq_bin() -> String {
    std::env::var("HOSTILE_TFREQ").unwrap_or_else(|_| env!("CARGO_BIN_EXE_tfreq").to_string())
}

/// How a child run ended: its exit code (None: killed by a signal), peak resident
/// memory in KiB, standard error, and the wall time.
struct Ran {
    code: Option<i32>,
    signal: Option<i32>,
    max_rss_kib: i64,
    stderr: String,
    took: Duration,
}

/// Runs `tfreq ARGS` and waits for it (at most `limit`, then it is killed and the test
/// fails), reading its peak memory from `wait4` (which reaps it: clippy does not see it).
#[allow(clippy::zombie_processes)]
fn run(args: &[&str], limit: Duration) -> Ran {
    let err = tempfile::NamedTempFile::new().unwrap();
    let start = Instant::now();
    let mut child = std::process::Command::new(tfreq_bin())
        .current_dir(crate::common::root())
        .args(args)
        .env_remove("TFREQ_TOKEN")
        .stdout(std::process::Stdio::null())
        .stderr(err.reopen().unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    loop {
        let mut status = 0;
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: pid is our child's; status and usage are valid for writing.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(r >= 0, "wait4: {}", std::io::Error::last_os_error());
        if r == pid {
            let took = start.elapsed();
            let stderr = std::fs::read_to_string(err.path()).unwrap_or_default();
            let (code, signal) = if libc::WIFEXITED(status) {
                (Some(libc::WEXITSTATUS(status)), None)
            } else {
                (None, Some(libc::WTERMSIG(status)))
            };
            return Ran {
                code,
                signal,
                max_rss_kib: usage.ru_maxrss,
                stderr,
                took,
            };
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tfreq {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn assert_bounded(what: &str, r: &Ran) {
    assert!(
        r.signal.is_none(),
        "{what}: killed by signal {:?} (peak {} MiB): {}",
        r.signal,
        r.max_rss_kib >> 10,
        r.stderr
    );
    assert!(
        r.max_rss_kib < MAX_RSS_KIB,
        "{what}: peak memory {} MiB, over {} MiB: {}",
        r.max_rss_kib >> 10,
        MAX_RSS_KIB >> 10,
        r.stderr
    );
}

/// A server that says SETTINGS, then writes `flood` frames as fast as the socket takes
/// them and never reads, until `for_how_long` has passed or the client is gone.
fn flooding(flood: Vec<u8>, for_how_long: Duration) -> (u16, Arc<AtomicBool>) {
    let (port, _, stop) = serve(move |mut s, _| {
        s.set_write_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut batch = settings(&[]);
        while batch.len() < 256 << 10 {
            batch.extend_from_slice(&flood);
        }
        let end = Instant::now() + for_how_long;
        while Instant::now() < end {
            match s.write(&batch) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return,
            }
        }
    });
    (port, stop)
}

/// Row 1: PING frames (and, apart, empty SETTINGS frames) flooded by a server that never
/// reads: every frame asks for an answer, which the client cannot write. The call ends
/// (its deadline) with the client's memory bounded: `h2` keeps one pending ACK and reads
/// no further frame until it is written.
#[test]
fn ping_and_settings_floods_leave_memory_bounded() {
    let ping = frame(PING, 0, 0, &[7; 8]);
    let empty_settings = settings(&[]);
    for (what, flood) in [("PING", ping), ("SETTINGS", empty_settings)] {
        let (port, stop) = flooding(flood, Duration::from_secs(25));
        let to = format!("grpc://127.0.0.1:{port}");
        let r = run(
            &[
                "send",
                "tests/data/tfs/faq_prod.bin",
                "--to",
                &to,
                // Four seconds of a flood on the loopback: gigabytes of frames, had
                // the client kept an answer or a frame for each.
                "--timeout",
                "4",
            ],
            Duration::from_secs(40),
        );
        stop.store(true, Ordering::Relaxed);
        assert_bounded(what, &r);
        assert_eq!(r.code, Some(2), "{what}: {}", r.stderr);
        assert!(
            r.took < Duration::from_secs(12),
            "{what}: took {:?}",
            r.took
        );
        eprintln!(
            "{what} flood: peak {} MiB, {:?}",
            r.max_rss_kib >> 10,
            r.took
        );
    }
}

/// Frames the client sent, each with the number of its connection.
type SeenFrames = Arc<Mutex<Vec<(usize, Frame)>>>;

/// A server that says SETTINGS with `MAX_CONCURRENT_STREAMS` 1, ACKs the client's, and
/// never answers a call: every frame the client sends, by connection.
fn silent_server() -> (u16, SeenFrames, Arc<AtomicBool>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let (port, _, stop) = serve(move |mut s, n| {
        s.write_all(&settings(&[(0x3, 1)])).unwrap();
        let seen = s2.clone();
        read_frames(&mut s, Instant::now() + Duration::from_secs(30), |s, f| {
            if f.kind == SETTINGS && f.flags & ACK == 0 {
                let _ = s.write_all(&frame(SETTINGS, ACK, 0, &[]));
            }
            if f.kind == PING && f.flags & ACK == 0 {
                let _ = s.write_all(&frame(PING, ACK, 0, &f.payload));
            }
            seen.lock().unwrap().push((n, f.clone()));
            true
        });
    });
    (port, seen, stop)
}

/// Waits (at most `limit`) until `cond` holds, with the runtime turning meanwhile: what a
/// connection's task writes (a reset, a GOAWAY) is written only while it turns. Whether
/// `cond` came.
async fn turning_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cond()
}

/// A gRPC answer by hand: `:status` 200, `content-type: application/grpc`, an empty
/// message and `grpc-status: 0`.
fn grpc_ok(id: u32) -> Vec<u8> {
    let mut out = Vec::new();
    // :status 200, then content-type (a literal whose name is the static table's 31).
    let mut head = vec![0x88, 0x0f, 0x10, 16];
    head.extend_from_slice(b"application/grpc");
    out.extend(frame(HEADERS, END_HEADERS, id, &head));
    out.extend(frame(DATA, 0, id, &[0, 0, 0, 0, 0]));
    let mut trailer = vec![0x00, 11];
    trailer.extend_from_slice(b"grpc-status");
    trailer.extend_from_slice(&[1, b'0']);
    out.extend(frame(HEADERS, END_HEADERS | END_STREAM, id, &trailer));
    out
}

/// Two streams allowed; the first call is never answered, every other one at once. When
/// the first times out its stream is reset and its slot freed on the same connection
/// (answers came on it meanwhile, so it is kept): two calls at once then both go
/// through on it.
#[test]
fn a_timed_out_call_frees_its_stream_slot() {
    let (port, conns, _) = serve(|mut s, _| {
        s.write_all(&settings(&[(0x3, 2)])).unwrap();
        read_frames(&mut s, Instant::now() + Duration::from_secs(20), |s, f| {
            let reply = match f.kind {
                SETTINGS if f.flags & ACK == 0 => frame(SETTINGS, ACK, 0, &[]),
                PING if f.flags & ACK == 0 => frame(PING, ACK, 0, &f.payload),
                DATA if f.flags & END_STREAM != 0 && f.stream != 1 => grpc_ok(f.stream),
                _ => return true,
            };
            s.write_all(&reply).is_ok()
        });
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let t = Duration::from_millis(1500);
    rt.block_on(async {
        let g = tfreq::net::Grpc::connect(&format!("http://127.0.0.1:{port}"), t, None, 1 << 20)
            .await
            .unwrap();
        let (mut a, mut b) = (g.clone(), g.clone());
        let never = a.predict(Bytes::from_static(b"1"), t);
        let answered = async {
            // Answers come on the connection while the first call waits, spread over
            // its deadline (a client's pace, not a wait: one answer before the first
            // call's deadline is what keeps the connection).
            for _ in 0..3 {
                tokio::time::sleep(Duration::from_millis(200)).await;
                b.predict(Bytes::from_static(b"x"), t).await.unwrap();
            }
        };
        let (first, ()) = tokio::join!(never, answered);
        assert_eq!(first, Err(tfreq::net::NetError::Timeout(t)));
        let (mut c, mut d) = (g.clone(), g.clone());
        let (x, y) = tokio::join!(
            c.predict(Bytes::from_static(b"c"), t),
            d.predict(Bytes::from_static(b"d"), t)
        );
        assert!(x.is_ok() && y.is_ok(), "{x:?} {y:?}");
    });
    assert_eq!(conns.load(Ordering::SeqCst), 1, "one connection throughout");
}

/// Row 2: one stream allowed and no answer ever: the first call times out and its
/// stream is reset at once (`RST_STREAM CANCEL`, seen by the server); the second call on
/// the same client is not stuck behind it: it ends by its own deadline.
#[test]
fn a_call_that_times_out_is_reset_and_the_next_is_not_stuck_behind_it() {
    let (port, seen, stop) = silent_server();
    let reset = |conn: usize, stream: u32| {
        seen.lock().unwrap().iter().any(|(n, f)| {
            *n == conn
                && f.kind == RST_STREAM
                && f.stream == stream
                && f.payload == 0x8u32.to_be_bytes()
        })
    };
    // The calls' HEADERS as the server saw them: connection and stream.
    let headers = || -> Vec<(usize, u32)> {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|(_, f)| f.kind == HEADERS)
            .map(|(n, f)| (*n, f.stream))
            .collect()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let t = Duration::from_millis(800);
    rt.block_on(async {
        let g = tfreq::net::Grpc::connect(&format!("http://127.0.0.1:{port}"), t, None, 1 << 20)
            .await
            .unwrap();
        let (mut a, mut b) = (g.clone(), g.clone());
        let first = a.predict(Bytes::from_static(b"one"), t).await;
        assert_eq!(first, Err(tfreq::net::NetError::Timeout(t)));
        let at = Instant::now();
        let second = b.predict(Bytes::from_static(b"two"), t).await;
        assert_eq!(second, Err(tfreq::net::NetError::Timeout(t)));
        assert!(
            at.elapsed() < t * 3,
            "the second call took {:?}",
            at.elapsed()
        );
        // Until the server has seen both resets (at most 5 s): they are written only
        // while the runtime turns.
        turning_until(Duration::from_secs(5), || {
            reset(0, 1) && headers().get(1).is_some_and(|&(n, id)| reset(n, id))
        })
        .await;
    });
    assert!(
        reset(0, 1),
        "no RST_STREAM CANCEL for the first call: {:?}",
        seen.lock().unwrap()
    );
    // The second call went out (on a new connection, the first having answered nothing
    // in a whole deadline) and was reset too.
    let headers = headers();
    assert_eq!(headers.len(), 2, "{headers:?}");
    let (n, id) = headers[1];
    assert!(
        reset(n, id),
        "no RST_STREAM for the second call: {:?}",
        seen.lock().unwrap()
    );
    stop.store(true, Ordering::Relaxed);
}

/// An HPACK literal with incremental indexing of `name: value` (new name), RFC 7541
/// §6.2.1, for lengths under 127 (name) and any value length.
fn indexed_literal(name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut b = vec![0x40, name.len() as u8];
    b.extend_from_slice(name);
    integer(&mut b, 0x00, 7, value.len());
    b.extend_from_slice(value);
    b
}

fn integer(b: &mut Vec<u8>, flags: u8, bits: u8, mut v: usize) {
    let max = (1usize << bits) - 1;
    if v < max {
        b.push(flags | v as u8);
        return;
    }
    b.push(flags | max as u8);
    v -= max;
    while v >= 128 {
        b.push((v % 128 + 128) as u8);
        v /= 128;
    }
    b.push(v as u8);
}

/// A server that answers every call's HEADERS with `block` (split into HEADERS and
/// CONTINUATION frames of 16 KiB), then ends the stream.
fn answering_headers(block: Vec<u8>) -> (u16, Arc<AtomicBool>) {
    let (port, _, stop) = serve(move |mut s, _| {
        s.write_all(&settings(&[])).unwrap();
        let block = block.clone();
        read_frames(&mut s, Instant::now() + Duration::from_secs(20), |s, f| {
            if f.kind == SETTINGS && f.flags & ACK == 0 {
                let _ = s.write_all(&frame(SETTINGS, ACK, 0, &[]));
            }
            if f.kind == HEADERS {
                let chunks: Vec<_> = block.chunks(16 << 10).collect();
                let mut out = Vec::new();
                for (i, c) in chunks.iter().enumerate() {
                    let last = if i + 1 == chunks.len() {
                        END_HEADERS
                    } else {
                        0
                    };
                    let kind = if i == 0 { HEADERS } else { CONTINUATION };
                    let flags = if i == 0 { last | END_STREAM } else { last };
                    out.extend_from_slice(&frame(kind, flags, f.stream, c));
                }
                let _ = s.write_all(&out);
            }
            true
        });
    });
    (port, stop)
}

/// Row 3: header blocks that reference a 4 KB table entry again and again (a 16 KiB
/// frame that decodes to 64 MB; a 1 MiB block over CONTINUATION frames that decodes to
/// 4 GB): refused with an error that says so, in bounded memory.
#[test]
fn header_amplification_is_refused_in_bounded_memory() {
    let mut one_frame = vec![0x88]; // :status 200
    one_frame.extend(indexed_literal(b"x-big", &[b'a'; 4000]));
    let mut huge = one_frame.clone();
    while one_frame.len() < 16 << 10 {
        one_frame.push(0x80 | 62); // the entry just added, again
    }
    while huge.len() < 1 << 20 {
        huge.push(0x80 | 62);
    }
    for (what, block, says) in [
        ("one frame", one_frame, "256 KiB decoded"),
        ("CONTINUATION", huge, "256 KiB decoded"),
    ] {
        let (port, stop) = answering_headers(block);
        let to = format!("grpc://127.0.0.1:{port}");
        let r = run(
            &[
                "send",
                "tests/data/tfs/faq_prod.bin",
                "--to",
                &to,
                "--timeout",
                "10",
            ],
            Duration::from_secs(30),
        );
        stop.store(true, Ordering::Relaxed);
        assert_bounded(what, &r);
        assert_eq!(r.code, Some(2), "{what}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{what}: {}", r.stderr);
        assert!(r.took < Duration::from_secs(8), "{what}: took {:?}", r.took);
        eprintln!("{what}: {}", r.stderr.trim());
    }
}

/// Row 4: a protocol error from the server while the client is writing a large request
/// (its socket full, a DATA frame half written): what the client writes, to its end, is
/// whole frames: the rest of the frame it was writing, then its GOAWAY.
#[test]
fn a_protocol_error_mid_frame_leaves_the_clients_bytes_whole_frames() {
    let got: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
    let g2 = got.clone();
    let done = Arc::new(AtomicBool::new(false));
    let d2 = done.clone();
    let (port, _, stop) = serve(move |mut s, _| {
        // Large windows: the client writes its whole request without waiting for us.
        let mut hello = settings(&[(0x4, (1 << 31) - 1)]);
        hello.extend(frame(
            WINDOW_UPDATE,
            0,
            0,
            &((1u32 << 31) - 1 - 65_535).to_be_bytes(),
        ));
        s.write_all(&hello).unwrap();
        // Read the preface and the client's SETTINGS, then stop reading until the
        // request's DATA waits unread (over a whole frame of it, at most 20 s): the
        // client, writing 32 MiB that no socket buffer holds, fills its socket
        // mid-frame.
        let mut first = [0u8; 24 + 9];
        s.read_exact(&mut first).unwrap();
        let mut all = first.to_vec();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&s);
        let unread = || {
            let mut n: libc::c_int = 0;
            // SAFETY: FIONREAD on our own socket writes one int.
            let r = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) };
            assert_eq!(r, 0, "FIONREAD: {}", std::io::Error::last_os_error());
            n as usize
        };
        assert!(
            crate::common::wait_until(Duration::from_secs(20), || unread() > 32 << 10),
            "the client's request did not come: {} bytes unread",
            unread()
        );
        // A PING of 7 bytes: a connection error (FRAME_SIZE_ERROR).
        s.write_all(&frame(PING, 0, 0, &[0; 7])).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut chunk = vec![0u8; 1 << 20];
        let end = Instant::now() + Duration::from_secs(20);
        while Instant::now() < end {
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&chunk[..n]),
            }
        }
        let _ = s.shutdown(Shutdown::Both);
        *g2.lock().unwrap() = all;
        d2.store(true, Ordering::SeqCst);
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let t = Duration::from_secs(10);
    let r = rt.block_on(async {
        let mut g =
            tfreq::net::Grpc::connect(&format!("http://127.0.0.1:{port}"), t, None, 1 << 20)
                .await
                .unwrap();
        let r = g.predict(Bytes::from(vec![b'q'; 32 << 20]), t).await;
        // Until the server has read the client's end (at most 25 s): the rest of the
        // frame and the GOAWAY are written only while the runtime turns.
        turning_until(Duration::from_secs(25), || done.load(Ordering::SeqCst)).await;
        r
    });
    assert!(r.is_err(), "{r:?}");
    assert!(
        done.load(Ordering::SeqCst),
        "the server did not read to the client's end"
    );
    stop.store(true, Ordering::Relaxed);
    let all = got.lock().unwrap().clone();
    assert_eq!(&all[..24], PREFACE);
    let (mut at, mut kinds) = (24, Vec::new());
    while at < all.len() {
        assert!(
            all.len() - at >= 9,
            "a frame head cut at {at} of {}",
            all.len()
        );
        let len = u32::from_be_bytes([0, all[at], all[at + 1], all[at + 2]]) as usize;
        let kind = all[at + 3];
        assert!(
            kind <= CONTINUATION,
            "frame type {kind} at {at}: not a frame"
        );
        assert!(
            len <= 16_384,
            "a frame of {len} bytes at {at}: over the server's limit"
        );
        assert!(
            at + 9 + len <= all.len(),
            "a frame cut at {at} of {}",
            all.len()
        );
        kinds.push(kind);
        at += 9 + len;
    }
    assert!(kinds.contains(&DATA), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&GOAWAY), "{kinds:?}");
}

/// An HTTP/2 server (`h2`'s, which keeps to the client's flow-control windows) that
/// answers each call with a gRPC prefix of 2^31 − 2 bytes and then DATA that never ends
/// (within the server's life).
fn endless_grpc() -> (u16, Arc<AtomicBool>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    l.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(l).unwrap();
            let end = Instant::now() + Duration::from_secs(60);
            while Instant::now() < end && !st.load(Ordering::Relaxed) {
                let Ok(Ok((s, _))) =
                    tokio::time::timeout(Duration::from_millis(200), l.accept()).await
                else {
                    continue;
                };
                tokio::spawn(async move {
                    let Ok(mut conn) = h2::server::handshake(s).await else {
                        return;
                    };
                    while let Some(Ok((_, mut respond))) = conn.accept().await {
                        tokio::spawn(async move {
                            let Ok(mut send) =
                                respond.send_response(::http::Response::new(()), false)
                            else {
                                return;
                            };
                            let prefix = Bytes::from_static(&[0, 0x7f, 0xff, 0xff, 0xfe]);
                            if send.send_data(prefix, false).is_err() {
                                return;
                            }
                            let data = Bytes::from(vec![b'z'; 16 << 10]);
                            let end = Instant::now() + Duration::from_secs(40);
                            while Instant::now() < end {
                                send.reserve_capacity(data.len());
                                match std::future::poll_fn(|cx| send.poll_capacity(cx)).await {
                                    Some(Ok(n)) if n > 0 => {
                                        if send.send_data(data.slice(..n), false).is_err() {
                                            return;
                                        }
                                    }
                                    Some(Ok(_)) => {}
                                    _ => return,
                                }
                            }
                        });
                    }
                });
            }
        });
    });
    (port, stop)
}

/// An HTTP/1.1 server whose every answer is a chunked body that never ends.
fn endless_http() -> (u16, Arc<AtomicBool>) {
    let (port, _, stop) = serve(|mut s, _| {
        s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut head = Vec::new();
        let mut b = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match s.read(&mut b) {
                Ok(0) | Err(_) => return,
                Ok(n) => head.extend_from_slice(&b[..n]),
            }
        }
        if s.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            .is_err()
        {
            return;
        }
        let mut chunk = format!("{:x}\r\n", 64 << 10).into_bytes();
        chunk.extend_from_slice(&[b'z'; 64 << 10]);
        chunk.extend_from_slice(b"\r\n");
        let end = Instant::now() + Duration::from_secs(40);
        while Instant::now() < end {
            if s.write_all(&chunk).is_err() {
                return;
            }
        }
    });
    (port, stop)
}

/// Row 9: `load -c 6` against answers that never end (gRPC: a 2^31 − 2 prefix and
/// endless DATA; EAS: an endless chunked body): answers `load` does not decode are
/// counted and dropped, so memory stays bounded; the run ends with an error, never an
/// abort.
#[test]
fn load_drains_endless_answers_in_bounded_memory() {
    let (gport, gstop) = endless_grpc();
    let (hport, hstop) = endless_http();
    let grpc = format!("grpc://127.0.0.1:{gport}");
    let eas = format!("http://127.0.0.1:{hport}/api/predict/faq");
    for (what, to, file) in [
        ("gRPC", grpc, "tests/data/tfs/faq_prod.bin"),
        ("EAS", eas, "tests/data/eas/faq_prod.bin"),
    ] {
        let r = run(
            &[
                "load",
                file,
                "--to",
                &to,
                "-c",
                "6",
                "-n",
                "6",
                "--timeout",
                "3",
            ],
            Duration::from_secs(60),
        );
        assert_bounded(what, &r);
        assert!(
            matches!(r.code, Some(1) | Some(2)),
            "{what}: exit {:?}: {}",
            r.code,
            r.stderr
        );
        eprintln!(
            "{what}: peak {} MiB in {:?}, exit {:?}",
            r.max_rss_kib >> 10,
            r.took,
            r.code
        );
    }
    gstop.store(true, Ordering::Relaxed);
    hstop.store(true, Ordering::Relaxed);
}

/// Row 9: `send -c 6` decodes its answers, so it keeps them: each under a limit cut so
/// that all it may hold at once (the calls in flight and the answers waiting to be shown
/// in order) stay within 256 MiB when no `--max-response-size` is given; endless
/// chunked answers end with an error naming the limit.
#[test]
fn send_concurrency_bounds_the_answers_held_together() {
    let (port, stop) = endless_http();
    let to = format!("http://127.0.0.1:{port}/api/predict/faq");
    let files = ["tests/data/eas/faq_prod.bin"; 12];
    let mut args = vec!["send"];
    args.extend(files);
    args.extend(["--to", &to, "-c", "6", "--timeout", "10"]);
    let r = run(&args, Duration::from_secs(60));
    stop.store(true, Ordering::Relaxed);
    assert!(r.signal.is_none(), "{r:?}", r = r.stderr);
    assert!(
        r.max_rss_kib < 400 << 10,
        "peak memory {} MiB: {}",
        r.max_rss_kib >> 10,
        r.stderr
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("larger than the limit"), "{}", r.stderr);
    eprintln!(
        "send -c 6: peak {} MiB in {:?}",
        r.max_rss_kib >> 10,
        r.took
    );
}

/// Calls answered, by connection.
type PerConnection = Arc<Mutex<Vec<usize>>>;

/// A gRPC server by hand that answers every call (an empty message, status 0) but no
/// `PING` ever: how many connections it took, and calls it answered on each.
fn deaf_to_pings() -> (u16, Arc<AtomicUsize>, PerConnection, Arc<AtomicBool>) {
    let answered = Arc::new(Mutex::new(vec![0usize; 64]));
    let a2 = answered.clone();
    let (port, conns, stop) = serve(move |mut s, n| {
        s.write_all(&settings(&[])).unwrap();
        let answered = a2.clone();
        read_frames(&mut s, Instant::now() + Duration::from_secs(30), |s, f| {
            if f.kind == SETTINGS && f.flags & ACK == 0 {
                let _ = s.write_all(&frame(SETTINGS, ACK, 0, &[]));
            }
            if f.kind == DATA && f.flags & END_STREAM != 0 {
                let out = grpc_ok(f.stream);
                if s.write_all(&out).is_err() {
                    return false;
                }
                if let Some(c) = answered.lock().unwrap().get_mut(n) {
                    *c += 1;
                }
            }
            true
        });
    });
    (port, conns, answered, stop)
}

/// Keepalive: a server that answers calls but stops answering PINGs is taken for dead:
/// a long `load` closes its connection and goes on over a new one.
#[test]
fn unanswered_keepalive_pings_replace_the_connection() {
    let (port, conns, answered, stop) = deaf_to_pings();
    let to = format!("grpc://127.0.0.1:{port}");
    let r = run(
        &[
            "load",
            "tests/data/tfs/faq_prod.bin",
            "--to",
            &to,
            "--duration",
            "5s",
            "--timeout",
            "1",
        ],
        Duration::from_secs(30),
    );
    stop.store(true, Ordering::Relaxed);
    assert_bounded("keepalive", &r);
    let answered = answered.lock().unwrap().clone();
    assert!(
        conns.load(Ordering::SeqCst) >= 2,
        "one connection only: {answered:?}; {}",
        r.stderr
    );
    assert!(
        answered[0] > 0 && answered[1] > 0,
        "calls answered on each connection: {answered:?}; {}",
        r.stderr
    );
    assert!(
        matches!(r.code, Some(0) | Some(1)),
        "{:?}: {}",
        r.code,
        r.stderr
    );
}
