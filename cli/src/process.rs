//! What the command may do to the process it runs in, as its caller says
//! ([`crate::run`]): the `tfreq` binary owns its process; the Python module runs the
//! command inside an interpreter that has its own signal handlers.

use std::sync::atomic::{AtomicBool, Ordering};

/// What the command may do to the process it runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Process {
    handlers: bool,
}

impl Process {
    /// A program of its own (the `tfreq` binary): the command installs its signal
    /// handlers (temporary outputs removed on SIGINT, SIGTERM, SIGHUP and SIGQUIT;
    /// `load` and `record` stopped cleanly on SIGINT) and memory-maps large inputs under
    /// a SIGBUS handler (cli/src/sigbus.rs).
    pub const fn owned() -> Self {
        Process { handlers: true }
    }

    /// Inside another program: the command installs no signal handler, so signals keep
    /// the host's dispositions, and reads large inputs rather than mapping them (a file
    /// truncated under a mapping would raise SIGBUS in the host).
    pub const fn embedded() -> Self {
        Process { handlers: false }
    }
}

static HANDLERS: AtomicBool = AtomicBool::new(true);

/// Sets, for this run, what the command may do to the process.
pub(crate) fn set(p: Process) {
    HANDLERS.store(p.handlers, Ordering::SeqCst);
}

/// Whether the command may install signal handlers (and so map inputs).
pub(crate) fn handlers() -> bool {
    HANDLERS.load(Ordering::SeqCst)
}
