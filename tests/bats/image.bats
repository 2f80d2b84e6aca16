#!/usr/bin/env bats
# `openshell image build` and `image info`, and how `gateway start` gets its
# image: the default one built when absent, any other pulled, nothing left
# behind when either fails. The recipe is the real deploy/docker/Dockerfile.cluster;
# its download stages are the test bed's local stand-ins (tests/testbed/sim-image).

setup_file() {
	load helpers/gateway
	gateway_suite_start --gpus 1
	# The recipe's stages as the stand-in's images, which a suite's set leaves out.
	sim_real_host || { "$OPENSHELL_SRCDIR/tests/testbed/sim-image" --testbed >/dev/null &&
		: >"$BATS_FILE_TMPDIR/testbed-stages"; }   # standin_recipe's mark: loaded
	export BUILDKIT_DOCKER
	BUILDKIT_DOCKER=$(sim_buildkit_docker)
}

teardown_file() {
	load helpers/gateway
	gateway_suite_stop
}

setup() {
	load helpers/gateway
	sim_only "builds the recipe around the stand-in's local images"
	STANDIN_ARGS=(--build-arg BASE_IMAGE=openshell-testbed/base:sim
		--build-arg SYSTEM_SOURCE=openshell-testbed/system:sim
		--build-arg K3S_SOURCE=openshell-testbed/k3s:sim
		--build-arg BUNDLE_SOURCE=openshell-testbed/bundle:sim)
}

pin() { sed -n "s/^$1=//p" "$OPENSHELL_SRCDIR/deploy/versions.env"; }

@test "image build builds the recipe, a line per step, and prints the tag on stdout" {
	OPENSHELL_DOCKER=$BUILDKIT_DOCKER run --separate-stderr openshell image build --tag ib:1 "${STANDIN_ARGS[@]}"
	assert_success
	assert_output 'ib:1'
	[[ "$stderr" == *"openshell: building image ib:1 from "*"/deploy ..."* ]]
	# BuildKit's steps of the final stage, each named once.
	[[ "$stderr" == *"COPY --from=bundle /out/ /"* ]]
	[[ "$stderr" == *"COPY --chmod=0644 versions.env /opt/openshell/versions.env"* ]]
	docker image inspect ib:1 >/dev/null
}

@test "image info reads the pins back from the image's labels, and checks the bundle is there" {
	run --separate-stderr openshell image info --json "$IMAGE"
	assert_success
	run jq -r '[.k3s_version, .nvidia_container_toolkit_version, .nvidia_runtime_mode,
		.device_plugin_chart_version, .dra_driver_chart_version, .smoke_image, (.bundled_images | join(" ")),
		(.bundled_charts | join(" ")), .self_contained, .openshell_version] | @tsv' <<<"$output"
	assert_output "$(printf '%s\t' "$(pin K3S_VERSION)" "$(pin NVIDIA_CONTAINER_TOOLKIT_VERSION)" \
		"$(pin NVIDIA_RUNTIME_MODE)" "$(pin DEVICE_PLUGIN_CHART_VERSION)" "$(pin DRA_DRIVER_CHART_VERSION)" \
		"$(pin SMOKE_IMAGE)" "$(pin DEVICE_PLUGIN_IMAGE) $(pin DRA_DRIVER_IMAGE) $(pin SMOKE_IMAGE)" \
		"nvidia-device-plugin-$(pin DEVICE_PLUGIN_CHART_VERSION).tgz dra-driver-nvidia-gpu-$(pin DRA_DRIVER_CHART_VERSION).tgz" \
		true)$("$OPENSHELL_BIN" --version | cut -d' ' -f2)"
	run --separate-stderr openshell image info "$IMAGE"
	assert_success
	assert_line "self-contained   yes"
	assert_line "k3s              $(pin K3S_VERSION)"
}

@test "image info says an image without its bundle, or not built by openshell, is not self-contained" {
	run --separate-stderr openshell image info "$IMAGE-nobundle"
	assert_success
	assert_line "self-contained   no: its bundle lacks nvidia-device-plugin-$(pin DEVICE_PLUGIN_CHART_VERSION).tgz"
	run --separate-stderr openshell image info --json openshell-testbed/base:sim
	assert_success
	doc=$output
	run jq -r '[.self_contained, .not_self_contained_because, .k3s_version] | @tsv' <<<"$doc"
	assert_output --regexp $'^false\tit has no openshell labels: .*\t$'
	assert_schema image_info "$doc"
}

@test "image info of an absent image exits 5 and names the command that builds it" {
	run --separate-stderr openshell image info nosuch:1
	assert_failure 5
	[ "$stderr" = "openshell: error: no image nosuch:1 here; build it with 'openshell image build --tag nosuch:1'" ]
}

@test "a failed build names the tag, the failing step and its cause, and tags nothing" {
	OPENSHELL_DOCKER=$BUILDKIT_DOCKER run --separate-stderr openshell image build --tag ibf:1 \
		"${STANDIN_ARGS[@]}" --build-arg BUNDLE_SOURCE=openshell-testbed/nosuch:sim
	assert_failure 1
	[[ "$stderr" == *"openshell: error: docker build of ibf:1 failed at "*"openshell-testbed/nosuch:sim"* ]]
	run docker image inspect ibf:1
	assert_failure
}

