"""The `vramdoc` command that pip installs: it replaces itself with the bundled binary."""
from __future__ import annotations

import os
import sys

from vramdoc._api import VramdocError, binary_path


def main() -> None:
    """Runs the vramdoc binary with this process's arguments (never returns on success)."""
    try:
        binary = binary_path()
    except VramdocError as error:
        print(f"vramdoc: {error}", file=sys.stderr)
        sys.exit(2)
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
