//! Printing a model's signatures the way `saved_model_cli show --all` does
//! (<https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/tools/saved_model_cli.py>), without the ops line and the concrete functions, which only the
//! full graph has.

use std::io::{self, Write};

use crate::signature::{MetaGraph, ModelSignatures, TensorSpec};

/// Writes every meta graph and signature in `saved_model_cli show --all` layout: meta
/// graphs sorted by tags, signatures and aliases sorted.
///
/// ```
/// let (m, _) = tfreq::formats::savedmodel::read_model("tests/data/models/two_sigs".as_ref())?;
/// let mut out = Vec::new();
/// tfreq::render::signature::write_saved_model_cli(&mut out, &m)?;
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains("signature_def['predict_images']:"));
/// assert!(text.contains("        shape: (-1, 28, 28, 1)\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_saved_model_cli(out: &mut dyn Write, m: &ModelSignatures) -> io::Result<()> {
    let mut graphs: Vec<&MetaGraph> = m.meta_graphs.iter().collect();
    graphs.sort_by(|a, b| a.tags.cmp(&b.tags));
    for mg in graphs {
        writeln!(out)?;
        writeln!(
            out,
            "MetaGraphDef with tag-set: '{}' contains the following SignatureDefs:",
            mg.tag_set()
        )?;
        for (key, sig) in &mg.signatures {
            writeln!(out)?;
            writeln!(out, "signature_def['{key}']:")?;
            writeln!(
                out,
                "  The given SavedModel SignatureDef contains the following input(s):"
            )?;
            for (alias, t) in &sig.inputs {
                tensor(out, "inputs", alias, t)?;
            }
            writeln!(
                out,
                "  The given SavedModel SignatureDef contains the following output(s):"
            )?;
            for (alias, t) in &sig.outputs {
                tensor(out, "outputs", alias, t)?;
            }
            writeln!(out, "  Method name is: {}", sig.method_name)?;
        }
    }
    Ok(())
}

fn tensor(out: &mut dyn Write, which: &str, alias: &str, t: &TensorSpec) -> io::Result<()> {
    writeln!(out, "    {which}['{alias}'] tensor_info:")?;
    writeln!(out, "        dtype: {}", t.dtype)?;
    writeln!(out, "        shape: {}", t.shape_text())?;
    writeln!(out, "        name: {}", t.name)
}
