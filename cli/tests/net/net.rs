//! The network clients against in-process servers (no Python): a tiny HTTP/1.1 server
//! for EAS, TF Serving REST and the EAS queue service, and a tonic gRPC server for TF
//! Serving's PredictionService. The EAS signature is held to what eas-prediction's
//! PredictClient signs (tests/data/eas_sign/cases.json, tests/data/gen/make_eas_sign.py).
#![cfg(feature = "net")]

use std::collections::BTreeMap;
use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use assert_cmd::Command;
use bytes::Bytes;
use prost::Message as _;
use tfreq::net::sign;
use tfreq::net::{Client, EasAuth, NetError, Options, Protocol, Target, prepare};
use tfreq::net::{DataFrame, DataFrameList};
use tfreq::wire::{tf, tfs};
use tfreq::{Kind, WireFormat};

const TOKEN: &str = "test-token";

/// A file of the repository (`tests/data/...`), whose root the command runs from.
fn data(p: &str) -> Vec<u8> {
    std::fs::read(crate::common::root().join(p)).unwrap()
}

// ---------------------------------------------------------------------------------------
// A tiny HTTP/1.1 server
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Seen {
    method: String,
    target: String,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

type Handler = dyn Fn(&Seen) -> (u16, Vec<(String, String)>, Vec<u8>) + Send + Sync;

struct HttpServer {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl HttpServer {
    fn start(handler: Box<Handler>) -> HttpServer {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s2 = seen.clone();
        let h: Arc<Handler> = Arc::from(handler);
        std::thread::spawn(move || {
            for c in l.incoming() {
                let Ok(c) = c else { continue };
                let (s3, h2) = (s2.clone(), h.clone());
                std::thread::spawn(move || serve_conn(c, &s3, &*h2));
            }
        });
        HttpServer { port, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve_conn(c: TcpStream, seen: &Mutex<Vec<Seen>>, h: &Handler) {
    let mut r = BufReader::new(c.try_clone().unwrap());
    let mut w = c;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (method, target) = (
            parts.next().unwrap_or("").to_string(),
            parts.next().unwrap_or("").to_string(),
        );
        let mut headers = BTreeMap::new();
        loop {
            let mut l = String::new();
            r.read_line(&mut l).unwrap();
            let l = l.trim_end();
            if l.is_empty() {
                break;
            }
            let (k, v) = l.split_once(':').unwrap();
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
        let n: usize = headers
            .get("content-length")
            .map_or(0, |v| v.parse().unwrap());
        let mut body = vec![0; n];
        r.read_exact(&mut body).unwrap();
        let s = Seen {
            method,
            target,
            headers,
            body,
        };
        seen.lock().unwrap().push(s.clone());
        let (status, hs, body) = h(&s);
        let mut out = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\n", body.len());
        for (k, v) in hs {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&body);
        if w.write_all(&bytes).is_err() {
            return;
        }
    }
}

/// The EAS service: a fixed response for a request with the right token (raw or signed).
fn eas_handler(s: &Seen) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let auth = s.headers.get("authorization").cloned().unwrap_or_default();
    let ok = auth == TOKEN
        || (auth.starts_with("EAS ") && {
            let path = s.target.split('?').next().unwrap();
            let want = sign(
                TOKEN,
                &s.body,
                s.headers.get("content-type").map_or("", |s| s.as_str()),
                s.headers.get("date").map_or("", |s| s.as_str()),
                path,
            );
            s.headers.get("content-md5") == Some(&want.content_md5) && auth == want.authorization
        });
    if !ok {
        return (401, vec![], b"Unauthorized: invalid token".to_vec());
    }
    if tfreq::decode_as(&s.body, WireFormat::Eas, Kind::Request).is_err() {
        return (400, vec![], b"bad request body".to_vec());
    }
    (200, vec![], data("tests/data/eas/response.bin"))
}

fn eas_server() -> HttpServer {
    HttpServer::start(Box::new(eas_handler))
}

fn opts(token: Option<&str>, auth: EasAuth) -> Options {
    Options {
        token: token.map(str::to_string),
        auth,
        timeout: Duration::from_secs(10),
        ..Options::default()
    }
}

fn send_file(target: Target, o: Options, file: &str) -> Result<tfreq::net::Exchange, NetError> {
    let bytes = Bytes::from(data(file));
    let msg = tfreq::decode(&bytes).unwrap();
    let p = prepare(&msg, &bytes, &target, &o)?;
    Client::connect(target, o)?.send(&p)
}

// ---------------------------------------------------------------------------------------
// EAS
// ---------------------------------------------------------------------------------------

#[test]
fn signature_equals_the_sdks() {
    let cases: serde_json::Value =
        serde_json::from_slice(&data("tests/data/eas_sign/cases.json")).unwrap();
    let cases = cases.as_array().unwrap();
    assert!(cases.len() >= 5);
    for c in cases {
        let body = match (c["body"]["file"].as_str(), c["body"]["hex"].as_str()) {
            (Some(f), _) => data(f),
            (_, Some(h)) => (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect(),
            _ => panic!("case without body"),
        };
        let h = &c["headers"];
        let s = sign(
            c["token"].as_str().unwrap(),
            &body,
            h["Content-Type"].as_str().unwrap(),
            h["Date"].as_str().unwrap(),
            c["path"].as_str().unwrap(),
        );
        assert_eq!(s.content_md5, h["Content-MD5"].as_str().unwrap(), "{c}");
        assert_eq!(s.authorization, h["Authorization"].as_str().unwrap(), "{c}");
        assert_eq!(
            tfreq::net::canonical_path(&format!("http://h:1{}?x=1", c["path"].as_str().unwrap())),
            c["path"].as_str().unwrap()
        );
    }
    // The Date header tfreq writes has the SDK's layout (2026-12-03 08:00:00 UTC).
    let t = UNIX_EPOCH + Duration::from_secs(1_796_284_800);
    assert_eq!(
        httpdate::fmt_http_date(t),
        cases[0]["headers"]["Date"].as_str().unwrap()
    );
}

#[test]
fn eas_raw_and_signed_tokens() {
    let srv = eas_server();
    let url = srv.url("/api/predict/faq");
    for auth in [EasAuth::Raw, EasAuth::Signed] {
        let t = Target::parse(&url, None).unwrap();
        let ex = send_file(t, opts(Some(TOKEN), auth), "tests/data/eas/faq_prod.bin").unwrap();
        assert_eq!(ex.response.kind, Kind::Response);
        assert_eq!(ex.response.wire, WireFormat::Eas);
        assert_eq!(&ex.raw[..], &data("tests/data/eas/response.bin")[..]);
        assert!(ex.notes.is_empty());
    }
    let seen = srv.seen();
    // The file's own bytes went on the wire.
    assert_eq!(seen[0].body, data("tests/data/eas/faq_prod.bin"));
    assert_eq!(seen[0].headers["authorization"], TOKEN);
    assert!(seen[1].headers["authorization"].starts_with("EAS "));
    assert_eq!(seen[1].headers["content-md5"].len(), 32);
    // The Date is now, in the SDK's layout.
    let date = httpdate::parse_http_date(&seen[1].headers["date"]).unwrap();
    let age = SystemTime::now().duration_since(date).unwrap_or_default();
    assert!(age < Duration::from_secs(60));
}

#[test]
fn eas_wrong_token_is_the_servers_refusal() {
    let srv = eas_server();
    let t = Target::parse(&srv.url("/api/predict/faq"), None).unwrap();
    let e = send_file(
        t,
        opts(Some("wrong"), EasAuth::Signed),
        "tests/data/eas/faq_prod.bin",
    )
    .unwrap_err();
    assert!(e.is_refusal());
    assert_eq!(
        e.to_string(),
        "the service refused the request: HTTP 401 Unauthorized: Unauthorized: invalid token"
    );
}

#[test]
fn tf_serving_request_to_eas_is_converted() {
    let srv = eas_server();
    let t = Target::parse(&srv.url("/api/predict/faq"), None).unwrap();
    let ex = send_file(
        t,
        opts(Some(TOKEN), EasAuth::Raw),
        "tests/data/tfs/faq_prod.bin",
    )
    .unwrap();
    assert!(
        ex.notes
            .iter()
            .any(|n| n.contains("converted from a TF Serving request")),
        "{:?}",
        ex.notes
    );
    assert!(
        ex.notes.iter().any(|n| n.contains("model_spec")),
        "{:?}",
        ex.notes
    );
    // What the server got is the EAS form of the same request.
    let sent = tfreq::decode_as(&srv.seen()[0].body, WireFormat::Eas, Kind::Request).unwrap();
    let orig = tfreq::decode(&data("tests/data/tfs/faq_prod.bin")).unwrap();
    let names = |m: &tfreq::Message| m.tensors.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    let mut a = names(&sent);
    let mut b = names(&orig);
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

// ---------------------------------------------------------------------------------------
// CLI: exit codes, --save, --expect
// ---------------------------------------------------------------------------------------

fn tfreq() -> Command {
    let mut c = crate::common::tfreq();
    c.env_remove("TFREQ_TOKEN");
    c
}

/// Fails with the command's output unless it exited 0.
fn assert_ok(out: &std::process::Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::output_text(out)
    );
}

/// `tfreq send faq_prod.bin --to URL --expect EXPECT` with the right token.
fn send_expect(url: &str, expect: &std::path::Path) -> std::process::Output {
    tfreq()
        .args([
            "send",
            "tests/data/eas/faq_prod.bin",
            "--to",
            url,
            "--token",
            TOKEN,
            "--expect",
        ])
        .arg(expect)
        .output()
        .unwrap()
}

#[test]
fn cli_send_exit_codes_save_and_expect() {
    let srv = eas_server();
    let url = srv.url("/api/predict/faq");
    let dir = tempfile::tempdir().unwrap();
    // 0, and the raw answer kept.
    let out = tfreq()
        .args([
            "send",
            "tests/data/eas/faq_prod.bin",
            "--to",
            &url,
            "--save",
        ])
        .arg(dir.path())
        .env("TFREQ_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert_ok(&out);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("EAS PredictResponse"), "{stdout}");
    let saved = dir.path().join("faq_prod.response.bin");
    assert_eq!(
        std::fs::read(&saved).unwrap(),
        data("tests/data/eas/response.bin")
    );
    // --expect: the same answer passes (file or directory) ...
    for expect in [saved.clone(), dir.path().to_path_buf()] {
        let out = send_expect(&url, &expect);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("the answer matches"));
    }
    // ... a changed one fails, naming the output.
    // The same response with sorted_probs moved by 0.01, rebuilt output by output.
    let golden = tfreq::decode(&data("tests/data/eas/response.bin")).unwrap();
    let mut b = tfreq::TFRequest::new("");
    for t in &golden.tensors {
        let e = t.elements(WireFormat::Eas);
        let vals: Vec<tfreq::Scalar> = (0..e.expected.unwrap() as usize)
            .map(|i| e.get(i).unwrap())
            .collect();
        let shape = t.shape.sizes();
        let fv: tfreq::FeedValues = match t.name.as_str() {
            "sorted_probs" => vals
                .iter()
                .map(|v| match v {
                    tfreq::Scalar::F32(x) => x + 0.01,
                    v => panic!("{v:?}"),
                })
                .collect::<Vec<f32>>()
                .into(),
            _ => tfreq::FeedValues::Str(
                vals.iter()
                    .map(|v| match v {
                        tfreq::Scalar::Bytes(b) => b.clone(),
                        v => panic!("{v:?}"),
                    })
                    .collect(),
            ),
        };
        b.add_feed(t.name.clone(), &shape, t.dtype.dtype().unwrap(), fv)
            .unwrap();
    }
    let mut changed_msg = b.into_message();
    changed_msg.kind = Kind::Response;
    let golden = changed_msg;
    let changed = dir.path().join("changed.bin");
    std::fs::write(
        &changed,
        tfreq::encode(&golden, WireFormat::Eas, tfreq::TfsEncoding::Python).unwrap(),
    )
    .unwrap();
    let out = send_expect(&url, &changed);
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("OUTPUT_VALUES_DIFFER") && s.contains("\"sorted_probs\""),
        "{s}"
    );
    // A wrong token: exit 1 with the server's message.
    let out = tfreq()
        .args([
            "send",
            "tests/data/eas/faq_prod.bin",
            "--to",
            &url,
            "--token",
            "nope",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("HTTP 401 Unauthorized: Unauthorized: invalid token")
    );
}

#[test]
fn cli_unreachable_and_silent_servers_exit_2_without_hanging() {
    // Nothing listens: a port just freed.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for to in [
        format!("http://127.0.0.1:{port}/api/predict/faq"),
        format!("grpc://127.0.0.1:{port}"),
        format!("http://127.0.0.1:{port}/v1/models/faq"),
    ] {
        let t0 = Instant::now();
        let out = tfreq()
            .args([
                "send",
                "tests/data/tfs/faq_prod.bin",
                "--to",
                &to,
                "--timeout",
                "5",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{to}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("could not reach the service") && err.contains("refused"),
            "{err}"
        );
        assert!(t0.elapsed() < Duration::from_secs(5));
    }
    // A server that accepts and never answers: the deadline ends it.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut keep = Vec::new();
        for c in l.incoming() {
            keep.push(c);
        }
    });
    let t0 = Instant::now();
    let out = tfreq()
        .args([
            "send",
            "tests/data/eas/faq_prod.bin",
            "--timeout",
            "0.5",
            "--to",
        ])
        .arg(format!("http://127.0.0.1:{port}/api/predict/faq"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no answer within 0.5 s"));
    assert!(t0.elapsed() < Duration::from_secs(4));
}

// ---------------------------------------------------------------------------------------
// TF Serving REST
// ---------------------------------------------------------------------------------------

#[test]
fn rest_sends_json_and_reads_the_answer_with_the_signatures_dtypes() {
    let srv = HttpServer::start(Box::new(|s: &Seen| {
        if s.method == "GET" && s.target == "/v1/models/faq/versions/1/metadata" {
            return (200, vec![], data("tests/data/models/faq.metadata.json"));
        }
        if s.method == "POST" && s.target == "/v1/models/faq/versions/1:predict" {
            let body = br#"{"outputs": {"model_version_id": "v3", "sorted_labels": [["positive", "neutral", "negative"]], "sorted_probs": [[0.5, 0.25, 0]]}}"#;
            return (200, vec![], body.to_vec());
        }
        (
            404,
            vec![],
            br#"{ "error": "Servable not found" }"#.to_vec(),
        )
    }));
    let t = Target::parse(&srv.url("/v1/models/faq/versions/1:predict"), None).unwrap();
    assert_eq!(t.protocol(), Protocol::Rest);
    let ex = send_file(t, opts(None, EasAuth::Raw), "tests/data/eas/faq_prod.bin").unwrap();
    assert!(
        ex.notes.iter().any(|n| n.contains("output_filter")),
        "{:?}",
        ex.notes
    );
    let m = &ex.response;
    assert_eq!(m.kind, Kind::Response);
    // The dtypes come from the model's signature: sorted_probs is DT_FLOAT even where
    // JSON wrote 0.
    let probs = m.tensor("sorted_probs").unwrap();
    assert_eq!(probs.dtype.to_string(), "DT_FLOAT");
    assert_eq!(probs.shape.sizes(), vec![1, 3]);
    assert_eq!(
        m.tensor("model_version_id").unwrap().shape.sizes(),
        Vec::<i64>::new()
    );
    // The request went as REST JSON that reads back as the same request.
    let posted = srv.seen().into_iter().find(|s| s.method == "POST").unwrap();
    let d = tfreq::formats::dtypes_from_metadata(
        &data("tests/data/models/faq.metadata.json"),
        "serving_default",
    )
    .unwrap();
    let back = tfreq::formats::from_json(&posted.body, &d, &[], WireFormat::Eas).unwrap();
    let orig = tfreq::decode(&data("tests/data/eas/faq_prod.bin")).unwrap();
    assert_same_inputs(&orig, &back);
    // A refusal keeps the server's message.
    let t = Target::parse(&srv.url("/v1/models/nope:predict"), None).unwrap();
    let e = send_file(t, opts(None, EasAuth::Raw), "tests/data/eas/faq_prod.bin").unwrap_err();
    assert!(
        e.is_refusal() && e.to_string().contains("Servable not found"),
        "{e}"
    );
}

fn assert_same_inputs(a: &tfreq::Message, b: &tfreq::Message) {
    assert_eq!(a.tensors.len(), b.tensors.len());
    for t in &a.tensors {
        let u = b
            .tensor(&t.name)
            .unwrap_or_else(|| panic!("{} missing", t.name));
        assert_eq!(t.dtype, u.dtype, "{}", t.name);
        assert_eq!(t.shape.sizes(), u.shape.sizes(), "{}", t.name);
        let (e, f) = (t.elements(a.wire), u.elements(b.wire));
        assert_eq!(e.expected, f.expected);
        for i in 0..e.expected.unwrap() as usize {
            assert_eq!(e.get(i), f.get(i), "{}[{i}]", t.name);
        }
    }
}

#[test]
fn rest_json_writer_round_trips_every_request_it_can_carry() {
    let mut n = 0;
    for dir in ["tests/data/eas", "tests/data/tfs", "tests/data/validator"] {
        let Ok(rd) = std::fs::read_dir(crate::common::root().join(dir)) else {
            continue;
        };
        for f in rd {
            let p = f.unwrap().path();
            if p.extension().is_none_or(|e| e != "bin") {
                continue;
            }
            let Ok(m) = tfreq::decode(&data(p.to_str().unwrap())) else {
                continue;
            };
            if m.kind != Kind::Request {
                continue;
            }
            let Ok((json, _)) = tfreq::formats::to_rest_json(&m) else {
                continue;
            };
            let mut d = tfreq::formats::Dtypes::default();
            let mut skip = false;
            for t in &m.tensors {
                match t.dtype.dtype() {
                    Some(dt) => d.set(t.name.clone(), dt),
                    None => skip = true,
                }
                // NaN and infinities are written as TF Serving reads them, which JSON
                // (and tfreq's reader) does not.
                skip |= json.contains("NaN") || json.contains("Infinity");
                // Zero-size dims are not in JSON's nesting.
                skip |= t.shape.sizes().contains(&0);
            }
            if skip {
                continue;
            }
            let back = tfreq::formats::from_json(json.as_bytes(), &d, &[], m.wire)
                .unwrap_or_else(|e| panic!("{}: {e}\n{json}", p.display()));
            assert_same_inputs(&m, &back);
            assert_eq!(back.effective_signature(), m.effective_signature());
            n += 1;
        }
    }
    assert!(n >= 20, "only {n} requests round-tripped");
}

#[test]
fn rest_json_says_what_it_cannot_carry() {
    let m = tfreq::decode(&data("tests/data/tfs/dtype_complex64_typed.bin")).unwrap();
    let e = tfreq::formats::to_rest_json(&m).unwrap_err().to_string();
    assert!(e.contains("cannot carry DT_COMPLEX64"), "{e}");
}

// ---------------------------------------------------------------------------------------
// TF Serving gRPC (an in-process tonic server)
// ---------------------------------------------------------------------------------------

/// The gRPC calls a server saw: method path and request bytes.
type Calls = Arc<Mutex<Vec<(String, Bytes)>>>;

#[derive(Clone)]
struct Tfs {
    seen: Calls,
    delay: Duration,
    /// Added to the first call of each request body (bytes not seen before), as a
    /// session's first run of a new feed/fetch set pays the executor build.
    cold: Duration,
    /// The Predict answer instead of tests/data/tfs/response.bin.
    reply: Option<Bytes>,
}

impl tonic::server::NamedService for Tfs {
    const NAME: &'static str = "tensorflow.serving.PredictionService";
}

struct Unary(Tfs, String);

impl tonic::server::UnaryService<Bytes> for Unary {
    type Response = Bytes;
    type Future =
        Pin<Box<dyn Future<Output = Result<tonic::Response<Bytes>, tonic::Status>> + Send>>;
    fn call(&mut self, req: tonic::Request<Bytes>) -> Self::Future {
        let (svc, path) = (self.0.clone(), self.1.clone());
        Box::pin(async move {
            let body = req.into_inner();
            let first = {
                let mut seen = svc.seen.lock().unwrap();
                let first = !seen.iter().any(|(_, b)| *b == body);
                seen.push((path.clone(), body.clone()));
                first
            };
            tokio::time::sleep(svc.delay).await;
            if first {
                tokio::time::sleep(svc.cold).await;
            }
            if path.ends_with("/Predict") {
                let r = tfs::PredictRequest::decode(body.clone())
                    .map_err(|e| tonic::Status::invalid_argument(e.to_string()))?;
                let spec = r.model_spec.unwrap_or_default();
                if spec.name != "faq" {
                    return Err(tonic::Status::not_found(format!(
                        "Servable not found for request: Latest({})",
                        spec.name
                    )));
                }
                Ok(tonic::Response::new(svc.reply.clone().unwrap_or_else(
                    || Bytes::from(data("tests/data/tfs/response.bin")),
                )))
            } else {
                // The faq SavedModel's own signatures.
                let sm = tf::SavedModel::decode(&data("tests/data/models/faq/saved_model.pb")[..])
                    .unwrap();
                let map = tfs::SignatureDefMap {
                    signature_def: sm.meta_graphs[0]
                        .signature_def
                        .clone()
                        .into_iter()
                        .collect(),
                };
                let mut metadata = BTreeMap::new();
                metadata.insert(
                    "signature_def".to_string(),
                    tfreq::wire::Any {
                        type_url: "type.googleapis.com/tensorflow.serving.SignatureDefMap".into(),
                        value: map.encode_to_vec().into(),
                    },
                );
                let resp = tfs::GetModelMetadataResponse {
                    model_spec: None,
                    metadata: metadata.into_iter().collect(),
                };
                Ok(tonic::Response::new(Bytes::from(resp.encode_to_vec())))
            }
        })
    }
}

impl tower::Service<http::Request<tonic::body::Body>> for Tfs {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let svc = self.clone();
        Box::pin(async move {
            let path = req.uri().path().to_string();
            let mut grpc = tonic::server::Grpc::new(RawCodec)
                .max_decoding_message_size(64 << 20)
                .max_encoding_message_size(usize::MAX);
            Ok(grpc.unary(Unary(svc, path), req).await)
        })
    }
}

/// Starts the gRPC server on its own runtime thread; returns its port and what it saw.
fn grpc_server(delay: Duration, cold: Duration) -> (u16, Calls) {
    grpc_server_replying(delay, cold, None)
}

/// [`grpc_server`] whose Predict answers `reply` (when given).
fn grpc_server_replying(delay: Duration, cold: Duration, reply: Option<Bytes>) -> (u16, Calls) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let svc = Tfs {
        seen: seen.clone(),
        delay,
        cold,
        reply,
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(l.local_addr().unwrap().port()).unwrap();
            tonic::transport::Server::builder()
                .add_service(svc)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(l))
                .await
                .unwrap();
        });
    });
    (rx.recv().unwrap(), seen)
}

