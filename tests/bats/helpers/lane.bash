# shellcheck shell=bash
# lane.bash - a gateway suite in a remote lane (tests/run-lane): its tests
# tagged `lane` rerun against a daemon reached as a GPU host elsewhere is.
#
# tests/run-lane made the lane's sim host ($SIM_HOST_DIR) with the cluster
# image, and its endpoint: DOCKER_HOST=ssh://root@gpu-box:PORT through a real
# sshd (OPENSHELL_TEST_LANE=ssh), or the current docker context of a tcp+TLS
# endpoint (tcp). Everything a suite runs, openshell and its own docker
# calls alike, goes that way, as in a user's shell.
#
#   lane_active          true in a lane
#   LANE_BIND            ssh lane: the box's address, which every
#                        `gateway start` gets as --bind (a user gives one:
#                        the daemon's own loopback is not this machine's)
#   API_ADDR             where a gateway's API is published and its
#                        kubeconfig points: LANE_BIND, else 127.0.0.1

lane_active() {
	[[ -n ${OPENSHELL_TEST_LANE:-} ]]
}

export API_ADDR=${LANE_BIND:-127.0.0.1}

# A gateway start as a user of the lane's daemon types it: with --bind.
if [[ -n ${LANE_BIND:-} ]]; then
	openshell() {
		local args=("$@")
		if [[ " $* " == *" gateway start "* && " $* " != *" --bind"* ]]; then
			args+=(--bind "$LANE_BIND")
		fi
		"$OPENSHELL_SRCDIR/tests/run-under-test" "$OPENSHELL_BIN" "${args[@]}"
	}
fi

# gateway_suite_start in a lane: the lane's host, which has GPUs (2, which
# the suites take from sim_gpu_count) and nothing else a suite may ask for.
lane_suite_start() {
	while (($#)); do
		case $1 in
		--gpus) shift 2 ;;
		*)
			echo "the lanes' sim host is a plain one; a suite that asks for '$*' cannot run in them" >&2
			return 1
			;;
		esac
	done
	export IMAGE=openshell-cluster:sim
	export XDG_CONFIG_HOME=$BATS_FILE_TMPDIR/config
}

# What a suite leaves on the lane's host goes with it, as a sim host's stop
# takes it along (the next suite starts clean); the images stay.
lane_suite_stop() {
	local d=(env "DOCKER_HOST=$LANE_LOCAL_HOST" docker) ids
	mapfile -t ids < <("${d[@]}" ps -aq)
	((${#ids[@]} == 0)) || "${d[@]}" rm -f -v "${ids[@]}" >/dev/null
	mapfile -t ids < <("${d[@]}" volume ls -q)
	((${#ids[@]} == 0)) || "${d[@]}" volume rm "${ids[@]}" >/dev/null
	mapfile -t ids < <("${d[@]}" network ls -q --filter type=custom)
	((${#ids[@]} == 0)) || "${d[@]}" network rm "${ids[@]}" >/dev/null
}
