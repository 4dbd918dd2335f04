//! Tensor shapes: dimensions, element counts and their display.

use std::fmt;

/// A tensor dimension (TF Serving dims may carry a name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dim {
    /// Size; -1 is unknown.
    pub size: i64,
    /// Name, usually empty.
    pub name: String,
}

/// A tensor's shape as on the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    /// The dims, outermost first.
    pub dims: Vec<Dim>,
    /// TF Serving's `unknown_rank`.
    pub unknown_rank: bool,
    /// Whether the shape submessage was present (the SDKs always write it).
    pub present: bool,
}

impl Shape {
    /// A present shape with these sizes.
    pub fn from_sizes(sizes: &[i64]) -> Self {
        Shape {
            dims: sizes
                .iter()
                .map(|&size| Dim {
                    size,
                    name: String::new(),
                })
                .collect(),
            unknown_rank: false,
            present: true,
        }
    }

    /// The sizes.
    pub fn sizes(&self) -> Vec<i64> {
        self.dims.iter().map(|d| d.size).collect()
    }

    /// The most dims TensorFlow's `TensorShape` takes (`TensorShape::MaxDimensions`).
    pub const MAX_RANK: usize = 254;

    /// Number of elements, or `None` when TensorFlow refuses the shape as a tensor's:
    /// see [`Shape::invalid`].
    ///
    /// ```
    /// use tfreq::Shape;
    /// assert_eq!(Shape::from_sizes(&[]).num_elements(), Some(1));
    /// assert_eq!(Shape::from_sizes(&[2, 0, 5]).num_elements(), Some(0));
    /// assert_eq!(Shape::from_sizes(&[-1, 3]).num_elements(), None);
    /// assert_eq!(Shape::from_sizes(&[i64::MAX, 2]).num_elements(), None);
    /// ```
    pub fn num_elements(&self) -> Option<u64> {
        self.check().ok()
    }

    /// Why TensorFlow refuses this shape for a tensor, or `None` when it takes it.
    ///
    /// `Tensor::FromProto` (what TF Serving and the EAS processors use) rejects an unknown
    /// rank, a negative dim, more than [`Shape::MAX_RANK`] dims, and a dim list whose
    /// running product leaves int64 at any step, even when a later dim is 0
    /// (`TensorShape::IsValid` multiplies left to right and stops at the first overflow).
    /// Checked against TensorFlow 2.21's `ParseTensor` in `tests/data/values/`.
    ///
    /// ```
    /// use tfreq::Shape;
    /// assert!(Shape::from_sizes(&[0, 1 << 62, 4]).invalid().is_none());
    /// let mut dims = vec![2; 63];
    /// dims.push(0);
    /// assert!(Shape::from_sizes(&dims).invalid().unwrap().contains("overflows int64 at dim 62"));
    /// assert!(Shape::from_sizes(&[1; 255]).invalid().unwrap().contains("255 dims"));
    /// ```
    pub fn invalid(&self) -> Option<String> {
        self.check().err()
    }

    fn check(&self) -> Result<u64, String> {
        if self.unknown_rank {
            return Err("unknown_rank is set: a tensor needs a known shape".into());
        }
        if self.dims.len() > Self::MAX_RANK {
            return Err(format!(
                "{} dims: TensorFlow takes at most {}",
                self.dims.len(),
                Self::MAX_RANK
            ));
        }
        let mut n: i64 = 1;
        for (i, d) in self.dims.iter().enumerate() {
            if d.size < 0 {
                return Err(format!(
                    "dim {i} is {}: a tensor's dims are 0 or more",
                    d.size
                ));
            }
            n = n.checked_mul(d.size).ok_or_else(|| {
                format!(
                    "the element count overflows int64 at dim {i} (TensorFlow multiplies the dims in order and refuses the shape even if a later dim is 0)"
                )
            })?;
        }
        // n is non-negative here.
        Ok(n as u64)
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.unknown_rank {
            return f.write_str("unknown_rank");
        }
        f.write_str("[")?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", d.size)?;
        }
        f.write_str("]")
    }
}