#[test]
fn grpc_predict_and_metadata() {
    let (port, seen) = grpc_server(Duration::ZERO, Duration::ZERO);
    let url = format!("grpc://127.0.0.1:{port}");
    // A TF Serving request naming its model: its own bytes go on the wire.
    let t = Target::parse(&url, None).unwrap();
    let ex = send_file(
        t.clone(),
        opts(None, EasAuth::Raw),
        "tests/data/tfs/faq_prod.bin",
    )
    .unwrap();
    assert_eq!(ex.response.wire, WireFormat::TfServing);
    assert_eq!(&ex.raw[..], &data("tests/data/tfs/response.bin")[..]);
    assert_eq!(
        &seen.lock().unwrap()[0].1[..],
        &data("tests/data/tfs/faq_prod.bin")[..]
    );
    assert_eq!(seen.lock().unwrap()[0].0, tfreq::net::PREDICT);
    // An EAS request needs a model name, and is converted.
    let e = send_file(
        t.clone(),
        opts(None, EasAuth::Raw),
        "tests/data/eas/faq_prod.bin",
    )
    .unwrap_err();
    assert!(
        matches!(e, NetError::NoModelName(_)) && e.to_string().contains("needs a model name"),
        "{e}"
    );
    let mut o = opts(None, EasAuth::Raw);
    o.model_name = Some("faq".into());
    let ex = send_file(t.clone(), o.clone(), "tests/data/eas/faq_prod.bin").unwrap();
    assert!(ex.notes[0].contains("converted from an EAS request"));
    let sent = tfs::PredictRequest::decode(seen.lock().unwrap()[1].1.clone()).unwrap();
    assert_eq!(sent.model_spec.unwrap().name, "faq");
    // A gRPC status is the server's refusal, with its message.
    o.model_name = Some("other".into());
    let e = send_file(t.clone(), o.clone(), "tests/data/eas/faq_prod.bin").unwrap_err();
    assert_eq!(
        e.to_string(),
        "the service refused the request: gRPC NOT_FOUND: Servable not found for request: Latest(other)"
    );
    // GetModelMetadata gives the SavedModel's signatures.
    o.model_name = Some("faq".into());
    let live = Client::connect(t, o).unwrap().metadata().unwrap();
    let (file, _) =
        tfreq::formats::read_model(&crate::common::root().join("tests/data/models/faq")).unwrap();
    assert_eq!(
        live.meta_graph("serve").unwrap().signatures,
        file.meta_graph("serve").unwrap().signatures
    );
}

