# lit configuration for the IR tests: each .dmlir file holds RUN lines that
# feed it through `dmlc opt` and FileCheck the output.
import os
import lit.formats

config.name = "dmlc-ir"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".dmlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = lit_config.params.get("exec_root", config.test_source_root)
config.excludes = ["lit.cfg.py", "Inputs"]
dmlc = lit_config.params["dmlc"]
config.substitutions.append(("%dmlc", dmlc))
config.environment["PATH"] = os.pathsep.join(
    ["/usr/lib/llvm-19/bin", config.environment.get("PATH", os.environ.get("PATH", ""))])
