"""A private file outside every folder an edited kernel may include, holding a unique
token, and the hostile edits that try to read it (issue 37): each must end in a
one-line refusal, and the token must reach nothing a visitor can see.

The private file is shaped the way a leak shows: ``GPUSCOPE_X = 1`` completes a
declaration the kernel starts (``float GPUSCOPE_X``), so whatever comes next, the
token, would be quoted by a syntax error.
"""
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from simulator.kernels import builtin_source

RULE = "an edited kernel may include only files in its own folder and in the server's include folders"
KERNEL = builtin_source("reduction_v3")
HEADER = "#define GPUSCOPE_SCALE 3\n"
"""The allowed include folder's header (``scale.h``)."""


@dataclass
class Canary:
    """The token, the private file holding it, and the server's include folder (which
    holds ``scale.h`` and ``link.h``, a symbolic link to the private file)."""
    token: str
    secret: Path
    include_dir: Path

    def hostile_edits(self):
        """(name, kernel source, build options) of each way to reach the private file."""
        lead = "float GPUSCOPE_X;\n"
        climb = os.path.relpath(self.secret, "/")  # '..' enough to climb from any folder
        return [
            ("absolute", f'{lead}#include "{self.secret}"\n{KERNEL}', ""),
            ("dot-dot", f'{lead}#include "{"../" * 12}{climb}"\n{KERNEL}', ""),
            ("angle", f"{lead}#include <{self.secret}>\n{KERNEL}", ""),
            ("macro", f'#define HIDDEN "{self.secret}"\n{lead}#include HIDDEN\n{KERNEL}', ""),
            ("symlink", f'{lead}#include "link.h"\n{KERNEL}', ""),
            ("-I", f'{lead}#include "{self.secret.name}"\n{KERNEL}', f"-I {self.secret.parent}"),
        ]

    def allowed_edit(self):
        """A kernel that uses the include folder's header as it may."""
        return ('#include "scale.h"\n'
                + KERNEL.replace("sdata[tid] = g_idata[i]", "sdata[tid] = GPUSCOPE_SCALE * g_idata[i]"))


def make_canary(root: Path) -> Canary:
    token = f"CANARY_{uuid.uuid4().hex}"
    private = root / "private"
    private.mkdir()
    secret = private / "secret.h"
    secret.write_text(f"GPUSCOPE_X = 1;\n{token};\n")
    include_dir = root / "include"
    include_dir.mkdir()
    (include_dir / "scale.h").write_text(HEADER)
    (include_dir / "link.h").symlink_to(secret)
    return Canary(token, secret, include_dir)


def files_holding(token: str, *folders: Path):
    """Every file under ``folders`` whose bytes hold ``token`` (traces, logs, job files)."""
    found = []
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink() and token.encode() in path.read_bytes():
                found.append(path)
    return found
