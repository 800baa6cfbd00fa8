# Shared by the CLI test scripts (sourced): `expect` runs a command and checks its exit status
# and that its output contains a pattern; `check` counts a condition.  The caller sets `tmp`
# (a scratch directory) and `pass=0 fail=0`, and ends with: echo "$pass passed, $fail failed".
# Each command gets EXPECT_TIMEOUT seconds (default 120).

expect() { # expect STATUS PATTERN -- command...
    local want=$1 pat=$2; shift 3
    timeout "${EXPECT_TIMEOUT:-120}" "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" -eq "$want" ] && grep -q -- "$pat" "$tmp/out" "$tmp/err"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $* -> status $got (want $want), pattern '$pat'" >&2
        cat "$tmp/out" "$tmp/err" >&2
    fi
}

check() { # check DESCRIPTION CONDITION-COMMAND...
    local what=$1; shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what" >&2; fi
}
