//! `tfreq send` and `tfreq replay` against the TensorFlow-backed server of tests/live/
//! (tests/live/README.md). Ignored by a plain `cargo test`: tests/live/run.sh starts the
//! server and runs them with `--include-ignored`, the ready file's path in
//! `TFREQ_LIVE_READY`.
#![cfg(feature = "net")]

use std::process::Output;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The tests run one at a time: the replay test reloads the faq model (a fresh session)
/// and measures its cold start, which a concurrent call of another test would spoil.
static SERIAL: Mutex<()> = Mutex::new(());

struct Live {
    http: u64,
    grpc: u64,
    token: String,
    /// The TLS ports and the CA's PEM file, when the server runs with `--tls`.
    tls: Option<(u64, u64, String)>,
    _serial: MutexGuard<'static, ()>,
}

fn live() -> Live {
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let p = std::env::var("TFREQ_LIVE_READY").expect(
        "TFREQ_LIVE_READY names the ready file of tests/live/server.py: run tests/live/run.sh",
    );
    let ready: Value =
        serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}")))
            .unwrap_or_else(|e| panic!("{p}: {e}"));
    Live {
        http: ready["http"].as_u64().expect("ready file: http"),
        grpc: ready["grpc"].as_u64().expect("ready file: grpc"),
        token: ready["token"].as_str().expect("ready file: token").into(),
        tls: match (
            ready["https"].as_u64(),
            ready["grpcs"].as_u64(),
            ready["ca_cert"].as_str(),
        ) {
            (Some(https), Some(grpcs), Some(ca)) => Some((https, grpcs, ca.to_string())),
            _ => None,
        },
        _serial: serial,
    }
}

impl Live {
    fn eas(&self, model: &str) -> String {
        format!("http://127.0.0.1:{}/api/predict/{model}", self.http)
    }
    fn grpc(&self) -> String {
        format!("grpc://127.0.0.1:{}", self.grpc)
    }
    fn rest(&self, model: &str) -> String {
        format!("http://127.0.0.1:{}/v1/models/{model}", self.http)
    }
    /// Runs the built tfreq with the server's token in TFREQ_TOKEN.
    fn tfreq(&self, args: &[&str]) -> Output {
        crate::common::tfreq()
            .args(args)
            .args(["--timeout", "60"])
            .env("TFREQ_TOKEN", &self.token)
            .output()
            .unwrap()
    }
    /// `POST /_live/reload/NAME`: a new session, no executor built yet.
    fn reload(&self, model: &str) {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.http as u16)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        write!(
            s,
            "POST /_live/reload/{model} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200"),
            "{answer}"
        );
    }
}

