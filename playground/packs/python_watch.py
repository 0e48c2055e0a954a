"""The in-guest half of "what did it try?" for CPython on the Wasm tier (``core.attempts``).

The WASI layer sees every path (``backends/wasm/attempt_watch``). What it
cannot see is what never becomes a WASI call, because this CPython has no
sockets or processes and fails inside the guest: ``urlopen``, ``requests``,
``subprocess.run``, ``os.system``, a read of an environment variable that
was not given. This script, run before the program, reports those to the
host over the report channel (``/.attempts``), one JSON line each; the
host keeps them as ``Observer.GUEST`` records. The program is refused as
before (and more clearly: ``os.system`` and ``socket.getaddrinfo`` say
that the sandbox blocked them instead of failing with ``AttributeError``).

How:

* A PEP 578 audit hook (``sys.addaudithook``; it cannot be removed) for
  ``urllib.Request`` (non-http schemes: https fails before it connects),
  ``socket.*``, ``subprocess.Popen``,
  ``os.system``/``exec``/``spawn``/``posix_spawn``/``fork``/``kill``,
  ``ctypes.dlopen``.
* This CPython refuses a process or a name lookup before the audit event
  is raised, so ``subprocess.Popen`` and ``socket.getaddrinfo`` /
  ``create_connection`` are wrapped to raise the event first. They are
  wrapped when the program imports those modules (a finder at the front of
  ``sys.meta_path`` that only answers for them), so a program that does not
  import them pays nothing. ``os.system`` and ``os.kill``, absent here,
  are defined to raise the event and an ``OSError``.
* ``os.environ``: a missing name read by the program's own code (a frame
  under ``/work``, or a REPL input ``<input-N>``) is reported; the standard library's own look-ups
  (``TMPDIR``, ``LANG``, ``HOME``...) are not.

Cost: the script is split in two. What must exist before the program runs
(the hook, the finder, the stand-ins, the ``os.environ`` wrapper) is small;
everything that formats and writes a record, and the wrappers for
``socket`` and ``subprocess``, is one string compiled the first time it is
needed (``LATER``), so a clean run compiles only the small part
(``bench/attempts_cost.py`` measures what is left).

What it cannot see (and says so in the docs): a program that replaces the
wrapped functions first, reads ``os.environ``'s private mapping, or talks
to the C library directly; raw ``socket.socket()`` (refused by the runtime
before any address is known). A program that closes the channel is itself
recorded by the host. Every record here is the guest's word, never more.

REPL sessions run the same script before their driver (``session_prelude``).
"""

from typing import Final

from playground.packs.python_shims import PATCH_ON_IMPORT

#: Compiled in the guest on first use: formatting and writing records, the socket/subprocess wrappers.
LATER: Final = r'''
def setup(os, sys, channel, audit):
    escapes = {i: "\\u%04x" % i for i in range(32)}
    escapes[34] = '\\"'
    escapes[92] = "\\\\"
    write = os.write
    no_network = "refused: no network in this sandbox"
    no_processes = "refused: no processes in this sandbox"

    def say(kind, target, verdict):
        text = str(target)[:300].translate(escapes)
        line = '{"kind": "%s", "target": "%s", "verdict": "%s"}\n' % (kind, text, verdict)
        try:
            write(channel[0], line.encode("utf-8", "backslashreplace"))
        except (OSError, IndexError):  # IndexError: this run has no channel
            pass

    def command(args):
        if isinstance(args, (str, bytes)):
            return os.fsdecode(args)
        try:
            return " ".join(os.fsdecode(a) for a in args)
        except TypeError:
            return repr(args)

    def url_place(url):
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(url)
            port = parts.port or {"http": 80, "https": 443, "ftp": 21}.get(parts.scheme, 0)
        except ValueError:
            return "", str(url)
        return parts.scheme, ("%s:%s" % (parts.hostname, port)) if parts.hostname else str(url)

    def on_event(event, args):
        if event == "urllib.Request":
            scheme, place = url_place(args[0])
            if scheme != "http":  # plain http reaches socket.create_connection, which says it
                say("network_connect", place, no_network)
        elif event in ("socket.getaddrinfo", "socket.gethostbyname"):
            say("dns_lookup", args[0] if event.endswith("name") else "%s:%s" % (args[0], args[1]), no_network)
        elif event == "socket.connect":
            say("network_connect", args[1], no_network)
        elif event == "subprocess.Popen":
            say("process_spawn", command(args[1]), no_processes)
        elif event == "os.system":
            say("process_spawn", command(args[0]), no_processes)
        elif event in ("os.exec", "os.posix_spawn"):
            say("process_spawn", command(args[1]), no_processes)
        elif event == "os.spawn":
            say("process_spawn", command(args[2]), no_processes)
        elif event == "os.fork":
            say("process_spawn", "fork()", no_processes)
        elif event in ("os.kill", "os.killpg"):
            say("signal", "signal %s to process %s" % (args[1], args[0]), no_processes)
        elif event == "ctypes.dlopen":
            say("native_code", args[0], "refused: no native code in this sandbox")

    def env_missing(name):
        say("env_lookup", name, "refused: not given to the program")

    def blocked(what):
        import errno

        return OSError(errno.ENOSYS, "blocked by the sandbox: " + what)

    def patch_socket(module):
        real_create = module.create_connection

        def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
            audit("socket.getaddrinfo", host, port, family, type, proto)
            raise module.gaierror(-3, "blocked by the sandbox: no network (looking up %s)" % (host,))

        def create_connection(address, *args, **kwargs):
            audit("socket.connect", None, "%s:%s" % tuple(address[:2]))
            raise blocked("no network in this sandbox (connecting to %s:%s)" % tuple(address[:2]))

        create_connection.__wrapped__ = real_create
        module.getaddrinfo = getaddrinfo
        module.create_connection = create_connection

    def patch_subprocess(module):
        real_init = module.Popen.__init__

        def __init__(self, args, *rest, **kwargs):
            audit("subprocess.Popen", kwargs.get("executable"), args, kwargs.get("cwd"), kwargs.get("env"))
            real_init(self, args, *rest, **kwargs)

        module.Popen.__init__ = __init__

    return {"on_event": on_event, "env_missing": env_missing, "blocked": blocked,
            "socket": patch_socket, "subprocess": patch_subprocess}
'''

