"""The example at the top of docs/python.md runs as written (so the documented API stays true)."""
import os
import re

from conftest import ROOT


def test_quick_example_in_docs_runs(capsys):
    text = (ROOT / "docs" / "python.md").read_text()
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    cwd = os.getcwd()
    os.chdir(ROOT)  # the example uses repository-relative model paths
    try:
        exec(compile(block, "docs/python.md", "exec"), {})
    finally:
        os.chdir(cwd)
    assert "gemv" in capsys.readouterr().out  # its last line prints the compiled plan
