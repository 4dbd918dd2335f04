//! The `tf.Example` features a SavedModel's signatures parse, read from its graph.
//!
//! A classify or regress signature (and a predict signature over serialized examples)
//! feeds one `DT_STRING` tensor of serialized `tf.Example`s into a `ParseExample` or
//! `ParseExampleV2` node, whose inputs and attributes are the feature spec: the keys of
//! the dense, sparse (VarLen) and ragged features (constant string tensors), each dense
//! feature's dtype (`Tdense`), shape (`dense_shapes`) and default (an empty default
//! tensor: the feature is required). The op definitions are in TensorFlow's
//! `tensorflow/core/ops/parsing_ops.cc`.
//!
//! The graph (`MetaGraphDef.graph_def`, field 2) is walked with the crate's wire reader;
//! only `GraphDef.node` (1) and `GraphDef.library.function` (2.1) are read:
//! `NodeDef{name 1, op 2, input 3, attr 5}`, `FunctionDef{signature 1 (OpDef: name 1,
//! input_arg 2), node_def 3}`, `AttrValue{list 1, i 3, type 6, shape 7, tensor 8,
//! func 10}`
//! (`tensorflow/core/framework/{graph,node_def,function,attr_value}.proto`). A TF1 graph
//! holds the node itself; a TF2 (Keras) export calls a function
//! (`StatefulPartitionedCall` with attribute `f`) whose body holds it: the call's
//! argument is followed into the function, a few calls deep.
//!
//! ```
//! use tfreq::formats::read_model;
//! let (m, _) = read_model("tests/data/examples/models/tf1_examples".as_ref())?;
//! let spec = m.meta_graphs[0].signatures["serving_default"].examples.clone().unwrap();
//! let x = spec.dense.iter().find(|f| f.key == "x").unwrap();
//! assert_eq!((x.dtype.to_string().as_str(), x.shape.as_slice(), x.default.is_none()), ("DT_FLOAT", &[2][..], true));
//! let age = spec.dense.iter().find(|f| f.key == "age").unwrap();
//! assert_eq!(age.default.as_deref(), Some("0"));
//! assert_eq!(spec.sparse[0].key, "tags");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::decode::decode_tensor;
use crate::dtype::DTypeCode;
use crate::model::WireFormat;
use crate::signature::{DenseFeature, ExampleSpec, MetaGraph, VarLenFeature};
use crate::wire::reader::{Reader, WireValue};

/// Calls followed into functions, at most.
const MAX_CALL_DEPTH: usize = 8;

/// One node of a graph or of a function body.
#[derive(Debug, Default)]
struct Node {
    name: String,
    op: String,
    inputs: Vec<String>,
    attrs: BTreeMap<String, Bytes>,
}

/// A function of the graph's library: its argument names and its nodes.
#[derive(Debug, Default)]
struct Function {
    args: Vec<String>,
    nodes: Vec<Node>,
}

/// A graph: its nodes and its functions by name.
#[derive(Debug, Default)]
struct Graph {
    nodes: Vec<Node>,
    functions: BTreeMap<String, Function>,
}

/// Fills in each signature's [`ExampleSpec`] from the graphs of the `SavedModel` in
/// `pb` (meta graphs in file order, as `meta_graphs`). Anything unreadable leaves the
/// spec unknown.
pub(crate) fn attach(pb: &[u8], meta_graphs: &mut [MetaGraph]) {
    let graphs = fields(&Bytes::copy_from_slice(pb), 2)
        .into_iter()
        .map(|mg| fields(&mg, 2).into_iter().next().map(|g| graph(&g)));
    for (mg, g) in meta_graphs.iter_mut().zip(graphs) {
        let Some(g) = g else { continue };
        for sig in mg.signatures.values_mut() {
            // One serialized-examples input: the tensor ParseExample reads.
            let strings: Vec<&str> = sig
                .inputs
                .values()
                .filter(|t| t.dtype.to_string() == "DT_STRING")
                .map(|t| t.name.as_str())
                .collect();
            if let [input] = strings[..] {
                sig.examples = spec_for(&g, node_name(input));
            }
        }
    }
}

/// The spec of the first `ParseExample` that reads `input` (a node of the graph),
/// through `Identity` nodes and function calls.
fn spec_for(g: &Graph, input: &str) -> Option<ExampleSpec> {
    find(g, &g.nodes, input, 0)
}

