"""Finds the _kcc extension module.

In order: the folder named by $KCC_PYTHON_MODULE_DIR, the `python/` folder
of the build tree named by $KCC_BUILD_DIR (a developer's fresh build wins
over an installed copy), then the copy `pip install` put inside this
package (taken from the build tree, or from the Debian package's files).
"""

import glob
import importlib.util
import os
import sys


def _candidates():
    module_dir = os.environ.get("KCC_PYTHON_MODULE_DIR")
    if module_dir:
        yield module_dir
    build_dir = os.environ.get("KCC_BUILD_DIR")
    if build_dir:
        yield os.path.join(build_dir, "python")


def _load_from(folder):
    for path in sorted(glob.glob(os.path.join(folder, "_kcc*.so"))):
        spec = importlib.util.spec_from_file_location("kcc._kcc", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["kcc._kcc"] = module
        return module
    return None


def load():
    for folder in _candidates():
        module = _load_from(folder)
        if module is not None:
            return module
    try:
        from kcc import _kcc  # the copy installed with the package
    except ImportError as e:
        raise ImportError(
            "kcc: the _kcc extension module was not found. Build kcc "
            "(ninja -C build _kcc) and `pip install ./python`, or set "
            "KCC_BUILD_DIR to the build folder."
        ) from e
    return _kcc
