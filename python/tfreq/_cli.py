"""The ``tfreq`` command of the Python package: the same command line as the Rust binary
(``cargo install``), run in this process by the extension module."""

import sys


def main() -> None:
    """Runs ``tfreq`` with ``sys.argv`` and exits with its status."""
    from ._tfreq import run_cli

    argv = ["tfreq"] + sys.argv[1:]
    # This process ends with the command: it may install its signal handlers.
    code = run_cli(argv, own_process=True)
    # Output already written by Rust went straight to the file descriptors; Python's own
    # buffers are empty, so a closed pipe cannot raise at exit.
    sys.exit(code)


if __name__ == "__main__":
    main()
