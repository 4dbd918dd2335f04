//! What a service answered when it refused a call ([`NetError::Refused`](super::NetError)):
//! an HTTP status, a gRPC status code, or the code an EAS queue worker left in a sink item.
//! A caller tells them apart without reading text (`tfreq load` counts its errors by
//! [`Status::kind`]).

use std::fmt;

/// The status of a refused call.
///
/// ```
/// use tfreq::net::Status;
///
/// assert_eq!(Status::Http(503).to_string(), "HTTP 503 Service Unavailable");
/// assert_eq!(Status::Grpc(3).to_string(), "gRPC INVALID_ARGUMENT");
/// assert_eq!(Status::Grpc(3).grpc_code(), Some(3));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// An HTTP status other than 200 (EAS, TF Serving REST).
    Http(u16),
    /// A gRPC status code other than OK (TF Serving's gRPC API), as numbered in grpc's
    /// include/grpcpp/support/status_code_enum.h.
    Grpc(i32),
    /// An EAS queue worker's failed call of the model: the `lastCode` tag of the sink item
    /// (an HTTP status as text, escaped), the item's index and the request's id.
    Worker {
        /// The `lastCode` tag as the worker wrote it.
        code: String,
        /// The sink item's index.
        item: u64,
        /// The request's `X-Eas-Queueservice-Request-Id`.
        request_id: String,
    },
}

impl Status {
    /// The HTTP status, where the service answered one (a worker's numeric code too).
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Status::Http(s) => Some(*s),
            Status::Worker { code, .. } => code.parse().ok(),
            Status::Grpc(_) => None,
        }
    }

    /// The gRPC status code, where the service answered over gRPC.
    pub fn grpc_code(&self) -> Option<i32> {
        match self {
            Status::Grpc(c) => Some(*c),
            _ => None,
        }
    }

    /// The status without what belongs to one call (a worker's item and request id):
    /// `HTTP 503 Service Unavailable`, `gRPC UNAVAILABLE`, `worker 503 Service
    /// Unavailable`. Calls refused alike have the same kind.
    ///
    /// ```
    /// use tfreq::net::Status;
    ///
    /// let a = Status::Worker { code: "503".into(), item: 1, request_id: "a".into() };
    /// let b = Status::Worker { code: "503".into(), item: 2, request_id: "b".into() };
    /// assert_eq!(a.kind(), b.kind());
    /// assert_eq!(a.kind(), "worker 503 Service Unavailable");
    /// ```
    pub fn kind(&self) -> String {
        match self {
            Status::Worker { code, .. } => format!("worker {code}{}", reason(code)),
            _ => self.to_string(),
        }
    }
}

/// ` Service Unavailable` for `503`: the standard reason of a numeric HTTP status.
fn reason(code: &str) -> String {
    code.parse::<u16>()
        .ok()
        .and_then(|c| ::http::StatusCode::from_u16(c).ok())
        .and_then(|s| s.canonical_reason())
        .map(|r| format!(" {r}"))
        .unwrap_or_default()
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Http(s) => write!(f, "HTTP {s}{}", reason(&s.to_string())),
            Status::Grpc(c) => write!(f, "gRPC {}", code_name(*c)),
            Status::Worker {
                code,
                item,
                request_id,
            } => write!(
                f,
                "the worker answered {code}{} (sink item {item}, request {request_id})",
                reason(code)
            ),
        }
    }
}

/// The status code's canonical name (`INVALID_ARGUMENT`), from grpc's
/// include/grpcpp/support/status_code_enum.h; a number outside it is `CODE_N`.
pub(crate) fn code_name(code: i32) -> std::borrow::Cow<'static, str> {
    const NAMES: [&str; 17] = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];
    usize::try_from(code)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| format!("CODE_{code}").into(), |n| (*n).into())
}
