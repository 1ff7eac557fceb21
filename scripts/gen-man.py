#!/usr/bin/env python3
"""Manual pages from the public headers, which are the manual.

  gen-man.py --out DIR [--version V] HEADER...
      writes DIR/man3/<name>.3 for every documented call and DIR/man7/orcu.7;
      a C++ header (.hpp) gives one page, from its opening // comment
  gen-man.py --check-lib LIB --man-dir DIR [HEADER...]
      fails unless every function LIB exports (nm -D, orcu_* but not the
      internal orcu__*), and every name a C++ HEADER's opening comment
      lists, has a page in DIR/man3

A contract is a paragraph of a header comment that starts with the names
it documents and a dash: "orcu_call - invoke func(head) after ...", or
"orcu_cpu_offload / orcu_cpu_deoffload - ...".  The paragraphs after it in
the same comment belong to it.  All the names one comment documents share
a page, the first name's; the others are ".so" links to it.  The synopsis
is the declaration found in the header (ORCU_API prototype, static inline
definition or #define); a documented name without one, and an ORCU_API
function without a contract, stop the generation with one line saying
which and where.  A paragraph opening "Tests:" (the tests that check a
contract, for make check-structure) stays out of the page.

A C++ header's opening // comment is its page: its first sentence,
"orcu/x.hpp - what, ...: name, name(), ...", gives the summary and the
names (each must be declared in the header: a class or a function; the
synopsis shows those declarations), the rest is the description, "- "
lines a list.  orcu(7) lists the page under C++.
"""
import argparse
import os
import re
import subprocess
import sys

NAME = r"orcu_[a-z0-9_]*[a-z0-9]"
# "orcu_a - ...", "orcu_a / orcu_b - ...", also "orcu_a() - ..." or
# "orcu_m(p, field) - ..." (kernel-doc's way).
ONE = r"%s(?:\([^()]*\))?" % NAME
LEAD = re.compile(r"^(%s(?:\s*/\s*%s)*)\s+-\s+(.*)$" % (ONE, ONE), re.S)
COMMENT = re.compile(r"/\*(.*?)\*/", re.S)


def lead_names(lead):
    return re.findall(NAME, re.sub(r"\([^()]*\)", "", lead))


def fail(msg):
    sys.exit("gen-man: " + msg)


def paragraphs(body):
    """A comment's text as paragraphs (lists of lines, ' * ' stripped)."""
    out, cur = [], []
    for line in body.split("\n"):
        line = re.sub(r"^\s*\*? ?", "", line, count=1).rstrip()
        if line.strip():
            cur.append(line)
        elif cur:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def contracts(path, text):
    """[(names, summary, paragraphs, line)] for each documenting comment."""
    found = []
    for m in COMMENT.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        names, paras, summary = [], [], None
        for p in paragraphs(m.group(1)):
            lead = LEAD.match(" ".join(p))
            if lead:
                names += [n for n in lead_names(lead.group(1)) if n not in names]
                if summary is None:
                    summary = first_clause(lead.group(2))
            if names and not p[0].startswith("Tests:"):
                paras.append(p)
        if names:
            found.append((names, summary, paras, "%s:%d" % (path, line)))
    return found


def cxx_declaration(code, name):
    """A class (with its public member functions) or function of a C++ header."""
    m = re.search(r"^(template <[^\n]*>\n)?(class|struct) %s\b[^;{]*\{" % name, code, re.M)
    if m:
        head = re.sub(r"\s*:[^:].*\{$", " {", m.group(0).split("\n")[-1])   # no base class
        out = [l for l in [m.group(1) and m.group(1).strip(), head] if l]
        depth, i, public, cur = 1, m.end(), m.group(2) == "struct", ""
        while depth and i < len(code):
            c = code[i]
            if depth == 1 and c not in "{}":
                cur += c
            if c == "\n" or (depth == 1 and c in ";{"):
                line = " ".join(cur.split())
                if re.match(r"(public|protected|private):", line):
                    public = line.startswith("public")
                    line = re.sub(r"^\w+:\s*", "", line)
                if public and "(" in line and c != "\n" and not line.startswith("friend"):
                    out.append("\t" + line.rstrip("; {") + ";")
                if c != "\n" or not line:
                    cur = ""
            depth += {"{": 1, "}": -1}.get(c, 0)
            i += 1
        return out + ["};"]
    for m in re.finditer(r"^(template <[^\n]*>\n)?(?:inline )?([^\n;{}()]*\b%s\s*\()" % name, code, re.M):
        depth, i = 1, m.end()
        while depth and i < len(code):
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            i += 1
        tail = re.match(r"[^;{\n]*", code[i:]).group(0)
        return [l for l in [m.group(1) and m.group(1).strip(),
                            " ".join((m.group(2) + code[m.end():i] + tail).split()) + ";"] if l]
    return None


