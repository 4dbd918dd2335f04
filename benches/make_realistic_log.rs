//! Writes a TF Serving request log shaped like a production one, for the benchmarks in
//! `benches/` (the file is gigabytes: it is made when measuring, never committed).
//!
//! ```text
//! cargo run --release --example make_realistic_log -- OUT SIZE [--seed N] [--mix SPEC]
//!     [--distinct N] [--zipf S]
//! cargo run --release --example make_realistic_log -- /tmp/real.tfrecord 1.6G
//! cargo run --release --example make_realistic_log -- /tmp/b.tfrecord 1.6G --seed 7 \
//!     --mix predict=70,classify=15,regress=10,multi=4,big=1
//! ```
//!
//! SIZE is bytes with an optional suffix (`K`, `M`, `G`: powers of 1000; `Ki`, `Mi`, `Gi`:
//! of 1024; fractions allowed): records are written until the file holds at least that
//! much. The file is a TFRecord file of `PredictionLog` records as TF Serving's request
//! logger writes them (proto/tensorflow_serving/apis/prediction_log.proto): a
//! `log_metadata` (model spec, `saved_model_tags: "serve"`) and a `predict_log`,
//! `classify_log`, `regress_log` or `multi_inference_log` holding the request and its
//! response, each record framed with its length and both masked CRC-32Cs
//! (`tfreq::formats::write_record`).
//!
//! The traffic:
//! - three models and six signatures: `ranker` (`serving_default`: predict with a float
//!   `tensor_content`, `int64_val` ids and `string_val` queries; `score`: regress),
//!   `embedder` (`serving_default`: predict with `int32` token ids as `tensor_content` and a
//!   packed `int_val` mask; `encode`: predict with sentences as `string_val`) and
//!   `classifier` (`classify`: classify; `predict_probs`: predict with packed `float_val`
//!   and `bool_val`);
//! - batch sizes 1 to 64 (half the requests a power of two, half any size), so there are
//!   hundreds of shape keys;
//! - `--distinct` (20,000) distinct requests, each written again and again: the kind of
//!   each record is drawn by `--mix` and the request within its kind by a Zipf law of
//!   exponent `--zipf` (1.1) over that kind's share of the distinct requests, so a few
//!   requests are most of the log and many appear once or twice;
//! - classify, regress and multi-inference requests (`--mix` default 8 + 4 + 1 = 13 % of the
//!   records) carry one `tf.train.Example` per batch row (an `ExampleList`, or an
//!   `ExampleListWithContext` for a quarter of the classify requests) with float, int64 and
//!   bytes features; multi-inference requests run a regress and a classify task on `ranker`;
//! - `big` records (0.25 %): a `classifier`/`predict_probs` request with one `uint8` image of
//!   2 to 8 MB as `tensor_content`, every one different.
//!
//! One line of JSON on standard output says what was written: the records, the bytes, the
//! records of each kind and the distinct requests that were written at least once. The
//! same arguments write the same bytes.

use std::io::{BufWriter, Write};

use tfreq::formats::write_record;
use tfreq::wire::{put_bytes_field, put_varint_field};

/// splitmix64: small, fast, and the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// In `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() >> 32) * n) >> 32
    }
    /// In `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    /// In `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn float(&mut self) -> f32 {
        (self.unit() * 4.0 - 2.0) as f32
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    /// A batch size: half the time a power of two, else any of 1..=64.
    fn batch(&mut self) -> u64 {
        if self.below(2) == 0 {
            1 << self.below(7)
        } else {
            self.range(1, 64)
        }
    }
}

// Field numbers: proto/tensorflow_serving/apis/*.proto, proto/tensorflow/core/framework/
// tensor.proto, tensor_shape.proto, proto/tensorflow/core/example/{example,feature}.proto.
const DT_FLOAT: u64 = 1;
const DT_INT32: u64 = 3;
const DT_UINT8: u64 = 4;
const DT_STRING: u64 = 7;
const DT_INT64: u64 = 9;
const DT_BOOL: u64 = 10;

fn model_spec(name: &str, signature: &str, version: u64) -> Vec<u8> {
    let mut s = Vec::new();
    put_bytes_field(&mut s, 1, name.as_bytes());
    let mut v = Vec::new();
    put_varint_field(&mut v, 1, version);
    put_bytes_field(&mut s, 2, &v);
    put_bytes_field(&mut s, 3, signature.as_bytes());
    s
}

fn shape(dims: &[u64]) -> Vec<u8> {
    let mut s = Vec::new();
    for &d in dims {
        let mut dim = Vec::new();
        put_varint_field(&mut dim, 1, d);
        put_bytes_field(&mut s, 2, &dim);
    }
    s
}

