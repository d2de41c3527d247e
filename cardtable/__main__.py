import sys

from cardtable.cli import main

sys.exit(main())
