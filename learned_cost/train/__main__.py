"""``python -m learned_cost.train train|evaluate|retrain ...``"""

import sys

from .cli import main

# guarded: worker processes re-import this module under another name
if __name__ == "__main__":
    sys.exit(main())
