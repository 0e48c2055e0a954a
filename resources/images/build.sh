#!/usr/bin/env bash
# Build the Docker tier's local images from Debian packages (no image registry needed).
#
#   playground images build [PACK...]              # bash and node by default (what the tests need)
#   bash packaging/images/build.sh go rust java c  # the same from a checkout: the bigger toolchains
#   bash packaging/images/build.sh --force bash    # rebuild even if the image exists
#   bash resources/images/build.sh NAME=PKG,PKG... # this script itself: names and their recipes
#
# Which Debian packages a pack's image needs is the pack's data
# (DockerSpec.image_packages); `playground images build` reads it and calls
# this script with NAME=PKG,PKG arguments, so a new language adds no line here.
#
# Each image NAME becomes `playground-NAME:local`: a debootstrap'ed Debian
# bookworm (--variant=minbase) with the pack's packages installed without
# recommends, caches/docs/apt lists stripped, /in /out /work created, and
# imported with `USER 65534:65534` and `WORKDIR /work`. The Docker backend
# uses playground-<pack>:local by itself when the pack's official image is absent.
#
# Guarantees: idempotent (an existing image is reused unless --force); the
# mirror comes from this machine's apt sources (never a hard-coded host); the
# host's apt configuration is used only during the build and is not shipped;
# the minbase root filesystem is debootstrap'ed once and cached as a tarball
# ($PLAYGROUND_IMAGE_CACHE, default /var/cache/sandbox-playground); scratch
# directories are removed on exit, also on failure. Needs root and a Docker
# daemon (bash packaging/docker_daemon.sh start), or, when no Docker daemon
# answers, rootful Podman: the images then go into Podman's store with
# `podman import` (the store its Docker-compatible service uses).
set -euo pipefail

CLI=docker

CACHE="${PLAYGROUND_IMAGE_CACHE:-/var/cache/sandbox-playground}"
SUITE=bookworm
BASE_TAR="$CACHE/$SUITE-minbase.tar"

say() { echo "images: $*" >&2; }

recipe() {
    # "NAME=PKG,PKG" -> "NAME PKG PKG" after checking both are plain names (they reach a shell in the chroot).
    local name="${1%%=*}" pkgs="${1#*=}"
    [[ "$1" == *=* && "$name" =~ ^[a-z][a-z0-9_+-]*$ && "$pkgs" =~ ^[a-z0-9][a-z0-9+.-]+(,[a-z0-9][a-z0-9+.-]+)*$ ]] ||
        return 1
    echo "$name ${pkgs//,/ }"
}

mirror() {
    # The first non-security Debian URI this machine's apt uses for $SUITE.
    local uri=""
    shopt -s nullglob
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        uri="$(awk -v suite="$SUITE" '
            BEGIN { RS = ""; FS = "\n" }
            {
                uris = ""; suites = ""; enabled = 1
                for (i = 1; i <= NF; i++) {
                    if ($i ~ /^URIs:/) { uris = $i; sub(/^URIs:[ \t]*/, "", uris) }
                    if ($i ~ /^Suites:/) { suites = " " $i " "; sub(/^ Suites:/, "", suites) }
                    if ($i ~ /^Enabled:[ \t]*no/) enabled = 0
                }
                if (enabled && uris !~ /security/ && (" " suites " ") ~ (" " suite " ")) {
                    split(uris, u, /[ \t]+/); print u[1]; exit
                }
            }' "$f")"
        [ -n "$uri" ] && break
    done
    if [ -z "$uri" ]; then
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [ -r "$f" ] || continue
            uri="$(awk -v suite="$SUITE" '
                $1 == "deb" {
                    i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                    if ($(i + 1) == suite && $i !~ /security/) { print $i; exit }
                }' "$f")"
            [ -n "$uri" ] && break
        done
    fi
    shopt -u nullglob
    [ -n "$uri" ] || { say "no Debian $SUITE mirror found in /etc/apt/sources.list*"; return 1; }
    echo "$uri"
}

ensure_tools() {
    [ "$(id -u)" = 0 ] || { say "building images needs root (debootstrap, chroot)"; exit 1; }
    if command -v docker >/dev/null && timeout 10 docker info >/dev/null 2>&1; then
        CLI=docker
    elif command -v podman >/dev/null && timeout 10 podman info >/dev/null 2>&1; then
        CLI=podman
    else
        say "no Docker daemon answers (nor Podman): bash packaging/docker_daemon.sh start"
        exit 1
    fi
    if ! command -v debootstrap >/dev/null; then
        say "installing debootstrap"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
    fi
}

