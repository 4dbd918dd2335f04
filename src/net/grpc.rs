//! TF Serving's gRPC `PredictionService` (tensorflow_serving/apis/prediction_service.proto,
//! <https://github.com/tensorflow/serving>): `Predict` and `GetModelMetadata`.
//!
//! `Predict` sends the request's protobuf bytes as they are (a codec that passes bytes
//! through), so what goes on the wire is exactly what the file holds, unknown fields
//! included, and the answer is decoded by tfreq's own decoder. The answer limit is
//! [`Options::max_response`](super::Options::max_response), by default TF Serving's own
//! ([`MAX_MESSAGE`], 2 GiB − 1) instead of tonic's 4 MiB; tonic checks each message's
//! length prefix against it before buffering the message.

use std::time::Duration;

use bytes::{Buf, BufMut, Bytes};
use prost::Message as _;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

use super::web::{chain, explain};
use super::{NetError, MAX_MESSAGE};
use crate::signature::{MetaGraph, ModelSignatures, SERVE_TAG};
use crate::wire::{tf, tfs};

/// `PredictionService/Predict`.
pub const PREDICT: &str = "/tensorflow.serving.PredictionService/Predict";
/// `PredictionService/GetModelMetadata`.
pub const GET_MODEL_METADATA: &str = "/tensorflow.serving.PredictionService/GetModelMetadata";

/// A codec that sends and receives messages as bytes, unparsed.
#[derive(Debug, Clone, Copy, Default)]
pub struct RawCodec;

/// [`RawCodec`]'s both halves.
#[derive(Debug, Clone, Copy, Default)]
pub struct RawCoder;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCoder;
    type Decoder = RawCoder;
    fn encoder(&mut self) -> RawCoder {
        RawCoder
    }
    fn decoder(&mut self) -> RawCoder {
        RawCoder
    }
}

impl Encoder for RawCoder {
    type Item = Bytes;
    type Error = tonic::Status;
    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for RawCoder {
    type Item = Bytes;
    type Error = tonic::Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, tonic::Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

/// A gRPC connection to TF Serving.
pub struct Grpc {
    client: tonic::client::Grpc<Channel>,
    endpoint: String,
    limit: usize,
}

impl std::fmt::Debug for Grpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grpc")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Grpc {
    /// Connects (`https://` endpoints with TLS: the webpki roots, or, given `ca_pem`,
    /// the CA certificates it holds instead).
    /// Answers are read up to `limit` bytes.
    pub async fn connect(
        endpoint: &str,
        timeout: Duration,
        ca_pem: Option<&[u8]>,
        limit: usize,
    ) -> Result<Grpc, NetError> {
        let mut ep = Endpoint::from_shared(endpoint.to_string())
            .map_err(|e| NetError::BadUrl(format!("{endpoint}: {e}")))?
            .connect_timeout(timeout)
            .tcp_nodelay(true);
        if endpoint.starts_with("https://") {
            let tls = match ca_pem {
                None => ClientTlsConfig::new().with_webpki_roots(),
                Some(pem) => {
                    super::web::roots(pem)?; // a clear error for a file with no certificate
                    ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem))
                }
            };
            ep = ep
                .tls_config(tls)
                .map_err(|e| NetError::BadUrl(format!("{endpoint}: {}", chain(&e))))?;
        }
        let channel = tokio::time::timeout(timeout, ep.connect())
            .await
            .map_err(|_| NetError::Timeout(timeout))?
            .map_err(|e| NetError::Unreachable(format!("{endpoint}: {}", explain(chain(&e)))))?;
        let client = tonic::client::Grpc::new(channel)
            .max_decoding_message_size(limit.min(MAX_MESSAGE))
            .max_encoding_message_size(MAX_MESSAGE);
        Ok(Grpc {
            client,
            endpoint: endpoint.to_string(),
            limit: limit.min(MAX_MESSAGE),
        })
    }

    async fn unary(
        &mut self,
        path: &'static str,
        body: Bytes,
        timeout: Duration,
    ) -> Result<Bytes, NetError> {
        let call = async {
            self.client
                .ready()
                .await
                .map_err(|e| NetError::Unreachable(format!("{}: {}", self.endpoint, chain(&e))))?;
            let mut req = tonic::Request::new(body);
            req.set_timeout(timeout);
            self.client
                .unary(req, ::http::uri::PathAndQuery::from_static(path), RawCodec)
                .await
                .map(tonic::Response::into_inner)
                .map_err(|s| status_error(&self.endpoint, s, timeout, self.limit))
        };
        tokio::time::timeout(timeout, call)
            .await
            .map_err(|_| NetError::Timeout(timeout))?
    }

    /// `Predict`: the request's bytes, the response's bytes.
    pub async fn predict(&mut self, body: Bytes, timeout: Duration) -> Result<Bytes, NetError> {
        self.unary(PREDICT, body, timeout).await
    }

    /// `GetModelMetadata` for `signature_def`: the served model's signatures (one meta
    /// graph tagged `serve`, as for the REST metadata JSON).
    pub async fn metadata(
        &mut self,
        model: &str,
        timeout: Duration,
    ) -> Result<ModelSignatures, NetError> {
        let req = tfs::GetModelMetadataRequest {
            model_spec: Some(tfs::ModelSpec {
                name: model.to_string(),
                ..Default::default()
            }),
            metadata_field: vec!["signature_def".into()],
        };
        let raw = self
            .unary(
                GET_MODEL_METADATA,
                Bytes::from(req.encode_to_vec()),
                timeout,
            )
            .await?;
        read_metadata(raw)
    }
}

