"""Stub of the DeepSpeed names that deepspeed/profiling/flops_profiler/profiler.py imports."""
