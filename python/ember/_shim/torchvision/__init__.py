# Found first on PYTHONPATH in the processes a program under `python -m ember.run` starts: makes
# this `import torchvision` give ember.vision. See ember/run.py.
import sys

import ember.run

ember.run.patch_torch()
import ember.vision  # noqa: E402

sys.modules["torchvision"] = ember.vision
