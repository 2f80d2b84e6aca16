#!/usr/bin/env bats
# The k3s stand-in's own logic, unit by unit (tests/testbed/k3s/tests):
# patches, selectors, the watch history, printing, Helm's values, the
# charts, the DRA driver and the kubelet's DRA manager. Each case
# is a rule of the real source its module names (docs/k3s-standin.md).

bats_require_minimum_version 1.5.0
load helpers/assert

@test "the stand-in's unit tests pass" {
	cd "$BATS_TEST_DIRNAME/../testbed/k3s"
	run env PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m unittest discover -v -s tests -p 'test_*.py'
	assert_success
	assert_output --partial "OK"
	[[ $output =~ Ran\ ([0-9]+)\ tests ]] && [ "${BASH_REMATCH[1]}" -ge 60 ]
}
