#!/bin/sh
# cluster-entrypoint.sh - prepare the k3s auto-deploy manifests, then exec k3s.
#
# Runs as the ENTRYPOINT of the openshell cluster image (design.md §6). It must
# work under the real rancher/k3s image (busybox-like sh, no bash, no jq) and
# under the test bed's busybox stand-in, so it is plain POSIX sh.
#
# GPU support is gated on GPU_ENABLED=true (set by `openshell gateway start
# --gpu` together with Docker's --gpus request):
#   - on:  copy $GPU_MANIFESTS_DIR/*.yaml into the k3s manifests dir, where the
#          k3s deploy/Helm controllers install the NVIDIA device plugin;
#   - off: remove copies of those manifests that an earlier GPU run left on
#          the volume, so a gateway recreated without GPU does not keep
#          installing a device plugin that can only crash-loop.
# Every path is overridable by environment so tests can run this script on a
# temporary directory tree.
set -eu

GPU_MANIFESTS_DIR="${GPU_MANIFESTS_DIR:-/opt/openshell/gpu-manifests}"
OPENSHELL_MANIFESTS_DIR="${OPENSHELL_MANIFESTS_DIR:-/opt/openshell/manifests}"
K3S_MANIFESTS_DIR="${K3S_MANIFESTS_DIR:-/var/lib/rancher/k3s/server/manifests}"
K3S_BIN="${K3S_BIN:-/bin/k3s}"
DEV_DIR="${OPENSHELL_DEV_DIR:-/dev}"
GPU_ENABLED="${GPU_ENABLED:-}"

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

# Copy through a temporary file in the target directory and rename, so k3s
# (which watches the directory) never reads a half-written manifest.
install_manifest() {
	src=$1
	dst="$K3S_MANIFESTS_DIR/$(basename "$src")"
	tmp="$K3S_MANIFESTS_DIR/.$(basename "$src").tmp.$$"
	cp "$src" "$tmp" || die "cannot copy $src to $tmp"
	chmod 0644 "$tmp"
	mv -f "$tmp" "$dst" || die "cannot rename $tmp to $dst"
	log "installed manifest $dst"
}

mkdir -p "$K3S_MANIFESTS_DIR" || die "cannot create $K3S_MANIFESTS_DIR"

# Manifests shipped for every gateway (none yet, but the image has the dir).
if [ -d "$OPENSHELL_MANIFESTS_DIR" ]; then
	for f in "$OPENSHELL_MANIFESTS_DIR"/*.yaml; do
		[ -f "$f" ] || continue
		install_manifest "$f"
	done
fi

if [ "$GPU_ENABLED" = "true" ]; then
	log "GPU_ENABLED=true: enabling NVIDIA GPU support"
	installed=""
	for f in "$GPU_MANIFESTS_DIR"/*.yaml; do
		[ -f "$f" ] || continue
		install_manifest "$f"
		installed="$installed$(basename "$f")
"
	done
	# A GPU gateway without the device plugin manifest can never advertise
	# nvidia.com/gpu: stop here, loudly, instead of looking healthy-but-empty.
	[ -n "$installed" ] || die "GPU_ENABLED=true but no *.yaml in $GPU_MANIFESTS_DIR"
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
	stale=""
	for f in "$GPU_MANIFESTS_DIR"/*.yaml; do
		[ -f "$f" ] || continue
		stale="$stale$(basename "$f")
"
	done
	if [ -f "$GPU_RECORD" ]; then
		stale="$stale$(cat "$GPU_RECORD")
"
	fi
	# Names come from our own image and record file; one per line.
	printf '%s' "$stale" | while IFS= read -r name; do
		[ -n "$name" ] || continue
		case $name in */*) continue ;; esac
		if [ -e "$K3S_MANIFESTS_DIR/$name" ]; then
			rm -f "$K3S_MANIFESTS_DIR/$name" || die "cannot remove $K3S_MANIFESTS_DIR/$name"
			log "GPU disabled: removed stale GPU manifest $K3S_MANIFESTS_DIR/$name"
		fi
	done
	rm -f "$GPU_RECORD"
fi

log "starting k3s: $K3S_BIN $*"
exec "$K3S_BIN" "$@"
