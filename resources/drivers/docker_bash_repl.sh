# Sandbox Playground: the REPL driver of a bash session in a Docker container.
#
# Two roles, one file:
#
# * the driver (default) is the container's main program. It alone holds the
#   container's stdin (commands from the host) and stdout (frames to the
#   host); it never runs guest code.
# * "interp" is the bash the guest's code is sourced into, so variables,
#   functions, aliases and the working directory persist. For each eval its
#   stdout and stderr are fresh FIFOs that only the driver's pumps read; it
#   reports "id status" on its fd 3, which the guest's code does not inherit.
#
# Frames to the host: one ASCII type letter, 8 lowercase hex digits of payload
# length, the payload. O/E carry guest bytes (always inside such a frame, at
# most 4000 bytes, written with one write(2) so frames never interleave);
# Y (ready: nonce and the interpreter's pid), R (result) and X (interpreter
# exited) carry the session nonce first. Commands from the host:
# "C <id> <length>\n" then <length> bytes of code; "L ..." is the same, and the
# code's stdin is then the keyboard: a FIFO that a reader of ours fills from
# "I <length>\n" + typed bytes and closes on "D\n" (Ctrl-D), until the host's
# "E\n" after the result (without a keyboard the code's stdin is empty).
# See backends/docker/repl_protocol.py for the host side.
#
# Ctrl-C: the interpreter leads its own process group; the host sends SIGINT
# to that group (docker exec kill), which also stops a foreground command
# such as sleep. The interpreter's INT trap then unwinds the running input:
# with extdebug, a DEBUG trap that returns 2 makes bash return from every
# function and from the sourced input in turn, like Ctrl-C at a prompt; the
# input reports status 130 and the shell keeps its variables and functions.
# Guest code that sets its own INT trap keeps it (the host then stops the
# container after a grace period).

if [ "${1-}" = interp ]; then
  shopt -s expand_aliases
  exec 3>"$PG_DIR/res" 4<"$PG_DIR/cmd" </dev/null >/dev/null 2>&1
  __pg_unwind() {
    # BASH_SOURCE: this file twice at the interpreter's own level, more inside the input.
    if (( ${#BASH_SOURCE[@]} > 2 )); then return 2; fi
    trap - DEBUG
    shopt -u extdebug
    return 0
  }
  # The input's stdin goes to /dev/null: a read waiting for the keyboard ends (bash restarts it after a trap).
  trap 'if [ -n "$__pg_id" ]; then __pg_int=1; exec 0</dev/null; shopt -s extdebug; trap __pg_unwind DEBUG; fi' INT
  __pg_id=
  while :; do
    while :; do
      # Also reached after a guest's stray "break" or "continue": report the eval anyway.
      if [ -n "$__pg_id" ]; then
        [ -z "$__pg_int" ] || __pg_rc=130
        printf '%s %s\n' "$__pg_id" "$__pg_rc" >&3
        __pg_id=
      fi
      __pg_int=
      IFS=' ' read -r __pg_next __pg_kind <&4
      case $? in
        0) ;;
        1) exit 0 ;;
        *) continue ;; # a late interrupt woke the read: nothing runs, nothing to stop
      esac
      __pg_id=$__pg_next
      __pg_rc=0
      if [ "$__pg_kind" = L ]; then
        . "$PG_DIR/c.$__pg_id" <"$PG_DIR/i.$__pg_id" >"$PG_DIR/o.$__pg_id" 2>"$PG_DIR/e.$__pg_id" 3>&- 4<&-
      else
        . "$PG_DIR/c.$__pg_id" >"$PG_DIR/o.$__pg_id" 2>"$PG_DIR/e.$__pg_id" 3>&- 4<&-
      fi
      __pg_rc=$?
    done
  done
fi

PG_DIR=$(cd "$(dirname "$0")" && pwd)
IFS= read -r nonce <"$PG_DIR/nonce"
rm -f "$PG_DIR/nonce"

emit() { # type text: one frame, one write
  printf '%s%08x%s' "$1" "${#2}" "$2"
}

pump() { # type fifo: frame the FIFO's bytes until EOF
  local size
  exec 7<"$2"
  while :; do
    dd bs=4000 count=1 of="$2.c" <&7 2>/dev/null
    size=$(wc -c <"$2.c")
    [ "$size" -gt 0 ] || break
    { printf '%s%08x' "$1" "$size"; cat "$2.c"; } >"$2.f"
    cat "$2.f"
  done
  rm -f "$2.c" "$2.f"
}

keyboard() { # fifo: the running "L" input's stdin, from "I"/"D" commands on our stdin, until "E"
  trap '' PIPE
  local k n open=1
  exec 8>"$1"
  while IFS=' ' read -r k n; do
    case "$k:$n" in
      I:[0-9]*)
        head -c "$n" >"$1.b" # all of it, even when the input no longer reads: the next command follows
        if [ -n "$open" ]; then cat "$1.b" >&8 2>/dev/null; fi ;;
      D:) exec 8>&-; open= ;;
      E:) break ;;
      *) echo "driver: malformed keyboard command" >&2; kill -TERM "$$"; exit 2 ;;
    esac
  done
  rm -f "$1.b"
}

# Job control only for this start: the interpreter gets its own process group and
# SIGINT is not ignored in it (as it is for other background commands).
set -m
PG_DIR=$PG_DIR bash --norc --noprofile "$0" interp </dev/null >/dev/null 2>&1 &
ipid=$!
set +m
exec 6<"$PG_DIR/res" 5>"$PG_DIR/cmd"
emit Y "$nonce $ipid"

while IFS=' ' read -r kind id len; do
  case "$kind:$id:$len" in
    [CL]:[0-9]*:[0-9]*) ;;
    *) echo "driver: malformed command" >&2; exit 2 ;;
  esac
  head -c "$len" >"$PG_DIR/c.$id"
  mkfifo -m 600 "$PG_DIR/o.$id" "$PG_DIR/e.$id"
  pump O "$PG_DIR/o.$id" & po=$!
  pump E "$PG_DIR/e.$id" & pe=$!
  pk=
  if [ "$kind" = L ]; then
    mkfifo -m 600 "$PG_DIR/i.$id"
    keyboard "$PG_DIR/i.$id" <&0 & pk=$!
  fi
  printf '%s %s\n' "$id" "$kind" >&5
  if IFS=' ' read -r rid rc <&6; then dead=; else dead=1; fi
  # A guest's background job may keep a FIFO open: give the pumps a moment, then stop them.
  ( sleep 0.5; kill "$po" "$pe" 2>/dev/null ) & killer=$!
  wait "$po" "$pe" 2>/dev/null
  kill "$killer" 2>/dev/null
  rm -f "$PG_DIR/c.$id" "$PG_DIR/o.$id" "$PG_DIR/e.$id"
  if [ -n "$dead" ]; then
    wait "$ipid" 2>/dev/null
    emit X "$nonce $id $?"
    # Linger (up to 5 s, or until stdin ends) so the host can still ask the container's memory
    # cgroup whether this was an OOM kill (Podman does not say); the host kills us right after.
    read -r -t 5 _ || :
    exit 0
  fi
  [ "$rid" = "$id" ] || rc=1
  emit R "$nonce $id $rc"
  if [ -n "$pk" ]; then
    wait "$pk" 2>/dev/null # until the host's "E": the next command is ours to read
    rm -f "$PG_DIR/i.$id"
  fi
done
