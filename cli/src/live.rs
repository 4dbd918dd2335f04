//! What `send`, `replay` and `check --model URL` share: the connection arguments and
//! reading request files with their bytes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use tfreq::net::{Client, EasAuth, NetError, Options, Protocol, Target};

use crate::common::{Failure, in_file, net_text};

/// `--protocol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ProtocolArg {
    /// PAI-EAS: POST of the EAS PredictRequest bytes.
    Eas,
    /// TF Serving gRPC.
    Grpc,
    /// TF Serving REST JSON.
    Rest,
}

/// `--auth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthArg {
    /// The token itself in Authorization (the EAS warm-up page's curl).
    Raw,
    /// The EAS SDK's signature (Content-MD5, Date, Authorization: EAS HMAC-SHA1).
    Signed,
}

/// How to reach the service.
#[derive(clap::Args, Debug)]
pub struct Conn {
    /// The service: http(s)://HOST/api/predict/SERVICE (EAS), grpc://HOST:PORT or
    /// grpcs://HOST:PORT (TF Serving gRPC), http://HOST:PORT/v1/models/NAME[/versions/N]
    /// (TF Serving REST).
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// The protocol, instead of reading it from the URL.
    #[arg(long, value_enum)]
    pub protocol: Option<ProtocolArg>,
    /// The EAS token (default: the TFREQ_TOKEN environment variable, which keeps it out
    /// of shell history).
    #[arg(long)]
    pub token: Option<String>,
    /// How the EAS token is sent.
    #[arg(long, value_enum, default_value_t = AuthArg::Raw)]
    pub auth: AuthArg,
    /// TF Serving model name, over the request's model_spec.name.
    #[arg(long)]
    pub model_name: Option<String>,
    /// Seconds to wait for a connection and for each answer (with --async, for the
    /// whole wait of each request): more than 0, at most 86400 (24 hours).
    #[arg(long, default_value = "30", value_name = "SECONDS", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Trust the CA certificates of this PEM file (at most 1 MiB) for https:// and
    /// grpcs:// (a private CA's), instead of the usual public roots.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Refuse an answer larger than this (exit 2), reading no further: bytes, or a
    /// number with K, M or G (powers of 1024). Default: 256M over HTTP (EAS, REST,
    /// --async), and TF Serving's own gRPC limit (2G minus 1 byte) over gRPC.
    #[arg(long, value_name = "SIZE", value_parser = crate::input::parse_size)]
    pub max_response_size: Option<u64>,
}

/// The longest `--timeout`: [`tfreq::net::MAX_TIMEOUT`] (24 hours).
const MAX_SECONDS: f64 = 24.0 * 3600.0;

/// A number of seconds as a deadline: a finite number above 0 and at most 24 hours
/// (`1e20`, `nan`, `inf`, `-1` and `0` are usage errors, never a panic).
pub fn parse_seconds(s: &str) -> Result<Duration, String> {
    let bad = |why: &str| format!("{s:?}: {why}");
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| bad("expected a number of seconds, e.g. 30 or 0.5"))?;
    if !v.is_finite() {
        return Err(bad("expected a finite number of seconds"));
    }
    if v <= 0.0 {
        return Err(bad("expected a number of seconds above 0"));
    }
    if v > MAX_SECONDS {
        return Err(bad("at most 86400 seconds (24 hours)"));
    }
    // In range, so try_from cannot fail; a value that rounds to no time at all is refused.
    match Duration::try_from_secs_f64(v) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(bad("expected a number of seconds above 0")),
    }
}

impl Conn {
    /// The target and client options.
    pub fn resolve(&self) -> Result<(Target, Options), Failure> {
        let protocol = self.protocol.map(|p| match p {
            ProtocolArg::Eas => Protocol::Eas,
            ProtocolArg::Grpc => Protocol::Grpc,
            ProtocolArg::Rest => Protocol::Rest,
        });
        let target = Target::parse(&self.to, protocol)
            .map_err(|e| Failure::msg(format!("--to {}", net_text(&e))))?;
        let token = self
            .token
            .clone()
            .or_else(|| std::env::var("TFREQ_TOKEN").ok().filter(|t| !t.is_empty()));
        let opts = Options {
            token,
            auth: match self.auth {
                AuthArg::Raw => EasAuth::Raw,
                AuthArg::Signed => EasAuth::Signed,
            },
            timeout: self.timeout,
            model_name: self.model_name.clone(),
            ca_cert: read_cacert(self.cacert.as_deref())?,
            max_response: self.max_response_size,
        };
        Ok((target, opts))
    }

    /// Connects (exit 2 when the service cannot be reached).
    pub fn connect(&self) -> Result<Client, Failure> {
        let (target, opts) = self.resolve()?;
        Client::connect(target, opts)
            .map_err(|e| Failure::msg(format!("{}: {}", self.to, net_text(&e))))
    }
}

/// The largest `--cacert` file: 1 MiB, far more than a bundle of every public root
/// (about 200 KiB), so `/dev/zero` or a wrong huge file is refused at once.
pub const MAX_CACERT: u64 = 1 << 20;

/// The PEM file of `--cacert`, read up to [`MAX_CACERT`] and checked to hold at least
/// one certificate (exit 2 when it cannot be read, is larger, or holds none).
pub fn read_cacert(path: Option<&Path>) -> Result<Option<Bytes>, Failure> {
    let Some(p) = path else {
        return Ok(None);
    };
    let label = format!("--cacert {}", p.display());
    let opts = tfreq::ReadOptions::default().max_size(MAX_CACERT);
    let pem = tfreq::read_file(p, &opts).map_err(|e| match e.root() {
        tfreq::ErrorDetail::Io { source, .. }
            if source.kind() == std::io::ErrorKind::FileTooLarge =>
        {
            in_file(
                &label,
                Failure::msg("larger than 1 MiB: not a PEM file of CA certificates"),
            )
        }
        _ => in_file(&label, e),
    })?;
    tfreq::net::read_ca(&pem).map_err(|e| match e {
        NetError::BadRequest(why) => in_file(&label, Failure::msg(why)),
        other => in_file(&label, other),
    })?;
    Ok(Some(pem))
}

/// A network error as the command's failure: a refusal is returned for the caller to
/// report (exit 1), anything else ends the run (exit 2).
pub fn fatal(to: &str, e: NetError) -> Failure {
    Failure::msg(format!("{to}: {}", net_text(&e)))
}
