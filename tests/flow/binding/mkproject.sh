#!/bin/sh
# mkproject.sh DIR SPEC: a test project of Flows that are all node.ts.
# SPEC is JSON {FLOW: {"bindings"?: {NAME: {"flow", ...}}, "commands"?: true,
# "inputs"?: [...], "outputs"?: [...]}}; each binding gets "timeout_ms":
# 60000 and "read": {"plan": "plan"} unless it says otherwise.
set -eu
dir=$1 spec=$2 here=$(dirname "$0")
mkdir -p "$dir"
printf '%s' "$spec" | jq '{format: "jig-project/1", flows: (keys | map({key: ., value: .}) | from_entries)}' >"$dir/jig.json"
for f in $(printf '%s' "$spec" | jq -r 'keys[]'); do
	mkdir -p "$dir/$f"
	cp "$here/node.ts" "$dir/$f/main.ts"
	cp "$here/../inside.js" "$dir/$f/inside.js"
	cp "$here/hunt.js" "$dir/$f/hunt.js"
	printf '%s' "$spec" | jq --arg f "$f" '.[$f] as $s | {format: "jig-flow/1", name: $f, entry: "main.ts",
		inputs: ($s.inputs // ["plan"]),
		outputs: ($s.outputs // ["result.json", "out.txt", "from-x.json", "from-y.json", "from-x.txt", "from-y.txt"])}
		+ (if $s.bindings then {bindings: ($s.bindings | map_values({timeout_ms: 60000, read: {plan: "plan"}} + .))} else {} end)
		+ (if $s.commands then {commands: {run: {timeout_ms: 30000}}} else {} end)' >"$dir/$f/flow.json"
done
