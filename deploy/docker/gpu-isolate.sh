#!/bin/sh
# gpu-isolate.sh - leave the gateway's privileged container only the GPUs it was given.
#
# A privileged container gets every device node of the host (moby daemon/oci_linux.go,
# WithDevices: containerd's HostDevices), whatever --gpus selected, and NVML - the device plugin
# with it - sees every GPU whose /dev/nvidiaN is there; while the driver may modify device files,
# it makes the missing ones again. `openshell gateway start --gpus SELECTION` passes the
# selection's GPUs as OPENSHELL_GPU_UUIDS, and cluster-entrypoint.sh runs this at every start (a
# restart brings every node back), before k3s. As NVIDIA/nvkind does for the GPUs of a kind node
# (pkg/nvkind/node.go: PatchProcDriverNvidia, removeDeviceNodes), it
#   1. undoes a tmpfs over /proc/driver/nvidia (libnvidia-container's mount_procfs, which lists
#      only the selected GPUs), so that the driver's own list of GPUs is read;
#   2. stops the driver making device nodes: "ModifyDeviceFiles: 1" in params gets a copy saying
#      0 bound over it (the toolkit's disable-device-node-modification hook, nvidia-ctk >= 1.18,
#      has done so already for a CDI container, whose params then says 0);
#   3. unmounts and removes /dev/nvidiaN of every GPU not selected - N its "Device Minor" in
#      /proc/driver/nvidia/gpus/BUS/information, which need not be its index - and the
#      /dev/nvidia-caps/nvidia-capN of its MIG instances (capabilities/gpuN/mig/**/access);
#   4. of a selected GPU whose MIG devices were given one by one (--gpus MIG-...), removes the
#      capabilities of its other MIG instances: the hook's tmpfs (step 1, read before it is
#      undone) holds the access files of the MIG devices given, bound there by
#      libnvidia-container's mount_procfs_mig. A CDI container has no such tmpfs: there
#      `gateway start` passes the capabilities that an unprivileged container given the same
#      CDI devices gets, as OPENSHELL_GPU_CAPS (minors, comma-separated).
# A selected GPU that the driver does not list stops the start: the gateway must never come up
# with other GPUs than asked for. OPENSHELL_GPU_UUIDS=none (a gateway without GPUs) keeps none,
# and on a host without the NVIDIA driver does nothing.
#
# POSIX sh, for the image's dash and the test bed's busybox. Every path can be overridden, so
# that tests run it on a temporary tree (in a mount namespace of their own).
set -eu

PROC_DIR="${OPENSHELL_PROC_DRIVER_DIR:-/proc/driver/nvidia}"
DEV_DIR="${OPENSHELL_DEV_DIR:-/dev}"
RUN_DIR="${OPENSHELL_RUN_DIR:-/run/openshell}"
MOUNTINFO="${OPENSHELL_MOUNTINFO:-/proc/self/mountinfo}"
UUIDS="${OPENSHELL_GPU_UUIDS:-}"
CAPS="${OPENSHELL_GPU_CAPS:-}"

log() {
	printf 'openshell-entrypoint: %s\n' "$*"
}

die() {
	printf 'openshell-entrypoint: error: %s\n' "$*" >&2
	exit 1
}

# Mount points at PATH or below it, deepest first (mountinfo's fifth field).
mounts_under() {
	awk -v p="$1" '$5 == p || index($5, p "/") == 1 { print $5 }' "$MOUNTINFO" | sort -r
}

# Unmount whatever is mounted at PATH, however often, then remove it.
remove_node() {
	while [ -n "$(mounts_under "$1" | grep -xF "$1" || true)" ]; do
		umount "$1" || die "cannot unmount $1"
	done
	rm -f "$1" || die "cannot remove $1"
}

# The value of FIELD ("Device Minor", "GPU UUID", "DeviceFileMinor") in a procfs FILE.
field() {
	sed -n "s/^$2:[[:space:]]*//p" "$1" | head -n 1
}

[ -n "$UUIDS" ] || exit 0
[ "$UUIDS" != none ] || [ -d "$PROC_DIR" ] || exit 0