#[test]
fn grpc_deadline() {
    let (port, _) = grpc_server(Duration::from_secs(5), Duration::ZERO);
    let t = Target::parse(&format!("grpc://127.0.0.1:{port}"), None).unwrap();
    let mut o = opts(None, EasAuth::Raw);
    o.timeout = Duration::from_millis(300);
    let t0 = Instant::now();
    let e = send_file(t, o, "tests/data/tfs/faq_prod.bin").unwrap_err();
    assert_eq!(e, NetError::Timeout(Duration::from_millis(300)));
    assert!(t0.elapsed() < Duration::from_secs(3));
}

/// `replay` against a server whose first call of each request body is 400 ms slower (an
/// executor build): faq_prod, which the warm-up does not send, is measured cold (exit 1)
/// beside diff's static verdict; the warm-up's own request is warm. The margins hold
/// under load: a warm first call would need 150 ms of jitter to count as cold, and the
/// cold one's later calls (1 ms) could slow to 130 ms and it would still be cold.
#[test]
fn cli_replay_measures_and_diffs() {
    let (port, seen) = grpc_server(Duration::from_millis(1), Duration::from_millis(400));
    let out = tfreq()
        .args([
            "replay",
            "tests/data/tfs/faq_warmup.bin",
            "tests/data/tfs/faq_prod.bin",
            "tests/data/tfs/faq_warmup.bin",
            "--count",
            "3",
            "--prod-count",
            "3",
            "--cold-ms",
            "150",
            "--format",
            "json",
            "--to",
        ])
        .arg(format!("grpc://127.0.0.1:{port}"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["warmup"][0]["calls"].as_array().unwrap().len(), 3);
    let p = &v["production"];
    assert_eq!(p[0]["calls"].as_array().unwrap().len(), 3);
    assert_eq!(p[0]["cold"], true, "{v:#}");
    assert_eq!(p[0]["static_verdict"], "new-executor", "{v:#}");
    assert_eq!(p[1]["cold"], false, "{v:#}");
    assert_eq!(v["cold"], 1, "{v:#}");
    assert_eq!(seen.lock().unwrap().len(), 9);
}

// ---------------------------------------------------------------------------------------
// EAS queue service
// ---------------------------------------------------------------------------------------

#[test]
fn async_put_once_then_get_by_request_id() {
    let state = Arc::new(Mutex::new(0u32)); // sink polls before the result is "ready"
    let s2 = state.clone();
    let srv = HttpServer::start(Box::new(move |s: &Seen| {
        if s.headers.get("authorization").map(String::as_str) != Some(TOKEN) {
            return (401, vec![], b"bad token".to_vec());
        }
        if s.method == "POST" && s.target.starts_with("/api/predict/faq_async?") {
            return (
                200,
                vec![("X-Eas-Queueservice-Request-Id".into(), "req-42".into())],
                b"7".to_vec(),
            );
        }
        if s.method == "GET" && s.target.starts_with("/api/predict/faq_async/sink?") {
            assert!(s.target.contains("requestId=req-42"), "{}", s.target);
            assert!(s.target.contains("_auto_delete_=true"));
            let mut n = s2.lock().unwrap();
            *n += 1;
            let list = if *n < 2 {
                DataFrameList::default()
            } else {
                DataFrameList {
                    index: vec![DataFrame {
                        index: 3,
                        tags: [("requestId".to_string(), "req-42".to_string())].into(),
                        data: data("tests/data/eas/response.bin").into(),
                        message: String::new(),
                    }],
                }
            };
            return (200, vec![], list.encode_to_vec());
        }
        (500, vec![], b"queue is full".to_vec())
    }));
    let out = tfreq()
        .args([
            "send",
            "tests/data/eas/faq_prod.bin",
            "--async",
            "--tag",
            "user=a b",
            "--to",
        ])
        .arg(srv.url("/api/predict/faq_async"))
        .env("TFREQ_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert_ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("EAS PredictResponse"));
    let seen = srv.seen();
    let puts: Vec<_> = seen.iter().filter(|s| s.method == "POST").collect();
    assert_eq!(puts.len(), 1);
    assert_eq!(puts[0].target, "/api/predict/faq_async?user=a%20b");
    assert_eq!(puts[0].body, data("tests/data/eas/faq_prod.bin"));
    assert!(puts[0].headers.contains_key("x-eas-queueservice-redis-uid"));
    // A refused put is reported, never sent again.
    let out = tfreq()
        .args(["send", "tests/data/eas/faq_prod.bin", "--async", "--to"])
        .arg(srv.url("/api/predict/other"))
        .env("TFREQ_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("HTTP 500 Internal Server Error: queue is full")
    );
    let puts = srv
        .seen()
        .iter()
        .filter(|s| s.target.starts_with("/api/predict/other"))
        .count();
    assert_eq!(puts, 1);
}

/// A sink item the worker failed (`lastCode` 400, `lastMessage` TensorFlow's error, the
/// error text as data, as tests/live/server.py writes it) is the service's refusal:
/// exit 1 with the code and the message, not "unreadable response".
#[test]
fn async_worker_failure_shows_last_code_and_message() {
    let why = "Expects arg[2] to be float but double is provided";
    let srv = HttpServer::start(Box::new(move |s: &Seen| {
        if s.method == "POST" {
            return (
                200,
                vec![("X-Eas-Queueservice-Request-Id".into(), "req-7".into())],
                b"1".to_vec(),
            );
        }
        let list = DataFrameList {
            index: vec![DataFrame {
                index: 9,
                tags: [
                    ("requestId", "req-7"),
                    ("source.index", "1"),
                    ("lastCode", "400"),
                    ("lastMessage", why),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
                data: Bytes::from(why.as_bytes().to_vec()),
                message: String::new(),
            }],
        };
        (200, vec![], list.encode_to_vec())
    }));
    let out = tfreq()
        .args(["send", "tests/data/eas/faq_prod.bin", "--async", "--to"])
        .arg(srv.url("/api/predict/faq_async"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "the service refused the request: the worker answered 400 Bad Request (sink item 9, request req-7): {why}"
        )),
        "{err}"
    );
    assert!(!err.contains("unreadable"), "{err}");
}

/// `--cacert` must name a readable PEM file with a certificate (exit 2 before any call).
#[test]
fn cacert_without_a_certificate_is_refused() {
    let out = tfreq()
        .args([
            "send",
            "tests/data/eas/faq_prod.bin",
            "--to",
            "https://127.0.0.1:9/api/predict/faq",
            "--cacert",
            "Cargo.toml",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "--cacert Cargo.toml: no certificate in it (expected -----BEGIN CERTIFICATE-----)"
        ),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------
// Hostile servers and arguments (docs/robustness.md)
// ---------------------------------------------------------------------------------------

/// Reads an HTTP request's head (up to the blank line) from `c`.
fn read_head(c: &mut TcpStream) {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match c.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => return,
        }
    }
}

/// A server that answers every request with a chunked body that never ends; returns its
/// port, how many body bytes it managed to write before the client hung up, and a
/// receiver that gets one message each time a connection's writer has stopped.
fn endless_server() -> (u16, Arc<Mutex<u64>>, std::sync::mpsc::Receiver<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let sent = Arc::new(Mutex::new(0u64));
    let s2 = sent.clone();
    let (stopped, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            let s3 = s2.clone();
            let stopped = stopped.clone();
            std::thread::spawn(move || {
                // Sent whichever way the writer returns.
                struct Stopped(std::sync::mpsc::Sender<()>);
                impl Drop for Stopped {
                    fn drop(&mut self) {
                        let _ = self.0.send(());
                    }
                }
                let _stopped = Stopped(stopped);
                read_head(&mut c);
                if c.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
                    .is_err()
                {
                    return;
                }
                let chunk = vec![b'x'; 64 << 10];
                let mut frame = format!("{:x}\r\n", chunk.len()).into_bytes();
                frame.extend_from_slice(&chunk);
                frame.extend_from_slice(b"\r\n");
                // Bounded: the test is over long before 4 GiB.
                for _ in 0..(1 << 16) {
                    if c.write_all(&frame).is_err() {
                        return;
                    }
                    *s3.lock().unwrap() += chunk.len() as u64;
                }
            });
        }
    });
    (port, sent, ended)
}

