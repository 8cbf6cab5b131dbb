"""One module per page: its ``layout(**query)`` and its callbacks (registered on import)."""
