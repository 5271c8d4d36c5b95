"""tlx-opt: run tlx-alias passes on generic-form MLIR (placeholder until the pass registry lands)."""
import sys


def main(argv=None):
    print("tlx-opt: no passes registered yet", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
