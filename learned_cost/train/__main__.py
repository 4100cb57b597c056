"""``python -m learned_cost.train train|evaluate|retrain ...``"""

import sys

from .cli import main

sys.exit(main())
