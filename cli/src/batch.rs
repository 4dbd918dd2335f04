//! `--allowed-batch-sizes` and `--batching-parameters-file` (diff, keys, warmup): the
//! batching rule of a TF Serving started with `--enable_batching`
//! ([`tfreq::analysis::BatchRule`]).

use std::path::PathBuf;

use tfreq::analysis::BatchRule;

use crate::common::{Failure, in_file};

#[derive(clap::Args, Default)]
pub struct BatchArgs {
    /// TF Serving's allowed_batch_sizes, comma-separated (e.g. 1,8,32; the last one is
    /// max_batch_size): report the padded batch sizes requests run at (each request's
    /// 0th dimension rounded up to the first allowed size at least it).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', num_args = 1)]
    pub allowed_batch_sizes: Option<Vec<u64>>,
    /// TF Serving's --batching_parameters_file (BatchingParameters in protobuf text:
    /// allowed_batch_sizes, max_batch_size, enable_large_batch_splitting,
    /// max_execution_batch_size, pad_variable_length_inputs): as --allowed-batch-sizes.
    #[arg(long, value_name = "FILE", conflicts_with = "allowed_batch_sizes")]
    pub batching_parameters_file: Option<PathBuf>,
}

impl BatchArgs {
    /// The rule asked for and where it came from, if any.
    pub fn rule(&self) -> Result<Option<(BatchRule, String)>, Failure> {
        if let Some(sizes) = &self.allowed_batch_sizes {
            let r = BatchRule::from_allowed(sizes)
                .map_err(|e| Failure::msg(format!("--allowed-batch-sizes: {e}")))?;
            return Ok(Some((r, "--allowed-batch-sizes".into())));
        }
        let Some(p) = &self.batching_parameters_file else {
            return Ok(None);
        };
        let name = p.display().to_string();
        let opts = tfreq::ReadOptions::default().max_size(tfreq::formats::MAX_LEN as u64);
        let bytes = tfreq::read_file(p, &opts).map_err(Failure::from)?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|e| in_file(&name, Failure::msg(format!("not UTF-8 text: {e}"))))?;
        let params = tfreq::formats::parse_params(text)
            .map_err(|e| in_file(&name, Failure::msg(e.to_string())))?;
        let r = BatchRule::from_params(&params).map_err(|e| in_file(&name, Failure::msg(e.0)))?;
        Ok(Some((r, name)))
    }
}
