# lit configuration for kcc's FileCheck tests.
import os
import lit.formats

config.name = "kcc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kcc_tools_dir, "..", "tests", "lit")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]
config.environment["PATH"] = os.pathsep.join(
    [config.kcc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
# No compile cache on disk: lit tests neither write to ~/.cache nor depend on
# each other (a test of the cache names its own folder).
config.environment["KCC_CACHE_DIR"] = "off"
config.substitutions.append(("%kcc_src", config.kcc_source_dir))
