"""A simulated run against a measured one: each simulated kernel beside the same kernel
in an imported real profile (PyTorch/Kineto, Nsight Systems), matched by name.

A profiler names a kernel as its compiler does: ``copy``, ``void copy<double>(double
const*, double*)``, ``ns::copy(...)`` or the mangled ``_Z4copyPKdPd``. A simulated
kernel is its OpenCL function name. So a simulated kernel matches the profile's
kernels of exactly its name, or else those whose function name is its name: the
identifier before the argument list and template arguments, after any return type and
namespace (from a mangled name, the first source name). A kernel launched many times
is compared per launch, by the median of its launches' durations.
"""
import re
import statistics
from dataclasses import dataclass

_IDENT = re.compile(r"[A-Za-z_]\w*")


def function_name(name: str) -> str:
    """The function's bare name in a kernel name as profilers write it."""
    text = name.strip()
    if text.startswith("_Z"):
        return _mangled_name(text) or text
    depth, cut = 0, len(text)
    for i, char in enumerate(text):  # the first "(" outside template brackets
        if char == "<":
            depth += 1
        elif char == ">":
            depth = max(0, depth - 1)
        elif char == "(" and depth == 0:
            cut = i
            break
    head = _without_template_arguments(text[:cut])
    words = _IDENT.findall(head.rsplit("::", 1)[-1])
    return words[-1] if words else text


def _without_template_arguments(head):
    """``head`` without the ``<...>`` at its end (nested ones included)."""
    while head.endswith(">"):
        depth = 0
        for i in range(len(head) - 1, -1, -1):
            depth += {">": 1, "<": -1}.get(head[i], 0)
            if depth == 0:
                break
        head = head[:i]
    return head


def _mangled_name(text):
    """The function's name in an Itanium-mangled name: the one source name of
    ``_Z4copyPd``, the last of a nested ``_ZN2ns4copyE...`` (before any template
    arguments); None for anything else."""
    nested = text.startswith("_ZN")
    i = 3 if nested else 2
    while nested and i < len(text) and text[i] in "rVK":  # qualifiers of a method
        i += 1
    found = None
    while i < len(text) and text[i].isdigit():
        j = i
        while j < len(text) and text[j].isdigit():
            j += 1
        length = int(text[i:j])
        found, i = text[j:j + length], j + length
        if not nested:
            break
    return found


@dataclass(frozen=True)
class Measured:
    name: str              # the simulated kernel's name
    real_names: tuple      # the profile's names it matched
    sim_launches: int
    real_launches: int
    sim_ps: float          # median duration of a launch, simulated
    real_ps: float         # median duration of a launch, measured

    @property
    def ratio(self):
        """Simulated / measured per launch (1: exact; above 1: simulated too slow)."""
        return self.sim_ps / self.real_ps if self.real_ps else None


def match_measured(simulated, measured) -> list[Measured]:
    """The simulated kernels (``stats.Kernel``s) with a match among the profile's
    ``measured`` ones, in the order each first ran in the simulation."""
    by_name, by_function = {}, {}
    for kernel in measured:
        by_name.setdefault(kernel.name, []).append(kernel)
        by_function.setdefault(function_name(kernel.name), []).append(kernel)
    launches = {}
    for kernel in simulated:
        launches.setdefault(kernel.name, []).append(kernel.duration_ps)
    found = []
    for name, durations in launches.items():
        real = by_name.get(name) or by_function.get(function_name(name)) or []
        if not real:
            continue
        found.append(Measured(
            name, tuple(dict.fromkeys(k.name for k in real)), len(durations), len(real),
            statistics.median(durations), statistics.median(k.duration_ps for k in real)))
    return found
