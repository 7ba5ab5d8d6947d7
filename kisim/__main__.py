import sys

from kisim.cli import main

sys.exit(main())
