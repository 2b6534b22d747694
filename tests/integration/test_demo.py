"""`cce demo` tells the whole story on the bundled sample data."""

import json
import os
import subprocess
import sys
from pathlib import Path


def test_demo_shows_patient_reported_views(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "api.cli", "demo", "--json", "--db", str(tmp_path / "demo.db")],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        # The repository, not an installed copy (none may be): cwd is elsewhere.
        env=os.environ | {"PYTHONPATH": str(Path(__file__).parents[2])},
    )

    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)["files"]
    story = next(c for p, c in shown.items() if p.endswith("/_story.md"))
    medication = next(c for p, c in shown.items() if p.startswith("/medications/"))
    assert "## Patient-Reported" in story and "headache" in story.lower()
    assert "conflicts" in medication and "hydrochlorothiazide" in medication.lower()
    assert "stopped taking the hydrochlorothiazide" in shown["/memory/adherence.md"]
    assert (tmp_path / "demo.db").exists()
