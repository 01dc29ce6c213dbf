# without_module.py — a firmware built with BENTO_HAS_MPY=0 has no bentoclaw
# module (scripts/test_cmake.sh runs it on the CMake and the make build).
import claw_rig as rig

t = rig.Checker("BENTO_HAS_MPY=0")
try:
    import bentoclaw  # noqa: F401

    t.check(False, "import bentoclaw fails", "it imported")
except ImportError as e:
    t.check(True, "import bentoclaw fails")
    t.check("bentoclaw" in str(e), "the ImportError names bentoclaw", str(e))
import json  # the rest of the firmware is there

t.eq(json.dumps([1]), "[1]", "the interpreter works")
t.done()
