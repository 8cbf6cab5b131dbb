"""The component hierarchy read from hierarchical location names.

Simulators name components by their place in the machine, ``GPU.SA[3].CU[12].SIMD[1]``:
the dotted parts form a tree (GPU > SA[3] > CU[12] > SIMD[1]) that a user can browse
instead of scrolling 700 names. A name can be both a component and the parent of
others (``GPU.SA[0].CU[0]`` and ``GPU.SA[0].CU[0].SIMD[0]``).
"""
import re
from dataclasses import dataclass, field

from ..catalog import natural_key

SEPARATOR = "."


@dataclass
class Node:
    """One level of the hierarchy: ``path`` is the dotted prefix, ``name`` its last part;
    ``component`` says whether ``path`` itself is a component; ``count`` the components
    at or below it."""
    name: str
    path: str
    component: bool = False
    count: int = 0
    children: list = field(default_factory=list)


def _split(name):
    # Brackets may hold dots (``L2[0.5]`` from an importer): split outside them only.
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(name):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        elif ch == SEPARATOR and depth == 0:
            parts.append(name[start:i])
            start = i + 1
    parts.append(name[start:])
    return parts


def component_tree(names):
    """The roots of the hierarchy of ``names``, children in natural order (CU[2] before
    CU[10]); each node's ``count`` is the number of components at or below it."""
    root = Node("", "")
    index = {(): root}
    for name in names:
        parts = _split(name)
        node = root
        for depth in range(1, len(parts) + 1):
            key = tuple(parts[:depth])
            child = index.get(key)
            if child is None:
                child = Node(parts[depth - 1], SEPARATOR.join(key))
                index[key] = child
                node.children.append(child)
            node = child
            node.count += 1
        node.component = True
    for node in index.values():
        node.children.sort(key=lambda n: natural_key(n.name))
    return root.children


def subtree_filter(path):
    """The Overview filter (a regular expression) matching ``path`` and everything below."""
    return "^" + re.escape(path) + r"(\.|$)"


def tree_data(nodes):
    """``nodes`` as plain lists for the browser (assets/tree.js draws the tree):
    [name, path, Overview filter of the subtree, is a component, count, children]."""
    return [[n.name, n.path, subtree_filter(n.path), n.component, n.count,
             tree_data(n.children)] for n in nodes]
