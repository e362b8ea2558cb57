"""Runs one suite of kjit's Python tests (python/tests/test_SUITE*.py) from the build tree:
`python3 python/tests/run.py cpu|gpu`. The gpu suite without a usable GPU prints
`SKIPPED: reason` and exits 77, which CTest reports as skipped."""
import os
import sys
import unittest

suite = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
# The tests name the repository's files relative to its root (kernel_src/rms_norm.cu).
os.chdir(os.path.dirname(os.path.dirname(here)))
import kjit  # noqa: E402 (after the chdir: never the source tree's python/kjit)

print(f"kjit {kjit.__version__} from {os.path.dirname(kjit.__file__)}", flush=True)
if suite == "gpu":
    ok, why = kjit.device_available()
    if not ok:
        print(f"SKIPPED: {why}")
        sys.exit(77)
tests = unittest.defaultTestLoader.discover(here, pattern=f"test_{suite}*.py", top_level_dir=here)
result = unittest.TextTestRunner(verbosity=2).run(tests)
if result.wasSuccessful() and result.testsRun and len(result.skipped) == result.testsRun:
    print(f"SKIPPED: every test skipped ({result.skipped[0][1]})")  # e.g. no torch, no CuPy
    sys.exit(77)
sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
