"""Which files a kernel may ``#include`` when someone else's server compiles it.

From the command line a kernel is the user's own, compiled as the user on the user's
files: ``#include`` and ``-I`` reach anything the user can read, as with any compiler.
A server that compiles kernels edited by visitors (the app's edit-and-run) must not
let a visitor read the server's files through the preprocessor: an included file's
text comes back in error messages (``syntax error before 'SECRET'``) and, through an
initializer and ``@emit``, as data. ``Confinement`` is that rule:

- a kernel may include only files in its own folder and in the folders the server
  named for the purpose (``allowed``), judged on the *real* path, so ``..`` that
  climbs out, an absolute path elsewhere and a symbolic link that points out are all
  outside; a file outside is never opened, and "refused" does not depend on whether
  it exists, so the rule tells nothing of the file system beyond those folders;
- ``-I`` may name only folders inside them;
- files are named in messages relative to the folder that allowed them, so no
  message carries a server path;
- an error located in a file the visitor did not write says where and what kind of
  error, and quotes none of that file's text (``redact``).
"""
import os
from dataclasses import dataclass
from pathlib import Path

from .diagnostics import KernelError

PREPROCESSOR = "preprocessor error"
RULE = ("an edited kernel may include only files in its own folder and in the server's"
        " include folders (no absolute path, '..' or symbolic link out of them)")


@dataclass(frozen=True)
class Confinement:
    """The folders a kernel at ``main`` may include from: its own and ``allowed``."""

    main: str
    allowed: tuple = ()

    def roots(self) -> tuple:
        """Real paths of the permitted folders, the kernel's own first."""
        own = os.path.realpath(os.path.dirname(os.path.abspath(self.main)))
        return (own, *(os.path.realpath(d) for d in self.allowed))

    def root_of(self, path: str) -> str | None:
        """The permitted folder that holds the real file ``path``, or None."""
        real = os.path.realpath(path)
        for root in self.roots():
            if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
                return root
        return None

    def display(self, path: str) -> str:
        """``path`` named relative to the permitted folder that holds it."""
        if os.path.abspath(path) == os.path.abspath(self.main):
            return self.main
        root = self.root_of(path)
        if root is None:
            return os.path.basename(path)
        return os.path.relpath(os.path.realpath(path), root)

    def check_include_dirs(self, dirs) -> None:
        """Refuse (``ValueError``) an ``-I`` folder outside the permitted ones."""
        for directory in dirs:
            if self.root_of(directory) is None:
                raise ValueError(f"build options: -I {directory}: refused: {RULE}")

    def refusal(self, path, line, spelled) -> KernelError:
        """The one-line error for an ``#include`` spelled ``spelled`` (the visitor's own
        text: never the path it resolved to, which would name a server folder)."""
        return KernelError(path, line, 1, f"#include {spelled} refused: {RULE}", PREPROCESSOR)

    def redact(self, err: KernelError) -> KernelError:
        """``err`` unchanged when it is located in the visitor's own file; otherwise the
        same place and the kind of error, without a word of the file's text."""
        if err.path == self.main:
            return err
        return KernelError(err.path, err.line, err.col,
                           f"{err.kind} in an included file (its text is not shown)", err.kind)


def confinement_for(main: str, allowed) -> Confinement:
    """A ``Confinement`` of the kernel at ``main`` to its folder and ``allowed``;
    each allowed folder must exist (a typo would otherwise confine to nothing)."""
    for directory in allowed:
        if not Path(directory).is_dir():
            raise ValueError(f"--allow-include {directory}: not a directory")
    return Confinement(main, tuple(str(d) for d in allowed))
