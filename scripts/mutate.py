"""Mutation testing of small arithmetic: does some test fail when the arithmetic is wrong?

    python scripts/mutate.py FILE.py FUNCTION[,FUNCTION...] -- PYTEST ARGS...

Each mutant changes one thing in one of the named functions of FILE (an operator, a
comparison, an integer constant, ``round`` into ``int``, ``max`` into ``min``, a
``searchsorted`` side, ...). The module is written back mutated, the given tests run
(``python -m pytest -x -q PYTEST ARGS``), and the mutant is *killed* if they fail.
Run it on a copy of the checkout (it rewrites FILE while it works and restores it at
the end); survivors are printed with their line for a test, or a comment saying why
the change is equivalent. Not part of the test suite: a tool for writing tests.
"""
import argparse
import ast
import copy
import subprocess
import sys
import time
from pathlib import Path

BINARY = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.FloorDiv: ast.Mult,
          ast.Div: ast.Mult, ast.Mod: ast.FloorDiv, ast.LShift: ast.RShift,
          ast.RShift: ast.LShift, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd, ast.Pow: ast.Mult}
COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
           ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
NAMES = {"round": "int", "max": "min", "min": "max", "maximum": "minimum",
         "minimum": "maximum", "floor": "ceil", "ceil": "floor", "any": "all", "all": "any"}
STRINGS = {"left": "right", "right": "left"}


def _sites(tree, functions):
    """Every (node, description, apply) mutation site inside the named functions."""
    for fn in ast.walk(tree):
        if not (isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name in functions):
            continue
        for node in ast.walk(fn):
            if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in BINARY:
                new = BINARY[type(node.op)]
                yield node, f"{type(node.op).__name__} -> {new.__name__}", \
                    lambda n, new=new: setattr(n, "op", new())
            elif isinstance(node, ast.Compare):
                for i, op in enumerate(node.ops):
                    if type(op) in COMPARE:
                        new = COMPARE[type(op)]
                        yield node, f"{type(op).__name__} -> {new.__name__}", \
                            lambda n, i=i, new=new: n.ops.__setitem__(i, new())
            elif isinstance(node, ast.Constant) and type(node.value) is int:
                yield node, f"{node.value} -> {node.value + 1}", \
                    lambda n: setattr(n, "value", n.value + 1)
            elif isinstance(node, ast.Constant) and node.value in STRINGS:
                yield node, f"{node.value!r} -> {STRINGS[node.value]!r}", \
                    lambda n: setattr(n, "value", STRINGS[n.value])
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
                yield node, f"drop {type(node.op).__name__}", None
            elif isinstance(node, ast.BoolOp):
                new = ast.Or if isinstance(node.op, ast.And) else ast.And
                yield node, f"{type(node.op).__name__} -> {new.__name__}", \
                    lambda n, new=new: setattr(n, "op", new())
            elif isinstance(node, ast.Name) and node.id in NAMES:
                yield node, f"{node.id} -> {NAMES[node.id]}", \
                    lambda n: setattr(n, "id", NAMES[n.id])
            elif isinstance(node, ast.Attribute) and node.attr in NAMES:
                yield node, f".{node.attr} -> .{NAMES[node.attr]}", \
                    lambda n: setattr(n, "attr", NAMES[n.attr])


class _DropUnary(ast.NodeTransformer):
    def __init__(self, target):
        self.target = target

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        return node.operand if node is self.target else node


def mutants(source, functions):
    """(line, description, mutated source) for every mutation site."""
    tree = ast.parse(source)
    count = sum(1 for _ in _sites(tree, functions))
    for k in range(count):
        mutated = copy.deepcopy(tree)
        node, what, apply = list(_sites(mutated, functions))[k]
        if apply is None:
            mutated = _DropUnary(node).visit(mutated)
        else:
            apply(node)
        yield node.lineno, what, ast.unparse(ast.fix_missing_locations(mutated))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("functions", help="comma-separated function names to mutate")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args(argv)
    original = args.file.read_text()
    tests = [a for a in args.pytest_args if a != "--"]
    killed, survived = 0, []
    started = time.time()
    try:
        for line, what, text in mutants(original, set(args.functions.split(","))):
            args.file.write_text(text)
            try:
                done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q",
                                       "-p", "no:cacheprovider", *tests],
                                      capture_output=True, timeout=args.timeout)
                dead = done.returncode != 0
            except subprocess.TimeoutExpired:
                dead = True  # a mutant that hangs the tests is caught too
            if dead:
                killed += 1
            else:
                survived.append((line, what))
                print(f"SURVIVED {args.file}:{line}: {what}", flush=True)
    finally:
        args.file.write_text(original)
    print(f"{args.file} [{args.functions}]: {killed} killed, {len(survived)} survived"
          f" ({time.time() - started:.0f} s)")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
