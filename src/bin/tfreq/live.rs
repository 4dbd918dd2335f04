//! What `send`, `replay` and `check --model URL` share: the connection arguments and
//! reading request files with their bytes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use tfreq::formats::{entries, ContainerKind, Content, Hint};
use tfreq::net::{Client, EasAuth, NetError, Options, Protocol, Target};
use tfreq::{DecodeOptions, Kind, Message};

use crate::common::{in_file, Failure};

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
    /// Seconds to wait for a connection and for each answer.
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Trust the CA certificates of this PEM file for https:// and grpcs:// (a private
    /// CA's), instead of the usual public roots.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
}

impl Conn {
    /// The target and client options.
    pub fn resolve(&self) -> Result<(Target, Options), Failure> {
        let protocol = self.protocol.map(|p| match p {
            ProtocolArg::Eas => Protocol::Eas,
            ProtocolArg::Grpc => Protocol::Grpc,
            ProtocolArg::Rest => Protocol::Rest,
        });
        let target =
            Target::parse(&self.to, protocol).map_err(|e| Failure::msg(format!("--to {e}")))?;
        if !(self.timeout > 0.0 && self.timeout.is_finite()) {
            return Err(Failure::msg(
                "--timeout must be a positive number of seconds",
            ));
        }
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
            timeout: Duration::from_secs_f64(self.timeout),
            model_name: self.model_name.clone(),
            ca_cert: read_cacert(self.cacert.as_deref())?,
        };
        Ok((target, opts))
    }

    /// Connects (exit 2 when the service cannot be reached).
    pub fn connect(&self) -> Result<Client, Failure> {
        let (target, opts) = self.resolve()?;
        Client::connect(target, opts).map_err(|e| Failure::msg(format!("{}: {e}", self.to)))
    }
}

/// The PEM file of `--cacert`, checked to hold at least one certificate (exit 2 when
/// it cannot be read or holds none).
pub fn read_cacert(path: Option<&Path>) -> Result<Option<Bytes>, Failure> {
    let Some(p) = path else {
        return Ok(None);
    };
    let label = format!("--cacert {}", p.display());
    let pem = std::fs::read(p).map_err(|e| in_file(&label, e))?;
    tfreq::net::read_ca(&pem).map_err(|e| match e {
        NetError::BadRequest(why) => in_file(&label, Failure::msg(why)),
        other => in_file(&label, other),
    })?;
    Ok(Some(Bytes::from(pem)))
}

/// One request of a file, with its own bytes.
pub struct Req {
    /// The file.
    pub file: String,
    /// The file, or the file and record.
    pub label: String,
    /// A short name for saved files (`faq_prod`, `warmup.3`).
    pub stem: String,
    /// The request.
    pub message: Message,
    /// Its bytes in the file.
    pub bytes: Bytes,
}

/// Reads every request of each file (bare, TFRecord warm-up or text format).
pub fn load_requests(paths: &[PathBuf]) -> Result<Vec<Req>, Failure> {
    let mut out = Vec::new();
    for p in paths {
        let file = p.display().to_string();
        let data = tfreq::io::read_input(p).map_err(|e| in_file(&file, e))?;
        let it = entries(data, DecodeOptions::default(), Hint::for_path(p));
        let kind = it.kind();
        let stem = file_stem(p);
        let mut found = Vec::new();
        for e in it {
            let e = e.map_err(|e| in_file(&file, e))?;
            let label = e.label(kind);
            if let Content::Message(m) = e.content {
                found.push((e.index, label, m, e.bytes));
            }
        }
        if found.is_empty() {
            return Err(in_file(&file, Failure::msg("holds no request")));
        }
        let many = found.len() > 1 || kind == ContainerKind::TfRecord;
        for (index, label, message, bytes) in found {
            if message.kind != Kind::Request {
                return Err(in_file(
                    &file,
                    Failure::msg(format!("holds a {}, not a request", message.kind)),
                ));
            }
            let (label, stem) = if many {
                (format!("{file} ({label})"), format!("{stem}.{index}"))
            } else {
                (file.clone(), stem.clone())
            };
            out.push(Req {
                file: file.clone(),
                label,
                stem,
                message,
                bytes,
            });
        }
    }
    Ok(out)
}

fn file_stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "stdin".into())
}

/// A network error as the command's failure: a refusal is returned for the caller to
/// report (exit 1), anything else ends the run (exit 2).
pub fn fatal(to: &str, e: NetError) -> Failure {
    Failure::msg(format!("{to}: {e}"))
}
