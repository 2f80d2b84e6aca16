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

@test "help alone shows the main usage; help help and help --help show help's own, exit 0" {
	run --separate-stderr openshell --help
	main_usage=$output
	run --separate-stderr openshell help
	assert_success
	assert_output "$main_usage"
	run --separate-stderr openshell help help
	assert_success
	assert_line --index 0 "Usage: openshell help [OPTIONS] [COMMAND...]"
	help_usage=$output
	run --separate-stderr openshell help --help
	assert_success
	assert_output "$help_usage"
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
	# A fake docker that answers `info` proves the trace without a daemon.
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\n[ "$1" = info ] && { echo %s; exit 0; }\nexit 1\n' "'{\"ServerVersion\":\"99.0\"}'" >"$BATS_TEST_TMPDIR/bin/docker"
	chmod +x "$BATS_TEST_TMPDIR/bin/docker"
	OPENSHELL_DOCKER="$BATS_TEST_TMPDIR/bin/docker" run --separate-stderr openshell -v doctor
	[[ "$stderr" == *"openshell: + $BATS_TEST_TMPDIR/bin/docker info --format '{{json .}}'"* ]]
	assert_output --partial 'pass  docker daemon: version 99.0'
}

@test "a bad OPENSHELL_CALL_TIMEOUT is refused with the rule" {
	OPENSHELL_CALL_TIMEOUT=soon run --separate-stderr openshell doctor
	assert_output --partial "OPENSHELL_CALL_TIMEOUT='soon' is not a duration"
}

# Every command's path ("gateway start"), from the completion of the tree.
command_paths() {
	local group cmd
	for group in $(openshell __complete ""); do
		[ "$group" = help ] && continue
		if subs=$(openshell __complete "$group" "") && [ -n "$subs" ] && [ "$group" != completion ]; then
			for cmd in $subs; do echo "$group $cmd"; done
		else
			echo "$group"
		fi
	done
}

# The long options a --help lists, one a line, sorted.
help_opts() {
	openshell $1 --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]+' | grep -oE -- '--[a-z][a-z-]+' | sort -u
}

# The man page made from the template, as the build makes it.
man_page() {
	openshell __man <"$OPENSHELL_SRCDIR/doc/openshell.1.in"
}

