# shellcheck shell=sh
# shellcheck disable=SC2016 # jq programs use $variables of their own
# SIMULATION: the image side of the k3s stand-in (sourced by ./k3s): the
# containerd image store, the import of agent/images/, and the kubelet's
# pulls, offline by default as on a host without network.
#
#   - k3s imports every tarball in /var/lib/rancher/k3s/agent/images/ whose
#     name ends in a supported extension, at start and when one appears
#     (k3s pkg/agent/containerd/watcher.go; the extensions of rancher/wharfie
#     pkg/tarfile): the stand-in reads the image names of docker-archive
#     tarballs (manifest.json RepoTags), plain or zstd/gzip/bzip2 compressed;
#   - a pod's image runs when it is in the store; otherwise the kubelet
#     pulls it, which offline fails as containerd fails a pull without
#     network: ErrImagePull, then ImagePullBackOff, retried (kubelet
#     pkg/kubelet/images/image_manager.go; containerd
#     internal/cri/server/images/image_pull.go);
#   - imagePullPolicy Always (the default for :latest) pulls even when the
#     image is present, and so fails offline too; Never never pulls.
# SIM_NETWORK=online lets pulls succeed (a host with registry access).

SIM_IMAGES_DIR=$SIM_DATA_DIR/agent/images
SIM_IMAGE_STORE=$SIM_STATE/images

# docker.io/library/x:latest from x, as containerd normalises references.
img_normalize() {
	ref=$1
	first=${ref%%/*}
	case $ref in
	*/*)
		case $first in
		*.* | *:* | localhost) ;;
		*) ref=docker.io/$ref ;;
		esac
		;;
	*) ref=docker.io/library/$ref ;;
	esac
	case ${ref##*/} in
	*:* | *@*) ;;
	*) ref=$ref:latest ;;
	esac
	printf '%s\n' "$ref"
}

# The repo tags a docker-archive tarball holds, one per line.
img_archive_tags() {
	case $1 in
	*.tar) tar -xOf "$1" manifest.json ;;
	*.tar.zst | *.tzst) zstd -dcq "$1" | tar -xOf - manifest.json ;;
	*.tar.gz | *.tgz) tar -xzOf "$1" manifest.json ;;
	*.tar.bz2 | *.tbz) tar -xjOf "$1" manifest.json ;;
	*) return 1 ;;
	esac 2>/dev/null | $JQ -r '.[].RepoTags[]?' 2>/dev/null
}

# The watcher: import new or changed tarballs of agent/images.
img_import_dir() {
	mkdir -p "$SIM_IMAGE_STORE"
	for f in "$SIM_IMAGES_DIR"/*; do
		[ -f "$f" ] || continue
		case $f in
		*.tar | *.tar.lz4 | *.tar.bz2 | *.tbz | *.tar.gz | *.tgz | *.tar.zst | *.tzst) ;;
		*) continue ;;
		esac
		name=$(basename "$f")
		key=$(stat -c '%s %Y' "$f")
		[ "$(cat "$SIM_IMAGE_STORE/imported.$name" 2>/dev/null)" = "$key" ] && continue
		t0=$(sim_now)
		if ! tags=$(img_archive_tags "$f") || [ -z "$tags" ]; then
			srv_log error "Failed to import $f: SIMULATION: not a docker-archive tarball the stand-in can read"
			echo "$key" >"$SIM_IMAGE_STORE/imported.$name"
			continue
		fi
		for t in $tags; do
			img_normalize "$t"
		done >>"$SIM_IMAGE_STORE/store"
		sort -u "$SIM_IMAGE_STORE/store" -o "$SIM_IMAGE_STORE/store"
		echo "$key" >"$SIM_IMAGE_STORE/imported.$name"
		srv_log info "Imported images from $f in $(awk -v a="$t0" -v b="$(sim_now)" 'BEGIN { printf "%dms", (b - a) * 1000 }')"
	done
}

img_present() {
	grep -qxF "$(img_normalize "$1")" "$SIM_IMAGE_STORE/store" 2>/dev/null
}

# What containerd says when a pull cannot reach the registry.
img_pull_error() {
	full=$(img_normalize "$1")
	host=${full%%/*}
	path=${full#*/}
	[ "$host" = docker.io ] && host=registry-1.docker.io
	repo=${path%:*}
	tag=${path##*:}
	printf 'rpc error: code = Unknown desc = failed to pull and unpack image "%s": failed to resolve reference "%s": failed to do request: Head "https://%s/v2/%s/manifests/%s": dial tcp: lookup %s: no such host' \
		"$full" "$full" "$host" "$repo" "$tag" "$host"
}

# img_ready NS POD: true when the pod's image is there to run; otherwise the
# kubelet's pull happened and failed, and the pod's status says so.
img_ready() {
	f=$(sim_obj pods "$1" "$2")
	stamp=$SIM_RUN/pods/$1_$2.pull
	# After a failed pull the kubelet waits before it tries again.
	if [ -f "$stamp" ] && ! sim_after "$(cat "$stamp")" "${SIM_POD_BACKOFF:-1}"; then
		return 1
	fi
	image=$($JQ -r '.spec.containers[0].image // ""' "$f")
	policy=$($JQ -r '.spec.containers[0].imagePullPolicy // ""' "$f")
	# The API server's default: Always for :latest or no tag, else IfNotPresent.
	if [ -z "$policy" ]; then
		case ${image##*/} in
		*@*) policy=IfNotPresent ;;
		*:latest) policy=Always ;;
		*:*) policy=IfNotPresent ;;
		*) policy=Always ;;
		esac
	fi
	if [ "$policy" != Always ] && img_present "$image"; then
		rm -f "$stamp"
		return 0
	fi
	mkdir -p "$SIM_RUN/pods"
	sim_now >"$stamp"
	if [ "$policy" = Never ]; then
		srv_pod_status "$1" "$2" waiting "" ErrImageNeverPull 0 \
			"Container image \"$image\" is not present with pull policy of Never"
		return 1
	fi
	if [ "$(sim_switch SIM_NETWORK)" = online ]; then
		rm -f "$stamp"
		img_normalize "$image" >>"$SIM_IMAGE_STORE/store"
		srv_log info "SIMULATION: pulled $image (SIM_NETWORK=online)"
		return 0
	fi
	# The first failure reads ErrImagePull, the ones after it ImagePullBackOff.
	prev=$($JQ -r '.status.containerStatuses[0].state.waiting.reason // ""' "$f")
	msg=$(img_pull_error "$image")
	case $prev in
	ErrImagePull | ImagePullBackOff)
		srv_pod_status "$1" "$2" waiting "" ImagePullBackOff 0 "Back-off pulling image \"$image\": ErrImagePull: $msg" ;;
	*)
		srv_pod_status "$1" "$2" waiting "" ErrImagePull 0 "$msg"
		srv_log info "SIMULATION: pull of $image for pod $1/$2 failed: no network" ;;
	esac
	return 1
}
