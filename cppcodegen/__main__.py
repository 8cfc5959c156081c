"""``python -m cppcodegen cache info|list|clear``; see cppcodegen/cli.py."""
import sys

from .cli import main

sys.exit(main())
