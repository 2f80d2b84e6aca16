# common.bash - what every bats suite loads: assertions and the binary.
#
# OPENSHELL_BIN and OPENSHELL_SRCDIR come from `make check`; run by hand,
# the suites fall back to the build in the source tree.
bats_require_minimum_version 1.5.0
load helpers/assert

: "${OPENSHELL_SRCDIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${OPENSHELL_BIN:=$OPENSHELL_SRCDIR/openshell}"
export OPENSHELL_SRCDIR OPENSHELL_BIN

# The docker CLI and kubectl are Go programs that start a runtime thread
# and a GC worker per CPU: with one, each run costs the 2-core test machine
# a tenth less CPU (docs/testing.md), and the suites start thousands. The
# sim host's daemons inherit it, measured no different.
export GOMAXPROCS=1

# Run openshell the way the suite was asked to: plainly, or under valgrind
# (OPENSHELL_VALGRIND=1), which makes any memory error exit 99.
openshell() {
	"$OPENSHELL_SRCDIR/tests/run-under-test" "$OPENSHELL_BIN" "$@"
}

# A failed test shows the stderr of its last `run --separate-stderr` too:
# many assertions match it with [[ ]], which bats reports only as the
# command that failed. A suite's own per-test cleanup is suite_teardown.
teardown() {
	local rc=0
	! declare -F suite_teardown >/dev/null || suite_teardown || rc=$?
	# fd 3: the TAP stream itself, which automake's log keeps whole.
	if [[ -z ${BATS_TEST_COMPLETED:-} && -n ${stderr:-} ]]; then
		printf '# stderr of the last run --separate-stderr (its last 30 lines):\n' >&3
		tail -n 30 <<<"$stderr" | sed 's/^/#   /' >&3
	fi
	return "$rc"
}

# Does the --json document $2 fit $defs/$1 of doc/openshell.schema.json
# (tests/schema-check)? Fails the test with the schema's complaints when it
# does not. Sets $output and $status, as `run` does.
assert_schema() {
	run "$OPENSHELL_SRCDIR/tests/schema-check" "$OPENSHELL_SRCDIR/doc/openshell.schema.json" "$1" <<<"$2"
	assert_success
}

# Whether TEXT has the exact line LINE; when not, the text goes to the
# failure's log, since a captured command's output is not shown otherwise.
assert_has_line() {
	grep -qxF -- "$2" <<<"$1" && return 0
	printf 'no line "%s" in:\n%s\n' "$2" "$1" >&2
	return 1
}