/// A `TensorProto` with its values as field `field` (already encoded, packed or not).
fn tensor(dtype: u64, dims: &[u64], values: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut t = Vec::new();
    put_varint_field(&mut t, 1, dtype);
    put_bytes_field(&mut t, 2, &shape(dims));
    for (field, v) in values {
        put_bytes_field(&mut t, *field, v);
    }
    t
}

fn floats_le(rng: &mut Rng, n: u64) -> Vec<u8> {
    (0..n).flat_map(|_| rng.float().to_le_bytes()).collect()
}

fn varints(it: impl Iterator<Item = u64>) -> Vec<u8> {
    let mut out = Vec::new();
    for v in it {
        tfreq::wire::put_varint(&mut out, v);
    }
    out
}

fn word(rng: &mut Rng) -> &'static str {
    const WORDS: &[&str] = &[
        "the", "shoes", "red", "running", "cheap", "flight", "to", "paris", "hotel", "near", "me",
        "best", "phone", "under", "500", "weather", "tomorrow", "how", "cook", "rice", "laptop",
        "gaming", "review", "news", "today", "movie", "tickets", "recipe", "vegan",
    ];
    WORDS[rng.below(WORDS.len() as u64) as usize]
}

fn sentence(rng: &mut Rng, words: u64) -> Vec<u8> {
    let n = rng.range(1, words);
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(word(rng));
    }
    s.into_bytes()
}

/// A `PredictRequest`'s `inputs` map entry.
fn input(out: &mut Vec<u8>, name: &str, t: &[u8]) {
    let mut e = Vec::new();
    put_bytes_field(&mut e, 1, name.as_bytes());
    put_bytes_field(&mut e, 2, t);
    put_bytes_field(out, 2, &e);
}

/// A `PredictResponse` of one float output `[b, k]` as `tensor_content`.
fn predict_response(rng: &mut Rng, spec: &[u8], output: &str, b: u64, k: u64) -> Vec<u8> {
    let mut r = Vec::new();
    let mut e = Vec::new();
    put_bytes_field(&mut e, 1, output.as_bytes());
    put_bytes_field(
        &mut e,
        2,
        &tensor(DT_FLOAT, &[b, k], &[(4, floats_le(rng, b * k))]),
    );
    put_bytes_field(&mut r, 1, &e);
    put_bytes_field(&mut r, 2, spec);
    r
}

/// A predict request of one of the four predict signatures, batch `b`.
fn predict(rng: &mut Rng, b: u64) -> (Vec<u8>, Vec<u8>, &'static str, &'static str) {
    let which = rng.below(4);
    let version = rng.range(1, 2);
    let mut req = Vec::new();
    let (model, signature, output, k) = match which {
        0 => ("ranker", "serving_default", "scores", 1),
        1 => ("embedder", "serving_default", "embedding", 16),
        2 => ("embedder", "encode", "embedding", 16),
        _ => ("classifier", "predict_probs", "probabilities", 10),
    };
    let spec = model_spec(model, signature, version);
    put_bytes_field(&mut req, 1, &spec);
    match which {
        0 => {
            let f = floats_le(rng, b * 32);
            input(
                &mut req,
                "user_features",
                &tensor(DT_FLOAT, &[b, 32], &[(4, f)]),
            );
            let ids = varints((0..b * 8).map(|_| rng.below(1 << 40)));
            input(
                &mut req,
                "item_ids",
                &tensor(DT_INT64, &[b, 8], &[(10, ids)]),
            );
            let mut q = Vec::new();
            put_varint_field(&mut q, 1, DT_STRING);
            put_bytes_field(&mut q, 2, &shape(&[b]));
            for _ in 0..b {
                let s = sentence(rng, 6);
                put_bytes_field(&mut q, 8, &s);
            }
            input(&mut req, "query", &q);
        }
        1 => {
            let len = *rng.pick(&[16u64, 32, 64, 128]);
            let ids: Vec<u8> = (0..b * len)
                .flat_map(|_| (rng.below(30_522) as i32).to_le_bytes())
                .collect();
            input(
                &mut req,
                "input_ids",
                &tensor(DT_INT32, &[b, len], &[(4, ids)]),
            );
            let mask = varints((0..b * len).map(|i| u64::from(i % len < len * 3 / 4)));
            input(
                &mut req,
                "attention_mask",
                &tensor(DT_INT32, &[b, len], &[(7, mask)]),
            );
        }
        2 => {
            let mut q = Vec::new();
            put_varint_field(&mut q, 1, DT_STRING);
            put_bytes_field(&mut q, 2, &shape(&[b]));
            for _ in 0..b {
                let s = sentence(rng, 40);
                put_bytes_field(&mut q, 8, &s);
            }
            input(&mut req, "text", &q);
        }
        _ => {
            let f: Vec<u8> = floats_le(rng, b * 48);
            input(&mut req, "dense", &tensor(DT_FLOAT, &[b, 48], &[(5, f)]));
            let m: Vec<u8> = (0..b).map(|_| rng.below(2) as u8).collect();
            input(&mut req, "mask", &tensor(DT_BOOL, &[b], &[(11, m)]));
        }
    }
    put_bytes_field(&mut req, 3, output.as_bytes());
    let resp = predict_response(rng, &spec, output, b, k);
    (req, resp, model, signature)
}