def cxx_page(rel, text, version):
    """(names, summary, page) of a C++ header's opening // comment."""
    lines = []
    for l in text.split("\n"):
        if not l.startswith("//"):
            break
        lines.append(re.sub(r"^// ?", "", l))
    first = re.match(r"^%s - (.*?\.)(?:\s|$)(.*)" % re.escape(rel[len("include/"):]),
                     "\n".join(lines), re.S)
    if not first:
        fail("%s: the opening comment does not start \"%s - ...\"" % (rel, rel[len("include/"):]))
    # The summary stops before the list of names ("..., in namespace orcu: a, b()").
    summary = re.sub(r",[^,:]*:[\w\s(),]*$", "", first_clause(" ".join(first.group(1).split())))
    names = list(dict.fromkeys(re.findall(r"\brcu_\w+|\borcu::\w+", first.group(1))))
    code = re.sub(r"//[^\n]*", "", text)
    decls = []
    for n in names:
        d = cxx_declaration(code, n)
        if d is None:
            fail("%s: %s is named in the opening comment but not declared" % (rel, n))
        decls += d + [""]
    out = ['.\\" Generated by scripts/gen-man.py from %s: edit the header, not this page.' % rel,
           '.TH %s 3 "" "orcu %s" "orcu manual"' % (names[0].upper(), version),
           ".SH NAME", "%s \\- %s" % (", ".join(names), roff(summary)),
           ".SH SYNOPSIS", ".nf", "#include <%s>" % rel[len("include/"):], "",
           "namespace orcu {", ""] + [roff_line(d) for d in decls] + ["}", ".fi", ".PP",
           "Compile as C++20 or later; link with \\fIpkg\\-config \\-\\-cflags \\-\\-libs orcu\\fP.",
           ".SH DESCRIPTION"]
    body, item = [], None
    for l in first.group(2).split("\n"):
        if re.match(r"^\s*- ", l):
            item = [re.sub(r"^\s*- ", "", l)]
            body.append(("item", item))
        elif item is not None and re.match(r"^\s{2,}\S", l):
            item.append(l.strip())
        elif l.strip():
            if item is not None or not body or body[-1][0] != "para":
                body.append(("para", []))
            item = None
            body[-1][1].append(l.strip())
    for kind, words in body:
        out += ([".IP \\(bu 2"] if kind == "item" else [".PP"]) + [roff_line(" ".join(words))]
    out += [".SH SEE ALSO", "\\fBorcu_synchronize\\fP(3), \\fBorcu_barrier\\fP(3), "
            "\\fBorcu_retire\\fP(3), \\fBorcu\\fP(7)"]
    return names, summary, "\n".join(out) + "\n"


def first_clause(s):
    """The text up to the first '.' or ';' outside parentheses."""
    depth = 0
    for i, c in enumerate(s):
        depth += c == "("
        depth -= c == ")"
        if depth == 0 and c in ".;" and (i + 1 == len(s) or s[i + 1] in " \n"):
            return s[:i]
    return s.rstrip(".")


