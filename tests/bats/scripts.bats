#!/usr/bin/env bats
# scripts/lib/build.sh's install_packages, which scripts/check and
# scripts/demo run as root: it uses the Docker engine the host has, whatever
# its source, and never apt-gets Debian's in its place. Run against fakes of
# dpkg-query, apt-get and the engine's commands, on a PATH of their own.

setup() {
	load helpers/common
	BIN=$BATS_TEST_TMPDIR/bin
	APT_LOG=$BATS_TEST_TMPDIR/apt-get.log
	mkdir -p "$BIN"
	# The tools install_packages runs besides the fakes.
	for tool in grep cut realpath cat; do
		ln -s "$(command -v "$tool")" "$BIN/$tool"
	done
	fake id 'echo 0'
	fake npm ':'
	fake apt-get "echo \"\$*\" >>'$APT_LOG'"
	# dpkg-query -W: every package installed but those in $NOT_INSTALLED;
	# -S FILE: the package of a file, $DOCKERD_OWNER for any.
	# shellcheck disable=SC2016 # expanded by the fake
	fake dpkg-query '
		case $1 in
		-S) [ -n "${DOCKERD_OWNER:-}" ] || { echo "dpkg-query: no path found matching pattern $2" >&2; exit 1; }
		    echo "$DOCKERD_OWNER: $2" ;;
		-W) pkg=${*: -1}
		    case " ${NOT_INSTALLED:-} " in *" $pkg "*) echo "dpkg-query: no packages found matching $pkg" >&2; exit 1 ;; esac
		    printf "install ok installed" ;;
		esac'
}

fake() {
	printf '#!/bin/bash\n%s\n' "$2" >"$BIN/$1"
	chmod +x "$BIN/$1"
}

# install_packages [ARG] with only $BIN on PATH.
install_packages() {
	# shellcheck disable=SC2016 # expanded by that bash
	run --separate-stderr env PATH="$BIN" NOT_INSTALLED="${NOT_INSTALLED:-}" DOCKERD_OWNER="${DOCKERD_OWNER:-}" \
		"$BASH" -c '. "$1"; shift; install_packages "$@"' _ "$OPENSHELL_SRCDIR/scripts/lib/build.sh" "$@"
}

@test "Docker's own engine (docker-ce, containerd.io) is used as it is: no docker.io, containerd or runc from Debian" {
	for c in dockerd docker containerd runc; do fake "$c" ':'; done
	NOT_INSTALLED='docker.io containerd runc' DOCKERD_OWNER=docker-ce install_packages
	assert_success
	assert_equal "$stderr" ''
	[ ! -e "$APT_LOG" ] || fail "apt-get ran: $(cat "$APT_LOG")"
}

@test "an engine of another source without containerd and runc: refused in one line saying why and what to do, nothing installed" {
	fake dockerd ':'
	fake docker ':'
	NOT_INSTALLED='docker.io containerd runc busybox-static' DOCKERD_OWNER=docker-ce install_packages
	assert_failure 1
	assert_equal "${#stderr_lines[@]}" 1
	[[ $stderr == "install_packages: the test bed needs containerd runc, which this host's Docker engine (dockerd of docker-ce) lacks"* ]]
	[[ $stderr == *"would replace that engine: install them from the engine's own source (containerd.io for docker-ce"* ]]
	[ ! -e "$APT_LOG" ] || fail "apt-get ran: $(cat "$APT_LOG")"
}

@test "no Docker engine at all: Debian's docker.io, containerd and runc, never removing anything" {
	NOT_INSTALLED='docker.io containerd runc' install_packages
	assert_success
	run grep -c '^install ' "$APT_LOG"
	assert_output 1
	run grep '^install ' "$APT_LOG"
	assert_output --regexp ' --no-remove '
	assert_output --regexp ' docker\.io containerd runc$'
}

@test "Debian's engine without runc: only runc, from Debian" {
	for c in dockerd docker containerd; do fake "$c" ':'; done
	NOT_INSTALLED=runc DOCKERD_OWNER=docker.io install_packages
	assert_success
	run grep '^install ' "$APT_LOG"
	assert_output --regexp ' runc$'
	refute_output --partial docker.io
}

