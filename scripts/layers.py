#!/usr/bin/env python3
"""The daemon's layering (docs/design.md "Layout"), checked on a meson build dir: scripts/lint runs it.

    layers.py BUILDDIR ROOT

1. Calls go down: each fs/ file may call (or take the address of) functions of the files listed
   before it in LAYERS only. Read from the objects with nm, so a call hidden behind a macro counts
   and a static helper does not; a file missing from LAYERS is a finding too.
2. Includes go down: a file includes only headers of its own group or the groups below;
   pool_internal.h is the pool's own (handlers see pool.h only), ops_internal.h the handlers'.
3. Handlers only read nodes: no ops_*.c writes a field of a `struct node` (every change of a
   node is a pool function's).
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
    ('base', ['log', 'fault', 'access', 'holds', 'lifetime', 'hash_table', 'name_table',
              'name_rules', 'xattrs', 'options', 'mountopts', 'opstats', 'procfs', 'session',
              'cgroup2', 'tmpfs_instance', 'sdnotify', 'watch', 'notify', 'backing']),
    # tables, then accounting, attributes, removal and holds (docs/design.md "Layout")
    ('pool', ['pool_core', 'pool_reaper', 'pool_tree', 'pool_usage', 'pool_names', 'pool_attrs',
              'pool_resize', 'pool_texts', 'pool_lifetime', 'pool_stale', 'pool_handles',
              'pool_holds', 'pool_check', 'pool']),
    # the data paths and the transport: FUSE's side of the pool, below the handlers
    ('services', ['mapping_proof', 'datapath_pagecache', 'datapath_passthrough', 'transport']),
    ('handlers', ['ops_request', 'ops_entries', 'ops_files', 'ops_dirs', 'ops_xattrs', 'ops']),
    ('top', ['main']),
]
# Headers without a .c of the same name, and whose they are.
HEADER_GROUP = {'array.h': 'base', 'datapath.h': 'services', 'pool_internal.h': 'pool', 'ops_internal.h': 'handlers',
                'ops.h': 'handlers', 'pool.h': 'pool'}
# Headers only their own group may include.
PRIVATE = {'pool_internal.h', 'ops_internal.h'}

RANK = {}
GROUP = {}
GROUPS = [g for g, _ in LAYERS]
for gname, files in LAYERS:
    for f in files:
        RANK[f] = len(RANK)
        GROUP[f] = gname


def symbols(obj):
    out = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TDBRC':
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == 'U':
            used.add(parts[1])
    return defined, used


def check_calls(builddir, findings):
    objs = glob.glob(os.path.join(builddir, 'fs', 'poolfs-faultsim.p', '*.o'))
    if not objs:
        objs = glob.glob(os.path.join(builddir, 'fs', 'poolfs.p', '*.o'))
    objs += glob.glob(os.path.join(builddir, 'fs', 'libpoolfs_pure.a.p', '*.o'))
    objs += glob.glob(os.path.join(builddir, 'fs', 'libpoolfs_proc.a.p', '*.o'))
    if not objs:
        findings.append(f'{builddir}: no objects of the daemon (build it first)')
        return
    owner, uses = {}, {}
    for obj in objs:
        name = os.path.basename(obj)[:-len('.c.o')]
        defined, used = symbols(obj)
        for s in defined:
            owner[s] = name
        uses[name] = used
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
SERVICE_FIELDS = {'backing_id', 'io_cached', 'may_map', 'close_watched', 'life.maybe_mapped'}
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


def main(argv):
    if len(argv) != 3:
        sys.exit('usage: layers.py BUILDDIR ROOT')
    findings = []
    check_calls(argv[1], findings)
    check_includes(argv[2], findings)
    check_node_writes(argv[2], findings)
    for line in findings:
        print(line)
    sys.exit(1 if findings else 0)


if __name__ == '__main__':
    main(sys.argv)
