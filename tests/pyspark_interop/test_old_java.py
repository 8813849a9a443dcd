"""Java 17, the Java most PySpark installs start: the connector's jar on the class path must not
break Spark, and using the connector must fail with one line naming the Java found, JDK 25 and the
fix, on the driver (a session started on Java 17) and on executors (a JDK 25 driver whose
local-cluster executors run Java 17). Each case runs in its own Python process (one JVM each)."""

import glob
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import JAVA_OPTIONS, connector_jar

JAVA17_HOMES = ("/usr/lib/jvm/java-17-openjdk-*", "/usr/lib/jvm/temurin-17-jdk-*", "/usr/lib/jvm/java-17-*")
EXTENSION = "io.github.semyonsinchenko.safetensors.SafetensorsExtensions"

# Prints the first message in the Java exception's cause chain that mentions the JDK floor.
FLOOR_MESSAGE = textwrap.dedent("""
    def floor_message(e):
        t = getattr(e, "java_exception", None)
        messages = []
        while t is not None:
            messages.append(str(t.getMessage()))
            t = t.getCause()
        messages.append(str(e))
        for m in messages:
            for line in m.splitlines():
                if "needs JDK 25 or newer" in line:
                    return line[line.index("safetensors-spark"):]
        return "no floor message in: " + " | ".join(messages)[:3000]
""")


def java17() -> Path:
    for pattern in JAVA17_HOMES:
        found = sorted(glob.glob(pattern))
        if found:
            return Path(found[0])
    pytest.skip(f"no Java 17 installed ({', '.join(JAVA17_HOMES)})")


def run_script(body: str, tmp_path: Path, java_home: Path | None = None) -> list[str]:
    script = tmp_path / "case.py"
    script.write_text(FLOOR_MESSAGE + textwrap.dedent(body))
    env = dict(os.environ)
    if java_home is not None:
        env["JAVA_HOME"] = str(java_home)
        env["PATH"] = f"{java_home / 'bin'}{os.pathsep}{env['PATH']}"
    proc = subprocess.run([sys.executable, str(script), str(connector_jar()), JAVA_OPTIONS, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc.stdout.splitlines()


def test_a_java_17_driver_with_the_jar_reads_parquet_and_says_what_safetensors_needs(tmp_path):
    lines = run_script("""
        import sys
        from pyspark.sql import SparkSession
        jar, flags, work = sys.argv[1:4]
        spark = (SparkSession.builder.master("local[1]").config("spark.jars", jar)
                 .config("spark.ui.enabled", "false").getOrCreate())
        print("java", spark.sparkContext._jvm.java.lang.System.getProperty("java.specification.version"))
        spark.range(3).write.parquet(work + "/p")
        print("parquet", spark.read.parquet(work + "/p").count())
        try:
            spark.read.format("safetensors").load(work + "/p").collect()
            print("read: no error")
        except Exception as e:
            print("read:", floor_message(e))
        try:
            spark.range(2).selectExpr("array(1.0f) v").write.format("safetensors").option("batch_size", "2").save(work + "/s")
            print("write: no error")
        except Exception as e:
            print("write:", floor_message(e))
        spark.stop()
    """, tmp_path, java_home=java17())
    assert lines[0] == "java 17" and lines[1] == "parquet 3", lines
    for line in lines[2:4]:
        kind, message = line.split(": ", 1)
        assert message.startswith("safetensors-spark (on the Spark driver) needs JDK 25 or newer, but runs on Java 17"), line
        assert "with_safetensors(builder)" in message and "JAVA_HOME" in message, line


def test_a_java_17_driver_with_the_extension_fails_to_start_with_one_line(tmp_path):
    lines = run_script(f"""
        import sys
        from pyspark.sql import SparkSession
        jar, flags, work = sys.argv[1:4]
        try:
            (SparkSession.builder.master("local[1]").config("spark.jars", jar).config("spark.ui.enabled", "false")
             .config("spark.sql.extensions", "{EXTENSION}").getOrCreate().range(1).collect())
            print("start: no error")
        except Exception as e:
            print("start:", floor_message(e))
    """, tmp_path, java_home=java17())
    assert lines[-1].startswith("start: safetensors-spark (on the Spark driver) needs JDK 25 or newer, but runs on "
                                "Java 17"), lines


def test_java_17_executors_fail_their_first_task_with_one_line(tmp_path):
    import numpy as np
    from safetensors.numpy import save_file

    save_file({"t": np.arange(4, dtype=np.float32)}, str(tmp_path / "t.safetensors"))
    lines = run_script(f"""
        import os, sys
        import pyspark
        from pyspark.sql import SparkSession
        from safetensors_spark import with_safetensors
        jar, flags, work = sys.argv[1:4]
        os.environ.setdefault("SPARK_HOME", os.path.dirname(pyspark.__file__))
        builder = (SparkSession.builder.master("local-cluster[1,1,1024]").config("spark.ui.enabled", "false")
                   .config("spark.task.maxFailures", "1"))
        spark = with_safetensors(builder, executor_java_home="{java17()}").getOrCreate()
        print("driver", spark.sparkContext._jvm.java.lang.System.getProperty("java.specification.version"))
        for kind, action in (
                ("read", lambda: spark.read.format("safetensors").option("inferSchema", "true")
                 .load(work + "/t.safetensors").collect()),
                ("write", lambda: spark.range(2).selectExpr("array(1.0f) v").write.format("safetensors")
                 .option("batch_size", "2").save(work + "/s"))):
            try:
                action()
                print(kind + ": no error")
            except Exception as e:
                print(kind + ":", floor_message(e))
        spark.stop()
    """, tmp_path)
    assert lines[0] == "driver 25", lines
    for line in lines[1:3]:
        kind, message = line.split(": ", 1)
        assert message.startswith("safetensors-spark (on an executor) needs JDK 25 or newer, but runs on Java 17"), line
        assert "spark.executorEnv.JAVA_HOME" in message, line
