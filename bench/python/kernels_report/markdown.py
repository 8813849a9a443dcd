"""kernels.md: the machine, the targets and their verdicts, how to read the tables, then the tables."""

from __future__ import annotations

from pathlib import Path

from kernels_report.data import KIB, MAIN_CONVERSIONS, MIB, OTHER_CONVERSIONS, PATHS, ROW_BYTES, Data, conv_bytes
from kernels_report.formatting import fmt_gbs, fmt_ratio, fmt_size, fmt_time
from kernels_report.stats import ratio, rel_err
from kernels_report.verdicts import target_forks, targets


def machine_section(d: Data) -> list[str]:
    m, j, pm = d.machine, d.java, d.peer.get("meta", {})
    simd = pm.get("numpy_simd", {})
    lines = [
        "## Machine",
        "",
        f"- CPU: {m.get('cpu_model', '?')} (family {m.get('cpu_family', '?')}, model "
        f"{m.get('cpu_model_number', '?')}){', ' + m['hypervisor'] + ' guest' if m.get('hypervisor') else ''};"
        f" {m.get('logical_cpus', '?')} logical CPUs; L2 {m.get('l2', '?')}, L3 {m.get('l3', '?')}",
        f"- SIMD flags: {', '.join(m.get('simd_flags', [])) or '?'}",
        f"- Memory: {m.get('mem_total_gib', '?')} GiB; Linux {m.get('kernel', '?')}; transparent huge pages:"
        f" `{m.get('transparent_hugepages', '?')}`",
        f"- Load average at start: {' '.join(m.get('loadavg', [])) or '?'}; at end:"
        f" {' '.join(d.run.get('loadavg_end', [])) or '?'} (a quiet machine shows < 0.3 before the run)",
        f"- JDK: {j.get('java_vm', '?')} ({j.get('java_vendor', '?')}), Java {j.get('java_version', '?')}",
        f"- Native kernels: libsafetensors_native {j.get('native_version', '?') or 'not loaded'}, ISA level"
        f" chosen: **{j.get('native_isa', '?') or 'none'}**"
        + (f" (forced by SAFETENSORS_NATIVE_ISA={j['native_isa_env']})" if j.get("native_isa_env") else
           " (cpuid dispatch)"),
        f"- Vector API preferred width: {j.get('vector_bits', '?')} bits",
        f"- Python {pm.get('python', '?')}, numpy {pm.get('numpy', '?')}, ml_dtypes {pm.get('ml_dtypes', '?')};"
        f" numpy SIMD baseline {', '.join(simd.get('baseline', [])) or '?'}, dispatch up to"
        f" {(simd.get('dispatch_available') or ['?'])[-1]}",
        f"- Run: {d.run.get('mode', '?')} mode, started {d.run.get('started', '?')}, ended"
        f" {d.run.get('ended', '?')}; JMH `{d.run.get('jmh_args', '?')}`",
        "",
    ]
    return lines


def conventions() -> list[str]:
    return [
        "## How to read the tables",
        "",
        "- **size** is the number of SOURCE bytes of a conversion (the tensor as stored). A conversion writes"
        " `size / source width × target width` bytes; a gather writes 65,536 rows × 512 bytes = 32 MiB"
        " (64 MiB as F32) and reads as many table bytes plus the indices.",
        "- **GB/s** = bytes WRITTEN per second (10⁹ bytes). A copy reads and writes the same bytes.",
        "- **× copy** = time of `MemorySegment.copy` of as many bytes as the kernel WRITES, in the same JMH"
        " run and the same memory kind, divided by the kernel's time (> 1: faster than that copy)."
        " **× copy(rd)** uses the bytes the kernel READS instead. For BF16→F32 the first is the"
        " \"produce the F32 array\" yardstick (copy 128 MiB), the second the \"touch the BF16 tensor\" one"
        " (copy 64 MiB).",
        "- **× astype** = numpy/ml_dtypes `astype` time ÷ kernel time (> 1: the kernel is faster). `astype`"
        " allocates its result; **× into** compares with `np.copyto(dst, src, casting=\"unsafe\")` into a"
        " preallocated array. Gathers compare with `numpy.take(table, idx, axis=0)` (allocating) and, for"
        " gather-and-convert, `numpy.take(...).astype(float32)`. numpy numbers are best-of-N; JMH numbers"
        " are means, so the ratios lean against the kernels.",
        "- **× jdk** = time of the plain `Float.float16ToFloat` / `Float.floatToFloat16` loop ÷ kernel time.",
        "- **alloc** = bytes allocated on the Java heap per call (JMH `-prof gc`, gc.alloc.rate.norm); a"
        " few hundred bytes is JMH's own noise, more means the path allocates per call.",
        "- heap = Java arrays of the element type (`MemorySegment.ofArray`); offheap = `Arena` memory.",
        "",
    ]


