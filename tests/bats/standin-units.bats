#!/usr/bin/env bats
# The k3s stand-in's own logic, unit by unit (tests/testbed/k3s/tests):
# patches, selectors, the watch history, printing, Helm's values. Each case
# is a rule of the real source its module names (docs/k3s-standin.md).

bats_require_minimum_version 1.5.0
load helpers/assert

@test "the stand-in's unit tests pass" {
	cd "$BATS_TEST_DIRNAME/../testbed/k3s"
	run env PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m unittest -v tests.test_standin
	assert_success
	assert_output --partial "OK"
	[[ $output =~ Ran\ ([0-9]+)\ tests ]] && [ "${BASH_REMATCH[1]}" -ge 10 ]
}
