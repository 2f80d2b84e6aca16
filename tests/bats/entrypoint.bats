#!/usr/bin/env bats
# deploy/docker/cluster-entrypoint.sh, run directly (under busybox sh, as in
# the k3s image) against a temporary directory tree.

load helpers/assert

bats_require_minimum_version 1.5.0
SCRIPT=$BATS_TEST_DIRNAME/../../deploy/docker/cluster-entrypoint.sh
REAL_GPU_MANIFESTS=$BATS_TEST_DIRNAME/../../deploy/kube/gpu-manifests
REAL_VERSIONS=$BATS_TEST_DIRNAME/../../deploy/versions.env

setup() {
	root=$BATS_TEST_TMPDIR
	export GPU_MANIFESTS_DIR=$root/opt/gpu-manifests
	export OPENSHELL_MANIFESTS_DIR=$root/opt/manifests
	export K3S_DATA_DIR=$root/k3s
	export K3S_MANIFESTS_DIR=$root/k3s/server/manifests
	export OPENSHELL_BUNDLE_DIR=$root/opt/bundle
	export OPENSHELL_VERSIONS_FILE=$root/opt/versions.env
	export OPENSHELL_DEV_DIR=$root/dev
	# Never this machine's own driver, should it have one: a tree of the test's (absent unless made).
	export OPENSHELL_PROC_DRIVER_DIR=$root/proc/driver/nvidia OPENSHELL_RUN_DIR=$root/run
	export OPENSHELL_GPU_ISOLATE=$BATS_TEST_DIRNAME/../../deploy/docker/gpu-isolate.sh
	export OPENSHELL_NVIDIA_RUNTIME_CONFIG=$root/etc/nvidia-container-runtime/config.toml
	# Never this machine's own /: the test that makes a mount shared does it in a namespace of its own.
	export OPENSHELL_SHARED_MOUNT=
	mkdir -p "$OPENSHELL_BUNDLE_DIR/images" "$OPENSHELL_BUNDLE_DIR/charts"
	cp "$REAL_VERSIONS" "$OPENSHELL_VERSIONS_FILE"
	export K3S_BIN=$root/fake-k3s
	mkdir -p "$GPU_MANIFESTS_DIR" "$OPENSHELL_MANIFESTS_DIR" "$OPENSHELL_DEV_DIR"
	cp -R "$REAL_GPU_MANIFESTS"/. "$GPU_MANIFESTS_DIR/"
	# The exec target records how it was called and what k3s would find.
	cat >"$K3S_BIN" <<-'FAKE'
	#!/bin/sh
	echo "fake-k3s args: $*"
	ls "$K3S_MANIFESTS_DIR" | sed 's/^/fake-k3s sees: /'
	exit 7
	FAKE
	chmod +x "$K3S_BIN"
	unset GPU_ENABLED
}

entrypoint() {
	run busybox sh "$SCRIPT" "$@"
}

@test "GPU_ENABLED=true installs the GPU manifests, then execs k3s with the arguments" {
	touch "$OPENSHELL_DEV_DIR/nvidia0" "$OPENSHELL_DEV_DIR/nvidia1"
	GPU_ENABLED=true entrypoint server --disable=traefik --tls-san=127.0.0.1
	assert_equal "$status" 7 # k3s' status: exec'd, not run as a child
	assert_line "fake-k3s args: server --disable=traefik --tls-san=127.0.0.1"
	assert_line "fake-k3s sees: nvidia-device-plugin-helmchart.yaml"
	assert_line "openshell-entrypoint: GPU_ENABLED=true: enabling NVIDIA GPU support (GPUs through legacy, allocated by device-plugin, MIG strategy none)"
	assert_line "openshell-entrypoint: found 2 GPU device(s) in $OPENSHELL_DEV_DIR"
	# Installed as shipped, but for the pins filled in.
	chart=$(sed -n 's/^DEVICE_PLUGIN_CHART_VERSION=//p' "$REAL_VERSIONS")
	run diff <(sed -e "s/@DEVICE_PLUGIN_CHART_VERSION@/$chart/" -e 's/@DEVICE_LIST_STRATEGY@/volume-mounts/' \
		-e 's/@MIG_STRATEGY@/none/' "$REAL_GPU_MANIFESTS/device-plugin/nvidia-device-plugin-helmchart.yaml") \
		"$K3S_MANIFESTS_DIR/nvidia-device-plugin-helmchart.yaml"
	assert_success
	grep -q '^    deviceListStrategy: volume-mounts$' "$K3S_MANIFESTS_DIR/nvidia-device-plugin-helmchart.yaml"
	grep -q '^    migStrategy: none$' "$K3S_MANIFESTS_DIR/nvidia-device-plugin-helmchart.yaml"
	run ls -A "$K3S_MANIFESTS_DIR"
	refute_output --partial ".tmp."
}

