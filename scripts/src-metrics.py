#!/usr/bin/env python3
"""src-metrics.py - orcu's layering, read from the objects of src/, and
the conventions its prose states (issues 12, 24 and 30).

Usage: python3 scripts/src-metrics.py [--check] [--unpaired] [root]
  --check     the findings only, one a line (FILE:LINE first); exit 1 if
              any, 2 if a file does not compile
  --unpaired  also list each ordered atomic without a stated partner
Needs cc, binutils (nm, objdump), coreutils (tsort) and liburcu-dev.

Each src/**/*.c (a module) is compiled -O0, a section a function, as built
and with ORCU_DEBUG, so the header inlines it uses land in its object; nm
tells what each defines and references, objdump -dlr from which function
and FILE:LINE.  A module uses another whose global it references: a
function (called or its address taken: a call) or an object; code in an
#if neither compilation takes is no use.  Folders (under src/) bottom up:
base < readers < callbacks < top < compat; each uses only itself and those
below, include/ is below all.

--check fails on: an upward use (by a .c or by an inline of a src/
header) or #include; a file in no folder; an import cycle of calls (a
loop tsort reports); a Calls line that is not the file's calls (below);
a function of src/ calling a cancellation point (CANCEL_POINTS) and
neither orcu__nocancel_begin() nor pthread_setcancelstate(), unless it is
static and every caller in its object is covered (os.c "Cancellation");
a "Pairs with" sentence naming a NAME() that is no function an object
defines or calls, macro or system call; a test docs/DESIGN-NOTES.md or
docs/DESIGN.md names (test_*, stress_*, torture_*, tests/...c; * a glob)
that tests/ lacks; a contract of include/orcu.h or include/orcu/debug.h
(a comment opening "orcu_name - ") without a "Tests:" paragraph, or one
naming a test tests/ does not register; a model list (models/README.md's
"## NAME.pml" headings, README.md's `make models` row, docs/DESIGN.md's
`models/` item) other than models/*.pml.  docs/DESIGN.md's section 2 and
its module table are held to the tree: every orcu_* call, macro or
inline include/orcu.h declares is in section 2's code block and every
orcu_* call there is declared; every file of src/ is in a row of the
module table (by its path, its .c for a header, or a folder) and every
path a row names exists.  Nothing is whitelisted.

Calls lines.  A src/**/*.c's opening comment names the modules it calls
in Calls clauses: from "Calls" opening a sentence, or "calls" or "may
call" after a ";", to the next ";" or "." before a space or the end.
Each NAME.c in one (a folder prefix allowed) names module NAME.  They
must be the modules whose functions the object references; a "may call"
one (called in some builds only, as with another liburcu) may be absent.

The report adds the module graph, ordered atomics with no "Pairs with" or
"Order:" near (10 lines), and struct orcu__slot fields written off slot.c.
"""
import fnmatch, glob, os, re, subprocess, sys, tempfile  # noqa: E401
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
ROOT = os.path.abspath(ARGS[0] if ARGS else
                       os.path.join(os.path.dirname(__file__), ".."))
CHECK, SHOW_UNPAIRED = "--check" in sys.argv, "--unpaired" in sys.argv
SRC, INC = os.path.join(ROOT, "src"), os.path.join(ROOT, "include")
FOLDERS = ["base", "readers", "callbacks", "top", "compat"]
PASSES = ([], ["-DORCU_DEBUG"])
NOCANCEL = {"orcu__nocancel_begin", "pthread_setcancelstate"}
# What POSIX lists as cancellation points (those that "shall" be, and the
# "may" ones a C library makes so) among the calls C code here could make.
CANCEL_POINTS = set("""
accept accept4 aio_suspend clock_nanosleep close closedir connect creat dprintf
fclose fcntl fdatasync fflush fgetc fgets fopen fprintf fputc fputs fread
freopen fscanf fsync fwrite getc getchar getdelim getline lockf mq_receive
mq_send msgrcv msgsnd msync nanosleep open openat opendir pause poll ppoll
pread printf pselect pthread_cond_timedwait pthread_cond_wait pthread_join
pthread_testcancel putc putchar puts pwrite read readdir readv recv recvfrom
recvmsg select sem_timedwait sem_wait send sendmsg sendto sigsuspend
sigtimedwait sigwait sigwaitinfo sleep syslog system tcdrain usleep vdprintf
vfprintf vprintf wait waitid waitpid write writev
""".split())

