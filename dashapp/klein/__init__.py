"""Klein's kernel views: memory (bank conflicts), branching (proxy warps) and debug.

``analysis`` computes the views from a launch's kernel records (pure numpy);
``figures`` draws them; ``views`` assembles the kernel page's content; ``runner``
re-runs an edited kernel in a bounded child process (edit and run).
"""
