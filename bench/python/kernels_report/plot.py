"""kernels.png: GB/s written per conversion and gather, against the same-byte copy."""

from __future__ import annotations

from pathlib import Path

from kernels_report.data import KIB, MAIN_CONVERSIONS, MIB, OTHER_CONVERSIONS, ROW_BYTES, Data, conv_bytes


def write_plot(d: Data, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"scalar": "#9e9e9e", "vector": "#42a5f5", "native": "#1565c0", "jdk": "#ef6c00",
              "numpy": "#66bb6a", "native-thp": "#7e57c2"}
    panels = [
        ("16/32-bit conversions, 64 MiB source, off-heap", MAIN_CONVERSIONS, 64 * MIB, "offheap"),
        ("16/32-bit conversions, 64 MiB source, heap arrays", MAIN_CONVERSIONS, 64 * MIB, "heap"),
        ("16/32-bit conversions, 4 KiB source (in cache), off-heap", MAIN_CONVERSIONS, 4 * KIB, "offheap"),
        ("other conversions, 64 MiB source, off-heap", OTHER_CONVERSIONS, 64 * MIB, "offheap"),
        ("gathers, 1 GiB F16 table, 65,536 rows, off-heap", ["GATHER_U32", "GATHER_I64", "GATHER_F16_TO_F32_U32",
                                                             "GATHER_F16_TO_F32_I64"], "gather", "offheap"),
    ]
    fig, axes = plt.subplots(len(panels), 1, figsize=(15, 4.2 * len(panels)))
    for ax, (title, ops, size, memory) in zip(axes, panels):
        series = ["scalar", "vector", "native", "jdk", "numpy"] if size != "gather" else \
            ["scalar", "vector", "native", "native-thp", "numpy"]
        width = 0.8 / len(series)
        top = 0.0
        for gi, op in enumerate(ops):
            if size == "gather":
                dst = 65536 * ROW_BYTES * (2 if "F16_TO_F32" in op else 1)
            else:
                dst = conv_bytes(op, size)[1]
            for si, s in enumerate(series):
                if s == "numpy":
                    variant = "take" if size == "gather" else "astype"
                    if size == "gather" and "F16_TO_F32" in op:
                        variant = "take_astype"
                    t = d.np_ns(op, variant, size)
                elif s == "native-thp":
                    r = d.k(op, "native", "offheap-thp", size)
                    t = r["ns"] if r else None
                else:
                    r = d.k(op, s, memory, size)
                    t = r["ns"] if r else None
                if not t:
                    continue
                x = gi - 0.4 + width * (si + 0.5)
                label = {"numpy": "numpy/ml_dtypes (astype, take)", "jdk": "JDK Float.float16 loop",
                         "native-thp": "native, table in huge pages"}.get(s, s)
                ax.bar(x, dst / t, width, color=colors[s], label=label)
                top = max(top, dst / t)
            c = d.copy_ns(memory, dst)
            if c:
                top = max(top, dst / c)
                ax.hlines(dst / c, gi - 0.45, gi + 0.45, colors="black", linestyles="--", linewidth=1.5,
                          label=None)
        ax.set_xticks(range(len(ops)))
        ax.set_xticklabels([o.replace("_TO_", "→").replace("GATHER_F16→F32", "GATHER→F32") for o in ops],
                           rotation=0 if len(ops) <= 6 else 20, fontsize=9)
        ax.set_ylabel("GB/s written")
        ax.set_ylim(0, top * 1.35 if top else 1)  # room for the legend above the bars
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        seen = {}
        for h, lab in zip(handles, labels):
            if lab and not lab.startswith("_") and lab not in seen:
                seen[lab] = h
        from matplotlib.lines import Line2D

        seen["MemorySegment.copy, same bytes written"] = Line2D([0], [0], color="black", linestyle="--")
        ax.legend(seen.values(), seen.keys(), fontsize=8, loc="upper right", ncol=3)
    title = "safetensors-jvm kernels: GB/s written (higher is better); dashed = same-byte copy"
    if d.run.get("mode") == "quick":
        title += "  [SMOKE RUN, not a measurement]"
    fig.suptitle(title, fontsize=13)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(out, dpi=110)
    plt.close(fig)
