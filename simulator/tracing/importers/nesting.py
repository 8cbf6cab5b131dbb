"""Nesting on tracks: the readable reference of ``_nesting.pyx``.

A Chrome trace gives no parent IDs: a slice's parent is the innermost slice enclosing
it on the same track (``pid``/``tid``), and a flow point (v1 ``s``/``t``/``f``) belongs
to the innermost slice enclosing its time there (or, for a finish that binds to the
next slice, the next one to start). One sweep over each track's tasks in (start, end
descending) order settles both, holding only the stack of slices open at the current
time, and the flow points (few next to the slices: about one per kernel launch).

``TrackSweep`` takes the tasks in blocks of int64 rows ``(seq, track, start, end,
free)`` sorted by (track, start, end descending, seq), where ``free`` says the task
names no parent of its own. The points are ``(track, time, point)`` rows sorted the
same way: ``enclosing`` ones bind to the innermost task around them, ``following``
ones to the next task to start at or after them. ``feed`` returns what a block settled:
``nest`` rows ``(child, parent, parent's start)`` and ``bound`` rows ``(point, task)``.
"""
import numpy as np


class TrackSweep:
    """The sweep's state between blocks: the current track, its open stack, the next points."""

    def __init__(self, enclosing, following):
        self.enclosing = np.asarray(enclosing, dtype=np.int64).reshape(-1, 3).tolist()
        self.following = np.asarray(following, dtype=np.int64).reshape(-1, 3).tolist()
        self.e = self.f = 0
        self.current = None
        self.stack = []  # (seq, end, start) of the tasks open at the sweep's time, outermost first

    def feed(self, rows):
        """Nest and bind a block of tasks; returns (nest, bound) int64 arrays."""
        nest, bound = [], []
        enclosing, following, stack = self.enclosing, self.following, self.stack
        for seq, track, start, end, free in np.asarray(rows).tolist():
            if track != self.current:
                self._bind_enclosed(None, bound)
                stack.clear()
                self.current = track
                while self.e < len(enclosing) and enclosing[self.e][0] < track:
                    self.e += 1  # on a track without tasks: bound to nothing
                while self.f < len(following) and following[self.f][0] < track:
                    self.f += 1
            self._bind_enclosed(start, bound)
            while (self.f < len(following) and following[self.f][0] == track
                   and following[self.f][1] <= start):
                bound.append((following[self.f][2], seq))
                self.f += 1
            while stack and stack[-1][1] <= start:
                stack.pop()
            if free and stack and end <= stack[-1][1]:
                nest.append((seq, stack[-1][0], stack[-1][2]))
            stack.append((seq, end, start))
        return _rows(nest, 3), _rows(bound, 2)

    def finish(self):
        """Bind the points left after the last task; returns the ``bound`` rows."""
        bound = []
        self._bind_enclosed(None, bound)
        return _rows(bound, 2)

    def _bind_enclosed(self, before, bound):
        """Points of the current track before ``before`` (None: all that are left): the
        innermost task around each."""
        enclosing, stack = self.enclosing, self.stack
        while (self.e < len(enclosing) and enclosing[self.e][0] == self.current
               and (before is None or enclosing[self.e][1] < before)):
            _, time, point = enclosing[self.e]
            for task, end, _start in reversed(stack):
                if end >= time:
                    bound.append((point, task))
                    break
            self.e += 1


def _rows(items, width):
    return np.array(items, dtype=np.int64).reshape(-1, width)
