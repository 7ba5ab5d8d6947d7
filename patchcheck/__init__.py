"""The SMP patch-safety checker: text patched while other CPUs execute it,
checked against each arch's protocol (docs/patchcheck.md)."""
