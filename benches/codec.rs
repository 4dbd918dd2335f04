//! Codec benchmarks: builder + encode, decode (slice and `Bytes`), packed varints,
//! reading values out, and the printers, each next to the baseline it is judged against (a plain
//! `memcpy` of the same bytes), so the ratios come from one run on one machine.
//!
//! `cargo bench --bench codec` (about a minute); one group: `cargo bench --bench codec -- encode`.
//! For steady figures (no run-to-run flip of glibc returning freed 4 MB buffers to the
//! OS, which makes the next one fault in fresh pages), run with
//! `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=4294967296`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tfreq::render::ValuesMode;
use tfreq::{DType, DecodeOptions, TFRequest, decode, decode_with};

const N: usize = 1_000_000;

fn floats() -> Vec<f32> {
    (0..N).map(|i| i as f32 * 0.5).collect()
}

fn ints() -> Vec<i32> {
    // Token-id-like values: 1 to 3 byte varints.
    (0..N).map(|i| ((i * 7919) % 100_000) as i32).collect()
}

fn float_request() -> TFRequest {
    let mut req = TFRequest::new("serving_default");
    req.add_feed("x", &[1, N as i64], DType::Float, floats())
        .expect("feed");
    req.add_fetch("y");
    req
}

fn as_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `memcpy` of the payload: the baseline of every ratio.
fn memcpy_group(c: &mut Criterion, name: &str, payload: &[u8]) {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Bytes(payload.len() as u64));
    g.bench_function("memcpy_extend_from_slice", |b| {
        b.iter(|| {
            let mut v = Vec::with_capacity(payload.len());
            v.extend_from_slice(black_box(payload));
            v
        })
    });
    let mut dst = vec![0u8; payload.len()];
    g.bench_function("memcpy_copy_from_slice", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(payload));
            black_box(&dst);
        })
    });
    g.finish();
}

fn encode(c: &mut Criterion) {
    let values = floats();
    let payload = as_bytes(&values);
    memcpy_group(c, "encode", &payload);
    let mut g = c.benchmark_group("encode");
    g.throughput(Throughput::Bytes(payload.len() as u64));
    // Builder + encode. The values vector is made, and the output dropped, outside
    // the timing: the caller has the values, and the memcpy baseline also reuses its
    // freed buffer rather than faulting in fresh pages.
    // The memcpy baseline under the same conditions as the builder benches below:
    // a fresh copy of the values made (untimed) just before.
    g.bench_function("memcpy_beside_builder_input", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let v = values.clone();
                let t = Instant::now();
                let mut out = Vec::with_capacity(payload.len());
                out.extend_from_slice(black_box(&payload));
                total += t.elapsed();
                drop(black_box(out));
                drop(black_box(v));
            }
            total
        })
    });
    g.bench_function("eas_builder_to_bytes", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let v = values.clone();
                let t = Instant::now();
                let mut req = TFRequest::new("serving_default");
                req.add_feed("x", &[1, N as i64], DType::Float, v)
                    .expect("feed");
                req.add_fetch("y");
                let out = req.to_bytes().unwrap();
                total += t.elapsed();
                drop(black_box(out));
            }
            total
        })
    });
    let req = float_request();
    g.bench_function("eas_to_bytes", |b| {
        b.iter(|| black_box(&req).to_bytes().unwrap())
    });
    g.bench_function("tfs_builder_to_tf_serving_bytes", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let v = values.clone();
                let t = Instant::now();
                let mut req = TFRequest::new("serving_default");
                req.add_feed("x", &[1, N as i64], DType::Float, v)
                    .expect("feed");
                req.add_fetch("y");
                let out = req.to_tf_serving_bytes("m").expect("tfs");
                total += t.elapsed();
                drop(black_box(out));
            }
            total
        })
    });
    g.bench_function("tfs_to_tf_serving_bytes", |b| {
        b.iter(|| black_box(&req).to_tf_serving_bytes("m").expect("tfs"))
    });
    g.finish();
}

