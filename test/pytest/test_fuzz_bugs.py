"""The regression folder test/fuzz/bugs/: one minimal kernel per bug the fuzzers (issue 12's and ours) found.

Each file says what it reproduces in its header, the target (`# target: 90|100`) and what must happen
(`# expect: ok` with `# views: {name: [address of buffer i]}`, `# expect: error FRAGMENT` or `# expect: warning`;
errors and warnings at the line marked `# @bad`). Each compiles in a forked child (test/fuzz/kernel_runner.py),
so a reproducer that aborts the process fails its test instead of ending the run.
"""
import glob
import json
import os
import re

import pytest

import kernel_runner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BUGS = sorted(glob.glob(os.path.join(ROOT, "test", "fuzz", "bugs", "*.py")))


pytestmark = pytest.mark.usefixtures("fuzz_runner")


def header(src, key):
    m = re.search(rf"^# {key}: (.*)$", src, re.M)
    return m.group(1).strip() if m else None


def test_the_folder_holds_the_reproducers():
    assert len(BUGS) >= 10


@pytest.mark.parametrize("path", BUGS, ids=os.path.basename)
def test_reproducer(path):
    src = open(path).read()
    expect, arch = header(src, "expect"), int(header(src, "target"))
    o = kernel_runner.run(src, {"x_ptr": "*fp32"}, arch, name=os.path.basename(path)[:-3].replace("-", "_"))
    assert o.left == [], o.left
    if expect == "ok":
        assert o.status == "ok", (o.error, o.stderr)
        assert o.views == json.loads(header(src, "views"))
        return
    bad = f"{o.path}:{kernel_runner.line_of(src, '# @bad')}"
    if expect == "warning":
        assert o.status == "ok", (o.error, o.stderr)
        assert bad in {where for _, where in o.warnings}, o.warnings
        return
    kind, _, fragment = expect.partition(" ")
    assert kind == "error"
    assert o.status == "tlx-error", (o.status, o.error, o.stderr[-2000:])
    assert o.error["src"] == bad and fragment in o.error["message"], o.error["message"]
