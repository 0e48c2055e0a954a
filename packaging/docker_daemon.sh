#!/usr/bin/env bash
# Start, stop or query the Docker daemon the Docker tier's tests talk to.
#
#   bash packaging/docker_daemon.sh start    # ensure a daemon answers (start one if we may)
#   bash packaging/docker_daemon.sh stop     # stop the daemon *we* started, by its PID
#   bash packaging/docker_daemon.sh status   # exit 0 when a daemon answers
#
# Guarantees:
# * `start` is idempotent: when any daemon already answers (Docker, Podman's
#   Docker-compatible socket, DOCKER_HOST) it is used as it is and nothing is
#   started. Only as root, and only when nothing answers, it installs Debian's
#   docker.io if dockerd is missing (apt-get update first), starts dockerd in
#   the background (log: $PLAYGROUND_DOCKERD_LOG), waits up to
#   $PLAYGROUND_DOCKERD_TIMEOUT seconds (default 60) for `docker info`, and
#   records the PID in $PLAYGROUND_DOCKERD_PIDFILE.
# * `stop` only stops a daemon whose PID this script recorded and that is
#   still a dockerd; a daemon we did not start is never touched.
# * Package installation never starts services behind our back (policy-rc.d).
set -euo pipefail

PIDFILE="${PLAYGROUND_DOCKERD_PIDFILE:-/tmp/sandbox-playground-dockerd.pid}"
LOG="${PLAYGROUND_DOCKERD_LOG:-/tmp/sandbox-playground-dockerd.log}"
TIMEOUT="${PLAYGROUND_DOCKERD_TIMEOUT:-60}"

say() { echo "docker_daemon: $*" >&2; }

answers() {
    # `docker info` against DOCKER_HOST or the default socket; never hangs.
    command -v docker >/dev/null 2>&1 || return 1
    timeout 10 docker info --format '{{.ServerVersion}}' >/dev/null 2>&1
}

our_pid() {
    # Print the recorded PID when it is a live dockerd we started.
    [ -s "$PIDFILE" ] || return 1
    local pid
    pid="$(cat "$PIDFILE")"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" = dockerd ] || return 1
    echo "$pid"
}

install_docker() {
    say "installing Debian's docker.io (dockerd is missing)"
    local added_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        added_policy=1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io >/dev/null
    [ -n "$added_policy" ] && rm -f /usr/sbin/policy-rc.d
    command -v dockerd >/dev/null 2>&1 || { say "docker.io installed but dockerd is still missing"; exit 1; }
}

start() {
    if answers; then
        say "a daemon already answers ($(docker info --format '{{.ServerVersion}} {{.OperatingSystem}}' 2>/dev/null)); using it"
        return 0
    fi
    if [ -n "${DOCKER_HOST:-}" ]; then
        say "DOCKER_HOST=$DOCKER_HOST does not answer; not starting a daemon for someone else's socket"
        exit 1
    fi
    if [ "$(id -u)" != 0 ]; then
        say "no Docker daemon answers and we are not root: start Docker (or 'podman system service') yourself"
        exit 1
    fi
    command -v dockerd >/dev/null 2>&1 || install_docker
    command -v docker >/dev/null 2>&1 || { say "the docker CLI is missing"; exit 1; }
    if pid="$(our_pid)"; then
        say "dockerd $pid (ours) is running but not answering yet; waiting"
    else
        say "starting dockerd (log: $LOG)"
        # setsid: the daemon does not belong to our process group, so a job-control
        # kill of the caller does not take it down half-way; `stop` ends it by PID.
        setsid dockerd >"$LOG" 2>&1 </dev/null &
        pid=$!
        echo "$pid" >"$PIDFILE"
    fi
    local waited=0
    until answers; do
        if ! kill -0 "$pid" 2>/dev/null; then
            say "dockerd exited during start-up; last log lines:"
            tail -n 20 "$LOG" >&2 || true
            rm -f "$PIDFILE"
            exit 1
        fi
        if [ "$waited" -ge "$TIMEOUT" ]; then
            say "dockerd did not answer within ${TIMEOUT}s; see $LOG"
            exit 1
        fi
        sleep 1
        waited=$((waited + 1))
    done
    say "dockerd $pid answers after ${waited}s ($(docker info --format '{{.ServerVersion}}' 2>/dev/null))"
}

stop() {
    local pid
    if ! pid="$(our_pid)"; then
        say "no dockerd started by this script is running; nothing to stop"
        rm -f "$PIDFILE"
        return 0
    fi
    say "stopping dockerd $pid"
    kill -TERM "$pid"
    for _ in $(seq 1 30); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
    done
    if kill -0 "$pid" 2>/dev/null; then
        say "dockerd $pid did not stop in 30s; sending KILL"
        kill -KILL "$pid" || true
    fi
    rm -f "$PIDFILE"
}

status() {
    if answers; then
        local who="not started by us"
        our_pid >/dev/null && who="started by us, PID $(our_pid)"
        say "a daemon answers: $(docker info --format '{{.ServerVersion}}' 2>/dev/null) ($who)"
        return 0
    fi
    say "no Docker daemon answers"
    return 1
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
