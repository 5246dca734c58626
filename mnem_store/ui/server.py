"""Run the UI: bind 127.0.0.1, say where, and serve with uvicorn until interrupted.

The socket is bound here, before uvicorn starts, so ``--port 0`` (any free
port) works: the Host guard needs the real port, and the line printed on
stderr names it, for a person or a test to open.  Only the loopback
address is ever bound: the page shows an agent's whole memory.  ``--open``
asks the default browser for the page; where none can be started (a
server, a container: no display, no ``$BROWSER``) a second line says so,
rather than nothing happening.
"""

from __future__ import annotations

import socket
import sys
import threading
import webbrowser
from typing import TextIO

from ..errors import UsageError
from ..repo import Repo

__all__ = ["HOST", "bind", "serve"]

HOST = "127.0.0.1"


def bind(port: int) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:``port`` (0: a free one); a taken port is a ``usage`` error."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit this: without it, a response written as headers then body waits for the
    # browser's delayed ACK (40 ms) on every request of a kept-alive connection.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {HOST}:{port} ({exc.strerror}); pick another with --port N, "
                         "or --port 0 for any free port") from None
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them (so --open never races it)
    return sock


def _open(url: str, out: TextIO) -> None:
    """Open ``url`` in the default browser; where none can be started, say so on ``out``, naming the address."""
    try:
        opened = webbrowser.open(url)
    except webbrowser.Error:
        opened = False
    if not opened:
        out.write(f"mnem ui: no browser could be started here (set $BROWSER to one); open {url} in a browser "
                  "yourself\n")
        out.flush()


def serve(repo: Repo, port: int, *, open_browser: bool = False, out: TextIO = sys.stderr) -> None:
    """Serve the read-only UI of ``repo`` on 127.0.0.1:``port`` until SIGINT or SIGTERM.

    Starlette and uvicorn are the ``ui`` extra: without them this is a
    ``usage`` error that says how to install them, not an internal error.
    """
    try:
        import starlette  # noqa: F401  (checked here; .app imports it)
        import uvicorn
    except ImportError as missing:
        from ..install import pip_install

        raise UsageError(f"mnem ui runs on Starlette and uvicorn, which are not installed here ({missing}): "
                         f"{pip_install('ui')}") from None

    from .app import create_app

    sock = bind(port)
    bound = sock.getsockname()[1]
    url = f"http://{HOST}:{bound}/"
    out.write(f"mnem ui: {repo.location} at {url} (read-only; Ctrl-C stops it)\n")
    out.flush()
    if open_browser:  # on a thread: a console browser (w3m, lynx) runs until it is closed
        threading.Thread(target=_open, args=(url, out), daemon=True).start()
    config = uvicorn.Config(create_app(repo, bound), log_level="warning", access_log=False, lifespan="off")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
