//! Writes a large request file without holding it in memory, for the big-file
//! measurements of the README's Performance section.
//!
//! ```text
//! cargo run --release --example big_request -- eas-float  /tmp/big_eas_float.bin 1024
//! cargo run --release --example big_request -- tfs-content /tmp/big_tfs.bin 1024
//! cargo run --release --example big_request -- eas-int32  /tmp/big_eas_int32.bin 1024
//! ```
//!
//! The last argument is the payload size in MiB. The layout is what the SDKs write:
//! an EAS request (`eas_prediction`: packed `float_val` / `int_val`) or a TF Serving
//! request (`tf.make_tensor_proto`: `tensor_content`), one feed `x` of shape `[1, n]`,
//! fetch `y`. The header is written with `tfreq::wire`'s writing functions, then the values
//! stream out in 1 MiB chunks.

use std::io::{BufWriter, Write};

use tfreq::wire::{put_bytes_field, put_len_header, put_varint, put_varint_field};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, kind, path, mib] = args.as_slice() else {
        return Err("usage: big_request eas-float|tfs-content|eas-int32 FILE MiB".into());
    };
    let payload_len: usize = mib.parse::<usize>()? << 20;
    // Values: floats i * 0.5; int32 token ids 1..=3 bytes as varints.
    let chunk_elems = 1 << 18;
    // (TF Serving?, dtype, value field number, varints?)
    let (tfs, dtype, value_field, varints) = match kind.as_str() {
        "eas-float" => (false, 1, 3, false),
        "tfs-content" => (true, 1, 4, false),
        "eas-int32" => (false, 3, 5, true),
        _ => return Err(format!("unknown kind {kind}").into()),
    };
    let chunk = if varints { int_chunk } else { float_chunk };
    // Whole chunks of 2^18 elements; for varints the chunk's byte length decides.
    let per_chunk = if varints {
        int_chunk(0).len()
    } else {
        4 * chunk_elems
    };
    let chunks: Vec<usize> = (0..payload_len.div_ceil(per_chunk)).collect();
    let (n, payload_len) = (chunks.len() * chunk_elems, chunks.len() * per_chunk);

    let mut shape = Vec::new();
    if tfs {
        for d in [1u64, n as u64] {
            let mut dim = Vec::new();
            put_varint_field(&mut dim, 1, d);
            put_bytes_field(&mut shape, 2, &dim);
        }
    } else {
        let mut dims = Vec::new();
        put_varint(&mut dims, 1);
        put_varint(&mut dims, n as u64);
        put_bytes_field(&mut shape, 1, &dims);
    }
    let mut body_head = Vec::new();
    put_varint_field(&mut body_head, 1, dtype);
    put_bytes_field(&mut body_head, 2, &shape);
    put_len_header(&mut body_head, value_field, payload_len);
    let body_len = body_head.len() + payload_len;
    let mut entry_head = Vec::new();
    put_bytes_field(&mut entry_head, 1, b"x");
    put_len_header(&mut entry_head, 2, body_len);
    let entry_len = entry_head.len() + body_len;

    let mut head = Vec::new();
    if tfs {
        let mut spec = Vec::new();
        put_bytes_field(&mut spec, 1, b"m");
        put_bytes_field(&mut spec, 3, b"serving_default");
        put_bytes_field(&mut head, 1, &spec);
    } else {
        put_bytes_field(&mut head, 1, b"serving_default");
    }
    put_len_header(&mut head, 2, entry_len);
    head.extend_from_slice(&entry_head);
    head.extend_from_slice(&body_head);

    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    out.write_all(&head)?;
    let mut written = 0;
    for i in chunks {
        let c = chunk(i * chunk_elems);
        written += c.len();
        out.write_all(&c)?;
    }
    assert_eq!(written, payload_len);
    let mut tail = Vec::new();
    put_bytes_field(&mut tail, 3, b"y");
    out.write_all(&tail)?;
    out.flush()?;
    eprintln!(
        "{path}: {n} elements, {} bytes",
        head.len() + payload_len + tail.len()
    );
    Ok(())
}

fn float_chunk(first: usize) -> Vec<u8> {
    (first..first + (1 << 18))
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect()
}

fn int_chunk(first: usize) -> Vec<u8> {
    let _ = first; // the same ids in every chunk, so every chunk has the same length
    let mut out = Vec::new();
    for i in 0..1usize << 18 {
        put_varint(&mut out, ((i * 7919) % 100_000) as u64);
    }
    out
}
