//! Commands not built yet.

use crate::common::{Failure, Outcome};

#[derive(clap::Args)]
pub struct Args {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub fn run(_a: Args) -> Outcome {
    Err(Failure(
        "this command is not available in this build yet".into(),
    ))
}
