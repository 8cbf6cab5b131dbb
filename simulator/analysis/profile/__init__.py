"""Why is it slow? Findings on real profiles (Kineto/Chrome JSON, Nsight Systems, akita).

The sibling of the simulated-run analyses: an imported trace (``run.source`` other than
``simulator``) holds GPU operations on streams (``GPU[d].stream[s]``), the CPU calls
that launched them (``task_link`` from the call to the operation) and the CPU work
around them. The analyses here follow why-layer.md §9.2 (I1–I14) and the anchors it
cites (HolisticTraceAnalysis, Nsight Systems' rules and recipes, TraceLens), in exact
integer picoseconds, each attribution summing to its window (rule R2). ``trace`` holds
every SQL statement; ``report`` puts the analyses into the document ``analyze`` prints.
"""
