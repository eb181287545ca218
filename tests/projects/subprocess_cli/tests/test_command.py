import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_module_command():
    done = subprocess.run([sys.executable, "-m", "wordcount", "one two three"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert done.stdout.strip() == "3"


def test_script_command():
    done = subprocess.run([sys.executable, "wordcount/__init__.py", "just", "two"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert done.stdout.strip() == "2"