def strip_comments(text):
    return COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def declaration(code, name):
    """The first declaration of name: a prototype, inline definition or macro."""
    m = re.search(r"^#\s*define\s+%s\b(\([^)]*\))?" % name, code, re.M)
    macro = m and ("#define %s%s" % (name, m.group(1) or ""), m.start())
    fn = None
    for m in re.finditer(r"^(ORCU_API|static inline)\b[^;{#]*?\b%s\s*\(" % name, code, re.M):
        depth, i = 1, m.end()
        while depth and i < len(code):
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            i += 1
        decl = " ".join(code[m.start():i].split())
        decl = re.sub(r"^(ORCU_API|static inline) ", "", decl)
        fn = (decl + ";", m.start())
        break
    cands = [c for c in (macro, fn) if c]
    return min(cands, key=lambda c: c[1])[0] if cands else None


def exported_prototypes(code):
    return re.findall(r"^ORCU_API\s+(?!extern)[^;(]*?\b(%s)\s*\(" % NAME, code, re.M)


def roff(s):
    s = s.replace("\\", "\\e")
    s = re.sub(r"(?<![\w-])-(?=[0-9A-Z])", r"\\-", s)    # -EINVAL, -1
    return s


def roff_line(s):
    s = roff(s)
    return "\\&" + s if s[:1] in (".", "'") else s


def page(names, decls, summary, paras, src, include, version, all_pages):
    out = ['.\\" Generated by scripts/gen-man.py from %s: edit the header, not this page.' % src,
           '.TH %s 3 "" "orcu %s" "orcu manual"' % (names[0].upper(), version),
           ".SH NAME",
           "%s \\- %s" % (", ".join(names), roff(summary)),
           ".SH SYNOPSIS", ".nf", "#include <%s>" % include, ""]
    out += [roff_line(d) for d in decls]
    out += [".fi", ".PP", "Compile and link with \\fIpkg\\-config \\-\\-cflags \\-\\-libs orcu\\fP.",
            ".SH DESCRIPTION"]
    for p in paras:
        text = roff_line(" ".join(p))
        lead = LEAD.match(" ".join(p))
        if lead:        # the names in bold, as in NAME
            text = "%s \\- %s" % (", ".join("\\fB%s\\fP" % n for n in lead_names(
                lead.group(1))), roff(lead.group(2)))
        out += [".PP", text]
    seealso = sorted({n for p in paras for n in re.findall(NAME, " ".join(p))}
                     & set(all_pages) - set(names))
    out += [".SH SEE ALSO",
            ", ".join(["\\fB%s\\fP(3)" % n for n in seealso] + ["\\fBorcu\\fP(7)"])]
    return "\n".join(out) + "\n"


def overview(intro, contexts, entries, cxx, version):
    out = ['.\\" Generated by scripts/gen-man.py from include/orcu.h: edit the header, not this page.',
           '.TH ORCU 7 "" "orcu %s" "orcu manual"' % version,
           ".SH NAME", "orcu \\- userspace RCU with callback offloading",
           ".SH SYNOPSIS", ".nf", "#include <orcu.h>", ".fi", ".PP",
           "Compile and link with \\fIpkg\\-config \\-\\-cflags \\-\\-libs orcu\\fP,",
           "or from CMake: \\fBfind_package(orcu CONFIG REQUIRED)\\fP and link \\fBorcu::orcu\\fP.",
           ".SH DESCRIPTION"]
    for p in intro:
        out += [".PP", roff_line(" ".join(p))]
    if contexts:
        out += [".SH CONTEXTS", ".nf"] + [roff_line(l) for l in contexts] + [".fi"]
    out += [".SH CALLS"]
    for names, _, summary, _, _, _ in entries:
        out += [".TP", "\\fB%s\\fP(3)" % names[0]]
        if len(names) > 1:
            out[-1] += ", " + ", ".join(names[1:])
        out += [roff_line(summary)]
    if cxx:
        out += [".SH C++"]
        for rel, names, summary in cxx:
            out += [".TP", "\\fB<%s>\\fP: \\fB%s\\fP(3), %s" % (
                rel[len("include/"):], names[0], ", ".join(names[1:])), roff_line(summary)]
    return "\n".join(out) + "\n"


