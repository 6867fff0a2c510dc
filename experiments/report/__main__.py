"""``python -m experiments.report``: the report's command line (``main``), its exit code."""

import sys

from experiments.report import main

sys.exit(main())
