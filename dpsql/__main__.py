"""``python -m dpsql`` runs the command line."""

import sys

from dpsql.cli import main

sys.exit(main())