fn find(g: &Graph, nodes: &[Node], input: &str, depth: usize) -> Option<ExampleSpec> {
    if depth > MAX_CALL_DEPTH {
        return None;
    }
    for n in nodes {
        let Some(pos) = n.inputs.iter().position(|i| node_name(i) == input) else {
            continue;
        };
        let found = match n.op.as_str() {
            "ParseExampleV2" if pos == 0 => parse_v2(n, nodes),
            "ParseExample" if pos == 0 => parse_v1(n, nodes),
            "Identity" => find(g, nodes, &n.name, depth + 1),
            "PartitionedCall" | "StatefulPartitionedCall" => {
                let f = n.attrs.get("f").and_then(func_name);
                let body = f.and_then(|f| g.functions.get(&f));
                body.and_then(|b| {
                    let arg = b.args.get(pos)?;
                    find(g, &b.nodes, arg, depth + 1)
                })
            }
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// `ParseExampleV2(serialized, names, sparse_keys, dense_keys, ragged_keys,
/// dense_defaults...)`.
fn parse_v2(n: &Node, scope: &[Node]) -> Option<ExampleSpec> {
    let sparse_keys = const_strings(scope, n.inputs.get(2)?)?;
    let dense_keys = const_strings(scope, n.inputs.get(3)?)?;
    let ragged_keys = const_strings(scope, n.inputs.get(4)?)?;
    let defaults: Vec<&String> = n
        .inputs
        .iter()
        .skip(5)
        .filter(|i| !i.starts_with('^'))
        .collect();
    let mut spec = ExampleSpec {
        dense: dense(n, &dense_keys, &defaults, scope)?,
        ..ExampleSpec::default()
    };
    let sparse_types = attr_list_types(n.attrs.get("sparse_types")?);
    spec.sparse = named(&sparse_keys, &sparse_types);
    let ragged_types = n
        .attrs
        .get("ragged_value_types")
        .map(attr_list_types)
        .unwrap_or_default();
    spec.ragged = named(&ragged_keys, &ragged_types);
    Some(spec)
}

/// `ParseExample(serialized, names, sparse_keys × Nsparse, dense_keys × Ndense,
/// dense_defaults × Ndense)`: each key a scalar constant.
fn parse_v1(n: &Node, scope: &[Node]) -> Option<ExampleSpec> {
    let nsparse = usize::try_from(attr_int(n.attrs.get("Nsparse")?)?).ok()?;
    let ndense = usize::try_from(attr_int(n.attrs.get("Ndense")?)?).ok()?;
    let inputs: Vec<&String> = n.inputs.iter().filter(|i| !i.starts_with('^')).collect();
    let key =
        |i: usize| -> Option<String> { const_strings(scope, inputs.get(i)?)?.into_iter().next() };
    let sparse_keys: Vec<String> = (0..nsparse).map(|i| key(2 + i)).collect::<Option<_>>()?;
    let dense_keys: Vec<String> = (0..ndense)
        .map(|i| key(2 + nsparse + i))
        .collect::<Option<_>>()?;
    let defaults: Vec<&String> = inputs.iter().skip(2 + nsparse + ndense).copied().collect();
    let sparse_types = attr_list_types(n.attrs.get("sparse_types")?);
    Some(ExampleSpec {
        dense: dense(n, &dense_keys, &defaults, scope)?,
        sparse: named(&sparse_keys, &sparse_types),
        ragged: Vec::new(),
    })
}

/// The dense features: keys with `Tdense`, `dense_shapes` and each default.
fn dense(
    n: &Node,
    keys: &[String],
    defaults: &[&String],
    scope: &[Node],
) -> Option<Vec<DenseFeature>> {
    let types = attr_list_types(n.attrs.get("Tdense")?);
    let shapes = attr_list_shapes(n.attrs.get("dense_shapes")?);
    if types.len() != keys.len() || shapes.len() != keys.len() {
        return None;
    }
    Some(
        keys.iter()
            .zip(types)
            .zip(shapes)
            .enumerate()
            .map(|(i, ((key, dtype), shape))| DenseFeature {
                key: key.clone(),
                dtype,
                shape,
                default: defaults.get(i).and_then(|d| default_text(scope, d)),
            })
            .collect(),
    )
}

fn named(keys: &[String], types: &[DTypeCode]) -> Vec<VarLenFeature> {
    keys.iter()
        .zip(types)
        .map(|(key, dtype)| VarLenFeature {
            key: key.clone(),
            dtype: *dtype,
        })
        .collect()
}

/// The default a dense feature gets, as text; `None` for an empty default tensor (the
/// feature is required) or one that cannot be read.
fn default_text(scope: &[Node], input: &str) -> Option<String> {
    let t = const_tensor(scope, input, 0)?;
    let e = t.elements(WireFormat::TfServing);
    let n = e.expected.unwrap_or(0);
    if n == 0 {
        return None;
    }
    // As Python prints the default it was given (`0.0`, not `0`).
    let shown: Vec<String> = (0..n.min(8) as usize)
        .filter_map(|i| e.get(i))
        .map(|v| match v {
            crate::model::Scalar::F32(x) => crate::pyfloat::f32_text(x),
            crate::model::Scalar::F64(x) => crate::pyfloat::f64_repr(x),
            v => v.to_string(),
        })
        .collect();
    Some(match (n, shown.as_slice()) {
        (1, [one]) => one.clone(),
        _ if n > 8 => format!("[{}, …] ({n} values)", shown.join(", ")),
        _ => format!("[{}]", shown.join(", ")),
    })
}

/// The string elements of the constant `input` names.
fn const_strings(scope: &[Node], input: &str) -> Option<Vec<String>> {
    let t = const_tensor(scope, input, 0)?;
    let e = t.elements(WireFormat::TfServing);
    (0..e.expected.unwrap_or(0) as usize)
        .map(|i| match e.get(i)? {
            crate::model::Scalar::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
            _ => None,
        })
        .collect()
}

/// The value of the constant `input` names, through `Identity` and `Reshape` (whose
/// first input is the data).
fn const_tensor(scope: &[Node], input: &str, depth: usize) -> Option<crate::model::Tensor> {
    if depth > MAX_CALL_DEPTH {
        return None;
    }
    let name = node_name(input);
    let n = scope.iter().find(|n| n.name == name)?;
    match n.op.as_str() {
        "Const" => {
            let v = n.attrs.get("value")?;
            let tensor = attr_field(v, 8)?;
            decode_tensor(tensor, WireFormat::TfServing).ok()
        }
        "Identity" | "Reshape" => const_tensor(scope, n.inputs.first()?, depth + 1),
        _ => None,
    }
}

/// The node an input names: `name`, `name:1` and `name:output:0` (in a function body)
/// are node `name`; `^name` is a control input.
fn node_name(input: &str) -> &str {
    let s = input.strip_prefix('^').unwrap_or(input);
    s.split(':').next().unwrap_or(s)
}

// ---------------------------------------------------------------------------------------
// The wire walk
// ---------------------------------------------------------------------------------------

/// The length-delimited values of field `number` of a message.
fn fields(msg: &Bytes, number: u32) -> Vec<Bytes> {
    let mut r = Reader::new(msg.clone());
    let mut out = Vec::new();
    while let Ok(Some(f)) = r.next_field() {
        if let (true, WireValue::Len(b)) = (f.number == number, f.value) {
            out.push(b);
        }
    }
    out
}

/// The varints of field `number` (packed or not).
fn varints(msg: &Bytes, number: u32) -> Vec<u64> {
    let mut r = Reader::new(msg.clone());
    let mut out = Vec::new();
    while let Ok(Some(f)) = r.next_field() {
        if f.number != number {
            continue;
        }
        match f.value {
            WireValue::Varint(v) => out.push(v),
            WireValue::Len(b) => {
                let mut p = Reader::new(b);
                while !p.is_empty() {
                    match p.varint() {
                        Ok(v) => out.push(v),
                        Err(_) => break,
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn string(b: &Bytes) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn graph(g: &Bytes) -> Graph {
    let nodes = fields(g, 1).iter().map(node).collect();
    let mut functions = BTreeMap::new();
    for lib in fields(g, 2) {
        for f in fields(&lib, 1) {
            let Some(sig) = fields(&f, 1).into_iter().next() else {
                continue;
            };
            let name = fields(&sig, 1).first().map(string).unwrap_or_default();
            let args = fields(&sig, 2)
                .iter()
                .map(|a| fields(a, 1).first().map(string).unwrap_or_default())
                .collect();
            let nodes = fields(&f, 3).iter().map(node).collect();
            functions.insert(name, Function { args, nodes });
        }
    }
    Graph { nodes, functions }
}

fn node(b: &Bytes) -> Node {
    let mut n = Node {
        name: fields(b, 1).first().map(string).unwrap_or_default(),
        op: fields(b, 2).first().map(string).unwrap_or_default(),
        inputs: fields(b, 3).iter().map(string).collect(),
        attrs: BTreeMap::new(),
    };
    for entry in fields(b, 5) {
        let key = fields(&entry, 1).first().map(string).unwrap_or_default();
        if let Some(v) = fields(&entry, 2).into_iter().next() {
            n.attrs.insert(key, v);
        }
    }
    n
}

/// The length-delimited field `number` of an `AttrValue` (or of its `list`).
fn attr_field(v: &Bytes, number: u32) -> Option<Bytes> {
    fields(v, number).into_iter().next()
}

fn attr_int(v: &Bytes) -> Option<i64> {
    varints(v, 3).first().map(|&x| x as i64)
}

fn attr_list_types(v: &Bytes) -> Vec<DTypeCode> {
    attr_field(v, 1)
        .map(|l| {
            varints(&l, 6)
                .into_iter()
                .map(|t| DTypeCode(t as i32))
                .collect()
        })
        .unwrap_or_default()
}

/// `TensorShapeProto`s of an `AttrValue.list.shape`: each `dim.size` (-1: any).
fn attr_list_shapes(v: &Bytes) -> Vec<Vec<i64>> {
    attr_field(v, 1)
        .map(|l| {
            fields(&l, 7)
                .iter()
                .map(|s| {
                    fields(s, 2)
                        .iter()
                        .map(|d| varints(d, 1).first().map_or(0, |&x| x as i64))
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `AttrValue.func.name`.
fn func_name(v: &Bytes) -> Option<String> {
    let f = attr_field(v, 10)?;
    fields(&f, 1).first().map(string)
}
