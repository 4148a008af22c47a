import sys

from tests.adversarial.suite import main

sys.exit(main())