SCRATCH=""
MOUNTED=""
cleanup() {
    if [ -n "$MOUNTED" ]; then umount -l "$MOUNTED" 2>/dev/null || true; MOUNTED=""; fi
    if [ -n "$SCRATCH" ]; then rm -rf --one-file-system "$SCRATCH"; SCRATCH=""; fi
}
trap cleanup EXIT

base_rootfs() {
    # Debootstrap the minbase system once; later builds unpack the cached tarball.
    [ -s "$BASE_TAR" ] && return 0
    local url start dir
    url="$(mirror)"
    start=$SECONDS
    mkdir -p "$CACHE"
    dir="$(mktemp -d "$CACHE/debootstrap.XXXXXX")"
    say "debootstrap --variant=minbase $SUITE from $url"
    if ! debootstrap --variant=minbase "$SUITE" "$dir" "$url" >"$CACHE/debootstrap.log" 2>&1; then
        say "debootstrap failed; last lines of $CACHE/debootstrap.log:"
        tail -n 20 "$CACHE/debootstrap.log" >&2
        rm -rf --one-file-system "$dir"
        exit 1
    fi
    tar --numeric-owner -C "$dir" -cf "$BASE_TAR.tmp" .
    mv "$BASE_TAR.tmp" "$BASE_TAR"
    rm -rf --one-file-system "$dir"
    say "base rootfs cached in $BASE_TAR ($((SECONDS - start))s)"
}

strip_rootfs() {
    local root="$1"
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
        "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
        "$root"/usr/share/locale/* "$root"/var/log/* "$root"/tmp/* "$root"/var/tmp/* \
        "$root"/root/.cache
    # The host's apt configuration (mirror quirks) helped the build only.
    rm -f "$root"/etc/apt/apt.conf.d/50-playground-host-*
    : >"$root/etc/resolv.conf"
    mkdir -p "$root/in" "$root/out" "$root/work"
    chmod 0755 "$root/in" "$root/out" "$root/work"
    # The archive's "./" gives the image's / its mode: debootstrap's scratch directory was 0700, which
    # Docker and rootful Podman ignore but rootless Podman (vfs) applies, locking the guest user out of /.
    chmod 0755 "$root"
}

build_one() {
    local force="$2" parsed name pkgs image start root
    parsed="$(recipe "$1")" || {
        say "'$1' is not NAME=PKG,PKG (a pack's name is resolved by: playground images build ${1%%=*})"; exit 2; }
    read -r name pkgs <<<"$parsed"
    image="playground-$name:local"
    if [ "$force" = 0 ] && "$CLI" image inspect "$image" >/dev/null 2>&1; then
        say "$image exists ($("$CLI" image inspect -f '{{.Size}}' "$image") bytes); reusing it"
        return 0
    fi
    start=$SECONDS
    base_rootfs
    SCRATCH="$(mktemp -d "$CACHE/build-$name.XXXXXX")"
    root="$SCRATCH/rootfs"
    mkdir "$root"
    tar --numeric-owner -C "$root" -xf "$BASE_TAR"
    local f
    for f in /etc/apt/apt.conf.d/*; do
        [ -f "$f" ] && cp "$f" "$root/etc/apt/apt.conf.d/50-playground-host-$(basename "$f")"
    done
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    mount -t proc proc "$root/proc"
    MOUNTED="$root/proc"
    say "$image: apt-get install $pkgs"
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs && apt-get clean" \
        >"$SCRATCH/apt.log" 2>&1 || { say "apt-get in the chroot failed:"; tail -n 20 "$SCRATCH/apt.log" >&2; exit 1; }
    umount "$root/proc"
    MOUNTED=""
    strip_rootfs "$root"
    tar --numeric-owner -C "$root" -c . |
        "$CLI" import --change 'USER 65534:65534' --change 'WORKDIR /work' \
            --message "sandbox-playground $name image from Debian $SUITE packages: $pkgs" - "$image" >/dev/null
    cleanup
    say "$image built in $((SECONDS - start))s, $("$CLI" image inspect -f '{{.Size}}' "$image") bytes"
}

main() {
    local force=0 names=()
    for arg in "$@"; do
        case "$arg" in
            --force) force=1 ;;
            -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
            *) names+=("$arg") ;;
        esac
    done
    [ ${#names[@]} -gt 0 ] || { say "nothing to build: give NAME=PKG,PKG (playground images build names packs)"; exit 2; }
    ensure_tools
    for name in "${names[@]}"; do build_one "$name" "$force"; done
}

main "$@"
