#!/usr/bin/env python3
"""Fails on an include cycle or a dependency that points up the layers.

preflight's folders are layers (ARCHITECTURE.md): core at the bottom, plugins and outcome on it,
the agent and the controller's stages above them, the test bed and the command line on top. A
folder may include headers of its own layer and of the layers LAYERS lists for it, nothing else,
and its CMake target may link only the targets of those layers. Modules (x.hpp + x.cpp) must not
include each other in a cycle, inside a folder or across folders.

Usage: scripts/check_layers.py [--root DIR]   (default: the repository this script is in)
Exit 0 when clean; 1 with one line per violation; 2 on a usage error.
"""

import argparse
import os
import re
import sys

# Folder -> the folders it may depend on (besides itself). Order of the layers, bottom up:
# core <- plugins, outcome <- ledger <- agent, controller/net, controller/launch <- controller/run
# <- controller/commands <- integrations/<scheduler> (the wings) <- integrations (the registry)
# <- agent/app, controller/cli (the command lines); controller/run <- testbed. The test bed (its own
# program, preflight-testbed) and the command line (preflight) are both on top and never depend on
# each other: the product binary holds no test bed.
_GENERIC = ["core", "plugins", "outcome", "ledger", "agent", "controller/net", "controller/launch",
            "controller/run", "controller/commands"]
LAYERS = {
    "core": [],
    "plugins": ["core"],
    "outcome": ["core"],
    "ledger": ["core", "outcome"],
    "agent": ["core", "plugins", "outcome", "ledger"],
    "controller/net": ["core"],
    "controller/launch": ["core", "outcome"],
    "controller/run": ["core", "plugins", "outcome", "ledger", "controller/net",
                       "controller/launch"],
    "controller/commands": ["core", "plugins", "outcome", "ledger", "agent", "controller/net",
                            "controller/launch", "controller/run"],
    # The wings: each scheduler over the generic layers, never over another wing.
    "integrations/slurm": _GENERIC,
    "integrations/k8s": _GENERIC,
    "integrations/ssh": _GENERIC,
    # The registry: the one list of wings, the only way the command lines reach them.
    "integrations": _GENERIC + ["integrations/slurm", "integrations/k8s", "integrations/ssh"],
    "testbed": ["core", "plugins", "outcome", "ledger", "controller/net", "controller/launch",
                "controller/run"],
    "agent/app": ["core", "plugins", "outcome", "ledger", "agent", "integrations"],
    "controller/cli": _GENERIC + ["integrations"],
}

# The CMake target each folder builds.
TARGETS = {
    "preflight_core": "core",
    "preflight_plugins": "plugins",
    "preflight_outcome": "outcome",
    "preflight_ledger": "ledger",
    "preflight_agent": "agent",
    "preflight_net": "controller/net",
    "preflight_launch": "controller/launch",
    "preflight_run": "controller/run",
    "preflight_testbed": "testbed",
    "preflight_commands": "controller/commands",
    "preflight_slurm": "integrations/slurm",
    "preflight_k8s": "integrations/k8s",
    "preflight_ssh": "integrations/ssh",
    "preflight_integrations": "integrations",
    "preflight_agent_app": "agent/app",
    "preflight_controller": "controller/cli",
}

SOURCE = re.compile(r"\.(hpp|cpp|cu|h)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    """The layer a repository-relative path belongs to, or None."""
    best = None
    for layer in LAYERS:
        if path == layer or path.startswith(layer + "/"):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def module_of(path):
    return os.path.splitext(path)[0]


def read_sources(root):
    """{path: [(line number, included path)]} for every product source file."""
    sources = {}
    for layer in LAYERS:
        base = os.path.join(root, layer)
        for folder, _, files in os.walk(base):
            for name in sorted(files):
                if not SOURCE.search(name):
                    continue
                full = os.path.join(folder, name)
                rel = os.path.relpath(full, root)
                if layer_of(rel) != layer:
                    continue  # a deeper layer's file (controller/run under controller)
                includes = []
                with open(full, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m:
                            includes.append((number, m.group(1)))
                sources[rel] = includes
    return sources


def layer_violations(sources):
    out = []
    for path, includes in sorted(sources.items()):
        mine = layer_of(path)
        for number, inc in includes:
            theirs = layer_of(inc)
            if theirs is None or theirs == mine or theirs in LAYERS[mine]:
                continue
            out.append(f"{path}:{number}: includes \"{inc}\": {mine} may not depend on {theirs}")
    return out


def module_graph(sources):
    graph = {}
    where = {}
    for path, includes in sources.items():
        a = module_of(path)
        graph.setdefault(a, set())
        for number, inc in includes:
            if layer_of(inc) is None or inc not in sources:
                continue
            b = module_of(inc)
            if a != b:
                graph[a].add(b)
                where.setdefault((a, b), f"{path}:{number}")
    return graph, where


def cycles(graph):
    """Each elementary cycle once, found by a depth-first search from every module in order."""
    found = []
    seen = set()
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):]
                key = frozenset(cycle)
                if key not in seen:
                    seen.add(key)
                    found.append(cycle + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def cmake_violations(root):
    out = []
    checked = 0
    for layer in LAYERS:
        path = os.path.join(root, layer, "CMakeLists.txt")
        if not os.path.exists(path):
            continue
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r"target_link_libraries\(\s*(\S+)(.*?)\)", text, re.S):
            target, args = m.group(1), m.group(2)
            owner = TARGETS.get(target)
            if owner is None:
                continue  # an executable of the folder: it links its own library
            checked += 1
            line = text.count("\n", 0, m.start()) + 1
            for dep in re.findall(r"\bpreflight_\w+", args):
                theirs = TARGETS.get(dep)
                if theirs is None or theirs == owner or theirs in LAYERS[owner]:
                    continue
                out.append(f"{os.path.relpath(path, root)}:{line}: {target} links {dep}: "
                           f"{owner} may not depend on {theirs}")
    return out, checked


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    args = parser.parse_args(argv)
    if not os.path.isdir(os.path.join(args.root, "core")):
        print(f"check_layers: {args.root} has no core/ folder", file=sys.stderr)
        return 2
    sources = read_sources(args.root)
    problems = layer_violations(sources)
    graph, where = module_graph(sources)
    for cycle in cycles(graph):
        edges = [where[(a, b)] for a, b in zip(cycle, cycle[1:])]
        problems.append(f"{edges[0]}: include cycle: {' -> '.join(cycle)} "
                        f"(includes at {', '.join(edges)})")
    linked, targets = cmake_violations(args.root)
    problems += linked
    for p in problems:
        print(p)
    includes = sum(len(v) for v in sources.values())
    print(f"check_layers: {len(graph)} modules, {includes} includes, {targets} targets checked; "
          f"{len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
