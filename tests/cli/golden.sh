# The whole-output cases of every command against tests/golden (tests/golden/README.md).
exec bash "$SRC/tests/golden/run.sh" check