@test "a CDI gateway's plugin hands out CDI devices; the MIG strategy reaches the chart" {
	OPENSHELL_GPU_MODE=cdi OPENSHELL_MIG_STRATEGY=mixed GPU_ENABLED=true entrypoint server
	assert_equal "$status" 7
	assert_line "openshell-entrypoint: GPU_ENABLED=true: enabling NVIDIA GPU support (GPUs through cdi, allocated by device-plugin, MIG strategy mixed)"
	grep -q '^    deviceListStrategy: cdi-cri$' "$K3S_MANIFESTS_DIR/nvidia-device-plugin-helmchart.yaml"
	grep -q '^    migStrategy: mixed$' "$K3S_MANIFESTS_DIR/nvidia-device-plugin-helmchart.yaml"
}

@test "a GPU mode or MIG strategy the chart cannot take stops the start before k3s" {
	OPENSHELL_GPU_MODE=volume GPU_ENABLED=true entrypoint server
	assert_failure 1
	assert_output --partial "error: OPENSHELL_GPU_MODE=volume: give legacy or cdi"
	refute_output --partial "fake-k3s"
	OPENSHELL_MIG_STRATEGY='x|y' GPU_ENABLED=true entrypoint server
	assert_failure 1
	assert_output --partial "error: OPENSHELL_MIG_STRATEGY=x|y: give none, single or mixed"
	refute_output --partial "fake-k3s"
}

@test "the nested runtime takes a pod's GPUs from the plugin's mounts, never from an unprivileged NVIDIA_VISIBLE_DEVICES" {
	mkdir -p "$(dirname "$OPENSHELL_NVIDIA_RUNTIME_CONFIG")"
	cp "$BATS_TEST_DIRNAME/fixtures/nvidia-container-runtime-config.toml" "$OPENSHELL_NVIDIA_RUNTIME_CONFIG"
	for start in first second; do
		entrypoint server
		assert_equal "$status" 7
		# As the runtime reads it: TOML, the keys top-level, the rest kept.
		run /usr/bin/python3 -c 'import sys, tomllib; d = tomllib.load(open(sys.argv[1], "rb"))
print(d["accept-nvidia-visible-devices-envvar-when-unprivileged"], d["accept-nvidia-visible-devices-as-volume-mounts"],
      d["nvidia-container-runtime"]["mode"], d["nvidia-container-cli"]["ldconfig"])' "$OPENSHELL_NVIDIA_RUNTIME_CONFIG"
		assert_success
		assert_output "False True jit-cdi @/sbin/ldconfig.real"
	done
	# Once each, however often the entrypoint ran.
	assert_equal "$(grep -c 'accept-nvidia-visible-devices' "$OPENSHELL_NVIDIA_RUNTIME_CONFIG")" 2
	# An image without the toolkit has no file to edit, and gets none.
	rm "$OPENSHELL_NVIDIA_RUNTIME_CONFIG"
	entrypoint server
	assert_equal "$status" 7
	assert [ ! -e "$OPENSHELL_NVIDIA_RUNTIME_CONFIG" ]
}