def files(d, ext=""):
    return sorted(p for p in glob.glob(os.path.join(d, "**", "*" + ext),
                                       recursive=True) if os.path.isfile(p))

rel = lambda p: os.path.relpath(p, ROOT)                    # noqa: E731
module = lambda p: os.path.splitext(os.path.basename(p))[0]  # noqa: E731
line_at = lambda at, off: max(n for o, n in at if o <= off)  # noqa: E731
run = lambda cmd, **kw: subprocess.run(cmd, capture_output=True, text=True,
                                      **kw)                  # noqa: E731

def folder(path):
    """base..compat, "include" (below all), or None (no layer folder)."""
    path = os.path.join(ROOT, path)
    if not os.path.relpath(path, INC).startswith(".."):
        return "include"
    parts = os.path.relpath(path, SRC).split(os.sep)
    return parts[0] if len(parts) > 1 and parts[0] != ".." else None

def rank(f):
    return -1 if f == "include" else FOLDERS.index(f) if f in FOLDERS else None

def text(p):
    with open(os.path.join(ROOT, p), errors="replace") as f:
        return f.read()

def code(p):
    """A file's code alone: comments and strings blanked, lines kept."""
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'
                  r"'(?:\\.|[^'\\\n])+'", lambda m: re.sub(
                      r"[^\n]", " ", m.group(0)), text(p), flags=re.S)

def comments(raw):
    """[(text, [(offset, line)])] of each comment, its ' * ' margins gone."""
    out = []
    for m in re.finditer(r"/\*(.*?)\*/", raw, re.S):
        body, at = "", []
        for i, l in enumerate(m.group(1).split("\n")):
            at.append((len(body), raw.count("\n", 0, m.start()) + 1 + i))
            body += re.sub(r"^\s*\*?\s?", "", l).strip() + " "
        out.append((body.strip(), at))
    return out

class Obj:
    """One compilation of one .c: defs {symbol: nm type}, undef, sites
    [(function, file, line, symbol, from a call instruction)] its code has."""

    def __init__(self, c, o):
        self.c, self.mod, self.defs, self.undef = c, module(c), {}, set()
        for line in run(["nm", "-P", o]).stdout.splitlines():
            name, kind = line.split()[:2]
            if kind == "U":
                self.undef.add(name)
            else:
                self.defs[name] = kind
        self.sites, fn, insn = [], None, ""
        dump = run(["objdump", "-dlr", "--no-show-raw-insn", o]).stdout
        for ln in dump.split("\n"):
            m = re.match(r"[0-9a-f]+ <([\w.]+)>:$", ln)
            fn = m.group(1) if m else fn
            m = fn and re.match(r"(/\S+):(\d+)", ln)
            if m:
                path, line = rel(m.group(1)), int(m.group(2))
            m = fn and re.match(r"\s*[0-9a-f]+: R_\w+\s+(?:\.(?:text|data|"
                                r"bss|rodata)\.)?([A-Za-z_]\w*)(?![.\w])", ln)
            if m:
                self.sites.append((fn, path, line, m.group(1), bool(re.match(
                    r"(call|bl|jalr?|brasl)\b", insn))))
            elif re.match(r"\s*[0-9a-f]+:\t", ln):
                insn = ln.split("\t")[1]

def compile_all(tmp):
    """[Obj] of each src/**/*.c in each pass; exit 2 if one fails."""
    incs = ["-I" + INC] + sorted({"-I" + os.path.dirname(h)
                                  for h in files(SRC, ".h")})

    def one(job):
        n, (c, defs) = job
        o = os.path.join(tmp, "%d.o" % n)
        r = run([os.environ.get("CC", "cc"), "-std=gnu11" if "urcu_abi" in c
                 else "-std=c11", "-O0", "-gdwarf-4", "-ffunction-sections",
                 "-fdata-sections", "-D_GNU_SOURCE", "-DORCU_BUILDING_LIBRARY"]
                + defs + incs + ["-c", c, "-o", o])
        return (c, r.stderr) if r.returncode else Obj(rel(c), o)
    jobs = enumerate((c, d) for d in PASSES for c in files(SRC, ".c"))
    objs = list(ThreadPoolExecutor(os.cpu_count() or 2).map(one, jobs))
    for c, err in [o for o in objs if isinstance(o, tuple)][:1]:
        print("src-metrics: %s does not compile%s:\n%s" % (rel(c), " (liburcu"
              "-dev?)" * ("compat" in c), err[:3000]), file=sys.stderr)
        sys.exit(2)
    return objs

