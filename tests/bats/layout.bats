#!/usr/bin/env bats
# The layout of src/ is the architecture (docs/design.md, "Modules"): each
# layer includes only itself and the layers below it, by path, and no file
# grows past the size a reader can hold.

setup() {
	load helpers/common
	SRC=$OPENSHELL_SRCDIR/src
	# A layer's rooms (src/gateway/ROOM/) are of the layer: every glob goes down.
	shopt -s globstar
}

# The layers, highest first; a file may include its own layer and any later one.
layers=(cmd gateway kube docker base)

allowed_below() {
	local i
	for i in "${!layers[@]}"; do
		[ "${layers[$i]}" = "$1" ] && { echo "${layers[@]:$i}"; return; }
	done
}

@test "every source file sits in a layer folder (main.c alone at the top)" {
	run find "$SRC" -maxdepth 1 -type f ! -name main.c
	assert_output ''
	for d in "$SRC"/*/; do
		d=${d%/}
		[[ " ${layers[*]} " == *" ${d##*/} "* ]] || fail "src/${d##*/} is not a layer of docs/design.md"
	done
}

@test "a layer includes only itself and the layers below it" {
	local bad=() layer f inc
	for layer in "${layers[@]}"; do
		read -r -a ok <<<"$(allowed_below "$layer")"
		for f in "$SRC/$layer"/**/*.[ch]; do
			while read -r inc; do
				[[ " ${ok[*]} " == *" ${inc%%/*} "* ]] || bad+=("${f#"$OPENSHELL_SRCDIR"/} includes $inc")
			done < <(sed -n 's/^#include "\([a-z]*\/[^"]*\)".*/\1/p' "$f")
		done
	done
	[ ${#bad[@]} -eq 0 ] || fail "$(printf '%s\n' "${bad[@]}")"
}

# gateway/'s rooms, highest first: the flows, then what they share; a file
# may include its own room and any later one (docs/design.md, "Modules").
rooms=(verify check manage start node deploy wait state gpu)

@test "gateway/ is rooms, each of at most 12 modules, including only itself and the rooms after it" {
	local bad=() i room f inc n
	run find "$SRC/gateway" -maxdepth 1 -type f
	assert_output ''
	for d in "$SRC"/gateway/*/; do
		d=${d%/}
		[[ " ${rooms[*]} " == *" ${d##*/} "* ]] || fail "src/gateway/${d##*/} is not a room of docs/design.md"
	done
	for i in "${!rooms[@]}"; do
		room=${rooms[$i]}
		n=$(find "$SRC/gateway/$room" -name '*.[ch]' | sed 's/\.[ch]$//' | sort -u | wc -l)
		((n <= 12)) || bad+=("src/gateway/$room has $n modules")
		for f in "$SRC/gateway/$room"/*.[ch]; do
			while read -r inc; do
				[[ " ${rooms[*]:$i} " == *" $inc "* ]] || bad+=("${f#"$OPENSHELL_SRCDIR"/} includes gateway/$inc/")
			done < <(sed -n 's/^#include "gateway\/\([a-z0-9_]*\)\/.*/\1/p' "$f")
		done
	done
	[ ${#bad[@]} -eq 0 ] || fail "$(printf '%s\n' "${bad[@]}")"
}

@test "project headers are included by their path, never by a bare name" {
	run grep -rnE '^#include "[^/"]+\.h"' "$SRC" --include='*.[ch]'
	# config.h is autoconf's, in the build tree.
	run grep -v '"config.h"' <<<"$output"
	assert_output ''
}

@test "no source file is over 500 lines" {
	run awk 'FNR == 1 && prev && n > 500 { print prev ": " n } { prev = FILENAME; n = FNR }
		 END { if (n > 500) print prev ": " n }' "$SRC"/**/*.[ch]
	assert_output ''
}

# Who uses whom, from the build's own objects: "A B" when src/A.o takes a
# symbol src/B.o defines. A header that promises another file's functions
# cannot hide a circle from the linker's view.
uses() {
	local dir=$1 objs=() f
	# The objects of today's sources: a reused build tree keeps those of
	# files moved or gone, whose arrows would hide or invent a circle.
	for f in "$SRC"/*/**/*.c; do
		f=${f#"$SRC"/}
		objs+=("$dir/${f%.c}.o")
	done
	# Two nm runs for all the objects: two a file cost half a minute on the 2-core machine.
	awk -v dir="$dir/" '
		function mod(f) { sub(/:.*/, "", f); if (index(f, dir) == 1) f = substr(f, length(dir) + 1); sub(/\.o$/, "", f); return f }
		FNR == NR { def[$NF] = mod($1); next }
		($NF in def) && def[$NF] != mod($1) { print mod($1), def[$NF] }
	' <(nm -A -g --defined-only "${objs[@]}") <(nm -A -u "${objs[@]}") | sort -u
}

@test "no two files use each other, directly or around a circle: every arrow points one way" {
	local objs loops
	objs=$(dirname "$OPENSHELL_BIN")/src
	compgen -G "$objs/base/*.o" >/dev/null || skip "no objects beside $OPENSHELL_BIN (an installed openshell)"
	run uses "$objs"
	assert_success
	[ "${#lines[@]}" -gt 100 ] || fail "too few arrows to be the build's: ${#lines[@]}"
	loops=$(tsort <<<"$output" 2>&1 >/dev/null) || true
	[ -z "$loops" ] || fail "$loops"
}

@test "docs, the man page and the shipped recipe speak of the product: no § numbers, issue numbers or sessions" {
	local top=$OPENSHELL_SRCDIR
	# (A process's or an SSH session is the product's word, not its history.)
	run grep -rnE '§ ?[0-9]|\(issue [0-9]+\)|issue [0-9]+\)|\b(this|last|previous|earlier|third|fourth|fifth|sixth|seventh|eighth) (session|round)\b' \
		"$top/README.md" "$top/docs" "$top/doc" "$top/deploy" "$top/src"
	assert_output ''
}
