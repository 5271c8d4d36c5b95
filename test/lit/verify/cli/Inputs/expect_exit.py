"""Run a command and succeed only if it exits with the expected status (lit's `not` accepts any failure).

    expect_exit.py CODE [--closed-stdout] -- COMMAND ARGS...

The command's stdout and stderr pass through. --closed-stdout: its stdout is a pipe whose reader is
already gone (what `| head` leaves behind once head exits), so every write to it fails with EPIPE.
"""
import os
import subprocess
import sys


def main(argv):
    sep = argv.index("--")
    want, closed, cmd = int(argv[0]), "--closed-stdout" in argv[1:sep], argv[sep + 1:]
    stdout = None
    if closed:
        read_end, stdout = os.pipe()
        os.close(read_end)
    sys.stdout.flush()
    got = subprocess.run(cmd, stdout=stdout).returncode
    if stdout is not None:
        os.close(stdout)
    if got != want:
        print(f"expect_exit: {' '.join(cmd)}: exit status {got}, expected {want}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
