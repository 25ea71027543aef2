# SPDX-License-Identifier: MIT
"""``python -m tenure run ...`` (see tenure.cli)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
