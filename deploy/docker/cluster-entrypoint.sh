#!/bin/sh
# cluster-entrypoint.sh - hand k3s the image's bundle and manifests, then exec k3s.
#
# Runs as the ENTRYPOINT of the openshell cluster image (docs/design.md, "The image"). It must
# work under the image's glibc base (dash) and under the test bed's busybox
# stand-in, so it is plain POSIX sh without jq.
#
# The bundle: /var/lib/rancher/k3s is the gateway's volume, which hides what
# the image has there, so the image keeps its bundle under /opt/openshell and
# this script copies it in at every start (unchanged files are skipped):
#   images/*  -> agent/images/          (k3s imports these tarballs at start)
#   charts/*  -> server/static/charts/  (k3s serves these at /static/charts/)
# A file that an older image bundled and this one does not is removed (the
# records of what was bundled: $K3S_DATA_DIR/openshell/bundle-*).
#
# GPU support is gated on GPU_ENABLED=true (set by `openshell gateway start
# --gpu` together with Docker's --gpus request):
#   - on:  with a selection of GPUs (OPENSHELL_GPU_UUIDS), hide the host's
#          others, which a privileged container gets too (gpu-isolate.sh);
#          copy $GPU_MANIFESTS_DIR/$OPENSHELL_GPU_ALLOCATION/*.yaml into the
#          k3s manifests dir, where the k3s deploy/Helm controllers install
#          the NVIDIA device plugin (device-plugin) or DRA driver (dra), and
#          remove the other allocation's, which an earlier run may have left;
#   - off: hide the host's GPUs (gpu-isolate.sh, keeping none); remove
#          copies of those manifests that an earlier GPU run left on
#          the volume, so a gateway recreated without GPU does not keep
#          installing a device plugin that can only crash-loop.
# Every path is overridable by environment so tests can run this script on a
# temporary directory tree.
set -eu

GPU_MANIFESTS_DIR="${GPU_MANIFESTS_DIR:-/opt/openshell/gpu-manifests}"
OPENSHELL_MANIFESTS_DIR="${OPENSHELL_MANIFESTS_DIR:-/opt/openshell/manifests}"
BUNDLE_DIR="${OPENSHELL_BUNDLE_DIR:-/opt/openshell}"
VERSIONS_FILE="${OPENSHELL_VERSIONS_FILE:-/opt/openshell/versions.env}"
K3S_DATA_DIR="${K3S_DATA_DIR:-/var/lib/rancher/k3s}"
K3S_MANIFESTS_DIR="${K3S_MANIFESTS_DIR:-$K3S_DATA_DIR/server/manifests}"
K3S_BIN="${K3S_BIN:-/usr/local/bin/k3s}"
DEV_DIR="${OPENSHELL_DEV_DIR:-/dev}"
GPU_ISOLATE="${OPENSHELL_GPU_ISOLATE:-/usr/local/bin/gpu-isolate.sh}"
RUNTIME_CONFIG="${OPENSHELL_NVIDIA_RUNTIME_CONFIG:-/etc/nvidia-container-runtime/config.toml}"
PROC_DRIVER_DIR="${OPENSHELL_PROC_DRIVER_DIR:-/proc/driver/nvidia}"
# Where the toolkit's programs are looked for (k3s looks for its runtimes
# with /usr/local/nvidia/toolkit first, too).
TOOLKIT_PATH="${OPENSHELL_TOOLKIT_PATH:-/usr/local/nvidia/toolkit:$PATH}"
CONTAINERD_DIR="$K3S_DATA_DIR/agent/etc/containerd"
# The mount made shared ("" leaves propagation alone: tests on a host).
SHARED_MOUNT="${OPENSHELL_SHARED_MOUNT-/}"
GPU_ENABLED="${GPU_ENABLED:-}"
# How the gateway got its GPUs (openshell's --gpu-mode: legacy or cdi) and
# its MIG strategy, for the device plugin's values.
OPENSHELL_GPU_MODE="${OPENSHELL_GPU_MODE:-legacy}"
OPENSHELL_MIG_STRATEGY="${OPENSHELL_MIG_STRATEGY:-none}"
# Who hands pods their GPUs (openshell's --gpu-allocation): the subdirectory
# of $GPU_MANIFESTS_DIR installed.
OPENSHELL_GPU_ALLOCATION="${OPENSHELL_GPU_ALLOCATION:-device-plugin}"

