#!/usr/bin/env bats
# scripts/bench works end to end: one cycle on a sim host of its own gives
# every figure, measured against the stand-in's stamps, and so does one with
# that host reached through its sshd (--remote ssh). No figure is held to
# a target here (speed lives in the benchmark, not in the suite): what is
# checked is that each one was measured and is a sane number.

bats_require_minimum_version 1.5.0
load helpers/common
load helpers/sim-host

setup() {
	sim_only "the bench's sim mode makes a sim host of its own"
}

@test "one cycle gives every figure, the phases and a timeline" {
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/bench" --cycles 1 --gateways 2 --json --plot "$BATS_TEST_TMPDIR/t.png"
	assert_success
	[[ "$stderr" == *"bench: 1 cycles, lag median "*"ms, ratio median "* ]]
	result=$output
	run jq -r '.figures | [.lag_ms, .ratio, .docker_calls, .waiting_calls_per_s, .cpu_ms, .max_rss_kib,
		.verify_lag_ms, .verify_beyond_pod_ms, .verify_docker_calls, .status_ms, .wall_ms,
		.status_docker_calls, .stop_docker_calls, .destroy_docker_calls]
		| map(.median | type) | unique | join(",")' <<<"$result"
	assert_output number
	# No remote transport: no logins to count.
	run jq -c '[.remote, .figures.ssh_logins]' <<<"$result"
	assert_output '[null,null]'
	# How cost grows: a list per gateway count, and the two large starts,
	# each measured against its own stamp (64 replicas, 56 MIG devices).
	run jq -r '.scale | [(.list_ms | length), .status_ms, .time_slicing_32.lag_ms, .mig_8x7_single.lag_ms,
		.mig_8x7_single.docker_calls] | map(type) | join(",")' <<<"$result"
	assert_output 'number,number,number,number,number'
	run jq -r '.scale.list_ms | length' <<<"$result"
	assert_output 2
	# The stamps came after the launch and before the exit.
	run jq -r '.median_cycle | (.launch < .api_ready) and (.api_ready < .allocatable) and (.allocatable < .exit)' <<<"$result"
	assert_output true
	run jq -r '.phases_ms | keys | join(",")' <<<"$result"
	assert_output 'allocatable,api,container,device_plugin,image,runtime,total'
	run od -An -c -N4 "$BATS_TEST_TMPDIR/t.png"
	assert_output --partial 'P   N   G'
}

@test "--remote ssh: one cycle through the sim host's sshd gives the figures, each command's calls and a call's cost" {
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/bench" --cycles 1 --remote ssh --json
	assert_success
	result=$output
	run jq -r '.remote | [.transport, (.endpoint | test("^ssh://root@gpu-box:[0-9]+$")),
		(.call_ms.socket | type), (.call_ms.remote | type)] | map(tostring) | join(" ")' <<<"$result"
	assert_output 'ssh true number number'
	run jq -r '.figures | [.lag_ms, .ratio, .docker_calls, .verify_docker_calls, .status_docker_calls,
		.stop_docker_calls, .destroy_docker_calls, .ssh_logins] | map(.median | type) | unique | join(",")' <<<"$result"
	assert_output number
	# The calls went through the sshd: it accepted logins during the start.
	run jq -r '.figures.ssh_logins.median > 0' <<<"$result"
	assert_output true
	run jq -r '.scale' <<<"$result"
	assert_output null
}

@test "bad options are usage errors" {
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/bench" --cycles 0
	assert_failure 2
	assert_equal "$stderr" "bench: --cycles takes a number above 0"
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/bench" --plot out.svg
	assert_failure 2
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/bench" --frob
	assert_failure 2
	assert_equal "$stderr" "bench: unknown option '--frob' (see scripts/bench --help)"
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/bench" --remote tcp
	assert_failure 2
	assert_equal "$stderr" "bench: --remote takes ssh or ssh-mux"
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/bench" --remote ssh --real
	assert_failure 2
}
