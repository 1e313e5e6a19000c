"""Rules on the C++ source's layout (docs/ARCHITECTURE.md), read from its #include lines:

- components depend downwards only: the graph of which component's files include which other
  component's headers has no cycle;
- inside a component, no unit (a header and its source file) includes, directly or through
  others, a header whose unit includes it back;
- only the simulator (sim, sim_server), the sim backend (source/sim/), the command line's
  `sim` and `demo` commands and the Python binding that mssql_cdc.fake writes through
  (bindings/sim_bindings.cc) include the simulator's headers.
"""

import re
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
INCLUDE = re.compile(r'^#include "([a-z_]+)/([a-z_/]+)\.(?:h|cc|inc)"', re.M)
# Who may include sim/...: the simulator itself, and what is about the simulator.
SIM_USERS = ("sim/", "sim_server/", "source/sim/", "cli/sim_", "cli/demo_command.cc", "bindings/sim_bindings.cc")


def files():
    return sorted(p for p in SRC.rglob("*") if p.suffix in (".h", ".cc"))


def includes(path):
    return INCLUDE.findall(path.read_text())


def component(path):
    return path.relative_to(SRC).parts[0]


def unit(path):
    """The unit of a file: its path under src/ without the extension (source/sim/sim_source)."""
    return str(path.relative_to(SRC).with_suffix(""))


def cycle(graph):
    """A cycle of `graph` (node -> set of nodes) as a list of nodes, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for child in sorted(graph.get(node, ())):
            if state.get(child) == "open":
                return stack[stack.index(child):] + [child]
            if child not in state:
                found = visit(child)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_components_depend_downwards_only():
    graph = defaultdict(set)
    for path in files():
        for other, _ in includes(path):
            if other != component(path) and (SRC / other).is_dir():
                graph[component(path)].add(other)
    assert cycle(graph) is None, " -> ".join(cycle(graph))


def test_no_unit_includes_itself_back():
    graph = defaultdict(set)
    for path in files():
        for other, rest in includes(path):
            target = f"{other}/{rest}"
            if target != unit(path) and (SRC / f"{target}.h").exists():
                graph[unit(path)].add(target)
    assert cycle(graph) is None, " -> ".join(cycle(graph))


def test_only_the_simulator_s_own_parts_include_it():
    offending = []
    for path in files():
        where = str(path.relative_to(SRC))
        if any(where.startswith(allowed) for allowed in SIM_USERS):
            continue
        offending += [f"{where} includes sim/{rest}.h" for other, rest in includes(path) if other == "sim"]
    assert offending == []


def test_the_rules_see_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