fn decode_group(c: &mut Criterion) {
    let req = float_request();
    let eas = req.to_bytes().unwrap();
    let tfs = req.to_tf_serving_bytes("m").expect("tfs");
    memcpy_group(c, "decode", &eas);
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Bytes(eas.len() as u64));
    g.bench_function("eas_float_slice", |b| {
        b.iter(|| decode(black_box(&eas)).expect("decode"))
    });
    let eas_b = Bytes::from(eas.clone());
    g.bench_function("eas_float_bytes", |b| {
        b.iter(|| decode_with(black_box(eas_b.clone()), DecodeOptions::default()).expect("d"))
    });
    g.bench_function("tfs_float_slice", |b| {
        b.iter(|| decode(black_box(&tfs)).expect("decode"))
    });
    let tfs_b = Bytes::from(tfs.clone());
    g.bench_function("tfs_float_bytes", |b| {
        b.iter(|| decode_with(black_box(tfs_b.clone()), DecodeOptions::default()).expect("d"))
    });
    g.finish();

    let mut r = TFRequest::new("serving_default");
    r.add_feed("ids", &[1, N as i64], DType::Int32, ints())
        .expect("feed");
    r.add_fetch("y");
    let int_eas = Bytes::from(r.to_bytes().unwrap());
    let mut g = c.benchmark_group("decode_varint");
    g.throughput(Throughput::Bytes(int_eas.len() as u64));
    g.bench_function("eas_int32_1m_bytes", |b| {
        b.iter(|| decode_with(black_box(int_eas.clone()), DecodeOptions::default()).expect("d"))
    });
    // Decoding and reading every value (the view decoded into a Vec<i32>).
    g.bench_function("eas_int32_1m_bytes_to_vec", |b| {
        b.iter(|| {
            let (m, _) =
                decode_with(black_box(int_eas.clone()), DecodeOptions::default()).expect("d");
            match &m.tensors[0].fields[0].1 {
                tfreq::Values::I32(v) => v.to_vec(),
                _ => Vec::new(),
            }
        })
    });
    g.bench_function("memcpy_extend_from_slice", |b| {
        b.iter(|| {
            let mut v = Vec::with_capacity(int_eas.len());
            v.extend_from_slice(black_box(&int_eas));
            v
        })
    });
    g.finish();

    // A run big enough to be checked on every core (PARALLEL_MIN in src/par.rs and up):
    // 24M non-negative int32 values below 2^24 (1 to 4 bytes each), about 80 MB of
    // varints, beside a memcpy of the same bytes.
    let big: Vec<i32> = (0..24_000_000i32)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 8) as i32)
        .collect();
    let mut r = TFRequest::new("serving_default");
    r.add_feed("ids", &[1, big.len() as i64], DType::Int32, big)
        .expect("feed");
    let big_eas = Bytes::from(r.to_bytes().unwrap());
    let mut g = c.benchmark_group("decode_varint_64mb");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(big_eas.len() as u64));
    g.bench_function("eas_int32_bytes", |b| {
        b.iter(|| decode_with(black_box(big_eas.clone()), DecodeOptions::default()).expect("d"))
    });
    g.bench_function("memcpy_extend_from_slice", |b| {
        b.iter(|| {
            let mut v = Vec::with_capacity(big_eas.len());
            v.extend_from_slice(black_box(&big_eas));
            v
        })
    });
    g.finish();
}

