#!/usr/bin/env bash
# The image builder ships with the package (so `playground images build` works from a wheel);
# this path stays for scripts and habits. See resources/images/build.sh.
exec bash "$(dirname "$0")/../../resources/images/build.sh" "$@"
