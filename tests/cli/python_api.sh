# The Python package (python/vramdoc) against this build's binary: pytest over tests/python.
# Skipped (77) with a message where no Python with pytest is found (Debian: python3-pytest).
source "$(dirname "$0")/../cli_lib.sh"
py=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import pytest" 2>/dev/null; then py=$candidate; break; fi
done
if [[ -z $py ]]; then echo "SKIP: no python3 with pytest (apt-get install python3-pytest)"; exit 77; fi
export VRAMDOC_BINARY=$VRAMDOC PYTHONPATH=$SRC/python PYTHONDONTWRITEBYTECODE=1
cd "$SRC" && exec "$py" -m pytest -q -p no:cacheprovider tests/python