/// Reading values out of a decoded request: 1M floats viewed in the input (the
/// `float_val` of an EAS request decoded from `Bytes`), next to the same work on a
/// `Vec<f32>` and a `memcpy` of the same 4 MB.
fn values(c: &mut Criterion) {
    let eas = Bytes::from(float_request().to_bytes().unwrap());
    let (msg, _) = decode_with(eas.clone(), DecodeOptions::default()).expect("decode");
    let tfreq::Values::F32(view) = msg.tensors[0].fields[0].1.clone() else {
        panic!("float_val")
    };
    assert!(matches!(view, tfreq::Elems::Le(_)), "a view of the input");
    let owned = floats();
    let payload = as_bytes(&owned);
    let mut g = c.benchmark_group("values");
    g.throughput(Throughput::Bytes(payload.len() as u64));
    g.bench_function("memcpy_extend_from_slice", |b| {
        b.iter(|| {
            let mut v = Vec::with_capacity(payload.len());
            v.extend_from_slice(black_box(&payload));
            v
        })
    });
    g.bench_function("view_to_vec", |b| b.iter(|| black_box(&view).to_vec()));
    g.bench_function("vec_f32_iter_sum", |b| {
        b.iter(|| black_box(&owned).iter().fold(0.0f32, |a, &x| a + x))
    });
    g.bench_function("view_iter_sum", |b| {
        b.iter(|| black_box(&view).iter().fold(0.0f32, |a, x| a + x))
    });
    g.bench_function("vec_f32_for_loop_max", |b| {
        b.iter(|| {
            let mut m = f32::MIN;
            for &x in black_box(&owned).iter() {
                m = m.max(x);
            }
            m
        })
    });
    g.bench_function("view_for_loop_max", |b| {
        b.iter(|| {
            let mut m = f32::MIN;
            for x in black_box(&view).iter() {
                m = m.max(x);
            }
            m
        })
    });
    // Decode from a slice (one copy of the input) and read every value: the work a
    // caller of protobuf's ParseFromString does before touching a value.
    g.bench_function("decode_slice_and_to_vec", |b| {
        b.iter(|| {
            let m = decode(black_box(&eas)).expect("decode");
            match &m.tensors[0].fields[0].1 {
                tfreq::Values::F32(v) => v.to_vec(),
                _ => Vec::new(),
            }
        })
    });
    g.finish();
}

fn render(c: &mut Criterion) {
    for (name, path) in [
        ("eas_seed", "tests/data/eas/seed_warm_up.bin"),
        ("tfs_seed", "tests/data/tfs/seed_content.bin"),
    ] {
        let bytes = Bytes::from(std::fs::read(path).expect("seed file"));
        let (msg, _) = decode_with(bytes.clone(), DecodeOptions::default()).expect("seed");
        let problems = tfreq::analysis::lint(&msg);
        let mut g = c.benchmark_group(format!("render_{name}"));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function("decode", |b| {
            b.iter(|| decode_with(black_box(bytes.clone()), DecodeOptions::default()).expect("d"))
        });
        g.bench_function("human_summary", |b| {
            b.iter(|| {
                let mut out = Vec::new();
                tfreq::render::write_summary(&mut out, path, &msg, &problems, Default::default())
                    .expect("w");
                out
            })
        });
        let name = tfreq::wire::message_name(msg.wire, msg.kind);
        g.bench_function("text", |b| {
            b.iter(|| {
                let mut out = Vec::new();
                tfreq::render::write_text(&mut out, bytes.clone(), name).expect("w");
                out
            })
        });
        g.bench_function("diff_with_itself", |b| {
            let opts = tfreq::analysis::DiffOptions::default();
            b.iter(|| tfreq::analysis::diff(std::slice::from_ref(&msg), &msg, &opts))
        });
        for (label, mode) in [
            ("json_preview", ValuesMode::Preview),
            ("json_all", ValuesMode::All),
        ] {
            g.bench_function(label, |b| {
                b.iter(|| {
                    let mut out = Vec::new();
                    tfreq::render::write_message(&mut out, path, &msg, &problems, mode).expect("w");
                    out
                })
            });
        }
        g.finish();
    }
}

fn quick() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .without_plots()
}

criterion_group! {
    name = benches;
    config = quick();
    targets = encode, decode_group, values, render
}
criterion_main!(benches);
