"""stratagate: long-term memory for AI agents."""
