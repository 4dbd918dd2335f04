//! Reading inputs without copying, and writing outputs atomically.
//!
//! Files are memory-mapped and handed on as [`Bytes`], so tensor data is never copied
//! on the way in; `-` reads standard input. Outputs go to a temporary file in the
//! target's directory and are renamed over it, so a reader never sees half a file and
//! a failed run leaves the old file in place. Inputs are never opened for writing.

use std::io::{Read, Write};
use std::path::Path;

use bytes::Bytes;

use crate::error::Error;

fn io_err(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Reads a whole input: a file (memory-mapped) or `-` for standard input.
///
/// ```
/// let b = tfreq::io::read_input("tests/data/eas/spec_vector.bin".as_ref())?;
/// assert_eq!(b.len(), 45);
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn read_input(path: &Path) -> Result<Bytes, Error> {
    if path == Path::new("-") {
        let mut v = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut v)
            .map_err(|e| io_err(path, e))?;
        return Ok(Bytes::from(v));
    }
    let file = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
    let meta = file.metadata().map_err(|e| io_err(path, e))?;
    if meta.is_dir() {
        return Err(io_err(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "is a directory"),
        ));
    }
    if meta.len() == 0 || !meta.is_file() {
        // Pipes, devices and empty files cannot be mapped: read them.
        let mut v = Vec::new();
        (&file).read_to_end(&mut v).map_err(|e| io_err(path, e))?;
        return Ok(Bytes::from(v));
    }
    // SAFETY: the map is read-only. If another process truncates the file while we
    // read it, reads past the new end fault (SIGBUS); that is the documented cost of
    // mapping, accepted here as every mmap-based reader does.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io_err(path, e))?;
    Ok(Bytes::from_owner(map))
}

/// Writes `data` to `path` atomically (temporary file + rename); `-` writes stdout.
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<(), Error> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        out.write_all(data).map_err(|e| io_err(path, e))?;
        return out.flush().map_err(|e| io_err(path, e));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| io_err(path, e))?;
    tmp.write_all(data).map_err(|e| io_err(path, e))?;
    tmp.as_file().sync_all().map_err(|e| io_err(path, e))?;
    tmp.persist(path).map_err(|e| io_err(path, e.error))?;
    Ok(())
}
