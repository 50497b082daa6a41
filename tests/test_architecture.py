"""The layers hold: every module imports only from the layers below it (docs/architecture.md).

The contracts are in ``pyproject.toml`` (``[tool.importlinter]``); import-linter reads every
import, function-level ones included (type-checking imports excepted).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_graph_keeps_the_layers_contracts():
    command = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(command)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
