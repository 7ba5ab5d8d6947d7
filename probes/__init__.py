"""Probes placed from outside the kernel's own instrumentation: line-number probes."""
