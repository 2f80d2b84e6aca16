# shellcheck shell=sh
# shellcheck disable=SC2016 # jq programs use $variables of their own
# SIMULATION: the kubectl of the k3s stand-in (sourced by ./k3s).
#
# Answers the subset of kubectl that openshell uses (design.md §5) from the
# objects the simulated server keeps under $SIM_OBJ, with the JSON shapes,
# error texts and exit codes of the real kubectl talking to a real k3s:
#   get --raw /readyz|/livez|/healthz
#   get RESOURCE [NAME] [-n NS | -A] [-l SELECTOR] [-o json|name|jsonpath=T]
#   apply -f -            (JSON Pod or Namespace manifests; YAML is refused)
#   delete RESOURCE NAME... [-n NS] [--ignore-not-found]
#   logs [-n NS] POD|pod/P|job/J [-c C] [--tail=N] ; logs -n NS -l SEL [--tail=N]
#   get TYPE,TYPE,... [-A] -o json   (one List of every type's objects)
#   wait --for=jsonpath='{PATH}'[=VALUE] TYPE/NAME|TYPE --all [-n NS] [--timeout=D] [-o json]
# jsonpath: only field paths ({.a.b}, escaped dots {.a.b\.c/d}, [N], [*]) and
# literal text between them; see docs/k3s-standin.md.

kc_err() {
	printf '%s\n' "$*" >&2
	exit 1
}

kc_refused() {
	kc_err "The connection to the server $1 was refused - did you specify the right host or port?"
}

kc_usage_err() {
	printf 'error: %s\nSee '"'"'kubectl %s --help'"'"' for usage.\n' "$1" "$kc_cmd" >&2
	exit 1
}

# Every API call first needs a kubeconfig and a live, ready server.
kc_need_api() {
	cfg=${kc_kubeconfig:-${KUBECONFIG:-$SIM_KUBECONFIG}}
	[ -f "$cfg" ] || kc_refused "localhost:8080"
	sim_api_up || kc_refused "127.0.0.1:6443"
	kc_flaky
}

# SIM_API_FLAKY=N: the next N calls fail as they do while k3s restarts or
# its API server is not ready yet (k3s answers 503 "apiserver not ready";
# kubectl prints "Error from server (ServiceUnavailable): ..."), every other
# one as a refused connection. The count lives in the switches directory.
kc_flaky() {
	left=$(sim_switch SIM_API_FLAKY)
	case $left in '' | *[!0-9]* | 0) return 0 ;; esac
	mkdir -p "$SIM_STATE/switches"
	echo $((left - 1)) >"$SIM_STATE/switches/SIM_API_FLAKY"
	if [ $((left % 2)) = 0 ]; then
		kc_err "Error from server (ServiceUnavailable): apiserver not ready"
	fi
	kc_refused "127.0.0.1:6443"
}

