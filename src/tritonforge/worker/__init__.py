"""The child side of the process boundary, and the parent's one way to talk to it.

A worker process (`python -m tritonforge.worker`, `main.py` and the request handlers
beside it) is the only place user code is imported and run. `client.WorkerClient` owns
such a process on the parent side; it is the only place that sends requests and reads
replies. Nothing here imports the stages after it (evaluate, search...).
"""
