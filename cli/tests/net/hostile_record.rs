//! `tfreq record` under hostile clients and a hostile upstream: every peer is written
//! here, on 127.0.0.1, and every wait has a deadline. The proxy's memory is watched the
//! whole time a test runs: past the bound the test fails at once (and the proxy is
//! killed), so a regression costs a few hundred MB, not the machine.
#![cfg(all(unix, feature = "net"))]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// The proxy process and what the kernel says of it
// ---------------------------------------------------------------------------------------

/// A `tfreq record` process and the port it listens on.
struct Recording {
    child: Child,
    port: u16,
    stderr: Option<std::thread::JoinHandle<String>>,
    /// Read as it comes: a summary larger than a pipe's buffer must not block the child.
    stdout: Option<std::thread::JoinHandle<String>>,
}

/// A test that fails half-way leaves no proxy running.
impl Drop for Recording {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Starts `tfreq record --listen 127.0.0.1:0 --to TO -o OUT ARGS...` (with at most
/// `nofile` open descriptors when given) and reads its port from what it prints.
fn start(to: &str, out: &Path, args: &[&str], nofile: Option<u64>) -> Recording {
    let mut cmd = crate::common::bin();
    cmd.args(["record", "--listen", "127.0.0.1:0", "--to", to, "-o"])
        .arg(out)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(n) = nofile {
        // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: n,
                    rlim_max: n,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let port = line
        .split("listening on 127.0.0.1:")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    let stderr = std::thread::spawn(move || {
        let mut rest = line;
        let _ = err.read_to_string(&mut rest);
        rest
    });
    let mut out = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    Recording {
        child,
        port,
        stderr: Some(stderr),
        stdout: Some(stdout),
    }
}

impl Recording {
    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill with the pid of our own child.
        unsafe { libc::kill(self.pid(), sig) };
    }

    /// Waits (at most `limit`) for the process to end: its exit code (`None` when a
    /// signal ended it), stdout and stderr.
    fn wait(mut self, limit: Duration) -> (Option<i32>, String, String) {
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if t0.elapsed() >= limit {
                self.signal(libc::SIGKILL);
                let _ = self.child.wait();
                let err = self.stderr.take().unwrap().join().unwrap();
                panic!("tfreq record did not stop; its stderr:\n{err}");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let out = self.stdout.take().unwrap().join().unwrap();
        let err = self.stderr.take().unwrap().join().unwrap();
        (status.code(), out, err)
    }

    /// The resident set now, in MiB.
    fn rss_mib(&self) -> u64 {
        status_kib(self.pid(), "VmRSS:") >> 10
    }

    /// The descriptors it has open.
    fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// The largest resident set so far, in MiB.
    fn peak_mib(&self) -> u64 {
        status_kib(self.pid(), "VmHWM:") >> 10
    }

    /// User and system CPU time so far.
    fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        // The fields after the command name (which is in parentheses).
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = rest.split(' ').collect();
        let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
        Duration::from_millis(ticks * 1000 / hz)
    }

    /// Waits until `done` (polled every 20 ms, at most `limit`), failing as soon as the
    /// proxy's resident set passes `max_mib`. Returns whether `done` came.
    fn watch(&self, max_mib: u64, limit: Duration, mut done: impl FnMut() -> bool) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            let rss = self.rss_mib();
            assert!(
                rss <= max_mib,
                "the proxy holds {rss} MiB (bound {max_mib} MiB) after {:?}",
                t0.elapsed()
            );
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

fn status_kib(pid: i32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or(0)
}

/// Whether `dir` holds a temporary output (`.tfreq-*`).
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tfreq-"))
        .collect()
}

// ---------------------------------------------------------------------------------------
// An HTTP/1.1 upstream written here
// ---------------------------------------------------------------------------------------

/// One request as the upstream read its head.
struct Head {
    method: String,
    path: String,
    length: u64,
}

/// What the upstream does with a request: it may read the body from the reader (the
/// `length` bytes after the head) and writes an answer, or returns false to close.
type Handler = Arc<dyn Fn(&Head, &mut BufReader<TcpStream>, &mut TcpStream) -> bool + Send + Sync>;

/// An HTTP/1.1 server on 127.0.0.1 (a thread per connection, keep-alive): its port.
fn upstream(handler: Handler) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let _ = conn.set_nodelay(true);
            let handler = handler.clone();
            std::thread::spawn(move || {
                let mut w = conn.try_clone().unwrap();
                let mut r = BufReader::new(conn);
                while let Some(head) = read_head(&mut r) {
                    if !handler(&head, &mut r, &mut w) {
                        return;
                    }
                }
            });
        }
    });
    port
}

