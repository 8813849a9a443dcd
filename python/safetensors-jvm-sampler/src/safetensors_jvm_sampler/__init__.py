"""headwater's Python ``Sampler`` API over the safetensors-jvm relational sampler.

The JVM runs inside this process (JPype); batches are numpy arrays over the JVM's batch memory,
without copies. ``import safetensors_jvm_sampler as headwater`` lets a loop written for headwater
run unchanged.
"""

from ._errors import SamplerConfigError, SamplerError, SamplerShutdown
from ._jvm import find_java_home, find_sampler_jar, jvm_started, start_jvm
from ._sampler import Sampler, generate_synthetic_database

__all__ = [
    "Sampler",
    "SamplerConfigError",
    "SamplerError",
    "SamplerShutdown",
    "find_java_home",
    "find_sampler_jar",
    "generate_synthetic_database",
    "jvm_started",
    "start_jvm",
]
