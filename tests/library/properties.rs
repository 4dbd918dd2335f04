//! Property tests: builder → bytes → decode gives back the request, for every dtype each
//! format carries and shapes from scalars through zero dims to rank 8; EAS ↔ TF Serving
//! conversion keeps the values; Python text format → parse → encode → decode gives the
//! same message; the executor key ignores order and sees every added or removed name.

use bytes::Bytes;
use proptest::prelude::*;
use tfreq::analysis::ExecutorKey;
use tfreq::analysis::Verdict;
use tfreq::analysis::{DiffOptions, diff};
use tfreq::{
    Complex, DType, DTypeCode, FeedValues, Fill, Kind, Message, Scalar, TFRequest, TfsEncoding,
    WireFormat, bf16, decode_as, encode, f16,
};

#[derive(Debug, Clone)]
struct Feed {
    name: String,
    dtype: DType,
    shape: Vec<i64>,
    values: FeedValues,
    expected: Vec<Scalar>,
}

/// Floats by bit pattern; any NaN equals any NaN (formats may canonicalise payloads).
fn same(a: &Scalar, b: &Scalar) -> bool {
    fn f32s(x: f32, y: f32) -> bool {
        x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
    }
    fn f64s(x: f64, y: f64) -> bool {
        x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
    }
    match (a, b) {
        (Scalar::F32(x), Scalar::F32(y)) => f32s(*x, *y),
        (Scalar::F64(x), Scalar::F64(y)) => f64s(*x, *y),
        (Scalar::F16(x), Scalar::F16(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Scalar::BF16(x), Scalar::BF16(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Scalar::C64(a, b), Scalar::C64(c, d)) => f32s(*a, *c) && f32s(*b, *d),
        (Scalar::C128(a, b), Scalar::C128(c, d)) => f64s(*a, *c) && f64s(*b, *d),
        _ => a == b,
    }
}

fn f32_from(bits: u32, nan: bool) -> f32 {
    let x = f32::from_bits(bits);
    if x.is_nan() && !nan { 1.5 } else { x }
}

fn f64_from(bits: u64, nan: bool) -> f64 {
    let x = f64::from_bits(bits);
    if x.is_nan() && !nan { -2.25 } else { x }
}

/// `n` values of dtype `d`: the builder input and the elements decoding must give.
fn values(d: DType, n: usize, nan: bool) -> BoxedStrategy<(FeedValues, Vec<Scalar>)> {
    use proptest::collection::vec;
    let info = d.info();
    match d {
        DType::Float => vec(any::<u32>(), n)
            .prop_map(move |b| {
                let v: Vec<f32> = b.iter().map(|&x| f32_from(x, nan)).collect();
                (v.clone().into(), v.into_iter().map(Scalar::F32).collect())
            })
            .boxed(),
        DType::Double => vec(any::<u64>(), n)
            .prop_map(move |b| {
                let v: Vec<f64> = b.iter().map(|&x| f64_from(x, nan)).collect();
                (v.clone().into(), v.into_iter().map(Scalar::F64).collect())
            })
            .boxed(),
        DType::Half => vec(any::<u16>(), n)
            .prop_map(move |b| {
                let v: Vec<f16> = b
                    .iter()
                    .map(|&x| f16::from_bits(x))
                    .map(|x| if x.is_nan() && !nan { f16::ONE } else { x })
                    .collect();
                (v.clone().into(), v.into_iter().map(Scalar::F16).collect())
            })
            .boxed(),
        DType::BFloat16 => vec(any::<u16>(), n)
            .prop_map(move |b| {
                let v: Vec<bf16> = b
                    .iter()
                    .map(|&x| bf16::from_bits(x))
                    .map(|x| if x.is_nan() && !nan { bf16::ONE } else { x })
                    .collect();
                (v.clone().into(), v.into_iter().map(Scalar::BF16).collect())
            })
            .boxed(),
        DType::Complex64 => vec((any::<u32>(), any::<u32>()), n)
            .prop_map(move |b| {
                let v: Vec<Complex<f32>> = b
                    .iter()
                    .map(|&(r, i)| Complex::new(f32_from(r, nan), f32_from(i, nan)))
                    .collect();
                let e = v.iter().map(|c| Scalar::C64(c.re, c.im)).collect();
                (v.into(), e)
            })
            .boxed(),
        DType::Complex128 => vec((any::<u64>(), any::<u64>()), n)
            .prop_map(move |b| {
                let v: Vec<Complex<f64>> = b
                    .iter()
                    .map(|&(r, i)| Complex::new(f64_from(r, nan), f64_from(i, nan)))
                    .collect();
                let e = v.iter().map(|c| Scalar::C128(c.re, c.im)).collect();
                (v.into(), e)
            })
            .boxed(),
        DType::Bool => vec(any::<bool>(), n)
            .prop_map(|v| (v.clone().into(), v.into_iter().map(Scalar::Bool).collect()))
            .boxed(),
        DType::String => vec(vec(any::<u8>(), 0..6), n)
            .prop_map(|v| {
                let b: Vec<Bytes> = v.into_iter().map(Bytes::from).collect();
                (
                    FeedValues::Str(b.clone()),
                    b.into_iter().map(Scalar::Bytes).collect(),
                )
            })
            .boxed(),
        DType::Int64 => vec(any::<i64>(), n)
            .prop_map(|v| (v.clone().into(), v.into_iter().map(Scalar::I64).collect()))
            .boxed(),
        DType::UInt32 => vec(any::<u32>(), n)
            .prop_map(|v| {
                let e = v.iter().map(|&x| Scalar::U64(x as u64)).collect();
                (v.into(), e)
            })
            .boxed(),
        DType::UInt64 => vec(any::<u64>(), n)
            .prop_map(|v| (v.clone().into(), v.into_iter().map(Scalar::U64).collect()))
            .boxed(),
        _ if info.tf_field == tfreq::ValueField::Float8 => vec(any::<u8>(), n)
            .prop_map(move |v| {
                // Bits above a 4-bit type's width are not a value of it.
                let v: Vec<u8> = if d == DType::Float4E2m1fn {
                    v.into_iter().map(|b| b & 0x0f).collect()
                } else {
                    v
                };
                let e = v.iter().map(|&b| Scalar::Mini(d, b)).collect();
                (FeedValues::bits(v), e)
            })
            .boxed(),
        _ => {
            let (lo, hi) = info.int_range.expect("an integer dtype");
            vec(lo..=hi, n)
                .prop_map(|v| (v.clone().into(), v.into_iter().map(Scalar::I64).collect()))
                .boxed()
        }
    }
}

/// Scalars through zero dims to rank 8, at most 12 elements.
fn shape() -> impl Strategy<Value = Vec<i64>> {
    proptest::collection::vec(prop_oneof![4 => Just(1i64), 1 => 0i64..=3], 0..=8)
        .prop_filter("small", |s| s.iter().product::<i64>() <= 12)
}

fn buildable(d: DType) -> bool {
    !matches!(d, DType::Invalid | DType::Resource | DType::Variant)
}

fn dtypes(eas_only: bool) -> Vec<DType> {
    DType::all()
        .filter(|d| buildable(*d) && (!eas_only || d.eas_can_carry()))
        .collect()
}

fn feed(i: usize, dtypes: Vec<DType>, nan: bool) -> impl Strategy<Value = Feed> {
    (proptest::sample::select(dtypes), shape(), "[a-z_/:]{0,6}").prop_flat_map(
        move |(dtype, shape, stem)| {
            let n = shape.iter().product::<i64>() as usize;
            values(dtype, n, nan).prop_map(move |(values, expected)| Feed {
                name: format!("{stem}{i}"),
                dtype,
                shape: shape.clone(),
                values,
                expected,
            })
        },
    )
}

fn feeds(eas_only: bool, nan: bool) -> impl Strategy<Value = Vec<Feed>> {
    let d = dtypes(eas_only);
    (
        feed(0, d.clone(), nan),
        feed(1, d.clone(), nan),
        feed(2, d, nan),
        1usize..=3,
    )
        .prop_map(|(a, b, c, n)| {
            let mut v = vec![a, b, c];
            v.truncate(n);
            v
        })
}

fn fetches() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec("[a-z][a-z0-9_:]{0,5}", 0..3)
}

fn request(wire: WireFormat, sig: &str, feeds: &[Feed], fetches: &[String]) -> TFRequest {
    let mut req = TFRequest::for_wire(sig, wire);
    for f in feeds {
        req.add_feed(f.name.clone(), &f.shape, f.dtype, f.values.clone())
            .unwrap_or_else(|e| panic!("builder refused {f:?}: {e}"));
    }
    for f in fetches {
        req.add_fetch(f.clone());
    }
    req
}

/// The decoded message holds exactly the feeds (in order), their dtypes, shapes and
/// elements, and the fetches.
fn check(msg: &Message, feeds: &[Feed], fetches: &[String]) -> Result<(), TestCaseError> {
    let names: Vec<&str> = msg.tensors.iter().map(|t| t.name.as_str()).collect();
    let want: Vec<&str> = feeds.iter().map(|f| f.name.as_str()).collect();
    prop_assert_eq!(names, want);
    for (t, f) in msg.tensors.iter().zip(feeds) {
        prop_assert_eq!(t.dtype, DTypeCode::from(f.dtype));
        prop_assert_eq!(t.shape.sizes(), f.shape.clone());
        let e = t.elements(msg.wire);
        prop_assert_eq!(e.fill, Fill::Exact, "{}: {:?}", f.name, e);
        prop_assert_eq!(e.expected, Some(f.expected.len() as u64));
        for (i, want) in f.expected.iter().enumerate() {
            let got = e.get(i);
            prop_assert!(
                got.as_ref().is_some_and(|g| same(g, want)),
                "{} [{}]: got {:?}, want {:?}",
                f.name,
                i,
                got,
                want
            );
        }
    }
    prop_assert_eq!(&msg.fetches, &fetches.to_vec());
    Ok(())
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 96,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn eas_builder_bytes_decode_to_the_request(
        sig in "[a-z_]{0,12}", feeds in feeds(true, true), fetches in fetches()
    ) {
        let req = request(WireFormat::Eas, &sig, &feeds, &fetches);
        let msg = decode_as(&req.to_bytes().unwrap(), WireFormat::Eas, Kind::Request)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&msg.signature_name, &sig);
        check(&msg, &feeds, &fetches)?;
    }

    #[test]
    fn tf_serving_builder_bytes_decode_to_the_request(
        sig in "[a-z_]{0,12}",
        feeds in feeds(false, true),
        fetches in fetches(),
        style in prop_oneof![
            Just(TfsEncoding::Python), Just(TfsEncoding::Typed), Just(TfsEncoding::Content)
        ],
    ) {
        let req = request(WireFormat::TfServing, &sig, &feeds, &fetches);
        let spec = tfreq::ModelSpec {
            name: "m".into(),
            version: Some(3),
            signature_name: sig.clone(),
            ..Default::default()
        };
        let bytes = req.to_tf_serving_bytes_with(&spec, style)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let msg = decode_as(&bytes, WireFormat::TfServing, Kind::Request)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(msg.model_spec.as_ref(), Some(&spec));
        check(&msg, &feeds, &fetches)?;
    }

    /// EAS → TF Serving → EAS keeps every value, and gives back the EAS bytes exactly.
    #[test]
    fn eas_to_tf_serving_and_back(
        sig in "[a-z_]{0,12}",
        feeds in feeds(true, false),
        fetches in fetches(),
        style in prop_oneof![
            Just(TfsEncoding::Python), Just(TfsEncoding::Typed), Just(TfsEncoding::Content)
        ],
    ) {
        let eas = request(WireFormat::Eas, &sig, &feeds, &fetches).to_bytes().unwrap();
        let m1 = decode_as(&eas, WireFormat::Eas, Kind::Request)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let tfs = encode(&m1, WireFormat::TfServing, style)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let m2 = decode_as(&tfs, WireFormat::TfServing, Kind::Request)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        check(&m2, &feeds, &fetches)?;
        prop_assert_eq!(&m2.signature_name, &sig);
        let back = encode(&m2, WireFormat::Eas, TfsEncoding::Python)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back, eas);
    }

    /// TF Serving → EAS → TF Serving, for the dtypes both carry.
    #[test]
    fn tf_serving_to_eas_and_back(
        // Non-empty: an empty ModelSpec is not written back by a converter that never saw it.
        sig in "[a-z_]{1,12}",
        feeds in feeds(true, false),
        fetches in fetches(),
        style in prop_oneof![Just(TfsEncoding::Python), Just(TfsEncoding::Typed)],
    ) {
        let req = request(WireFormat::TfServing, &sig, &feeds, &fetches);
        let tfs = req.to_tf_serving_bytes_with(
            &tfreq::ModelSpec { signature_name: sig.clone(), ..Default::default() },
            style,
        ).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let m1 = decode_as(&tfs, WireFormat::TfServing, Kind::Request)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let eas = encode(&m1, WireFormat::Eas, TfsEncoding::Python)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let m2 = decode_as(&eas, WireFormat::Eas, Kind::Request)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        check(&m2, &feeds, &fetches)?;
        let again = encode(&m2, WireFormat::TfServing, style)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(again, tfs);
    }

    /// bytes → Python text format → prost-reflect's text parser → bytes → our decoder
    /// gives the message decoding the original bytes gives. (No NaNs: text format
    /// prints every NaN as `nan`, so payloads cannot survive it.)
    #[test]
    fn text_format_round_trips(
        sig in "[a-z_]{0,12}",
        feeds in feeds(false, false),
        fetches in fetches(),
        tfs in any::<bool>(),
    ) {
        let (wire, bytes) = if tfs {
            let req = request(WireFormat::TfServing, &sig, &feeds, &fetches);
            (WireFormat::TfServing, req.to_tf_serving_bytes("m").unwrap())
        } else {
            let eas_feeds: Vec<Feed> =
                feeds.into_iter().filter(|f| f.dtype.eas_can_carry()).collect();
            (WireFormat::Eas, request(WireFormat::Eas, &sig, &eas_feeds, &fetches).to_bytes().unwrap())
        };
        let name = tfreq::wire::message_name(wire, Kind::Request);
        let text = tfreq::render::to_text(&bytes, name)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let desc = tfreq::wire::pool().get_message_by_name(name).unwrap();
        let parsed = prost_reflect::DynamicMessage::parse_text_format(desc, &text)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let reencoded = prost::Message::encode_to_vec(&parsed);
        let a = decode_as(&bytes, wire, Kind::Request).unwrap();
        let b = decode_as(&reencoded, wire, Kind::Request)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        // Text format sorts map entries by key; compare tensors by name.
        let sorted = |m: &Message| {
            let mut m = tfreq::fuzzing::normalized(m);
            m.tensors.sort_by(|x, y| x.name.cmp(&y.name));
            m
        };
        prop_assert_eq!(sorted(&a), sorted(&b), "{}", text);
        // And through tfreq's own text-format builder (`tfreq build --from text`): the
        // message it builds prints as the same text. (An empty message prints as no
        // text at all, which the builder refuses as holding no request.)
        if bytes.is_empty() {
            return Ok(());
        }
        let built = tfreq::formats::from_text(&text, Some(wire))
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(built.len(), 1);
        let bytes2 = encode(&built[0], wire, TfsEncoding::AsIs)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let text2 = tfreq::render::to_text(&bytes2, name)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(text2, text);
    }

    /// The executor key: equal to itself, blind to feed and fetch order, and changed
    /// by any name added or removed.
    #[test]
    fn executor_key_sees_sets_not_order(
        feed_names in proptest::collection::btree_set("[a-z]{1,4}", 1..5),
        fetch_names in proptest::collection::btree_set("[a-z]{1,4}", 0..4),
        seed in any::<u64>(),
        extra in "[A-Z]{1,3}",
        eas in any::<bool>(),
    ) {
        let wire = if eas { WireFormat::Eas } else { WireFormat::TfServing };
        let request = |feeds: &[String], fetches: &[String]| -> Message {
            let mut r = TFRequest::for_wire("serving_default", wire);
            for f in feeds {
                r.add_feed(f.clone(), &[1], DType::Float, vec![0.5f32]).unwrap();
            }
            for f in fetches {
                r.add_fetch(f.clone());
            }
            let bytes = if eas { r.to_bytes().unwrap() } else { r.to_tf_serving_bytes("m").unwrap() };
            decode_as(&bytes, wire, Kind::Request).unwrap()
        };
        let key = |feeds: &[String], fetches: &[String]| ExecutorKey::of(&request(feeds, fetches));
        // `tfreq diff`'s verdict for production request `p` against warm-up `w`.
        let verdict = |w: &Message, p: &Message| {
            diff(std::slice::from_ref(w), p, &DiffOptions::default()).verdict
        };
        let feeds: Vec<String> = feed_names.into_iter().collect();
        let fetches: Vec<String> = fetch_names.into_iter().collect();
        let k = key(&feeds, &fetches);
        prop_assert_eq!(&k, &key(&feeds, &fetches));
        let base = request(&feeds, &fetches);
        prop_assert_eq!(verdict(&base, &base), Verdict::SameExecutor);
        // A permutation chosen by the seed.
        let rot = |v: &[String]| {
            let mut v = v.to_vec();
            if !v.is_empty() {
                let n = v.len();
                v.rotate_left((seed as usize) % n);
                if seed & 1 == 1 {
                    v.reverse();
                }
            }
            v
        };
        prop_assert_eq!(&k, &key(&rot(&feeds), &rot(&fetches)));
        prop_assert_eq!(
            verdict(&base, &request(&rot(&feeds), &rot(&fetches))),
            Verdict::SameExecutor
        );
        // TF Serving's empty output_filter fetches "all outputs": against a list, only the
        // model can tell (Undecided); everything else that adds or removes a name is new.
        let changed = |fetches_changed_from_or_to_empty: bool| {
            if !eas && fetches_changed_from_or_to_empty {
                Verdict::Undecided
            } else {
                Verdict::NewExecutor
            }
        };
        // Added names (upper case never collides with the lower-case ones).
        let mut more = feeds.clone();
        more.push(extra.clone());
        prop_assert_ne!(&k, &key(&more, &fetches));
        prop_assert_eq!(verdict(&base, &request(&more, &fetches)), Verdict::NewExecutor);
        prop_assert_eq!(verdict(&request(&more, &fetches), &base), Verdict::NewExecutor);
        let mut more = fetches.clone();
        more.push(extra);
        prop_assert_ne!(&k, &key(&feeds, &more));
        let p = request(&feeds, &more);
        prop_assert_eq!(verdict(&base, &p), changed(fetches.is_empty()));
        // Removed names.
        if feeds.len() > 1 {
            prop_assert_ne!(&k, &key(&feeds[1..], &fetches));
            prop_assert_eq!(verdict(&base, &request(&feeds[1..], &fetches)), Verdict::NewExecutor);
        }
        if !fetches.is_empty() {
            prop_assert_ne!(&k, &key(&feeds, &fetches[1..]));
            let p = request(&feeds, &fetches[1..]);
            prop_assert_eq!(verdict(&base, &p), changed(fetches.len() == 1));
        }
    }
}

