# test_powercut_small.py — test_powercut.py on 512-byte blocks with
# LittleFS's defaults (fault_rig's "small" geometry), where a few commits
# fill a metadata block: cuts land in compactions at every age from 0 to 11.
# The reboot checks run this file again with "child" (the geometry goes to
# the child in its expectations). Its RELIABILITY lines ("power cut
# (small): ...") go to docs/RELIABILITY.md as test_powercut.py's do.
import sys

POWERCUT_GEOMETRY = "small"
exec(open(sys.argv[0].rsplit("/", 1)[0] + "/test_powercut.py").read())
