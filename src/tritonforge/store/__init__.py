"""The run store: a run's candidates, evaluations, profiles and log, durable for --resume."""

from tritonforge.store.sqlite import (
    DEFAULT_FILENAME,
    SCHEMA_VERSION,
    RunInfo,
    RunState,
    RunStore,
    StoreError,
)

__all__ = ["DEFAULT_FILENAME", "SCHEMA_VERSION", "RunInfo", "RunState",
           "RunStore", "StoreError"]
