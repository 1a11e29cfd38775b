import sys

from apxtui.cli import main

sys.exit(main())