kubectl_main() {
	kc_cmd="" kc_ns="" kc_all="" kc_out="" kc_sel="" kc_raw="" kc_file=""
	kc_ignore="" kc_tail="" kc_container="" kc_kubeconfig="" kc_pos="" kc_flags="" kc_previous=""
	kc_for="" kc_allobj="" kc_timeout="" kc_overwrite=""
	while [ $# -gt 0 ]; do
		a=$1
		shift
		case $a in
		--) kc_pos="$kc_pos $*"; break ;;
		-n | --namespace) [ $# -gt 0 ] || kc_usage_err "flag needs an argument: 'n' in -n"; kc_ns=$1; shift ;;
		--namespace=*) kc_ns=${a#*=} ;;
		-n*) kc_ns=${a#-n} ;;
		-A | --all-namespaces | --all-namespaces=true) kc_all=1 kc_flags="$kc_flags A" ;;
		-o | --output) [ $# -gt 0 ] || kc_usage_err "flag needs an argument: 'o' in -o"; kc_out=$1; shift; kc_flags="$kc_flags o" ;;
		--output=*) kc_out=${a#*=} kc_flags="$kc_flags o" ;;
		-o*) kc_out=${a#-o} kc_flags="$kc_flags o" ;;
		-l | --selector) [ $# -gt 0 ] || kc_usage_err "flag needs an argument: 'l' in -l"; kc_sel=$1; shift; kc_flags="$kc_flags l" ;;
		--selector=*) kc_sel=${a#*=} kc_flags="$kc_flags l" ;;
		-l*) kc_sel=${a#-l} kc_flags="$kc_flags l" ;;
		--raw) [ $# -gt 0 ] || kc_usage_err "flag needs an argument: --raw"; kc_raw=$1; shift; kc_flags="$kc_flags raw" ;;
		--raw=*) kc_raw=${a#*=} kc_flags="$kc_flags raw" ;;
		-f | --filename) [ $# -gt 0 ] || kc_usage_err "flag needs an argument: 'f' in -f"; kc_file=$1; shift; kc_flags="$kc_flags f" ;;
		--filename=*) kc_file=${a#*=} kc_flags="$kc_flags f" ;;
		-f*) kc_file=${a#-f} kc_flags="$kc_flags f" ;;
		--ignore-not-found | --ignore-not-found=true) kc_ignore=1 kc_flags="$kc_flags ignore" ;;
		--ignore-not-found=false) kc_ignore="" ;;
		--tail) [ $# -gt 0 ] || kc_usage_err "flag needs an argument: --tail"; kc_tail=$1; shift; kc_flags="$kc_flags tail" ;;
		--tail=*) kc_tail=${a#*=} kc_flags="$kc_flags tail" ;;
		-c | --container) [ $# -gt 0 ] || kc_usage_err "flag needs an argument: 'c' in -c"; kc_container=$1; shift; kc_flags="$kc_flags c" ;;
		--container=*) kc_container=${a#*=} kc_flags="$kc_flags c" ;;
		-p | --previous | --previous=true) kc_previous=1 kc_flags="$kc_flags c" ;;
		--kubeconfig) [ $# -gt 0 ] || kc_usage_err "flag needs an argument: --kubeconfig"; kc_kubeconfig=$1; shift ;;
		--kubeconfig=*) kc_kubeconfig=${a#*=} ;;
		--request-timeout=* | --v=* | -v=*) ;;
		--request-timeout) shift ;;
		--wait=* | --grace-period=* | --now | --force) kc_flags="$kc_flags delete" ;;
		--timeout=*) kc_timeout=${a#*=} kc_flags="$kc_flags timeout" ;;
		--for=*) kc_for=${a#*=} kc_flags="$kc_flags for" ;;
		--for) [ $# -gt 0 ] || kc_usage_err "flag needs an argument: --for"; kc_for=$1; shift; kc_flags="$kc_flags for" ;;
		--all | --all=true) kc_allobj=1 kc_flags="$kc_flags all" ;;
		--overwrite | --overwrite=true) kc_overwrite=1 kc_flags="$kc_flags overwrite" ;;
		-h | --help)
			echo "kubectl (SIMULATION: openshell k3s stand-in) - see docs/k3s-standin.md"
			exit 0
			;;
		--*) kc_cmd=${kc_cmd:-$(kc_first_word "$kc_pos")}; kc_usage_err "unknown flag: ${a%%=*}" ;;
		-?*) kc_cmd=${kc_cmd:-$(kc_first_word "$kc_pos")}; kc_usage_err "unknown shorthand flag: '$(printf '%s' "${a#-}" | cut -c1)' in $a" ;;
		*) kc_pos="$kc_pos $a" ;;
		esac
	done
	# shellcheck disable=SC2086 # names and resources have no blanks
	set -- $kc_pos
	kc_cmd=${1:-}
	[ $# -gt 0 ] && shift
	case $kc_cmd in
	get) kc_allow "A o l raw"; kc_get "$@" ;;
	apply) kc_allow "f o"; kc_apply "$@" ;;
	delete) kc_allow "ignore delete l timeout"; kc_delete "$@" ;;
	wait) kc_allow "for all timeout l o"; kc_wait "$@" ;;
	logs) kc_allow "l tail c"; kc_logs "$@" ;;
	label) kc_allow "all overwrite l o"; kc_label "$@" ;;
	version) kc_allow "o"; printf 'Client Version: %s\nKustomize Version: v5.4.2\n' "$SIM_VERSION" ;;
	"") printf 'kubectl controls the Kubernetes cluster manager (SIMULATION).\n' >&2; exit 1 ;;
	*) printf 'error: unknown command "%s" for "kubectl"\n' "$kc_cmd" >&2; exit 1 ;;
	esac
}

kc_first_word() {
	# shellcheck disable=SC2086
	set -- $1
	echo "${1:-}"
}

# Refuse flags that the real command does not have.
kc_allow() {
	for f in $kc_flags; do
		case " $1 " in *" $f "*) continue ;; esac
		case $f in
		A) kc_usage_err "unknown shorthand flag: 'A' in -A" ;;
		o) kc_usage_err "unknown shorthand flag: 'o' in -o" ;;
		l) kc_usage_err "unknown shorthand flag: 'l' in -l" ;;
		f) kc_usage_err "unknown shorthand flag: 'f' in -f" ;;
		c) kc_usage_err "unknown shorthand flag: 'c' in -c" ;;
		*) kc_usage_err "unknown flag: --$f" ;;
		esac
	done
}

# kc_res ALIAS: sets r_plural r_kind r_scope r_qual r_single.
kc_res() {
	typed=$1
	spec=$(sim_resource "$typed") || kc_err "error: the server doesn't have a resource type \"$typed\""
	# shellcheck disable=SC2086
	set -- $spec
	r_plural=$1 r_kind=$2 r_scope=$4 r_qual=$5 r_single=$6
	# Discovery knows k3s's own types only once k3s has registered them.
	case $r_qual in
	*.helm.cattle.io) sim_crds_registered || kc_err "error: the server doesn't have a resource type \"$typed\"" ;;
	esac
}

# Namespace of a namespaced request (kubeconfig context default: "default").
kc_namespace() {
	echo "${kc_ns:-default}"
}

kc_not_found() {
	kc_err "Error from server (NotFound): $1 \"$2\" not found"
}