/// An answer that never ends stops at --max-response-size (exit 2, the limit named),
/// having read no more than the limit: the server could write at most the limit plus
/// what the sockets buffer before the client hung up.
#[test]
fn endless_answer_stops_at_max_response_size() {
    let (port, sent, ended) = endless_server();
    for to in [
        format!("http://127.0.0.1:{port}/api/predict/faq"),
        format!("http://127.0.0.1:{port}/v1/models/faq"),
    ] {
        *sent.lock().unwrap() = 0;
        let t0 = Instant::now();
        let out = tfreq()
            .args([
                "send",
                "tests/data/tfs/faq_prod.bin",
                "--max-response-size",
                "1M",
                "--timeout",
                "20",
                "--to",
                &to,
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{to}: {err}");
        assert!(
            err.contains("larger than the limit of 1 MiB (1048576 bytes) (--max-response-size)"),
            "{err}"
        );
        assert!(t0.elapsed() < Duration::from_secs(15), "{to}");
        // The server's count is final once its writer has hit the closed connection.
        ended
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("{to}: the server still writes 10 s after tfreq ended"));
        let n = *sent.lock().unwrap();
        assert!(n < 16 << 20, "{to}: the server wrote {n} bytes");
    }
}

/// A Content-Length over the limit is refused before the body is read; under it, the
/// answer is read as before.
#[test]
fn declared_length_over_the_limit_is_refused() {
    let srv = eas_server();
    let url = srv.url("/api/predict/faq");
    let size = data("tests/data/eas/response.bin").len();
    let run = |limit: String| {
        tfreq()
            .args(["send", "tests/data/eas/faq_prod.bin", "--token", TOKEN])
            .args(["--max-response-size", &limit, "--to", &url])
            .output()
            .unwrap()
    };
    let out = run(format!("{}", size - 1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("limit of {} bytes", size - 1)),
        "{err}"
    );
    assert_ok(&run(format!("{size}")));
}

/// gRPC: an answer over --max-response-size is refused by its length prefix (exit 2, the
/// limit named), not taken for the server's refusal.
#[test]
fn grpc_answer_over_the_limit_is_refused() {
    let big = tfs::PredictResponse {
        outputs: [(
            "x".to_string(),
            tf::TensorProto {
                dtype: 7,
                string_val: vec![Bytes::from(vec![b'a'; 2 << 20])],
                ..Default::default()
            },
        )]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let (port, _) = grpc_server_replying(
        Duration::ZERO,
        Duration::ZERO,
        Some(Bytes::from(big.encode_to_vec())),
    );
    let to = format!("grpc://127.0.0.1:{port}");
    let out = tfreq()
        .args([
            "send",
            "tests/data/tfs/faq_prod.bin",
            "--max-response-size",
            "1M",
        ])
        .args(["--to", &to])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("larger than the limit of 1 MiB"), "{err}");
    // The default (TF Serving's own limit) reads it.
    let out = tfreq()
        .args(["send", "tests/data/tfs/faq_prod.bin", "--values", "none"])
        .args(["--format", "json", "--to", &to])
        .output()
        .unwrap();
    assert_ok(&out);
}

/// `--cacert` is read with a 1 MiB bound: /dev/zero is refused at once.
#[test]
fn cacert_over_one_mib_is_refused() {
    let t0 = Instant::now();
    let out = tfreq()
        .args(["send", "tests/data/eas/faq_prod.bin"])
        .args(["--to", "https://127.0.0.1:9/api/predict/faq"])
        .args(["--cacert", "/dev/zero"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--cacert /dev/zero: larger than 1 MiB"),
        "{err}"
    );
    assert!(t0.elapsed() < Duration::from_secs(5));
}

/// Every --timeout out of range is a usage error (exit 2) naming the option, never a
/// panic, for a call and for an --async wait.
#[test]
fn timeouts_out_of_range_are_usage_errors() {
    for v in [
        "1e20", "1e19", "nan", "inf", "-inf", "-1", "0", "1e-300", "86401", "x",
    ] {
        for extra in [&[][..], &["--async"][..]] {
            let out = tfreq()
                .args(["send", "tests/data/eas/faq_prod.bin"])
                .args(["--to", "http://127.0.0.1:9/api/predict/faq"])
                .args(extra)
                .arg(format!("--timeout={v}"))
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{v}: {err}");
            assert!(err.contains("--timeout"), "{v}: {err}");
            assert!(!err.contains("panicked"), "{v}: {err}");
        }
    }
    // Written as a separate argument, a negative number is still the value.
    let out = tfreq()
        .args(["send", "tests/data/eas/faq_prod.bin", "--timeout", "-1"])
        .args(["--to", "http://127.0.0.1:9/api/predict/faq"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("above 0"), "{err}");
}

/// `replay`'s timing thresholds: `nan` (every request warm), `inf`, a negative or huge
/// value are usage errors before anything is sent.
#[test]
fn replay_thresholds_out_of_range_are_usage_errors() {
    let (port, seen) = grpc_server(Duration::ZERO, Duration::ZERO);
    let to = format!("grpc://127.0.0.1:{port}");
    for (flag, v) in [
        ("--cold-factor", "nan"),
        ("--cold-factor", "inf"),
        ("--cold-factor", "0.5"),
        ("--cold-factor", "-3"),
        ("--cold-ms", "nan"),
        ("--cold-ms", "-1"),
        ("--cold-ms", "1e20"),
    ] {
        let out = tfreq()
            .args([
                "replay",
                "tests/data/tfs/faq_warmup.bin",
                flag,
                v,
                "--to",
                &to,
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {v}: {err}");
        assert!(err.contains(flag), "{flag} {v}: {err}");
    }
    assert!(seen.lock().unwrap().is_empty(), "a request was sent");
}

/// The longest deadline the library takes is cut to 24 hours, so `Instant + timeout`
/// and gRPC's timeout header never overflow.
#[test]
fn library_cuts_huge_deadlines() {
    let o = Options {
        timeout: Duration::MAX,
        ..Options::default()
    };
    assert_eq!(o.deadline(), tfreq::net::MAX_TIMEOUT);
    // A queue wait with Duration::MAX: no panic, the server's refusal comes back.
    let srv = HttpServer::start(Box::new(|_: &Seen| (503, vec![], b"busy".to_vec())));
    let mut q = tfreq::net::Queue::new(&srv.url("/api/predict/q"), &o, &[]).unwrap();
    let bytes = Bytes::from(data("tests/data/eas/faq_prod.bin"));
    let msg = tfreq::decode(&bytes).unwrap();
    let t = Target::parse(&srv.url("/api/predict/q"), None).unwrap();
    let p = prepare(&msg, &bytes, &t, &o).unwrap();
    assert!(q.send(&p).unwrap_err().is_refusal());
}

/// A server that answers gRPC with HTTP/1 is "no gRPC service there" (exit 2), not the
/// service's refusal (exit 1).
#[test]
fn grpc_to_an_http1_server_is_no_grpc_service() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = c.read(&mut buf);
                let _ = c.write_all(
                    b"HTTP/1.1 400 Bad Request\r\ncontent-length: 11\r\nconnection: close\r\n\r\nBad Request",
                );
            });
        }
    });
    let out = tfreq()
        .args(["send", "tests/data/tfs/faq_prod.bin", "--timeout", "5"])
        .arg("--to")
        .arg(format!("grpc://127.0.0.1:{port}"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no gRPC service there"), "{err}");
}

/// An EAS sink that stays empty (a server that does not hold the call open) is asked
/// with backoff: at most 20 GETs a second, and the wait ends at --timeout (exit 2).
#[test]
fn async_empty_sink_is_polled_with_backoff() {
    let srv = HttpServer::start(Box::new(|s: &Seen| {
        if s.method == "POST" {
            return (
                200,
                vec![("X-Eas-Queueservice-Request-Id".into(), "r1".into())],
                b"1".to_vec(),
            );
        }
        (200, vec![], DataFrameList::default().encode_to_vec())
    }));
    let t0 = Instant::now();
    let out = tfreq()
        .args([
            "send",
            "tests/data/eas/faq_prod.bin",
            "--async",
            "--timeout",
            "2",
        ])
        .arg("--to")
        .arg(srv.url("/api/predict/q"))
        .output()
        .unwrap();
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no answer within 2.0 s"), "{err}");
    let gets = srv.seen().iter().filter(|s| s.method == "GET").count();
    assert!(gets >= 2, "{gets} GETs");
    assert!(
        (gets as f64) <= 20.0 * took.as_secs_f64(),
        "{gets} GETs in {took:?}"
    );
}

/// What a server says is shown escaped: an HTTP error body, a gRPC status message and
/// a queue item's lastMessage with escape sequences, a carriage return and a forged
/// line reach stderr as text.
#[test]
fn what_a_server_says_is_shown_escaped() {
    let evil = "x\x1b[2J\x1b]0;title\x07\r\n::error::fake \u{202e}ok";
    let check = |out: &std::process::Output, what: &str| {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert!(
            !err.contains('\x1b') && !err.contains('\r'),
            "{what}: {err:?}"
        );
        assert!(!err.contains('\u{202e}'), "{what}: {err:?}");
        assert!(!err.contains("\n::error::"), "{what}: {err:?}");
        assert!(err.contains(r"x\u{1b}[2J"), "{what}: {err}");
    };
    // HTTP: a refusal's body.
    let body = evil.as_bytes().to_vec();
    let srv = HttpServer::start(Box::new(move |_: &Seen| (500, vec![], body.clone())));
    let out = tfreq()
        .args(["send", "tests/data/eas/faq_prod.bin", "--to"])
        .arg(srv.url("/api/predict/faq"))
        .output()
        .unwrap();
    check(&out, "HTTP body");
    // TF Serving REST's {"error": ...}: the error text, escaped.
    let body = serde_json::to_vec(&serde_json::json!({ "error": evil })).unwrap();
    let srv = HttpServer::start(Box::new(move |_: &Seen| (400, vec![], body.clone())));
    let out = tfreq()
        .args(["send", "tests/data/tfs/faq_prod.bin", "--to"])
        .arg(srv.url("/v1/models/faq"))
        .output()
        .unwrap();
    check(&out, "REST error");
    assert!(String::from_utf8_lossy(&out.stderr).contains(r"HTTP 400 Bad Request: x\u{1b}"));
    // gRPC: the status message (the server repeats the model name it was given).
    let (port, _) = grpc_server(Duration::ZERO, Duration::ZERO);
    let out = tfreq()
        .args(["send", "tests/data/tfs/faq_prod.bin", "--model-name", evil])
        .arg("--to")
        .arg(format!("grpc://127.0.0.1:{port}"))
        .output()
        .unwrap();
    check(&out, "gRPC message");
    // The queue: a failed item's lastMessage and lastCode.
    let srv = HttpServer::start(Box::new(move |s: &Seen| {
        if s.method == "POST" {
            return (
                200,
                vec![("X-Eas-Queueservice-Request-Id".into(), "r1".into())],
                b"1".to_vec(),
            );
        }
        let list = DataFrameList {
            index: vec![DataFrame {
                index: 1,
                tags: [("lastCode", "500\x1b[31m"), ("lastMessage", evil)]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                data: Bytes::new(),
                message: String::new(),
            }],
        };
        (200, vec![], list.encode_to_vec())
    }));
    let out = tfreq()
        .args(["send", "tests/data/eas/faq_prod.bin", "--async", "--to"])
        .arg(srv.url("/api/predict/q"))
        .output()
        .unwrap();
    check(&out, "lastMessage");
}

/// `send A/x.bin B/x.bin --save DIR` is refused before anything is sent: both answers
/// would be written to DIR/x.response.bin.
#[test]
fn save_refuses_two_requests_with_one_name() {
    let srv = eas_server();
    let dir = tempfile::tempdir().unwrap();
    for d in ["a", "b"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
        std::fs::copy(
            crate::common::root().join("tests/data/eas/faq_prod.bin"),
            dir.path().join(d).join("x.bin"),
        )
        .unwrap();
    }
    let save = dir.path().join("out");
    let out = tfreq()
        .arg("send")
        .arg(dir.path().join("a/x.bin"))
        .arg(dir.path().join("b/x.bin"))
        .args([
            "--token",
            TOKEN,
            "--to",
            &srv.url("/api/predict/faq"),
            "--save",
        ])
        .arg(&save)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("would both be written to") && err.contains("x.response.bin"),
        "{err}"
    );
    assert!(srv.seen().is_empty(), "a request was sent");
    assert!(!save.exists());
    // Distinct names are kept, one file each.
    std::fs::copy(
        crate::common::data("eas/faq_prod.bin"),
        dir.path().join("b/y.bin"),
    )
    .unwrap();
    let out = tfreq()
        .arg("send")
        .arg(dir.path().join("a/x.bin"))
        .arg(dir.path().join("b/y.bin"))
        .args([
            "--token",
            TOKEN,
            "--to",
            &srv.url("/api/predict/faq"),
            "--save",
        ])
        .arg(&save)
        .output()
        .unwrap();
    assert_ok(&out);
    assert!(save.join("x.response.bin").exists() && save.join("y.response.bin").exists());
}

