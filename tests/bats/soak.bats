#!/usr/bin/env bats
# A short soak in every check: scripts/soak with fixed seeds, each run
# covering every action and fault once (--cover: thirteen planned, and the
# cycles that make a gateway for one) and drawing at random to sixteen.
# A failure names its seed: `scripts/soak --seed S --cover --cycles 16`
# replays it (the faults land at moments of the start, not after delays).

bats_require_minimum_version 1.5.0
load helpers/common
load helpers/sim-host

setup() {
	sim_only "the soak makes a sim host of its own"
}

soak() {
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/soak" --seed "$1" --cover --cycles 16
	if [ "$status" -ne 0 ]; then
		log=$(sed -n 's/^soak: kept .* (log: \(.*\))$/\1/p' <<<"$stderr")
		[ -z "$log" ] || tail -n 60 "$log" >&2
	fi
	assert_success
	assert_line --regexp '^soak: (1[6-9]|[2-9][0-9]) cycles, [0-9]+ faults injected, 0 failures, 0 leaks found$'
	for item in action-0 action-1 action-2 action-3 action-4 action-5 action-6 action-7 action-8 action-9 \
		action-10 interrupt-run interrupt-api interrupt-gpus SIGINT SIGTERM SIGHUP api-flaky api-cut; do
		assert_line --regexp "^soak: covered: .*\\b$item\\b"
	done
}

@test "soak --seed 4242 --cover: every action and fault, no failure, nothing leaked" {
	soak 4242
}

@test "soak --seed 7 --cover: every action and fault, no failure, nothing leaked" {
	soak 7
}
