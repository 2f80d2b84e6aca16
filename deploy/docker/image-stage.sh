#!/bin/sh
# image-stage.sh - the download stages of Dockerfile.cluster, each verifying
# what it fetches before anything of it reaches the image.
#
#   image-stage.sh toolkit   NVIDIA Container Toolkit from NVIDIA's apt
#                            repository, key checked by fingerprint, apt
#                            checks the packages' signatures
#   image-stage.sh k3s       k3s and its airgap images -> /out, checked
#                            against the release's sha256sum file
#   image-stage.sh bundle    the device-plugin chart (pinned sha256) and the
#                            GPU path's images (docker-archive) -> /out
#
# Inputs are the build arguments of Dockerfile.cluster (../versions.env).
# Runs in the base image (Debian or Ubuntu), as root, at build time only.
set -eu

die() {
	printf 'image-stage: error: %s\n' "$*" >&2
	exit 1
}

need() {
	for v; do
		eval "val=\${$v:-}"
		[ -n "$val" ] || die "build argument $v is not set (build with 'openshell image build', which passes deploy/versions.env)"
	done
}

apt_install() {
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# fetch URL FILE: fail on any HTTP error, retrying transient ones.
fetch() {
	curl -fsSL --retry 5 --retry-connrefused --connect-timeout 30 -o "$2" "$1" ||
		die "cannot download $1"
}

# check_sha256 FILE SUM
check_sha256() {
	got=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$got" = "$2" ] || die "$1: sha256 is $got, expected $2 (a corrupt or changed download)"
}

stage_toolkit() {
	need NVIDIA_CONTAINER_TOOLKIT_VERSION NVIDIA_APT_KEY_FINGERPRINT NVIDIA_RUNTIME_MODE
	apt_install ca-certificates curl gnupg
	key=/tmp/nvidia-container-toolkit.key
	fetch https://nvidia.github.io/libnvidia-container/gpgkey "$key"
	fpr=$(gpg --show-keys --with-colons "$key" | awk -F: '$1 == "fpr" { print $10; exit }')
	[ "$fpr" = "$NVIDIA_APT_KEY_FINGERPRINT" ] ||
		die "NVIDIA's apt key has fingerprint ${fpr:-none}, expected $NVIDIA_APT_KEY_FINGERPRINT"
	keyring=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg
	gpg --dearmor <"$key" >"$keyring"
	echo "deb [signed-by=$keyring] https://nvidia.github.io/libnvidia-container/stable/deb/\$(ARCH) /" \
		>/etc/apt/sources.list.d/nvidia-container-toolkit.list
	v=$NVIDIA_CONTAINER_TOOLKIT_VERSION
	apt_install "nvidia-container-toolkit=$v" "nvidia-container-toolkit-base=$v" \
		"libnvidia-container-tools=$v" "libnvidia-container1=$v"
	# The nested runtime's mode, set on purpose rather than left to the
	# toolkit version's default (docs/design.md, "The image").
	nvidia-ctk config --in-place --set "nvidia-container-runtime.mode=$NVIDIA_RUNTIME_MODE"
	grep -q "^mode = \"$NVIDIA_RUNTIME_MODE\"" /etc/nvidia-container-runtime/config.toml ||
		die "nvidia-ctk did not set mode = \"$NVIDIA_RUNTIME_MODE\""
	apt-get purge -y -qq curl gnupg >/dev/null
	apt-get autoremove -y -qq >/dev/null
	rm -rf /var/lib/apt/lists/* "$key"
}

stage_k3s() {
	need K3S_VERSION TARGETARCH
	apt_install ca-certificates curl
	case $TARGETARCH in
	amd64) bin=k3s ;;
	arm64) bin=k3s-arm64 ;;
	*) die "k3s publishes no release for architecture $TARGETARCH" ;;
	esac
	airgap=k3s-airgap-images-$TARGETARCH.tar.zst
	url=https://github.com/k3s-io/k3s/releases/download/$(printf '%s' "$K3S_VERSION" | sed 's/+/%2B/g')
	mkdir -p /tmp/k3s && cd /tmp/k3s
	for f in "$bin" "$airgap" "sha256sum-$TARGETARCH.txt"; do
		fetch "$url/$f" "$f"
	done
	for f in "$bin" "$airgap"; do
		sum=$(awk -v f="$f" '$2 == f { print $1 }' "sha256sum-$TARGETARCH.txt")
		[ -n "$sum" ] || die "sha256sum-$TARGETARCH.txt of $K3S_VERSION does not list $f"
		check_sha256 "$f" "$sum"
	done
	install -D -m 0755 "$bin" /out/usr/local/bin/k3s
	for link in kubectl crictl ctr; do
		ln -s k3s "/out/usr/local/bin/$link"
	done
	install -D -m 0644 "$airgap" "/out/opt/openshell/images/$airgap"
}

# A file name for an image reference: nvcr.io/nvidia/cuda:12 -> nvcr.io_nvidia_cuda_12.tar
archive_name() {
	printf '%s.tar' "$(printf '%s' "${1%@*}" | tr '/:' '__')"
}

# The DRA driver's chart, an OCI artifact: skopeo copies it by its
# manifest's digest (checking every blob against the manifest, as for an
# image) into a dir: layout, where each blob is a file named by its digest;
# the one layer is the chart archive.
stage_dra_chart() {
	repo=registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu
	chart=dra-driver-nvidia-gpu-$DRA_DRIVER_CHART_VERSION.tgz
	rm -rf /tmp/dra-chart
	skopeo --insecure-policy copy --retry-times 3 "docker://$repo@$DRA_DRIVER_CHART_MANIFEST" dir:/tmp/dra-chart ||
		die "cannot fetch chart $repo@$DRA_DRIVER_CHART_MANIFEST"
	[ -f "/tmp/dra-chart/$DRA_DRIVER_CHART_SHA256" ] ||
		die "chart $repo@$DRA_DRIVER_CHART_MANIFEST has no layer sha256:$DRA_DRIVER_CHART_SHA256"
	check_sha256 "/tmp/dra-chart/$DRA_DRIVER_CHART_SHA256" "$DRA_DRIVER_CHART_SHA256"
	install -m 0644 "/tmp/dra-chart/$DRA_DRIVER_CHART_SHA256" "/out/opt/openshell/charts/$chart"
	rm -rf /tmp/dra-chart
}

stage_bundle() {
	need DEVICE_PLUGIN_CHART_VERSION DEVICE_PLUGIN_CHART_SHA256 DEVICE_PLUGIN_IMAGE SMOKE_IMAGE TARGETARCH \
		DRA_DRIVER_CHART_VERSION DRA_DRIVER_CHART_MANIFEST DRA_DRIVER_CHART_SHA256 DRA_DRIVER_IMAGE
	apt_install ca-certificates curl skopeo
	chart=nvidia-device-plugin-$DEVICE_PLUGIN_CHART_VERSION.tgz
	mkdir -p /out/opt/openshell/charts /out/opt/openshell/images
	fetch "https://nvidia.github.io/k8s-device-plugin/stable/$chart" "/out/opt/openshell/charts/$chart"
	check_sha256 "/out/opt/openshell/charts/$chart" "$DEVICE_PLUGIN_CHART_SHA256"
	stage_dra_chart
	for ref in "$DEVICE_PLUGIN_IMAGE" "$DRA_DRIVER_IMAGE" "$SMOKE_IMAGE"; do
		# skopeo checks every blob against the manifest's digests; a
		# reference pinned with @sha256:... also pins the manifest. The
		# archive is tagged with the reference less any digest, which is
		# the name pods ask for.
		skopeo --insecure-policy --override-os linux --override-arch "$TARGETARCH" copy --retry-times 3 \
			"docker://$ref" "docker-archive:/out/opt/openshell/images/$(archive_name "$ref"):${ref%@*}" ||
			die "cannot fetch image $ref"
	done
}

case ${1:-} in
toolkit) stage_toolkit ;;
k3s) stage_k3s ;;
bundle) stage_bundle ;;
*) die "usage: image-stage.sh toolkit|k3s|bundle" ;;
esac
