"""Process entry points for the ledger tests (importable, so forkserver/spawn can run them)."""
