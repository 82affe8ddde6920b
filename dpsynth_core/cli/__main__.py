"""``python -m dpsynth_core.cli``: the ``dpsynth`` command."""

import sys

from . import main

if __name__ == "__main__":  # pragma: no cover - imported (not run) by tools that walk the package
    sys.exit(main())
