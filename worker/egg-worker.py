"""egg-worker.py: launcher for the eval worker; egg runs it as `python3 -I egg-worker.py ...`.

`-I` keeps the user's site-packages, PYTHON* variables and the current folder
off sys.path, so a candidate cannot shadow modules through them; this file
puts only its own folder (holding the egg_worker package) on the path.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from egg_worker.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
