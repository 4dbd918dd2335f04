//! The neutral request model every other part reads.
//!
//! A [`Message`] is one decoded (or built) `PredictRequest` or `PredictResponse` of
//! either wire format. Tensors keep their values as they were stored on the wire
//! (which field, packed bytes viewed without copying), so printers can show the
//! encoding faithfully; [`Tensor::elements`] applies TensorFlow's reading rules
//! (`tensor_content` wins, short lists repeat their last value).

pub use crate::wire::format::{Kind, WireFormat};

/// The signature TF Serving runs when a request names none, and the one a SavedModel
/// exports by default (`tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY`;
/// <https://github.com/tensorflow/tensorflow/blob/master/tensorflow/cc/saved_model/signature_constants.h>).
pub const DEFAULT_SIGNATURE: &str = "serving_default";

/// TF Serving's `ModelSpec`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelSpec {
    /// Model name.
    pub name: String,
    /// `version` (an `Int64Value`): present-with-0 differs from absent.
    pub version: Option<i64>,
    /// `version_label`.
    pub version_label: Option<String>,
    /// `signature_name` (empty means `serving_default`).
    pub signature_name: String,
}

mod example;
mod message;
mod reading;
mod shape;
mod tensor;
mod values;

pub use example::*;
pub use message::*;
pub use reading::*;
pub use shape::*;
pub use tensor::*;
pub use values::*;

