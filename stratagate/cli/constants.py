"""What every part of the command line shares: exit statuses, environment variable names and
the ``--json`` envelope's format with the running command.

The subcommand modules import these from here (not from ``app``, which imports them), so the
CLI's modules form no import circle.
"""

from __future__ import annotations

from contextvars import ContextVar

from stratagate.errors import (
    ChainVerificationError,
    InvalidInputError,
    ModelError,
    StrataGateError,
    UnknownIdError,
)

CLI_FORMAT = "stratagate.cli.v1"
"""The envelope of every ``--json`` document (docs/CLI.md, "JSON output")."""

COMMAND: ContextVar[str] = ContextVar("stratagate_cli_command", default="")
"""The subcommand running (set by ``main``), named in the envelope."""

EXIT_OK = 0
EXIT_VERIFY_FAILED = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_STORAGE = 4
EXIT_MODEL = 5
EXIT_INTERRUPTED = 130

EXIT_CODES: tuple[tuple[type[StrataGateError], int], ...] = (
    (ChainVerificationError, EXIT_VERIFY_FAILED),
    (InvalidInputError, EXIT_USAGE),
    (UnknownIdError, EXIT_NOT_FOUND),
    (ModelError, EXIT_MODEL),
    (StrataGateError, EXIT_STORAGE),
)
"""First match wins: every other ``StrataGateError`` (storage, conflicts, runtime) is 4."""

ENV_DATABASE = "STRATAGATE_DATABASE"
ENV_NAMESPACE = "STRATAGATE_NAMESPACE"
ENV_TOKEN = "STRATAGATE_TOKEN"
DEFAULT_DATABASE = "stratagate.db"
DEFAULT_NAMESPACE = "default"


__all__ = [
    "CLI_FORMAT",
    "COMMAND",
    "DEFAULT_DATABASE",
    "DEFAULT_NAMESPACE",
    "ENV_DATABASE",
    "ENV_NAMESPACE",
    "ENV_TOKEN",
    "EXIT_CODES",
    "EXIT_INTERRUPTED",
    "EXIT_MODEL",
    "EXIT_NOT_FOUND",
    "EXIT_OK",
    "EXIT_STORAGE",
    "EXIT_USAGE",
    "EXIT_VERIFY_FAILED",
]
