//! `tfreq signature PATH [--format human|json]`

use crate::args::PlainFormat as Format;
use std::io::Write;
use std::path::PathBuf;

use crate::common::{Outcome, stdout};
use crate::report::load_model;

#[derive(clap::Args)]
pub struct Args {
    /// A SavedModel directory (or saved_model.pb), TF Serving's metadata JSON, or
    /// `saved_model_cli show --all` text.
    path: PathBuf,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Also show the tf.Example features each signature parses (read from the graph's
    /// ParseExample; JSON always has them as `examples`).
    #[arg(long)]
    examples: bool,
}

pub fn run(a: Args) -> Outcome {
    let model = load_model(&a.path)?;
    let mut out = stdout();
    match a.format {
        Format::Human if a.examples => tfreq::render::write_with_examples(&mut out, &model)?,
        Format::Human => tfreq::render::write_saved_model_cli(&mut out, &model)?,
        Format::Json => writeln!(out, "{}", tfreq::json_string(&model, true))?,
    }
    out.flush()?;
    Ok(0)
}
