"""``python -m herramientas.demo``: what ``make demo`` runs."""

import sys

from herramientas.demo.principal import main

sys.exit(main())
