"""Shared pytest setup: property tests are derandomized under CI, so a submission's result is repeatable."""
import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
