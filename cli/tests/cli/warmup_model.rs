//! `tfreq warmup --model`: warm-ups made from a model alone, held to what TensorFlow did
//! with them. tests/data/gen/make_warmup_models.py ran each committed warm-up under
//! tests/data/warmup/ through TensorFlow the way TF Serving's warm-up loader runs it, and
//! wrote TensorFlow's answer for every record to answers.json. Here tfreq makes each
//! warm-up again and must write the same bytes (so TensorFlow's answers hold for what
//! tfreq writes today), every record must have been answered ok, `check` of each against
//! its model must be clean, and `diff` of production logs against them must find every
//! production executor the warm-up covers warmed.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn root() -> PathBuf {
    crate::common::root().to_path_buf()
}

fn answers() -> Vec<Value> {
    let p = root().join("tests/data/warmup/answers.json");
    let s = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str::<Value>(&s)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// Runs tfreq in the repository root: (exit code, stdout, stderr).
fn tfreq_in_root(args: &[String]) -> (i32, String, String) {
    let o = common::tfreq()
        .current_dir(root())
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn records(path: &Path) -> usize {
    let bytes = tfreq::read_input(path).unwrap();
    let opts = tfreq::formats::InputOptions::new().for_path(path);
    tfreq::formats::read(bytes, &opts)
        .unwrap()
        .into_records()
        .unwrap()
        .len()
}

#[test]
fn tfreq_writes_the_warmups_tensorflow_ran_and_every_record_succeeded() {
    let dir = tempfile::tempdir().unwrap();
    let rows = answers();
    assert!(rows.len() >= 17, "{} warm-ups", rows.len());
    for row in &rows {
        let name = row["name"].as_str().unwrap();
        let model = row["model"].as_str().unwrap();
        let Some(file) = row["file"].as_str() else {
            continue;
        };
        let out = dir.path().join(file);
        let mut args: Vec<String> = vec!["warmup".into(), "--model".into(), model.into()];
        args.extend(strs(&row["args"]));
        args.extend(["-o".into(), out.display().to_string()]);
        let (code, _, err) = tfreq_in_root(&args);
        assert_eq!(Some(code as i64), row["exit"].as_i64(), "{name}: {err}");
        // What tfreq says (notes, what was left out, what it wrote) is what it said
        // when TensorFlow ran its file.
        let committed = format!("tests/data/warmup/{file}");
        let said: Vec<String> = err
            .lines()
            .map(|l| l.replace(&out.display().to_string(), &committed))
            .collect();
        assert_eq!(said, strs(&row["stderr"]), "{name}");
        let want = std::fs::read(root().join(&committed)).unwrap();
        let got = std::fs::read(&out).unwrap();
        assert!(
            got == want,
            "{name}: tfreq now writes other bytes than {committed}, which TensorFlow ran: run tests/data/gen/make_warmup_models.py"
        );
        // TensorFlow answered every record, and every answer is a success: the model
        // loads with this warm-up.
        let recs = row["records"].as_array().unwrap();
        let n = if file.ends_with(".bin") {
            1
        } else {
            records(&out)
        };
        assert_eq!(recs.len(), n, "{name}");
        for (i, r) in recs.iter().enumerate() {
            assert_eq!(r["result"], "ok", "{name} record {i}: {r}");
        }
    }
}

#[test]
fn a_string_input_that_is_not_examples_is_named_and_nothing_is_written() {
    let row = answers()
        .into_iter()
        .find(|r| r["name"] == "text_input_no_values")
        .unwrap();
    assert_eq!(row["exit"], 2);
    let err = strs(&row["stderr"]).join("\n");
    assert!(err.contains("input \"q\" is a string"), "{err}");
    // tfreq says the same today.
    let (code, _, now) = tfreq_in_root(&[
        "warmup".into(),
        "--model".into(),
        row["model"].as_str().unwrap().into(),
        "-o".into(),
        "-".into(),
    ]);
    assert_eq!(code, 2);
    assert_eq!(now.lines().collect::<Vec<_>>(), strs(&row["stderr"]));
}

#[test]
fn check_of_each_warmup_against_its_model_is_clean() {
    for row in answers() {
        let Some(file) = row["file"].as_str() else {
            continue;
        };
        let model = row["model"].as_str().unwrap();
        let (code, v) = common::json(&[
            "check",
            "--model",
            &root().join(model).display().to_string(),
            &common::s(&format!("warmup/{file}")),
        ]);
        assert_eq!(code, 0, "{file}: {v}");
        assert_eq!(v["counts"]["errors"], 0, "{file}: {v}");
        assert_eq!(v["counts"]["warnings"], 0, "{file}: {v}");
    }
}

/// The verdict of every production request of a `diff`.
fn verdicts(args: &[&str]) -> Vec<(String, String)> {
    let (_, v) = common::json(args);
    v["requests"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap().to_string(),
                r["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn production_requests_find_their_executors_warmed() {
    let s = common::s;
    // The XLA model, at every allowed batch size: same executor, no size left cold.
    // `xla_clean` checks a warm-up against its production log with the model.
    let xla_clean = |warmup: &str| {
        let (code, v) = common::json(&[
            "diff",
            warmup,
            &s("xla/prod.tfrecord"),
            "--allowed-batch-sizes",
            "1,4,8",
            "--model",
            &s("models/xla"),
        ]);
        assert_eq!(code, 0, "{warmup}: {v}");
        assert_eq!(v["verdict"], "same-executor", "{warmup}: {v}");
        assert_eq!(v["counts"]["warnings"], 0, "{warmup}: {v}");
    };
    xla_clean(&s("warmup/xla.tfrecord"));
    // tf.Example production logs (classify and regress) of tf1_examples.
    for log in [
        "examples/logs/classify_log.tfrecord",
        "examples/logs/regress_log.tfrecord",
    ] {
        let got = verdicts(&[
            "diff",
            &s("warmup/tf1_examples.tfrecord"),
            &s(log),
            "--model",
            &s("examples/models/tf1_examples"),
        ]);
        assert!(!got.is_empty());
        for (label, verdict) in got {
            assert_eq!(verdict, "same-executor", "{label}");
        }
    }
    // The batch-size log of batch_x2 (production lists its one output, the warm-up fetches
    // every output; the model says they are the same), with TF Serving's batching
    // parameters: every padded size is warmed, and the one error is production's request
    // of 33 rows, past max_batch_size.
    let (_, v) = common::json(&[
        "diff",
        &s("warmup/batch_x2.tfrecord"),
        &s("examples/batch/predict_log.tfrecord"),
        "--model",
        &s("examples/models/batch_x2"),
        "--batching-parameters-file",
        &s("examples/batch/batching_parameters.txt"),
    ]);
    let reqs = v["requests"].as_array().unwrap();
    assert!(!reqs.is_empty());
    for r in reqs {
        assert_eq!(r["verdict"], "same-executor", "{r}");
    }
    assert_eq!(v["counts"]["warnings"], 0, "{v}");
    assert_eq!(v["counts"]["errors"], 1, "{v}");
    assert!(v.to_string().contains("BATCH_TOO_LARGE"), "{v}");
    // A warm-up that names no model warms the model production names.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("xla.tfrecord").display().to_string();
    let args = [
        "warmup",
        "--model",
        &s("models/xla"),
        "--allowed-batch-sizes",
        "1,4,8",
        "-o",
        &out,
    ];
    assert_eq!(common::run3(&args).0, 0);
    xla_clean(&out);
    // half_plus_two's own warm-up taken as production: every signature it calls is
    // warmed; its multi-inference request (classify and regress over one input) runs
    // another executor, which a warm-up made from the signatures does not make.
    let got = verdicts(&[
        "diff",
        &s("warmup/half_plus_two.tfrecord"),
        &s("models/half_plus_two/assets.extra/tf_serving_warmup_requests"),
        "--model",
        &s("models/half_plus_two"),
    ]);
    assert_eq!(got.len(), 5);
    for (i, (label, verdict)) in got.iter().enumerate() {
        let want = if i == 4 {
            "new-executor"
        } else {
            "same-executor"
        };
        assert_eq!(verdict, want, "{label}");
    }
}

#[test]
fn with_production_logs_only_the_signatures_never_called_are_added() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.tfrecord");
    // Production calls tf1_examples' classify signature only.
    let (code, _, err) = common::run3(&[
        "warmup",
        &common::s("examples/logs/classify_log.tfrecord"),
        "--model",
        &common::s("examples/models/tf1_examples"),
        "--model-name",
        "tf1_examples",
        "-o",
        &out.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "added 2 requests for the signatures production never called: predict, regress"
        ),
        "{err}"
    );
    let (_, v) = common::json(&["inspect", &out.display().to_string()]);
    let kinds: Vec<&str> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["log_type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.last(), Some(&"regress_log"), "{kinds:?}");
    assert!(kinds.contains(&"predict_log"), "{kinds:?}");
}

/// A bare EAS warm-up holds one request: production that left a signature of the model
/// uncalled is refused with the way out, not written and then refused; as TFRecord, the
/// added request is written and counted.
#[test]
fn an_uncalled_signature_and_a_bare_eas_output_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("warm_up.bin");
    let prod = common::s("eas/faq_prod.bin");
    let model = common::s("models/two_sigs");
    let o = out.display().to_string();
    let (code, _, err) = common::run3(&["warmup", &prod, "--model", &model, "-o", &o]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("production never called predict_images of the model, and a bare eas file holds one request: write --wire tfrecord"),
        "{err}"
    );
    assert!(!out.exists(), "nothing is written when refused");
    let (code, _, err) = common::run3(&[
        "warmup", &prod, "--model", &model, "--wire", "tfrecord", "-o", &o,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("tfreq: wrote 2 requests covering 1 of 1 request"),
        "{err}"
    );
}

/// The `$ tfreq warmup --model …` lines of docs/warmup.md's opening text block, each
/// with the lines it prints (stderr; `$out` stands for the output directory).
#[test]
fn the_documented_one_command_warmups_print_what_is_shown() {
    let page = std::fs::read_to_string(root().join("docs/warmup.md")).unwrap();
    let start = page
        .find("```text\n$ tfreq warmup --model")
        .expect("docs/warmup.md shows `tfreq warmup --model` and its output");
    let block = &page[start + "```text\n".len()..];
    let block = &block[..block.find("```").unwrap()];
    let mut runs: Vec<(String, Vec<String>)> = Vec::new();
    for line in block.lines() {
        match line.strip_prefix("$ ") {
            Some(cmd) => runs.push((cmd.to_string(), Vec::new())),
            None => runs.last_mut().unwrap().1.push(line.to_string()),
        }
    }
    assert!(runs.len() >= 2);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().display().to_string();
    for (cmd, shown) in runs {
        let args: Vec<String> = cmd
            .split_whitespace()
            .skip(1)
            .map(|w| w.trim_matches('"').replace("$out", &out))
            .collect();
        let (code, _, err) = tfreq_in_root(&args);
        assert_eq!(code, 0, "{cmd}: {err}");
        let got: Vec<String> = err.lines().map(|l| l.replace(&out, "$out")).collect();
        assert_eq!(got, shown, "docs/warmup.md: the output of `{cmd}` is stale");
    }
}

/// `--values` from a captured request (an EAS request of production) fills the faq
/// model's string inputs, which are not tf.Examples; `--wire eas` writes the bare
/// request the EAS processor reads, with every output as an explicit fetch, and `diff`
/// finds production's executor warmed by it.
#[test]
fn values_from_a_captured_request_make_an_eas_warmup_of_productions_executor() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("warm_up.bin").display().to_string();
    let (code, _, err) = common::run3(&[
        "warmup",
        "--model",
        &common::s("models/faq"),
        "--values",
        &common::s("eas/faq_prod.bin"),
        "--wire",
        "eas",
        "-o",
        &out,
    ]);
    assert_eq!(code, 0, "{err}");
    let m = tfreq::decode(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(m.wire, tfreq::WireFormat::Eas);
    assert_eq!(
        m.fetches,
        ["model_version_id", "sorted_labels", "sorted_probs"]
    );
    let (code, v) = common::json(&["diff", &out, &common::s("eas/faq_prod.bin")]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["verdict"], "same-executor", "{v}");
    // Without the values, nothing can be made: exit 2, naming the input.
    let (code, _, err) = common::run3(&["warmup", "--model", &common::s("models/faq"), "-o", &out]);
    assert_eq!(code, 2);
    assert!(err.contains("input \"input_holder\" is a string"), "{err}");
}