# The MIG capabilities the hook gave, per GPU ("gpuN:MINOR ..."), from its tmpfs: a mount over
# /proc/driver/nvidia itself (the CDI hook's bind over params alone is not one).
given_caps=""
if mounts_under "$PROC_DIR" | grep -qxF "$PROC_DIR"; then
	for d in "$PROC_DIR"/capabilities/gpu*/mig; do
		[ -d "$d" ] || continue
		gpu=${d%/mig}
		gpu=${gpu##*/}
		given_caps="$given_caps $(find "$d" -name access -exec sed -n "s/^DeviceFileMinor:[[:space:]]*/$gpu:/p" {} + | tr '\n' ' ')"
	done
fi

# MINOR's MIG instances' capability minors, in the driver's view.
mig_caps() {
	[ -d "$PROC_DIR/capabilities/gpu$1" ] || return 0
	find "$PROC_DIR/capabilities/gpu$1" -name access -exec sed -n 's/^DeviceFileMinor:[[:space:]]*//p' {} +
}

# Remove /dev/nvidia-caps/nvidia-capN, noting it in $removed.
remove_cap() {
	case $1 in '' | *[!0-9]*) return 0 ;; esac
	if [ -e "$DEV_DIR/nvidia-caps/nvidia-cap$1" ]; then
		remove_node "$DEV_DIR/nvidia-caps/nvidia-cap$1"
		removed="$removed /dev/nvidia-caps/nvidia-cap$1"
	fi
}

# 1. The driver's own view of the GPUs.
for m in $(mounts_under "$PROC_DIR"); do
	umount "$m" || die "cannot unmount $m to read the driver's /proc/driver/nvidia"
done
# With CDI no tmpfs says which MIG instances were given: `gateway start`
# found what a container given the same devices gets (OPENSHELL_GPU_CAPS,
# minors), each placed under its GPU by the driver's own list.
if [ -z "$given_caps" ] && [ -n "$CAPS" ]; then
	for d in "$PROC_DIR"/capabilities/gpu*/mig; do
		[ -d "$d" ] || continue
		gpu=${d%/mig}
		gpu=${gpu##*/}
		given_caps="$given_caps $(find "$d" -name access -exec sed -n 's/^DeviceFileMinor:[[:space:]]*//p' {} + |
			while read -r m; do case ",$CAPS," in *",$m,"*) printf '%s:%s ' "$gpu" "$m" ;; esac; done)"
	done
	case $given_caps in *[!\ ]*) ;; *) die "none of the MIG capabilities $CAPS is one the driver lists: the gateway would keep every instance of its GPUs; recreate it (openshell gateway start --recreate ...)" ;; esac
fi
[ -d "$PROC_DIR/gpus" ] ||
	die "$PROC_DIR/gpus does not exist: the NVIDIA driver's procfs is not visible, so GPUs $UUIDS cannot be told from the others"

# 2. No new device nodes.
if grep -q '^ModifyDeviceFiles: 1$' "$PROC_DIR/params"; then
	mkdir -p "$RUN_DIR" || die "cannot create $RUN_DIR"
	sed 's/^ModifyDeviceFiles: 1$/ModifyDeviceFiles: 0/' "$PROC_DIR/params" >"$RUN_DIR/nvidia-params" ||
		die "cannot write $RUN_DIR/nvidia-params"
	mount --bind "$RUN_DIR/nvidia-params" "$PROC_DIR/params" ||
		die "cannot bind $RUN_DIR/nvidia-params over $PROC_DIR/params: the driver would make the other GPUs' device nodes again"
	log "the driver makes no GPU device nodes in this container (ModifyDeviceFiles: 0)"
fi

# 3. The GPUs: the selected ones kept, the others' nodes gone.
kept="" removed="" found=""
for info in "$PROC_DIR"/gpus/*/information; do
	[ -f "$info" ] || continue
	uuid=$(field "$info" "GPU UUID")
	minor=$(field "$info" "Device Minor")
	case $minor in '' | *[!0-9]*) die "$info names no device minor" ;; esac
	caps=$(mig_caps "$minor")
	case ",$UUIDS," in
	*",$uuid,"*)
		found="$found,$uuid"
		kept="$kept /dev/nvidia$minor"
		# 4. Given MIG device by MIG device: the others' capabilities go.
		case "$given_caps " in *" gpu$minor:"*) ;; *) continue ;; esac
		for cap in $caps; do
			case "$given_caps " in *" gpu$minor:$cap "*) ;; *) remove_cap "$cap" ;; esac
		done
		continue
		;;
	esac
	node="$DEV_DIR/nvidia$minor"
	if [ -e "$node" ]; then
		remove_node "$node"
		removed="$removed /dev/nvidia$minor"
	fi
	for cap in $caps; do
		remove_cap "$cap"
	done
done
for uuid in $(printf '%s' "$UUIDS" | tr ',' ' '); do
	[ "$uuid" != none ] || continue
	case "$found," in
	*",$uuid,"*) ;;
	*) die "the NVIDIA driver lists no GPU $uuid in $PROC_DIR/gpus: recreate the gateway with GPUs this host has (openshell gateway start --recreate --gpus ...)" ;;
	esac
done
log "GPUs of this gateway:${kept:- none}; removed the host's others:${removed:- none}"
