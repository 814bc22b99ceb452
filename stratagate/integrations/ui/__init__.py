"""The Memory UI (``stratagate ui``): a read-only page and ``/api/v1`` JSON API over namespaces.

``catalog`` opens the served namespaces read-only (their past states come from
``state_at(..., search=False)``, ``stratagate.read.past``), ``api`` answers each route as a pure
handler, ``app`` is the Starlette app and its security, and ``static/`` the page (plain HTML,
JavaScript and CSS; no build step). See docs/UI.md.
"""
