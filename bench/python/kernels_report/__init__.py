"""bench/results/kernels.md and kernels.png from a run of bench/run-kernels.sh (the CLI is report.py)."""