class Tree:
    def __init__(self, objs):
        self.objs = objs
        self.cfiles = sorted({o.c for o in objs})
        self.hfiles = [rel(p) for p in files(SRC, ".h") + files(INC, ".h")]
        self.owner = {}         # global -> (module, its .c, is a function)
        for o in objs:
            for s, k in o.defs.items():
                if k in "TWDBRCGSV":
                    self.owner[s] = (o.mod, o.c, k in "TW")
        # uses[(.c, module)] = {symbol: [(function, file, line)]}
        self.uses = defaultdict(lambda: defaultdict(list))
        for o in objs:
            for s in o.undef:
                if s in self.owner and self.owner[s][0] != o.mod:
                    u = self.uses[(o.c, self.owner[s][0])][s]
                    u += sorted({w[:3] for w in o.sites if w[3] == s} - set(u))
        for (c, _), syms in self.uses.items():
            for u in syms.values():
                u.sort(key=lambda w: (w[1] != c, w[1], w[2]))

    def graph(self, calls_only):
        g = defaultdict(set)
        for (c, m), syms in self.uses.items():
            if not calls_only or any(self.owner[s][2] for s in syms):
                g[module(c)].add(m)
        return g

    def site(self, c, m, calls_only=True):
        """'FILE:LINE: FUNCTION -> SYMBOL() (ITS .c)', a use of m by c."""
        s, where = min(self.uses[(c, m)].items(), key=lambda kv: (
            calls_only and not self.owner[kv[0]][2], not kv[1],
            kv[1] and (kv[1][0][1] != c, kv[1][0][2])))
        what = s + "()" * self.owner[s][2] + " (%s)" % self.owner[s][1]
        if where:
            return "%s:%d: %s -> %s" % (where[0][1], where[0][2],
                                        where[0][0], what)
        n = next((i for i, l in enumerate(code(c).split("\n"), 1)
                  if re.search(r"\b%s\b" % s, l)), 0)
        return "%s:%d: %s" % (c, n, what)

def tsort_loops(g):
    """The loops tsort reports in g (one a cycle at least), in edge order,
    shortest first, leaving out those sharing an edge with one before."""
    err = run(["tsort"], input="".join("%s %s\n" % (a, b) for a in sorted(g)
                                       for b in sorted(g[a]))).stderr
    kept, ring = [], lambda l: set(zip(l, l[1:] + l[:1]))
    for l in sorted((re.findall(r"^tsort: (\S+)$", x, re.M) for x in
                     err.split("input contains a loop:")[1:]), key=len):
        l = l if all(b in g[a] for a, b in zip(l, l[1:])) else l[::-1]
        kept += [l] if l and not any(ring(l) & ring(k) for k in kept) else []
    return kept

def describe_loop(tree, loop, calls_only=True):
    c = {module(p): p for p in tree.cfiles}
    return "import cycle %s -> %s.c: %s" % (
        " -> ".join(m + ".c" for m in loop), loop[0], "; ".join(
            tree.site(c[a], b, calls_only) for a, b in zip(loop, loop[1:] +
                                                            loop[:1])))

