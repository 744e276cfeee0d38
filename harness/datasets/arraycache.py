"""A folder of .npy arrays plus a JSON metadata file, written atomically, read without pickle."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

META_NAME = "meta.json"


def save_arrays(folder: Path, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> bool:
    """Write ``folder`` in one rename so readers never see half of it; False if it cannot be written."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    except OSError:
        return False
    try:
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
        (tmp / META_NAME).write_text(json.dumps({**meta, "arrays": sorted(arrays)}))
        os.replace(tmp, folder)
        return True
    except OSError:
        return folder.is_dir()  # another process may have finished the same folder first
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load_arrays(folder: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
    """The arrays and metadata saved in ``folder``, or None when it is absent or incomplete."""
    try:
        meta = json.loads((folder / META_NAME).read_text())
        arrays = {name: np.load(folder / f"{name}.npy", allow_pickle=False)
                  for name in meta["arrays"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return arrays, meta