/// `replay` of a warm-up of more than 1000 records is refused before anything is sent,
/// naming TF Serving's limit.
#[test]
fn replay_refuses_more_than_1000_warmup_records() {
    let (port, seen) = grpc_server(Duration::ZERO, Duration::ZERO);
    let msg = tfreq::decode(&data("tests/data/tfs/faq_prod.bin")).unwrap();
    let file = tempfile::NamedTempFile::new().unwrap();
    let many = vec![msg; 1001];
    std::fs::write(
        file.path(),
        tfreq::formats::write(&many, tfreq::formats::Layout::TfRecord).unwrap(),
    )
    .unwrap();
    let out = tfreq()
        .arg("replay")
        .arg(file.path())
        .args(["--count", "1", "--to"])
        .arg(format!("grpc://127.0.0.1:{port}"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("1,001 warm-up records") && err.contains("past 1000 records"),
        "{err}"
    );
    assert!(err.contains("saved_model_warmup_util.cc"), "{err}");
    assert!(seen.lock().unwrap().is_empty(), "a request was sent");
}

/// `send` and `replay` read their inputs as every command does: `--max-size`,
/// `-`, and a bad file reported in its place while the others are sent (exit 2).
#[test]
fn send_and_replay_take_max_size_stdin_and_go_on_past_a_bad_file() {
    let srv = eas_server();
    let url = srv.url("/api/predict/faq");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.bin");
    std::fs::write(&bad, b"not a request\n").unwrap();
    let out = tfreq()
        .arg("send")
        .arg(&bad)
        .args([
            "tests/data/eas/faq_prod.bin",
            "--to",
            &url,
            "--max-size",
            "1M",
        ])
        .env("TFREQ_TOKEN", TOKEN)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.bin"), "{stderr}");
    assert!(stdout.contains("EAS PredictResponse"), "{stdout}");
    assert_eq!(srv.seen().len(), 1, "the good file was sent, once");
    // The size cap, before anything is sent.
    let out = tfreq()
        .args([
            "send",
            "tests/data/eas/faq_prod.bin",
            "--to",
            &url,
            "--max-size",
            "10",
        ])
        .env("TFREQ_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("size limit"));
    assert_eq!(srv.seen().len(), 1);
    // Standard input.
    let out = tfreq()
        .args(["send", "-", "--to", &url])
        .env("TFREQ_TOKEN", TOKEN)
        .write_stdin(data("tests/data/eas/faq_prod.bin"))
        .output()
        .unwrap();
    assert_ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("EAS PredictResponse"));

    // replay: a bad production file is reported, the others are replayed.
    let (port, seen) = grpc_server(Duration::from_millis(1), Duration::from_millis(1));
    let out = tfreq()
        .args(["replay", "tests/data/tfs/faq_warmup.bin"])
        .arg(&bad)
        .args([
            "tests/data/tfs/faq_prod.bin",
            "--count",
            "1",
            "--format",
            "json",
            "--max-size",
            "1M",
            "--to",
        ])
        .arg(format!("grpc://127.0.0.1:{port}"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.bin"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["production"].as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(seen.lock().unwrap().len(), 3);
}

// ---------------------------------------------------------------------------------------
// send --concurrency
// ---------------------------------------------------------------------------------------

/// Calls under way now and the most ever at once, counted by a server's handler.
#[derive(Default)]
struct InFlight {
    now: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
}

impl InFlight {
    /// Counts a call for as long as the guard lives.
    fn enter(self: &Arc<Self>) -> impl Drop + use<> {
        use std::sync::atomic::Ordering::SeqCst;
        let n = self.now.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(n, SeqCst);
        struct Leave(Arc<InFlight>);
        impl Drop for Leave {
            fn drop(&mut self) {
                self.0.now.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        Leave(self.clone())
    }

    fn most(&self) -> usize {
        self.most.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The four request files of the concurrency tests, each a different EAS request.
const FOUR: [&str; 4] = [
    "tests/data/eas/dtype_float.bin",
    "tests/data/eas/dtype_int32.bin",
    "tests/data/eas/dtype_bool.bin",
    "tests/data/eas/scalar.bin",
];

/// An EAS server answering each of [`FOUR`] after its delay (ms), with `status` for
/// the third when not 200.
fn slow_eas_server(delays: [u64; 4], third_status: u16, flight: Arc<InFlight>) -> HttpServer {
    let bodies: Vec<Vec<u8>> = FOUR.iter().map(|f| data(f)).collect();
    HttpServer::start(Box::new(move |s: &Seen| {
        let _g = flight.enter();
        let i = bodies
            .iter()
            .position(|b| *b == s.body)
            .expect("one of FOUR");
        std::thread::sleep(Duration::from_millis(delays[i]));
        if i == 2 && third_status != 200 {
            return (third_status, vec![], b"overloaded".to_vec());
        }
        (200, vec![], data("tests/data/eas/response.bin"))
    }))
}

/// The request labels of `send`'s human output, in the order shown.
fn shown_order(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| l.contains(" -> http://"))
        .map(|l| l.split(" -> ").next().unwrap().to_string())
        .collect()
}

/// Four requests of 300 ms, four at once, take about 300 ms, not 1.2 s: the server sees
/// four calls under way at once, and the answers are shown in the files' order although
/// the first file's answer comes last.
#[test]
fn send_concurrency_sends_at_once_and_shows_answers_in_file_order() {
    let flight = Arc::new(InFlight::default());
    let srv = slow_eas_server([600, 300, 300, 300], 200, flight.clone());
    let url = srv.url("/api/predict/faq");
    let start = Instant::now();
    let out = tfreq()
        .args(["send", "--concurrency", "4", "--to", &url])
        .args(FOUR)
        .output()
        .unwrap();
    let took = start.elapsed();
    assert_ok(&out);
    assert_eq!(flight.most(), 4);
    // One at a time it would be 1.5 s; four at once, the slowest call's 600 ms.
    assert!(took < Duration::from_millis(1300), "{took:?}");
    assert_eq!(shown_order(&out.stdout), FOUR);
    // The default stays one at a time, in order.
    let flight1 = Arc::new(InFlight::default());
    let srv1 = slow_eas_server([50, 10, 10, 10], 200, flight1.clone());
    let out = tfreq()
        .args(["send", "--to", &srv1.url("/api/predict/faq")])
        .args(FOUR)
        .output()
        .unwrap();
    assert_ok(&out);
    assert_eq!(flight1.most(), 1);
    assert_eq!(shown_order(&out.stdout), FOUR);
    let seen: Vec<Vec<u8>> = srv1.seen().into_iter().map(|s| s.body).collect();
    let want: Vec<Vec<u8>> = FOUR.iter().map(|f| data(f)).collect();
    assert_eq!(seen, want);
}

/// One refused request and one that times out among four sent at once: the other two
/// answers are shown, saved and compared, both failures reported in their place, and
/// the exit code is the worst (2 for the timeout).
#[test]
fn send_concurrency_one_failure_never_loses_the_others() {
    let flight = Arc::new(InFlight::default());
    // The second answers after the 1 s --timeout; the third is refused (503).
    let srv = slow_eas_server([10, 3000, 10, 10], 503, flight);
    let url = srv.url("/api/predict/faq");
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("saved");
    let out = tfreq()
        .args(["send", "-c", "3", "--timeout", "1", "--to", &url, "--save"])
        .arg(&save)
        .args(["--expect", "tests/data/eas/response.bin"])
        .args(["tests/data/eas/dtype_float.bin"])
        .output()
        .unwrap();
    // --expect FILE with one request still works under -c.
    assert_ok(&out);
    let out = tfreq()
        .args(["send", "-c", "3", "--timeout", "1", "--to", &url, "--save"])
        .arg(&save)
        .args(FOUR)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        crate::common::output_text(&out)
    );
    assert_eq!(
        shown_order(&out.stdout),
        [
            "tests/data/eas/dtype_float.bin",
            "tests/data/eas/scalar.bin"
        ]
    );
    assert!(
        err.contains("dtype_int32.bin: ") && err.contains("no answer within 1.0 s"),
        "{err}"
    );
    assert!(
        err.contains("dtype_bool.bin: ") && err.contains("HTTP 503"),
        "{err}"
    );
    let mut saved: Vec<String> = std::fs::read_dir(&save)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    saved.sort();
    assert_eq!(saved, ["dtype_float.response.bin", "scalar.response.bin"]);
    // --expect DIR compares the answers that came (the refused request has no expected
    // answer: reported, exit 2, not sent); JSON is one well-formed array of the answers.
    let out = tfreq()
        .args([
            "send",
            "-c",
            "4",
            "--timeout",
            "1",
            "--to",
            &url,
            "-f",
            "json",
            "--expect",
        ])
        .arg(&save)
        .args([
            "tests/data/eas/dtype_bool.bin",
            "tests/data/eas/dtype_float.bin",
            "tests/data/eas/scalar.bin",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        crate::common::output_text(&out)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("dtype_bool.response.bin"));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let docs = doc.as_array().unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0]["request"], "tests/data/eas/dtype_float.bin");
    assert_eq!(docs[1]["request"], "tests/data/eas/scalar.bin");
    assert!(
        docs.iter()
            .all(|d| d["findings"].as_array().unwrap().is_empty())
    );
    // A refused first request, one at a time: the JSON array has no stray comma.
    let out = tfreq()
        .args(["send", "--to", &url, "-f", "json"])
        .args([
            "tests/data/eas/dtype_bool.bin",
            "tests/data/eas/dtype_float.bin",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        crate::common::output_text(&out)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc.as_array().unwrap().len(), 1);
}

/// `--async --concurrency 2`: every request is put on the queue before any result is
/// asked for (as a pool of queue clients does), each once, and every result is fetched
/// by its own request id and shown in the files' order.
#[test]
fn send_async_concurrency_puts_all_then_waits_for_all() {
    let next_id = Arc::new(Mutex::new(0u32));
    let srv = HttpServer::start(Box::new(move |s: &Seen| {
        if s.method == "POST" {
            let mut n = next_id.lock().unwrap();
            *n += 1;
            let id = format!("req-{n}");
            return (
                200,
                vec![("X-Eas-Queueservice-Request-Id".into(), id)],
                b"1".to_vec(),
            );
        }
        let id = s.target.split("requestId=").nth(1).unwrap().to_string();
        let list = DataFrameList {
            index: vec![DataFrame {
                index: 1,
                tags: [("requestId".to_string(), id)].into(),
                data: data("tests/data/eas/response.bin").into(),
                message: String::new(),
            }],
        };
        (200, vec![], list.encode_to_vec())
    }));
    let out = tfreq()
        .args(["send", "--async", "-c", "2", "--to"])
        .arg(srv.url("/api/predict/q"))
        .args(FOUR)
        .output()
        .unwrap();
    assert_ok(&out);
    assert_eq!(shown_order(&out.stdout), FOUR);
    let seen = srv.seen();
    let methods: Vec<&str> = seen.iter().map(|s| s.method.as_str()).collect();
    assert_eq!(
        methods,
        ["POST", "POST", "POST", "POST", "GET", "GET", "GET", "GET"]
    );
    let mut asked: Vec<String> = seen[4..]
        .iter()
        .map(|s| s.target.split("requestId=").nth(1).unwrap().to_string())
        .collect();
    asked.sort();
    assert_eq!(asked, ["req-1", "req-2", "req-3", "req-4"]);
    // One identity for the whole run, whichever connection sends.
    let uids: std::collections::BTreeSet<_> = seen
        .iter()
        .map(|s| s.headers["x-eas-queueservice-redis-uid"].clone())
        .collect();
    assert_eq!(uids.len(), 1);
}

// ---------------------------------------------------------------------------------------
// tfreq load
// ---------------------------------------------------------------------------------------

/// `tfreq load ARGS... -f json`: its exit code and JSON report.
fn load_json(args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = tfreq()
        .arg("load")
        .args(args)
        .args(["-f", "json"])
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", crate::common::output_text(&out)));
    (out.status.code(), doc)
}

/// Eight calls of 200 ms, four at once, closed loop: about 400 ms, not 1.6 s, with four
/// under way at once; the first call (one key) is apart from the other seven.
#[test]
fn load_sends_concurrency_calls_at_once() {
    let flight = Arc::new(InFlight::default());
    let srv = slow_eas_server([200, 200, 200, 200], 200, flight.clone());
    let url = srv.url("/api/predict/faq");
    let (code, r) = load_json(&[
        "tests/data/eas/dtype_float.bin",
        "--to",
        &url,
        "-c",
        "4",
        "-n",
        "8",
    ]);
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(flight.most(), 4);
    assert_eq!(r["requests"], 8);
    assert_eq!(r["answers"], 8);
    assert_eq!(r["errors_total"], 0);
    assert_eq!(r["first_calls"].as_array().unwrap().len(), 1);
    assert_eq!(r["latency_ms"]["count"], 7);
    let elapsed = r["elapsed_s"].as_f64().unwrap();
    assert!((0.39..1.2).contains(&elapsed), "{elapsed}");
    let p50 = r["latency_ms"]["p50_ms"].as_f64().unwrap();
    assert!((199.0..400.0).contains(&p50), "{p50}");
    let bins: u64 = r["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(bins, 7);
}

/// Open loop at 50/s, one worker, and a service that stalls once for a second: the
/// requests scheduled during the stall wait for it, and their latencies include the
/// wait (measured from the scheduled send time), so p90 is hundreds of milliseconds —
/// a measurement from the actual send would see one slow call and p90 near 0. The
/// HTML report is well-formed XML whose plot has the curve's points.
#[test]
fn load_open_loop_counts_a_stall_in_the_latencies_scheduled_during_it() {
    let calls = Arc::new(Mutex::new(0u32));
    let srv = HttpServer::start(Box::new(move |_s: &Seen| {
        let n = {
            let mut c = calls.lock().unwrap();
            *c += 1;
            *c
        };
        if n == 5 {
            std::thread::sleep(Duration::from_millis(1000));
        }
        (200, vec![], data("tests/data/eas/response.bin"))
    }));
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let url = srv.url("/api/predict/faq");
    let (code, r) = load_json(&[
        "tests/data/eas/faq_prod.bin",
        "--to",
        &url,
        "--rate",
        "50/s",
        "-n",
        "100",
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["answers"], 100);
    let p = &r["latency_ms"];
    let (p90, p99, max) = (
        p["p90_ms"].as_f64().unwrap(),
        p["p99_ms"].as_f64().unwrap(),
        p["max_ms"].as_f64().unwrap(),
    );
    // Requests 5 to about 53 were due during the stall: latencies from ~1000 ms down.
    assert!(
        p90 > 400.0,
        "p90 {p90}: the wait during the stall is not counted\n{r}"
    );
    assert!(p99 > 900.0 && (999.0..1500.0).contains(&max), "{r}");
    // After the stall the backlog is sent at once: the run still ends near 2 s.
    let elapsed = r["elapsed_s"].as_f64().unwrap();
    assert!((1.9..3.0).contains(&elapsed), "{elapsed}");
    // The page: well-formed XML (so also parseable HTML), a circle a curve point with
    // the JSON's values, one mark a request in the plot over time. No browser here:
    // the structure is checked, not the rendering.
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // Self-contained: no script, nothing loaded from elsewhere.
    assert!(!html.contains("<script") && !html.contains(" src=") && !html.contains(" href="));
    let curve: Vec<String> = r["curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{}:{}", c["percentile"], c["latency_ms"]))
        .collect();
    assert_eq!(curve.len(), 16);
    let check = r#"
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
svg = '{http://www.w3.org/2000/svg}'
curve = [s for s in root.iter(svg + 'svg') if s.get('id') == 'curve'][0]
for c in curve.iter(svg + 'circle'):
    print('%s:%s' % (c.get('data-percentile'), c.get('data-latency-ms')))
over = [s for s in root.iter(svg + 'svg') if s.get('id') == 'over-time'][0]
print('marks', sum(p.get('d').count('M') for p in over.iter(svg + 'path')))
"#;
    match std::process::Command::new("python3")
        .args(["-c", check])
        .arg(&page)
        .output()
    {
        Ok(out) => {
            assert!(out.status.success(), "{}", crate::common::output_text(&out));
            let text = String::from_utf8(out.stdout).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), 17, "{text}");
            for (got, want) in lines.iter().zip(&curve) {
                let (gp, gl) = got.split_once(':').unwrap();
                let (wp, wl) = want.split_once(':').unwrap();
                assert_eq!(gp.parse::<f64>().unwrap(), wp.parse::<f64>().unwrap());
                assert_eq!(gl.parse::<f64>().unwrap(), wl.parse::<f64>().unwrap());
            }
            assert_eq!(lines[16], "marks 100");
        }
        Err(e) => eprintln!("python3 not available ({e}): the page's XML is not parsed"),
    }
}

/// Errors are counted by status, the failed calls' latencies left out; the first call
/// of each distinct executor key is shown apart, in the order sent; exit 1.
#[test]
fn load_counts_errors_by_status_and_each_keys_first_call() {
    let flight = Arc::new(InFlight::default());
    let srv = slow_eas_server([1, 1, 1, 1], 503, flight);
    let url = srv.url("/api/predict/faq");
    let mut args = FOUR.to_vec();
    args.extend(["--to", &url, "-c", "2", "-n", "12"]);
    let (code, r) = load_json(&args);
    assert_eq!(code, Some(1), "{r}");
    assert_eq!(r["requests"], 12);
    assert_eq!(r["errors_total"], 3);
    assert_eq!(r["answers"], 9);
    assert_eq!(
        r["errors"]["HTTP 503 Service Unavailable"]["count"], 3,
        "{r}"
    );
    // The files' executor keys, as the library computes them: one first call each,
    // from the first file of the key.
    let mut keys: Vec<(tfreq::analysis::ExecutorKey, &str)> = Vec::new();
    for f in FOUR {
        let m = tfreq::decode_as(&data(f), WireFormat::Eas, Kind::Request).unwrap();
        let k = tfreq::analysis::ExecutorKey::of(&m);
        if !keys.iter().any(|(seen, _)| *seen == k) {
            keys.push((k, f));
        }
    }
    let firsts = r["first_calls"].as_array().unwrap();
    assert_eq!(firsts.len(), keys.len(), "{r}");
    for (f, (k, file)) in firsts.iter().zip(&keys) {
        assert_eq!(f["request"], *file);
        assert_eq!(f["key"], k.to_string());
    }
    let failed_firsts = firsts.iter().filter(|f| !f["error"].is_null()).count();
    assert_eq!(
        r["latency_ms"]["count"].as_u64().unwrap(),
        9 - (firsts.len() - failed_firsts) as u64
    );
}

/// --rate paces the sends: 200 requests at 200/s are sent at 200/s (within 5 % on a
/// busy test machine); --duration at a rate sends rate × duration requests; the human
/// report has its histogram and the first calls; bad values are usage errors.
#[test]
fn load_rate_duration_and_usage() {
    let srv = eas_server();
    let url = srv.url("/api/predict/faq");
    let (code, r) = load_json(&[
        "tests/data/eas/faq_prod.bin",
        "--to",
        &url,
        "--token",
        TOKEN,
        "--rate",
        "200",
        "-n",
        "200",
        "-c",
        "2",
    ]);
    assert_eq!(code, Some(0), "{r}");
    let rate = r["send_rate_per_s"].as_f64().unwrap();
    assert!((rate - 200.0).abs() < 10.0, "{rate}");
    let (code, r) = load_json(&[
        "tests/data/eas/faq_prod.bin",
        "--to",
        &url,
        "--token",
        TOKEN,
        "--rate",
        "100",
        "--duration",
        "300ms",
    ]);
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["requests"], 30);
    let out = tfreq()
        .args([
            "load",
            "tests/data/eas/faq_prod.bin",
            "--to",
            &url,
            "--token",
            TOKEN,
            "-n",
            "20",
        ])
        .output()
        .unwrap();
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("load: 20 requests to"), "{text}");
    assert!(text.contains("p99.9") && text.contains('■'), "{text}");
    assert!(text.contains("first call of each executor key:"), "{text}");
    for bad in [
        &["--rate", "0"][..],
        &["--rate", "fast"],
        &["--duration", "0s"],
        &["--duration", "1s", "-n", "3"],
        &["-n", "0"],
        &["-c", "0"],
    ] {
        let out = tfreq()
            .args(["load", "tests/data/eas/faq_prod.bin", "--to", &url])
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}

/// Ctrl-C (SIGINT) ends a run early: no request is started after it, the report of what
/// was measured is printed (`interrupted`), and the process ends within moments.
#[cfg(unix)]
#[test]
fn load_ctrl_c_reports_what_was_measured() {
    let srv = eas_server();
    let url = srv.url("/api/predict/faq");
    let child = crate::common::bin()
        .args([
            "load",
            "tests/data/eas/faq_prod.bin",
            "--to",
            &url,
            "--token",
            TOKEN,
        ])
        .args(["--rate", "50", "--duration", "60s", "-f", "json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once it has measured something: ten answers served.
    let t0 = Instant::now();
    while srv.seen().len() < 10 {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "10 requests not served in 20 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::output_text(&out)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["interrupted"], true, "{r}");
    let n = r["requests"].as_u64().unwrap();
    assert!((10..=100).contains(&n), "{n}");
    assert_eq!(r["answers"], n);
}

// ---------------------------------------------------------------------------------------
// tfreq record: the proxy between a client and the in-process servers
// ---------------------------------------------------------------------------------------

/// A `tfreq record` process and the port it listens on.
struct Recording {
    child: std::process::Child,
    port: u16,
    stderr: Option<std::thread::JoinHandle<String>>,
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

/// Starts `tfreq record --listen 127.0.0.1:0 --to TO -o OUT ARGS...` and reads the port
/// from the address it prints.
fn start_record(to: &str, out: &std::path::Path, args: &[&str]) -> Recording {
    let mut child = crate::common::bin()
        .args(["record", "--listen", "127.0.0.1:0", "--to", to, "-o"])
        .arg(out)
        .args(args)
        .env_remove("TFREQ_TOKEN")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
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
    Recording {
        child,
        port,
        stderr: Some(stderr),
    }
}

impl Recording {
    /// Waits (at most 20 s) for the process to end; its exit code, stdout and stderr.
    fn wait(mut self) -> (Option<i32>, String, String) {
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if t0.elapsed() > Duration::from_secs(20) {
                let _ = self.child.kill();
                panic!("tfreq record did not stop");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let err = self.stderr.take().unwrap().join().unwrap();
        (status.code(), out, err)
    }

    fn terminate(self) -> (Option<i32>, String, String) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        self.wait()
    }
}

/// Sends `files` to `target` directly and through the proxy at `via`: the answers (or
/// refusals) must be the same bytes. Returns the request bodies sent (the traffic).
fn same_answers(target: &Target, via: &Target, o: &Options, files: &[&str]) -> Vec<Bytes> {
    let mut direct = Client::connect(target.clone(), o.clone()).unwrap();
    let mut proxied = Client::connect(via.clone(), o.clone()).unwrap();
    let mut sent = Vec::new();
    for f in files {
        let bytes = Bytes::from(data(f));
        let msg = tfreq::decode(&bytes).unwrap();
        let p = prepare(&msg, &bytes, target, o).unwrap();
        let a = direct.send(&p).map(|e| e.raw);
        let b = proxied.send(&p).map(|e| e.raw);
        assert_eq!(a, b, "{f}");
        sent.push(p.body);
    }
    sent
}

#[test]
fn record_grpc_passes_answers_through_and_records_one_request_per_key() {
    let (port, _) = grpc_server(Duration::ZERO, Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("warmup.tfrecord");
    let to = format!("grpc://127.0.0.1:{port}");
    // 5 predicts (one refused: no such model), then GetModelMetadata: 6 answers.
    let rec = start_record(&to, &out, &["--max-requests", "6"]);
    let target = Target::parse(&to, None).unwrap();
    let via = Target::parse(&format!("grpc://127.0.0.1:{}", rec.port), None).unwrap();
    let mut o = opts(None, EasAuth::Raw);
    o.model_name = Some("faq".into());
    let files = [
        "tests/data/eas/faq_prod.bin",
        "tests/data/eas/faq_prod_batch4.bin",
        "tests/data/eas/faq_prod_reordered.bin",
        "tests/data/tfs/faq_warmup.bin",
    ];
    let sent = same_answers(&target, &via, &o, &files);
    // A refusal passes through as the server's status and message.
    let mut bad = o.clone();
    bad.model_name = Some("nope".into());
    let b = Bytes::from(data("tests/data/eas/faq_prod.bin"));
    let p = prepare(&tfreq::decode(&b).unwrap(), &b, &target, &bad).unwrap();
    let direct = Client::connect(target.clone(), bad.clone())
        .unwrap()
        .send(&p)
        .unwrap_err();
    let proxied = Client::connect(via.clone(), bad.clone())
        .unwrap()
        .send(&p)
        .unwrap_err();
    assert_eq!(direct, proxied);
    assert!(
        proxied.to_string().contains("Servable not found"),
        "{proxied}"
    );
    // GetModelMetadata passes through (and is not a request to record).
    let m1 = Client::connect(target, o.clone())
        .unwrap()
        .metadata()
        .unwrap();
    let m2 = Client::connect(via, o.clone()).unwrap().metadata().unwrap();
    assert_eq!(format!("{m1:?}"), format!("{m2:?}"));
    let (code, stdout, stderr) = rec.wait();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    // keys' summary: every predict counted (the refused one too: it is traffic), three
    // executor keys (faq_prod's fetch set, faq_warmup's, and the refused request's, which
    // names another model); two requests recorded, model faq's, the first model seen: a
    // warm-up file belongs to one model, and the other is named as not recorded.
    assert!(
        stdout.starts_with("5 requests in 1 file: 3 executor keys, 4 shape keys"),
        "{stdout}"
    );
    assert!(
        stdout.contains("recorded 2 requests (one per executor key)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("a model other than the first recorded")
            && stdout.contains("model \"nope\""),
        "{stdout}"
    );
    // The file is a warm-up TF Serving loads: check against the model passes.
    let check = tfreq()
        .args(["check", "--model", "tests/data/models/faq"])
        .arg(&out)
        .output()
        .unwrap();
    assert_ok(&check);
    // And it covers every key of the traffic sent.
    let mut traffic = Vec::new();
    for (i, s) in sent.iter().enumerate() {
        let p = dir.path().join(format!("sent{i}.bin"));
        std::fs::write(&p, s).unwrap();
        traffic.push(p);
    }
    let diff = tfreq()
        .args(["diff", "--format", "json"])
        .arg(&out)
        .args(&traffic)
        .output()
        .unwrap();
    assert_ok(&diff);
}

#[test]
fn record_eas_and_rest_pass_through_keep_no_token_and_stop_on_sigterm() {
    let srv = HttpServer::start(Box::new(|s: &Seen| {
        if s.target == "/v1/models/faq/metadata" {
            return (200, vec![], data("tests/data/models/faq.metadata.json"));
        }
        if s.target == "/v1/models/faq:predict" {
            let body = br#"{"outputs": {"model_version_id": "v3", "sorted_labels": [["positive"]], "sorted_probs": [[0.5]]}}"#;
            return (200, vec![("x-answer".into(), "rest".into())], body.to_vec());
        }
        let (status, mut hs, body) = eas_handler(s);
        hs.push(("x-answer".into(), "eas".into()));
        (status, hs, body)
    }));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("warmup.tfrecord");
    let rec = start_record(
        &srv.url(""),
        &out,
        &["--wire", "tfrecord", "--model-name", "faq"],
    );
    let proxy = format!("http://127.0.0.1:{}", rec.port);
    // EAS with the token, raw and signed: the same answers as direct.
    for auth in [EasAuth::Raw, EasAuth::Signed] {
        let o = opts(Some(TOKEN), auth);
        let t = Target::parse(&srv.url("/api/predict/faq"), None).unwrap();
        let v = Target::parse(&format!("{proxy}/api/predict/faq"), None).unwrap();
        same_answers(
            &t,
            &v,
            &o,
            &[
                "tests/data/eas/faq_prod.bin",
                "tests/data/eas/faq_prod_batch4.bin",
            ],
        );
    }
    // A wrong token's refusal passes through: status and body.
    let o = opts(Some("wrong"), EasAuth::Raw);
    let v = Target::parse(&format!("{proxy}/api/predict/faq"), None).unwrap();
    let e = send_file(v, o, "tests/data/eas/faq_prod.bin").unwrap_err();
    assert!(e.is_refusal(), "{e}");
    // The answer's own headers come through.
    let mut c = TcpStream::connect(("127.0.0.1", rec.port)).unwrap();
    let body = data("tests/data/eas/faq_warmup.bin");
    write!(
        c,
        "POST /api/predict/faq HTTP/1.1\r\nhost: x\r\nauthorization: {TOKEN}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    c.write_all(&body).unwrap();
    let mut answer = Vec::new();
    c.read_to_end(&mut answer).unwrap();
    let head = String::from_utf8_lossy(&answer).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("x-answer: eas"), "{head}");
    // REST: the JSON request and answer through, the dtypes from the model's metadata.
    let o = opts(None, EasAuth::Raw);
    let t = Target::parse(&srv.url("/v1/models/faq:predict"), None).unwrap();
    let v = Target::parse(&format!("{proxy}/v1/models/faq:predict"), None).unwrap();
    same_answers(&t, &v, &o, &["tests/data/eas/faq_prod.bin"]);
    // The recorder gets each request after it passed. The file is written as it goes:
    // while the proxy still runs it becomes a whole warm-up that `check` passes.
    let t0 = Instant::now();
    loop {
        let early = tfreq()
            .args(["check", "--model", "tests/data/models/faq"])
            .arg(&out)
            .output()
            .unwrap();
        if early.status.success() || t0.elapsed() > Duration::from_secs(20) {
            assert_ok(&early);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, stdout, stderr) = rec.terminate();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    // EAS: 2 x (faq_prod, batch4) + faq_warmup + the refused one (still traffic); REST 1.
    assert!(
        stdout.starts_with("7 requests in 1 file: 3 executor keys"),
        "{stdout}"
    );
    assert!(stdout.contains("recorded 3 requests"), "{stdout}");
    let file = std::fs::read(&out).unwrap();
    // Requests are recorded as messages only: no header, so no token.
    assert!(
        !file.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes()),
        "the token is in the recorded file"
    );
    let check = tfreq()
        .args(["check", "--model", "tests/data/models/faq"])
        .arg(&out)
        .output()
        .unwrap();
    assert_ok(&check);
    // Every server-side request came through unchanged, token header included.
    let seen = srv.seen();
    assert!(
        seen.iter()
            .any(|s| s.headers.get("authorization").map(String::as_str) == Some(TOKEN))
    );
}

#[test]
fn record_scrub_replaces_values_and_max_size_passes_big_requests_unrecorded() {
    let srv = eas_server();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("warm_up.bin");
    let rec = start_record(
        &srv.url(""),
        &out,
        &[
            "--scrub",
            "--max-size",
            "180",
            "--max-requests",
            "2",
            "--format",
            "json",
        ],
    );
    let proxy = format!("http://127.0.0.1:{}/api/predict/faq", rec.port);
    let o = opts(Some(TOKEN), EasAuth::Raw);
    let t = Target::parse(&srv.url("/api/predict/faq"), None).unwrap();
    let v = Target::parse(&proxy, None).unwrap();
    // faq_prod is small; faq_prod_batch4 is over 180 bytes.
    assert!(data("tests/data/eas/faq_prod.bin").len() <= 180);
    assert!(data("tests/data/eas/faq_prod_batch4.bin").len() > 180);
    same_answers(
        &t,
        &v,
        &o,
        &[
            "tests/data/eas/faq_prod.bin",
            "tests/data/eas/faq_prod_batch4.bin",
        ],
    );
    let (code, stdout, stderr) = rec.wait();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    // --format json: keys' summary of the traffic (the recorded request; the larger one
    // was not read), which `keys merge` takes; what was recorded goes to stderr.
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["requests"], 1, "{stdout}");
    assert!(
        stderr.contains("not recorded: 1 request, larger than the size limit"),
        "{stderr}"
    );
    let merged = dir.path().join("summary.json");
    std::fs::write(&merged, &stdout).unwrap();
    let m = tfreq()
        .args(["keys", "merge"])
        .arg(&merged)
        .output()
        .unwrap();
    assert_ok(&m);
    // A bare EAS warm-up (all traffic EAS), its values scrubbed: what `tfreq scrub` writes.
    let scrubbed = tfreq()
        .args(["scrub", "tests/data/eas/faq_prod.bin", "-o", "-"])
        .output()
        .unwrap();
    assert_ok(&scrubbed);
    assert_eq!(std::fs::read(&out).unwrap(), scrubbed.stdout);
}

#[test]
fn record_warns_off_loopback_and_stops_after_duration() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.tfrecord");
    let t0 = Instant::now();
    let o = tfreq()
        .args([
            "record",
            "--listen",
            "0.0.0.0:0",
            "--to",
            "http://127.0.0.1:1",
        ])
        .args(["--duration", "300ms", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning: listening on 0.0.0.0:"), "{err}");
    assert!(err.contains("not a loopback address"), "{err}");
    // Nothing came: nothing recorded, no file, exit 1.
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("recorded nothing"));
    assert!(!out.exists());
    // A loopback address: no warning.
    let o = tfreq()
        .args([
            "record",
            "--listen",
            "127.0.0.1:0",
            "--to",
            "http://127.0.0.1:1",
        ])
        .args(["--duration", "100ms", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
    // A URL it cannot forward to is refused before listening.
    let o = tfreq()
        .args([
            "record",
            "--listen",
            "127.0.0.1:0",
            "--to",
            "ftp://127.0.0.1:1",
        ])
        .args(["--duration", "100ms", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("unknown scheme") && !err.contains("listening"),
        "{err}"
    );
}

#[test]
fn record_grpc_large_request_passes_through_whole() {
    let (port, seen) = grpc_server(Duration::ZERO, Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.tfrecord");
    let rec = start_record(
        &format!("grpc://127.0.0.1:{port}"),
        &out,
        &["--max-requests", "1"],
    );
    // 1 MiB of floats: far more than one HTTP/2 frame or one write.
    let mut req = tfreq::TFRequest::new("serving_default");
    req.add_feed("x", &[1, 262144], tfreq::DType::Float, vec![0.5f32; 262144])
        .unwrap();
    let body = Bytes::from(req.to_tf_serving_bytes("faq").unwrap());
    let via = Target::parse(&format!("grpc://127.0.0.1:{}", rec.port), None).unwrap();
    let msg = tfreq::decode(&body).unwrap();
    let o = opts(None, EasAuth::Raw);
    let p = prepare(&msg, &body, &via, &o).unwrap();
    let ex = Client::connect(via, o).unwrap().send(&p).unwrap();
    assert_eq!(ex.raw, Bytes::from(data("tests/data/tfs/response.bin")));
    // The server got the request's bytes as sent.
    assert_eq!(seen.lock().unwrap().last().unwrap().1, p.body);
    let (code, stdout, stderr) = rec.wait();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("recorded 1 request"), "{stdout}");
}

/// A codec that passes gRPC messages through as bytes, for the in-process test server.
#[derive(Debug, Clone, Copy, Default)]
struct RawCodec;

impl tonic::codec::Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;
    fn encoder(&mut self) -> RawCodec {
        RawCodec
    }
    fn decoder(&mut self) -> RawCodec {
        RawCodec
    }
}

impl tonic::codec::Encoder for RawCodec {
    type Item = Bytes;
    type Error = tonic::Status;
    fn encode(
        &mut self,
        item: Bytes,
        dst: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), tonic::Status> {
        use bytes::BufMut;
        dst.put(item);
        Ok(())
    }
}

impl tonic::codec::Decoder for RawCodec {
    type Item = Bytes;
    type Error = tonic::Status;
    fn decode(
        &mut self,
        src: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<Bytes>, tonic::Status> {
        use bytes::Buf;
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

/// A cleartext HTTP/2 connection is relayed byte for byte: what is not HTTP/2 after the
/// preface still reaches the service unchanged, its answer comes back unchanged, and the
/// summary says the connection's requests were not read.
#[test]
fn record_relays_unreadable_http2_unchanged_and_names_it_unread() {
    use std::io::Write;
    let up = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let up_port = up.local_addr().unwrap().port();
    let service = std::thread::spawn(move || {
        let (mut s, _) = up.accept().unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        s.write_all(b"the service's answer").unwrap();
        got
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.tfrecord");
    let rec = start_record(&format!("grpc://127.0.0.1:{up_port}"), &out, &[]);
    // The preface, then a DATA frame on stream 0 where SETTINGS must come first.
    let mut sent = crate::hostile_grpc::PREFACE.to_vec();
    sent.extend([0, 0, 3, 0, 0, 0, 0, 0, 0, b'a', b'b', b'c']);
    sent.extend((0..3000u32).map(|i| (i * 7919 % 251) as u8));
    let mut c = std::net::TcpStream::connect(("127.0.0.1", rec.port)).unwrap();
    c.write_all(&sent).unwrap();
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let mut back = Vec::new();
    c.read_to_end(&mut back).unwrap();
    assert_eq!(service.join().unwrap(), sent);
    assert_eq!(back, b"the service's answer");
    // The proxy noted the unreadable stream as the bytes passed; on SIGTERM the recorder
    // empties its queue before it reports (`run_recorder`).
    let (code, stdout, stderr) = rec.terminate();
    assert_eq!(code, Some(1), "nothing recorded\n{stdout}\n{stderr}");
    let all = format!("{stdout}\n{stderr}");
    assert!(
        all.contains("a connection's requests not read") && all.contains("could not be read"),
        "{all}"
    );
    assert!(!out.exists());
}

/// `check --model URL` with a REST URL (or `--model-name`) knows its model's name before
/// it reads a request: it asks the service once, then checks each request as it is read
/// and drops it, as with a model file. The requests were held until the end: on this
/// 80 MB log of 16 KiB requests it peaked past 80 MiB.
#[test]
fn check_against_a_live_model_named_up_front_holds_one_request_at_a_time() {
    let srv = HttpServer::start(Box::new(|s: &Seen| {
        if s.target == "/v1/models/faq/metadata" {
            return (200, vec![], data("tests/data/models/faq.metadata.json"));
        }
        (404, vec![], b"{\"error\": \"not found\"}".to_vec())
    }));
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.tfrecord");
    log_of_16k_requests(&log, 5_000, "faq");
    let model = srv.url("/v1/models/faq");
    check_a_log_in_bounded_memory(&log, &model);
    let asked = srv
        .seen()
        .iter()
        .filter(|s| s.target == "/v1/models/faq/metadata")
        .count();
    assert_eq!(asked, 2, "one metadata request a run");
}

/// A log of `n` predict requests of 4,096 floats (16 KiB) feeding `x`, which the faq
/// model does not take, for `model` (`""`: no model name).
fn log_of_16k_requests(path: &std::path::Path, n: usize, model: &str) {
    let mut req = tfreq::TFRequest::new("serving_default");
    let values: Vec<f32> = (0..4096).map(|i| i as f32).collect();
    req.add_feed("x", &[4096], tfreq::DType::Float, values)
        .unwrap();
    req.add_fetch("y");
    let predict = tfreq::formats::encode_predict_log(&req.to_tf_serving_bytes(model).unwrap());
    let mut one = Vec::new();
    tfreq::formats::write_record(&mut one, &predict);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for _ in 0..n {
        f.write_all(&one).unwrap();
    }
    f.flush().unwrap();
}

/// `check LOG --model MODEL` and `check - --model MODEL -f json < LOG`, for a log of
/// [`log_of_16k_requests`] (which feed `x`, which the faq model does not take: exit 1),
/// each in under 48 MiB.
fn check_a_log_in_bounded_memory(log: &std::path::Path, model: &str) {
    let l = log.to_str().unwrap();
    for (args, stdin) in [
        (vec!["check", l, "--model", model], false),
        (vec!["check", "-", "--model", model, "-f", "json"], true),
    ] {
        let (code, kib) = crate::common::own_peak_kib(&args, stdin.then_some(log));
        assert_eq!(code, 1, "tfreq {args:?}");
        assert!(
            kib < 48 << 10,
            "tfreq {args:?}: peak RSS {kib} KiB for a log of {} KiB",
            std::fs::metadata(log).unwrap().len() >> 10
        );
    }
}

/// The model names `GetModelMetadata` was asked for, in order.
fn metadata_asked(seen: &Calls) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|(path, _)| path.ends_with("/GetModelMetadata"))
        .map(|(_, body)| {
            tfs::GetModelMetadataRequest::decode(body.clone())
                .unwrap()
                .model_spec
                .unwrap_or_default()
                .name
        })
        .collect()
}

/// `check --model grpc://` without `--model-name` asks the service for the first
/// request's model, as soon as that request is read, and then checks each request as it
/// is read: an 80 MB log, from a file and from standard input, in under 48 MiB. The
/// requests before the first named one are held and checked too; past 16 MiB of
/// requests that name no model, it asks for --model-name. (When every request was held
/// until the end, this log peaked past 100 MiB.)
#[test]
fn check_against_a_live_grpc_model_asks_for_the_first_requests_model_and_streams() {
    let (port, seen) = grpc_server(Duration::ZERO, Duration::ZERO);
    let model = format!("grpc://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.tfrecord");
    log_of_16k_requests(&log, 5_000, "faq");
    check_a_log_in_bounded_memory(&log, &model);
    assert_eq!(
        metadata_asked(&seen),
        ["faq", "faq"],
        "one metadata call a run"
    );

    // Unnamed requests first, a named one after, then another file: every request is
    // in the report, in order, and the service is asked for the named one's model.
    let unnamed = dir.path().join("unnamed.tfrecord");
    log_of_16k_requests(&unnamed, 3, "");
    let named = dir.path().join("named.tfrecord");
    log_of_16k_requests(&named, 2, "faq");
    let (u, n) = (unnamed.to_str().unwrap(), named.to_str().unwrap());
    let (code, v) = crate::common::json(&["check", u, n, u, "--model", &model]);
    assert_eq!(code, 1, "{v}");
    let labels: Vec<&str> = v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 8, "{labels:?}");
    assert!(labels[0].starts_with(u) && labels[3].starts_with(n) && labels[5].starts_with(u));
    assert!(
        v["requests"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["findings"].as_array().is_some_and(|f| !f.is_empty())),
        "{v}"
    );
    assert_eq!(metadata_asked(&seen), ["faq", "faq", "faq"]);

    // A file cut part-way, after its first named request asked the service: what it
    // gave, held or checked, is taken back; the next file's requests stay.
    let cut = dir.path().join("cut.tfrecord");
    let mut bytes = std::fs::read(&unnamed).unwrap();
    bytes.extend(std::fs::read(&named).unwrap());
    bytes.extend(&std::fs::read(&named).unwrap()[..100]);
    std::fs::write(&cut, bytes).unwrap();
    let c = cut.to_str().unwrap();
    let (code, v) = crate::common::json(&["check", c, n, "--model", &model]);
    assert_eq!(code, 2, "{v}");
    let labels: Vec<&str> = v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(labels.iter().all(|l| l.starts_with(n)), "{labels:?}");
    assert_eq!(v["unreadable"][0]["file"], c, "{v}");
    assert_eq!(metadata_asked(&seen).len(), 4);

    // Requests that name no model: at most 16 MiB of them are held.
    let many_unnamed = dir.path().join("many_unnamed.tfrecord");
    log_of_16k_requests(&many_unnamed, 2_000, "");
    let args = ["check", many_unnamed.to_str().unwrap(), "--model", &model];
    let (code, kib) = crate::common::own_peak_kib(&args, None);
    assert_eq!(code, 2, "tfreq {args:?}");
    assert!(kib < 64 << 10, "tfreq {args:?}: peak RSS {kib} KiB");
    let r = crate::common::run3(&args);
    assert!(
        r.2.contains("name no model") && r.2.contains("--model-name"),
        "{}",
        r.2
    );
    assert_eq!(metadata_asked(&seen).len(), 4, "no name, no call");
}
