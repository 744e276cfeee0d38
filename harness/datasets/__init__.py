"""Real data sets for the experiments: local copies, checked downloads and caches.

Each data set has a loader, `<name>.py`, which decodes its fetched files into arrays and is part
of the code identity of the runs that read it, and a sources module, `<name>_source.py`: where its
files are, their fingerprint, fetching (`downloads`, `unpacking`, `locations`, `netguard`) and
loading them through the loader. `registry` maps names to both without importing them. This file
imports nothing, since a package's `__init__` runs (and is in the import closure) wherever one of
its modules is imported.
"""
