#!/usr/bin/env python3
"""The daemon's layering (docs/design.md "Layout"), checked on a meson build dir: scripts/lint runs it.

    layers.py BUILDDIR ROOT          check; one line per finding, exit 1 if any
    layers.py --draw BUILDDIR ROOT   the drawing: every file's calls, includes and types, as arrows
                                     between files (Graphviz dot), each one down the layers

1. Calls go down: each fs/ file may call (or take the address of) functions of the files listed
   before it in LAYERS only. Read from the objects with nm, so a call hidden behind a macro counts
   and a static helper does not; a file missing from LAYERS is a finding too.
2. Includes go down: a file includes only headers of its own group or the groups below;
   pool_internal.h is the pool's own (handlers see pool.h only), ops_internal.h the handlers'.
3. Handlers only read nodes: no ops_*.c writes a field of a `struct node` (every change of a
   node is a pool function's).
4. Declarations sit under their file: the pool's two function headers (pool_api.h for the layers
   above, pool_internal.h for the pool's own files) are cut into sections `/* ---- FILE.c`, in
   the order of LAYERS, and a section declares only functions FILE.c defines (from the objects).
5. Types go down too: a type a section declares (struct pool_fallocate under pool_resize.c) is
   used only by that file and files above it; the data model (pool_model.h) sits below every
   pool file. So a drawing of includes, calls and types has no circle and no upward arrow.
Prints one line per finding and exits 1 if there is any.
"""
import glob
import os
import re
import subprocess
import sys

# Bottom first. A group is a list of files; within the pool, each file sits above the ones
# before it (the order of the pool's layers).
LAYERS = [
    ('base', ['fault', 'array.h', 'log', 'access', 'options', 'holds', 'lifetime', 'hash_table',
              'name_table', 'name_rules', 'timer_heap', 'part_set', 'proof_schedule', 'xattrs',
              'mountopts', 'opstats', 'poolstats', 'procfs', 'session', 'cgroup2', 'memcg',
              'tmpfs_instance', 'sdnotify',
              'idle_halt', 'unmount_guard', 'watch', 'notify',
              'backing']),
    # tables, then accounting, attributes, removal and holds (docs/design.md "Layout")
    ('pool', ['pool_model.h', 'pool_core', 'pool_reaper', 'pool_tree', 'pool_usage', 'pool_names', 'pool_attrs',
              'pool_handles', 'pool_room', 'pool_resize', 'pool_texts', 'pool_lifetime', 'pool_stale',
              'pool_holds', 'pool_check', 'pool_setup']),
    # the data paths and the transport: FUSE's side of the pool, below the handlers
    ('services', ['datapath.h', 'mapping_proof', 'datapath_pagecache', 'datapath_passthrough', 'transport']),
    ('handlers', ['ops.h', 'ops_internal.h', 'ops_request', 'ops_entries', 'ops_files', 'ops_dirs', 'ops_xattrs', 'ops']),
    ('top', ['main']),
]
# Headers without a .c of the same name, and whose they are: those listed in LAYERS, where their
# place is their rank in the drawing, and the two sectioned ones (check 4), whose sections rank
# as the files they are under.
HEADER_GROUP = {f: g for g, files in LAYERS for f in files if f.endswith('.h')}
HEADER_GROUP.update({'pool_api.h': 'pool', 'pool_internal.h': 'pool'})
# Headers cut into sections, one per defining file (check 4).
SECTIONED = ['pool_api.h', 'pool_internal.h']
# Headers only their own group may include.
PRIVATE = {'pool_internal.h', 'ops_internal.h'}

RANK = {}
GROUP = {}
GROUPS = [g for g, _ in LAYERS]
for gname, files in LAYERS:
    for f in files:
        RANK[f] = len(RANK)
        GROUP[f] = gname


