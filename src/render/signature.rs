//! Printing a model's signatures the way `saved_model_cli show --all` does
//! (<https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/tools/saved_model_cli.py>), without the ops line and the concrete functions, which only the
//! full graph has.

use std::io::{self, Write};

use crate::signature::{MetaGraph, ModelSignatures, TensorSpec};

/// Writes every meta graph and signature in `saved_model_cli show --all` layout: meta
/// graphs sorted by tags, signatures and aliases sorted.
///
/// ```
/// let (m, _) = tfreq::formats::read_model("tests/data/models/two_sigs".as_ref())?;
/// let mut out = Vec::new();
/// tfreq::render::write_saved_model_cli(&mut out, &m)?;
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains("signature_def['predict_images']:"));
/// assert!(text.contains("        shape: (-1, 28, 28, 1)\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_saved_model_cli(out: &mut dyn Write, m: &ModelSignatures) -> io::Result<()> {
    write_signatures(out, m, false)
}

/// [`write_saved_model_cli`], and under each signature that parses serialized
/// `tf.Example`s the features it reads (see [`crate::signature::ExampleSpec`]): tfreq's
/// addition to `saved_model_cli`'s text, which
/// [`crate::formats::from_saved_model_cli`] reads back.
///
/// ```
/// let (m, _) = tfreq::formats::read_model("tests/data/models/half_plus_two".as_ref())?;
/// let mut out = Vec::new();
/// tfreq::render::write_with_examples(&mut out, &m)?;
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains("    x: DT_FLOAT [1], required\n    x2: DT_FLOAT [1], default 0.0\n"), "{text}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_with_examples(out: &mut dyn Write, m: &ModelSignatures) -> io::Result<()> {
    write_signatures(out, m, true)
}

fn write_signatures(out: &mut dyn Write, m: &ModelSignatures, examples: bool) -> io::Result<()> {
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
            if let (true, Some(spec)) = (examples, &sig.examples) {
                write_examples(out, spec)?;
            }
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

/// The `tf.Example` features a signature parses (not part of `saved_model_cli`'s
/// output: tfreq reads them from the graph, see `crate::formats::savedmodel`).
fn write_examples(out: &mut dyn Write, spec: &crate::signature::ExampleSpec) -> io::Result<()> {
    writeln!(out, "  {}", crate::formats::savedmodel::EXAMPLES_HEADER)?;
    for f in &spec.dense {
        let shape: Vec<String> = f.shape.iter().map(|d| d.to_string()).collect();
        let default = match &f.default {
            None => "required".to_string(),
            Some(d) => format!("default {}", crate::escape::sanitize(d)),
        };
        writeln!(
            out,
            "    {}: {} [{}], {default}",
            crate::escape::escape(&f.key),
            f.dtype,
            shape.join(", ")
        )?;
    }
    for f in &spec.sparse {
        writeln!(
            out,
            "    {}: {}, variable length (sparse)",
            crate::escape::escape(&f.key),
            f.dtype
        )?;
    }
    for f in &spec.ragged {
        writeln!(
            out,
            "    {}: {}, ragged",
            crate::escape::escape(&f.key),
            f.dtype
        )?;
    }
    Ok(())
}