use crate::common::output_text as text;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The FAQ production request over EAS (raw token and the SDK's signature), gRPC and
/// REST, and the EAS warm-up page's seed request over EAS: each is answered, with its
/// outputs named.
#[test]
#[ignore]
fn send_over_eas_grpc_and_rest() {
    let l = live();
    let prod = "tests/data/eas/faq_prod.bin";
    let (eas, grpc, rest) = (l.eas("faq"), l.grpc(), l.rest("faq"));
    for args in [
        vec!["send", prod, "--to", &eas],
        vec!["send", prod, "--to", &eas, "--auth", "signed"],
        vec!["send", prod, "--to", &grpc, "--model-name", "faq"],
        vec!["send", prod, "--to", &rest],
    ] {
        let o = l.tfreq(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}\n{}", text(&o));
        let out = stdout(&o);
        for name in ["sorted_labels", "sorted_probs", "model_version_id"] {
            assert!(
                out.contains(name),
                "{args:?}: {name} not in the answer\n{out}"
            );
        }
    }
    let seed = l.eas("seed");
    for auth in ["raw", "signed"] {
        let args = [
            "send",
            "tests/data/eas/seed_warm_up.bin",
            "--to",
            &seed,
            "--auth",
            auth,
        ];
        let o = l.tfreq(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}\n{}", text(&o));
        let out = stdout(&o);
        for name in ["sorted_labels", "sorted_probs"] {
            assert!(
                out.contains(name),
                "{args:?}: {name} not in the answer\n{out}"
            );
        }
    }
}

/// A wrong token is refused (exit 1, the server's message shown); a port nothing
/// listens on is exit 2 at once, not a hang.
#[test]
#[ignore]
fn wrong_token_and_closed_port() {
    let l = live();
    let eas = l.eas("faq");
    for (auth, why) in [("raw", "invalid token"), ("signed", "signature mismatch")] {
        let o = l.tfreq(&[
            "send",
            "tests/data/eas/faq_prod.bin",
            "--to",
            &eas,
            "--token",
            "wrong",
            "--auth",
            auth,
        ]);
        let all = text(&o);
        assert_eq!(o.status.code(), Some(1), "{auth}: {all}");
        assert!(
            all.contains("401") && all.contains("Unauthorized: ") && all.contains(why),
            "{auth}: {all}"
        );
    }
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    }; // dropped: nothing listens on it any more
    for to in [
        format!("http://127.0.0.1:{port}/api/predict/faq"),
        format!("grpc://127.0.0.1:{port}"),
    ] {
        let t0 = Instant::now();
        let mut args = vec!["send", "tests/data/eas/faq_prod.bin", "--to", &to];
        if to.starts_with("grpc:") {
            args.extend(["--model-name", "faq"]);
        }
        let o = l.tfreq(&args);
        let took = t0.elapsed();
        let all = text(&o);
        assert_eq!(o.status.code(), Some(2), "{to}: {all}");
        assert!(
            all.contains(&port.to_string()),
            "{to}: the message names the service\n{all}"
        );
        assert!(took < Duration::from_secs(10), "{to}: took {took:?}");
    }
}

/// After a reload (a fresh session, as a redeployment), `replay faq_warmup faq_prod
/// faq_warmup` measures faq_prod (which adds model_version_id: a new executor) cold and
/// the warm-up's own request warm; `replay faq_prod faq_prod_reordered` (the same feed and
/// fetch names in another order: the same executor) measures it warm. Five calls per
/// production request: on a busy machine a single later call can be as slow as a cold one.
#[test]
#[ignore]
fn replay_measures_the_faq_cold_start() {
    let l = live();
    let (eas, grpc) = (l.eas("faq"), l.grpc());
    for (to, extra) in [(&eas, vec![]), (&grpc, vec!["--model-name", "faq"])] {
        l.reload("faq");
        let mut args = vec![
            "replay",
            "tests/data/eas/faq_warmup.bin",
            "tests/data/eas/faq_prod.bin",
            "tests/data/eas/faq_warmup.bin",
            "--prod-count",
            "5",
            "--format",
            "json",
            "--to",
            to,
        ];
        args.extend(&extra);
        let o = l.tfreq(&args);
        assert_eq!(o.status.code(), Some(1), "{to}: {}", text(&o));
        let v: Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
        let p = &v["production"];
        assert_eq!(
            p[0]["cold"], true,
            "{to}: faq_prod not measured cold: {v:#}"
        );
        assert_eq!(p[0]["static_verdict"], "new-executor", "{v:#}");
        assert!(v.to_string().contains("MEASURED_COLD"), "{v:#}");
        assert_eq!(
            p[1]["cold"], false,
            "{to}: the warm-up's request measured cold: {v:#}"
        );
        assert_eq!(v["cold"], 1, "{v:#}");

        l.reload("faq");
        let mut args = vec![
            "replay",
            "tests/data/eas/faq_prod.bin",
            "tests/data/eas/faq_prod_reordered.bin",
            "--prod-count",
            "5",
            "--format",
            "json",
            "--to",
            to,
        ];
        args.extend(&extra);
        let o = l.tfreq(&args);
        assert_eq!(o.status.code(), Some(0), "{to}: {}", text(&o));
        let v: Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
        assert_eq!(v["production"][0]["cold"], false, "{to}: {v:#}");
        assert!(v.to_string().contains("MEASURED_WARM"), "{v:#}");
        assert_eq!(v["cold"], 0, "{v:#}");
    }
}

