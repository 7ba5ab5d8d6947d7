"""Probes executed in the guest: kprobes (:mod:`probes.kprobes`)."""
