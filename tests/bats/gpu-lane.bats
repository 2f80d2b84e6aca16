#!/usr/bin/env bats
# .github/workflows/gpu-e2e.yml, the GPU lane: valid YAML that a GitHub
# runner accepts (its triggers, runner labels, steps), and every shell
# step parses. It runs on real GPU runners only; here it is checked.

setup() {
	load helpers/common
	WF=$OPENSHELL_SRCDIR/.github/workflows/gpu-e2e.yml
	[ -f "$WF" ] || skip "no .github in this tree (a distribution tarball)"
}

# Print a field of the workflow, as Python's YAML reads it ("on" is YAML 1.1's true).
wf() {
	/usr/bin/python3 -c 'import sys, yaml, json
w = yaml.safe_load(open(sys.argv[1]))
on = w.get("on", w.get(True))
env = {"w": w, "on": on}
print(json.dumps(eval(sys.argv[2], {}, env)))' "$WF" "$1"
}

@test "the GPU lane is valid YAML with manual and scheduled triggers, runner labels as an input" {
	run wf 'sorted(on.keys())'
	assert_output '["schedule", "workflow_dispatch"]'
	run wf 'on["workflow_dispatch"]["inputs"]["runner_labels"]["default"]'
	assert_output '"[\"self-hosted\", \"linux\", \"gpu\"]"'
	run wf 'w["jobs"]["gpu-e2e"]["runs-on"]'
	assert_output --partial 'fromJSON(inputs.runner_labels'
	run wf 'w["jobs"]["gpu-e2e"]["env"]["OPENSHELL_TEST_REAL_HOST"]'
	assert_output '"1"'
}

@test "it builds the image with openshell, runs the suites, compares GPU UUIDs and keeps the evidence" {
	run wf '"\n".join(s.get("run", "") for s in w["jobs"]["gpu-e2e"]["steps"])'
	assert_output --partial 'openshell image build'
	assert_output --partial 'bats --tap'
	assert_output --partial 'nvidia-smi -L'
	assert_output --partial '(UUID: $uuid)'
	assert_output --partial 'containerd/config.toml'
	assert_output --partial 'nvidia-device-plugin'
	assert_output --partial 'timings.txt'
	# The isolation and MPS tests run whatever suites were asked for, with the driver's facts kept.
	assert_output --partial "--filter 'privileged gateway|mps:N|verify passes all|pod-isolation'"
	assert_output --partial '/proc/driver/nvidia/gpus/*/information'
	run wf '[s.get("uses") for s in w["jobs"]["gpu-e2e"]["steps"] if s.get("uses")]'
	assert_output '["actions/checkout@v4", "actions/upload-artifact@v4"]'
}

@test "every shell step of the lane parses" {
	n=$(wf 'len(w["jobs"]["gpu-e2e"]["steps"])')
	for ((i = 0; i < n; i++)); do
		script=$(/usr/bin/python3 -c 'import sys, yaml
print(yaml.safe_load(open(sys.argv[1]))["jobs"]["gpu-e2e"]["steps"][int(sys.argv[2])].get("run", ""))' "$WF" "$i" |
			sed 's/\${{[^}]*}}/X/g')
		run bash -n <<<"$script"
		assert_success
	done
}
