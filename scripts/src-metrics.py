#!/usr/bin/env python3
"""src-metrics.py - structural measurements of orcu's src/, and the check
of its layering (issues 12 and 24).

Usage: python3 scripts/src-metrics.py [--check] [--unpaired] [--top N] [root]
  --check      print only the violations (one a line) and exit 1 if any
               (2 if universal-ctags is missing)
  --unpaired   also list every ordered atomic without a stated partner
Needs python3 and universal-ctags (Debian: universal-ctags).

Prints, for the tree it is run in:
  0. the layers: each folder's files and the folders it uses;
  1. the module graph: which src/**/*.c uses which other .c, directly or
     through header inlines, its import cycles and the #include graph;
  2. each lock and the files that take it;
  3. ordered atomics (acquire, release, acq_rel, seq_cst, fences) and how
     many state no partner: no "Pairs with" (or "Order:" for an ordering
     that has no partner) in a comment on the line or the 10 lines above;
  4. the files that write slot state: fields of struct orcu__slot assigned
     or atomically stored outside slot.c and slot.h's inlines;
  5. the longest functions;  6. the size of each header;
  7. the check below (what --check prints).

Uses.  A file F uses module M (one src/**/*.c) where F names
  - a non-static function defined in M (a call, or its address taken), or
  - an object defined in M and declared extern somewhere (os.c's link
    anchor to lifecycle.c is such a use), or
  - a function or macro defined in a header (a static inline, a #define)
    whose body uses M, directly or through other header inlines and macros,
    followed to any depth.  Every #if branch counts (orcu_read_lock() in
    include/orcu.h calls entry.c's orcu__read_lock_slow() in one, registry.c's
    orcu__qsbr_check_lock() in another).
A call is a use of a function.  Names after "." or "->" are members, and
comments and strings are blanked, so neither counts.

Layers.  A file's folder is the first directory under src/: bottom up
  base < readers < callbacks < top < compat
and a folder uses only itself and the folders below it.  include/ (the
public headers) is below every folder.  On a flat src/ (before the layer
move) each file's folder comes from FLAT_FOLDER below.

--check fails, one line each, on:
  - an upward use: a file (a .c, or the body of a src/ header's inline or
    macro) that uses a module of a higher folder:
      FILE:LINE: CALLER -> [INLINE -> ...] NAME (MODULE.c): FOLDER -> FOLDER
  - an upward #include:  FILE:LINE: #include "H" (PATH): FOLDER -> FOLDER
  - an import cycle among modules: calls (and function addresses),
    counting header inlines.  Section 1 also counts the cycles with
    objects, for information: objects count for the layering, not here;
  - a Calls line that is not the file's calls (below);
  - a function of src/ that calls a cancellation point (CANCEL_POINTS:
    stdio, file and socket I/O, sleeps, joins, condition and semaphore
    waits) and neither orcu__nocancel_begin() nor pthread_setcancelstate(),
    unless it is static and every caller in its file is covered so:
    a pthread_cancel() never takes effect inside orcu (os.c
    "Cancellation"), so the library reaches one only with cancellation
    disabled.  Futex waits through syscall() are no cancellation point.
Nothing is whitelisted: what the check finds is what the tree has.

Calls lines.  Each src/**/*.c opens with a comment that says which modules
it calls, in a Calls clause.  The grammar:
  - a Calls clause starts at the word "Calls" opening a sentence, or at
    "calls" right after a semicolon, and ends at the next ";" or at the
    next "." followed by white space or the end of the comment (so the
    "." of "os.c" does not end it).  A comment may have several.
  - each word NAME.c in a clause (a folder prefix such as urcu_abi/ is
    allowed) names module NAME; everything else (headers, function names,
    "only", "libc", reasons in parentheses) is commentary.
  - a clause without a NAME.c ("Calls no other orcu module", "calls only
    libc") says the file calls no other module.
The named modules must be exactly those whose functions the file calls,
directly or through header inlines and macros.  Reading another module's
objects is not a call; name it in another sentence if it matters.
"""
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
TOP = 12
for i, a in enumerate(sys.argv):
    if a == "--top" and i + 1 < len(sys.argv):
        TOP = int(sys.argv[i + 1])
        ARGS.remove(sys.argv[i + 1])
ROOT = ARGS[0] if ARGS else os.path.join(os.path.dirname(__file__), "..")
SHOW_UNPAIRED = "--unpaired" in sys.argv
CHECK = "--check" in sys.argv

