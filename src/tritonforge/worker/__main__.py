"""`python -m tritonforge.worker`: run a worker process (see `tritonforge.worker.main`)."""

from tritonforge.worker.main import main

main()
