"""docs/cli.md, docs/quickstart.md and the README's CLI section are executed and complete.

Every ```bash block runs with ``bash -euo pipefail`` in one folder per page, in order,
holding the checkout's ``datasets/`` and the page's first ```toml block as ``catalog.toml``;
``dpsql`` (and ``.venv/bin/dpsql``) run this checkout's command line. It must exit 0 with
nothing on stderr but notes (``note: ...``, what a CSV or JSON answer may have cut).
```python blocks run in the same folder; ```shell blocks (installation, which CI performs)
and ```text blocks (sample output) are not run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dpsql.frontends import cli
from dpsql.frontends.shell import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
CLI_DOC = ROOT / "docs" / "cli.md"


def blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(), flags=re.S)


def workspace(tmp_path: Path, doc: Path) -> dict[str, str]:
    """A folder like a checkout for ``doc``'s examples; the environment to run them in."""
    (tmp_path / "datasets").symlink_to(ROOT / "datasets")
    toml = blocks(doc, "toml")
    if toml:
        (tmp_path / "catalog.toml").write_text(toml[0])
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    shim = bin_dir / "dpsql"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m dpsql "$@"\n')
    shim.chmod(0o755)
    path = os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}


def run_bash_blocks(doc: Path, tmp_path: Path, env: dict[str, str], skip: int = 0) -> None:
    for number, script in enumerate(blocks(doc, "bash")[skip:], start=skip + 1):
        out = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True,
                             text=True, cwd=tmp_path, env=env, timeout=300)
        warned = [line for line in out.stderr.splitlines() if not line.startswith("note: ")]
        assert out.returncode == 0 and not warned, \
            f"{doc.name} bash block {number} exited {out.returncode}:\n{script}\n{out.stderr}"
        assert out.stdout.strip(), f"{doc.name} bash block {number} printed nothing"


def test_cli_doc_examples_run(tmp_path):
    run_bash_blocks(CLI_DOC, tmp_path, workspace(tmp_path, CLI_DOC))
    assert (tmp_path / "ledger.db").exists()


def test_quickstart_examples_run(tmp_path, monkeypatch):
    doc = ROOT / "docs" / "quickstart.md"
    env = workspace(tmp_path, doc)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for code in blocks(doc, "python"):
        exec(compile(code, "docs/quickstart.md", "exec"), namespace)
    run_bash_blocks(doc, tmp_path, env)


def test_readme_cli_examples_run(tmp_path):
    readme = ROOT / "README.md"
    run_bash_blocks(readme, tmp_path, workspace(tmp_path, readme), skip=1)  # 1: the install


def test_cli_doc_lists_every_exit_code_as_the_code_does():
    section = CLI_DOC.read_text().split("## Exit codes")[1].split("\n## ")[0]
    rows = re.findall(r"^\| (\d+) \| (\w+) \| (.*) \|$", section, flags=re.M)
    documented = [(int(code), name, meaning.replace("\\|", "|")) for code, name, meaning in rows]
    assert documented == [(c.code, name, c.meaning) for name, c in cli.EXIT_CODES.items()]


def parsers() -> list[argparse.ArgumentParser]:
    main = cli.parser()
    return [main, *cli.subcommands(main).values()]


def test_cli_doc_covers_every_command_option_format_and_dot_command():
    text = CLI_DOC.read_text()
    assert sorted(cli.subcommands(cli.parser())) == sorted(cli.COMMANDS)
    names = [*cli.COMMANDS, *cli.FORMATS, *(c.split()[0] for c in COMMANDS), ".exit"]
    names += [flag for parser in parsers() for flags, _ in cli.options(parser)
              for flag in flags]
    missing = [name for name in names
               if not re.search(rf"`([^`]* )?{re.escape(name)}[ `\]]", text)]
    assert not missing, f"docs/cli.md does not mention {missing}"


@pytest.mark.parametrize("parser", parsers(), ids=lambda p: p.prog)
def test_every_command_has_help_and_an_example(parser):
    assert "Example" in (parser.description or "") + (parser.epilog or "")
    for flags, help_text in cli.options(parser):
        assert help_text, f"{parser.prog}: {flags} has no help"
