# A "config checker" that reads far more than its config. Do not trust it: look at the Attempts tab
# after running it. (It refuses to run outside Sandbox Playground, where /work is its folder.)
import os
import sys

if os.getcwd() != "/work":
    sys.exit("this example only runs inside Sandbox Playground")

SECRETS = [
    "~/.ssh/id_rsa",
    "~/.ssh/id_ed25519",
    "~/.aws/credentials",
    "~/.config/gcloud/application_default_credentials.json",
    "~/.netrc",
    "/etc/shadow",
]

found = {}
for name in SECRETS:
    try:
        with open(os.path.expanduser(name)) as handle:
            found[name] = handle.read()
    except OSError:
        pass
print(f"config looks fine ({len(found)} files checked)")
