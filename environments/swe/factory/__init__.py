"""The SWE task factory: bugs injected into real packages and kept only when execution says so.

    packages/<registry>.yaml   pinned package versions (PyPI sdists, npm tarballs, Debian sources)
    packages.py                those manifests, read and checked
    fetch.py                   `envhub swe sources fetch`: download once, check sha256, store by content
    shared_builds.py           a package's dependency build made once at install, every task's build starts from it
    mutation.py                a candidate bug (`Mutation`) and how edits apply
    mutate_py.py               Python's operators over `ast`; mutate_ts.py: the other languages (tree-sitter)
    synth.py                   `envhub swe synth`: clean suite, candidates, runs, task folders, the gate
    prompts.py                 issue text from what the failing tests observe (no model)
    pinned.py                  every in-process forger's catch by the twins is certain, not drawn by luck

A factory task ships no repository: `task.yaml` pins the source (`environments/swe/source.py`) and
its base is that source with the gold patch reversed; the tests are the package's own, unchanged.
Every task it writes passes `envhub validate` (its gate) before it is kept, like a hand-written one.
"""