@test "the container's / is made a shared mount, for Bidirectional mounts such as MPS's" {
	mkdir -p "$root/mnt"
	run unshare -m --propagation private sh -c "mount -t tmpfs tmpfs '$root/mnt' &&
		grep ' $root/mnt ' /proc/self/mountinfo | grep -c shared: ;
		OPENSHELL_SHARED_MOUNT='$root/mnt' busybox sh '$SCRIPT' server >/dev/null;
		grep ' $root/mnt ' /proc/self/mountinfo | grep -c shared:"
	assert_output "0
1"
}

@test "a selection of GPUs is isolated before k3s; a GPU the driver lacks stops the start" {
	proc=$root/proc/driver/nvidia
	mkdir -p "$proc/gpus/0000:18:00.0" "$proc/gpus/0000:2a:00.0"
	printf 'ModifyDeviceFiles: 0\n' >"$proc/params"
	printf 'GPU UUID: \t GPU-aaaa\nDevice Minor: \t 1\n' >"$proc/gpus/0000:18:00.0/information"
	printf 'GPU UUID: \t GPU-bbbb\nDevice Minor: \t 0\n' >"$proc/gpus/0000:2a:00.0/information"
	touch "$OPENSHELL_DEV_DIR/nvidia0" "$OPENSHELL_DEV_DIR/nvidia1"
	OPENSHELL_GPU_UUIDS=GPU-aaaa GPU_ENABLED=true entrypoint server
	assert_equal "$status" 7
	assert_line "openshell-entrypoint: GPUs of this gateway: /dev/nvidia1; removed the host's others: /dev/nvidia0"
	assert_line "openshell-entrypoint: found 1 GPU device(s) in $OPENSHELL_DEV_DIR"
	assert_line "fake-k3s args: server"
	OPENSHELL_GPU_UUIDS=GPU-cccc GPU_ENABLED=true entrypoint server
	assert_failure 1
	assert_output --partial "the NVIDIA driver lists no GPU GPU-cccc"
	refute_output --partial "fake-k3s"
	# Without GPUs the gateway keeps none of the host's.
	touch "$OPENSHELL_DEV_DIR/nvidia0" "$OPENSHELL_DEV_DIR/nvidia1"
	entrypoint server
	assert_equal "$status" 7
	assert_line "openshell-entrypoint: GPUs of this gateway: none; removed the host's others: /dev/nvidia1 /dev/nvidia0"
	assert [ ! -e "$OPENSHELL_DEV_DIR/nvidia0" ]
	assert [ ! -e "$OPENSHELL_DEV_DIR/nvidia1" ]
}

@test "GPU_ENABLED=true without /dev/nvidia* warns that --gpus may be missing" {
	GPU_ENABLED=true entrypoint server
	assert_equal "$status" 7
	assert_line "openshell-entrypoint: warning: no $OPENSHELL_DEV_DIR/nvidia[0-9]* devices: was the container started with --gpus?"
}

