#!/usr/bin/env python3
"""src-metrics.py - structural measurements of orcu's src/ (issue 12).

Prints, for the tree it is run in:
  1. the module call graph: which .c calls non-static functions defined in
     which other .c (from Universal Ctags), its import cycles (strongly
     connected components) and the #include graph of local headers;
  2. each lock and the files that take it;
  3. ordered atomics (acquire, release, acq_rel, seq_cst, fences) and how
     many state no partner: no "Pairs with" (or "Order:" for an ordering
     that has no partner) in a comment on the line or the 10 lines above;
  4. the longest functions.

Usage: python3 scripts/src-metrics.py [--unpaired] [--top N] [root]
  --unpaired   also list every ordered atomic without a stated partner
Needs python3 and universal-ctags (Debian: universal-ctags).
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
ROOT = ARGS[0] if ARGS else os.path.join(os.path.dirname(__file__), "..")
SHOW_UNPAIRED = "--unpaired" in sys.argv
TOP = 12
for i, a in enumerate(sys.argv):
    if a == "--top" and i + 1 < len(sys.argv):
        TOP = int(sys.argv[i + 1])

SRC = os.path.join(ROOT, "src")
INC = os.path.join(ROOT, "include", "orcu")


def files(d, exts):
    return sorted(os.path.join(r, f) for r, _, fs in os.walk(d)
                  for f in fs if f.endswith(exts))


def rel(p):
    return os.path.relpath(p, ROOT)


def strip_comments_and_strings(text):
    """Blank out comments and string literals, keeping line numbers."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', blank, text,
                  flags=re.S)


def ctags(paths):
    out = subprocess.run(
        ["ctags", "--fields=+neK", "--kinds-C=f", "-o", "-"] + paths,
        check=True, capture_output=True, text=True).stdout
    funcs = []
    for line in out.splitlines():
        parts = line.split("\t")
        name, path = parts[0], parts[1]
        fields = dict(p.split(":", 1) for p in parts[3:] if ":" in p)
        funcs.append({
            "name": name, "file": path,
            "line": int(fields.get("line", 0)),
            "end": int(fields.get("end", fields.get("line", 0))),
            "static": "file" in fields or line.split("\t")[2].startswith(
                "/^static"),
        })
    return funcs


def module(path):
    return os.path.splitext(os.path.basename(path))[0]


def call_graph(cfiles, funcs):
    defined = {}
    for f in funcs:
        if not f["static"] and f["file"].endswith(".c"):
            defined[f["name"]] = module(f["file"])
    edges = defaultdict(set)
    for p in cfiles:
        code = strip_comments_and_strings(open(p).read())
        me = module(p)
        for ident in set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", code)):
            other = defined.get(ident)
            if other and other != me:
                edges[me].add(other)
    return edges


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


LOCK_CALL = re.compile(
    r"\bpthread_mutex_(?:lock|trylock)\s*\(\s*&?\s*([^)]*)\)")
LOCK_WRAPPER = re.compile(r"(?<!void )\borcu__(\w*?lock)\s*\(")


def lock_name(expr):
    expr = expr.strip()
    m = re.search(r"(?:->|\.)\s*(\w+)\s*$", expr)
    base = m.group(1) if m else expr
    if re.fullmatch(r"orcu__g\.\w+", expr):
        return expr
    return base


def locks(srcfiles):
    users = defaultdict(set)
    for p in srcfiles:
        code = strip_comments_and_strings(open(p).read())
        for m in LOCK_CALL.finditer(code):
            if m.group(1).strip() in ("m", "mutex"):
                continue  # a helper taking the lock it is given
            users[lock_name(m.group(1))].add(rel(p))
        for m in LOCK_WRAPPER.finditer(code):
            name = m.group(1)
            if name.endswith("unlock") or name.startswith("assert"):
                continue
            users["(via orcu__%s)" % name].add(rel(p))
    return users