/// Reads a `GetModelMetadataResponse` for `signature_def`: the served model's
/// signatures, as one meta graph tagged `serve`.
pub fn read_metadata(raw: Bytes) -> Result<ModelSignatures, NetError> {
    let bad =
        |e: &dyn std::fmt::Display| NetError::BadResponse(format!("GetModelMetadata answer: {e}"));
    let resp = tfs::GetModelMetadataResponse::decode(raw).map_err(|e| bad(&e))?;
    let any = resp
        .metadata
        .get("signature_def")
        .ok_or_else(|| bad(&"no \"signature_def\" in metadata"))?;
    let map = tfs::SignatureDefMap::decode(any.value.clone()).map_err(|e| bad(&e))?;
    let defs: std::collections::BTreeMap<String, tf::SignatureDef> =
        map.signature_def.into_iter().collect();
    Ok(ModelSignatures {
        meta_graphs: vec![MetaGraph {
            tags: vec![SERVE_TAG.to_string()],
            signatures: crate::formats::savedmodel::signatures(defs),
        }],
    })
}

/// tonic's own status for a message over the decoding limit (tonic's
/// `codec/decode.rs`): "Error, decoded message length too large: found N bytes, the
/// limit is: M bytes".
const TONIC_TOO_LARGE: &str = "Error, decoded message length too large";

/// A gRPC status as an error (see [`status_of`]); `source` is whether tonic made the
/// status of a transport error rather than reading it from the server.
fn status_error(endpoint: &str, s: tonic::Status, timeout: Duration, limit: usize) -> NetError {
    use std::error::Error as _;
    let transport = s.source().map(chain);
    status_of(
        endpoint,
        s.code() as i32,
        s.message().as_bytes(),
        transport.as_deref(),
        s.metadata().contains_key("grpc-status"),
        timeout,
        limit,
    )
}