/// The requests and responses of `tests/data` (EAS, TF Serving, tf.Example; `.bin` and `.pb`
/// files of at most 64 KiB), read once.
fn seed_messages() -> &'static [Vec<u8>] {
    static SEEDS: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        fn walk(dir: &std::path::Path, out: &mut Vec<Vec<u8>>) {
            let Ok(rd) = std::fs::read_dir(dir) else {
                return;
            };
            let mut paths: Vec<_> = rd.flatten().map(|e| e.path()).collect();
            paths.sort();
            for p in paths {
                if p.is_dir() {
                    walk(&p, out);
                } else if matches!(p.extension().and_then(|e| e.to_str()), Some("bin" | "pb"))
                    && p.metadata().is_ok_and(|m| m.len() <= 64 << 10)
                {
                    out.push(std::fs::read(&p).unwrap_or_default());
                }
            }
        }
        let mut out = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
            &mut out,
        );
        out
    })
}

/// Every combination of told wire format and kind, and none told.
fn told() -> Vec<tfreq::DecodeOptions> {
    let mut out = Vec::new();
    for wire in [None, Some(WireFormat::Eas), Some(WireFormat::TfServing)] {
        for kind in [None, Some(Kind::Request), Some(Kind::Response)] {
            out.push(tfreq::DecodeOptions {
                wire,
                kind,
                ..Default::default()
            });
        }
    }
    out
}