/// A `tf.train.Feature` map entry of `Features`.
fn feature(out: &mut Vec<u8>, name: &str, kind: u32, list: &[u8]) {
    let mut f = Vec::new();
    put_bytes_field(&mut f, kind, list);
    let mut e = Vec::new();
    put_bytes_field(&mut e, 1, name.as_bytes());
    put_bytes_field(&mut e, 2, &f);
    put_bytes_field(out, 1, &e);
}

fn float_list(rng: &mut Rng, n: u64) -> Vec<u8> {
    let mut l = Vec::new();
    put_bytes_field(&mut l, 1, &floats_le(rng, n));
    l
}

fn int64_list(rng: &mut Rng, n: u64, below: u64) -> Vec<u8> {
    let mut l = Vec::new();
    put_bytes_field(&mut l, 1, &varints((0..n).map(|_| rng.below(below))));
    l
}

fn bytes_list(rng: &mut Rng, n: u64, words: u64) -> Vec<u8> {
    let mut l = Vec::new();
    for _ in 0..n {
        let s = sentence(rng, words);
        put_bytes_field(&mut l, 1, &s);
    }
    l
}

/// One `tf.train.Example`, features in name order (as TensorFlow writes a map it built).
fn example(rng: &mut Rng, regress: bool) -> Vec<u8> {
    let mut fs = Vec::new();
    if regress {
        feature(&mut fs, "ctr_features", 2, &float_list(rng, 24));
        feature(&mut fs, "item_id", 3, &int64_list(rng, 1, 1 << 40));
        let n = rng.range(1, 5);
        feature(&mut fs, "tags", 1, &bytes_list(rng, n, 2));
    } else {
        feature(&mut fs, "age", 3, &int64_list(rng, 1, 100));
        feature(&mut fs, "country", 1, &bytes_list(rng, 1, 1));
        feature(&mut fs, "embedding", 2, &float_list(rng, 16));
        let n = rng.below(40);
        feature(&mut fs, "history", 3, &int64_list(rng, n, 1 << 20));
        feature(&mut fs, "title", 1, &bytes_list(rng, 1, 12));
    }
    let mut e = Vec::new();
    put_bytes_field(&mut e, 1, &fs);
    e
}

/// An `Input` of `b` examples, with a context example when `context`.
fn examples_input(rng: &mut Rng, b: u64, regress: bool, context: bool) -> Vec<u8> {
    let mut list = Vec::new();
    for _ in 0..b {
        put_bytes_field(&mut list, 1, &example(rng, regress));
    }
    if context {
        put_bytes_field(&mut list, 2, &example(rng, regress));
    }
    let mut i = Vec::new();
    put_bytes_field(&mut i, if context { 2 } else { 1 }, &list);
    i
}

fn classifications(rng: &mut Rng, b: u64) -> Vec<u8> {
    let mut result = Vec::new();
    for _ in 0..b {
        let mut c = Vec::new();
        for label in ["negative", "positive"] {
            let mut class = Vec::new();
            put_bytes_field(&mut class, 1, label.as_bytes());
            class.push(0x15); // score = 2, fixed32
            class.extend_from_slice(&(rng.unit() as f32).to_le_bytes());
            put_bytes_field(&mut c, 1, &class);
        }
        put_bytes_field(&mut result, 1, &c);
    }
    result
}

fn regressions(rng: &mut Rng, b: u64) -> Vec<u8> {
    let mut result = Vec::new();
    for _ in 0..b {
        let mut r = vec![0x0d]; // value = 1, fixed32
        r.extend_from_slice(&rng.float().to_le_bytes());
        put_bytes_field(&mut result, 1, &r);
    }
    result
}

/// The kinds of record, in `--mix`'s order.
const KINDS: [&str; 5] = ["predict", "classify", "regress", "multi", "big"];
/// `PredictionLog` field of each kind's log.
const LOG_FIELD: [u32; 5] = [6, 2, 3, 4, 6];

