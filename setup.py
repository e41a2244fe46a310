"""`pip install --no-build-isolation .` builds the Python module `ridge` with the project's own CMake (Debian 12:
pybind11-dev, python3-dev and the packages of scripts/install-deps.sh; no network). The CMake build goes to
build-python/ (RIDGE_PIP_BUILD_DIR overrides; CMAKE_ARGS adds options). The device database ships inside the
package. See docs/python.md."""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    """Builds the target ridge_python (extension _ridge and _help.py, whose --help texts come from the ridge binary
    built alongside) and copies them, with data/, into the package; every function is a library call, so the package
    carries no binary."""

    def build_extension(self, ext):
        build = os.environ.get("RIDGE_PIP_BUILD_DIR", os.path.join(ROOT, "build-python"))
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                               "-DRIDGE_BUILD_TESTS=OFF", "-DRIDGE_BUILD_BENCH=OFF", "-DRIDGE_BUILD_PYTHON=ON",
                               "-DPython_EXECUTABLE=" + sys.executable] + os.environ.get("CMAKE_ARGS", "").split())
        subprocess.check_call(["cmake", "--build", build, "--target", "ridge_python", "-j", str(os.cpu_count() or 2)])
        built = os.path.join(build, "python", "ridge")
        dest = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        os.makedirs(dest, exist_ok=True)
        for name in os.listdir(built):
            if name.startswith("_ridge.") or name == "_help.py":
                shutil.copy2(os.path.join(built, name), os.path.join(dest, name))
        shutil.copytree(os.path.join(ROOT, "data"), os.path.join(dest, "data"), dirs_exist_ok=True)


setup(
    package_dir={"": "python"},
    packages=["ridge"],
    package_data={"ridge": ["__init__.pyi", "py.typed"]},
    ext_modules=[Extension("ridge._ridge", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