@test "install_packages build (a real GPU host) asks nothing of the engine" {
	NOT_INSTALLED='docker.io containerd runc' DOCKERD_OWNER=docker-ce install_packages build
	assert_success
	[ ! -e "$APT_LOG" ] || fail "apt-get ran: $(cat "$APT_LOG")"
}

# A build directory as `make check` leaves it: each file's time (tests/timed) and results (.trs).
fake_run() {
	local b=$BATS_TEST_TMPDIR/build secs name n
	mkdir -p "$b/test-times" "$b/tests/bats" "$b/tests/unit"
	while read -r secs name n; do
		echo "$secs ../../$name" >"$b/test-times/${name##*/}.time"
		for ((i = 0; i < n; i++)); do echo ':test-result: PASS'; done >"$b/${name%.*}.trs"
	done
	echo "$b"
}

@test "scripts/test-times: the slowest files first, with their tests, and the table kept as a file" {
	b=$(fake_run <<-'EOF'
		12.5 tests/bats/fast.bats 3
		300.0 tests/bats/slow.bats 40
		0.2 tests/unit/test_x 100
	EOF
	)
	run "$OPENSHELL_SRCDIR/scripts/test-times" "$b"
	assert_success
	assert_line --index 0 --partial "the 15 slowest test files (of 3)"
	assert_line --index 2 --regexp '^check: +300\.0 +40  tests/bats/slow\.bats$'
	assert_line --index 3 --regexp '^check: +12\.5 +3  tests/bats/fast\.bats$'
	assert_line --index 5 "check: 313 s in all files together, 143 tests"
	run cat "$b/test-times.txt"
	assert_line --index 0 "300.0 40 tests/bats/slow.bats"
	# The slowest tests, from the logs bats wrote with --timing.
	printf 'ok 1 quick in 120ms\nnot ok 2 a failing one in 95000ms\nok 3 # skip no GPU\n' >"$b/tests/bats/slow.log"
	printf 'ok 1 a long one in 123456ms\n' >"$b/tests/bats/fast.log"
	run "$OPENSHELL_SRCDIR/scripts/test-times" "$b"
	assert_line "check: the 10 slowest tests:"
	assert_line --regexp '^check: +123\.4  tests/bats/fast\.log: a long one$'
	assert_line --regexp '^check: +95\.0  tests/bats/slow\.log: a failing one$'
	assert_line --regexp '^check: +0\.1  tests/bats/slow\.log: quick$'
	run cat "$b/test-times-tests.txt"
	assert_line --index 0 "123456 tests/bats/fast.log: a long one"
}

@test "scripts/test-times: past 15 minutes a warning names the files that grew since the baseline; past 25 an error" {
	b=$(fake_run <<-'EOF'
		400.0 tests/bats/slow.bats 40
		21.0 tests/bats/steady.bats 3
		30.0 tests/bats/new.bats 2
	EOF
	)
	printf '200.0 40 tests/bats/slow.bats\n20.0 3 tests/bats/steady.bats\n' >"$BATS_TEST_TMPDIR/baseline"
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/test-times" "$b" "$BATS_TEST_TMPDIR/baseline" 600
	assert_success
	assert_equal "$stderr" ""
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/test-times" "$b" "$BATS_TEST_TMPDIR/baseline" 1000
	assert_success
	[[ $stderr == *"the run took 16 min 40 s, past the suite's 15 minutes"* ]]
	[[ $stderr == *"tests/bats/slow.bats (400.0 s, was 200.0 s)"* ]]
	[[ $stderr == *"tests/bats/new.bats (30.0 s, new)"* ]]
	[[ $stderr != *steady* ]]
	# Past the hard limit it is an error: exit 3, the files still named.
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/test-times" "$b" "$BATS_TEST_TMPDIR/baseline" 1501
	assert_failure 3
	[[ $stderr == *"check: error: the run took 25 min 1 s, past the suite's limit of 25 min"* ]]
	[[ $stderr == *"tests/bats/slow.bats (400.0 s, was 200.0 s)"* ]]
	OPENSHELL_CHECK_FAIL_AFTER=2000 run --separate-stderr "$OPENSHELL_SRCDIR/scripts/test-times" "$b" "" 1501
	assert_success
}