fn read_head(r: &mut BufReader<TcpStream>) -> Option<Head> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut length = 0;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        if h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().ok()?;
        }
    }
    Some(Head {
        method,
        path,
        length,
    })
}

/// Reads `n` bytes of body and drops them; the bytes read are added to `count`.
fn drain(r: &mut BufReader<TcpStream>, n: u64, count: &AtomicU64) -> bool {
    let mut left = n;
    let mut buf = vec![0u8; 64 << 10];
    while left > 0 {
        let want = left.min(buf.len() as u64) as usize;
        match r.read(&mut buf[..want]) {
            Ok(0) | Err(_) => return false,
            Ok(k) => {
                left -= k as u64;
                count.fetch_add(k as u64, Ordering::SeqCst);
            }
        }
    }
    true
}

fn answer(w: &mut TcpStream, status: u16, body: &[u8]) -> bool {
    let mut a = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    a.extend_from_slice(body);
    w.write_all(&a).is_ok()
}

/// A keep-alive HTTP/1.1 client: one request at a time, answers read by their length.
struct Client {
    w: TcpStream,
    r: BufReader<TcpStream>,
}

impl Client {
    fn connect(port: u16) -> Client {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.set_nodelay(true).unwrap();
        Client {
            w: s.try_clone().unwrap(),
            r: BufReader::new(s),
        }
    }

    /// Sends a request and reads its answer: the status and body.
    fn call(&mut self, method: &str, path: &str, body: &[u8]) -> std::io::Result<(u16, Vec<u8>)> {
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        req.extend_from_slice(body);
        self.w.write_all(&req)?;
        let mut line = String::new();
        if self.r.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut length = 0usize;
        loop {
            let mut h = String::new();
            if self.r.read_line(&mut h)? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            if h == "\r\n" {
                break;
            }
            if let Some((k, v)) = h.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut b = vec![0; length];
        self.r.read_exact(&mut b)?;
        Ok((status, b))
    }
}

fn data(p: &str) -> Vec<u8> {
    std::fs::read(crate::common::root().join("tests/data").join(p)).unwrap()
}

// ---------------------------------------------------------------------------------------
// Row 6: the request bytes held across all connections
// ---------------------------------------------------------------------------------------

/// Each stalled client's body: 16 MiB of a 16 MiB + 1 byte body.
const STALLED: usize = 16 << 20;
/// Stalled clients (and HTTP/2 streams): 40 × 16 MiB is 640 MiB held by a proxy that
/// bounds each body only.
const CLIENTS: usize = 40;
/// The bound asserted with `--max-inflight 64M`: the budget, the recorder's queue of
/// what was read whole (nothing here) and the runtime's buffers.
const BOUND_MIB: u64 = 250;

/// An upstream that reads every request body as it comes and never answers (the
/// bodies never end): `received` counts the body bytes.
fn draining_upstream(received: Arc<AtomicU64>) -> u16 {
    upstream(Arc::new(move |h, r, _w| {
        drain(r, h.length, &received);
        false
    }))
}

#[test]
fn stalled_http1_bodies_are_held_within_the_budget_across_connections() {
    let dir = tempfile::tempdir().unwrap();
    let received = Arc::new(AtomicU64::new(0));
    let up = draining_upstream(received.clone());
    let rec = start(
        &format!("http://127.0.0.1:{up}"),
        &dir.path().join("w.bin"),
        &["--max-inflight", "64M", "--idle-timeout", "10m"],
        None,
    );
    let sent = Arc::new(AtomicU64::new(0));
    let mut held = Vec::new();
    let mut writers = Vec::new();
    for _ in 0..CLIENTS {
        let s = TcpStream::connect(("127.0.0.1", rec.port)).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(60))).unwrap();
        held.push(s.try_clone().unwrap());
        let sent = sent.clone();
        writers.push(std::thread::spawn(move || {
            let mut s = s;
            let head = format!(
                "POST /api/predict/m HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n",
                STALLED + 1
            );
            s.write_all(head.as_bytes()).unwrap();
            let chunk = vec![7u8; 1 << 20];
            for _ in 0..STALLED >> 20 {
                if s.write_all(&chunk).is_err() {
                    return;
                }
                sent.fetch_add(chunk.len() as u64, Ordering::SeqCst);
            }
            // ...and stall, the connection open (`held`).
        }));
    }
    let all = (CLIENTS * STALLED) as u64;
    let done = rec.watch(BOUND_MIB, Duration::from_secs(120), || {
        sent.load(Ordering::SeqCst) >= all
    });
    assert!(
        done,
        "the clients could send {} of {all} bytes",
        sent.load(Ordering::SeqCst)
    );
    // Everything is sent: what the proxy did not keep went on to the upstream. Watch a
    // little longer while the upstream reads the rest.
    rec.watch(BOUND_MIB, Duration::from_secs(2), || false);
    let peak = rec.peak_mib();
    println!(
        "{CLIENTS} stalled HTTP/1.1 bodies of {} MiB: proxy peak {peak} MiB, upstream got {} MiB",
        STALLED >> 20,
        received.load(Ordering::SeqCst) >> 20
    );
    assert!(peak <= BOUND_MIB, "peak {peak} MiB");
    drop(held);
    for w in writers {
        w.join().unwrap();
    }
}

