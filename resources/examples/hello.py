# Python runs as CPython compiled to WebAssembly: no host files, no network.
import json
import sys

data = {"language": "python", "version": sys.version.split()[0], "answer": 6 * 7}
print(json.dumps(data))

# Files written under /out come back to you (the GUI shows them, the CLI writes them with --out).
with open("/out/hello.txt", "w") as f:
    f.write("written inside the sandbox\n")