/// One record's `PredictionLog` bytes: (model, request, response) wrapped.
fn prediction_log(kind: usize, model: &str, signature: &str, req: &[u8], resp: &[u8]) -> Vec<u8> {
    let mut meta = Vec::new();
    put_bytes_field(&mut meta, 1, &model_spec(model, signature, 1));
    put_bytes_field(&mut meta, 3, b"serve");
    let mut body = Vec::new();
    put_bytes_field(&mut body, 1, req);
    put_bytes_field(&mut body, 2, resp);
    let mut log = Vec::new();
    put_bytes_field(&mut log, 1, &meta);
    put_bytes_field(&mut log, LOG_FIELD[kind], &body);
    log
}

/// A distinct request of `kind` (not `big`), framed.
fn make_request(rng: &mut Rng, kind: usize) -> Vec<u8> {
    let b = rng.batch();
    let data = match KINDS[kind] {
        "predict" => {
            let (req, resp, model, signature) = predict(rng, b);
            prediction_log(kind, model, signature, &req, &resp)
        }
        "classify" | "regress" => {
            let regress = KINDS[kind] == "regress";
            let (model, signature) = if regress {
                ("ranker", "score")
            } else {
                ("classifier", "classify")
            };
            let spec = model_spec(model, signature, rng.range(1, 2));
            let mut req = Vec::new();
            put_bytes_field(&mut req, 1, &spec);
            let context = !regress && rng.below(4) == 0;
            put_bytes_field(&mut req, 2, &examples_input(rng, b, regress, context));
            let mut resp = Vec::new();
            let result = if regress {
                regressions(rng, b)
            } else {
                classifications(rng, b)
            };
            put_bytes_field(&mut resp, 1, &result);
            put_bytes_field(&mut resp, 2, &spec);
            prediction_log(kind, model, signature, &req, &resp)
        }
        _ => {
            let mut req = Vec::new();
            let tasks = [
                ("score", "tensorflow/serving/regress"),
                ("serving_default", "tensorflow/serving/classify"),
            ];
            let mut resp = Vec::new();
            for (signature, method) in tasks {
                let spec = model_spec("ranker", signature, 1);
                let mut t = Vec::new();
                put_bytes_field(&mut t, 1, &spec);
                put_bytes_field(&mut t, 2, method.as_bytes());
                put_bytes_field(&mut req, 1, &t);
                let mut r = Vec::new();
                put_bytes_field(&mut r, 1, &spec);
                if method.ends_with("regress") {
                    put_bytes_field(&mut r, 3, &regressions(rng, b));
                } else {
                    put_bytes_field(&mut r, 2, &classifications(rng, b));
                }
                put_bytes_field(&mut resp, 1, &r);
            }
            put_bytes_field(&mut req, 2, &examples_input(rng, b, true, false));
            prediction_log(kind, "ranker", "", &req, &resp)
        }
    };
    let mut framed = Vec::new();
    write_record(&mut framed, &data);
    framed
}

/// A `big` record: one image of 2 to 8 MB cut from `noise`, framed into `out`.
fn make_big(rng: &mut Rng, noise: &[u8], out: &mut Vec<u8>) {
    let width = 1024u64;
    let rows = rng.range((2 << 20) / (width * 3), (8 << 20) / (width * 3));
    let n = (rows * width * 3) as usize;
    let at = rng.below((noise.len() - n) as u64) as usize;
    let spec = model_spec("classifier", "predict_probs", 1);
    let mut req = Vec::new();
    put_bytes_field(&mut req, 1, &spec);
    let t = tensor(
        DT_UINT8,
        &[1, rows, width, 3],
        &[(4, noise[at..at + n].to_vec())],
    );
    input(&mut req, "image", &t);
    put_bytes_field(&mut req, 3, b"probabilities");
    let resp = predict_response(rng, &spec, "probabilities", 1, 10);
    let data = prediction_log(4, "classifier", "predict_probs", &req, &resp);
    out.clear();
    write_record(out, &data);
}

/// `SIZE` with its suffix, in bytes.
fn parse_size(s: &str) -> Result<u64, String> {
    let (num, mult) = [
        ("Gi", 1u64 << 30),
        ("Mi", 1 << 20),
        ("Ki", 1 << 10),
        ("G", 1_000_000_000),
        ("M", 1_000_000),
        ("K", 1_000),
    ]
    .iter()
    .find_map(|(suf, m)| s.strip_suffix(suf).map(|n| (n, *m)))
    .unwrap_or((s, 1));
    let v: f64 = num.parse().map_err(|_| format!("SIZE {s:?}: not a size"))?;
    Ok((v * mult as f64) as u64)
}