/// An HTTP/2 upstream (h2's server) that reads every stream's body as it comes, with
/// the largest windows, and never answers: `received` counts the body bytes.
async fn h2_draining_upstream(listener: tokio::net::TcpListener, received: Arc<AtomicU64>) {
    loop {
        let Ok((s, _)) = listener.accept().await else {
            return;
        };
        let received = received.clone();
        tokio::spawn(async move {
            let mut b = h2::server::Builder::new();
            b.initial_window_size((1 << 31) - 1)
                .initial_connection_window_size((1 << 31) - 1)
                .max_concurrent_streams(1000);
            let Ok(mut conn) = b.handshake::<_, bytes::Bytes>(s).await else {
                return;
            };
            while let Some(Ok((req, respond))) = conn.accept().await {
                let received = received.clone();
                tokio::spawn(async move {
                    let _respond = respond;
                    let mut body = req.into_body();
                    while let Some(Ok(d)) = body.data().await {
                        let _ = body.flow_control().release_capacity(d.len());
                        received.fetch_add(d.len() as u64, Ordering::SeqCst);
                    }
                    std::future::pending::<()>().await;
                });
            }
        });
    }
}

#[test]
fn stalled_http2_streams_are_held_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let received = Arc::new(AtomicU64::new(0));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let up = listener.local_addr().unwrap().port();
    rt.spawn(h2_draining_upstream(listener, received.clone()));
    let rec = start(
        &format!("grpc://127.0.0.1:{up}"),
        &dir.path().join("w.tfrecord"),
        &["--max-inflight", "64M", "--idle-timeout", "10m"],
        None,
    );
    let port = rec.port;
    // One connection, CLIENTS streams, each sending 16 MiB of its body and stalling
    // (the streams stay open: the client's task holds them).
    let streams = rt.block_on(async move {
        let s = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let (mut client, conn) = h2::client::Builder::new()
            .initial_window_size(1 << 20)
            .handshake::<_, bytes::Bytes>(s)
            .await
            .unwrap();
        tokio::spawn(conn);
        let mut streams = Vec::new();
        for _ in 0..CLIENTS {
            client = client.ready().await.unwrap();
            let req = http::Request::post(format!(
                "http://127.0.0.1:{port}/tensorflow.serving.PredictionService/Predict"
            ))
            .header("content-type", "application/grpc")
            .body(())
            .unwrap();
            let (answer, mut send) = client.send_request(req, false).unwrap();
            send.send_data(bytes::Bytes::from(vec![7u8; STALLED]), false)
                .unwrap();
            streams.push((answer, send));
        }
        (client, streams)
    });
    let all = (CLIENTS * STALLED) as u64;
    let done = rec.watch(BOUND_MIB, Duration::from_secs(120), || {
        received.load(Ordering::SeqCst) >= all
    });
    assert!(
        done,
        "the upstream got {} of {all} bytes",
        received.load(Ordering::SeqCst)
    );
    // The upstream has every byte; the proxy's reader of the relayed streams may still
    // be catching up: watch a little longer.
    rec.watch(BOUND_MIB, Duration::from_secs(2), || false);
    let peak = rec.peak_mib();
    println!(
        "{CLIENTS} stalled HTTP/2 streams of {} MiB on one connection: proxy peak {peak} MiB",
        STALLED >> 20
    );
    assert!(peak <= BOUND_MIB, "peak {peak} MiB");
    drop(streams);
    drop(rt);
}