# Names of the GPU manifests this script installed, so that a later run
# without GPU also removes files whose names changed between image versions.
# k3s only deploys *.yaml, *.yml and *.json files, so it ignores this record.
GPU_RECORD="$K3S_MANIFESTS_DIR/.openshell-gpu-manifests"

log() {
	printf 'openshell-entrypoint: %s\n' "$*"
}

die() {
	printf 'openshell-entrypoint: error: %s\n' "$*" >&2
	exit 1
}

# The sed program that replaces each @KEY@ of a manifest with its pin. The
# values are checked: they come from the image, but land in YAML k3s applies.
render_program() {
	[ -f "$VERSIONS_FILE" ] || return 0
	while IFS= read -r line; do
		case $line in '' | '#'*) continue ;; esac
		key=${line%%=*}
		value=${line#*=}
		case $key in *[!A-Z0-9_]* | '') die "$VERSIONS_FILE: bad line '$line'" ;; esac
		case $value in *[!A-Za-z0-9._:/@+-]*) die "$VERSIONS_FILE: $key has characters a manifest cannot take" ;; esac
		printf 's|@%s@|%s|g\n' "$key" "$value"
	done <"$VERSIONS_FILE"
}

# Render through a temporary file in the target directory and rename, so k3s
# (which watches the directory) never reads a half-written manifest.
install_manifest() {
	src=$1
	dst="$K3S_MANIFESTS_DIR/${src##*/}"
	tmp="$K3S_MANIFESTS_DIR/.${src##*/}.tmp.$$"
	sed "$RENDER" "$src" >"$tmp" || die "cannot render $src into $tmp"
	if grep -q '@[A-Z][A-Z0-9_]*@' "$tmp"; then
		missing=$(grep -o '@[A-Z][A-Z0-9_]*@' "$tmp" | sort -u | tr '\n' ' ')
		rm -f "$tmp"
		die "$src names a pin that $VERSIONS_FILE lacks: $missing"
	fi
	chmod 0644 "$tmp"
	mv -f "$tmp" "$dst" || die "cannot rename $tmp to $dst"
	log "installed manifest $dst"
}

# sync_bundle SRC DST RECORD: copy SRC/* into DST (temporary name, then
# rename, so a watcher never sees half a file; unchanged files, by size and
# time, are skipped), and remove what an earlier image put there and this
# one lacks, as RECORD lists it. The record lives apart from DST: k3s tries
# to import every file of agent/images. An older image's record in DST
# itself (.openshell-bundle) is taken over.
sync_bundle() {
	src=$1 dst=$2 record=$3 old="$2/.openshell-bundle"
	mkdir -p "$dst" "${record%/*}" || die "cannot create $dst and ${record%/*}"
	if [ -f "$old" ]; then
		[ -f "$record" ] || mv -f "$old" "$record" || die "cannot move $old to $record"
		rm -f "$old"
	fi
	names=""
	for f in "$src"/*; do
		[ -f "$f" ] || continue
		name=${f##*/}
		names="$names$name
