"""The in-guest half of "what did it try?" for CPython on the Docker tier (``core.attempts``).

The same PEP 578 audit hook as on the Wasm tier (``python_watch``), run
before the program by ``DOCKER_BOOT``, with two differences that come from
the tier:

* CPython here is native: sockets and processes exist and raise their audit
  events themselves, so nothing is wrapped or stood in for, and nothing is
  refused by the hook. It only reports; the container decides. Verdicts say
  what the container does: a spawned process runs (inside the container), a
  connection to anything but the container's own loopback (or, on a
  ``NetPolicy`` run, the egress proxy) finds no route.
* The channel is the descriptor the root wrapper opened (``wrapper.REPORT_FD``:
  a regular file with no name). The hook takes nothing else, so a server
  (``serve``), which has no such descriptor, runs without it. It is made
  non-inheritable, so spawned programs do not get it.

Reported: ``socket.getaddrinfo``/``gethostbyname(_ex)`` (``dns_lookup``,
``host:port``), ``socket.connect`` of an IP address (``network_connect``),
``subprocess.Popen``, ``os.system``, ``os.exec*``, ``os.posix_spawn``,
``os.spawn*``, ``os.fork`` (``process_spawn``), ``os.kill``/``killpg``
(``signal``), ``ctypes.dlopen`` of a named library (``native_code``), and a
name missing from ``os.environ`` read by the program's own code (a frame
under ``/work``), as on Wasm.

The first line says the report started; an ``atexit`` handler writes the
last (``os.exec*`` writes it before the process image is replaced). A run
that exits by itself without it stopped its report (``atexit`` cleared, the
channel closed, ``os._exit``): the host records that
(``backends.docker.report``).

Blind spots: what does not raise an audit event (a C extension's own
sockets or ``fork``, ``ctypes`` calls into libc), ``os.environ``'s private
mapping, a program that truncates its descriptor; a spawned program's own
attempts (it runs without this hook). Every record here is the guest's
word, never more.
"""

from typing import Final

WATCH: Final = r"""# The sandbox's in-guest report of what the program tries (playground/packs/python_docker_watch.py).
def _playground_watch():
    import os
    import sys
    import __main__

    del __main__._playground_watch
    channel = 4
    try:
        info = os.fstat(channel)
    except OSError:
        return
    if (info.st_mode & 0o170000) != 0o100000 or info.st_nlink != 0:
        return
    import atexit

    os.set_inheritable(channel, False)
    write = os.write
    escapes = {i: "\\u%04x" % i for i in range(32)}
    escapes[34] = '\\"'
    escapes[92] = "\\\\"

    def raw(data):
        try:
            write(channel, data)
        except OSError:
            pass

    def say(kind, target, verdict):
        text = str(target)[:300].translate(escapes)
        line = '{"kind": "%s", "target": "%s", "verdict": "%s"}\n' % (kind, text, verdict)
        raw(line.encode("utf-8", "backslashreplace"))

    raw(b'{"start": true}\n')
    atexit.register(raw, b'{"end": true}\n')
    proxy = os.environ.get("HTTP_PROXY", "").rpartition("@")[2].partition("/")[0]
    proxy_host = proxy.rpartition(":")[0]
    net = "refused: only the egress proxy is reachable" if proxy else "refused: no network in this sandbox"
    ran = "allowed: inside the container"

    def local(host):
        host = str(host) if host is not None else ""
        return host in ("", "localhost", "::1", "0.0.0.0", proxy_host) or host.startswith("127.")

    def address_literal(host):  # create_connection() asks getaddrinfo() about an address too: no name to look up
        host = os.fsdecode(host) if isinstance(host, bytes) else str(host)
        return ":" in host or host.replace(".", "").isdigit()

    def command(args):
        if isinstance(args, (str, bytes)):
            return os.fsdecode(args)
        try:
            return " ".join(os.fsdecode(a) for a in args)
        except TypeError:
            return repr(args)

    def on_event(event, args):
        if event == "socket.getaddrinfo":
            if not local(args[0]) and not address_literal(args[0]):
                say("dns_lookup", "%s:%s" % (args[0], args[1]) if args[1] else args[0], net)
        elif event in ("socket.gethostbyname", "socket.gethostbyname_ex"):
            if not local(args[0]):
                say("dns_lookup", args[0], net)
        elif event == "socket.connect":
            address = args[1]
            if isinstance(address, tuple) and len(address) >= 2 and not local(address[0]):
                place = "%s:%s" % tuple(address[:2])
                if place != proxy:
                    say("network_connect", place, net)
        elif event == "subprocess.Popen":
            say("process_spawn", command(args[1]), ran)
        elif event == "os.system":
            say("process_spawn", command(args[0]), ran)
        elif event == "os.exec":
            say("process_spawn", command(args[1]), ran)
            raw(b'{"end": true}\n')
        elif event == "os.posix_spawn":
            say("process_spawn", command(args[1]), ran)
        elif event == "os.spawn":
            say("process_spawn", command(args[2]), ran)
        elif event == "os.fork":
            say("process_spawn", "fork()", ran)
        elif event in ("os.kill", "os.killpg"):
            say("signal", "signal %s to process %s" % (args[1], args[0]), "allowed: only the guest's own processes")
        elif event == "ctypes.dlopen" and args[0]:
            say("native_code", args[0], ran)

    watched = frozenset((
        "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.connect",
        "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.kill",
        "os.killpg", "ctypes.dlopen",
    ))

    def hook(event, args):
        if event in watched:
            try:
                on_event(event, args)
            except Exception:
                pass

    sys.addaudithook(hook)

    library = ("<frozen os>", "<frozen _collections_abc>")
    library_files = ("/os.py", "/_collections_abc.py")

    def from_the_program():
        frame = sys._getframe(2)
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename not in library and not filename.endswith(library_files):
                return filename.startswith("/work/")
            frame = frame.f_back
        return False

    environ = type(os.environ)
    real_getitem = environ.__getitem__

    def __getitem__(self, key):
        try:
            return real_getitem(self, key)
        except KeyError:
            if from_the_program():
                say("env_lookup", key, "refused: not given to the program")
            raise

    environ.__getitem__ = __getitem__


_playground_watch()
"""
