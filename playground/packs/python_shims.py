"""What CPython's WASI build lacks and programs expect, made to work in the guest: ``asyncio``'s event loop;
and the standard library's probes for what a sandbox never has, skipped (the end of ``SHIMS``).

Every asyncio event loop opens a socket pair as it is made (its
"self-pipe"), so that another thread or a signal handler can wake it
while it waits in ``select``. WASI has no ``socketpair``: on both Wasm
Pythons ``asyncio.run(main())`` failed with ``OSError: [Errno 58] Not
supported`` before ``main`` ran, followed by an ``AttributeError`` from the
half-made loop's ``__del__``. A guest has one thread and its signals are
raised by the interpreter itself (``backends/wasm/cpython_signals``), so
nothing ever needs to wake the loop from outside: this script lets the loop
go without the pair when the pair cannot be made. Then ``asyncio.run``,
tasks, ``sleep`` (its waits are ``poll_oneoff`` with a timeout, bounded by
the run's limits as any sleep is), ``gather``, queues, locks, timeouts and
``call_soon_threadsafe`` work as on Linux. What needs more stays refused,
with the error the program would meet anyway: ``asyncio.to_thread`` and
``run_in_executor`` (no threads), subprocesses and sockets (the attempt
report, ``python_watch``, records those); ``loop.add_signal_handler``
raises ``NotImplementedError``, as on Windows, which portable code expects.

How: the two loop methods are wrapped when ``asyncio.selector_events`` and
``asyncio.unix_events`` are imported (a finder at the front of
``sys.meta_path`` that answers only for those two), or at once where a
snapshot's capture already imported them; a program that does not use
asyncio pays for the finder only. The real method is tried first, so a
runtime that gains ``socketpair`` keeps its own loop. Run before the
program on the Wasm tier: in a cold start's boot script (``python_boot``),
in every snapshot's capture (``python_snapshot``, once, kept in the image)
and before a session's driver. It leaves no name behind.
"""

from typing import Final

#: A guest function (a nested ``def``, four spaces in; it needs ``sys``): ``patch_on_import(patches)`` calls
#: ``patches[name](module)`` for each module named there, at once if it is imported, else as it is (a finder
#: at the front of ``sys.meta_path`` that answers only for those names). The attempt report's set-up uses it
#: too (``python_watch``), for ``socket`` as ``SHIMS`` does: each finder asks the others, and answers None to
#: a question it is already answering (two patchers of one name recursed until RecursionError).
PATCH_ON_IMPORT: Final = r'''
    def patch_on_import(patches):
        class Patched:
            def __init__(self, loader, patch):
                self.loader, self.patch = loader, patch

            def create_module(self, spec):
                return self.loader.create_module(spec)

            def exec_module(self, module):
                self.loader.exec_module(module)
                self.patch(module)

        resolving = set()  # another patcher of the same name asks this one back: it must answer None

        class Finder:
            @staticmethod
            def find_spec(name, path=None, target=None):
                patch = patches.get(name)
                if patch is None or name in resolving:
                    return None
                resolving.add(name)
                try:
                    for finder in sys.meta_path:
                        find = getattr(finder, "find_spec", None)
                        if finder is Finder or find is None:
                            continue
                        spec = find(name, path, target)
                        if spec is not None and spec.loader is not None:
                            spec.loader = Patched(spec.loader, patch)
                            return spec
                    return None
                finally:
                    resolving.discard(name)

        for name, patch in patches.items():
            if name in sys.modules:
                patch(sys.modules[name])
        sys.meta_path.insert(0, Finder)
'''

SHIMS: Final = (
    r'''# The sandbox's asyncio without a self-pipe, and no stdlib probes (see playground/packs/python_shims.py).
def _playground_shims():
    import sys
    import __main__

    del __main__._playground_shims
'''
    + PATCH_ON_IMPORT
    + r'''
    def selector_events(module):
        loop = module.BaseSelectorEventLoop
        make, close = loop._make_self_pipe, loop._close_self_pipe

        def _make_self_pipe(self):
            try:
                make(self)
            except OSError:  # no socketpair in WASI: one thread, and nothing outside it to wake the loop
                self._ssock = self._csock = None

        def _close_self_pipe(self):
            if self._ssock is not None:
                close(self)

        loop._make_self_pipe, loop._close_self_pipe = _make_self_pipe, _close_self_pipe

    def unix_events(module):
        loop = module._UnixSelectorEventLoop
        add = loop.add_signal_handler

        def add_signal_handler(self, sig, callback, *args):
            if self._csock is None:
                raise NotImplementedError("signal handlers need the event loop's self-pipe, which WASI cannot make")
            return add(self, sig, callback, *args)

        loop.add_signal_handler = add_signal_handler

    # The standard library's probes for what a sandbox never has, made as implementation details: they
    # always fail here, and the attempt report showed them as the program's own (``uuid.uuid1()``: "tried:
    # read /sbin/ifconfig, /bin/ip, /bin/netstat ..."; ``platform.processor()``: "run uname -p";
    # ``mimetypes.guess_type()``: "read /etc/mime.types" and eight more). Each gets what the probes got.
    def uuid(module):  # a MAC address from network tools: none here, so the random node, as before
        module._GETTERS = [getter for getter in module._GETTERS if getter.__name__ == "_unix_getnode"]

    def platform(module):  # the processor from "uname -p": no processes here, so "", as before
        module._Processor.get_wasi = staticmethod(lambda: "")

    def mimetypes(module):  # the system's mime.types files: none here (a program's own files are still read)
        module.knownfiles = []

    def socket(module):  # the light build has no gethostname, the scientific one says "(none)": the Docker tier's
        module.gethostname = lambda: "sandbox"
        if not hasattr(module, "gethostbyaddr"):  # getfqdn (email.utils.make_msgid) asks it: no DNS, so the name
            module.getfqdn = lambda name="": "sandbox" if not name or name in ("0.0.0.0", "::") else name

    patch_on_import({
        "asyncio.selector_events": selector_events, "asyncio.unix_events": unix_events,
        "uuid": uuid, "platform": platform, "mimetypes": mimetypes, "socket": socket,
    })


_playground_shims()
'''
)