// ---------------------------------------------------------------------------------------
// Row 7: slow and idle connections, descriptors running out
// ---------------------------------------------------------------------------------------

/// An upstream answering every request `{}` (after reading its body).
fn answering_upstream() -> u16 {
    let none = Arc::new(AtomicU64::new(0));
    upstream(Arc::new(move |h, r, w| {
        drain(r, h.length, &none) && answer(w, 200, b"{}")
    }))
}

#[test]
fn slowloris_connections_are_closed_after_the_header_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let up = answering_upstream();
    let rec = start(
        &format!("http://127.0.0.1:{up}"),
        &dir.path().join("w.bin"),
        &["--header-timeout", "1s", "--idle-timeout", "10m"],
        None,
    );
    let mut conns: Vec<TcpStream> = (0..50)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", rec.port)).unwrap();
            s.write_all(b"GET /v1/models/m HTTP/1.1\r\n").unwrap();
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect();
    // A header byte each 100 ms from every connection; a connection is closed when the
    // proxy ends it (a read sees the end, or a write fails).
    let t0 = Instant::now();
    let mut closed = vec![false; conns.len()];
    while t0.elapsed() < Duration::from_secs(15) && closed.iter().any(|c| !c) {
        for (s, c) in conns.iter_mut().zip(closed.iter_mut()) {
            if *c {
                continue;
            }
            let mut b = [0u8; 512];
            match s.read(&mut b) {
                Ok(0) => *c = true,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                // An answer (408) or an error: the proxy is ending it.
                Ok(_) | Err(_) => *c = true,
            }
            if !*c && s.write_all(b"x").is_err() {
                *c = true;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let open = closed.iter().filter(|c| !**c).count();
    println!(
        "slowloris: {} of 50 closed after {:?}",
        50 - open,
        t0.elapsed()
    );
    assert_eq!(
        open, 0,
        "{open} slowloris connections still open after 15 s"
    );
    // A real call still goes through.
    let mut c = Client::connect(rec.port);
    assert_eq!(c.call("GET", "/v1/models/m", b"").unwrap().0, 200);
}

/// The open descriptors the proxy may hold in the test below.
const NOFILE: u64 = 64;

#[test]
fn out_of_descriptors_the_proxy_backs_off_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let up = answering_upstream();
    let rec = start(
        &format!("http://127.0.0.1:{up}"),
        &dir.path().join("w.bin"),
        &["--header-timeout", "1s", "--idle-timeout", "1s"],
        Some(NOFILE),
    );
    // More idle connections than the proxy has descriptors: it accepts until EMFILE,
    // which it has met once all its descriptors are open (at most 20 s).
    let idle: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect(("127.0.0.1", rec.port)).unwrap())
        .collect();
    assert!(
        crate::common::wait_until(Duration::from_secs(20), || rec.fds() as u64 >= NOFILE),
        "the proxy holds {} descriptors, not its limit of {NOFILE}",
        rec.fds()
    );
    let cpu0 = rec.cpu();
    let t0 = Instant::now();
    // What is measured: the CPU time the proxy takes in these 3 s.
    std::thread::sleep(Duration::from_secs(3));
    let cpu = rec.cpu() - cpu0;
    let wall = t0.elapsed();
    println!("out of descriptors: {cpu:?} of CPU in {wall:?}");
    assert!(
        cpu < Duration::from_millis(300),
        "the proxy spun: {cpu:?} of CPU in {wall:?}"
    );
    // The idle connections are closed by the proxy's timeouts, and a real call goes
    // through (it waits in the listen queue behind them).
    let legit = std::thread::spawn(move || {
        let mut c = Client::connect(rec.port);
        let r = c.call("GET", "/v1/models/m", b"");
        (r, rec)
    });
    let t0 = Instant::now();
    while !legit.is_finished() {
        assert!(
            t0.elapsed() < Duration::from_secs(40),
            "no answer to a real call within 40 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let (r, _rec) = legit.join().unwrap();
    assert_eq!(r.unwrap().0, 200);
    println!(
        "a real call answered {:?} after the idle ones",
        t0.elapsed()
    );
    drop(idle);
}

#[test]
fn past_max_connections_new_ones_wait() {
    let dir = tempfile::tempdir().unwrap();
    let up = answering_upstream();
    let rec = start(
        &format!("http://127.0.0.1:{up}"),
        &dir.path().join("w.bin"),
        &["--max-connections", "2", "--idle-timeout", "1s"],
        None,
    );
    // Two kept-alive connections take both slots...
    let mut a = Client::connect(rec.port);
    let mut b = Client::connect(rec.port);
    assert_eq!(a.call("GET", "/v1/models/m", b"").unwrap().0, 200);
    assert_eq!(b.call("GET", "/v1/models/m", b"").unwrap().0, 200);
    // ...so a third waits, and is served once the idle timeout closed one of them.
    let t0 = Instant::now();
    let mut c = Client::connect(rec.port);
    assert_eq!(c.call("GET", "/v1/models/m", b"").unwrap().0, 200);
    let waited = t0.elapsed();
    println!("the third connection was served after {waited:?}");
    assert!(
        waited >= Duration::from_millis(800),
        "served at once: {waited:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Rows 8 and 17: what the proxy reads of the upstream for itself
// ---------------------------------------------------------------------------------------

#[test]
fn an_endless_metadata_answer_is_cut_and_the_predict_still_relayed() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(Arc::new(|h, r, w| {
        let none = AtomicU64::new(0);
        if !drain(r, h.length, &none) {
            return false;
        }
        if h.path.ends_with("/metadata") {
            // A chunked answer that never ends.
            let _ = w.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
            let chunk = format!("{:x}\r\n{}\r\n", 1 << 16, "x".repeat(1 << 16));
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(120) {
                if w.write_all(chunk.as_bytes()).is_err() {
                    break;
                }
            }
            return false;
        }
        answer(w, 200, br#"{"predictions": [1]}"#)
    }));
    let out = dir.path().join("w.tfrecord");
    let rec = start(&format!("http://127.0.0.1:{up}"), &out, &[], None);
    let mut c = Client::connect(rec.port);
    let body = br#"{"inputs": {"x": [1.0]}}"#;
    let (status, answer) = c.call("POST", "/v1/models/m:predict", body).unwrap();
    assert_eq!(
        (status, &answer[..]),
        (200, &br#"{"predictions": [1]}"#[..])
    );
    // The metadata keeps coming for as long as the proxy reads it: watch its memory.
    rec.watch(200, Duration::from_secs(4), || false);
    let (status, _) = c.call("POST", "/v1/models/m:predict", body).unwrap();
    assert_eq!(status, 200, "the proxy stopped relaying");
    let peak = rec.peak_mib();
    rec.signal(libc::SIGTERM);
    let (code, stdout, stderr) = rec.wait(Duration::from_secs(40));
    println!("endless metadata: proxy peak {peak} MiB\n{stdout}");
    assert!(peak <= 200, "peak {peak} MiB");
    assert_eq!(code, Some(1), "nothing recorded\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("no model metadata: the answer is over 16 MiB"),
        "{stdout}"
    );
}

#[test]
fn twenty_thousand_models_ask_for_metadata_within_the_cache_bound() {
    const MODELS: usize = 20_000;
    const MAX_MODELS: usize = 1024;
    let dir = tempfile::tempdir().unwrap();
    let asked: Arc<Mutex<std::collections::HashMap<String, u32>>> = Arc::default();
    let meta = data("models/faq.metadata.json");
    let a = asked.clone();
    let up = upstream(Arc::new(move |h, r, w| {
        let none = AtomicU64::new(0);
        if !drain(r, h.length, &none) {
            return false;
        }
        if let Some(m) = h.path.strip_suffix("/metadata") {
            *a.lock().unwrap().entry(m.to_string()).or_default() += 1;
            return answer(w, 200, &meta);
        }
        assert_eq!(h.method, "POST");
        answer(w, 200, b"{}")
    }));
    let out = dir.path().join("w.tfrecord");
    let rec = start(&format!("http://127.0.0.1:{up}"), &out, &[], None);
    let port = rec.port;
    let done = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let done = done.clone();
            std::thread::spawn(move || {
                let mut c = Client::connect(port);
                let body =
                    br#"{"inputs": {"input_holder": ["hi"], "model_id": "m", "threshold": 0.5}}"#;
                for i in (t..MODELS).step_by(4) {
                    let (status, _) = c
                        .call("POST", &format!("/v1/models/m{i}:predict"), body)
                        .unwrap();
                    assert_eq!(status, 200);
                    done.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let all_done = rec.watch(300, Duration::from_secs(240), || {
        done.load(Ordering::SeqCst) == MODELS as u64
    });
    assert!(
        all_done,
        "{} of {MODELS} calls answered",
        done.load(Ordering::SeqCst)
    );
    for t in threads {
        t.join().unwrap();
    }
    let peak = rec.peak_mib();
    rec.signal(libc::SIGTERM);
    let (code, stdout, stderr) = rec.wait(Duration::from_secs(40));
    let asked = asked.lock().unwrap();
    let gets: u32 = asked.values().sum();
    println!(
        "{MODELS} models: {gets} metadata GETs for {} names, proxy peak {peak} MiB",
        asked.len()
    );
    assert!(
        asked.values().all(|&n| n == 1),
        "a model's metadata asked twice"
    );
    assert!(
        asked.len() <= MAX_MODELS,
        "{} models' metadata asked (bound {MAX_MODELS})",
        asked.len()
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(
            "REST request to a model past the first {MAX_MODELS} (the model limit"
        )),
        "{stdout}"
    );
}

// ---------------------------------------------------------------------------------------
// Rows 14 and 18: signals
// ---------------------------------------------------------------------------------------

#[test]
fn sigterm_twice_right_after_an_answer_leaves_the_whole_recording_and_the_summary() {
    let up = answering_upstream();
    let faq = data("eas/faq_prod.bin");
    for run in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("w.bin");
        let rec = start(&format!("http://127.0.0.1:{up}"), &out, &[], None);
        let mut c = Client::connect(rec.port);
        assert_eq!(c.call("POST", "/api/predict/faq", &faq).unwrap().0, 200);
        rec.signal(libc::SIGTERM);
        // The second signal 0 to 4 ms after the first, by run: it lands at different
        // points of the first's stop (the gap is what is tested, not a wait).
        std::thread::sleep(Duration::from_millis(run % 5));
        rec.signal(libc::SIGTERM);
        let (code, stdout, stderr) = rec.wait(Duration::from_secs(40));
        assert_eq!(code, Some(0), "run {run}: {stdout}\n{stderr}");
        assert!(
            stdout.contains("recorded 1 request"),
            "run {run}: no summary\n{stdout}\n{stderr}"
        );
        assert_eq!(temporaries(dir.path()), Vec::<String>::new(), "run {run}");
        assert_eq!(
            std::fs::read(&out).unwrap(),
            faq,
            "run {run}: the recording"
        );
        drop(c);
    }
}

/// The first SIGTERM lets an answer under way through before the proxy ends.
#[test]
fn a_clean_stop_passes_on_the_answers_under_way() {
    let dir = tempfile::tempdir().unwrap();
    let asked = Arc::new(AtomicU64::new(0));
    let a = asked.clone();
    let up = upstream(Arc::new(move |h, r, w| {
        let none = AtomicU64::new(0);
        if !drain(r, h.length, &none) {
            return false;
        }
        a.fetch_add(1, Ordering::SeqCst);
        // A slow model.
        std::thread::sleep(Duration::from_millis(1500));
        answer(w, 200, b"slow")
    }));
    let out = dir.path().join("w.bin");
    let rec = start(&format!("http://127.0.0.1:{up}"), &out, &[], None);
    let port = rec.port;
    let faq = data("eas/faq_prod.bin");
    let call = std::thread::spawn(move || {
        let mut c = Client::connect(port);
        c.call("POST", "/api/predict/faq", &faq)
    });
    let t0 = Instant::now();
    while asked.load(Ordering::SeqCst) == 0 {
        assert!(t0.elapsed() < Duration::from_secs(20), "no request came");
        std::thread::sleep(Duration::from_millis(5));
    }
    rec.signal(libc::SIGTERM);
    let (code, stdout, stderr) = rec.wait(Duration::from_secs(40));
    let (status, body) = call.join().unwrap().unwrap();
    assert_eq!((status, &body[..]), (200, &b"slow"[..]));
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("recorded 1 request"), "{stdout}");
}

/// A relayed HTTP/2 connection with no call open is closed after `--idle-timeout`.
#[test]
fn an_idle_relayed_http2_connection_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let received = Arc::new(AtomicU64::new(0));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let up = listener.local_addr().unwrap().port();
    rt.spawn(h2_draining_upstream(listener, received));
    let rec = start(
        &format!("grpc://127.0.0.1:{up}"),
        &dir.path().join("w.tfrecord"),
        &["--idle-timeout", "1s"],
        None,
    );
    let port = rec.port;
    let took = rt.block_on(async move {
        let s = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let (_client, conn) = h2::client::handshake(s).await.unwrap();
        let t0 = Instant::now();
        // The connection's task ends when the proxy closes it.
        tokio::time::timeout(Duration::from_secs(15), conn)
            .await
            .expect("the idle connection is still open after 15 s")
            .ok();
        t0.elapsed()
    });
    println!("an idle relayed HTTP/2 connection closed after {took:?}");
    assert!(
        took >= Duration::from_millis(900),
        "closed at once: {took:?}"
    );
}

/// A relayed HTTP/2 call whose client stalls mid-request does not keep its connection
/// open past `--idle-timeout` (nor the bytes it holds).
#[test]
fn a_relayed_http2_call_stalled_by_its_client_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let received = Arc::new(AtomicU64::new(0));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let up = listener.local_addr().unwrap().port();
    rt.spawn(h2_draining_upstream(listener, received.clone()));
    let rec = start(
        &format!("grpc://127.0.0.1:{up}"),
        &dir.path().join("w.tfrecord"),
        &["--idle-timeout", "1s"],
        None,
    );
    let port = rec.port;
    let took = rt.block_on(async move {
        let s = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let (client, conn) = h2::client::handshake(s).await.unwrap();
        let conn = tokio::spawn(conn);
        let mut client = client.ready().await.unwrap();
        let req = http::Request::post(format!(
            "http://127.0.0.1:{port}/tensorflow.serving.PredictionService/Predict"
        ))
        .header("content-type", "application/grpc")
        .body(())
        .unwrap();
        let (_answer, mut send) = client.send_request(req, false).unwrap();
        send.send_data(bytes::Bytes::from(vec![7u8; 1 << 16]), false)
            .unwrap();
        let t0 = Instant::now();
        while received.load(Ordering::SeqCst) < 1 << 16 {
            assert!(t0.elapsed() < Duration::from_secs(15), "nothing relayed");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let t0 = Instant::now();
        tokio::time::timeout(Duration::from_secs(15), conn)
            .await
            .expect("the stalled call's connection is still open after 15 s")
            .ok();
        drop(send);
        t0.elapsed()
    });
    println!("a relayed call stalled by its client: connection closed after {took:?}");
    assert!(
        took >= Duration::from_millis(900),
        "closed at once: {took:?}"
    );
}

/// SIGQUIT, which `record` never defers, still removes a running `convert`'s temporary
/// output and ends it as SIGQUIT does (held mid-log on an open pipe, so the signal
/// always lands while the temporary file exists).
#[test]
fn sigquit_during_a_convert_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, input, out_dir) = crate::common::convert_held_open(dir.path());
    // SAFETY: kill with the pid of our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGQUIT) };
    let status = child.wait().unwrap();
    drop(input);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGQUIT), "{status:?}");
    assert_eq!(temporaries(&out_dir), Vec::<String>::new());
}