/// A gRPC status as an error: no connection is [`NetError::Unreachable`], the deadline
/// passing (the server's DEADLINE_EXCEEDED, or tonic's own "Timeout expired")
/// [`NetError::Timeout`], a message over `limit` [`NetError::TooLarge`], and a peer that
/// does not speak gRPC (a transport error under the status, or an HTTP answer with no
/// `grpc-status`) [`NetError::NotGrpc`]; any other status is the server's refusal, its
/// message escaped.
///
/// `code` is the status code's number, `message` its message, `transport` the transport
/// error tonic made it of (if any), `from_server` whether the answer had a
/// `grpc-status`.
pub fn status_of(
    endpoint: &str,
    code: i32,
    message: &[u8],
    transport: Option<&str>,
    from_server: bool,
    timeout: Duration,
    limit: usize,
) -> NetError {
    use tonic::Code;
    let code = Code::from_i32(code);
    let text = super::shown(message);
    let msg = String::from_utf8_lossy(message);
    match code {
        Code::DeadlineExceeded => return NetError::Timeout(timeout),
        Code::Cancelled if msg.contains("Timeout expired") => return NetError::Timeout(timeout),
        Code::OutOfRange if !from_server && msg.starts_with(TONIC_TOO_LARGE) => {
            return NetError::TooLarge {
                limit: limit as u64,
            }
        }
        _ => {}
    }
    if let Some(t) = transport {
        let t = super::shown(t.as_bytes());
        // A broken, refused or reset connection is unreachable; a protocol error (tonic
        // makes INTERNAL or UNKNOWN of one) means the other end answered in something
        // that is not HTTP/2 gRPC.
        let garbled = matches!(code, Code::Internal | Code::Unknown) || is_protocol_error(&t);
        return if !garbled {
            NetError::Unreachable(format!("{endpoint}: {}", explain(t)))
        } else {
            NetError::NotGrpc(format!(
                "{endpoint} does not answer as a gRPC server ({t}); is this the gRPC port (TF Serving's 8500, not REST's 8501)?"
            ))
        };
    }
    if !from_server && msg.contains("grpc-status header missing") {
        return NetError::NotGrpc(format!(
            "{endpoint} answered over HTTP/2 without a gRPC status ({text}); is this the gRPC port (TF Serving's 8500, not REST's 8501)?"
        ));
    }
    match code {
        Code::Unavailable => NetError::Unreachable(format!("{endpoint}: {}", explain(text))),
        code => NetError::Refused {
            status: format!("gRPC {}", code_name(code)),
            message: text,
        },
    }
}

/// Whether a transport error says the peer spoke something else than HTTP/2.
fn is_protocol_error(t: &str) -> bool {
    [
        "protocol error",
        "frame",
        "HTTP/1",
        "preface",
        "invalid",
        "PROTOCOL_ERROR",
    ]
    .iter()
    .any(|p| t.contains(p))
}

/// The status code's canonical name (`INVALID_ARGUMENT`).
fn code_name(c: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match c {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(
        code: tonic::Code,
        msg: &str,
        transport: Option<&str>,
        from_server: bool,
    ) -> NetError {
        let t = Duration::from_secs(1);
        status_of(
            "http://h:1",
            code as i32,
            msg.as_bytes(),
            transport,
            from_server,
            t,
            4,
        )
    }

    #[test]
    fn who_made_the_status_decides_the_error() {
        use tonic::Code;
        // The server's own status is its refusal, its message escaped.
        let e = status(Code::NotFound, "no \x1b[31m model", None, true);
        assert!(e.is_refusal());
        assert!(
            e.to_string()
                .ends_with(r"gRPC NOT_FOUND: no \u{1b}[31m model"),
            "{e}"
        );
        // tonic's limit check is the limit; the same words from a server are not.
        let too = "Error, decoded message length too large: found 9 bytes, the limit is: 4 bytes";
        assert_eq!(
            status(Code::OutOfRange, too, None, false),
            NetError::TooLarge { limit: 4 }
        );
        assert!(status(Code::OutOfRange, too, None, true).is_refusal());
        // A protocol error under the status: no gRPC there.
        let h2 = "transport error: http2 error: connection error detected: frame with invalid size";
        assert!(matches!(
            status(Code::Internal, "h2", Some(h2), false),
            NetError::NotGrpc(_)
        ));
        assert!(matches!(
            status(
                Code::Unimplemented,
                "grpc-status header missing, mapped from HTTP status code 404",
                None,
                false
            ),
            NetError::NotGrpc(_)
        ));
        // A refused connection is unreachable.
        let refused = "transport error: tcp connect error: Connection refused";
        assert!(matches!(
            status(Code::Unavailable, "x", Some(refused), false),
            NetError::Unreachable(_)
        ));
    }
}