# jq definitions shared by the filters below.
KC_JQ_DEFS='
def sel_match($sel):
  (.metadata.labels // {}) as $l
  | all($sel | split(",")[] | select(length > 0);
      . as $r
      | if ($r | test("!=")) then ($r | split("!=")) as $kv | ($l[$kv[0]] != $kv[1])
        elif ($r | test("==")) then ($r | split("==")) as $kv | ($l[$kv[0]] == $kv[1])
        elif ($r | test("=")) then ($r | split("=")) as $kv | ($l[$kv[0]] == $kv[1])
        elif ($r | startswith("!")) then ($l | has($r[1:]) | not)
        else ($l | has($r)) end);
def kc_str: if type == "string" then . elif type == "null" then empty
  elif type == "object" or type == "array" then tojson else tostring end;
'

kc_get() {
	if [ -n "$kc_raw" ]; then
		[ $# -eq 0 ] || kc_err "error: arguments may not be passed when --raw is specified"
		kc_need_api
		case $kc_raw in
		/readyz | /livez | /healthz) echo ok ;;
		*) kc_err "Error from server (NotFound): the server could not find the requested resource" ;;
		esac
		return 0
	fi
	[ $# -gt 0 ] || kc_err "You must specify the type of resource to get. Use \"kubectl api-resources\" for a complete list of supported resources."
	res=$1
	shift
	name=""
	case $res in */*) name=${res#*/} res=${res%%/*} ;; esac
	[ -n "$name" ] || name=${1:-}
	[ $# -le 1 ] || kc_err "error: SIMULATION limitation: the k3s stand-in gets one name at a time"
	kc_need_api
	case $res in *,*) kc_get_types "$res" "$name"; return ;; esac
	kc_res "$res"
	case $kc_out in
	json | name | "" | wide | jsonpath=* | jsonpath) ;;
	yaml) kc_err "error: SIMULATION limitation: the k3s stand-in prints JSON only (use -o json)" ;;
	*) kc_err "error: unable to match a printer suitable for the output format \"$kc_out\", allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml" ;;
	esac
	if [ "$r_scope" = ns ]; then ns=$(kc_namespace); else ns=""; fi
	if [ -n "$name" ]; then
		[ -z "$kc_all" ] || kc_err "error: a resource cannot be retrieved by name across all namespaces"
		f=$(sim_obj "$r_plural" "$ns" "$name")
		[ -f "$f" ] || kc_not_found "$r_qual" "$name"
		kc_print "$f"
		return
	fi
	if [ -n "$kc_all" ] || [ "$r_scope" = cluster ]; then
		set -- "$SIM_OBJ/$r_plural"/*/*.json
	else
		set -- "$SIM_OBJ/$r_plural/$ns"/*.json
	fi
	[ -f "$1" ] || set --
	list=$(kc_objects "$@" | $JQ -n --arg sel "$kc_sel" "$KC_JQ_DEFS"'
		{apiVersion: "v1", items: ([inputs | select(sel_match($sel))]
		                           | sort_by(.metadata.namespace // "", .metadata.name)),
		 kind: "List", metadata: {resourceVersion: ""}}') || exit 1
	if [ -z "$kc_out" ] || [ "$kc_out" = wide ] || [ "$kc_out" = name ]; then
		if [ "$(printf '%s' "$list" | $JQ '.items | length')" = 0 ]; then
			if [ "$r_scope" = ns ] && [ -z "$kc_all" ]; then
				echo "No resources found in $ns namespace." >&2
			else
				echo "No resources found" >&2
			fi
			return 0
		fi
	fi
	printf '%s' "$list" | kc_print -
}

# kc_get_types T1,T2,...: like kubectl, one List holding the objects of
# every type in the order given (a cluster-scoped type ignores -A).
kc_get_types() {
	[ -z "$2" ] || kc_err "error: there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'"
	[ "$kc_out" = json ] || kc_err "error: SIMULATION limitation: the k3s stand-in gets several types with -o json only"
	types=$(printf '%s' "$1" | tr ',' ' ')
	set --
	for t in $types; do
		kc_res "$t"
		if [ -n "$kc_all" ] || [ "$r_scope" = cluster ]; then
			for f in "$SIM_OBJ/$r_plural"/*/*.json; do [ -f "$f" ] && set -- "$@" "$f"; done
		else
			for f in "$SIM_OBJ/$r_plural/$(kc_namespace)"/*.json; do [ -f "$f" ] && set -- "$@" "$f"; done
		fi
	done
	# The glob's order is the API's: by namespace, then name, type by type.
	kc_objects "$@" | $JQ -n --indent 4 --arg sel "$kc_sel" "$KC_JQ_DEFS"'
		{apiVersion: "v1", items: [inputs | select(sel_match($sel))], kind: "List",
		 metadata: {resourceVersion: ""}}'
}

# kc_objects FILE...: the stored objects, one after another; one deleted
# since the glob listed it is left out, as the API lists what exists.
kc_objects() {
	[ $# -eq 0 ] || cat -- "$@" 2>/dev/null || true
}

# kc_print FILE|-: the object (or List) in the requested output format.
kc_print() {
	case $kc_out in
	json) $JQ --indent 4 . "$1" ;;
	name) $JQ -r --arg s "$r_single" 'if .kind == "List" then .items[] else . end | "\($s)/\(.metadata.name)"' "$1" ;;
	jsonpath=* | jsonpath)
		prog=$(kc_jsonpath "${kc_out#jsonpath}") || exit 1
		$JQ -j "$KC_JQ_DEFS$prog" "$1"
		;;
	*) kc_table "$1" ;;
	esac
}

# A plain table (SIMULATION: fewer columns than the real printers).
kc_table() {
	case $r_plural in
	pods)
		$JQ -r '(if .kind == "List" then .items[] else . end) as $p
			| [$p.metadata.name,
			   "\([$p.status.containerStatuses[]? | select(.ready)] | length)/\($p.spec.containers | length)",
			   ([$p.status.containerStatuses[]? | .state.waiting.reason // .state.terminated.reason // empty] | first
			    // $p.status.phase),
			   ([$p.status.containerStatuses[]?.restartCount] | add // 0 | tostring)] | @tsv' "$1" |
			awk -F'\t' 'BEGIN { printf "%-40s %-7s %-20s %s\n", "NAME", "READY", "STATUS", "RESTARTS" }
				{ printf "%-40s %-7s %-20s %s\n", $1, $2, $3, $4 }'
		;;
	nodes)
		$JQ -r '(if .kind == "List" then .items[] else . end)
			| [.metadata.name, (if any(.status.conditions[]; .type == "Ready" and .status == "True") then "Ready" else "NotReady" end),
			   "control-plane,master", .status.nodeInfo.kubeletVersion] | @tsv' "$1" |
			awk -F'\t' 'BEGIN { printf "%-30s %-10s %-22s %s\n", "NAME", "STATUS", "ROLES", "VERSION" }
				{ printf "%-30s %-10s %-22s %s\n", $1, $2, $3, $4 }'
		;;
	*)
		$JQ -r '(if .kind == "List" then .items[] else . end) | .metadata.name' "$1" |
			awk 'BEGIN { print "NAME" } { print }'
		;;
	esac
}

# kc_jsonpath TEMPLATE: print a jq program that renders the kubectl JSONPath
# TEMPLATE. Supported: literal text and {PATH} where PATH is a field path made
# of .name (with \. for a dot inside a name), [N] and [*]; several results of
# one {PATH} are joined by a space, missing fields print nothing, as kubectl.
kc_jsonpath() {
	t=$1
	case $t in =*) t=${t#=} ;; esac
	case $t in *"{"*) ;; *) t="{$t}" ;; esac
	printf '%s' "$t" | awk '
	function q(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
	function bad(why) { printf "error: SIMULATION limitation: unsupported jsonpath (%s): %s\n", why, tmpl > "/dev/stderr"; failed = 1; exit 1 }
	{ tmpl = tmpl (NR > 1 ? "\n" : "") $0 }
	END {
		if (failed) exit 1
		n = length(tmpl); i = 1; out = ""; lit = ""
		while (i <= n) {
			c = substr(tmpl, i, 1)
			if (c != "{") { lit = lit c; i++; continue }
			if (lit != "") { out = out (out == "" ? "" : ", ") q(lit); lit = "" }
			j = index(substr(tmpl, i), "}")
			if (j == 0) bad("unclosed {")
			e = substr(tmpl, i + 1, j - 2); i += j
			if (substr(e, 1, 1) == "$") e = substr(e, 2)
			if (e == "" || e == ".") { path = "." }
			else {
				if (substr(e, 1, 1) != ".") bad("path must start with .")
				path = ""; k = 1; m = length(e)
				while (k <= m) {
					c = substr(e, k, 1)
					if (c == ".") {
						k++; name = ""
						while (k <= m) {
							c = substr(e, k, 1)
							if (c == "\\" && substr(e, k + 1, 1) == ".") { name = name "."; k += 2; continue }
							if (c == "." || c == "[") break
							if (c ~ /[?@()=<>!]/) bad("filters are not supported")
							name = name c; k++
						}
						if (name == "") bad("empty field name")
						path = path "[" q(name) "]?"
					} else if (c == "[") {
						r = index(substr(e, k), "]")
						if (r == 0) bad("unclosed [")
						ix = substr(e, k + 1, r - 2); k += r
						if (ix == "*") path = path "[]?"
						else if (ix ~ /^-?[0-9]+$/) path = path "[" ix "]?"
						else bad("only [N] and [*] are supported")
					} else bad("unexpected " c)
				}
				path = "." path
			}
			out = out (out == "" ? "" : ", ") "([" path " | kc_str] | join(\" \"))"
		}
		if (lit != "") out = out (out == "" ? "" : ", ") q(lit)
		if (out == "") out = q("")
		print "[" out "] | join(\"\")"
	}'
}

kc_apply() {
	[ -n "$kc_file" ] || kc_err "error: must specify one of -f and -k"
	[ $# -eq 0 ] || kc_err "error: Unexpected args: $*"
	case $kc_out in "" | name) ;; *) kc_err "error: SIMULATION limitation: apply supports -o name only" ;; esac
	kc_need_api
	tmp=$(mktemp)
	if [ "$kc_file" = - ]; then cat >"$tmp"; else cat "$kc_file" >"$tmp" 2>/dev/null || {
		rm -f "$tmp"
		kc_err "error: the path \"$kc_file\" does not exist"
	}; fi
	src=STDIN
	[ "$kc_file" = - ] || src=$kc_file
	first=$(tr -d ' \t\r\n' <"$tmp" | cut -c1)
	if [ "$first" != "{" ]; then
		rm -f "$tmp"
		kc_err "error: SIMULATION limitation: the k3s stand-in's kubectl apply accepts JSON manifests only"
	fi
	if ! $JQ -e 'type == "object"' "$tmp" >/dev/null 2>&1; then
		rm -f "$tmp"
		kc_err "error: error parsing $src: invalid JSON"
	fi
	sim_lock || kc_err "error: SIMULATION: state lock busy"
	rc=0
	for idx in $($JQ -r 'if .kind == "List" then range(0; .items | length) else -1 end' "$tmp"); do
		if [ "$idx" = -1 ]; then
			$JQ -c . "$tmp" >"$tmp.obj"
		else
			$JQ -c ".items[$idx]" "$tmp" >"$tmp.obj"
		fi
		(kc_apply_one "$tmp.obj" "$src") || rc=1
	done
	sim_unlock
	rm -f "$tmp" "$tmp.obj"
	return $rc
}

kc_apply_one() {
	m=$1 src=$2
	kind=$($JQ -r '.kind // ""' "$m")
	api=$($JQ -r '.apiVersion // ""' "$m")
	name=$($JQ -r '.metadata.name // ""' "$m")
	[ -n "$kind" ] || kc_err "error: error validating \"$src\": error validating data: kind not set; if you choose to ignore these errors, turn validation off with --validate=false"
	[ -n "$api" ] || kc_err "error: error validating \"$src\": error validating data: apiVersion not set; if you choose to ignore these errors, turn validation off with --validate=false"
	[ -n "$name" ] || kc_err "error: resource name may not be empty"
	case "$api/$kind" in
	v1/Pod) kc_apply_pod "$m" "$src" "$name" ;;
	v1/Namespace) kc_apply_namespace "$m" "$name" ;;
	helm.cattle.io/v1/HelmChartConfig)
		if ! sim_crds_registered; then
			ns=$($JQ -r '.metadata.namespace // "default"' "$m")
			kc_err "error: resource mapping not found for name: \"$name\" namespace: \"$ns\" from \"$src\": no matches for kind \"$kind\" in version \"$api\"
ensure CRDs are installed first"
		fi
		kc_apply_helmchartconfig "$m" "$name" ;;
	*) kc_err "error: SIMULATION limitation: the k3s stand-in cannot apply $api $kind (only v1 Pod, Namespace and helm.cattle.io/v1 HelmChartConfig)" ;;
	esac
}

kc_apply_namespace() {
	f=$(sim_obj namespaces "" "$2")
	if [ -f "$f" ]; then
		kc_done "namespace/$2" unchanged
		return
	fi
	$JQ -n --arg n "$2" --arg uid "$(sim_uid)" --arg ts "$(sim_ts)" --slurpfile m "$1" '
		{apiVersion: "v1", kind: "Namespace",
		 metadata: {name: $n, uid: $uid, resourceVersion: "1", creationTimestamp: $ts,
		            labels: (($m[0].metadata.labels // {}) + {"kubernetes.io/metadata.name": $n})},
		 spec: {finalizers: ["kubernetes"]}, status: {phase: "Active"}}' | sim_write "$f"
	kc_done "namespace/$2" created
}

# A HelmChartConfig: its valuesContent is laid over the HelmChart's of the
# same name and namespace, and a change upgrades the release (k3s
# helm-controller, pkg/controllers/chart/chart.go).
kc_apply_helmchartconfig() {
	ns=$($JQ -r '.metadata.namespace // ""' "$1")
	[ -n "$ns" ] || ns=$(kc_namespace)
	f=$(sim_obj helmchartconfigs "$ns" "$2")
	if [ -f "$f" ] && [ "$($JQ -c .spec "$f")" = "$($JQ -c '.spec // {}' "$1")" ]; then
		kc_done "helmchartconfig.helm.cattle.io/$2" unchanged
		return
	fi
	verb=created
	[ ! -f "$f" ] || verb=configured
	uid=$($JQ -r '.metadata.uid // empty' "$f" 2>/dev/null)
	$JQ --arg ns "$ns" --arg uid "${uid:-$(sim_uid)}" --arg ts "$(sim_ts)" '
		{apiVersion, kind, spec: (.spec // {}),
		 metadata: ((.metadata // {}) + {namespace: $ns, uid: $uid, resourceVersion: "1", creationTimestamp: $ts})}' \
		"$1" | sim_write "$f"
	kc_done "helmchartconfig.helm.cattle.io/$2" "$verb"
}

kc_done() {
	if [ "$kc_out" = name ]; then echo "$1"; else echo "$1 $2"; fi
}

kc_apply_pod() {
	m=$1 src=$2 name=$3
	mns=$($JQ -r '.metadata.namespace // ""' "$m")
	ns=$(kc_namespace)
	if [ -n "$mns" ] && [ -n "$kc_ns" ] && [ "$mns" != "$kc_ns" ]; then
		kc_err "error: the namespace from the provided object \"$mns\" does not match the namespace \"$kc_ns\". You must pass '--namespace=$mns' to perform this operation."
	fi
	[ -z "$mns" ] || ns=$mns
	[ -f "$(sim_obj namespaces "" "$ns")" ] ||
		kc_err "Error from server (NotFound): error when creating \"$src\": namespaces \"$ns\" not found"
	f=$(sim_obj pods "$ns" "$name")
	applied=$($JQ -c 'del(.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"])' "$m")
	if [ -f "$f" ]; then
		old=$($JQ -r '.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] // ""' "$f")
		if [ "$old" = "$applied" ]; then
			kc_done "pod/$name" unchanged
			return
		fi
		if [ "$(printf '%s' "$old" | $JQ -c '.spec')" != "$($JQ -c '.spec' "$m")" ]; then
			kc_err "The Pod \"$name\" is invalid: spec: Forbidden: pod updates may not change fields other than \`spec.containers[*].image\`,\`spec.initContainers[*].image\`,\`spec.activeDeadlineSeconds\`,\`spec.tolerations\` (only additions to existing tolerations),\`spec.terminationGracePeriodSeconds\` (allow it to be set to 1 if it was previously negative)"
		fi
		$JQ --slurpfile m "$m" --arg a "$applied" '
			.metadata.labels = $m[0].metadata.labels
			| .metadata.annotations = (($m[0].metadata.annotations // {}) + {"kubectl.kubernetes.io/last-applied-configuration": $a})' \
			"$f" | sim_write "$f"
		kc_done "pod/$name" configured
		return
	fi
	$JQ -e '(.spec.containers | type) == "array" and (.spec.containers | length) > 0' "$m" >/dev/null ||
		kc_err "The Pod \"$name\" is invalid: spec.containers: Required value"
	bad=$($JQ -r '[.spec.containers | to_entries[] | select((.value.image // "") == "") | .key] | first // empty' "$m")
	[ -z "$bad" ] || kc_err "The Pod \"$name\" is invalid: spec.containers[$bad].image: Required value"
	rc=$($JQ -r '.spec.runtimeClassName // ""' "$m")
	if [ -n "$rc" ] && [ ! -f "$(sim_obj runtimeclasses "" "$rc")" ]; then
		kc_err "Error from server (Forbidden): error when creating \"$src\": pods \"$name\" is forbidden: pod rejected: RuntimeClass \"$rc\" not found"
	fi
	$JQ --arg ns "$ns" --arg uid "$(sim_uid)" --arg ts "$(sim_ts)" --arg a "$applied" '
		def qos: [.spec.containers[].resources // {} | (.limits // {}), (.requests // {})] | add // {}
			| if length == 0 then "BestEffort" else "Burstable" end;
		{apiVersion: "v1", kind: "Pod",
		 metadata: ({name: .metadata.name, namespace: $ns, uid: $uid, resourceVersion: "1",
		             creationTimestamp: $ts,
		             annotations: ((.metadata.annotations // {}) + {"kubectl.kubernetes.io/last-applied-configuration": $a})}
		            + (if .metadata.labels then {labels: .metadata.labels} else {} end)),
		 spec: ({restartPolicy: "Always", dnsPolicy: "ClusterFirst", schedulerName: "default-scheduler",
		         serviceAccountName: "default", terminationGracePeriodSeconds: 30,
		         enableServiceLinks: true, preemptionPolicy: "PreemptLowerPriority", priority: 0,
		         securityContext: {},
		         tolerations: [{key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300},
		                       {key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300}]}
		        + .spec
		        + {containers: [.spec.containers[] | {resources: {}, terminationMessagePath: "/dev/termination-log",
		                        terminationMessagePolicy: "File",
		                        imagePullPolicy: (if (.image | test(":latest$") or (test(":") | not)) then "Always" else "IfNotPresent" end)} + .]}),
		 status: {phase: "Pending", qosClass: qos}}' "$m" | sim_write "$f"
	mkdir -p "$SIM_STATE/podstate/$ns"
	echo new >"$SIM_STATE/podstate/$ns/$name"
	kc_done "pod/$name" created
}

kc_delete() {
	[ $# -gt 0 ] || kc_err "error: You must provide one or more resources by argument or filename."
	res=$1
	shift
	case $res in */*) set -- "${res#*/}" "$@"; res=${res%%/*} ;; esac
	[ $# -gt 0 ] || kc_err "error: resource(s) were provided, but no name was specified"
	kc_need_api
	kc_res "$res"
	if [ "$r_scope" = ns ]; then ns=$(kc_namespace); else ns=""; fi
	sim_lock || kc_err "error: SIMULATION: state lock busy"
	rc=0
	for name in "$@"; do
		f=$(sim_obj "$r_plural" "$ns" "$name")
		if [ ! -f "$f" ]; then
			[ -n "$kc_ignore" ] && continue
			printf 'Error from server (NotFound): %s "%s" not found\n' "$r_qual" "$name" >&2
			rc=1
			continue
		fi
		case $r_plural in
		namespaces)
			case $name in default | kube-system | kube-public | kube-node-lease)
				printf 'Error from server (Forbidden): namespaces "%s" is forbidden: this namespace may not be deleted\n' "$name" >&2
				rc=1
				continue
				;;
			esac
			for p in "$SIM_OBJ/pods/$name"/*.json; do
				[ -f "$p" ] && sim_delete_pod "$name" "$(basename "$p" .json)"
			done
			for d in "$SIM_OBJ"/*/"$name"; do
				[ -d "$d" ] && rm -rf "$d"
			done
			;;
		pods)
			# The device plugin's DaemonSet counts one pod less ready before
			# the next reconcile makes the new pod (its devices go in
			# sim_delete_pod).
			if $JQ -e 'any(.spec.containers[]; .name == "nvidia-device-plugin-ctr")' "$f" >/dev/null; then
				ds=$($JQ -r '.metadata.ownerReferences[]? | select(.kind == "DaemonSet") | .name' "$f")
				dsf=$(sim_obj daemonsets "$ns" "$ds")
				rm -f "$SIM_STATE/helm/$ds/ds_sig"   # the server writes it anew
				[ -z "$ds" ] || [ ! -f "$dsf" ] ||
					$JQ '.status.numberReady = ([.status.numberReady - 1, 0] | max)
						| .status.numberAvailable = ([(.status.numberAvailable // 0) - 1, 0] | max)
						| .status.numberUnavailable = ((.status.numberUnavailable // 0) + 1)' "$dsf" | sim_write "$dsf"
			fi
			sim_delete_pod "$ns" "$name"
			;;
		jobs | daemonsets)
			for p in "$SIM_OBJ/pods/$ns"/*.json; do
				[ -f "$p" ] || continue
				$JQ -e --arg k "$r_kind" --arg n "$name" \
					'any(.metadata.ownerReferences[]?; .kind == $k and .name == $n)' "$p" >/dev/null &&
					sim_delete_pod "$ns" "$(basename "$p" .json)"
			done
			;;
		helmcharts) sim_helm_uninstall "$name" ;;
		esac
		rm -f "$f"
		printf '%s "%s" deleted\n' "$r_single" "$name"
	done
	sim_unlock
	return $rc
}

kc_logs() {
	kc_need_api
	ns=$(kc_namespace)
	if [ -n "$kc_sel" ]; then
		[ $# -eq 0 ] || kc_err "error: only a selector (-l) or a POD name is allowed"
		tail=${kc_tail:--1}
		[ -n "$kc_tail" ] || tail=10
		set -- "$SIM_OBJ/pods/$ns"/*.json
		[ -f "$1" ] || set --
		pods=$(kc_objects "$@" | $JQ -r --arg sel "$kc_sel" "$KC_JQ_DEFS"'select(sel_match($sel)) | .metadata.name')
		if [ -z "$pods" ]; then
			echo "No resources found in $ns namespace." >&2
			return 0
		fi
		for p in $pods; do
			kc_pod_log "$ns" "$p" "$tail"
		done
		return 0
	fi
	[ $# -eq 1 ] || kc_err "error: expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'."
	target=$1
	case $target in
	pod/* | pods/* | po/*) target=${target#*/} ;;
	job/* | jobs/* | job.batch/*)
		job=${target#*/}
		[ -f "$(sim_obj jobs "$ns" "$job")" ] || kc_not_found jobs.batch "$job"
		target=""
		for p in "$SIM_OBJ/pods/$ns"/*.json; do
			[ -f "$p" ] || continue
			if $JQ -e --arg n "$job" '.metadata.labels["job-name"] == $n' "$p" >/dev/null; then
				target=$(basename "$p" .json)
			fi
		done
		[ -n "$target" ] || kc_err "error: timed out waiting for the condition"
		;;
	*/*) kc_err "error: SIMULATION limitation: logs supports pod/NAME and job/NAME only" ;;
	esac
	kc_pod_log "$ns" "$target" "${kc_tail:--1}"
}

# kc_pod_log NS POD TAIL: the log of -c CONTAINER, or of the pod's default
# container: the first (kubectl's logs.go, without the
# kubectl.kubernetes.io/default-container annotation), saying so on stderr
# when the pod has more. The container the stand-in runs (the first that is
# not a sidecar) logs to POD.log, the others to POD.CONTAINER.log.
kc_pod_log() {
	f=$(sim_obj pods "$1" "$2")
	[ -f "$f" ] || kc_not_found pods "$2"
	# One jq for all of it: the container, whether the pod has it, the
	# container the stand-in runs, its waiting reason, kubectl's note.
	{
		read -r cname
		read -r valid
		read -r main
		read -r reason
		read -r note
	} <<-EOF
	$($JQ -r --arg c "$kc_container" "$SIM_JQ_MAIN_CONTAINER"'
		(if $c != "" then $c else .spec.containers[0].name end) as $n
		| $n,
		  (any(.spec.containers[], .spec.initContainers[]?; .name == $n) | tostring),
		  (main_container | .name),
		  ([.status.containerStatuses[]? | select(.name == $n) | .state.waiting.reason] | first // "ContainerCreating"),
		  (if $c == "" and ((.spec.containers | length) + (.spec.initContainers // [] | length)) > 1 then
		     "Defaulted container \"\($n)\" out of: \([.spec.containers[].name] + [.spec.initContainers[]? | "\(.name) (init)"] | join(", "))"
		   else "" end)' "$f")
	EOF
	[ "$valid" = true ] || kc_err "error: container $cname is not valid for pod $2"
	[ -z "$note" ] || printf '%s\n' "$note" >&2
	log=$SIM_LOGS/$1/$2.log
	[ "$cname" = "$main" ] || log=$SIM_LOGS/$1/$2.$cname.log
	if [ -n "$kc_previous" ]; then
		log=$log.prev
		[ -f "$log" ] || kc_err "Error from server (BadRequest): previous terminated container \"$cname\" in pod \"$2\" not found"
	fi
	if [ ! -f "$log" ]; then
		kc_err "Error from server (BadRequest): container \"$cname\" in pod \"$2\" is waiting to start: $reason"
	fi
	case $3 in
	-1 | "") cat "$log" ;;
	*[!0-9]*) kc_err "error: invalid argument \"$3\" for \"--tail\" flag: strconv.ParseInt: parsing \"$3\": invalid syntax" ;;
	*) tail -n "$3" "$log" ;;
	esac
}

# kc_wait: `kubectl wait --for=jsonpath=...` as kubectl's cmd/wait does it:
# the objects are listed once ("no matching resources found" when none),
# then each is waited for in turn until the path exists (or equals VALUE),
# printing "SINGULAR/NAME condition met"; past --timeout (default 30s)
# "timed out waiting for the condition on PLURAL/NAME", exit 1; an object
# deleted meanwhile is NotFound. SIMULATION: a real wait is a watch; the
# stand-in looks at its object file every 50 ms, and evaluates it when the
# file was rewritten (a new inode or change time).
kc_wait() {
	case $kc_for in
	jsonpath=*) ;;
	"") kc_err "error: --for must be set" ;;
	*) kc_err "error: SIMULATION limitation: the k3s stand-in waits only with --for=jsonpath=..." ;;
	esac
	[ $# -gt 0 ] || kc_err "error: resource(s) were provided, but no name was specified"
	expr=${kc_for#jsonpath=} want="" any=1
	case $expr in *"}="*) want=${expr#*\}=} expr=${expr%%\}=*}\} any="" ;; esac
	want=$(printf '%s' "$want" | sed "s/^['\"]//; s/['\"]\$//")
	prog=$(kc_jsonpath "$expr") || exit 1
	res=$1
	shift
	case $res in */*) set -- "${res#*/}" "$@"; res=${res%%/*} ;; esac
	kc_need_api
	kc_res "$res"
	if [ "$r_scope" = ns ]; then ns=$(kc_namespace); else ns=""; fi
	if [ -n "$kc_allobj" ]; then
		[ $# -eq 0 ] || kc_err "error: name cannot be provided when selector or --all is specified"
		for f in "$SIM_OBJ/$r_plural/${ns:-_}"/*.json; do
			[ -f "$f" ] && set -- "$@" "$(basename "$f" .json)"
		done
		[ $# -gt 0 ] || kc_err "error: no matching resources found"
	fi
	# Centiseconds of /proc/uptime, read without a fork in the loop.
	read -r up _ </proc/uptime
	end=$((${up%.*}${up#*.} + $(kc_wait_centis "${kc_timeout:-30s}")))
	for name in "$@"; do
		f=$(sim_obj "$r_plural" "$ns" "$name")
		[ -f "$f" ] || kc_not_found "$r_qual" "$name"
		seen=""
		while :; do
			[ -f "$f" ] || kc_not_found "$r_qual" "$name"
			# Inode and change time: sim_write's rename alternates between
			# two inodes, so two writes between looks would pass for none.
			id=$(stat -c '%i %z' "$f" 2>/dev/null)
			if [ "$id" != "$seen" ]; then
				seen=$id
				got=$($JQ -j "$KC_JQ_DEFS$prog" "$f" 2>/dev/null) || got=""
				if [ -n "$got" ] && { [ -n "$any" ] || [ "$(echo $got)" = "$(echo $want)" ]; }; then
					case $kc_out in
					json) $JQ --indent 4 . "$f" ;;
					"") echo "$r_single/$name condition met" ;;
					*) kc_err "error: SIMULATION limitation: the k3s stand-in's wait prints -o json only" ;;
					esac
					break
				fi
			fi
			read -r up _ </proc/uptime
			[ "${up%.*}${up#*.}" -lt "$end" ] ||
				kc_err "error: timed out waiting for the condition on $r_plural/$name"
			sleep 0.05
		done
	done
}

# A Go duration as kubectl's --timeout takes it (ms, s, m, h), in centiseconds.
kc_wait_centis() {
	case $1 in
	*ms) awk -v v="${1%ms}" 'BEGIN { printf "%d\n", v / 10 }' ;;
	*s) awk -v v="${1%s}" 'BEGIN { printf "%d\n", v * 100 }' ;;
	*m) awk -v v="${1%m}" 'BEGIN { printf "%d\n", v * 6000 }' ;;
	*h) awk -v v="${1%h}" 'BEGIN { printf "%d\n", v * 360000 }' ;;
	*) kc_err "error: invalid argument \"$1\" for \"--timeout\" flag: time: missing unit in duration \"$1\"" ;;
	esac
}

# kubectl label nodes (NAME | --all) KEY=VALUE… KEY-… [--overwrite], as
# kubectl's pkg/cmd/label does it: "node/NAME labeled" (or "unlabeled",
# "not labeled" when nothing changes); a new value for a key that has one
# needs --overwrite. SIMULATION: nodes only. The labels persist in the data
# dir (as the node object does in k3s's datastore); the server's node
# reconcile keeps them, and the node object is updated at once.
kc_label() {
	kc_need_api
	kc_res "${1:-}"
	[ "$r_plural" = nodes ] || kc_err "error: SIMULATION limitation: the k3s stand-in labels nodes only"
	shift
	names="" changes=""
	for a; do
		case $a in
		*=* | *-) changes="$changes $a" ;;
		*) names="$names $a" ;;
		esac
	done
	[ -n "$changes" ] || kc_err "error: at least one label update is required"
	if [ -n "$kc_allobj" ]; then
		names=$(for f in "$SIM_OBJ"/nodes/*.json; do [ -f "$f" ] && basename "$f" .json; done)
		# --all that finds none visits nothing: no output, no error.
		[ -n "$names" ] || return 0
	fi
	[ -n "$names" ] || kc_err "error: resource(s) were provided, but no name was specified"
	mkdir -p "$SIM_STATE"
	sim_lock || kc_err "error: SIMULATION: state lock busy"
	(kc_label_nodes)
	rc=$?
	sim_unlock
	return $rc
}

kc_label_nodes() {
	for n in $names; do
		f=$(sim_obj nodes "" "$n")
		[ -f "$f" ] || kc_not_found nodes "$n"
		before=$($JQ -c '.metadata.labels // {}' "$f")
		labels=$before
		for c in $changes; do
			case $c in
			*-)
				printf '%s' "$labels" | $JQ -e --arg k "${c%-}" 'has($k)' >/dev/null || echo "label \"${c%-}\" not found."
				labels=$(printf '%s' "$labels" | $JQ -c --arg k "${c%-}" 'del(.[$k])')
				grep -v "^${c%-}=" "$SIM_STATE/node-labels" >"$SIM_STATE/node-labels.tmp" 2>/dev/null
				mv -f "$SIM_STATE/node-labels.tmp" "$SIM_STATE/node-labels"
				;;
			*)
				k=${c%%=*} v=${c#*=}
				old=$(printf '%s' "$labels" | $JQ -r --arg k "$k" '.[$k] // empty')
				if [ -n "$old" ] && [ "$old" != "$v" ] && [ -z "$kc_overwrite" ]; then
					kc_err "error: '$k' already has a value ($old), and --overwrite is false"
				fi
				labels=$(printf '%s' "$labels" | $JQ -c --arg k "$k" --arg v "$v" '.[$k] = $v')
				{ grep -v "^$k=" "$SIM_STATE/node-labels" 2>/dev/null; echo "$k=$v"; } >"$SIM_STATE/node-labels.tmp"
				mv -f "$SIM_STATE/node-labels.tmp" "$SIM_STATE/node-labels"
				;;
			esac
		done
		if [ "$labels" = "$before" ]; then
			echo "node/$n not labeled"
			continue
		fi
		$JQ --argjson l "$labels" '.metadata.labels = $l' "$f" | sim_write "$f"
		case $changes in *=*) echo "node/$n labeled" ;; *) echo "node/$n unlabeled" ;; esac
	done
}