"
		if [ -f "$dst/$name" ] && [ "$(stat -c '%s %Y' "$f")" = "$(stat -c '%s %Y' "$dst/$name")" ]; then
			continue
		fi
		cp -p "$f" "$dst/.$name.tmp.$$" || die "cannot copy $f into $dst"
		mv -f "$dst/.$name.tmp.$$" "$dst/$name" || die "cannot rename $dst/.$name.tmp.$$"
		log "bundled $dst/$name"
	done
	if [ -f "$record" ]; then
		while IFS= read -r old; do
			case $old in '' | */*) continue ;; esac
			printf '%s' "$names" | grep -qxF "$old" && continue
			rm -f "$dst/$old" && log "removed $dst/$old (no longer in the image's bundle)"
		done <"$record"
	fi
	printf '%s' "$names" >"$record.tmp.$$" && mv -f "$record.tmp.$$" "$record"
}

# The device plugin's values that follow the gateway's own options.
gpu_program() {
	case $OPENSHELL_GPU_MODE in
	legacy) printf 's|@DEVICE_LIST_STRATEGY@|volume-mounts|g\n' ;;
	cdi) printf 's|@DEVICE_LIST_STRATEGY@|cdi-cri|g\n' ;;
	*) die "OPENSHELL_GPU_MODE=$OPENSHELL_GPU_MODE: give legacy or cdi" ;;
	esac
	case $OPENSHELL_MIG_STRATEGY in
	none | single | mixed) printf 's|@MIG_STRATEGY@|%s|g\n' "$OPENSHELL_MIG_STRATEGY" ;;
	*) die "OPENSHELL_MIG_STRATEGY=$OPENSHELL_MIG_STRATEGY: give none, single or mixed" ;;
	esac
}

# A pod gets the GPUs the device plugin allocated it, and no other: the
# nested runtime takes them from the plugin's volume mounts (or CDI), never
# from NVIDIA_VISIBLE_DEVICES of an unprivileged container, which every CUDA
# image sets to "all" and any pod may set (NVIDIA's own advice; the
# toolkit's top-level keys in api/config/v1/config.go). Set at every start:
# the file is the image's, and a new image must not lose it.
secure_runtime_config() {
	[ -f "$RUNTIME_CONFIG" ] || return 0
	tmp="$RUNTIME_CONFIG.tmp.$$"
	{
		# Top-level keys, so before any [table] of the file.
		printf 'accept-nvidia-visible-devices-envvar-when-unprivileged = false\n'
		printf 'accept-nvidia-visible-devices-as-volume-mounts = true\n'
		grep -v -E '^[#[:space:]]*accept-nvidia-visible-devices-(envvar-when-unprivileged|as-volume-mounts)[[:space:]]*=' \
			"$RUNTIME_CONFIG" || true
	} >"$tmp" || die "cannot write $tmp"
	chmod 0644 "$tmp"
	mv -f "$tmp" "$RUNTIME_CONFIG" || die "cannot rename $tmp to $RUNTIME_CONFIG"
}

# A privileged pod gets only the devices its runtime gives it. containerd
# otherwise hands a privileged container every device node it sees and
# lets it open any device (containerd internal/cri/server/container_create.go:
# WithHostDevices, WithAllDevicesAllowed, unless the runtime handler's
# privileged_without_host_devices), and in its own procfs the driver says
# ModifyDeviceFiles: 1, so NVML there makes and opens every GPU of the
# host: a privileged pod (the device plugin's MPS daemon is one) would
# undo the gateway's isolation. A drop-in of k3s's containerd config
# (config-v3.toml.d, which its template imports and containerd merges key
# by key) sets it for runc and for each nvidia runtime k3s will find, as
# k3s looks them up (pkg/agent/containerd/runtimes.go); a drop-in table for
# a runtime k3s does not configure would make one without a type.
containerd_dropin() {
	dir=$CONTAINERD_DIR/config-v3.toml.d
	mkdir -p "$dir" || die "cannot create $dir"
	spec=$(runc_base_spec)
	{
		printf '# Written by the openshell cluster image at every start; see cluster-entrypoint.sh.\n'
		printf 'version = 3\n'
		for rt in runc nvidia:nvidia-container-runtime nvidia-cdi:nvidia-container-runtime.cdi \
			nvidia-experimental:nvidia-container-runtime-experimental; do
			case $rt in
			*:*) PATH=/usr/local/nvidia/toolkit:/opt/kwasm/bin:$PATH command -v "${rt#*:}" >/dev/null 2>&1 || continue ;;
			esac
			printf "\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'%s']\n" "${rt%%:*}"
			printf '  privileged_without_host_devices = true\n'
			[ "$rt" != runc ] || [ -z "$spec" ] || printf "  base_runtime_spec = '%s'\n" "$spec"
		done
	} >"$dir/openshell.toml.tmp.$$" || die "cannot write $dir/openshell.toml"
	mv -f "$dir/openshell.toml.tmp.$$" "$dir/openshell.toml" || die "cannot rename $dir/openshell.toml.tmp.$$"
}

# A pod's procfs is its own, so where the driver is (its params in this
# container's procfs), a runc pod would read ModifyDeviceFiles: 1, whatever
# gpu-isolate.sh bound over this container's: the kernel's. The nvidia
# runtimes mask it in their pods; for runc, containerd's base OCI spec
# (base_runtime_spec, read once at its start: plugins/cri/runtime/
# plugin.go) carries the toolkit's own hook, nvidia-cdi-hook
# disable-device-node-modification, as a createContainer hook, which binds
# a copy saying 0 in the container's mount namespace (runc itself refuses
# any bind inside /proc: libcontainer/rootfs_linux.go checkProcMount). The
# spec is containerd's default (oci/spec.go populateDefaultUnixSpec) less
# what CRI takes out of it when no base spec is named (rlimits, apparmor,
# seccomp: WithoutDefaultSecuritySettings), so that pods differ by the
# hook alone; CRI sets the rest per pod. Prints the spec's path, or
# nothing where no driver is or the toolkit has no hook.
runc_base_spec() {
	[ -f "$PROC_DRIVER_DIR/params" ] || return 0
	hook=$(PATH=$TOOLKIT_PATH command -v nvidia-cdi-hook 2>/dev/null) || {
		log "warning: no nvidia-cdi-hook (NVIDIA Container Toolkit 1.18 or later): runc pods read ModifyDeviceFiles: 1, though their device cgroup lets them open no GPU" >&2
		return 0
	}
	spec=$CONTAINERD_DIR/openshell-runc-spec.json
	caps='"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"'
	cat >"$spec.tmp.$$" <<-SPEC || die "cannot write $spec"
	{
	  "ociVersion": "1.2.0",
	  "process": {
	    "user": { "uid": 0, "gid": 0 },
	    "cwd": "/",
	    "capabilities": { "bounding": [$caps], "effective": [$caps], "permitted": [$caps] },
	    "noNewPrivileges": true
	  },
	  "root": { "path": "rootfs" },
	  "mounts": [
	    { "destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid", "noexec", "nodev"] },
	    { "destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"] },
	    { "destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"] },
	    { "destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"] },
	    { "destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue", "options": ["nosuid", "noexec", "nodev"] },
	    { "destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"] },
	    { "destination": "/run", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"] }
	  ],
	  "hooks": {
	    "createContainer": [ { "path": "$hook", "args": ["nvidia-cdi-hook", "disable-device-node-modification"] } ]
	  },
	  "linux": {
	    "resources": { "devices": [ { "allow": false, "access": "rwm" } ] },
	    "namespaces": [ { "type": "pid" }, { "type": "ipc" }, { "type": "uts" }, { "type": "mount" }, { "type": "network" } ],
	    "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/sys/devices/virtual/powercap", "/proc/scsi"],
	    "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
	  }
	}
	SPEC
	mv -f "$spec.tmp.$$" "$spec" || die "cannot rename $spec.tmp.$$"
	printf '%s\n' "$spec"
}

# remove_gpu_manifests KEEP WHY: remove from k3s's manifests dir every GPU
# manifest of the image (each allocation's) and of the install record that
# KEEP (names, one a line) does not name, saying WHY.
remove_gpu_manifests() {
	keep=$1 why=$2 names=""
	for f in "$GPU_MANIFESTS_DIR"/*/*.yaml; do
		[ -f "$f" ] || continue
		names="$names${f##*/}
