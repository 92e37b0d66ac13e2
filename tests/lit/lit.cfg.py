# lit configuration for tk's text tests: `.tir` files run through tk-opt
# (later also `.tk` through tkc) and checked with FileCheck. Run through the
# generated site config in the build tree:
#   ninja -C build && /usr/lib/llvm-19/build/utils/lit/lit.py -sv build/tests/lit
# (or `ctest -R '^lit$'`). ctest does not build: run `ninja` first.
import os

import lit.formats

config.name = "tk"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tir", ".tk"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tk_binary_dir, "tests", "lit")

# The tools each test may name. tk-opt must exist; tkc joins once built.
tools = {
    "tk-opt": os.path.join(config.tk_binary_dir, "tools", "tk-opt", "tk-opt"),
    "tkc": os.path.join(config.tk_binary_dir, "tools", "tkc", "tkc"),
    "FileCheck": os.path.join(config.llvm_tools_dir, "FileCheck"),
    "not": os.path.join(config.llvm_tools_dir, "not"),
    "split-file": os.path.join(config.llvm_tools_dir, "split-file"),
    "count": os.path.join(config.llvm_tools_dir, "count"),
}
for required in ("tk-opt", "FileCheck", "not"):
    if not os.path.exists(tools[required]):
        lit_config.fatal(
            "%s not found at %s: build first (`ninja -C %s`)" % (required, tools[required], config.tk_binary_dir)
        )

# A partial build (only tk-opt, as an IR engineer builds) skips the tkc
# tests with a warning instead of failing them with "command not found".
if not os.path.exists(tools["tkc"]):
    lit_config.warning("tkc not built at %s: skipping tests/lit/tkc" % tools["tkc"])
    config.excludes.append("tkc")

# A tool name is replaced only as a whole command word (not inside
# `--pass=...`, paths or file names), as LLVM's ToolSubst does.
for name, path in tools.items():
    if os.path.exists(path):
        config.substitutions.append((r"(?<![-.^/\\<\w])%s(?![-.\w])" % name.replace("-", r"\-"), path))
        config.available_features.add(name)

config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(p) for p in tools.values()] + [config.environment.get("PATH", os.environ.get("PATH", ""))]
)

# tkc's compile and tuning caches go to the build tree, never ~/.cache/tk.
config.environment["TK_CACHE_DIR"] = os.path.join(config.tk_binary_dir, "test-cache")

# ptxas from the CUDA toolkit, for tests that assemble cubins.
for root in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"):
    if root and os.path.exists(os.path.join(root, "bin", "ptxas")):
        config.available_features.add("ptxas")
        break
