#!/usr/bin/env python3
"""scripts/layers.py can fail: each of its three checks is shown a violation it must report.

    test_layers.py ROOT BUILDDIR

TAP output. The tree's own layering is checked by the lint test (scripts/lint runs layers.py);
this proves the checker is not blind: a handler writing a node field, a handler including the
pool's internals, a pool file calling one above it, and a file missing from the layer table.
"""
import importlib.util
import os
import shutil
import sys
import tempfile


def load(root):
    spec = importlib.util.spec_from_file_location('layers', os.path.join(root, 'scripts', 'layers.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tree_with(root, name, extra):
    """A copy of fs/ in a temporary root, with `extra` appended to fs/`name`."""
    tmp = tempfile.mkdtemp(prefix='poolfs-layers-')
    shutil.copytree(os.path.join(root, 'fs'), os.path.join(tmp, 'fs'))
    with open(os.path.join(tmp, 'fs', name), 'a') as f:
        f.write(extra)
    return tmp


def findings_in(root, name, extra, check):
    """What `check` (a layers.py check taking a root) finds in a copy of fs/ with `extra` added
    to fs/`name`."""
    tmp = tree_with(root, name, extra)
    try:
        findings = []
        check(tmp, findings)
        return findings
    finally:
        shutil.rmtree(tmp)


def main(argv):
    root, builddir = argv[1], argv[2]
    results = []

    def check(name, ok, detail=''):
        results.append((name, ok, detail))

    layers = load(root)

    findings = []
    layers.check_node_writes(root, findings)
    layers.check_includes(root, findings)
    check('the real tree has no node write or upward include', not findings, '; '.join(findings))

    for name, extra, want in [
        ('ops_files.c', '\nstatic void bad(struct node *n)\n{\n\tn->perm = 0;\n}\n',
         'writes node field perm'),
        ('ops_dirs.c', '\nstatic void bad(struct node **np)\n{\n\t(*np)->life.opens++;\n}\n',
         'writes node field life.opens'),
        ('datapath_passthrough.c', '\nstatic void bad(struct node *n)\n{\n\tn->uid = 0;\n}\n',
         'writes node field uid'),
        ('main.c', '\nstatic void bad(struct node *n)\n{\n\t--n->nlookup;\n}\n',
         'writes node field nlookup'),
    ]:
        findings = findings_in(root, name, extra, layers.check_node_writes)
        check(f'a write in {name} is reported', any(want in f for f in findings), '; '.join(findings))

    findings = findings_in(root, 'ops_xattrs.c', '#include "pool_internal.h"\n',
                           layers.check_includes)
    check('a handler including pool_internal.h is reported',
          any('ops_xattrs.c' in f and 'pool_internal.h' in f for f in findings), '; '.join(findings))

    findings = findings_in(root, 'holds.c', '#include "pool_api.h"\n', layers.check_includes)
    check('a base module including pool_api.h is reported',
          any('holds.c' in f and 'pool_api.h' in f for f in findings), '; '.join(findings))

    # Sections: a declaration put under the wrong file, and sections out of order.
    findings = []
    layers.check_sections(builddir, root, findings)
    check('the real headers declare each function under its file', not findings,
          '; '.join(findings))
    tmp = tree_with(root, 'pool_api.h', '')
    try:
        api = os.path.join(tmp, 'fs', 'pool_api.h')
        with open(api) as f:
            text = f.read()
        moved = 'int pool_stat_text(struct pool *p, uid_t caller, const char *datapath, char *buf, size_t len);\n'
        assert moved in text
        text = text.replace(moved, '').replace('/* ---- pool_setup.c ---- */\n',
                                               '/* ---- pool_setup.c ---- */\n' + moved)
        text = text.replace('/* ---- pool_reaper.c ---- */', '/* ---- pool_reaper_x.c ---- */')
        text = text.replace('/* ---- pool_tree.c ---- */', '/* ---- pool_reaper.c ---- */')
        with open(api, 'w') as f:
            f.write(text)
        findings = []
        layers.check_sections(builddir, tmp, findings)
    finally:
        shutil.rmtree(tmp)
    check('a declaration under another file than its own is reported',
          any('pool_stat_text is under pool_setup.c but defined in fs/pool_texts.c' in f
              for f in findings), '; '.join(findings))
    check('sections out of the order of LAYERS are reported',
          any('sections not in the order' in f for f in findings), '; '.join(findings))

    # Types: a section's type used below its file.
    findings = []
    layers.check_types(root, findings)
    check('the real files use section types only at or above their file', not findings,
          '; '.join(findings))
    findings = findings_in(root, 'pool_tree.c',
                           '\nstatic int bad(const struct hold_caller *c)\n{\n\treturn c->tid;\n}\n',
                           layers.check_types)
    check('a type used below the file it is declared under is reported',
          any('pool_tree.c uses struct hold_caller' in f for f in findings), '; '.join(findings))

    # The drawing: no arrow runs up; an include up within a layer is an arrow up.
    findings = []
    layers.check_drawing(builddir, root, findings)
    check('the drawing of the real tree has no upward arrow', not findings, '; '.join(findings))
    tmp = tree_with(root, 'log.c', '#include "watch.h"\n')
    try:
        findings = []
        layers.check_drawing(builddir, tmp, findings)
    finally:
        shutil.rmtree(tmp)
    check('an include of a file above in the same layer is an upward arrow',
          any('log -> watch (includes) runs up' in f for f in findings), '; '.join(findings))

    # Calls: the real objects, with pool_tree put under pool_core (which it calls) in the order.
    findings = []
    layers.check_calls(builddir, findings)
    check('the real objects call only downward', not findings, '; '.join(findings))
    saved = dict(layers.RANK)
    layers.RANK['pool_core'], layers.RANK['pool_tree'] = saved['pool_tree'], saved['pool_core']
    findings = []
    layers.check_calls(builddir, findings)
    check('a call to a file above is reported',
          any(f.startswith('fs/pool_tree.c calls') and 'fs/pool_core.c' in f for f in findings),
          '; '.join(findings))
    del layers.RANK['pool_stale']
    findings = []
    layers.check_calls(builddir, findings)
    layers.RANK.clear()
    layers.RANK.update(saved)
    check('a file missing from LAYERS is reported',
          any('fs/pool_stale.c: not in' in f for f in findings), '; '.join(findings))

    print(f'1..{len(results)}')
    for i, (name, ok, detail) in enumerate(results, 1):
        print(f'{"ok" if ok else "not ok"} {i} - {name}')
        if not ok and detail:
            print(f'# {detail}')
    sys.exit(0 if all(ok for _, ok, _ in results) else 1)


if __name__ == '__main__':
    main(sys.argv)
