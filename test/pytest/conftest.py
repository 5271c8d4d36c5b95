"""Shared pytest setup: test tooling on the path; property tests derandomized under CI (repeatable results)."""
import os
import sys

from hypothesis import settings

TEST = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# test tooling (synth, the mutation harness) and the hand-aliased kernels of the lit suite
sys.path[:0] = [os.path.join(TEST, "tools"), os.path.join(TEST, "lit", "verify", "Inputs")]

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