def conversion_table(d: Data, ops: list[str], sizes: list[int], memories: list[str]) -> list[str]:
    out = ["| conversion | size | memory | path | time/op | ± | GB/s | × copy | × copy(rd) | × astype |"
           " × into | × jdk | alloc B/op |",
           "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for op in ops:
        for size in sizes:
            src, dst = conv_bytes(op, size)
            for memory in memories:
                jdk = d.k(op, "jdk", memory, size)
                for path in PATHS:
                    r = d.k(op, path, memory, size)
                    if r is None:
                        continue
                    t = r["ns"]
                    alloc = "—" if r["alloc_b_op"] is None else f"{r['alloc_b_op']:.0f}"
                    err = fmt_time(r["err_ns"]) if r["err_ns"] else "—"
                    vs_jdk = ratio(jdk["ns"], t) if jdk and path != "jdk" else None
                    out.append(
                        f"| {op} | {fmt_size(size)} | {memory} | {path} | {fmt_time(t)} | {err} |"
                        f" {fmt_gbs(dst, t)} | {fmt_ratio(ratio(d.copy_ns(memory, dst), t))} |"
                        f" {fmt_ratio(ratio(d.copy_ns(memory, src), t))} |"
                        f" {fmt_ratio(ratio(d.np_ns(op, 'astype', size), t))} |"
                        f" {fmt_ratio(ratio(d.np_ns(op, 'into', size), t))} | {fmt_ratio(vs_jdk)} | {alloc} |")
                for variant in ("astype", "into"):
                    t = d.np_ns(op, variant, size)
                    if t and memory == memories[-1]:
                        out.append(f"| {op} | {fmt_size(size)} | numpy | {variant} | {fmt_time(t)} | — |"
                                   f" {fmt_gbs(dst, t)} | {fmt_ratio(ratio(d.np_ns('COPY', 'copyto', dst), t))}"
                                   f" (np) | {fmt_ratio(ratio(d.np_ns('COPY', 'copyto', src), t))} (np) | — | — |"
                                   f" — | — |")
    return out


def gather_table(d: Data) -> list[str]:
    out = ["| gather | memory | path | time/op | ± | GB/s | × copy | × numpy | alloc B/op |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    ops = [f"{base}_{idx}" for base in ("GATHER", "GATHER_F16_TO_F32") for idx in ("U32", "I64")]
    for op in ops:
        np_variant = "take_astype" if op.startswith("GATHER_F16_TO_F32") else "take"
        for memory in ("heap", "offheap", "offheap-thp"):
            for path in ("scalar", "vector", "native", "native-2t"):
                r = d.k(op, path, memory, "gather")
                if r is None:
                    continue
                t = r["ns"]
                alloc = "—" if r["alloc_b_op"] is None else f"{r['alloc_b_op']:.0f}"
                copy_memory = "offheap" if memory == "offheap-thp" else memory
                e = rel_err(r)
                out.append(f"| {op} | {memory} | {path} | {fmt_time(t)} |"
                           f" {fmt_time(r['err_ns']) + f' ({100 * e:.0f}%)' if e is not None else '—'} |"
                           f" {fmt_gbs(r['dst_bytes'], t)} |"
                           f" {fmt_ratio(ratio(d.copy_ns(copy_memory, r['dst_bytes']), t))} |"
                           f" {fmt_ratio(ratio(d.np_ns(op, np_variant, 'gather'), t))} | {alloc} |")
        dst = 65536 * ROW_BYTES * (2 if op.startswith("GATHER_F16_TO_F32") else 1)
        for variant in ((np_variant,) if np_variant == "take_astype" else ("take", "take_out")):
            t = d.np_ns(op, variant, "gather")
            if t:
                out.append(f"| {op} | numpy | {variant} | {fmt_time(t)} | — | {fmt_gbs(dst, t)} |"
                           f" {fmt_ratio(ratio(d.np_ns('COPY', 'copyto', dst), t))} (np) | — | — |")
    return out


def guard_table(d: Data) -> list[str]:
    out = ["| conversion | size | guard on | ± | guard off | ± | cost (paired) | ± | iterations (forks) |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (op, size), g in sorted(d.guard.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        out.append(f"| {op} | {fmt_size(size)} | {fmt_time(g['on'])} | {fmt_time(g['on_err'])} |"
                   f" {fmt_time(g['off'])} | {fmt_time(g['off_err'])} | {100 * g['cost']:+.2f}% |"
                   f" {100 * g['cost_err']:.2f}% | {g['iterations']} ({g['forks']}) |")
    return out


def copy_table(d: Data) -> list[str]:
    out = ["| bytes | heap GB/s | offheap GB/s | numpy copyto GB/s |", "|---|---:|---:|---:|"]
    for b in sorted({s for (_, s) in d.copy}):
        out.append(f"| {fmt_size(b)} | {fmt_gbs(b, d.copy_ns('heap', b))} | {fmt_gbs(b, d.copy_ns('offheap', b))} |"
                   f" {fmt_gbs(b, d.np_ns('COPY', 'copyto', b))} |")
    return out


def write_markdown(d: Data, out: Path, png_name: str) -> None:
    quick = d.run.get("mode") == "quick"
    lines = ["# Kernel benchmarks: conversions and gathers", ""]
    if quick:
        lines += ["> **SMOKE RUN (`--quick`): a few short iterations on whatever else the machine was doing."
                  " These numbers only show that the harness works; they are not measurements.**", ""]
    lines += [f"Regenerate with `bench/run-kernels.sh` (see `bench/README.md`). Plot: [{png_name}]({png_name}).",
              ""]
    lines += machine_section(d)
    lines += ["## Targets", "", "| target | check | measured | needed | verdict |", "|---|---|---:|---:|---|"]
    for name, checks in targets(d):
        if name.startswith("(info"):
            for c in checks:
                verdict = {True: "would meet", False: "would not meet", None: "no data"}[c.met()]
                lines.append(f"| {name} | {c.what} | {c.measured()} | {c.needed()} | {verdict} |")
                name = ""
            continue
        results = [c.met() for c in checks if c.kind != "info"]
        overall = "NO DATA" if None in results else "MET" if all(results) else "NOT MET"
        for i, c in enumerate(checks):
            verdict = {True: "MET", False: "NOT MET", None: "no data"}[c.met()]
            if c.kind == "info":
                verdict = "(info) " + {True: "would meet", False: "would not meet", None: "no data"}[
                    c.value >= c.need if c.value is not None else None]
            lines.append(f"| {name if i == 0 else ''} | {c.what} | {c.measured()} | {c.needed()} | {verdict} |")
        lines.append(f"| | **overall** | | | **{overall}** |")
    lines += ["", "The targets are read at 64 MiB (memory-bound), on off-heap memory (an mmap'd file is"
              " off-heap); the F16 loop target is checked on both memory kinds. The tables below have the"
              " in-cache and heap numbers too. numpy puts every array of 4 MiB or more in transparent huge"
              f" pages (here: {d.peer.get('meta', {}).get('numpy_madvise_hugepage', '?')}); Java's Arena and"
              " heap memory are in 4 KiB pages, which matters most for the random rows of a gather: the"
              " gather target is read on the library's own huge-page memory (HugePages.allocate, what a"
              " loader uses for such a table) with the parallel gather on 2 threads (numpy.take has one;"
              " the single-threaded ratio is the line below it), and the info rows show the same gather on 4 KiB pages. A"
              " gather's JMH error is the half-width of its 99.9% interval over all its forks' iterations"
              f"{target_forks(d)}; over 10% of the mean, the ratio cannot be told from its neighbours."
              + (f" The target gathers ran as {d.take_rounds} round{'s' if d.take_rounds != 1 else ''} of one fork"
                 " each (their info rows in the first rounds only), every round after a"
                 " numpy.take run, so both sides of the ratio come from the same minutes (this machine's"
                 " speed drifts between a report's first and last benchmark). The gather target compares like"
                 " with like: numpy's mean over all its samples of those runs against JMH's mean over all the"
                 " rounds' iterations (both a mean time per call); numpy's best sample against our mean, the"
                 " form of earlier reports and of the tables below, is shown beside it." if d.take_rounds else "")
              + " The narrowing"
              " target compares with a copy of the bytes READ (64 MiB): a narrowing reads 64 MiB and writes"
              " 32 MiB, the copy reads and writes 64 MiB; the × copy column of the tables (the 32 MiB it"
              " writes) is the stricter yardstick. The guard target passes when the guard's paired cost (see"
              " its section) is no larger than the cell's noise, the larger JMH error of its two sides, that"
              " noise is under 10% of the mean (with more the run cannot tell), and the cost's own interval"
              " is no wider than the noise (else the pairing cannot tell).", ""]
    lines += conventions()
    lines += ["## Same-byte copy baselines (`MemorySegment.copy`)", ""] + copy_table(d) + [""]
    lines += ["## 16/32-bit float conversions", ""]
    lines += conversion_table(d, MAIN_CONVERSIONS, [64 * MIB, 4 * KIB], ["offheap", "heap"]) + [""]
    lines += ["## Other conversions (64 MiB, off-heap)", ""]
    lines += conversion_table(d, OTHER_CONVERSIONS, [64 * MIB], ["offheap"]) + [""]
    lines += ["## Gathers (1 GiB F16 table [V, 256], 65,536 random row indices per call)", ""]
    lines += gather_table(d) + [""]
    if d.guard:
        lines += ["## Fault guard cost (native, off-heap)", "",
                  "The native library's SIGBUS/SIGSEGV guard costs each call a few stores (with GCC on x86-64,"
                  " `__builtin_setjmp`: stack pointer, frame pointer, resume address; elsewhere one `sigsetjmp`"
                  " without the signal mask, no syscall) and the set and clear of a thread-local pointer."
                  " `FaultGuardBench` times blocks of native conversion calls (about 1 MiB of source a block: 256"
                  " calls of 4 KiB, one of 64 MiB) with the guard switched on and off in turn"
                  " (`Kernels.nativeFaultGuard`; off, a call skips the setjmp as with"
                  " `SAFETENSORS_NATIVE_FAULT_GUARD=0`), in the order on, off, off, on, repeated, and adds up"
                  " each side's time per JMH iteration. Both sides share the JVM, the compiled code and the"
                  " buffers, and blocks tens of microseconds apart see the same machine: this machine's speed"
                  " moves by tens of percent between 100 ms intervals, which swamped a pairing by whole"
                  " iterations. **cost** is the mean over all iterations of on ÷ off − 1, with its 99.9% interval"
                  " (±); the side columns are each side's mean time per call and JMH-style error over the"
                  " iterations.", ""]
        lines += guard_table(d) + [""]
    out.write_text("\n".join(lines) + "\n")