#[cfg(test)]
mod tests {
    #[test]
    fn short_bytes_escapes() {
        use super::short_bytes;
        assert_eq!(short_bytes(b"a\nb"), r"a\nb"); // a newline
        assert_eq!(short_bytes(br"a\nb"), r"a\\nb"); // a backslash and an n
        assert_eq!(short_bytes(b"say \"hi\"\xff"), r#"say \"hi\"\xff"#);
    }

    #[test]
    fn decoded_values_compare_whole_and_floats_by_bit_pattern() {
        let t = |v: Values, f: ValueField, d: crate::DType| {
            let mut t = Tensor::new("x", d, Shape::from_sizes(&[2]));
            t.fields.push((f, v));
            t
        };
        let f32s = |v: Vec<f32>| {
            t(
                Values::F32(Elems::Vec(v)),
                ValueField::Float,
                crate::DType::Float,
            )
        };
        let i32s = |v: Vec<i32>| {
            t(
                Values::I32(Ints::Vec(v)),
                ValueField::Int,
                crate::DType::Int32,
            )
        };
        let same = |a: &Tensor, b: &Tensor| {
            a.elements(WireFormat::TfServing)
                .same_stored_run(&b.elements(WireFormat::TfServing))
        };
        assert!(same(&f32s(vec![1.0, f32::NAN]), &f32s(vec![1.0, f32::NAN])));
        assert!(!same(&f32s(vec![0.0, 1.0]), &f32s(vec![-0.0, 1.0])));
        assert!(same(&i32s(vec![3, 4]), &i32s(vec![3, 4])));
        assert!(!same(&i32s(vec![3, 4]), &i32s(vec![3, 5])));
        // Another field is not compared here (the caller reads element by element).
        assert!(!same(&i32s(vec![0, 0]), &f32s(vec![0.0, 0.0])));
    }

    use super::*;
    use crate::dtype::{DType, ValueField};
    use bytes::Bytes;

    /// How a test run stores one tensor's values.
    #[derive(Clone, Copy, Debug)]
    enum Layout {
        /// `int_val` of DT_INT32, `half_val` of DT_HALF, `int64_val`, `uint32_val`,
        /// `uint64_val`: packed varints.
        Varint(DType, ValueField),
        /// `float_val` as a little-endian run.
        Float,
        /// `tensor_content` of DT_BOOL: any non-zero byte is true.
        BoolContent,
    }

    /// A varint as written canonically, or padded to up to ten bytes (protobuf reads
    /// both as the same number).
    fn put_padded(out: &mut Vec<u8>, v: u64, pad: usize) {
        let mut bytes = Vec::new();
        crate::wire::writer::put_varint(&mut bytes, v);
        let pad = pad.min(10 - bytes.len());
        if pad > 0 {
            *bytes.last_mut().unwrap() |= 0x80;
            bytes.extend(std::iter::repeat_n(0x80, pad - 1));
            bytes.push(0);
        }
        out.extend(bytes);
    }

    /// A tensor of shape [n] holding `values` (with each varint padded by `pads[i]`).
    fn stored(layout: Layout, values: &[u64], pads: &[usize], n: i64) -> Tensor {
        let shape = Shape::from_sizes(&[n]);
        match layout {
            Layout::Varint(d, f) => {
                let mut b = Vec::new();
                for (i, &v) in values.iter().enumerate() {
                    put_padded(&mut b, v, pads.get(i).copied().unwrap_or(0));
                }
                let p = crate::wire::reader::PackedVarints::new(Bytes::from(b), 0).unwrap();
                let v = match f {
                    ValueField::Int64 => Values::I64(Ints::Packed(p)),
                    ValueField::UInt32 => Values::U32(Ints::Packed(p)),
                    ValueField::UInt64 => Values::U64(Ints::Packed(p)),
                    _ => Values::I32(Ints::Packed(p)),
                };
                let mut t = Tensor::new("x", d, shape);
                t.fields.push((f, v));
                t
            }
            Layout::Float => {
                let f: Vec<f32> = values.iter().map(|&v| f32::from_bits(v as u32)).collect();
                let mut t = Tensor::new("x", DType::Float, shape);
                t.fields.push((ValueField::Float, Values::F32(view(&f))));
                t
            }
            Layout::BoolContent => {
                let mut t = Tensor::new("x", DType::Bool, shape);
                t.content = Some(values.iter().map(|&v| v as u8).collect::<Vec<u8>>().into());
                t
            }
        }
    }

    fn layout() -> impl proptest::strategy::Strategy<Value = Layout> {
        use proptest::prelude::*;
        prop_oneof![
            Just(Layout::Varint(DType::Int32, ValueField::Int)),
            Just(Layout::Varint(DType::Half, ValueField::Half)),
            Just(Layout::Varint(DType::Int64, ValueField::Int64)),
            Just(Layout::Varint(DType::UInt32, ValueField::UInt32)),
            Just(Layout::Varint(DType::UInt64, ValueField::UInt64)),
            Just(Layout::Float),
            Just(Layout::BoolContent),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// The byte-first comparison finds the first differing element exactly where
        /// reading every element finds it — other bytes for the same element (a padded
        /// varint, an int_val 2^32 apart, a half_val 2^16 apart, another true byte)
        /// included.
        #[test]
        fn the_first_difference_is_the_one_element_reads_find(
            layout in layout(),
            values in proptest::collection::vec(0u64..300, 1..120),
            edits in proptest::collection::vec((0usize..120, 0u8..5, 1u64..4), 0..4),
            pads in proptest::collection::vec(0usize..3, 0..120),
            n in 0i64..130,
            span in 0usize..130,
        ) {
            let a = stored(layout, &values, &[], n);
            let mut other = values.clone();
            let mut pads_b = vec![0; values.len()];
            for &(at, op, k) in &edits {
                let at = at % values.len();
                match op {
                    // Another value.
                    0 => other[at] = other[at].wrapping_add(k),
                    // The same element in other bytes.
                    1 => other[at] += k << 32,
                    2 => other[at] += k << 16,
                    3 => other[at] = if other[at] as u8 == 0 { 0 } else { 255 - k },
                    _ => pads_b[at] = pads.get(at).copied().unwrap_or(1).max(1),
                }
            }
            let b = stored(layout, &other, &pads_b, n);
            let (ea, eb) = (a.elements(WireFormat::TfServing), b.elements(WireFormat::TfServing));
            let want = (0..span.min(ea.stored).min(eb.stored))
                .find(|&i| !same_scalar(ea.stored_get(i), eb.stored_get(i)));
            proptest::prop_assert_eq!(ea.first_stored_difference(&eb, span), want);
        }
    }

    /// Runs big enough to be compared on every core and checked in pieces: a varint
    /// run whose bytes first differ past its middle in a padded but equal value, then
    /// in an equal int_val 2^32 apart, and last in a value.
    #[test]
    fn big_runs_find_the_first_difference_past_equal_elements_in_other_bytes() {
        let n = crate::par::PARALLEL_MIN / 2 + 12_345;
        let values: Vec<u64> = (0..n as u64)
            .map(|i| (i * 2_654_435_761) % 100_000)
            .collect();
        let layout = Layout::Varint(DType::Int32, ValueField::Int);
        let a = stored(layout, &values, &[], n as i64);
        let mut other = values.clone();
        let mut pads = vec![0; n];
        pads[n / 2 + 7] = 3;
        other[n / 2 + 1000] += 1 << 32;
        let b = stored(layout, &other, &pads, n as i64);
        let (ea, eb) = (
            a.elements(WireFormat::TfServing),
            b.elements(WireFormat::TfServing),
        );
        assert_eq!(ea.first_stored_difference(&eb, n), None);
        other[n - 3] += 1;
        let c = stored(layout, &other, &pads, n as i64);
        let ec = c.elements(WireFormat::TfServing);
        assert_eq!(ea.first_stored_difference(&ec, n), Some(n - 3));
        assert_eq!(ea.first_stored_difference(&ec, n - 3), None);
        assert_eq!(ea.first_stored_difference(&ea.clone(), n), None);
        // The same bytes read as another dtype are other elements.
        let mut f = Tensor::new("x", DType::Float, Shape::from_sizes(&[2]));
        f.content = Some(Bytes::from_static(&[0, 0, 128, 63, 0, 0, 0, 64]));
        let mut i = f.clone();
        i.dtype = DType::Int32.into();
        let (ef, ei) = (
            f.elements(WireFormat::TfServing),
            i.elements(WireFormat::TfServing),
        );
        assert_eq!(ef.first_stored_difference(&ei, 2), Some(0));
    }

    fn view<T: LeElem>(v: &[T]) -> Elems<T> {
        Elems::Le(le_bytes(v))
    }

    #[test]
    fn a_view_reads_back_what_was_written() {
        let f: Vec<f32> = (0..1000).map(|i| i as f32 * -0.37 + 1e-40).collect();
        let d: Vec<f64> = (0..1000).map(|i| (i as f64).sqrt() - 3.0).collect();
        let b: Vec<i8> = (0..=255u8).map(|x| x as i8).collect();
        let u: Vec<u64> = (0..1000).map(|i| u64::MAX - i * 0x0101_0101).collect();
        assert_eq!(view(&f).to_vec(), f);
        assert_eq!(view(&d).to_vec(), d);
        assert_eq!(view(&b).to_vec(), b);
        assert_eq!(view(&u).to_vec(), u);
        assert_eq!(view(&f).iter().collect::<Vec<_>>(), f);
        assert_eq!(view(&u).iter().rev().collect::<Vec<_>>(), {
            let mut r = u.clone();
            r.reverse();
            r
        });
        let e = view(&d);
        assert_eq!(e.iter().len(), 1000);
        assert_eq!(e.iter().sum::<f64>(), d.iter().sum::<f64>());
        for (i, x) in e.iter().enumerate() {
            assert_eq!(e.get(i), Some(x));
        }
        // NaN payloads and signed zeros come out bit for bit.
        let odd = [f32::from_bits(0x7fc0_0001), -0.0, f32::from_bits(1)];
        let back = view(&odd).to_vec();
        assert!(
            back.iter()
                .zip(&odd)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
    }

    #[test]
    fn a_view_of_a_partial_element_ignores_the_tail() {
        // The decoder only makes whole-element views; len() and the readers agree anyway.
        let e: Elems<f32> = Elems::Le(Bytes::from_static(&[0, 0, 128, 63, 0, 0]));
        assert_eq!(e.len(), 1);
        assert_eq!(e.to_vec(), [1.0]);
        assert_eq!(e.iter().collect::<Vec<_>>(), [1.0]);
        let empty: Elems<f64> = Elems::Le(Bytes::new());
        assert!(empty.to_vec().is_empty() && empty.iter().next().is_none());
    }

    #[test]
    fn bulk_le_writes_match_element_writes() {
        fn check<T: LeElem>(v: &[T]) {
            let mut bulk = vec![9u8];
            put_le_slice(&mut bulk, v);
            let mut each = vec![9u8];
            for &x in v {
                x.put_le(&mut each);
            }
            assert_eq!(bulk, each);
        }
        check(&[1.5f32, -0.0, f32::NAN, f32::MAX]);
        check(&[1.5f64, -2.25]);
        check(&[1i32, -1, i32::MIN]);
        check(&[u64::MAX, 7]);
        check(&[0x1234u16, 0xfffe]);
        check::<i8>(&[]);
    }
}
