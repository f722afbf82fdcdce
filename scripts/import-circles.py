#!/usr/bin/env python3
"""Import circles inside each crate of the workspace, and arrows back up a layer, drawn from the
source's own paths.

Every `crate::a::b` and `super::…` path a file names (in `use` lines and inline) is resolved to
the file of the deepest module it reaches; a file that names another's module imports it. The
strongly connected groups of two or more files are the circles (the compiler keeps crates from
importing each other, not the files of one crate). Prints each circle with its files and
arrows, then the count; exits 1 when there is one (`--max N` allows up to N).

Where a crate's layers are declared (`LAYERS`: its top-level modules, top first), a file that
names a module of a layer above its own is an arrow back up: each is printed, and any fails.
A top-level module of such a crate that no layer names fails too, so a new one is placed.

    python3 scripts/import-circles.py            # every crate
    python3 scripts/import-circles.py crates/tui # one
"""

import os
import re
import sys

# The checkout it is run in (scripts/.. when run from elsewhere).
ROOT = os.getcwd() if os.path.exists("Cargo.toml") else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*?)\}", re.S)


# Top-level modules by layer, top first: a module may name those of its own layer and below.
LAYERS = {
    "crates/tui/src": [
        ["lib"],
        ["runtime"],
        ["terminal", "export_jobs", "bulk_run"],
        ["app"],
        ["tabs"],
        ["forms"],
        ["view"],
        ["index"],
        ["kit"],
        ["keymap"],
        ["msg"],
        ["money_read"],
    ],
    # The HTTP layer over the rules, which never name it.
    "crates/gateway/src": [
        ["lib", "server"],
        ["requests", "payments", "settling", "sending", "relaying", "lookup", "metrics", "counters", "state"]
        + ["refused", "agents", "store", "index", "reads", "config", "sign_in", "tls"],
    ],
}


def arrows_up(src, mods, arrows):
    """(file, file) pairs where the first names a module of a layer above its own; and the
    top-level modules no layer names."""
    layers = LAYERS.get(os.path.relpath(src, ROOT))
    if layers is None:
        return [], []
    level = {name: at for at, names in enumerate(layers) for name in names}
    top = lambda m: m[0] if m else "lib"
    unplaced = sorted({top(m) for m in mods if top(m) not in level})
    up = [
        (m, t)
        for m in sorted(mods)
        for t in sorted(arrows[m])
        if top(m) in level and top(t) in level and level[top(t)] < level[top(m)]
    ]
    return up, unplaced


def crates(only):
    roots = [os.path.join(ROOT, "src")] + sorted(
        os.path.join(ROOT, "crates", c, "src") for c in os.listdir(os.path.join(ROOT, "crates"))
    )
    return [r for r in roots if os.path.isdir(r) and (not only or os.path.abspath(only) in r)]


def modules(src):
    """Module path (tuple) -> file, for every .rs file of a crate's src/."""
    found = {}
    for folder, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(folder, name), src)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib", "main"):
                rel = rel[:-1]
            found[tuple(rel)] = os.path.join(folder, name)
    return found


def code(path):
    text = open(path, encoding="utf-8").read()
    text = text.split("\n#[cfg(test)]", 1)[0]  # tests may import anything of their module
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def resolve(path, mods):
    for end in range(len(path), 0, -1):
        if path[:end] in mods:
            return path[:end]
    return None


def graph(src):
    mods = modules(src)
    arrows = {}
    for mod, file in mods.items():
        text = code(file)
        targets = set()
        for kind, parts in _paths(text):
            base = list(mod) if kind == "super" else []
            if kind == "super":
                base = base[:-1]
                while parts and parts[0] == "super":
                    base, parts = base[:-1], parts[1:]
            target = resolve(tuple(base + parts), mods)
            if target is not None and target != mod:
                targets.add(target)
        arrows[mod] = targets
    return mods, arrows


def _paths(text):
    for match in GROUP.finditer(text):
        base = [p for p in match.group(2).split("::") if p]
        for item in match.group(3).split(","):
            item = item.strip().split(" as ")[0].strip()
            if item == "self":
                yield match.group(1), base
            elif item and "{" not in item and "}" not in item:
                yield match.group(1), base + item.split("::")
    for match in PATH.finditer(GROUP.sub("", text)):
        yield match.group(1), [p for p in match.group(2).split("::") if p]


def circles(arrows):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in arrows.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10000)
    for v in list(arrows):
        if v not in index:
            visit(v)
    return out


def main():
    args = sys.argv[1:]
    allowed = 0
    if "--max" in args:
        at = args.index("--max")
        allowed = int(args[at + 1])
        del args[at : at + 2]
    total = 0
    wrong = 0
    for src in crates(args[0] if args else None):
        mods, arrows = graph(src)
        up, unplaced = arrows_up(src, mods, arrows)
        for m, t in up:
            print(f"arrow up a layer, in {os.path.relpath(src, ROOT)}: {os.path.relpath(mods[m], src)} -> {os.path.relpath(mods[t], src)}")
        for name in unplaced:
            print(f"in no layer, in {os.path.relpath(src, ROOT)}: {name} (scripts/import-circles.py, LAYERS)")
        wrong += len(up) + len(unplaced)
        for group in circles(arrows):
            total += 1
            inside = set(group)
            count = sum(len(arrows[m] & inside) for m in group)
            print(f"circle {total}: {len(group)} files, {count} arrows, in {os.path.relpath(src, ROOT)}")
            for m in group:
                names = ", ".join(os.path.relpath(mods[t], src) for t in sorted(arrows[m] & inside))
                print(f"  {os.path.relpath(mods[m], src)} -> {names}")
    print(f"{total} import circles, {wrong} arrows up a layer or modules in none")
    sys.exit(1 if total > allowed or wrong > 0 else 0)


if __name__ == "__main__":
    main()
