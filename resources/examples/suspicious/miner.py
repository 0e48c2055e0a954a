# A "benchmark" that behaves like a crypto miner: it burns CPU, starts workers and calls a mining pool.
# Do not trust it: look at the Attempts tab after running it.
# (It refuses to run outside Sandbox Playground, where /work is its folder.)
import hashlib
import os
import socket
import subprocess
import sys
import time

if os.getcwd() != "/work":
    sys.exit("this example only runs inside Sandbox Playground")

WORKER = "import hashlib; [hashlib.sha256(b'x').digest() for _ in iter(int, 1)]"
for _ in range(4):
    try:
        subprocess.Popen([sys.executable, "-c", WORKER])
    except OSError:
        pass
try:
    socket.create_connection(("pool.minexmr.test", 4444), timeout=5)
except OSError:
    pass

hashes, nonce, started = 0, 0, time.monotonic()
while time.monotonic() - started < 1.0:
    hashlib.sha256(f"block{nonce}".encode()).digest()
    nonce += 1
    hashes += 1
print(f"benchmark: {hashes / 1.0:.0f} hashes/s")
