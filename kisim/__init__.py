"""kisim command-line interface: wires arches, sim, kconfig and patcher."""
