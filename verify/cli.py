"""tlx-verify: Z3 safety proof over dumped IR (see issue: Z3 safety proof)."""
import sys


def main(argv=None):
    print("tlx-verify: not yet implemented", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
