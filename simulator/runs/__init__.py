"""Running things end to end, above both ``kernels`` and ``gpu``.

A workload or a user's kernel file is executed functionally by ``simulator.kernels``
(per-wavefront instruction streams, Klein's records) and timed by ``simulator.gpu``
into a trace; ``records`` joins the two, and the ``*_cli`` modules are the ``run`` and
``run-kernel`` commands.
"""
