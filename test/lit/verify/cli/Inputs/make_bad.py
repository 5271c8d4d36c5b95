"""Write a bad tlx-verify input for the lit tests (the RUN lines stay readable; bytes stay out of .mlir files).

    make_bad.py binary OUT                     bytes that are not text at all
    make_bad.py comment-byte SRC OUT           SRC with a comment line 2 holding the Latin-1 byte 0xe9
    make_bad.py truncate N SRC OUT             the first N bytes of SRC
    make_bad.py delete-line N SRC OUT          SRC without its line N
"""
import sys


def main(kind, *args):
    if kind == "binary":
        data, out = bytes([0xff, 0xfe, 0x00, 0x01]) + b"\x89PNG garbage", args[0]
    else:
        src, out = args[-2:]
        with open(src, "rb") as f:
            text = f.read()
        lines = text.split(b"\n")
        if kind == "comment-byte":
            data = b"\n".join(lines[:1] + [b"// caf\xe9 au lait"] + lines[1:])
        elif kind == "truncate":
            data = text[:int(args[0])]
        elif kind == "delete-line":
            data = b"\n".join(lines[:int(args[0]) - 1] + lines[int(args[0]):])
        else:
            raise SystemExit(f"make_bad.py: unknown kind {kind!r}")
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main(*sys.argv[1:])
