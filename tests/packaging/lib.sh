# Shared by tests/packaging/*.sh: a check counter and the result line ("N passed, N failed").
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
# expect DESCRIPTION COMMAND...: passes when COMMAND exits 0.
expect() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
finish() { echo "$(basename "$0"): $pass passed, $fail failed"; ((fail == 0)); }
