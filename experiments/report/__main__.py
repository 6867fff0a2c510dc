"""``python -m lincls.experiments.report``: the report's command line (``main``), its exit code."""

import sys

from lincls.experiments.report import main

sys.exit(main())