SRC = os.path.join(ROOT, "src")
INC = os.path.join(ROOT, "include")

FOLDERS = ["base", "readers", "callbacks", "top", "compat"]
PUBLIC = "include"          # the public headers: below every folder
# A flat src/ (before commit 77dabc0 moved the files into folders): the
# folder each file went to, so the old tree can be measured alike.
FLAT_FOLDER = {}
for _folder, _names in (
        ("base", "atomics.h seq.h trace.h event.h cblist.c cblist.h cpulist.c"
                 " cpulist.h mpsc.c delay.c os.c config.c postcheck.c"
                 " internal.h"),
        ("readers", "registry.c gp.c"),
        ("callbacks", "slot.c slot.h postq.c nocb.c cpu.c serve.c"),
        ("top", "entry.c call.c barrier.c lifecycle.c stats.c"),
        ("compat", "compat.c urcu_flavor.c abi.h common.c memb.c qsbr.c")):
    for _n in _names.split():
        FLAT_FOLDER[_n] = _folder

# Attribute macros ctags would otherwise take for the declared names.
CTAGS_OPTS = ["-I", "ORCU__ALIGNED,ORCU__HIDDEN,ORCU_API,_Atomic",
              "-D", "ORCU__ATOMIC(T)=T"]


def files(d, exts):
    return sorted(os.path.join(r, f) for r, _, fs in os.walk(d)
                  for f in fs if f.endswith(exts))


def rel(p):
    return os.path.relpath(p, ROOT)


def module(path):
    return os.path.splitext(os.path.basename(path))[0]


_flat = []


def flat_layout():
    """True for a src/ without folders (before the layer move)."""
    if not _flat:
        _flat.append(not any(os.path.isdir(os.path.join(SRC, d))
                             for d in os.listdir(SRC)))
    return _flat[0]


def folder(path):
    """The layer folder of a file: base..compat, PUBLIC, or None."""
    r = os.path.relpath(path, SRC)
    if r.startswith(".."):
        return PUBLIC if not os.path.relpath(path, INC).startswith("..") \
            else None
    parts = r.split(os.sep)
    if len(parts) == 1:
        # A file directly in src/ has a folder only in the flat layout.
        return FLAT_FOLDER.get(parts[0]) if flat_layout() else None
    return parts[0]


def rank(f):
    if f == PUBLIC:
        return -1
    return FOLDERS.index(f) if f in FOLDERS else None


def strip_comments_and_strings(text):
    """Blank out comments and string literals, keeping line numbers."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"'
                  r"|'(?:\\.|[^'\\\n])+'", blank, text, flags=re.S)


_text_cache = {}


def source(p):
    """(raw text, code with comments and strings blanked) of a file."""
    if p not in _text_cache:
        raw = open(p).read()
        _text_cache[p] = (raw, strip_comments_and_strings(raw))
    return _text_cache[p]


def ctags_binary():
    """Universal Ctags with JSON output (Debian installs it as
    ctags-universal; ctags may be another Ctags), or exit 2 saying why."""
    import shutil
    for name in ("ctags-universal", "universal-ctags", "ctags"):
        path = shutil.which(name)
        if not path:
            continue
        feats = subprocess.run([path, "--list-features"],
                               capture_output=True, text=True).stdout
        if re.search(r"^json\b", feats, re.M):
            return path
    print("src-metrics: needs Universal Ctags with JSON output "
          "(Debian: apt-get install universal-ctags)", file=sys.stderr)
    sys.exit(2)


def ctags(paths):
    """Every tag (functions, variables, externs, macros, structs, members,
    locals, parameters, prototypes) of the files, as dicts."""
    out = subprocess.run(
        [ctags_binary(), "--output-format=json", "--fields=+neKSfZ",
         "--kinds-C=fvxdsmlzp"] + CTAGS_OPTS + ["-o", "-"] + paths,
        check=True, capture_output=True, text=True).stdout
    tags = []
    for line in out.splitlines():
        t = json.loads(line)
        if t.get("_type") != "tag":
            continue
        t["line"] = int(t.get("line", 0))
        t["end"] = int(t.get("end", t["line"]))
        t["static"] = bool(t.get("file")) or \
            t.get("pattern", "").startswith("/^static")
        tags.append(t)
    return tags


IDENT = re.compile(r"\b[A-Za-z_]\w*")


def idents(code, first_line=1):
    """(name, line) of each identifier in code that is not a member name
    (after . or ->) and not on an #include line."""
    out = []
    for n, line in enumerate(code.split("\n"), first_line):
        if re.match(r"\s*#\s*include\b", line):
            continue
        for m in IDENT.finditer(line):
            before = line[:m.start()].rstrip()
            if before.endswith(".") or before.endswith("->"):
                continue
            out.append((m.group(0), n))
    return out