@test "scripts/test-times: the guard judges the run at the baseline's pace, within a third and once, never past 40 minutes as run" {
	b=$(fake_run <<-'EOF'
		400.0 tests/bats/slow.bats 40
		210.0 tests/bats/steady.bats 3
		60.0 tests/bats/new.bats 2
	EOF
	)
	printf '# pace 1000\n200.0 40 tests/bats/slow.bats\n100.0 3 tests/bats/steady.bats\n' >"$BATS_TEST_TMPDIR/baseline"
	export OPENSHELL_CHECK_FAIL_AFTER=1500
	# Process starts twice as dear: 32 minutes as run are 16 at the baseline's
	# pace, a warning; at that pace neither old file grew (400 s are 200, 210
	# are 105), and the new one is named at that pace.
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/test-times" "$b" "$BATS_TEST_TMPDIR/baseline" 1920 2000
	assert_success
	assert_line "check: pace: a process start here costs 2.00 times what it did where the baseline was recorded (scripts/pace: 2000 ms here, 1000 ms there); times below are judged at 0.50 times their length"
	[[ $stderr == *"check: warning: the run took 32 min 0 s (16 min 0 s at the baseline's pace), past the suite's 15 minutes"* ]]
	[[ $stderr == *"tests/bats/new.bats (30.0 s at the baseline's pace, new)"* ]]
	[[ $stderr != *"slow.bats ("* && $stderr != *"steady.bats ("* ]]
	# The run's own table keeps its pace, so that it can be the next baseline.
	run head -n 1 "$b/test-times.txt"
	assert_output "# pace 2000"
	# The same pace: 26 minutes are an error, naming what grew.
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/test-times" "$b" "$BATS_TEST_TMPDIR/baseline" 1560 1000
	assert_failure 3
	[[ $stderr == *"check: error: the run took 26 min 0 s, past the suite's limit of 25 min"* ]]
	[[ $stderr == *"tests/bats/slow.bats (400.0 s, was 200.0 s)"* ]]
	[[ $stderr == *"tests/bats/steady.bats (210.0 s, was 100.0 s)"* ]]
	# A faster machine is judged as run (its waits do not shrink): no error.
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/test-times" "$b" "$BATS_TEST_TMPDIR/baseline" 960 500
	assert_success
	assert_line --partial "times below are judged at 1.00 times their length"
	[[ $stderr == *"check: warning: the run took 16 min 0 s, past the suite's 15 minutes"* ]]
	# Ten times dearer is credited three: 39 minutes are 13, silent.
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/test-times" "$b" "$BATS_TEST_TMPDIR/baseline" 2340 10000
	assert_success
	assert_line --partial "judged at 0.33 times their length"
	assert_equal "$stderr" ""
	# Past 40 minutes as run it fails whatever the pace...
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/test-times" "$b" "$BATS_TEST_TMPDIR/baseline" 2460 3000
	assert_failure 3
	[[ $stderr == *"check: error: the run took 41 min 0 s (13 min 40 s at the baseline's pace), past 40 min as run, whatever the pace"* ]]
	# ...unless the limit itself is higher (a valgrind run's).
	OPENSHELL_CHECK_FAIL_AFTER=86400 run --separate-stderr "$OPENSHELL_SRCDIR/scripts/test-times" "$b" "$BATS_TEST_TMPDIR/baseline" 5000 1000
	assert_success
	# A baseline without a pace: judged as run, and said so.
	printf '200.0 40 tests/bats/slow.bats\n' >"$BATS_TEST_TMPDIR/baseline"
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/test-times" "$b" "$BATS_TEST_TMPDIR/baseline" 600 2000
	assert_success
	assert_line "check: pace: 2000 ms here, but the baseline has no pace: times are judged as run"
}

@test "scripts/pace: one number, the milliseconds of CPU its set of process starts took" {
	run --separate-stderr "$OPENSHELL_SRCDIR/scripts/pace"
	assert_success
	assert_output --regexp '^[1-9][0-9]*$'
}