/// `decode_message` (the reading that stops at the first anomaly, src/decode/mod.rs) gives
/// what `decode_with` gives on every seed message, whatever is told.
#[test]
fn decode_message_decides_as_detection_on_the_seeds() {
    let seeds = seed_messages();
    assert!(seeds.len() > 100, "{} seed messages", seeds.len());
    for b in seeds {
        for opts in told() {
            tfreq::fuzzing::same_as_detection(b, opts);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The same on seed messages with bytes changed, cut or inserted: readings that were
    /// clean get anomalies, ties and errors.
    #[test]
    fn decode_message_decides_as_detection_on_changed_seeds(
        i in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..4),
    ) {
        let seeds = seed_messages();
        let mut b = seeds[i.index(seeds.len())].clone();
        for (at, byte, op) in edits {
            if b.is_empty() {
                break;
            }
            let k = at.index(b.len());
            match op {
                0 => b[k] = byte,
                1 => b.truncate(k),
                _ => b.insert(k, byte),
            }
        }
        for opts in told() {
            tfreq::fuzzing::same_as_detection(&b, opts);
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// A `string_val` given as runs of fields, with other fields between the runs and an
    /// element cut short at the end, reads element by element: the run reader
    /// (`Reader::len_run`) takes each element the field loop would, in order, and leaves a
    /// cut one to the loop, which refuses it.
    #[test]
    fn string_val_runs_read_element_by_element(
        runs in prop::collection::vec(prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 0..20), 1..5),
        cut in any::<bool>(),
    ) {
        fn len_field(out: &mut Vec<u8>, tag: u8, payload: &[u8]) {
            out.push(tag);
            let mut n = payload.len();
            while n >= 0x80 {
                out.push((n as u8) | 0x80);
                n >>= 7;
            }
            out.push(n as u8);
            out.extend_from_slice(payload);
        }
        let mut b = Vec::new();
        let mut want: Vec<Vec<u8>> = Vec::new();
        for run in &runs {
            // dtype (field 1, varint) between the runs: DT_STRING.
            b.extend_from_slice(&[0x08, 7]);
            for s in run {
                len_field(&mut b, 0x42, s);
                want.push(s.clone());
            }
        }
        if cut {
            b.extend_from_slice(&[0x42, 5, b'x']);
        }
        let r = tfreq::decode_tensor(Bytes::from(b), WireFormat::TfServing);
        if cut {
            prop_assert!(r.is_err());
        } else {
            let t = r.map_err(|e| TestCaseError::fail(e.to_string()))?;
            let got: Vec<Vec<u8>> = match t.fields.first().map(|(_, v)| v) {
                Some(tfreq::Values::Bytes(v)) => v.iter().map(|x| x.to_vec()).collect(),
                None => Vec::new(),
                other => return Err(TestCaseError::fail(format!("{other:?}"))),
            };
            prop_assert_eq!(got, want);
        }
    }
}
