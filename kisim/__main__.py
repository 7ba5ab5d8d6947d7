"""``python -m kisim``: the same as the ``kisim`` command."""
import sys

from kisim.cli import main
from kisim.errors import INTERRUPTED

status = main()
if status == INTERRUPTED:
    # Under ``-m``, CPython (3.11, Modules/main.c: pymain_run_module and
    # Py_RunMain) ends the process by SIGINT, not with our status, when a
    # KeyboardInterrupt once left any string exec, caught or not: a Ctrl-C
    # that lands while a dataclass is being made at import is one. Every
    # string exec clears that flag as it starts (Python/pythonrun.c).
    exec("None")
sys.exit(status)
