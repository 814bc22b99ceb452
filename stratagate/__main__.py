"""``python -m stratagate``: the command line."""

import sys

from stratagate.cli.app import main

sys.exit(main())