"
	done
	if [ -f "$GPU_RECORD" ]; then
		names="$names$(cat "$GPU_RECORD")
"
	fi
	# Names come from our own image and record file; one per line.
	printf '%s' "$names" | while IFS= read -r name; do
		[ -n "$name" ] || continue
		case $name in */*) continue ;; esac
		printf '%s' "$keep" | grep -qxF "$name" && continue
		if [ -e "$K3S_MANIFESTS_DIR/$name" ]; then
			rm -f "$K3S_MANIFESTS_DIR/$name" || die "cannot remove $K3S_MANIFESTS_DIR/$name"
			log "$why: removed stale GPU manifest $K3S_MANIFESTS_DIR/$name"
		fi
	done
}

# A pod's Bidirectional mount (the chart's MPS control daemon mounts
# /run/nvidia/mps so) is refused unless its source is on a shared mount
# (containerd's "is mounted on \"/\" but it is not a shared mount"), and a
# Docker container's / is private (k3s-io/k3s#1846, k3d-io/k3d#1063): make
# it shared, as k3d's entrypoint does. Without it only MPS breaks.
share_root() {
	[ -n "$SHARED_MOUNT" ] || return 0
	mount --make-rshared "$SHARED_MOUNT" ||
		log "warning: cannot make $SHARED_MOUNT a shared mount: MPS sharing (--gpu-sharing mps:N) will not start"
}

mkdir -p "$K3S_MANIFESTS_DIR" || die "cannot create $K3S_MANIFESTS_DIR"
share_root
secure_runtime_config
containerd_dropin
RENDER=$(render_program; gpu_program)
sync_bundle "$BUNDLE_DIR/images" "$K3S_DATA_DIR/agent/images" "$K3S_DATA_DIR/openshell/bundle-images"
sync_bundle "$BUNDLE_DIR/charts" "$K3S_DATA_DIR/server/static/charts" "$K3S_DATA_DIR/openshell/bundle-charts"

# Manifests shipped for every gateway (none yet, but the image has the dir).
if [ -d "$OPENSHELL_MANIFESTS_DIR" ]; then
	for f in "$OPENSHELL_MANIFESTS_DIR"/*.yaml; do
		[ -f "$f" ] || continue
		install_manifest "$f"
	done
fi

if [ "$GPU_ENABLED" = "true" ]; then
	case $OPENSHELL_GPU_ALLOCATION in
	device-plugin | dra) ;;
	*) die "OPENSHELL_GPU_ALLOCATION=$OPENSHELL_GPU_ALLOCATION: give device-plugin or dra" ;;
	esac
	log "GPU_ENABLED=true: enabling NVIDIA GPU support (GPUs through $OPENSHELL_GPU_MODE, allocated by $OPENSHELL_GPU_ALLOCATION, MIG strategy $OPENSHELL_MIG_STRATEGY)"
	# Before k3s, so that nothing in the gateway ever sees the other GPUs.
	"$GPU_ISOLATE"
	installed=""
	for f in "$GPU_MANIFESTS_DIR/$OPENSHELL_GPU_ALLOCATION"/*.yaml; do
		[ -f "$f" ] || continue
		install_manifest "$f"
		installed="$installed${f##*/}
