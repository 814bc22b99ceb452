"""Automatic capture from an agent host's hooks (Claude Code's protocol): the transcript reader,
the hook server and its client, the per-event service and the settings installer.

The hook command (``stratagate hook claude-code``) imports only ``protocol``, ``places`` and
``client`` (standard library only), so nothing here imports the memory at package level.
"""
