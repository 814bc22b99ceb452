"""The Memory UI (``stratagate ui``): a read-only page and ``/api/v1`` JSON API over namespaces.

``catalog`` opens the served namespaces read-only, ``past`` keeps their states at past positions,
``api`` answers each route as a pure handler, ``app`` is the Starlette app and its security, and
``static/`` the page (plain HTML, JavaScript and CSS; no build step). See docs/UI.md.
"""
