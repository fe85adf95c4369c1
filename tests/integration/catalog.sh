#!/bin/sh
# The capability catalog in the installed snapshot (issue 13), plain lane:
# a catalog that is malformed, not the signed bytes, not in the manifest or
# composes badly refuses review with one line naming it; a one-byte change
# of a fragment in a newly signed snapshot changes the launch identity and
# jig run asks for a new review. Each case_* is one ctest (catalog.<case>).
# Requirements: R-P01, R-P03, R-P08, R-L04 (see docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}" "${JIG_DEV_KEY:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-catalog.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
P="$T/prefix"
cp -a "$JIG_TEST_PREFIX" "$P"
fail() { echo "FAIL: $*" >&2; exit 1; }
snap() { echo "$P/lib/jig/$(readlink "$P/lib/jig/current")"; }
cp -r "$JIG_SOURCE/examples" "$T/p" && chown -R "$USER_NAME" "$T/p"
# j ARGS: jig ARGS as the user in the project; $rc, $T/out, $T/err.
j() {
	set +e
	(cd "$T/p" && runuser -u "$USER_NAME" -- "$P/bin/jig" "$@") >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	return 0
}
# install_with EDIT: a newly signed snapshot (next sequence) whose catalog
# is the current one passed through the jq program EDIT ("" keeps it).
install_with() {
	cur=$(snap)
	rm -rf "$T/stage" && mkdir "$T/stage" && (cd "$cur" && cp -r modules libexec "$T/stage/")
	[ -z "$1" ] || jq "$1" "$cur/libexec/catalog.json" >"$T/stage/libexec/catalog.json"
	seq=$(($(jq .sequence "$cur/manifest.json") + 1))
	"$P/bin/jig-snapshot" create --dir "$T/stage" --id "s$seq" --sequence "$seq" \
		--module sandbox-linux:sandbox:modules/sandbox-linux.so --module http:http:modules/http.so --module acp:acp:modules/acp.so --module display:display:modules/display.so >/dev/null
	[ -z "${2:-}" ] || $2
	"$P/bin/jig-snapshot" sign --dir "$T/stage" --key "$JIG_DEV_KEY" >/dev/null
	"$P/bin/jig-snapshot" install --dir "$T/stage" --prefix "$P" >/dev/null
}
# refused PATTERN: review fails with one line matching PATTERN.
refused() {
	j review --yes
	[ "$rc" -ne 0 ] || fail "review accepted the catalog"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line"
	grep -q -- "$1" "$T/err" || fail "error does not match /$1/"
}

case_unknown_fragment() {
	install_with '.kinds.flow.fragments += ["home-dir"]'
	refused 'catalog kind "flow": unknown fragment "home-dir"'
}
case_unknown_kind() {
	# A catalog without the kind jig composes Flows from.
	install_with 'del(.kinds.flow)'
	refused 'capability catalog: no scope kind "flow"'
}
case_same_target_twice() {
	install_with '.fragments["more-scratch"] = {tmpfs: [{target: "/scratch", size_bytes: 1073741824}]} | .kinds.flow.fragments += ["more-scratch"]'
	refused 'catalog kind "flow": target /scratch is granted by fragment "flow-scratch" and again by "more-scratch"'
}
case_widening_network() {
	install_with '.kinds.flow.fragments += ["network-host"]'
	refused 'catalog kind "flow": network is granted by fragment "network-none" and again by "network-host"'
}
case_broad_path() {
	install_with '.fragments.glibc.binds += [{source: "/home", target: "/home"}]'
	refused 'catalog fragment "glibc": binds\[2\].source "/home": too broad'
}
case_credential_name() {
	install_with '.fragments["flow-env"].env.GITHUB_TOKEN = "x"'
	refused 'catalog fragment "flow-env": scope policy: env "GITHUB_TOKEN": credentials never enter'
}
case_malformed() {
	install_with '.fragments.glibc.grant = "everything"'
	refused 'catalog fragment "glibc": .*grant'
	install_with '.format = "jig-catalog/9"'
	refused 'capability catalog: format "jig-catalog/9"'
}
case_not_the_signed_bytes() {
	# The catalog changed after the manifest was made (a file the signature
	# does not cover): refused before it is parsed.
	edit_after_create() { printf ' ' >>"$T/stage/libexec/catalog.json"; }
	install_with "" edit_after_create 2>/dev/null || true
	# jig-snapshot itself refuses to install it; edit the installed copy.
	chmod u+w "$(snap)/libexec/catalog.json"
	printf ' ' >>"$(snap)/libexec/catalog.json"
	refused 'catalog.json'
}
case_not_in_manifest() {
	rm -rf "$T/stage" && mkdir "$T/stage" && (cd "$(snap)" && cp -r modules libexec "$T/stage/")
	rm "$T/stage/libexec/catalog.json"
	seq=$(($(jq .sequence "$(snap)/manifest.json") + 1))
	"$P/bin/jig-snapshot" create --dir "$T/stage" --id "s$seq" --sequence "$seq" \
		--module sandbox-linux:sandbox:modules/sandbox-linux.so --module http:http:modules/http.so --module acp:acp:modules/acp.so --module display:display:modules/display.so >/dev/null
	"$P/bin/jig-snapshot" sign --dir "$T/stage" --key "$JIG_DEV_KEY" >/dev/null
	"$P/bin/jig-snapshot" install --dir "$T/stage" --prefix "$P" >/dev/null
	refused 'libexec/catalog.json'
}
# R-L04: the catalog is part of the launch identity. The Plan pins its
# digest (the same bytes in a new snapshot keep it); one byte of one
# fragment changes it, the scope's policy digest and the launch identity,
# and a Run admitted before the change is refused with "review again".
case_one_byte_review_again() {
	install_with ""
	j review --yes --json; [ "$rc" -eq 0 ] || fail "review"
	a=$(jq -r .plan.snapshot.launch_identity "$T/out")
	ca=$(jq -r .plan.snapshot.catalog_sha256 "$T/out")
	[ "$ca" = "$(sha256sum "$(snap)/libexec/catalog.json" | cut -d' ' -f1)" ] || fail "the Plan does not pin the catalog"
	da=$(jq -r '.plan.flows[] | select(.name == "csv-report") | .scope.policy_sha256' "$T/out")
	install_with ""
	j review --yes --json; [ "$(jq -r .plan.snapshot.catalog_sha256 "$T/out")" = "$ca" ] || fail "the same catalog bytes changed its digest"
	a=$(jq -r .plan.snapshot.launch_identity "$T/out")
	da=$(jq -r '.plan.flows[] | select(.name == "csv-report") | .scope.policy_sha256' "$T/out")
	install_with '.fragments["flow-env"].env.LANG = "C.UTF-9"'
	j review --json
	b=$(jq -r .plan.snapshot.launch_identity "$T/out")
	[ "$(jq -r .plan.snapshot.catalog_sha256 "$T/out")" != "$ca" ] || fail "a changed catalog kept its digest"
	db=$(jq -r '.plan.flows[] | select(.name == "csv-report") | .scope.policy_sha256' "$T/out")
	[ "$a" != "$b" ] || fail "a changed catalog kept the launch identity"
	[ "$da" != "$db" ] || fail "a changed fragment kept the scope policy digest"
	j run csv-report --input data="$JIG_SOURCE/examples/csv-report/sample.csv" --output "$T/pkt"
	[ "$rc" -eq 4 ] && grep -q "review again" "$T/err" || fail "jig run did not ask for a new review (exit $rc)"
	[ ! -e "$T/pkt" ] || fail "something was published"
}

"case_$1"
echo "PASS: $1"