"
	done
	# A GPU gateway without its allocator's manifest can never serve
	# nvidia.com/gpu: stop here, loudly, instead of looking healthy-but-empty.
	[ -n "$installed" ] || die "GPU_ENABLED=true but no *.yaml in $GPU_MANIFESTS_DIR/$OPENSHELL_GPU_ALLOCATION"
	remove_gpu_manifests "$installed" "GPU allocation $OPENSHELL_GPU_ALLOCATION"
	printf '%s' "$installed" >"$GPU_RECORD.tmp.$$"
	mv -f "$GPU_RECORD.tmp.$$" "$GPU_RECORD"

	# Diagnostics only: k3s and the device plugin decide what actually works.
	ngpu=0
	for d in "$DEV_DIR"/nvidia[0-9]*; do
		[ -e "$d" ] && ngpu=$((ngpu + 1))
	done
	if [ "$ngpu" -eq 0 ]; then
		log "warning: no $DEV_DIR/nvidia[0-9]* devices: was the container started with --gpus?"
	else
		log "found $ngpu GPU device(s) in $DEV_DIR"
	fi
	if ! command -v nvidia-container-runtime >/dev/null 2>&1; then
		log "warning: nvidia-container-runtime is not on PATH: k3s will not configure the nvidia runtime"
	fi
else
	if [ -n "$GPU_ENABLED" ]; then
		log "GPU_ENABLED=$GPU_ENABLED is not \"true\": GPU support stays off"
	fi
	# Privileged, the container has the host's GPUs' nodes all the same.
	OPENSHELL_GPU_UUIDS=none "$GPU_ISOLATE"
	remove_gpu_manifests "" "GPU disabled"
	rm -f "$GPU_RECORD"
fi

log "starting k3s: $K3S_BIN $*"
exec "$K3S_BIN" "$@"