def generate(args):
    entries, intro, contexts, cxx = [], None, None, []
    for h in args.headers:
        with open(h) as f:
            text = f.read()
        rel = "include/" + h.split("include/", 1)[-1]
        include = rel[len("include/"):]
        if h.endswith(".hpp"):
            cxx.append((rel,) + cxx_page(rel, text, args.version))
            continue
        code = strip_comments(text)
        if intro is None:
            intro = paragraphs(COMMENT.search(text).group(1))
            # The header's words for where a call may be made.
            where = re.search(r"/\*\s*\* (Where a call may be made.*?)\*/", text, re.S)
            contexts = where and [re.sub(r"^\s*\* ?", "", l).rstrip()
                                  for l in where.group(1).rstrip().split("\n")]
        documented = set()
        for names, summary, paras, where in contracts(rel, text):
            decls = [declaration(code, n) for n in names]
            for n, d in zip(names, decls):
                if d is None:
                    fail("%s: %s is documented but not declared in %s" % (where, n, rel))
            documented.update(names)
            entries.append((names, decls, summary, paras, rel, include))
        for n in exported_prototypes(code):
            if not n.startswith("orcu__") and n not in documented:
                fail("%s: %s is exported but has no contract comment (\"%s - ...\")" % (rel, n, n))
    all_pages = {n for e in entries for n in e[0]}
    for sec in ("man3", "man7"):
        d = os.path.join(args.out, sec)
        os.makedirs(d, exist_ok=True)
        for old in os.listdir(d):       # a call removed from the header loses its page
            os.remove(os.path.join(d, old))
    for names, decls, summary, paras, rel, include in entries:
        with open(os.path.join(args.out, "man3", names[0] + ".3"), "w") as f:
            f.write(page(names, decls, summary, paras, rel, include, args.version, all_pages))
        for n in names[1:]:
            with open(os.path.join(args.out, "man3", n + ".3"), "w") as f:
                f.write(".so man3/%s.3\n" % names[0])
    for rel, names, summary, text in cxx:
        with open(os.path.join(args.out, "man3", names[0] + ".3"), "w") as f:
            f.write(text)
        for n in names[1:]:
            with open(os.path.join(args.out, "man3", n + ".3"), "w") as f:
                f.write(".so man3/%s.3\n" % names[0])
    with open(os.path.join(args.out, "man7", "orcu.7"), "w") as f:
        f.write(overview(intro, contexts, entries, [c[:3] for c in cxx], args.version))


def check(args):
    nm = subprocess.run(["nm", "-D", "--defined-only", args.check_lib],
                        capture_output=True, text=True, check=True).stdout
    funcs = sorted({m.group(2).split("@")[0] for m in
                    re.finditer(r"^\S+ ([TWi]) (%s\S*)$" % NAME, nm, re.M)
                    if not m.group(2).startswith("orcu__")})
    pages = set(f[:-2] for f in os.listdir(os.path.join(args.man_dir, "man3")))
    missing = [f for f in funcs if f not in pages]
    for f in missing:
        print("man-check: %s is exported by %s but has no page in %s/man3"
              % (f, os.path.basename(args.check_lib), args.man_dir))
    for h in (h for h in args.headers if h.endswith(".hpp")):
        with open(h) as f:
            rel = "include/" + h.split("include/", 1)[-1]
            names = cxx_page(rel, f.read(), "")[0]
        for n in names:
            if n not in pages:
                missing.append(n)
                print("man-check: %s (%s) has no page in %s/man3" % (n, rel, args.man_dir))
    if not funcs:
        fail("no orcu_* function found in %s" % args.check_lib)
    if missing:
        sys.exit(1)
    print("man-check: all %d functions exported by %s have a page, and the "
          "C++ names" % (len(funcs), os.path.basename(args.check_lib)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--version", default="")
    ap.add_argument("--check-lib")
    ap.add_argument("--man-dir")
    ap.add_argument("headers", nargs="*")
    args = ap.parse_args()
    if args.check_lib:
        check(args)
    elif args.out and args.headers:
        generate(args)
    else:
        ap.error("--out DIR HEADER... or --check-lib LIB --man-dir DIR")


if __name__ == "__main__":
    main()
