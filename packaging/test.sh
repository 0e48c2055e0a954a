#!/usr/bin/env bash
# The whole test suite: set-up (idempotent), lint, types, every test for real.
# This is the README's test command and exactly what .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."

bash packaging/setup.sh --dev

echo "== ruff" >&2
.venv/bin/ruff check playground backends tests bench packaging
echo "== mypy --strict (core, backends)" >&2
.venv/bin/mypy --strict -p playground.core -p backends

echo "== pytest" >&2
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" = 5 ]; then
    echo "pytest collected no tests: that is a failure, not a pass" >&2
    exit 1
fi
exit "$status"