class Tree:
    """The symbols of src/ and include/ and the uses between files."""

    def __init__(self):
        self.cfiles = files(SRC, (".c",))
        self.hfiles = files(SRC, (".h",)) + files(INC, (".h",))
        self.allsrc = self.cfiles + self.hfiles
        self.flat = flat_layout()
        self.tags = ctags(self.allsrc)
        self.funcs = [t for t in self.tags if t["kind"] == "function"]
        externs = {t["name"] for t in self.tags if t["kind"] == "externvar"}
        # defs: name -> [(kind, module, path, line)] of what another
        # module can use.
        self.defs = defaultdict(list)
        for t in self.tags:
            if not t["path"].endswith(".c") or t["static"]:
                continue
            if t["kind"] == "function":
                self.defs[t["name"]].append(("function", module(t["path"]),
                                             t["path"], t["line"]))
            elif t["kind"] == "variable" and t["name"] in externs:
                self.defs[t["name"]].append(("object", module(t["path"]),
                                             t["path"], t["line"]))
        # hdefs: name -> [(path, line, end)] of header inlines and macros.
        self.hdefs = defaultdict(list)
        for t in self.tags:
            if t["path"].endswith(".h") and t["kind"] in ("function",
                                                          "macro"):
                self.hdefs[t["name"]].append((t["path"], t["line"],
                                              t["end"]))
        self._reach = {}
        self.uses = self._uses()

    # -- header inlines and macros ------------------------------------
    def _body_idents(self, name):
        out = set()
        for path, line, end in self.hdefs[name]:
            code = source(path)[1].split("\n")[line - 1:end]
            for ident, _ in idents("\n".join(code)):
                if ident != name:
                    out.add(ident)
        return out

    def reach(self, name):
        """What header def `name` uses, followed through other header defs:
        {target: chain}, chain the header defs from name to the one that
        names target (shortest first)."""
        if name in self._reach:
            return self._reach[name]
        found, seen, queue = {}, {name}, [(name, [name])]
        while queue:
            cur, chain = queue.pop(0)
            for ident in sorted(self._body_idents(cur)):
                if ident in self.defs and ident not in found:
                    found[ident] = chain
                if ident in self.hdefs and ident not in seen:
                    seen.add(ident)
                    queue.append((ident, chain + [ident]))
        self._reach[name] = found
        return found

    # -- uses ---------------------------------------------------------
    def enclosing(self, path, line):
        best = None
        for t in self.tags:
            if t["path"] == path and t["kind"] in ("function", "variable",
                                                   "macro") \
                    and t["line"] <= line <= t["end"]:
                if best is None or t["line"] >= best["line"]:
                    best = t
        return best["name"] if best else "(file scope)"

    def _uses(self):
        """Use records: dict(file, line, caller, chain, target, kind,
        module, path) of every .c naming another module's symbol, directly
        (chain []) or through header defs."""
        uses = []
        # A declaration (a prototype or an extern in the .c) is no use.
        decl = {(t["path"], t["line"], t["name"]) for t in self.tags
                if t["kind"] in ("prototype", "externvar")}
        for p in self.cfiles:
            me = module(p)
            for ident, line in idents(source(p)[1]):
                if (p, line, ident) in decl:
                    continue
                hits = []
                for kind, mod, path, _ in self.defs.get(ident, ()):
                    hits.append(([], ident, kind, mod, path))
                if ident in self.hdefs:
                    for target, chain in self.reach(ident).items():
                        for kind, mod, path, _ in self.defs[target]:
                            hits.append((chain, target, kind, mod, path))
                for chain, target, kind, mod, path in hits:
                    if mod == me:
                        continue
                    uses.append({"file": p, "line": line, "chain": chain,
                                 "target": target, "kind": kind,
                                 "module": mod, "path": path})
        for u in uses:
            u["caller"] = self.enclosing(u["file"], u["line"])
        return uses

    def header_uses(self):
        """Uses named directly in the bodies of src/ header defs."""
        out = []
        for h in self.hfiles:
            if folder(h) in (None, PUBLIC):
                continue
            for name, defs in sorted(self.hdefs.items()):
                for path, line, end in defs:
                    if path != h:
                        continue
                    code = source(path)[1].split("\n")[line - 1:end]
                    for ident, n in idents("\n".join(code), line):
                        for kind, mod, mpath, _ in self.defs.get(ident, ()):
                            out.append({"file": h, "line": n, "chain": [],
                                        "caller": name, "target": ident,
                                        "kind": kind, "module": mod,
                                        "path": mpath})
        return out

    def graph(self, kinds=("function", "object"), inlines=True):
        g = defaultdict(set)
        for u in self.uses:
            if u["kind"] in kinds and (inlines or not u["chain"]):
                g[module(u["file"])].add(u["module"])
        return g

    # -- includes -----------------------------------------------------
    def resolve_include(self, includer, name):
        dirs = [os.path.dirname(includer)]
        dirs += sorted({os.path.dirname(p) for p in self.allsrc
                        if p.startswith(SRC)})
        dirs += [INC]
        for d in dirs:
            cand = os.path.normpath(os.path.join(d, name))
            if os.path.isfile(cand):
                return cand
        return None

    def includes(self):
        """(includer, line, name, resolved path or None)."""
        out = []
        for p in self.allsrc:
            for n, line in enumerate(source(p)[0].split("\n"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if m:
                    out.append((p, n, m.group(1),
                                self.resolve_include(p, m.group(1))))
        return out


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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


def describe_use(u):
    via = "".join("%s -> " % c for c in u["chain"])
    what = u["target"] + ("()" if u["kind"] == "function" else "")
    return "%s -> %s%s (%s)" % (u["caller"], via, what, rel(u["path"]))


# -- the check ----------------------------------------------------------
CALLS_START = re.compile(r"(?:(?:^|[.!?]\s+)(Calls)|;\s*(calls))\b")
CALLS_END = re.compile(r";|\.(?=\s|$)")
CALLS_NAME = re.compile(r"(?<![\w.])(?:[\w-]+/)*(\w+)\.c\b")


def opening_comment(raw):
    """(text of the file's first comment with line starts, first line),
    the text as a list of (line number, line without its ' * ')."""
    m = re.search(r"/\*(.*?)\*/", raw, re.S)
    if not m:
        return []
    first = raw.count("\n", 0, m.start()) + 1
    lines = []
    for i, line in enumerate(m.group(1).split("\n")):
        lines.append((first + i, re.sub(r"^\s*\*\s?", "", line)))
    return lines


def calls_clauses(raw):
    """[(line, clause text)] of the Calls clauses of a file's opening
    comment (the grammar in the docstring)."""
    lines = opening_comment(raw)
    text, starts = "", []
    for n, line in lines:
        starts.append((len(text), n))
        text += line.strip() + " "
    text = text.strip()
    out = []
    for m in CALLS_START.finditer(text):
        start = m.start(1) if m.group(1) else m.start(2)
        end = CALLS_END.search(text, m.end())
        clause = text[start:end.start() if end else len(text)]
        line = max(n for off, n in starts if off <= start)
        out.append((line, clause))
    return out


def check_calls(tree):
    """Violations of the Calls lines: [(file, line, message)]."""
    out = []
    mods = {module(p) for p in tree.cfiles}
    called = defaultdict(dict)      # file -> module -> first use
    for u in tree.uses:
        if u["kind"] == "function":
            cur = called[u["file"]].get(u["module"])
            if cur is None or u["line"] < cur["line"]:
                called[u["file"]][u["module"]] = u
    for p in tree.cfiles:
        me = module(p)
        clauses = calls_clauses(source(p)[0])
        if not clauses:
            out.append((p, 1, "no Calls sentence in the opening comment "
                        "(it calls %s)" % (", ".join(
                            "%s.c" % m for m in sorted(called[p]))
                            or "no other module")))
            continue
        line = clauses[0][0]
        named = {}
        for n, clause in clauses:
            for m in CALLS_NAME.finditer(clause):
                named.setdefault(m.group(1), n)
        for name, n in sorted(named.items()):
            if name == me:
                out.append((p, n, "Calls line names %s.c itself" % me))
            elif name not in mods:
                out.append((p, n, "Calls line names %s.c, not a module of "
                            "src/" % name))
            elif name not in called[p]:
                out.append((p, n, "Calls line names %s.c, but %s.c calls "
                            "no function of it" % (name, me)))
        for mod, u in sorted(called[p].items()):
            if mod not in named:
                out.append((p, line, "Calls line does not name %s.c, but "
                            "%s.c calls it: line %d: %s"
                            % (mod, me, u["line"], describe_use(u))))
    return out


# What POSIX lists as cancellation points (those that "shall" be, and the
# "may" ones a C library makes so) among the calls C code here could make.
CANCEL_POINTS = set("""
    accept accept4 aio_suspend clock_nanosleep close closedir connect creat
    dprintf fclose fcntl fdatasync fflush fgetc fgets fopen fprintf fputc
    fputs fread freopen fscanf fsync fwrite getc getchar getdelim getline
    lockf mq_receive mq_send msgrcv msgsnd msync nanosleep open openat
    opendir pause poll ppoll pread printf pselect pthread_cond_timedwait
    pthread_cond_wait pthread_join pthread_testcancel putc putchar puts
    pwrite read readdir readv recv recvfrom recvmsg select sem_timedwait
    sem_wait send sendmsg sendto sigsuspend sigtimedwait sigwait sigwaitinfo
    sleep syslog system tcdrain usleep vdprintf vfprintf vprintf wait
    waitid waitpid write writev
""".split())
NOCANCEL = ("orcu__nocancel_begin", "pthread_setcancelstate")


def check_cancellation(tree):
    """(path, line, message) of each cancellation point a function of
    src/ calls with cancellation enabled: the function disables it itself,
    or it is a static function whose every caller in its file does."""
    funcs = [f for f in tree.funcs if f["path"].startswith(SRC)]
    body = {}
    for f in funcs:
        body[(f["path"], f["name"])] = source(f["path"])[1].split("\n")[
            f["line"] - 1:f["end"]]

    def calls(key, name):
        return re.search(r"(?<![\w.>])%s\s*\(" % name, "\n".join(body[key]))

    memo = {}

    def covered(f):
        key = (f["path"], f["name"])
        if key not in memo:
            memo[key] = False          # a cycle covers nothing
            callers = [g for g in funcs if g["path"] == f["path"] and
                       g is not f and calls((g["path"], g["name"]), f["name"])]
            memo[key] = any(calls(key, n) for n in NOCANCEL) or (
                f["static"] and bool(callers) and all(map(covered, callers)))
        return memo[key]

    out = []
    for f in funcs:
        if covered(f):
            continue
        for n, line in enumerate(body[(f["path"], f["name"])], f["line"]):
            for m in re.finditer(r"(->|\.)?\s*\b([A-Za-z_]\w*)\s*\(", line):
                if m.group(1) or m.group(2) not in CANCEL_POINTS:
                    continue
                out.append((f["path"], n, "%s calls %s, a cancellation point, "
                            "with cancellation enabled (os.c \"Cancellation\")"
                            % (f["name"], m.group(2))))
    return out


def check(tree):
    """All violations, as printable lines."""
    lines = []
    # Upward uses: one line per file, name it uses (a function, an object
    # or the header inline it calls) and module reached, showing a call
    # before an object and the shortest chain.
    groups = defaultdict(list)
    for u in tree.uses + tree.header_uses():
        ra, rb = rank(folder(u["file"])), rank(folder(u["path"]))
        if ra is None or rb is None or rb <= ra:
            continue
        head = u["chain"][0] if u["chain"] else u["target"]
        groups[(u["file"], head, u["module"])].append(u)
    shown = []
    for us in groups.values():
        u = min(us, key=lambda u: (u["kind"] != "function", len(u["chain"]),
                                   u["line"]))
        more = len({x["line"] for x in us} - {u["line"]})
        shown.append((rel(u["file"]), u["line"], "%s:%d: %s: %s -> %s%s" % (
            rel(u["file"]), u["line"], describe_use(u), folder(u["file"]),
            folder(u["path"]),
            " (and %d more lines)" % more if more else "")))
    lines += [text for _, _, text in sorted(shown)]
    for p, n, name, target in tree.includes():
        if target is None or p.startswith(INC):
            continue
        ra, rb = rank(folder(p)), rank(folder(target))
        if ra is not None and rb is not None and rb > ra:
            lines.append('%s:%d: #include "%s" (%s): %s -> %s' % (
                rel(p), n, name, rel(target), folder(p), folder(target)))
    # Unplaced files (a folder not in the order, or a flat file the table
    # does not know).
    for p in tree.allsrc:
        if folder(p) is None or rank(folder(p)) is None:
            lines.append("%s: in no layer folder (%s)" % (
                rel(p), " < ".join(FOLDERS)))
    for comp, found in cycles(tree):
        lines.append("import cycle of %d modules (%s): %s" % (
            len(comp), " ".join(comp),
            "; ".join(describe_cycle(c) for c in found)))
    for p, n, msg in check_calls(tree) + check_cancellation(tree):
        lines.append("%s:%d: %s" % (rel(p), n, msg))
    return lines


def shortest_path(g, src, dst, within):
    """Shortest path src -> ... -> dst in g restricted to within."""
    prev, queue = {src: None}, [src]
    while queue:
        v = queue.pop(0)
        for w in sorted(g.get(v, ())):
            if w in within and w not in prev:
                prev[w] = v
                queue.append(w)
    if dst not in prev:
        return None
    path = [dst]
    while path[-1] != src:
        path.append(prev[path[-1]])
    return path[::-1]


def first_use(tree, a, b, kinds):
    return min((u for u in tree.uses if module(u["file"]) == a
                and u["module"] == b and u["kind"] in kinds),
               key=lambda u: (len(u["chain"]), u["line"]))


def cycles(tree, kinds=("function",)):
    """Import cycles among modules, counting header inlines: [(modules,
    [cycle as a list of uses])], a shortest cycle through each edge that
    goes up a folder, then one through each cycle left without those
    edges.  By default calls only (the check); kinds=("function",
    "object") also counts objects."""
    g = tree.graph(kinds)
    nodes = {module(p) for p in tree.cfiles}
    folder_of = {module(p): folder(p) for p in tree.cfiles}

    def explain(g, comp):
        inside = set(comp)
        ups = [(a, b) for a in comp for b in sorted(g[a] & inside)
               if (rank(folder_of[b]) or 0) > (rank(folder_of[a]) or 0)]
        if not ups:
            best = None
            for a in comp:
                for b in sorted(g[a] & inside):
                    p = shortest_path(g, b, a, inside)
                    if p and (best is None or len(p) + 1 < len(best)):
                        best = [a] + p
            ups = [(best[0], best[1])]
        found = []
        for a, b in ups:
            path = [a] + shortest_path(g, b, a, inside)
            found.append([first_use(tree, x, y, kinds)
                          for x, y in zip(path, path[1:])])
        # What is left once those edges are gone.
        rest = {a: set(g[a] & inside) - {b for x, b in ups if x == a}
                for a in comp}
        for sub in sccs(inside, rest):
            if len(sub) > 1:
                found += explain(rest, sub)
        return found

    out = []
    for comp in sccs(nodes, g):
        if len(comp) > 1:
            out.append((comp, explain(g, comp)))
    return out


def describe_cycle(cyc):
    """a.c:LINE -> b.c:LINE -> ... -> a.c, each LINE a use of the next."""
    return " -> ".join("%s:%d" % (os.path.basename(u["file"]), u["line"])
                       for u in cyc) + " -> " + os.path.basename(
                           cyc[0]["file"])


# -- slot state ---------------------------------------------------------
WRITE_AFTER = re.compile(r"\s*(?:=(?!=)|[-+*/%&|^]=|<<=|>>=|\+\+|--)")
ATOMIC_WRITE = re.compile(
    r"\b(?:orcu__(?:store|xchg|fetch_\w+?|cas)_\w+|atomic_(?:store|exchange|"
    r"fetch_\w+|compare_exchange_\w+)(?:_explicit)?|__atomic_(?:store|"
    r"exchange|fetch_\w+|compare_exchange)(?:_n)?)\s*\(\s*&\s*\(?\s*$")
BASE_EXPR = re.compile(
    r"((?:[A-Za-z_]\w*(?:\s*\([^()]*\))?|\([^()]*\))"
    r"(?:\s*\[[^\]]*\]|\s*(?:->|\.)\s*\w+)*)\s*(?:->|\.)\s*$")


def slot_writes(tree):
    """{file: {field: count}} of writes to struct orcu__slot's fields
    outside the slot module's .c, and the header that defines it."""
    st = [t for t in tree.tags if t["kind"] == "struct"
          and t["name"] == "orcu__slot" and t["path"].endswith(".h")]
    if not st:
        return None, {}
    hdr = st[0]["path"]
    fields = {t["name"] for t in tree.tags if t["kind"] == "member"
              and t.get("scope") == "orcu__slot"}
    is_slot = re.compile(r"^struct:orcu__slot\b")
    # Names typed struct orcu__slot (or a pointer to one): per function
    # (locals, parameters), and file-wide or tree-wide (variables,
    # members, functions returning one).
    local = defaultdict(set)
    wide = set()
    for t in tree.tags:
        if not is_slot.match(t.get("typeref", "")):
            continue
        if t["kind"] in ("local", "parameter"):
            local[(t["path"], t.get("scope"))].add(t["name"])
        elif t["kind"] in ("variable", "externvar", "member", "function",
                           "prototype"):
            wide.add(t["name"])
    owner = os.path.join(os.path.dirname(hdr), "slot.c")
    out = defaultdict(lambda: defaultdict(int))
    for p in tree.allsrc:
        if p in (owner, hdr):   # slot.c and its header's inlines
            continue
        code = source(p)[1].split("\n")
        for i, line in enumerate(code):
            for m in re.finditer(r"(->|\.)\s*(\w+)\b", line):
                f = m.group(2)
                if f not in fields:
                    continue
                after, before = line[m.end():], line[:m.start()]
                # The written place ends inside the slot: sub-struct
                # members (".x") may follow, a dereference ("->") leaves
                # the record (s->st.leader->n writes the leader's n).
                tail = re.match(r"(?:\s*\.\s*\w+)*", after)
                if after[tail.end():].lstrip().startswith("->"):
                    continue
                after = after[tail.end():]
                b = BASE_EXPR.search(before + m.group(1))
                if not b:
                    continue
                pre = before[:b.start()]
                written = WRITE_AFTER.match(after) or \
                    re.search(r"(\+\+|--)\s*$", pre) or ATOMIC_WRITE.search(pre)
                if not written:
                    continue
                # The type of the base: its last name, stripped of an
                # index or a call.
                base = re.sub(r"\s*\[[^\]]*\]\s*$", "", b.group(1).strip())
                base = re.sub(r"\s*\([^()]*\)\s*$", "", base)
                last = re.findall(r"\w+", base)[-1] if re.findall(r"\w+",
                                                                   base) else ""
                fn = tree.enclosing(p, i + 1)
                if last in local.get((p, fn), ()) or last in wide:
                    out[p][f] += 1
    return hdr, out


# -- locks and atomics (issue 12) ----------------------------------------
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
        code = source(p)[1]
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
        raw, code = source(p)
        lines = raw.splitlines()
        code = code.splitlines()
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


def nlines(p):
    return source(p)[0].count("\n")


# -- report ---------------------------------------------------------------
def section_layers(tree):
    print("== 0. layers, bottom up: each folder's files and the folders "
          "it uses")
    if tree.flat:
        print("  flat src/: one folder.  Below, each file is placed in the "
              "folder the layer\n  move gave it (the script's FLAT_FOLDER "
              "table).")
    byf = defaultdict(list)
    for p in tree.allsrc:
        if p.startswith(SRC):
            byf[folder(p) or "?"].append(os.path.relpath(p, SRC) if
                                         tree.flat else
                                         os.path.relpath(p, os.path.join(
                                             SRC, folder(p) or "")))
    uses = defaultdict(set)
    for u in tree.uses + tree.header_uses():
        uses[folder(u["file"])].add(folder(u["path"]))
    for p, _, _, target in tree.includes():
        if target and p.startswith(SRC):
            uses[folder(p)].add(folder(target))
    for f in FOLDERS + sorted(set(byf) - set(FOLDERS)):
        if f not in byf:
            continue
        print("  %-10s %s" % (f, " ".join(sorted(byf[f]))))
        used = sorted((x for x in uses[f] if x not in (None, PUBLIC)),
                      key=lambda x: (rank(x) is None, rank(x) or 0, x))
        up = [x for x in used if rank(x) is not None and rank(f) is not None
              and rank(x) > rank(f)]
        print("  %-10s uses %s%s" % ("", " ".join(used) or "nothing",
                                      "  (upward: %s)" % " ".join(up)
                                      if up else ""))


def section_graph(tree):
    print("\n== 1. module graph: uses of another src/**/*.c (functions "
          "and objects,\n   directly or through header inlines and macros)")
    direct = tree.graph(("function",), inlines=False)
    calls = tree.graph(("function",))
    allg = tree.graph()
    print("  [i] only through header inlines/macros, [o] objects only")
    for m in sorted(allg):
        marks = []
        for t in sorted(allg[m]):
            if t in direct[m]:
                marks.append(t)
            elif t in calls[m]:
                marks.append(t + "[i]")
            else:
                objd = any(u["kind"] == "object" and not u["chain"]
                           for u in tree.uses if module(u["file"]) == m
                           and u["module"] == t)
                marks.append(t + ("[o]" if objd else "[o,i]"))
        print("  %-12s -> %s" % (m, " ".join(marks)))
    nodes = {module(p) for p in tree.cfiles}
    plain = [c for c in sccs(nodes, direct) if len(c) > 1]
    print("  import cycles, direct only (calls and function addresses, no "
          "header inlines): %d"
          % len(plain))
    for c in plain:
        print("    %s" % " ".join(c))
    for kinds, what in ((("function",), "counting header inlines"),
                        (("function", "object"),
                         "counting header inlines and objects")):
        cyc = cycles(tree, kinds)
        print("  import cycles, %s: %d" % (what, len(cyc)))
        for comp, found in cyc:
            print("    %d modules: %s" % (len(comp), " ".join(comp)))
            for c in found:
                print("      " + describe_cycle(c))
                for u in c:
                    print("        %s:%d %s" % (module(u["file"]) + ".c",
                                                u["line"], describe_use(u)))
    print("  #include graph (local headers):")
    inc = defaultdict(list)
    for p, _, name, target in tree.includes():
        inc[rel(p)].append(name)
    for f in sorted(inc):
        print("  %-30s %s" % (f, " ".join(sorted(inc[f]))))


def main():
    tree = Tree()
    if CHECK:
        lines = check(tree)
        for line in lines:
            print(line)
        print("src-metrics --check: %s" % (
            "%d violation%s" % (len(lines), "s" if len(lines) > 1 else "")
            if lines else "ok (layers %s; Calls lines match)"
            % " < ".join(FOLDERS)))
        sys.exit(1 if lines else 0)

    section_layers(tree)
    section_graph(tree)

    print("\n== 2. locks and the files that take them")
    for name, who in sorted(locks(tree.allsrc).items()):
        print("  %-28s %d files: %s" % (name, len(who),
                                         " ".join(sorted(who))))

    print("\n== 3. ordered atomics")
    total, unpaired, per_file = atomics(tree.allsrc)
    for f, (n, bad) in sorted(per_file.items()):
        if n:
            print("  %-30s %3d ordered, %3d without a stated partner"
                  % (f, n, bad))
    print("  total: %d ordered atomics, %d without a stated partner"
          % (total, len(unpaired)))
    if SHOW_UNPAIRED:
        for u in unpaired:
            print("    " + u)

    hdr, writes = slot_writes(tree)
    print("\n== 4. slot state written outside slot.c (fields of struct "
          "orcu__slot in %s)" % (rel(hdr) if hdr else "?"))
    nfields = set()
    for p in sorted(writes):
        w = writes[p]
        nfields |= set(w)
        print("  %-28s %s" % (rel(p), " ".join(
            "%s%s" % (f, "(%d)" % w[f] if w[f] > 1 else "")
            for f in sorted(w))))
    print("  %d files write %d fields outside slot.c" % (len(writes),
                                                        len(nfields)))

    print("\n== 5. longest functions")
    funcs = tree.funcs
    size = lambda f: f["end"] - f["line"] + 1
    for f in sorted(funcs, key=size, reverse=True)[:TOP]:
        print("  %4d lines  %s:%d %s()" % (size(f), rel(f["path"]),
                                           f["line"], f["name"]))
    lens = [size(f) for f in funcs]
    print("  %d functions, mean %.1f lines" % (len(lens),
                                               sum(lens) / len(lens)))
    big = sorted(((nlines(p), rel(p)) for p in tree.allsrc),
                 reverse=True)[:3]
    print("  largest files: %s" % ", ".join("%s %d" % (p, n)
                                             for n, p in big))

    print("\n== 6. headers, lines")
    for p in sorted(tree.hfiles, key=lambda p: (-nlines(p), rel(p))):
        print("  %5d  %s" % (nlines(p), rel(p)))
    print("  %5d  total" % sum(nlines(p) for p in tree.hfiles))

    print("\n== 7. layering and Calls-line check (what --check fails on)")
    lines = check(tree)
    for line in lines:
        print("  " + line)
    print("  %d violations" % len(lines))


if __name__ == "__main__":
    main()