def symbols(objs):
    """{object path: (defined, used)} from one `nm` run over all of them: one process per object
    made the lint test slow enough, on a loaded machine, to hit its timeout."""
    table = {obj: (set(), set()) for obj in objs}
    if not objs:
        return table
    out = subprocess.run(['nm', '-A', *objs], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        # -A: "OBJECT:ADDRESS TYPE NAME", or "OBJECT:  U NAME" for what it uses.
        obj, sep, rest = line.rpartition('.o:')
        if not sep or obj + '.o' not in table:
            continue
        defined, used = table[obj + '.o']
        parts = rest.split()
        if len(parts) == 3 and parts[1] in 'TDBRC':
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == 'U':
            used.add(parts[1])
    return table


def objects(builddir):
    objs = glob.glob(os.path.join(builddir, 'fs', 'poolfs-faultsim.p', '*.o'))
    if not objs:
        objs = glob.glob(os.path.join(builddir, 'fs', 'poolfs.p', '*.o'))
    objs += glob.glob(os.path.join(builddir, 'fs', 'libpoolfs_pure.a.p', '*.o'))
    objs += glob.glob(os.path.join(builddir, 'fs', 'libpoolfs_proc.a.p', '*.o'))
    owner, uses = {}, {}
    for obj, (defined, used) in symbols(objs).items():
        name = os.path.basename(obj)[:-len('.c.o')]
        for s in defined:
            owner[s] = name
        uses[name] = used
    return owner, uses


def check_calls(builddir, findings):
    owner, uses = objects(builddir)
    if not uses:
        findings.append(f'{builddir}: no objects of the daemon (build it first)')
        return
    for name in sorted(uses):
        if name not in RANK:
            findings.append(f'fs/{name}.c: not in scripts/layers.py LAYERS (say which layer it is)')
            continue
        for s in sorted(uses[name]):
            callee = owner.get(s)
            if callee and callee != name and RANK.get(callee, -1) >= RANK[name]:
                findings.append(f'fs/{name}.c calls {s} of fs/{callee}.c, a layer above it')


def header_group(h):
    if h in HEADER_GROUP:
        return HEADER_GROUP[h]
    return GROUP.get(h[:-2])


def check_includes(root, findings):
    for path in sorted(glob.glob(os.path.join(root, 'fs', '*.[ch]'))):
        base = os.path.basename(path)
        group = header_group(base) if base.endswith('.h') else GROUP.get(base[:-2])
        if group is None:
            continue
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                m = re.match(r'#include "([^"]+)"', line)
                if not m:
                    continue
                hg = header_group(m.group(1))
                if hg is None:
                    continue
                if GROUPS.index(hg) > GROUPS.index(group) or (m.group(1) in PRIVATE and hg != group):
                    findings.append(f'fs/{base}:{lineno}: includes {m.group(1)} ({hg}), '
                                    f'above or private to another layer than this file ({group})')


NODE_DECL = re.compile(r'struct node\s*((?:\*+\s*\w+\s*(?:=[^,;)]*)?,?\s*)+)')
# The node fields a data path keeps (datapath.h): its registration, how its handles do I/O, and
# whether a mapping may be left (the lifetime input only the data path can prove).
SERVICE_FIELDS = {'backing_id', 'io_cached', 'cache_fresh', 'cache_used', 'may_map', 'close_watched',
                  'proof_doubt', 'life.maybe_mapped'}
WRITE_OPS = r'(?:=(?!=)|\+\+|--|\+=|-=|\|=|&=|\^=)'


def check_node_writes(root, findings):
    for path in sorted([p for p in glob.glob(os.path.join(root, 'fs', '*.c')) if GROUP.get(os.path.basename(p)[:-2]) in ('services', 'handlers', 'top')]):
        with open(path) as f:
            text = f.read()
        # Names declared as struct node pointers anywhere in the file (locals and parameters).
        names = set()
        for m in NODE_DECL.finditer(text):
            names.update(re.findall(r'\*+\s*(\w+)', m.group(1)))
        if not names:
            continue
        alt = '|'.join(sorted(names))
        node = r'(?:\b(?:' + alt + r')|\(\*\s*(?:' + alt + r')\))->'
        write = re.compile(node + r'([\w.]+)(?:\[[^]]*\])?\s*' + WRITE_OPS +
                           r'|(?:\+\+|--)\s*' + node + r'([\w.]+)')
        group = GROUP[os.path.basename(path)[:-2]]
        for lineno, line in enumerate(text.splitlines(), 1):
            for m in write.finditer(line):
                field = m.group(1) or m.group(2)
                if group == 'services' and field in SERVICE_FIELDS:
                    continue
                findings.append(f'{os.path.relpath(path, root)}:{lineno}: writes node field '
                                f'{field} outside the pool (make it a pool function): '
                                f'{line.strip()}')


SECTION = re.compile(r'/\* ---- (\w+)\.c\b')
DECL = re.compile(r'^(?![\s/#}])[^;(=]*?\b(\w+)\(')
TYPE = re.compile(r'^struct (\w+) \{')


def sections(root, header):
    """{file: (functions, types)} of a sectioned header, and its section order."""
    out, order, cur = {}, [], None
    with open(os.path.join(root, 'fs', header)) as f:
        for line in f:
            m = SECTION.match(line)
            if m:
                cur = m.group(1)
                order.append(cur)
                out.setdefault(cur, (set(), set()))
                continue
            if cur is None:
                continue
            m = DECL.match(line)
            if m and not line.startswith('struct ' + m.group(1)):
                out[cur][0].add(m.group(1))
            m = TYPE.match(line)
            if m:
                out[cur][1].add(m.group(1))
    return out, order


def check_sections(builddir, root, findings):
    owner, _ = objects(builddir)
    for header in SECTIONED:
        secs, order = sections(root, header)
        ranks = [RANK.get(f, -1) for f in order]
        if ranks != sorted(ranks) or -1 in ranks:
            findings.append(f'fs/{header}: sections not in the order of LAYERS: {", ".join(order)}')
        for f, (funcs, _) in secs.items():
            for fn in sorted(funcs):
                if fn in owner and owner[fn] != f:
                    findings.append(f'fs/{header}: {fn} is under {f}.c but defined in '
                                    f'fs/{owner[fn]}.c')


def section_types(root):
    """{type: the file whose section of a sectioned header declares it}."""
    types = {}
    for header in SECTIONED:
        for f, (_, ts) in sections(root, header)[0].items():
            for t in ts:
                types[t] = f
    return types


def type_edges(root):
    """(user, owner, type): every use of a sectioned header's type by an fs/ .c file."""
    edges = []
    types = section_types(root)
    for path in sorted(glob.glob(os.path.join(root, 'fs', '*.c'))):
        name = os.path.basename(path)[:-2]
        with open(path) as f:
            text = f.read()
        for t, f_owner in types.items():
            if re.search(r'\bstruct ' + t + r'\b', text):
                edges.append((name, f_owner, t))
    return edges


def check_types(root, findings):
    for user, owner, t in type_edges(root):
        if user in RANK and RANK[user] < RANK.get(owner, -1):
            findings.append(f'fs/{user}.c uses struct {t}, declared under fs/{owner}.c, '
                            'a layer above it')


def node_of(root, base):
    """The drawing's node for an fs/ file: its module, or a header without a .c itself."""
    stem = base[:-2]
    if base.endswith('.c') or os.path.exists(os.path.join(root, 'fs', stem + '.c')):
        return stem
    return base


def check_drawing(builddir, root, findings):
    _, edges = draw(builddir, root)
    for (a, b), kinds in sorted(edges.items()):
        ra, rb = RANK.get(a), RANK.get(b)
        if ra is not None and rb is not None and rb > ra:
            findings.append(f'drawing: {a} -> {b} ({", ".join(sorted(kinds))}) runs up the layers')


def draw(builddir, root):
    """Graphviz dot: files ranked by layer, an arrow for each call, include and type used."""
    owner, uses = objects(builddir)
    edges = {}
    for name, used in uses.items():
        for s in used:
            callee = owner.get(s)
            if callee and callee != name:
                edges.setdefault((name, callee), set()).add('calls')
    for path in sorted(glob.glob(os.path.join(root, 'fs', '*.[ch]'))):
        src = node_of(root, os.path.basename(path))
        with open(path) as f:
            for m in re.finditer(r'#include "([^"]+)"', f.read()):
                h = m.group(1)
                if h in SECTIONED or not os.path.exists(os.path.join(root, 'fs', h)):
                    continue  # a sectioned header's arrows are its sections' (calls, types)
                dst = node_of(root, h)
                if dst != src:
                    edges.setdefault((src, dst), set()).add('includes')
    for user, f_owner, _ in type_edges(root):
        if user != f_owner:
            edges.setdefault((user, f_owner), set()).add('types')
    lines = ['digraph fs {', '  rankdir=BT; node [shape=box, fontsize=10];']
    for gname, files in LAYERS:
        lines.append(f'  subgraph "cluster_{gname}" {{ label="{gname}";')
        for f in files:
            lines.append(f'    "{f}";')
        lines.append('  }')
    for (a, b), kinds in sorted(edges.items()):
        lines.append(f'  "{a}" -> "{b}" [tooltip="{", ".join(sorted(kinds))}"];')
    lines.append('}')
    return '\n'.join(lines), edges


def main(argv):
    if len(argv) == 4 and argv[1] == '--draw':
        print(draw(argv[2], argv[3])[0])
        return
    if len(argv) != 3:
        sys.exit('usage: layers.py [--draw] BUILDDIR ROOT')
    findings = []
    check_calls(argv[1], findings)
    check_includes(argv[2], findings)
    check_node_writes(argv[2], findings)
    check_sections(argv[1], argv[2], findings)
    check_types(argv[2], findings)
    check_drawing(argv[1], argv[2], findings)
    for line in findings:
        print(line)
    sys.exit(1 if findings else 0)


if __name__ == '__main__':
    main(sys.argv)
