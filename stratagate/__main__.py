"""``python -m stratagate``: the command line."""

import sys

from stratagate.cli import main

sys.exit(main())
