"""The patcher: text patching under one lock, arch protocols, and the mechanisms
built on them (imv, markers, jump labels, tracepoints, kprobes, ftrace)."""