@test "help, man page, completion and the option tables agree for every command" {
	man=$(man_page)
	paths=$(command_paths)
	[ "$(wc -l <<<"$paths")" -ge 14 ]
	while read -r path; do
		want=$(help_opts "$path")
		# completion offers the same options as --help lists
		got=$(openshell __complete $path -- | sort -u)
		[ "$got" = "$want" ] || { echo "completion of '$path' offers: $got; --help lists: $want" >&2; return 1; }
		# the man page's section has a .TP heading for each
		section=$(awk -v h=".SS openshell $path" '$0 == h {on = 1; next} /^\.S[SH] / {on = 0} on' <<<"$man")
		got=$(grep -A1 '^\.TP' <<<"$section" | grep -oE '^\.B[IR]? (\\-[a-zA-Z] ", " )?\\-\\-[a-z\\-]+' |
			sed 's/.*\\-\\-/--/; s/\\-/-/g' | sort -u)
		[ "$(printf '%s\n' $got --help --quiet --verbose | sort -u)" = "$want" ] || { echo "man page section of '$path' has: $got; --help lists: $want" >&2; return 1; }
		# and its SYNOPSIS line names each of the command's own
		syn=$(awk -v h=".SY \"openshell $path\"" '$0 == h {on = 1; next} /^\.YS/ {on = 0} on' <<<"$man" |
			sed 's/\\-/-/g' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
		[ "$syn" = "$got" ] || { echo "SYNOPSIS of '$path' has: $syn; its section: $got" >&2; return 1; }
	done <<<"$paths"
}

@test "no --help line of any command passes 80 columns" {
	while read -r path; do
		long=$(openshell $path --help | awk 'length($0) > 80')
		[ -z "$long" ] || { echo "openshell $path --help: $long" >&2; return 1; }
	done <<<"$(command_paths; echo gateway; echo image; echo help)"
	long=$(openshell --help | awk 'length($0) > 80')
	[ -z "$long" ]
}

@test "the man page template may describe only options the tables have" {
	printf '.SS openshell gateway stop\n.\\" @options gateway stop\n.\\" @opt frobnicate\nIt frobs.\n' >"$BATS_TEST_TMPDIR/t.in"
	run --separate-stderr openshell __man <"$BATS_TEST_TMPDIR/t.in"
	assert_failure 1
	[ "$stderr" = "openshell: error: man page template line 3: 'gateway stop' has no option --frobnicate; describe only the options its table has" ]
	# an option the template leaves out gets its --help text
	printf '.SS openshell gateway stop\n.\\" @options gateway stop\n.SH END\n' >"$BATS_TEST_TMPDIR/t.in"
	run --separate-stderr openshell __man <"$BATS_TEST_TMPDIR/t.in"
	assert_success
	assert_output --partial '.BI \-\-name " NAME"
gateway name (default: openshell).'
}

@test "the man page renders without warnings; the GPU options are in the README" {
	man_page >"$BATS_TEST_TMPDIR/openshell.1"
	run --separate-stderr env MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$BATS_TEST_TMPDIR/openshell.1"
	assert_success
	[ -z "$stderr" ] || { echo "$stderr" >&2; return 1; }
	assert_output --partial "openshell gateway start [--name NAME] [--gpu] [--gpus WHICH]"
	for o in --gpus --gpu-sharing --gpu-mode --mig-strategy --gpu-allocation; do
		grep -q -- "$o" "$OPENSHELL_SRCDIR/README.md" || { echo "the README lacks $o" >&2; return 1; }
	done
}

# Gateways NAME... that openshell knows by their metadata alone, with no
# docker to ask.
known_gateways() {
	export XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/no-docker
	local g
	for g; do
		mkdir -p "$XDG_CONFIG_HOME/openshell/gateways/$g"
		echo '{}' >"$XDG_CONFIG_HOME/openshell/gateways/$g/metadata.json"
	done
}

# Completion as bash runs it: the script openshell prints, its function
# called with the words bash would hand it.
bash_complete() {
	bash -c 'PATH=$1:$PATH; eval "$(openshell completion bash)"
		complete -p openshell >/dev/null || exit 9
		shift; COMP_WORDS=(openshell "$@"); COMP_CWORD=$#
		COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
		fn=$(complete -p openshell | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
		$fn openshell "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' bash "$(dirname "$OPENSHELL_BIN")" "$@"
}

@test "bash completes commands, options, their values and gateway names" {
	run bash_complete gateway st
	assert_success
	assert_output "start
status
stop"
	run bash_complete gateway start --gpu-m
	assert_output "--gpu-mode"
	run bash_complete gateway start --gpu-mode ""
	assert_output "auto
cdi
legacy"
	run bash_complete gateway start --gpu-sharing m
	assert_output "mps:"
	run bash_complete help gateway de
	assert_output "destroy"
	run bash_complete completion ""
	assert_output "bash
zsh
fish"
	run bash_complete gateway exec -- ""
	assert_output ""
	# gateway names: the ones `gateway list` knows (here, by their metadata)
	known_gateways alpha beta
	run bash_complete gateway status --name ""
	assert_output "alpha
beta"
	run bash_complete gateway destroy --name b
	assert_output "beta"
}

@test "bash completes --opt=value words, which it splits at the '='" {
	# bash hands "--gpu-mode=c" over as three words (COMP_WORDBREAKS has
	# '='), and readline replaces only what follows the '='
	run bash_complete gateway start --gpu-mode =
	assert_output "auto
cdi
legacy"
	run bash_complete gateway start --gpu-mode = c
	assert_output "cdi"
	run bash_complete gateway start --gpu-sharing = m
	assert_output "mps:"
	known_gateways alpha beta
	run bash_complete gateway status --name = b
	assert_output "beta"
	# after a --opt=value word, the next one is completed as usual
	run bash_complete gateway start --gpu-mode = cdi --gpu-sh
	assert_output "--gpu-sharing"
	# zsh and fish hand the word over whole: whole words come back
	run openshell __complete gateway start --gpu-mode=c
	assert_output "--gpu-mode=cdi"
}

@test "an interactive bash completes on TAB with the script loaded" {
	command -v script >/dev/null || skip "no script(1) (util-linux) to give bash a terminal"
	# Typed into a terminal: load the script, complete a command line with
	# TABs, then put `echo ` before it (Ctrl-A) so that running it prints
	# what readline made of it.
	run bash -c '{ sleep 0.5; printf "%s\n" "eval \"\$(openshell completion bash)\""; sleep 0.3
		printf "openshell gateway sto\t--na\t"; sleep 0.5; printf "\001echo \n"; sleep 0.3
		printf "openshell gateway start --gpu-mode=c\t--gpu-sharing=time\t"; sleep 0.5; printf "\001echo \n"
		sleep 0.3; printf "exit\n"; } |
		PATH=$1:$PATH timeout 20 script -qfc "bash --norc --noprofile -i" /dev/null |
		sed "s/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\r//g"' bash "$(dirname "$OPENSHELL_BIN")"
	assert_success
	assert_line "openshell gateway stop --name"
	# time-slicing: (the device plugin's count) and time-slicing (DRA's) share that much.
	assert_line "openshell gateway start --gpu-mode=cdi --gpu-sharing=time-slicing"
}

@test "--context NAME runs every docker call in that context, over DOCKER_HOST; completion offers the contexts" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	cat >"$BATS_TEST_TMPDIR/bin/docker" <<-EOS
		#!/bin/sh
		echo "\$* DOCKER_CONTEXT=\${DOCKER_CONTEXT-unset} DOCKER_HOST=\${DOCKER_HOST-unset}" >>"$BATS_TEST_TMPDIR/calls"
		[ "\$1 \$2" = "context ls" ] && { printf 'default\\ngpu-box\\ngpu-lab\\n'; exit 0; }
		if [ "\$1" = ps ]; then   # a daemon that does not answer
			trap 'echo "ps stopped" >>"$BATS_TEST_TMPDIR/calls"; exit 143' TERM
			sleep 5 & wait \$!
			echo "ps finished" >>"$BATS_TEST_TMPDIR/calls"
			exit 0
		fi
		echo "Error response from daemon: No such image: \$4" >&2
		exit 1
	EOS
	chmod +x "$BATS_TEST_TMPDIR/bin/docker"
	export OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/bin/docker DOCKER_HOST=tcp://127.0.0.1:1
	run --separate-stderr openshell --context gpu-box image info some:ref
	assert_failure 5
	run cat "$BATS_TEST_TMPDIR/calls"
	assert_output "image inspect -- some:ref DOCKER_CONTEXT=gpu-box DOCKER_HOST=unset"
	# docker's default context takes DOCKER_HOST for its endpoint: kept
	rm "$BATS_TEST_TMPDIR/calls"
	run --separate-stderr openshell --context default image info some:ref
	run cat "$BATS_TEST_TMPDIR/calls"
	assert_output "image inspect -- some:ref DOCKER_CONTEXT=default DOCKER_HOST=tcp://127.0.0.1:1"
	run --separate-stderr openshell --context "" image info some:ref
	assert_failure 2
	[[ "$stderr" == "openshell: error: --context needs a context's name (see 'docker context ls')"* ]]
	PATH=$BATS_TEST_TMPDIR/bin:$PATH run bash_complete --context gpu
	assert_output "gpu-box
gpu-lab"
	# gateway names come from the context typed before, each call cut at
	# 2 s: a daemon that does not answer is stopped before its 5 s are up;
	# the context is docker's to resolve (no call of openshell's asks it)
	rm "$BATS_TEST_TMPDIR/calls"
	export XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config
	PATH=$BATS_TEST_TMPDIR/bin:$PATH run bash_complete --context gpu-lab gateway status --name ""
	assert_output ""
	run grep '^ps -' "$BATS_TEST_TMPDIR/calls"
	assert_output --regexp ' DOCKER_CONTEXT=gpu-lab DOCKER_HOST=unset$'
	run grep -c '^ps stopped$' "$BATS_TEST_TMPDIR/calls"
	assert_output 1
	run grep -c '^ps finished$' "$BATS_TEST_TMPDIR/calls"
	assert_output 0
	run grep -c '^context ' "$BATS_TEST_TMPDIR/calls"
	assert_output 0
	# node add's own --context names the node's daemon, not the gateway's
	rm "$BATS_TEST_TMPDIR/calls"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH run bash_complete gateway node add n --context gpu-box --name ""
	run grep '^ps -' "$BATS_TEST_TMPDIR/calls"
	assert_output --regexp ' DOCKER_CONTEXT=unset DOCKER_HOST=tcp://127\.0\.0\.1:1$'
}

