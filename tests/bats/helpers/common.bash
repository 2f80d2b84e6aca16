# common.bash - what every bats suite loads: assertions and the binary.
#
# OPENSHELL_BIN and OPENSHELL_SRCDIR come from `make check`; run by hand,
# the suites fall back to the build in the source tree.
bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

: "${OPENSHELL_SRCDIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${OPENSHELL_BIN:=$OPENSHELL_SRCDIR/openshell}"
export OPENSHELL_SRCDIR OPENSHELL_BIN

# Run openshell the way the suite was asked to: plainly, or under valgrind
# (OPENSHELL_VALGRIND=1), which makes any memory error exit 99.
openshell() {
	"$OPENSHELL_SRCDIR/tests/run-under-test" "$OPENSHELL_BIN" "$@"
}
