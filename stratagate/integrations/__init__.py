"""Where agents live: the memory's operations as agent tools (``tools``), served over the Model
Context Protocol (``mcp_server``, extra ``mcp``) and offered to LangGraph (``langgraph``, extra
``langgraph``), and the capture from Claude Code's hooks (``hooks``: hook command, hook server,
settings installer). Only ``tools`` is imported by the others; the SDKs are imported lazily."""
