"""``python -m dpsql`` runs the command line."""

import sys

from dpsql.frontends.cli import main

sys.exit(main())