@test "completion refuses what is no shell" {
	run --separate-stderr openshell completion
	assert_failure 2
	[[ "$stderr" == "openshell: error: name a shell: bash, zsh or fish"* ]]
	run --separate-stderr openshell completion tcsh
	assert_failure 2
	[[ "$stderr" == "openshell: error: unknown shell 'tcsh': give bash, zsh or fish"* ]]
	for sh in bash zsh fish; do
		run --separate-stderr openshell completion "$sh"
		assert_success
		assert_output --partial "openshell __complete"
	done
	bash -n <(openshell completion bash)
}

@test "the man page's example GPU pod is the README's sample, which kubectl-real.bats runs" {
	man=$(sed -n '/apply \\-f \\- <<EOF$/,/^EOF$/ { /<<EOF$/d; /^EOF$/d; s/\\-/-/g; p; }' "$OPENSHELL_SRCDIR/doc/openshell.1.in")
	readme=$(awk '/<!-- sample-gpu-pod -->/ { m = 1; next } m && /^```yaml$/ { on = 1; next }
		on && /^```$/ { exit } on' "$OPENSHELL_SRCDIR/README.md")
	[ -n "$readme" ]
	assert_equal "$man" "$readme"
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
	assert_line "  DRA driver image           $(pin DRA_DRIVER_IMAGE)"
	fake_image_docker present
	OPENSHELL_CLUSTER_IMAGE=mine:1 run --separate-stderr openshell version --json
	assert_success
	doc=$output
	run jq -r '[.schema, .openshell_version, .cluster_image.image, .cluster_image.present, .cluster_image.pins.k3s_version,
		.cluster_image.pins.device_plugin_chart_version, .cluster_image.pins.dra_driver_chart_version,
		.cluster_image.pins.smoke_image] | map(tostring) | join(" ")' <<<"$doc"
	assert_output "1 $(openshell --version | cut -d' ' -f2) mine:1 true $(pin K3S_VERSION) $(pin DEVICE_PLUGIN_CHART_VERSION) $(pin DRA_DRIVER_CHART_VERSION) $(pin SMOKE_IMAGE)"
	assert_schema version "$doc"
}

@test "version without a Docker to ask prints all else, present unknown, and exits 3" {
	OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/no-docker run --separate-stderr openshell version --json
	assert_failure 3
	doc=$output
	run jq -r '[.cluster_image.present, .cluster_image.pins.k3s_version] | map(tostring) | join(" ")' <<<"$doc"
	assert_output "null $(pin K3S_VERSION)"
	[[ "$stderr" == "openshell: error: cannot look for image openshell-cluster:"*": OPENSHELL_DOCKER="* ]]
	assert_schema version "$doc"
	run --separate-stderr openshell version extra
	assert_failure 2
}

@test "make install puts the man page and the completions where man and the shells look" {
	builddir=$(dirname "$OPENSHELL_BIN")
	[ -f "$builddir/Makefile" ] || skip "openshell was not built here (no Makefile beside $OPENSHELL_BIN)"
	dest=$BATS_TEST_TMPDIR/dest
	make -s -C "$builddir" DESTDIR="$dest" install-man install-bashcompletionDATA \
		install-zshcompletionDATA install-fishcompletionDATA >/dev/null
	run find "$dest" -type f
	assert_line --regexp '/share/man/man1/openshell\.1$'
	assert_line --regexp '/bash-completion/completions/openshell$'
	assert_line --regexp '/share/zsh/site-functions/_openshell$'
	assert_line --regexp '/share/fish/vendor_completions\.d/openshell\.fish$'
	# what is installed is what the binary prints
	diff <(openshell completion bash) "$(find "$dest" -path '*/bash-completion/completions/openshell')"
	diff <(man_page) "$(find "$dest" -name openshell.1)"
}

@test "a gateway whose recorded daemon is gone: the error says where it lived and how to forget it" {
	export XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config DOCKER_CONFIG=$BATS_TEST_TMPDIR/docker-config
	mkdir -p "$DOCKER_CONFIG"
	# a context whose daemon nobody runs (nothing listens on port 1)
	docker context create gone --docker host=tcp://127.0.0.1:1 >/dev/null
	dir=$XDG_CONFIG_HOME/openshell/gateways/ghost
	mkdir -p "$dir"
	cat >"$dir/metadata.json" <<-EOF
		{"schema": 1, "name": "ghost", "container": "openshell-cluster-ghost", "image": "i:1",
		 "bind": "127.0.0.1", "port": 6443, "gpu": false, "server": "https://127.0.0.1:6443",
		 "kubeconfig": "$dir/kubeconfig", "created": "2026-12-02T00:00:00Z", "user_kubeconfig": null,
		 "docker_context": "gone", "docker_endpoint": "tcp://127.0.0.1:1"}
	EOF
	unset DOCKER_HOST DOCKER_CONTEXT
	for cmd in "gateway status" "gateway destroy --yes"; do
		run --separate-stderr openshell $cmd --name ghost
		assert_failure 3
		[[ "$stderr" == *"(context gone): "*"; gateway 'ghost' lives on that daemon (context gone, tcp://127.0.0.1:1); if it is gone for good, remove $dir to forget the gateway here"* ]] ||
			{ echo "$cmd: $stderr" >&2; return 1; }
	done
	[ -f "$dir/metadata.json" ]
	# metadata older than the daemon's record is asked of the daemon the
	# environment names, beside ghost's own: each its own unknown
	old=$XDG_CONFIG_HOME/openshell/gateways/old
	mkdir -p "$old"
	cat >"$old/metadata.json" <<-EOF
		{"schema": 1, "name": "old", "container": "openshell-cluster-old", "image": "i:1",
		 "bind": "127.0.0.1", "port": 6444, "gpu": false, "server": "https://127.0.0.1:6444",
		 "kubeconfig": "$old/kubeconfig", "created": "2026-12-01T00:00:00Z", "user_kubeconfig": null}
	EOF
	DOCKER_HOST=unix://$BATS_TEST_TMPDIR/none.sock run --separate-stderr openshell gateway list
	assert_failure 3
	assert_line --regexp '^ghost +unknown '
	assert_line --regexp '^old +unknown '
	[[ "$stderr" == *"cannot ask the Docker daemon (unix://$BATS_TEST_TMPDIR/none.sock) about old, listed as unknown"* ]]
	[[ "$stderr" == *"cannot ask the Docker daemon (context gone, tcp://127.0.0.1:1) about ghost, listed as unknown"* ]]
}
