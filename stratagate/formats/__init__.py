"""File formats read and written at the edges: LoCoMo conversations, JSONL turn files, and
the ``stratagate.external-memory.v2`` document."""
