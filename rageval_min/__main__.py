"""``python -m rageval_min``: the command-line interface."""

import gc

_collect = gc.isenabled()
if __name__ == "__main__":
    gc.disable()  # off while the command starts (see cli.main_entry)

from .cli import main_entry  # noqa: E402

if __name__ == "__main__":
    main_entry(_collect)