@test "a docker CLI without BuildKit is answered with the package that adds it" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	cat >"$BATS_TEST_TMPDIR/bin/docker" <<-'EOF'
	#!/bin/sh
	[ "$1" = build ] || exec docker "$@"
	echo 'ERROR: BuildKit is enabled but the buildx component is missing or broken.' >&2
	echo '       Install the buildx component to build images with BuildKit:' >&2
	exit 1
	EOF
	chmod +x "$BATS_TEST_TMPDIR/bin/docker"
	OPENSHELL_DOCKER=$BATS_TEST_TMPDIR/bin/docker run --separate-stderr openshell image build --tag nb:1
	assert_failure 1
	[[ "$stderr" == *"cannot build with BuildKit"*"apt-get install docker-buildx"* ]]
}

@test "image build refuses bad values before any docker call" {
	run --separate-stderr openshell image build --build-arg novalue
	assert_failure 2
	[ "${stderr_lines[0]}" = "openshell: error: invalid --build-arg 'novalue': give KEY=VALUE" ]
	[ "${stderr_lines[1]}" = "Try 'openshell image build --help' for more information." ]
	run --separate-stderr openshell image build --network '--privileged'
	assert_failure 2
	run --separate-stderr openshell image build --tag '-x'
	assert_failure 2
	run --separate-stderr openshell image build --timeout soon
	assert_failure 2
}

@test "a recipe whose pins are malformed is refused, naming the line" {
	dir=$(standin_recipe)
	printf 'BROKEN LINE\n' >>"$dir/versions.env"
	OPENSHELL_IMAGE_CONTEXT=$dir run --separate-stderr openshell image build --tag bad:1
	assert_failure 1
	[[ "$stderr" == *"$dir/versions.env:"*": not a KEY=VALUE pin"* ]]
}

@test "gateway start builds the default image when it is absent, says so, and starts from it" {
	dir=$(standin_recipe)
	default=$(default_image)
	docker image rm "$default" >/dev/null 2>&1 || true
	OPENSHELL_IMAGE_CONTEXT=$dir OPENSHELL_DOCKER=$BUILDKIT_DOCKER run --separate-stderr \
		openshell gateway start --gpu --name built --port "$(free_port)"
	assert_success
	[[ "$stderr" == *"image $default is not here yet: building it once"* ]]
	run docker inspect openshell-cluster-built --format '{{.Config.Image}}'
	assert_output "$default"
	run --separate-stderr openshell image info "$default"
	assert_line 'self-contained   yes'
	# The next start finds it and builds nothing.
	OPENSHELL_IMAGE_CONTEXT=$dir run --separate-stderr openshell gateway start --gpu --name built2 --port "$(free_port)" --no-wait
	assert_success
	[[ "$stderr" != *"building"* ]]
	openshell -q gateway destroy --name built --yes
	openshell -q gateway destroy --name built2 --yes
}

@test "--no-build refuses an absent default image with the command that builds it; nothing is made" {
	default=$(default_image)
	docker image rm "$default" >/dev/null 2>&1 || true
	run --separate-stderr openshell gateway start --name nob --no-build
	assert_failure 1
	[ "${stderr##*$'\n'}" = "openshell: error: image $default is not built yet; build it with 'openshell image build' (or leave out --no-build, and start builds it)" ]
	assert_no_gateway_resources nob
}

@test "an absent --image is pulled; a failed pull names the ref and the fix, and leaves nothing" {
	for ref in someorg/cluster:1 cluster registry.example.invalid/x/y:2; do
		run --separate-stderr openshell gateway start --name pf --image "$ref"
		assert_failure 1
		[[ "$stderr" == *"openshell: error: cannot get image $ref: docker pull failed"*"check the reference and your access to its registry ('docker login')"* ]]
		assert_no_gateway_resources pf
	done
}

@test "a failing build of the default image by gateway start leaves nothing behind" {
	dir=$(standin_recipe openshell-testbed/nosuch:sim)
	default=$(default_image)
	docker image rm "$default" >/dev/null 2>&1 || true
	OPENSHELL_IMAGE_CONTEXT=$dir OPENSHELL_DOCKER=$BUILDKIT_DOCKER run --separate-stderr \
		openshell gateway start --gpu --name bf --port "$(free_port)"
	assert_failure 1
	[[ "$stderr" == *"docker build of $default failed at "* ]]
	assert_no_gateway_resources bf
	run docker image inspect "$default"
	assert_failure
}

@test "every file of the recipe is installed by make install" {
	sim_only "a check of the source tree"
	cd "$OPENSHELL_SRCDIR"
	for f in $(git ls-files deploy 2>/dev/null || find deploy -type f); do
		grep -qF "	$f" Makefile.am || fail "$f is not in Makefile.am's recipe lists"
	done
}

@test "doctor says whether the cluster image a start would use is built and self-contained" {
	OPENSHELL_CLUSTER_IMAGE=$IMAGE run --separate-stderr openshell doctor --json
	run jq -r '.checks[] | select(.name == "cluster-image") | [.status, .evidence] | @tsv' <<<"$output"
	assert_output "$(printf 'pass\tcluster image %s: self-contained (k3s %s, device plugin %s)' "$IMAGE" \
		"$(pin K3S_VERSION)" "$(pin DEVICE_PLUGIN_CHART_VERSION)")"
	OPENSHELL_CLUSTER_IMAGE=$IMAGE-nobundle run --separate-stderr openshell doctor
	assert_line --partial "warn  cluster image $IMAGE-nobundle: not self-contained, a start may need network: its bundle lacks"
	default=$(default_image)
	docker image rm "$default" >/dev/null 2>&1 || true
	run --separate-stderr openshell doctor
	assert_line "warn  cluster image $default: not here yet (the first 'gateway start' builds it; build it now with 'openshell image build')"
}
