#!/usr/bin/env bats
# The command line: help, version, dispatch and usage errors. No docker.

setup() {
	load helpers/common
	# Keep the user's config and any daemon out of reach.
	export XDG_CONFIG_HOME="$BATS_TEST_TMPDIR/config"
}

@test "--version prints the version and exits 0" {
	run openshell --version
	assert_success
	assert_output --regexp '^openshell [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "--help lists the commands on stdout" {
	run --separate-stderr openshell --help
	assert_success
	assert_output --partial 'gateway'
	assert_output --partial 'doctor'
	[ -z "$stderr" ]
}

@test "no command prints usage on stderr and exits 2" {
	run --separate-stderr openshell
	assert_failure 2
	[ -z "$output" ]
	[[ "$stderr" == *"Usage: openshell"* ]]
}

@test "an unknown command is an error line and a --help hint on stderr, exit 2" {
	run --separate-stderr openshell nosuch
	assert_failure 2
	[ -z "$output" ]
	[ "$stderr" = "openshell: error: unknown command 'nosuch'
Try 'openshell --help' for more information." ]
}

@test "an unknown global option is an error line and a --help hint, exit 2" {
	run --separate-stderr openshell --bogus
	assert_failure 2
	[ "$stderr" = "openshell: error: unknown option '--bogus'
Try 'openshell --help' for more information." ]
}

@test "gateway --help lists gateway commands" {
	run openshell gateway --help
	assert_success
	assert_output --partial 'Usage: openshell gateway COMMAND'
	assert_output --partial 'start'
}

@test "gateway with an unknown subcommand exits 2 naming it" {
	run --separate-stderr openshell gateway frobnicate
	assert_failure 2
	[ "$stderr" = "openshell: error: unknown gateway command 'frobnicate'
Try 'openshell gateway --help' for more information." ]
}

@test "help CMD shows the command's help" {
	run openshell help doctor
	assert_success
	assert_output --partial 'Usage: openshell doctor'
	run openshell help gateway
	assert_success
	assert_output --partial 'Usage: openshell gateway'
}

@test "gateway help [COMMAND] is the group's usage, or the command's --help" {
	run --separate-stderr openshell gateway --help
	group_usage=$output
	run --separate-stderr openshell gateway help
	assert_success
	assert_output "$group_usage"
	run --separate-stderr openshell gateway start --help
	start_usage=$output
	run --separate-stderr openshell gateway help start
	assert_success
	assert_output "$start_usage"
	run --separate-stderr openshell gateway help frobnicate
	assert_failure 2
	[ "$stderr" = "openshell: error: unknown gateway command 'frobnicate'
Try 'openshell gateway --help' for more information." ]
	run --separate-stderr openshell gateway help start stop
	assert_failure 2
	[[ "$stderr" == "openshell: error: too many words after 'help'; try 'openshell gateway help COMMAND'"* ]]
}

@test "help help and help --help show the main usage, exit 0" {
	run --separate-stderr openshell --help
	main_usage=$output
	run --separate-stderr openshell help help
	assert_success
	assert_output "$main_usage"
	run --separate-stderr openshell help --help
	assert_success
	assert_output "$main_usage"
	[ -z "$stderr" ]
}

@test "doctor rejects stray arguments with exit 2" {
	run --separate-stderr openshell doctor extra
	assert_failure 2
	[[ "$stderr" == "openshell: error: unexpected argument 'extra'"* ]]
	# A control byte is shown escaped, never sent to the terminal.
	run --separate-stderr openshell doctor $'a\x1b[2Jb'
	assert_failure 2
	[[ "$stderr" == "openshell: error: unexpected argument 'a\\x1b[2Jb'"* ]]
}

@test "doctor --json with a bad option is a usage error" {
	run --separate-stderr openshell doctor --json --bogus
	assert_failure 2
	assert_output ''
	[ "$stderr" = "openshell: error: unknown option '--bogus'
Try 'openshell doctor --help' for more information." ]
}

@test "a bad value found past the option parse gets the same error and --help hint, for its command" {
	OPENSHELL_DOCKER=/nonexistent/docker run --separate-stderr openshell gateway start --name Bad_Name
	assert_failure 2
	[[ "${stderr%%$'\n'*}" == "openshell: error: invalid gateway name 'Bad_Name'"* ]]
	[ "${stderr##*$'\n'}" = "Try 'openshell gateway start --help' for more information." ]
	run --separate-stderr openshell gateway status --name -bad-
	assert_failure 2
	[ "${stderr##*$'\n'}" = "Try 'openshell gateway status --help' for more information." ]
}

@test "a missing docker CLI is reported in one line" {
	OPENSHELL_DOCKER=/nonexistent/docker run --separate-stderr openshell doctor
	assert_failure 1
	assert_output --partial "fail  docker client: OPENSHELL_DOCKER='/nonexistent/docker' is not an executable"
}

@test "-v shows the commands that run" {
	# A fake docker that answers `version` proves the trace without a daemon.
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\n[ "$1" = version ] && { echo 99.0; exit 0; }\nexit 1\n' >"$BATS_TEST_TMPDIR/bin/docker"
	chmod +x "$BATS_TEST_TMPDIR/bin/docker"
	OPENSHELL_DOCKER="$BATS_TEST_TMPDIR/bin/docker" run --separate-stderr openshell -v doctor
	[[ "$stderr" == *"openshell: + $BATS_TEST_TMPDIR/bin/docker version --format '{{.Server.Version}}'"* ]]
	assert_output --partial 'pass  docker daemon: version 99.0'
}

@test "a bad OPENSHELL_CALL_TIMEOUT is refused with the rule" {
	OPENSHELL_CALL_TIMEOUT=soon run --separate-stderr openshell doctor
	assert_output --partial "OPENSHELL_CALL_TIMEOUT='soon' is not a duration"
}

@test "every option of gateway start's --help is in the man page; the GPU options are in the README" {
	run --separate-stderr openshell gateway start --help
	assert_success
	opts=$(grep -oE '^ +(-[a-z], )?--[a-z][a-z-]+' <<<"$output" | grep -oE -- '--[a-z][a-z-]+' | sort -u)
	[ "$(wc -l <<<"$opts")" -gt 15 ]
	for o in $opts; do
		man=$(sed 's/\\-/-/g' "$OPENSHELL_SRCDIR/doc/openshell.1")
		[[ "$man" == *"$o"* ]] || { echo "the man page lacks $o" >&2; return 1; }
	done
	for o in --gpus --gpu-sharing --gpu-mode --mig-strategy; do
		grep -q -- "$o" "$OPENSHELL_SRCDIR/README.md" || { echo "the README lacks $o" >&2; return 1; }
	done
}

# A docker that answers `image inspect` as Docker does: the image, or "No such image".
fake_image_docker() {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	cat >"$BATS_TEST_TMPDIR/bin/docker" <<-EOS
		#!/bin/sh
		[ "\$1 \$2" = "image inspect" ] || exit 9
		[ "$1" = present ] && { echo '[{"Id":"sha256:1","Config":{"Labels":{}}}]'; exit 0; }
		echo "Error response from daemon: No such image: \$4" >&2
		exit 1
	EOS
	chmod +x "$BATS_TEST_TMPDIR/bin/docker"
	export OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/bin/docker
}

pin() { sed -n "s/^$1=//p" "$OPENSHELL_SRCDIR/deploy/versions.env"; }

@test "version: openshell's, the default image's pins from the recipe, and whether Docker has it" {
	fake_image_docker absent
	run --separate-stderr openshell version
	assert_success
	assert_line --index 0 "$(openshell --version)"
	assert_line --index 1 --regexp '^cluster image openshell-cluster:[0-9.]+ \(not built yet: .openshell image build.\)$'
	assert_line "  recipe                     $OPENSHELL_SRCDIR/deploy"
	assert_line "  k3s                        $(pin K3S_VERSION)"
	assert_line "  NVIDIA Container Toolkit   $(pin NVIDIA_CONTAINER_TOOLKIT_VERSION)"
	assert_line "  device plugin chart        $(pin DEVICE_PLUGIN_CHART_VERSION)"
	fake_image_docker present
	OPENSHELL_CLUSTER_IMAGE=mine:1 run --separate-stderr openshell version --json
	assert_success
	doc=$output
	run jq -r '[.schema, .openshell_version, .cluster_image.image, .cluster_image.present, .cluster_image.pins.k3s_version,
		.cluster_image.pins.device_plugin_chart_version, .cluster_image.pins.smoke_image] | map(tostring) | join(" ")' <<<"$doc"
	assert_output "1 $(openshell --version | cut -d' ' -f2) mine:1 true $(pin K3S_VERSION) $(pin DEVICE_PLUGIN_CHART_VERSION) $(pin SMOKE_IMAGE)"
	assert_schema version "$doc"
}

@test "version without a Docker to ask prints all else, present unknown, and exits 3" {
	OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/no-docker run --separate-stderr openshell version --json
	assert_failure 3
	doc=$output
	run jq -r '[.cluster_image.present, .cluster_image.pins.k3s_version] | map(tostring) | join(" ")' <<<"$doc"
	assert_output "null $(pin K3S_VERSION)"
	[[ "$stderr" == "openshell: error: OPENSHELL_DOCKER="* ]]
	assert_schema version "$doc"
	run --separate-stderr openshell version extra
	assert_failure 2
}
