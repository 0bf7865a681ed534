"""The committed typed stubs describe the module as built (regenerate with
`python -m nanobind.stubgen -m tickinfer._tickinfer -o python/tickinfer/_tickinfer.pyi`)."""
import subprocess
import sys

import pytest

from conftest import ROOT


def test_committed_stub_matches_the_module(tmp_path):
    pytest.importorskip("nanobind.stubgen")
    out = tmp_path / "_tickinfer.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "tickinfer._tickinfer", "-o", str(out)],
                   check=True)
    committed = (ROOT / "python" / "tickinfer" / "_tickinfer.pyi").read_text()
    assert out.read_text() == committed, "python/tickinfer/_tickinfer.pyi is stale: regenerate it"
