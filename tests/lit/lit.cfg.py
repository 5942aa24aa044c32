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
# A 4 GiB cap on the address space (`ulimit -v 4194304`) shows that kcc
# bounds what it allocates. AddressSanitizer reserves terabytes of shadow
# address space at start-up, so a sanitized build runs these tests uncapped
# (%limit-as) or not at all (REQUIRES: address-space-limit).
if "-fsanitize=address" in config.kcc_cxx_flags:
    config.substitutions.append(("%limit-as", ""))
else:
    config.available_features.add("address-space-limit")
    config.substitutions.append(("%limit-as", "prlimit --as=4294967296"))
