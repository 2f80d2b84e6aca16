# assert.bash - bats-support and bats-assert, as every suite loads them.
#
# Their own load.bash sources each of their files by "$(dirname
# "${BASH_SOURCE[0]}")/src/…": fifteen processes, and bats sources a suite
# once for every test it runs, so the libraries cost each test a fifth of a
# second of CPU on the 2-core test machine. The same files are sourced here
# without them; where the libraries are laid out otherwise, their own load.
_assert_libs() {
	local dir f
	for dir in ${BATS_LIB_PATH//:/ }; do
		[[ -f $dir/bats-support/load.bash && -d $dir/bats-support/src &&
			-f $dir/bats-assert/load.bash && -d $dir/bats-assert/src ]] || continue
		for f in "$dir"/bats-support/src/*.bash "$dir"/bats-assert/src/*.bash; do
			# shellcheck disable=SC1090 # the libraries' own files
			source "$f"
		done
		return 0
	done
	bats_load_library bats-support
	bats_load_library bats-assert
}
_assert_libs
