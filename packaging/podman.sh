#!/usr/bin/env bash
# Rootful Podman for the Docker tier's second test pass (see packaging/test.sh).
#
#   bash packaging/podman.sh start                 # as root: install podman if missing, start its API service
#   bash packaging/podman.sh load bash node ...    # copy playground-NAME:local from Docker into Podman
#   bash packaging/podman.sh without-docker CMD... # run CMD where no Docker socket is visible
#   bash packaging/podman.sh stop                  # stop the service *we* started, by its PID
#
# Guarantees:
# * `start` is idempotent: when $SOCKET already answers, nothing is started.
#   Only as root, it installs Debian's podman (with catatonit for `init`,
#   netavark and aardvark-dns) when podman is missing, never starting a
#   service behind our back (policy-rc.d), then runs
#   `podman system service --time=0 unix://$SOCKET` in the background: the
#   socket path that backends/docker/detect.py looks at after Docker's.
#   Its working directory is $STATE (conmon 2.1.6 drops an empty "oom" file
#   in its working directory on every OOM kill).
# * `stop` only stops a service whose PID this script recorded.
# * `load` reuses an image Podman has; otherwise `docker save | podman load`.
# * `without-docker` runs CMD in a private mount namespace whose /run (and
#   so /var/run) shows everything but Docker's socket, pid file and state,
#   with DOCKER_HOST unset: detection must find Podman by itself there. The
#   machine's own Docker (and anyone using it) is not touched.
set -euo pipefail

SOCKET=/run/podman/podman.sock
STATE="${PLAYGROUND_PODMAN_STATE:-/tmp/sandbox-playground-podman}"
PIDFILE="$STATE/service.pid"
LOG="$STATE/service.log"
TIMEOUT="${PLAYGROUND_PODMAN_TIMEOUT:-30}"

say() { echo "podman: $*" >&2; }

answers() {
    [ -S "$SOCKET" ] && timeout 10 podman --remote --url "unix://$SOCKET" version >/dev/null 2>&1
}

our_pid() {
    [ -s "$PIDFILE" ] || return 1
    local pid
    pid="$(cat "$PIDFILE")"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" = podman ] || return 1
    echo "$pid"
}

install_podman() {
    say "installing Debian's podman"
    local added_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        added_policy=1
    fi
    local pkgs="podman catatonit netavark aardvark-dns"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs >/dev/null 2>&1 || {
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
    }
    [ -n "$added_policy" ] && rm -f /usr/sbin/policy-rc.d
    command -v podman >/dev/null || { say "podman installed but not on PATH"; exit 1; }
}

start() {
    if answers; then
        say "$SOCKET already answers; using it"
        return 0
    fi
    [ "$(id -u)" = 0 ] || { say "rootful Podman needs root; as a user: systemctl --user start podman.socket"; exit 1; }
    command -v podman >/dev/null || install_podman
    mkdir -p "$STATE" "$(dirname "$SOCKET")"
    local pid
    if ! pid="$(our_pid)"; then
        say "starting podman system service (log: $LOG)"
        (cd "$STATE" && exec setsid podman system service --time=0 "unix://$SOCKET" >"$LOG" 2>&1 </dev/null) &
        pid=$!
        echo "$pid" >"$PIDFILE"
    fi
    local waited=0
    until answers; do
        kill -0 "$pid" 2>/dev/null || { say "the service exited; last log lines:"; tail -n 20 "$LOG" >&2; exit 1; }
        [ "$waited" -lt "$TIMEOUT" ] || { say "no answer on $SOCKET within ${TIMEOUT}s; see $LOG"; exit 1; }
        sleep 1
        waited=$((waited + 1))
    done
    say "podman $(podman version --format '{{.Server.Version}}' 2>/dev/null || podman --version) answers on $SOCKET"
}

stop() {
    local pid
    if ! pid="$(our_pid)"; then
        say "no podman service started by this script is running; nothing to stop"
        return 0
    fi
    say "stopping podman service $pid"
    kill -TERM "$pid"
    for _ in $(seq 1 20); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    rm -f "$PIDFILE"
}

load() {
    local name image start
    for name in "$@"; do
        image="playground-$name:local"
        if podman image exists "$image"; then
            say "$image is in Podman's store already"
            continue
        fi
        start=$SECONDS
        docker save "$image" | podman load -q >/dev/null
        say "$image copied from Docker in $((SECONDS - start))s"
    done
}

without_docker() {
    [ $# -gt 0 ] || { say "without-docker needs a command"; exit 2; }
    [ "$(id -u)" = 0 ] || { say "without-docker needs root (a mount namespace)"; exit 1; }
    exec unshare --mount --propagation private bash "$0" _hidden "$@"
}

hidden() {
    # In the new mount namespace: a fresh /run holding bind mounts of the real one's entries, except Docker's.
    local orig entry name
    orig="$(mktemp -d)"
    mount --bind /run "$orig"
    mount -t tmpfs -o mode=0755 tmpfs /run
    for entry in "$orig"/* "$orig"/.[!.]*; do
        [ -e "$entry" ] || [ -L "$entry" ] || continue
        name="$(basename "$entry")"
        case "$name" in docker | docker.sock | docker.pid | containerd) continue ;; esac
        if [ -L "$entry" ]; then
            cp -P "$entry" "/run/$name"
        elif [ -d "$entry" ]; then
            mkdir -p "/run/$name"
            mount --rbind "$entry" "/run/$name"
        else
            touch "/run/$name"
            mount --bind "$entry" "/run/$name"
        fi
    done
    umount -l "$orig"
    rmdir "$orig"
    exec env -u DOCKER_HOST "$@"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    load) shift; load "$@" ;;
    without-docker) shift; without_docker "$@" ;;
    _hidden) shift; hidden "$@" ;;
    *) echo "usage: $0 start|stop|load NAME...|without-docker CMD..." >&2; exit 2 ;;
esac
