//! `scrub` on requests written by the EAS SDK and TensorFlow: same executor and shape
//! keys as the source, none of its string values.

use crate::common::data_dir;
use tfreq::analysis::{ExecutorKey, ShapeKey};
use tfreq::{FillMode, scrub};
use tfreq::{Kind, Scalar};

fn requests() -> Vec<(String, Vec<u8>, tfreq::Message)> {
    let mut out = Vec::new();
    for dir in ["eas", "tfs"] {
        let mut paths: Vec<_> = std::fs::read_dir(data_dir().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "bin"))
            .collect();
        paths.sort();
        for p in paths {
            let bytes = std::fs::read(&p).unwrap();
            if let Ok(m) = tfreq::decode(&bytes)
                && m.kind == Kind::Request
            {
                out.push((p.display().to_string(), bytes, m));
            }
        }
    }
    out
}

fn strings(m: &tfreq::Message) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for t in &m.tensors {
        let e = t.elements(m.wire);
        for i in 0..e.stored {
            if let Some(Scalar::Bytes(b)) = e.stored_get(i) {
                v.push(b.to_vec());
            }
        }
    }
    v
}

#[test]
fn scrubbed_requests_keep_keys_and_drop_strings() {
    let mut checked = 0;
    let mut with_strings = Vec::new();
    for (file, _bytes, prod) in requests() {
        for mode in [
            FillMode::Zeros,
            FillMode::Constant(1.0),
            FillMode::Random { seed: 7 },
        ] {
            let warm = match scrub(&prod, mode) {
                Ok(w) => w,
                // Resource/variant feeds have no values to replace.
                Err(e) => {
                    assert!(e.to_string().contains("cannot be scrubbed"), "{file}: {e}");
                    continue;
                }
            };
            assert_eq!(
                ExecutorKey::of(&warm),
                ExecutorKey::of(&prod),
                "{file} {mode:?}"
            );
            let out = tfreq::encode(&warm, prod.wire, tfreq::TfsEncoding::Python)
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            let back = tfreq::decode_as(&out, prod.wire, Kind::Request).unwrap();
            // `tfreq diff WARMUP PROD` finds no difference that fails: the warm-up warms
            // production's executor. (Production's own problems, which `inspect` lists
            // and `diff` reports too, are kept by scrub and may fail the run.)
            let report = tfreq::analysis::diff(
                std::slice::from_ref(&back),
                &prod,
                &tfreq::analysis::DiffOptions {
                    strict_shapes: true,
                    model: None,
                },
            );
            let diff_errors = report
                .findings()
                .any(|f| f.severity == tfreq::analysis::Severity::Error && f.code.is_diff_only());
            assert!(
                !diff_errors,
                "{file} {mode:?}: {}",
                tfreq::render::to_json(&report)
            );
            let own = tfreq::analysis::lint(&prod)
                .iter()
                .any(|f| f.severity == tfreq::analysis::Severity::Error);
            assert_eq!(report.failed, own, "{file} {mode:?}");
            assert_eq!(
                ExecutorKey::of(&back),
                ExecutorKey::of(&prod),
                "{file} {mode:?}"
            );
            assert_eq!(ShapeKey::of(&back), ShapeKey::of(&prod), "{file} {mode:?}");
            assert_eq!(back.fetches, prod.fetches, "{file}");
            let src = strings(&prod);
            let dst = strings(&back);
            assert_eq!(src.len(), dst.len(), "{file}");
            for (s, d) in src.iter().zip(&dst) {
                assert_eq!(s.len(), d.len(), "{file}");
                if !s.is_empty() {
                    assert_ne!(s, d, "{file}: a source string was kept");
                }
                if s.len() >= 4 {
                    assert!(
                        !out.windows(s.len()).any(|w| w == &s[..]),
                        "{file}: {:?} is still in the output",
                        String::from_utf8_lossy(s)
                    );
                }
            }
            if !src.is_empty() {
                with_strings.push(file.clone());
            }
            checked += 1;
        }
    }
    assert!(checked > 60, "{checked}");
    for f in [
        "eas/faq_prod.bin",
        "eas/strings_binary.bin",
        "tfs/faq_prod.bin",
    ] {
        assert!(
            with_strings.iter().any(|w| w.ends_with(f)),
            "{f} not checked"
        );
    }
}

#[test]
fn random_fill_is_seeded() {
    let bytes = std::fs::read(data_dir().join("eas/strings_binary.bin")).unwrap();
    let prod = tfreq::decode(&bytes).unwrap();
    let a = scrub(&prod, FillMode::Random { seed: 1 }).unwrap();
    let b = scrub(&prod, FillMode::Random { seed: 1 }).unwrap();
    let c = scrub(&prod, FillMode::Random { seed: 2 }).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn constant_out_of_range_is_an_error() {
    let bytes = std::fs::read(data_dir().join("eas/dtype_int8.bin")).unwrap();
    let prod = tfreq::decode(&bytes).unwrap();
    let err = scrub(&prod, FillMode::Constant(1000.0)).unwrap_err();
    assert!(err.to_string().contains("out of range"), "{err}");
    assert!(scrub(&prod, FillMode::Constant(0.5)).is_err());
}