ORDERED = re.compile(
    r"\borcu__(?:(?:load|store|xchg|fetch_add|fetch_sub|cas)_"
    r"(?:acquire|release|acq_rel|seq_cst)|fence_(?:seq_cst|acquire|release))"
    r"\s*\(|\borcu__link_(?:load|store)_(?:acquire|release)\s*\("
    r"|\b__atomic_\w+\s*\([^;]*__ATOMIC_(?:ACQUIRE|RELEASE|ACQ_REL|"
    r"SEQ_CST)|\batomic_thread_fence\s*\(\s*memory_order_(?!relaxed)"
    r"|\batomic_(?:load|store|exchange|fetch_add|fetch_sub|"
    r"compare_exchange_strong|compare_exchange_weak)\s*\(")
REASON = re.compile(r"[Pp]airs with|\bOrder:")


def atomics(srcfiles):
    total, unpaired = 0, []
    per_file = {}
    for p in srcfiles:
        raw = open(p).read()
        lines = raw.splitlines()
        code = strip_comments_and_strings(raw).splitlines()
        n = bad = 0
        for i, line in enumerate(code):
            if "#define" in line:
                continue
            for _ in ORDERED.finditer(line):
                n += 1
                window = "\n".join(lines[max(0, i - 10):i + 1])
                if not REASON.search(window):
                    bad += 1
                    unpaired.append("%s:%d: %s" % (rel(p), i + 1,
                                                   lines[i].strip()))
        per_file[rel(p)] = (n, bad)
        total += n
    return total, unpaired, per_file


def includes(srcfiles):
    g = {}
    for p in srcfiles:
        g[os.path.basename(p)] = sorted(
            re.findall(r'^#include\s+"([^"]+)"', open(p).read(), re.M))
    return g


def main():
    cfiles = files(SRC, (".c",))
    hfiles = files(SRC, (".h",)) + files(INC, (".h",))
    allsrc = cfiles + hfiles
    funcs = ctags(allsrc)

    print("== 1. module call graph (calls to non-static functions of "
          "another src/*.c)")
    edges = call_graph(cfiles, funcs)
    for m in sorted(edges):
        print("  %-12s -> %s" % (m, " ".join(sorted(edges[m]))))
    nodes = {module(p) for p in cfiles}
    cycles = [c for c in sccs(nodes, edges) if len(c) > 1]
    print("  import cycles: %d" % len(cycles))
    for c in cycles:
        print("    %d modules: %s" % (len(c), " ".join(c)))
    print("  #include graph (local headers):")
    for f, inc in sorted(includes(allsrc).items()):
        if inc:
            print("  %-16s %s" % (f, " ".join(inc)))

    print("\n== 2. locks and the files that take them")
    for name, who in sorted(locks(cfiles + hfiles).items()):
        print("  %-28s %d files: %s" % (name, len(who),
                                         " ".join(sorted(who))))

    print("\n== 3. ordered atomics")
    total, unpaired, per_file = atomics(allsrc)
    for f, (n, bad) in sorted(per_file.items()):
        if n:
            print("  %-26s %3d ordered, %3d without a stated partner"
                  % (f, n, bad))
    print("  total: %d ordered atomics, %d without a stated partner"
          % (total, len(unpaired)))
    if SHOW_UNPAIRED:
        for u in unpaired:
            print("    " + u)

    print("\n== 4. longest functions")
    sized = sorted(funcs, key=lambda f: f["end"] - f["line"] + 1,
                   reverse=True)
    for f in sized[:TOP]:
        print("  %4d lines  %s:%d %s()" % (f["end"] - f["line"] + 1,
                                           rel(f["file"]), f["line"],
                                           f["name"]))
    lens = [f["end"] - f["line"] + 1 for f in funcs]
    print("  %d functions, mean %.1f lines" % (len(lens),
                                               sum(lens) / len(lens)))
    big = sorted(((sum(1 for _ in open(p)), rel(p)) for p in allsrc),
                 reverse=True)[:3]
    print("  largest files: %s" % ", ".join("%s %d" % (p, n)
                                             for n, p in big))


if __name__ == "__main__":
    main()