#: The watch's set-up, as a function of the compiled-later part and the channel: a list that holds the
#: report channel's descriptor once the run has opened it (``WATCH``, ``CAPTURE_WATCH``).
_SET_UP: Final = (
    r'''# The sandbox's in-guest report of what the program tries (see playground/packs/python_watch.py).
def _playground_watch(later_source, channel):
    import os
    import sys
    import __main__

    del __main__._playground_watch
    audit = sys.audit
    done = {}

    def later():  # the rest of the script, compiled on first use (see python_watch.LATER)
        if not done:
            space = {}
            exec(compile(later_source, "<sandbox>", "exec"), space)
            done.update(space["setup"](os, sys, channel, audit))
        return done

    watched = frozenset((
        "urllib.Request", "socket.getaddrinfo", "socket.gethostbyname", "socket.connect",
        "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.kill",
        "os.killpg", "ctypes.dlopen",
    ))

    def hook(event, args):
        if event in watched:
            try:
                later()["on_event"](event, args)
            except Exception:
                pass

    sys.addaudithook(hook)

    if not hasattr(os, "system"):
        def system(command):
            audit("os.system", command)
            raise later()["blocked"]("no processes in this sandbox")
        os.system = system
    if not hasattr(os, "kill"):
        def kill(pid, sig):
            audit("os.kill", pid, sig)
            raise later()["blocked"]("no processes in this sandbox")
        os.kill = kill
    for stand_in in (getattr(os, "system", None), getattr(os, "kill", None)):
        if getattr(stand_in, "__module__", "") == "__main__":  # ours: a traceback through it names the sandbox
            stand_in.__code__ = stand_in.__code__.replace(co_filename="<sandbox>")

'''
    + PATCH_ON_IMPORT
    + r'''
    patch_on_import({name: lambda module, name=name: later()[name](module) for name in ("socket", "subprocess")})

    library = ("<frozen os>", "<frozen _collections_abc>")
    library_files = ("/os.py", "/_collections_abc.py")

    def from_the_program():
        frame = sys._getframe(2)
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename not in library and not filename.endswith(library_files):
                return filename.startswith(("/work/", "<input-"))  # a file of the program, or a REPL input
            frame = frame.f_back
        return False

    environ = type(os.environ)
    real_getitem = environ.__getitem__

    def __getitem__(self, key):
        try:
            return real_getitem(self, key)
        except KeyError:
            if from_the_program():
                later()["env_missing"](key)
            raise

    environ.__getitem__ = __getitem__
'''
)

#: Run before the program (a cold start's boot script, a session's prelude): opens the channel, then sets
#: the watch up (nothing at all when the run has no channel).
WATCH: Final = (
    _SET_UP
    + "try:\n"
    + "    _playground_channel = [__import__('os').open('/.attempts', __import__('os').O_WRONLY)]\n"
    + "except OSError:\n"
    + "    del _playground_watch\n"
    + "else:\n"
    + "    _playground_watch(" + repr(LATER) + ", _playground_channel)\n"
    + "    del _playground_channel\n"
)

#: Run by a snapshot's capture (``python_snapshot``), so no run sets the watch up again: the hook, the
#: stand-ins, the finder and the ``os.environ`` wrapper are in the image. Each run opens its own channel
#: as it starts and puts the descriptor in the list kept at ``sys._playground_channel``
#: (``python_snapshot._RUN_HEAD``, which takes it off ``sys`` first), so reports go to that run's channel
#: only. Set up in every run, it copied 36 more image pages of a hello world (291 against 255 faults; p50
#: 5.59 against 5.29 ms side by side).
CAPTURE_WATCH: Final = (
    _SET_UP
    + "_playground_watch("
    + repr(LATER)
    + ", __import__('sys').__dict__.setdefault('_playground_channel', []))\n"
)
