"""Puts the _kcc extension module, built by kcc's CMake, inside the package.

It is looked for, in order, in $KCC_PYTHON_MODULE_DIR, in
$KCC_BUILD_DIR/python, in ../build/python (the repository's build folder),
and inside kcc/ itself (the Debian package installs it there, next to these
sources under /usr/share/kcc/python).
"""

import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def find_module():
    folders = []
    if os.environ.get("KCC_PYTHON_MODULE_DIR"):
        folders.append(os.environ["KCC_PYTHON_MODULE_DIR"])
    if os.environ.get("KCC_BUILD_DIR"):
        folders.append(os.path.join(os.environ["KCC_BUILD_DIR"], "python"))
    folders += [os.path.join(HERE, "..", "build", "python"),
                os.path.join(HERE, "kcc")]
    for folder in folders:
        found = sorted(glob.glob(os.path.join(folder, "_kcc*.so")))
        if found:
            return found[0]
    raise SystemExit(
        "kcc: no _kcc module found (looked in " + ", ".join(folders) + "). "
        "Build it first (ninja -C build _kcc) or set KCC_BUILD_DIR."
    )


class BuildWithModule(build_py):
    def run(self):
        super().run()
        module = find_module()
        target = os.path.join(self.build_lib, "kcc", os.path.basename(module))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(module, target)


setup(cmdclass={"build_py": BuildWithModule})