/// Adds `by` to the first number under the key `name` anywhere in a JSON document.
fn shift_first_number(v: &mut Value, name: &str, by: f64) -> bool {
    fn first_number(v: &mut Value, by: f64) -> bool {
        match v {
            Value::Number(n) => {
                *v = serde_json::json!(n.as_f64().unwrap() + by);
                true
            }
            Value::Array(a) => a.iter_mut().any(|x| first_number(x, by)),
            _ => false,
        }
    }
    match v {
        Value::Object(m) => m.iter_mut().any(|(k, x)| {
            if k == name {
                first_number(x, by)
            } else {
                shift_first_number(x, name, by)
            }
        }),
        Value::Array(a) => a.iter_mut().any(|x| shift_first_number(x, name, by)),
        _ => false,
    }
}

/// `send --save DIR` then `send --expect DIR` passes, over EAS (binary response) and REST
/// (JSON); a changed expected value fails, naming the output.
#[test]
#[ignore]
fn save_then_expect() {
    let l = live();
    let dir = tempfile::tempdir().unwrap();
    let prod = "tests/data/eas/faq_prod.bin";
    for (to, sub) in [(l.eas("faq"), "eas"), (l.rest("faq"), "rest")] {
        let d = dir.path().join(sub);
        let ds = d.to_str().unwrap();
        let o = l.tfreq(&["send", prod, "--to", &to, "--save", ds]);
        assert_eq!(o.status.code(), Some(0), "{to}: {}", text(&o));
        let o = l.tfreq(&["send", prod, "--to", &to, "--expect", ds]);
        assert_eq!(o.status.code(), Some(0), "{to}: {}", text(&o));
        assert!(stdout(&o).contains("the answer matches"), "{}", text(&o));
    }
    // The REST answer is JSON: change one value of sorted_probs.
    let saved = dir.path().join("rest/faq_prod.response.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert!(shift_first_number(&mut v, "sorted_probs", 0.01), "{v}");
    let changed = dir.path().join("changed");
    std::fs::create_dir(&changed).unwrap();
    std::fs::write(changed.join("faq_prod.response.json"), v.to_string()).unwrap();
    let rest = l.rest("faq");
    let o = l.tfreq(&[
        "send",
        prod,
        "--to",
        &rest,
        "--expect",
        changed.to_str().unwrap(),
    ]);
    let all = text(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert!(
        all.contains("sorted_probs") && all.contains("OUTPUT_VALUES_DIFFER"),
        "{all}"
    );
    assert!(!all.contains("the answer matches"), "{all}");
}

/// `send --async` puts the request on the faq model's queue service and reads the
/// model's answer from the sink: the same answer as the sync call (`--expect` of the
/// saved sync response matches, and the bytes are equal). A wrong token is the
/// server's 401 (exit 1).
#[test]
#[ignore]
fn send_async_through_the_queue() {
    let l = live();
    let dir = tempfile::tempdir().unwrap();
    let (sync_dir, async_dir) = (dir.path().join("sync"), dir.path().join("async"));
    let prod = "tests/data/eas/faq_prod.bin";
    let eas = l.eas("faq");
    let queue = l.eas("faq_async");
    let o = l.tfreq(&[
        "send",
        prod,
        "--to",
        &eas,
        "--save",
        sync_dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = l.tfreq(&[
        "send",
        prod,
        "--async",
        "--tag",
        "user=live test",
        "--to",
        &queue,
        "--expect",
        sync_dir.to_str().unwrap(),
        "--save",
        async_dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = stdout(&o);
    assert!(out.contains("the answer matches"), "{}", text(&o));
    for name in ["sorted_labels", "sorted_probs", "model_version_id"] {
        assert!(out.contains(name), "{name} not in the answer\n{out}");
    }
    assert_eq!(
        std::fs::read(async_dir.join("faq_prod.response.bin")).unwrap(),
        std::fs::read(sync_dir.join("faq_prod.response.bin")).unwrap(),
        "the queue's answer differs from the sync call's"
    );

    let o = l.tfreq(&["send", prod, "--async", "--to", &queue, "--token", "wrong"]);
    let all = text(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert!(
        all.contains("HTTP 401") && all.contains("Unauthorized: invalid token"),
        "{all}"
    );
}

/// A request the model refuses (a float64 feed where the signature has float32:
/// TensorFlow's own error) fails on the queue too: the worker's sink item carries
/// `lastCode` 400 and `lastMessage`, and `send --async` shows them, exit 1, with the
/// message the sync call gets.
#[test]
#[ignore]
fn send_async_shows_the_workers_failure() {
    let l = live();
    let bad = "tests/data/eas/faq_prod_dtype_changed.bin";
    let o = l.tfreq(&["send", bad, "--to", &l.eas("faq")]);
    let sync = text(&o);
    assert_eq!(o.status.code(), Some(1), "{sync}");
    let err = String::from_utf8_lossy(&o.stderr);
    let message = err
        .split_once("HTTP 400 Bad Request: ")
        .unwrap_or_else(|| panic!("no HTTP 400 in the sync refusal: {sync}"))
        .1
        .trim()
        .to_string();
    assert!(!message.is_empty(), "{sync}");

    let o = l.tfreq(&["send", bad, "--async", "--to", &l.eas("faq_async")]);
    let all = text(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert!(
        all.contains("the worker answered 400 Bad Request") && all.contains(&message),
        "the sync call said {message:?}\n{all}"
    );
    assert!(!all.contains("unreadable response"), "{all}");
}

/// The findings of `check --format json` with the `model` field (the model's path or
/// URL) removed.
/// Not JSON (an error before any report) reads as null.
fn check_findings(l: &Live, file: &str, model: &str, extra: &[&str]) -> (Option<i32>, Value) {
    let mut args = vec!["check", file, "--model", model, "--format", "json"];
    args.extend(extra);
    let o = crate::common::tfreq()
        .args(&args)
        .env("TFREQ_TOKEN", &l.token)
        .output()
        .unwrap();
    let mut v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    eprintln!("{args:?}: {}", text(&o));
    if let Some(m) = v.as_object_mut() {
        m.remove("model");
    }
    (o.status.code(), v)
}

/// `check --model grpc://…` (GetModelMetadata) and `--model http://…/v1/models/NAME`
/// (the REST metadata) against the served model give the findings `check` gives against
/// the SavedModel directory the server loaded: for requests that pass and for ones that
/// fail (a changed dtype, a missing feed).
#[test]
#[ignore]
fn check_model_url_agrees_with_the_saved_model() {
    let l = live();
    let cases = [
        ("faq", "tests/data/tfs/faq_prod.bin", 0),
        ("faq", "tests/data/eas/faq_prod.bin", 0),
        ("faq", "tests/data/tfs/faq_prod_dtype_changed.bin", 1),
        ("faq", "tests/data/tfs/faq_prod_missing_feed.bin", 1),
        ("seed", "tests/data/eas/seed_warm_up.bin", 0),
    ];
    for (model, file, want) in cases {
        let dir = format!("tests/data/models/{model}");
        let (code, offline) = check_findings(&l, file, &dir, &[]);
        assert_eq!(code, Some(want), "{file} against {dir}: {offline:#}");
        assert!(offline["requests"].is_array(), "{offline:#}");
        for (url, extra) in [
            (l.grpc(), vec!["--model-name", model]),
            (l.rest(model), vec![]),
        ] {
            let (c, live) = check_findings(&l, file, &url, &extra);
            assert_eq!(c, code, "{file} against {url}: {live:#}");
            assert_eq!(live, offline, "{file}: {url} and {dir} differ");
        }
    }
}

/// Over TLS (the server's `--tls`: a test CA made at start-up): send over https (EAS,
/// REST, the queue) and grpcs, replay over https, and check --model grpcs:// and
/// https://…/v1/models/faq, trusting the CA with --cacert; without it, or trusting the
/// server's own (non-CA) certificate instead, the certificate is not trusted: exit 2 at
/// once, the message saying so and naming --cacert. A --cacert file holding no
/// certificate is exit 2 too.
#[test]
#[ignore]
fn tls_with_a_private_ca() {
    let l = live();
    let Some((https, grpcs, ca)) = l.tls.clone() else {
        panic!("the server runs without --tls (tests/live/run.sh passes it)");
    };
    let prod = "tests/data/eas/faq_prod.bin";
    let eas = format!("https://127.0.0.1:{https}/api/predict/faq");
    let queue = format!("https://127.0.0.1:{https}/api/predict/faq_async");
    let rest = format!("https://127.0.0.1:{https}/v1/models/faq");
    let grpc = format!("grpcs://127.0.0.1:{grpcs}");
    // The server's own certificate is no CA: trusting it alone trusts nothing it sends.
    let not_the_ca = std::path::Path::new(&ca).with_file_name("server.pem");
    let not_the_ca = not_the_ca.to_str().unwrap();
    let tries: [(Vec<&str>, &str); 6] = [
        (vec!["send", prod, "--to", &eas], "sorted_probs"),
        (
            vec!["send", prod, "--to", &eas, "--auth", "signed"],
            "sorted_probs",
        ),
        (vec!["send", prod, "--to", &rest], "sorted_probs"),
        (
            vec!["send", prod, "--to", &grpc, "--model-name", "faq"],
            "sorted_probs",
        ),
        (
            vec!["send", prod, "--async", "--to", &queue],
            "sorted_probs",
        ),
        (
            vec![
                "replay",
                "tests/data/eas/faq_warmup.bin",
                "--count",
                "2",
                "--to",
                &eas,
            ],
            "faq_warmup",
        ),
    ];
    for (args, shown) in &tries {
        let mut with = args.clone();
        with.extend(["--cacert", &ca]);
        let o = l.tfreq(&with);
        assert_eq!(o.status.code(), Some(0), "{with:?}\n{}", text(&o));
        assert!(stdout(&o).contains(shown), "{with:?}\n{}", text(&o));

        for cacert in [None, Some(not_the_ca)] {
            let mut args = args.clone();
            args.extend(cacert.map(|c| ["--cacert", c]).into_iter().flatten());
            let t0 = Instant::now();
            let o = l.tfreq(&args);
            let all = text(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}\n{all}");
            assert!(
                all.contains("certificate is not trusted") && all.contains("--cacert"),
                "{args:?}\n{all}"
            );
            assert!(t0.elapsed() < Duration::from_secs(10), "{args:?}: {all}");
        }
    }
    let (_, offline) = check_findings(
        &l,
        "tests/data/tfs/faq_prod_dtype_changed.bin",
        "tests/data/models/faq",
        &[],
    );
    let rest_model = format!("https://127.0.0.1:{https}/v1/models/faq");
    for (model, extra) in [(&grpc, vec!["--model-name", "faq"]), (&rest_model, vec![])] {
        let mut with = extra.clone();
        with.extend(["--cacert", &ca]);
        let (code, live) = check_findings(
            &l,
            "tests/data/tfs/faq_prod_dtype_changed.bin",
            model,
            &with,
        );
        assert_eq!((code, &live), (Some(1), &offline), "{model}");
        let (code, _) = check_findings(&l, "tests/data/tfs/faq_prod.bin", model, &extra);
        assert_eq!(code, Some(2), "{model} without --cacert");
    }

    let o = l.tfreq(&["send", prod, "--to", &eas, "--cacert", "Cargo.toml"]);
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(
        all.contains("--cacert Cargo.toml") && all.contains("no certificate"),
        "{all}"
    );
}

/// `load` over EAS, gRPC and REST, and `send --concurrency` with the queue: every call
/// answered, none failed, the first call of the key apart from the rest.
#[test]
#[ignore]
fn load_and_concurrent_send_over_every_protocol() {
    let l = live();
    let prod = "tests/data/eas/faq_prod.bin";
    let (eas, grpc, rest) = (l.eas("faq"), l.grpc(), l.rest("faq"));
    for to in [&eas, &grpc, &rest] {
        let o = l.tfreq(&[
            "load",
            prod,
            "--to",
            to,
            "--model-name",
            "faq",
            "-n",
            "40",
            "-c",
            "4",
            "--rate",
            "200",
            "-f",
            "json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{to}\n{}", text(&o));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["answers"], 40, "{r}");
        assert_eq!(r["errors_total"], 0, "{r}");
        assert_eq!(r["first_calls"].as_array().unwrap().len(), 1, "{r}");
        assert_eq!(r["latency_ms"]["count"], 39, "{r}");
    }
    let queue = l.eas("faq_async");
    let o = l.tfreq(&[
        "send", prod, prod, prod, "--async", "-c", "3", "--to", &queue,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        stdout(&o).matches("sorted_probs").count(),
        3,
        "{}",
        text(&o)
    );
}

/// After a reload of the xla model (a new session: an empty XLA cache), `replay` of
/// `warmup` and then tests/data/xla/prod.tfrecord (five calls each, cold past 100 ms):
/// the exit code and the JSON report.
fn replay_xla(l: &Live, warmup: &str) -> (Option<i32>, Value) {
    l.reload("xla");
    let o = l.tfreq(&[
        "replay",
        warmup,
        "tests/data/xla/prod.tfrecord",
        "--prod-count",
        "5",
        "--cold-ms",
        "100",
        "--format",
        "json",
        "--to",
        &l.grpc(),
    ]);
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    (o.status.code(), v)
}

/// Batch sizes that compile anew, measured: the xla model (tests/data/gen/make_xla_model.py; its serving
/// function is `tf.function(jit_compile=True)`, which XLA compiles anew for each input
/// shape, ~250 ms here against ~1 ms for a compiled shape: tests/data/xla/compile_times.json)
/// and its production log at batch sizes 1, 4 and 8 (already the padded sizes of a
/// batching server with allowed_batch_sizes 1,4,8; this server does no batching, so the
/// request as sent is the batch that runs). After a reload (a new session: an empty XLA
/// cache), a warm-up of size 1 only leaves the first calls at 4 and 8 cold (MEASURED_COLD)
/// although `diff` finds the executor warmed (same-executor) and, with
/// `--allowed-batch-sizes 1,4,8`, names the two sizes (BATCH_SIZE_NOT_WARMED). The warm-up
/// `warmup --allowed-batch-sizes 1,4,8` writes from the production log pays the three
/// compiles itself (its own first calls are cold) and leaves no production call cold.
/// `--cold-ms 100`: a compile takes well over that even on an idle machine, a loaded
/// 2-core machine's hiccups on a warm call rarely reach it; the "no cold call" replay is
/// tried twice (each time after a reload) so that one hiccup does not fail the test, while
/// a warm-up that does not warm fails both.
#[test]
#[ignore]
fn replay_measures_xla_compiles_per_batch_size() {
    let l = live();
    let prod = "tests/data/xla/prod.tfrecord";
    let replay = |warmup: &str| replay_xla(&l, warmup);
    let firsts = |v: &Value, part: &str| -> Vec<(bool, f64)> {
        v[part]
            .as_array()
            .unwrap_or_else(|| panic!("no {part}: {v:#}"))
            .iter()
            .map(|r| {
                (
                    r["cold"].as_bool().unwrap_or_else(|| panic!("{r:#}")),
                    r["first_ms"].as_f64().unwrap_or_else(|| panic!("{r:#}")),
                )
            })
            .collect()
    };

    // Before: the warm-up sends batch size 1 only.
    let (code, v) = replay("tests/data/xla/warmup_1.tfrecord");
    let before = firsts(&v, "production");
    eprintln!("xla, warm-up of size 1: production first calls (cold, ms) at 1, 4, 8: {before:?}");
    assert_eq!(code, Some(1), "{v:#}");
    assert_eq!(
        before.iter().map(|c| c.0).collect::<Vec<_>>(),
        [false, true, true],
        "sizes 1, 4, 8: {v:#}"
    );
    assert_eq!(v["cold"], 2, "{v:#}");
    for r in v["production"].as_array().unwrap() {
        assert_eq!(r["static_verdict"], "same-executor", "{v:#}");
    }
    let s = v.to_string();
    assert!(
        s.contains("MEASURED_COLD") && s.contains("compile for a new input shape"),
        "{v:#}"
    );

    // The static report agrees: the executor is warmed, sizes 4 and 8 are not.
    let o = crate::common::tfreq()
        .args([
            "diff",
            "tests/data/xla/warmup_1.tfrecord",
            prod,
            "--allowed-batch-sizes",
            "1,4,8",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let d: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    let not_warmed: Vec<&str> = d["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["code"] == "BATCH_SIZE_NOT_WARMED")
                .map_or("", |f| f["right"].as_str().unwrap())
        })
        .collect();
    assert_eq!(not_warmed, ["", "4", "8"], "{d:#}");

    // After: the warm-up tfreq builds from production for allowed sizes 1, 4 and 8.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("warmup_148.tfrecord");
    let out_s = out.to_str().unwrap();
    let o = crate::common::tfreq()
        .args([
            "warmup",
            prod,
            "--allowed-batch-sizes",
            "1,4,8",
            "-o",
            out_s,
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let mut tries = Vec::new();
    for _ in 0..2 {
        let (code, v) = replay(out_s);
        let warm = firsts(&v, "warmup");
        let after = firsts(&v, "production");
        eprintln!(
            "xla, warm-up of sizes 1, 4, 8: warm-up first calls {warm:?}; production first calls at 1, 4, 8: {after:?}"
        );
        // The reload emptied the compilation cache: the warm-up itself paid each compile.
        assert_eq!(
            warm.iter().map(|c| c.0).collect::<Vec<_>>(),
            [true, true, true],
            "the warm-up's own first calls (sizes 1, 4, 8) were not cold: {v:#}"
        );
        if code == Some(0) && v["cold"] == 0 && after.iter().all(|c| !c.0) {
            return;
        }
        tries.push(v);
    }
    panic!("a production call measured cold after the 1,4,8 warm-up, twice: {tries:#?}");
}

/// A warm-up made from the model alone (`warmup --model`, here the live server's own
/// REST metadata, so no SavedModel file is read) at allowed batch sizes 1, 4 and 8 leaves
/// no production call of the xla model cold: after a reload (an empty XLA cache), the
/// warm-up's own first calls pay the compiles and production's first call at each size
/// is warm. As in `replay_measures_xla_compiles_per_batch_size`, the replay is tried
/// twice so that one hiccup of a loaded machine does not fail the test, while a warm-up
/// that does not warm fails both.
#[test]
#[ignore]
fn replay_finds_production_warm_after_a_warmup_made_from_the_model() {
    let l = live();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("from_model.tfrecord");
    let out_s = out.to_str().unwrap();
    let o = crate::common::tfreq()
        .args([
            "warmup",
            "--model",
            &l.rest("xla"),
            "--allowed-batch-sizes",
            "1,4,8",
            "--model-name",
            "xla",
            "-o",
            out_s,
        ])
        .env("TFREQ_TOKEN", &l.token)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("wrote 3 requests for 1 signature (serving_default)"),
        "{}",
        text(&o)
    );
    let mut tries = Vec::new();
    for _ in 0..2 {
        let (code, v) = replay_xla(&l, out_s);
        let prod: Vec<bool> = v["production"]
            .as_array()
            .unwrap_or_else(|| panic!("{v:#}"))
            .iter()
            .map(|r| r["cold"].as_bool().unwrap())
            .collect();
        eprintln!("xla, warm-up from the model: production first calls cold at 1, 4, 8: {prod:?}");
        assert_eq!(prod.len(), 3, "{v:#}");
        for r in v["production"].as_array().unwrap() {
            assert_eq!(r["static_verdict"], "same-executor", "{v:#}");
        }
        if code == Some(0) && v["cold"] == 0 {
            return;
        }
        tries.push(v);
    }
    panic!(
        "a production call measured cold after the warm-up made from the model, twice: {tries:#?}"
    );
}
