"""One module per ``kisim`` subcommand, each exposing ``register(subparsers)``."""
