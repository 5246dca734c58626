"""``mnem ui``: a local, read-only web view of a store's memory, its history and its provenance.

Modules, one job each: ``params`` checks what a URL asks for, ``queries``
is the read model (porcelain verbs in, plain JSON-ready dicts out),
``app`` holds the routes, the Host guard and the error mapping, and
``server`` binds 127.0.0.1 and runs uvicorn.  The page itself is plain
HTML, CSS and JavaScript in ``static/``, shipped as package data: no build
step.  The UI reaches the store only through the porcelain.
"""

from __future__ import annotations

__all__: list[str] = []