# -- the checks -------------------------------------------------------------
def check_layers(tree):
    out = set()
    for (c, m), syms in tree.uses.items():
        mc = tree.owner[next(iter(syms))][1]
        if (rank(folder(mc)) or 0) > (rank(folder(c)) or 0):
            desc = tree.site(c, m, False)
            out.add("%s%s: %s -> %s" % ("" if desc.startswith(c + ":") else
                                        c + ": through ", desc, folder(c),
                                        folder(mc)))
        for s, where in syms.items():
            for fn, h, line in where:
                if h.startswith("src/") and h.endswith(".h") and \
                        (rank(folder(mc)) or 0) > (rank(folder(h)) or 0):
                    out.add("%s:%d: %s -> %s%s (%s): %s -> %s" % (
                        h, line, fn, s, "()" * tree.owner[s][2], mc,
                        folder(h), folder(mc)))
    dirs = [INC] + sorted({os.path.dirname(h) for h in files(SRC, ".h")})
    for p in map(rel, files(SRC)):
        if rank(folder(p)) is None:
            out.add("%s: in no layer folder (%s)" % (p, " < ".join(FOLDERS)))
        for n, line in enumerate(text(p).split("\n"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            t = m and next((rel(os.path.join(d, m.group(1))) for d in [
                os.path.join(ROOT, os.path.dirname(p))] + dirs if
                os.path.isfile(os.path.join(d, m.group(1)))), None)
            if t and (rank(folder(t)) or 0) > (rank(folder(p)) or 0):
                out.add('%s:%d: #include "%s" (%s): %s -> %s' % (
                    p, n, m.group(1), t, folder(p), folder(t)))
    return sorted(out)

CALLS_START = re.compile(r"(?:(?:^|[.!?]\s+)(Calls)|;\s*(calls|may call))\b")
CALLS_END = re.compile(r";|\.(?=\s|$)")
CALLS_NAME = re.compile(r"(?<![\w.])(?:[\w-]+/)*(\w+)\.c\b")

def check_calls(tree):
    out, mods = [], {module(p) for p in tree.cfiles}
    for p in tree.cfiles:
        me, named, maybe, line = module(p), {}, {}, 0
        called = {m for (c, m), syms in tree.uses.items() if c == p
                  and any(tree.owner[s][2] for s in syms)}
        for body, at in comments(text(p))[:1]:
            for m in CALLS_START.finditer(body):
                end = CALLS_END.search(body, m.end())
                line = line or line_at(at, m.start(m.lastindex))
                for n in CALLS_NAME.finditer(body, m.end(), end.start() if end
                                             else len(body)):
                    (maybe if m.group(2) == "may call" else named).setdefault(
                        n.group(1), line_at(at, n.start()))
        if not line:
            out.append("%s:1: no Calls sentence in the opening comment (it "
                       "calls %s)" % (p, ", ".join(m + ".c" for m in sorted(
                           called)) or "no module"))
            continue
        for name, n in sorted({**maybe, **named}.items()):
            why = ("itself" if name == me else "not a module of src/"
                   if name not in mods else "but %s.c calls no function of "
                   "it" % me if name in named and name not in called else "")
            out += ["%s:%d: Calls line names %s.c, %s" % (p, n, name, why)
                    ] if why else []
        for m in sorted(called - set(named) - set(maybe)):
            out.append("%s:%d: Calls line does not name %s.c, but %s calls "
                       "it: %s" % (p, line, m, p, tree.site(p, m)))
    return out

def check_cancellation(tree):
    out = set()
    for o in tree.objs:
        calls, memo = defaultdict(set), {}
        for fn, _, _, s, call in o.sites:
            calls[fn] |= {s} if call or s in NOCANCEL else set()

        def covered(f):
            if f not in memo:
                memo[f] = False            # a cycle covers nothing
                callers = [g for g in calls if g != f and f in calls[g]]
                memo[f] = bool(calls[f] & NOCANCEL) or (
                    o.defs.get(f) == "t" and bool(callers)
                    and all(map(covered, callers)))
            return memo[f]
        for fn, path, line, s, _ in o.sites:
            if re.sub(r"^__isoc\d+_|64$", "", s) in CANCEL_POINTS and \
                    s in o.undef and path.startswith("src/") and \
                    not covered(fn):
                out.add("%s:%d: %s calls %s, a cancellation point, with "
                        "cancellation enabled (os.c \"Cancellation\")"
                        % (path, line, fn, s))
    return sorted(out)

def check_pairs(tree):
    known = {s for o in tree.objs for s in list(o.defs) + list(o.undef)}
    for p in tree.cfiles + tree.hfiles:
        known |= {a or b for a, b in re.findall(
            r"#\s*define\s+(\w+)\(|\bSYS_(\w+)", text(p))}
        known |= set(re.findall(r"\b(\w+)\s*\([^;{}]*\)\s*\{", code(p)))
    out = []
    for p in tree.cfiles + tree.hfiles:
        for body, at in comments(text(p)):
            for m in re.finditer(r"[Pp]airs with(.*?)(?:\.\s|\.$|$)", body):
                out += ["%s:%d: \"Pairs with\" names %s(), which no file "
                        "defines" % (p, line_at(at, m.start(1) + f.start()),
                                     f.group(1))
                        for f in re.finditer(r"\b(\w+)\(\)", m.group(1))
                        if f.group(1) not in known]
    return out

def test_names():
    """Every test tests/ registers: programs (test_*.c, .cc), add_test()
    names, a foreach's add_test(NAME pre_${v}) once per item, torture_*."""
    tests = set()
    for p in files(os.path.join(ROOT, "tests")):
        if p.endswith((".c", ".cc")) and module(p).startswith(("test_",
                                                               "stress_")):
            tests.add(module(p))
        if not p.endswith((".txt", ".cmake")):
            continue
        t = text(p)
        tests |= {a or "torture_" + b for a, b in re.findall(
            r"add_test\(NAME ([\w-]+)[\s)]|orcu_torture\((\w+)", t)}
        lists = defaultdict(list)
        for name, items in re.findall(
                r"\b(?:set\(|list\(APPEND )(\w+) ([^)]*)\)", t):
            lists[name] += items.split()
        for var, items, body in re.findall(
                r"foreach\((\w+) ([^)]*)\)(.*?)endforeach", t, re.S):
            items = [x.strip('"') for i in items.split() for x in (
                lists[i[2:-1]] if i.startswith("${") else [i])]
            named = re.findall(r"add_test\(NAME ([\w-]*)\$\{%s\}([\w-]*)"
                               % var, body)
            for alias, pre, post in re.findall(      # set(_name pre${v}post)
                    r"set\((\w+) ([\w-]*)\$\{%s\}([\w-]*)\)" % var, body):
                if "add_test(NAME ${%s}" % alias in body:
                    named.append((pre, post))
            for pre, post in named:
                tests |= {pre + i + post for i in items}
    return tests

def check_contract_tests(tests):
    """Each contract of the public headers ends with the tests that check
    it ("Tests: test_a, test_b (what), ..."), and they exist."""
    out = []
    for h in ("include/orcu.h", "include/orcu/debug.h"):
        raw = text(h)
        for m in re.finditer(r"/\*(.*?)\*/", raw, re.S):
            body = re.sub(r"(?m)^\s*\*? ?", "", m.group(1))
            lead = re.search(r"(?m)^(orcu_[a-z0-9_]+)(?:\([^()]*\))?"
                             r"(?:\s*/\s*orcu_\w+)*\s+-\s", body)
            if not lead:
                continue
            n = raw.count("\n", 0, m.start()) + 1
            t = re.search(r"(?m)^Tests:(.*?)(?:\n\s*\n|\Z)", body, re.S)
            if not t:
                out.append("%s:%d: the contract of %s names no test (a "
                           "\"Tests:\" paragraph)" % (h, n, lead.group(1)))
                continue
            for name in re.findall(r"(?:^|,)\s*([\w-]+)", re.sub(
                    r"\([^()]*\)", "", t.group(1))):
                if name not in tests:
                    out.append("%s:%d: the contract of %s names test %s, "
                               "which tests/ does not register"
                               % (h, n, lead.group(1), name))
    return out

def check_design():
    """docs/DESIGN.md section 2 against include/orcu.h, and its module
    table against src/."""
    out, doc = [], "docs/DESIGN.md"
    lines = text(doc).split("\n")
    api = re.search(r"## 2\..*?```c\n(.*?)```", text(doc), re.S)
    at = text(doc)[:api.start(1)].count("\n") + 1 if api else 1
    listed = set(re.findall(r"\b(orcu_(?!_)[a-z0-9_]*[a-z0-9])\s*\(",
                            api.group(1))) if api else set()
    hdr = re.sub(r"/\*.*?\*/", " ", text("include/orcu.h"), flags=re.S)
    declared = set(re.findall(r"(?m)^(?:ORCU_API\b[^;(]*?|static inline\b"
                              r"[^;(]*?|#define\s+)\b(orcu_(?!_)[a-z0-9_]*[a-z0-9])"
                              r"\s*\(", hdr))
    out += ["%s:%d: section 2 lacks %s, which include/orcu.h declares"
            % (doc, at, n) for n in sorted(declared - listed)]
    out += ["%s:%d: section 2 lists %s, which include/orcu.h does not declare"
            % (doc, at, n) for n in sorted(listed - declared)]
    rows = [(i, re.findall(r"`(src/[\w/.-]+)`", l.split("|")[1]))
            for i, l in enumerate(lines, 1)
            if re.match(r"\| `src/", l)]
    named = set()
    for i, paths in rows:
        for path in paths:
            if not os.path.exists(os.path.join(ROOT, path)):
                out.append("%s:%d: the module table names %s, which does not "
                           "exist" % (doc, i, path))
            named.add(path)
    for p in files(SRC):
        r = rel(p)
        if not (r in named or re.sub(r"\.h$", ".c", r) in named or any(
                n.endswith("/") and r.startswith(n) for n in named)):
            out.append("%s:%d: the module table has no row for %s"
                       % (doc, rows[0][0] if rows else 1, r))
    return out

def check_prose():
    out, tests = [], test_names()
    for notes in ("docs/DESIGN-NOTES.md", "docs/DESIGN.md"):
        for n, line in enumerate(text(notes).split("\n"), 1):
            for name in re.findall(r"(?<![\w/.-])(tests/[\w*/.-]+\.c|(?:test|"
                                   r"stress|torture)_[\w*]+)", line):
                if not (glob.glob(os.path.join(ROOT, name)) if "/" in name
                        else fnmatch.filter(tests, name)):
                    out.append("%s:%d: names test %s, which tests/ does not "
                               "have" % (notes, n, name))
    out += check_contract_tests(tests) + check_design()
    models = {module(p) for p in glob.glob(os.path.join(ROOT, "models/*.pml"))}
    for doc, pat in (("models/README.md", r"## (\w+)\.pml\b"),
                     ("README.md", r"\| `make models` \|(.*)"),
                     ("docs/DESIGN.md", r"- `models/`:(.*)")):
        lines = text(doc).split("\n")
        hits = [(i, m.group(1)) for i, l in enumerate(lines, 1)
                for m in [re.match(pat, l)] if m]
        if doc == "docs/DESIGN.md":     # one list item: the NAME.pml in it
            hits = [(i, " ".join("`%s`" % x for x in re.findall(
                r"(\w+)\.pml", re.split(r"\n(?:- |\n)", "\n".join(
                    lines[i - 1:]))[0]))) for i, _ in hits]
        found = {n for _, h in hits for n in re.findall(r"`(\w+)`", h) or
                 ([h] if h.strip() else [])}
        out += ["%s:%d: the model list %s %s (ls models/*.pml: %s)" % (
            doc, (hits or [(1,)])[0][0], what, " ".join(sorted(names)),
            " ".join(sorted(models))) for what, names in (
                ("lacks", models - found), ("names", found - models)) if names]
    return out

def check(t):
    return check_layers(t) + [describe_loop(t, l) for l in tsort_loops(
        t.graph(True))] + check_calls(t) + check_cancellation(t) + \
        check_pairs(t) + check_prose()

# -- metrics ----------------------------------------------------------------
ORDERED = re.compile(
    r"\borcu__(?:(?:load|store|xchg|fetch_add|fetch_sub|cas)_"
    r"(?:acquire|release|acq_rel|seq_cst)|fence_(?:seq_cst|acquire|release))"
    r"\s*\(|\borcu__link_(?:load|store)_(?:acquire|release)\s*\("
    r"|\b__atomic_\w+\s*\([^;]*__ATOMIC_(?:ACQUIRE|RELEASE|ACQ_REL|"
    r"SEQ_CST)|\batomic_thread_fence\s*\(\s*memory_order_(?!relaxed)"
    r"|\batomic_(?:load|store|exchange|fetch_add|fetch_sub|"
    r"compare_exchange_strong|compare_exchange_weak)\s*\(")

def unpaired(paths):
    """{file: (ordered atomics, [those without a stated partner])}."""
    out = {}
    for p in paths:
        raw = text(p).split("\n")
        hits = [i for i, l in enumerate(code(p).split("\n"))
                if "#define" not in l for _ in ORDERED.finditer(l)]
        out[p] = (len(hits), ["%s:%d: %s" % (p, i + 1, raw[i].strip())
                              for i in hits if not re.search(
                                  r"[Pp]airs with|\bOrder:",
                                  "\n".join(raw[max(0, i - 10):i + 1]))])
    return out

def slot_writes(tree):
    """(header, {file: {field: n}}): struct orcu__slot's fields assigned or
    stored atomically, through a name declared struct orcu__slot, outside
    slot.c and the header defining it."""
    hdr = next(h for h in tree.hfiles if "\nstruct orcu__slot {" in text(h))
    body = re.search(r"^struct orcu__slot \{(.*?)^\};", code(hdr),
                     re.S | re.M).group(1)
    while "{" in body:
        body = re.sub(r"\{[^{}]*\}", " ", body)
    fields = "|".join(re.findall(r"(\w+)\s*(?:\[[^\]]*\]\s*)?(?:[A-Z_]+\s*)?;",
                                 body))
    typed = {n for p in tree.cfiles + tree.hfiles for n in re.findall(
        r"\bstruct\s+orcu__slot\s*[*\s]*(?:const\s*)?[*\s]*(\w+)", code(p))}
    write = re.compile(
        r"(\b(?:orcu__(?:store|xchg|fetch|cas)|atomic_(?:store|exchange|fetch|"
        r"compare))\w*\s*\(\s*&\s*|\+\+|--)?\b(\w+)(?:\[[^\]]*\]|\([^()]*\))?"
        r"\s*(?:->|\.)\s*(%s)\b(?:\s*\.\s*\w+)*(?!\s*(?:->|\.|\w))"
        r"(\s*(?:[-+*/%%&|^]?=(?!=)|<<=|>>=|\+\+|--))?" % fields)
    out = defaultdict(lambda: defaultdict(int))
    for p in tree.cfiles + tree.hfiles:
        if p not in (hdr, os.path.join(os.path.dirname(hdr), "slot.c")):
            for m in write.finditer(code(p)):
                if m.group(2) in typed and (m.group(1) or m.group(4)):
                    out[p][m.group(3)] += 1
    return hdr, out

def report(tree):
    print("== 1. module graph: which modules' globals each object "
          "references ([o]: objects only)")
    calls, allg = tree.graph(True), tree.graph(False)
    for m in sorted(allg):
        print("  %-12s -> %s" % (m, " ".join(t + "[o]" * (t not in calls[m])
                                             for t in sorted(allg[m]))))
    for g, what in ((calls, "calls"), (allg, "calls and objects")):
        loops = tsort_loops(g)
        print("  loops tsort reports, %s: %d" % (what, len(loops)))
        print("".join("    %s\n" % describe_loop(tree, l, g is calls)
                      for l in loops), end="")
    print("\n== 2. ordered atomics")
    per = unpaired(tree.cfiles + tree.hfiles)
    print("".join("  %-30s %3d ordered, %3d without a stated partner\n" % (
        f, n, len(bad)) for f, (n, bad) in sorted(per.items()) if n), end="")
    print("  total: %d ordered atomics, %d without a stated partner" % (
        sum(n for n, _ in per.values()), sum(len(b) for _, b in per.values())))
    print("".join("    %s\n" % b for _, (_, bad) in sorted(per.items())
                  for b in bad) if SHOW_UNPAIRED else "", end="")
    hdr, writes = slot_writes(tree)
    print("\n== 3. slot state written outside slot.c (fields of struct "
          "orcu__slot in %s)" % hdr)
    print("".join("  %-28s %s\n" % (p, " ".join("%s(%d)" % kv for kv in sorted(
        w.items()))) for p, w in sorted(writes.items())), end="")
    print("  %d files write %d fields outside slot.c" % (
        len(writes), len({f for w in writes.values() for f in w})))
    lines = check(tree)
    print("\n== 4. the check (what --check fails on)\n" + "".join(
        "  %s\n" % l for l in lines) + "  %d findings" % len(lines))

def main():
    with tempfile.TemporaryDirectory(prefix="src-metrics-") as tmp:
        tree = Tree(compile_all(tmp))
    if not CHECK:
        return report(tree)
    lines = check(tree)
    print("".join(l + "\n" for l in lines) + "src-metrics --check: " + (
        "%d finding%s" % (len(lines), "s"[:len(lines) > 1]) if lines else
        "ok (layers %s, no import cycle; Calls lines, cancellation points, "
        "Pairs with, tests and models named; each contract's tests, DESIGN.md's "
        "section 2 and module table)" % " < ".join(FOLDERS)))
    sys.exit(1 if lines else 0)

if __name__ == "__main__":
    main()
