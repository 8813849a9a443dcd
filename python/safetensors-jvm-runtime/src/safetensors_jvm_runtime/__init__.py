"""What the Python packages of safetensors-jvm need to run their JVM parts: a JDK found on the
machine (:mod:`safetensors_jvm_runtime.jdk`) and the jars they carry
(:mod:`safetensors_jvm_runtime.jars`)."""

from .jars import JarNotFoundError, find_jar
from .jdk import MIN_JAVA, VECTOR_MODULE, Jdk, JdkNotFoundError, find_jdk, inspect_home, launcher_java

__version__ = "0.1.0"

__all__ = [
    "MIN_JAVA",
    "VECTOR_MODULE",
    "JarNotFoundError",
    "Jdk",
    "JdkNotFoundError",
    "find_jar",
    "find_jdk",
    "inspect_home",
    "launcher_java",
    "__version__",
]
