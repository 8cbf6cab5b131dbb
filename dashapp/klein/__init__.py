"""Klein's kernel views: memory (bank conflicts), branching (proxy warps) and debug.

``analysis`` computes the views from a launch's kernel records (pure numpy);
``figures`` draws them; ``views`` assembles the kernel page's content. Edit and run:
``runner`` re-runs an edited kernel in a bounded child process (``SimulatorPool``),
``slots`` limits runs at once across the server's processes, and ``jobs`` takes runs
off the request path (the page submits a run and polls for it).
"""
