"""The Validation page's parts: the report a validation wrote, and its figure."""
