"""Probes on top of the patcher: kprobes (:mod:`probes.kprobes`), the function tracer
(:mod:`probes.function_tracer`) and line-number probes through DWARF (:mod:`probes.lineprobe`)."""
