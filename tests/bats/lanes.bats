#!/usr/bin/env bats
# The remote lanes' wiring (tests/run-lane, helpers/lane.bash), without a
# daemon: what each lane reruns, how it fails to come up, and the --bind its
# ssh lane gives a start. The lanes themselves run as tests/bats/*.lane.

setup() {
	load helpers/common
}

@test "every lane reruns suites of make check, each with tests tagged for the lanes" {
	local lane suite n
	for lane in ssh tcp; do
		grep -q "^	tests/bats/$lane.lane" "$OPENSHELL_SRCDIR/Makefile.am" || fail "make check lacks $lane.lane"
		n=0
		while read -r suite; do
			grep -q "^	tests/bats/$suite" "$OPENSHELL_SRCDIR/Makefile.am" || fail "$lane.lane: $suite is no suite of make check"
			run bats --count --filter-tags lane "$OPENSHELL_SRCDIR/tests/bats/$suite"
			assert_success
			[ "$output" -gt 0 ] || fail "$lane.lane: $suite has no test tagged lane"
			n=$((n + 1))
		done < <(sed 's/#.*//; /^ *$/d' "$OPENSHELL_SRCDIR/tests/bats/$lane.lane")
		[ "$n" -eq 4 ] || fail "$lane.lane lists $n suites"
	done
}

@test "a lane that cannot come up bails out of the TAP stream; on a real runner it is skipped" {
	run "$OPENSHELL_SRCDIR/tests/run-lane" --tap "$BATS_TEST_TMPDIR/udp.lane"
	assert_failure 1
	assert_output 'Bail out! lane udp: no such lane (ssh or tcp)'
	run "$OPENSHELL_SRCDIR/tests/run-lane" --tap "$BATS_TEST_TMPDIR/ssh.lane"
	assert_failure 1
	assert_output "Bail out! lane ssh: no lane file $BATS_TEST_TMPDIR/ssh.lane"
	OPENSHELL_TEST_REAL_HOST=1 run "$OPENSHELL_SRCDIR/tests/run-lane" --tap "$OPENSHELL_SRCDIR/tests/bats/ssh.lane"
	assert_success
	assert_output '1..0 # SKIP the lanes reach a sim host through test servers of their own'
}

@test "in the ssh lane a gateway start gets the box's address as --bind, unless it names one; nothing else does" {
	printf '#!/bin/sh\necho "$@"\n' >"$BATS_TEST_TMPDIR/openshell"
	chmod +x "$BATS_TEST_TMPDIR/openshell"
	OPENSHELL_BIN=$BATS_TEST_TMPDIR/openshell
	LANE_BIND=127.0.0.2 OPENSHELL_TEST_LANE=ssh
	load helpers/lane
	lane_active
	assert_equal "$API_ADDR" 127.0.0.2
	run openshell -q gateway start --gpu --name a
	assert_output '-q gateway start --gpu --name a --bind 127.0.0.2'
	run openshell gateway start --name a --bind 0.0.0.0
	assert_output 'gateway start --name a --bind 0.0.0.0'
	run openshell gateway status --name a
	assert_output 'gateway status --name a'
}
