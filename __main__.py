"""`python -m sleuth` (installed) — the same entry point as `sleuth` and `python main.py`."""

import sys

from .main import main

sys.exit(main())
