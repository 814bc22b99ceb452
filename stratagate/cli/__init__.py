"""The ``stratagate`` command line (entry point ``stratagate.cli.app:main``)."""
