//! The floor of a unary gRPC call's client CPU: TF Serving's `Predict`, one call at a time
//! on one connection, with no HTTP/2 library. The request's header block is encoded once
//! (HPACK literals without indexing, RFC 7541 §6.2.2), each call is one write of its
//! `HEADERS` and `DATA` frames, and the answer's frames are read only far enough to find the
//! `HEADERS` frame that ends the stream; server `SETTINGS` and `PING`s are acknowledged.
//! With `--tokio` the same loop runs on tokio's current-thread runtime, each read under a
//! timeout, as `tfreq load` waits.
//!
//! It measures what `tfreq load`'s gRPC CPU per call could come down to (docs/live.md,
//! "Measured"); it is not a client (no flow control past the first windows, no status).
//!
//! ```sh
//! tfreq build hpt.json --dtype x=DT_FLOAT --wire tf-serving --model-name half_plus_two -o req.bin
//! perf stat -e task-clock cargo run --release --features net --example grpc_floor -- 127.0.0.1:PORT req.bin 3000 [--tokio]
//! ```

use std::io::{Read, Write};

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.extend([kind, flags]);
    f.extend(stream.to_be_bytes());
    f.extend(payload);
    f
}

/// A header field as a literal without indexing, new name, no Huffman.
fn literal(block: &mut Vec<u8>, name: &str, value: &str) {
    block.push(0);
    for s in [name, value] {
        assert!(s.len() < 127, "a short header");
        block.push(s.len() as u8);
        block.extend(s.as_bytes());
    }
}

/// One call's bytes, with the offsets of the two stream ids to patch.
fn call(authority: &str, message: &[u8]) -> (Vec<u8>, [usize; 2]) {
    let mut block = Vec::new();
    for (n, v) in [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/tensorflow.serving.PredictionService/Predict"),
        (":authority", authority),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    ] {
        literal(&mut block, n, v);
    }
    let mut body = vec![0];
    body.extend((message.len() as u32).to_be_bytes());
    body.extend(message);
    assert!(body.len() <= 16384, "one DATA frame (the default largest)");
    let mut bytes = frame(0x1, 0x4, 1, &block);
    let second = bytes.len() + 5;
    bytes.extend(frame(0x0, 0x1, 1, &body));
    (bytes, [5, second])
}

/// Reads frames from `have` (appending `got`): the acknowledgements to send, and whether
/// `stream` ended. Counts the answers that carried a message in `answered` (a refusal is
/// trailers only).
fn take(have: &mut Vec<u8>, got: &[u8], stream: u32, answered: &mut u32) -> (Vec<u8>, bool) {
    have.extend_from_slice(got);
    let (mut off, mut reply, mut ended) = (0, Vec::new(), false);
    while have.len() - off >= 9 {
        let len = u32::from_be_bytes([0, have[off], have[off + 1], have[off + 2]]) as usize;
        if have.len() - off < 9 + len {
            break;
        }
        let (kind, flags) = (have[off + 3], have[off + 4]);
        let sid = u32::from_be_bytes([have[off + 5], have[off + 6], have[off + 7], have[off + 8]]);
        match kind {
            0x4 if flags & 1 == 0 => reply.extend(frame(0x4, 1, 0, &[])),
            0x6 if flags & 1 == 0 => reply.extend(frame(0x6, 1, 0, &have[off + 9..off + 17])),
            0x0 if sid == stream && len > 5 => *answered += 1,
            0x1 if flags & 1 != 0 && sid == stream => ended = true,
            _ => {}
        }
        off += 9 + len;
    }
    have.drain(..off);
    (reply, ended)
}

/// The connection's opening: preface, empty SETTINGS, the connection window to 1 GiB.
fn opening() -> Vec<u8> {
    let mut o = PREFACE.to_vec();
    o.extend(frame(0x4, 0, 0, &[]));
    o.extend(frame(0x8, 0, 0, &(1u32 << 30).to_be_bytes()));
    o
}

fn blocking(addr: &str, mut bytes: Vec<u8>, at: [usize; 2], n: u32) -> u32 {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    s.write_all(&opening()).expect("write");
    let (mut buf, mut have, mut answered) = (vec![0u8; 65536], Vec::new(), 0);
    for i in 0..n {
        let stream = 2 * i + 1;
        for a in at {
            bytes[a..a + 4].copy_from_slice(&stream.to_be_bytes());
        }
        s.write_all(&bytes).expect("write");
        loop {
            let k = s.read(&mut buf).expect("read");
            assert!(k > 0, "the server closed the connection");
            let (reply, ended) = take(&mut have, &buf[..k], stream, &mut answered);
            if !reply.is_empty() {
                s.write_all(&reply).expect("write");
            }
            if ended {
                break;
            }
        }
    }
    answered
}

async fn on_tokio(addr: &str, mut bytes: Vec<u8>, at: [usize; 2], n: u32) -> u32 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.set_nodelay(true).expect("nodelay");
    s.write_all(&opening()).await.expect("write");
    let (mut buf, mut have, mut answered) = (vec![0u8; 65536], Vec::new(), 0);
    for i in 0..n {
        let stream = 2 * i + 1;
        for a in at {
            bytes[a..a + 4].copy_from_slice(&stream.to_be_bytes());
        }
        s.write_all(&bytes).await.expect("write");
        loop {
            let read = s.read(&mut buf);
            let k = tokio::time::timeout(std::time::Duration::from_secs(30), read)
                .await
                .expect("an answer within 30 s")
                .expect("read");
            assert!(k > 0, "the server closed the connection");
            let (reply, ended) = take(&mut have, &buf[..k], stream, &mut answered);
            if !reply.is_empty() {
                s.write_all(&reply).await.expect("write");
            }
            if ended {
                break;
            }
        }
    }
    answered
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, request, n, rest @ ..] = &args[..] else {
        eprintln!("usage: grpc_floor HOST:PORT REQUEST.bin CALLS [--tokio]");
        std::process::exit(2);
    };
    let message = std::fs::read(request).expect("the request file");
    let n: u32 = n.parse().expect("a number of calls");
    let (bytes, at) = call(addr, &message);
    let t0 = std::time::Instant::now();
    let answered = if rest.iter().any(|a| a == "--tokio") {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(on_tokio(addr, bytes, at, n))
    } else {
        blocking(addr, bytes, at, n)
    };
    eprintln!(
        "{n} calls in {:.3} s, {answered} answered with a message",
        t0.elapsed().as_secs_f64()
    );
    if answered != n {
        std::process::exit(1);
    }
}