/// `--mix`: `kind=weight,...`, the other kinds weighing 0.
fn parse_mix(s: &str) -> Result<[f64; 5], String> {
    let mut w = [0.0; 5];
    for part in s.split(',') {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("--mix {part:?}: expected KIND=WEIGHT"))?;
        let i = KINDS
            .iter()
            .position(|x| *x == k)
            .ok_or_else(|| format!("--mix: unknown kind {k:?} (one of {KINDS:?})"))?;
        w[i] = v
            .parse::<f64>()
            .ok()
            .filter(|v| *v >= 0.0)
            .ok_or_else(|| format!("--mix {part:?}: not a weight"))?;
    }
    if w.iter().sum::<f64>() <= 0.0 {
        return Err("--mix: every weight is 0".into());
    }
    Ok(w)
}

/// Cumulative distribution of `x` (normalised to end at 1).
fn cdf(x: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut acc = 0.0;
    let mut c: Vec<f64> = x
        .map(|v| {
            acc += v;
            acc
        })
        .collect();
    for v in &mut c {
        *v /= acc;
    }
    c
}

fn draw(rng: &mut Rng, cdf: &[f64]) -> usize {
    let u = rng.unit();
    cdf.partition_point(|&c| c <= u).min(cdf.len() - 1)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut pos, mut seed, mut mix, mut distinct, mut zipf) =
        (Vec::new(), 1u64, None, 20_000usize, 1.1f64);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--seed" => seed = val()?.parse()?,
            "--mix" => mix = Some(val()?),
            "--distinct" => distinct = val()?.parse()?,
            "--zipf" => zipf = val()?.parse()?,
            _ if a.starts_with("--") => return Err(format!("unknown option {a}").into()),
            _ => pos.push(a),
        }
    }
    let [out, size] = pos.as_slice() else {
        return Err("usage: make_realistic_log OUT SIZE [--seed N] [--mix predict=86.75,classify=8,regress=4,multi=1,big=0.25] [--distinct 20000] [--zipf 1.1]".into());
    };
    let mix_text =
        mix.unwrap_or_else(|| "predict=86.75,classify=8,regress=4,multi=1,big=0.25".into());
    let weights = parse_mix(&mix_text)?;
    let limit = parse_size(size)?;
    let mut rng = Rng(seed ^ 0x005E_ED0F_7F5E_4E00);

    // Each kind but `big` gets its share of the distinct requests (at least one).
    let small: f64 = weights[..4].iter().sum();
    let mut pools: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut zipfs = Vec::new();
    for (kind, w) in weights[..4].iter().enumerate() {
        let n = if *w > 0.0 {
            ((distinct as f64 * w / small).round() as usize).max(1)
        } else {
            0
        };
        pools.push((0..n).map(|_| make_request(&mut rng, kind)).collect());
        zipfs.push(cdf((1..=n).map(|r| (r as f64).powf(-zipf))));
    }
    let kinds = cdf(weights.iter().copied());
    let mut noise = vec![0u8; 9 << 20];
    for c in noise.chunks_mut(8) {
        c.copy_from_slice(&rng.next().to_le_bytes()[..c.len()]);
    }

    let mut f = BufWriter::with_capacity(1 << 20, std::fs::File::create(out)?);
    let (mut written, mut records) = (0u64, 0u64);
    let mut per_kind = [0u64; 5];
    let mut used: Vec<Vec<bool>> = pools.iter().map(|p| vec![false; p.len()]).collect();
    let mut big = Vec::new();
    while written < limit {
        let kind = draw(&mut rng, &kinds);
        let rec = if KINDS[kind] == "big" {
            make_big(&mut rng, &noise, &mut big);
            &big
        } else {
            let i = draw(&mut rng, &zipfs[kind]);
            used[kind][i] = true;
            &pools[kind][i]
        };
        f.write_all(rec)?;
        written += rec.len() as u64;
        records += 1;
        per_kind[kind] += 1;
    }
    f.flush()?;
    let counts: Vec<String> = KINDS
        .iter()
        .zip(per_kind)
        .map(|(k, n)| format!("\"{k}\": {n}"))
        .collect();
    let distinct_used: usize = used.iter().flatten().filter(|u| **u).count() + per_kind[4] as usize;
    println!(
        "{{\"seed\": {seed}, \"mix\": \"{mix_text}\", \"records\": {records}, \"bytes\": {written}, \"kinds\": {{{}}}, \"distinct_written\": {distinct_used}}}",
        counts.join(", ")
    );
    Ok(())
}