@test "GPU_ENABLED=true with no GPU manifest fails loudly before k3s starts" {
	rm -f "$GPU_MANIFESTS_DIR"/device-plugin/*.yaml
	GPU_ENABLED=true entrypoint server
	assert_failure 1
	assert_output --partial "error: GPU_ENABLED=true but no *.yaml in $GPU_MANIFESTS_DIR/device-plugin"
	refute_output --partial "fake-k3s"
}

@test "without GPU_ENABLED a stale GPU manifest on the volume is removed" {
	GPU_ENABLED=true entrypoint server
	assert_line "fake-k3s sees: nvidia-device-plugin-helmchart.yaml"
	entrypoint server
	assert_equal "$status" 7
	assert_line "openshell-entrypoint: GPU disabled: removed stale GPU manifest $K3S_MANIFESTS_DIR/nvidia-device-plugin-helmchart.yaml"
	refute_line --partial "fake-k3s sees: nvidia-device-plugin"
	[ ! -e "$K3S_MANIFESTS_DIR/.openshell-gpu-manifests" ]
}

@test "a GPU manifest renamed by a newer image is still removed (install record)" {
	GPU_ENABLED=true entrypoint server
	mv "$GPU_MANIFESTS_DIR/device-plugin/nvidia-device-plugin-helmchart.yaml" "$GPU_MANIFESTS_DIR/device-plugin/renamed.yaml"
	entrypoint server
	refute_line --partial "fake-k3s sees: nvidia-device-plugin"
}

@test "with GPU too, a manifest renamed by a newer image goes by the install record; the new name stays" {
	GPU_ENABLED=true entrypoint server
	assert_line "fake-k3s sees: nvidia-device-plugin-helmchart.yaml"
	mv "$GPU_MANIFESTS_DIR/device-plugin/nvidia-device-plugin-helmchart.yaml" "$GPU_MANIFESTS_DIR/device-plugin/renamed.yaml"
	GPU_ENABLED=true entrypoint server
	assert_line "openshell-entrypoint: GPU allocation device-plugin: removed stale GPU manifest $K3S_MANIFESTS_DIR/nvidia-device-plugin-helmchart.yaml"
	assert_line "fake-k3s sees: renamed.yaml"
	refute_line --partial "fake-k3s sees: nvidia-device-plugin"
}

@test "OPENSHELL_GPU_ALLOCATION=dra installs the DRA driver's chart in place of the device plugin's, and back" {
	GPU_ENABLED=true entrypoint server
	assert_line "fake-k3s sees: nvidia-device-plugin-helmchart.yaml"
	GPU_ENABLED=true OPENSHELL_GPU_ALLOCATION=dra entrypoint server
	assert_equal "$status" 7
	assert_line "openshell-entrypoint: GPU allocation dra: removed stale GPU manifest $K3S_MANIFESTS_DIR/nvidia-device-plugin-helmchart.yaml"
	assert_line "fake-k3s sees: dra-driver-nvidia-gpu-helmchart.yaml"
	refute_line "fake-k3s sees: nvidia-device-plugin-helmchart.yaml"
	# Rendered with the pin: the chart k3s serves from the bundle.
	run grep -F "chart: https://%{KUBERNETES_API}%/static/charts/dra-driver-nvidia-gpu-$(sed -n 's/^DRA_DRIVER_CHART_VERSION=//p' "$REAL_VERSIONS").tgz" \
		"$K3S_MANIFESTS_DIR/dra-driver-nvidia-gpu-helmchart.yaml"
	assert_success
	GPU_ENABLED=true entrypoint server
	assert_line "openshell-entrypoint: GPU allocation device-plugin: removed stale GPU manifest $K3S_MANIFESTS_DIR/dra-driver-nvidia-gpu-helmchart.yaml"
	assert_line "fake-k3s sees: nvidia-device-plugin-helmchart.yaml"
	entrypoint server
	refute_line --partial "fake-k3s sees: nvidia"
	refute_line --partial "fake-k3s sees: dra"
}

@test "an allocation the image has no manifests for stops the start before k3s" {
	GPU_ENABLED=true OPENSHELL_GPU_ALLOCATION=devices entrypoint server
	assert_failure 1
	assert_output --partial "error: OPENSHELL_GPU_ALLOCATION=devices: give device-plugin or dra"
	refute_output --partial "fake-k3s"
}

@test "GPU_ENABLED other than true keeps GPU support off and says so" {
	GPU_ENABLED=1 entrypoint server
	assert_equal "$status" 7
	assert_line 'openshell-entrypoint: GPU_ENABLED=1 is not "true": GPU support stays off'
	refute_line --partial "fake-k3s sees:"
}

@test "without GPU, manifests that are not GPU manifests are left alone" {
	mkdir -p "$K3S_MANIFESTS_DIR"
	echo "kind: ConfigMap" >"$K3S_MANIFESTS_DIR/user.yaml"
	entrypoint server
	assert_line "fake-k3s sees: user.yaml"
	refute_line --partial "removed stale"
}

@test "shipped manifests in /opt/openshell/manifests are installed with or without GPU" {
	echo "kind: ConfigMap" >"$OPENSHELL_MANIFESTS_DIR/base.yaml"
	echo "not yaml" >"$OPENSHELL_MANIFESTS_DIR/README"
	entrypoint server
	assert_line "fake-k3s sees: base.yaml"
	refute_line "fake-k3s sees: README"
}

@test "a manifest naming a pin the versions file lacks stops the start, naming it" {
	sed -i '/^DEVICE_PLUGIN_CHART_VERSION=/d' "$OPENSHELL_VERSIONS_FILE"
	GPU_ENABLED=true entrypoint server
	assert_failure 1
	assert_output --partial "names a pin that $OPENSHELL_VERSIONS_FILE lacks: @DEVICE_PLUGIN_CHART_VERSION@"
	refute_output --partial "fake-k3s"
	run ls -A "$K3S_MANIFESTS_DIR"
	refute_output --partial "helmchart"
}

@test "a pin a manifest cannot take is refused" {
	echo 'DEVICE_PLUGIN_CHART_VERSION=0.20.0|evil' >>"$OPENSHELL_VERSIONS_FILE"
	GPU_ENABLED=true entrypoint server
	assert_failure 1
	assert_output --partial "DEVICE_PLUGIN_CHART_VERSION has characters a manifest cannot take"
}

@test "the bundle is copied into the volume, unchanged files are skipped, dropped ones removed" {
	echo image-a >"$OPENSHELL_BUNDLE_DIR/images/a.tar"
	echo chart >"$OPENSHELL_BUNDLE_DIR/charts/c-1.tgz"
	entrypoint server
	assert_equal "$status" 7
	assert_line "openshell-entrypoint: bundled $K3S_DATA_DIR/agent/images/a.tar"
	assert_line "openshell-entrypoint: bundled $K3S_DATA_DIR/server/static/charts/c-1.tgz"
	cmp "$OPENSHELL_BUNDLE_DIR/images/a.tar" "$K3S_DATA_DIR/agent/images/a.tar"
	# Again: nothing to copy.
	entrypoint server
	refute_line --partial "bundled"
	# A newer image: a.tar changed, the chart replaced by another version.
	echo image-a2 >"$OPENSHELL_BUNDLE_DIR/images/a.tar"
	touch -d '2001-01-01' "$OPENSHELL_BUNDLE_DIR/images/a.tar"
	rm "$OPENSHELL_BUNDLE_DIR/charts/c-1.tgz"
	echo chart2 >"$OPENSHELL_BUNDLE_DIR/charts/c-2.tgz"
	entrypoint server
	assert_line "openshell-entrypoint: bundled $K3S_DATA_DIR/agent/images/a.tar"
	assert_line "openshell-entrypoint: removed $K3S_DATA_DIR/server/static/charts/c-1.tgz (no longer in the image's bundle)"
	cmp "$OPENSHELL_BUNDLE_DIR/images/a.tar" "$K3S_DATA_DIR/agent/images/a.tar"
	[ -f "$K3S_DATA_DIR/server/static/charts/c-2.tgz" ]
	[ ! -e "$K3S_DATA_DIR/server/static/charts/c-1.tgz" ]
	# A file the user put there is not the bundle's: left alone.
	echo mine >"$K3S_DATA_DIR/agent/images/mine.tar"
	entrypoint server
	[ -f "$K3S_DATA_DIR/agent/images/mine.tar" ]
	# Nothing but images where k3s imports every file.
	run ls -A "$K3S_DATA_DIR/agent/images"
	assert_output "a.tar
mine.tar"
}

@test "an older image's bundle record in agent/images is taken over and removed" {
	mkdir -p "$K3S_DATA_DIR/agent/images"
	echo old >"$K3S_DATA_DIR/agent/images/old.tar"
	printf 'old.tar\n' >"$K3S_DATA_DIR/agent/images/.openshell-bundle"
	echo image-a >"$OPENSHELL_BUNDLE_DIR/images/a.tar"
	entrypoint server
	assert_line "openshell-entrypoint: removed $K3S_DATA_DIR/agent/images/old.tar (no longer in the image's bundle)"
	run ls -A "$K3S_DATA_DIR/agent/images"
	assert_output "a.tar"
	assert_equal "$(cat "$K3S_DATA_DIR/openshell/bundle-images")" "a.tar"
}

@test "the entrypoint is POSIX sh and shellcheck-clean" {
	run shellcheck -s sh "$SCRIPT"
	assert_success
}

@test "a drop-in of k3s's containerd config keeps host devices from privileged pods, for runc and each nvidia runtime k3s finds" {
	bin=$BATS_TEST_TMPDIR/bin
	mkdir -p "$bin"
	printf '#!/bin/sh\n' >"$bin/nvidia-container-runtime"
	printf '#!/bin/sh\n' >"$bin/nvidia-container-runtime.cdi"
	chmod +x "$bin"/*
	PATH=$bin:$PATH entrypoint server
	f=$K3S_DATA_DIR/agent/etc/containerd/config-v3.toml.d/openshell.toml
	run /usr/bin/python3 -c 'import sys, tomllib, json; print(json.dumps(tomllib.load(open(sys.argv[1], "rb")), sort_keys=True))' "$f"
	assert_success
	assert_output '{"plugins": {"io.containerd.cri.v1.runtime": {"containerd": {"runtimes": {"nvidia": {"privileged_without_host_devices": true}, "nvidia-cdi": {"privileged_without_host_devices": true}, "runc": {"privileged_without_host_devices": true}}}}}, "version": 3}'
	# Without the toolkit: runc alone (a table for a runtime k3s does not make would make one without a type).
	PATH=/usr/bin:/bin entrypoint server
	run grep -c privileged_without_host_devices "$f"
	assert_output 1
}

@test "where the driver is, runc's base OCI spec runs the toolkit's disable-device-node-modification hook" {
	bin=$BATS_TEST_TMPDIR/bin
	mkdir -p "$bin" "$OPENSHELL_PROC_DRIVER_DIR"
	printf '#!/bin/sh\n' >"$bin/nvidia-cdi-hook"
	chmod +x "$bin/nvidia-cdi-hook"
	printf 'ModifyDeviceFiles: 1\n' >"$OPENSHELL_PROC_DRIVER_DIR/params"
	# The toolkit is looked for here alone, not on a GPU host's own PATH.
	OPENSHELL_TOOLKIT_PATH=$bin entrypoint server
	f=$K3S_DATA_DIR/agent/etc/containerd/config-v3.toml.d/openshell.toml
	spec=$K3S_DATA_DIR/agent/etc/containerd/openshell-runc-spec.json
	run /usr/bin/python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["runtimes"]["runc"]["base_runtime_spec"])' "$f"
	assert_output "$spec"
	# containerd's default spec less what CRI drops without a base spec, and the hook.
	run jq -c '[.hooks.createContainer, .process.rlimits, .process.apparmorProfile, .linux.seccomp, [.mounts[].destination], .linux.resources.devices]' "$spec"
	assert_output '[[{"path":"'"$bin"'/nvidia-cdi-hook","args":["nvidia-cdi-hook","disable-device-node-modification"]}],null,null,null,["/proc","/dev","/dev/pts","/dev/shm","/dev/mqueue","/sys","/run"],[{"allow":false,"access":"rwm"}]]'
	# No hook in the image: no base spec, and a warning that says what follows.
	# (gpu-isolate.sh then stops at this tree's procfs, which has no gpus/)
	mkdir -p "$BATS_TEST_TMPDIR/empty"
	run --separate-stderr env OPENSHELL_TOOLKIT_PATH="$BATS_TEST_TMPDIR/empty" busybox sh "$SCRIPT" server
	[[ $stderr == *"warning: no nvidia-cdi-hook (NVIDIA Container Toolkit 1.18 or later): runc pods read ModifyDeviceFiles: 1"* ]]
	run grep -c base_runtime_spec "$f"
	assert_output 0
	# No driver: nothing to mask.
	rm "$OPENSHELL_PROC_DRIVER_DIR/params"
	OPENSHELL_TOOLKIT_PATH=$bin entrypoint server
	run grep -c base_runtime_spec "$f"
	assert_output 0
}
