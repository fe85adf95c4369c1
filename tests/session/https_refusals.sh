#!/bin/sh
# The session's HTTPS chain before launch (issue 45 must-show 2, decisions
# 290-294), plain lane: the map's HTTPS hosts per context and their files'
# checks, each refusal one line with nothing started (a dry run refuses as
# the launch would): an https:// remote of the other context, a plain
# http:// remote, credentials in a remote's URL (a host beyond 127.0.0.1
# is planned: decision 310);
# the CA file writable by others, a link, another user's or inside a
# repository; the credential file readable by others. The Plan (text and
# JSON) lists the HTTPS hosts and the broker's git scope with its policy
# sha256. jig runs as jigtest with this test's $T/home bound over its
# password-database home (as in ssh_refusals.sh).
set -eu
: "${JIG_TEST_PREFIX:?}"
USER_NAME=jigtest
UID_T=$(id -u "$USER_NAME")
T=$(mktemp -d /var/tmp/jig-https.XXXXXX)
chmod 755 "$T"
RT=/run/user/$UID_T
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$RT" && chown "$USER_NAME:" "$RT" && chmod 700 "$RT"
mkdir -p "$T/repo/.git" "$T/client/bin" "$T/home/.config/jig" "$T/home/.jig-tls"
printf '#!/usr/bin/sh\necho agent "$@"\n' >"$T/client/bin/agent" && chmod 755 "$T/client/bin/agent"
H=$(getent passwd "$USER_NAME" | cut -d: -f6)
[ -d "$H" ] || { mkdir -p "$H" && chown "$USER_NAME:" "$H"; }
# The files' contents are not read before launch: their place and owner are.
printf -- '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n' >"$T/home/.jig-tls/ca.pem"
printf 'username=jigtest\npassword=CANARY-HTTPS-PASSWORD\n' >"$T/home/.jig-tls/credential"
chown -R "$USER_NAME:" "$T"
chmod 700 "$T/home" "$T/home/.jig-tls"
chmod 644 "$T/home/.jig-tls/ca.pem"
chmod 600 "$T/home/.jig-tls/credential"
CA="$H/.jig-tls/ca.pem"
CRED="$H/.jig-tls/credential"
# map [JQ]: a personal repository with one HTTPS remote, fixture (the
# personal context has HTTPS hosts only, no ssh agent).
map() {
	jq -n --arg t "$T" --arg ca "$CA" --arg cred "$CRED" '{
	  format: "jig-sessions/1",
	  clients: {fake: {command: [($t + "/client/bin/agent")], trees: [($t + "/client")]}},
	  providers: {local: {client: "fake", endpoint: "127.0.0.1:1234"}},
	  contexts: {
	    personal: {https_hosts: {fixture: {host: "127.0.0.1", port: 8443, ca_file: $ca, credential: $cred}}},
	    work: {https_hosts: {forge: {host: "127.0.0.1", port: 9443, ca_file: $ca}}}},
	  repositories: {repo: {root: ($t + "/repo"), mode: "rw", context: "personal", default_provider: "local", providers: ["local"],
	                        git_remotes: ["https://127.0.0.1:8443/repo.git"]}}
	}' | jq "${1:-.}" >"$T/home/.config/jig/sessions.json"
	chown "$USER_NAME:" "$T/home/.config/jig/sessions.json" && chmod 600 "$T/home/.config/jig/sessions.json"
}
. "${JIG_SOURCE:?}/tests/session/home_bound.sh"

case_https_plan() {
	map
	j --dry-run
	[ "$rc" -eq 0 ] || fail "exit $rc"
	cat "$T/out"
	grep -Eq "^  https host +fixture at 127.0.0.1:8443 \\(CA $CA, credential $CRED\\)$" "$T/out" || fail "the plan lacks the HTTPS host"
	! grep -q "forge" "$T/out" || fail "the plan lists the other context's host"
	! grep -q "CANARY-HTTPS-PASSWORD" "$T/out" || fail "the plan shows the credential"
	d=$(sed -n "/^  git's scope/,\$p" "$T/out" | sed -n 's/^      policy sha256 \([0-9a-f]\{64\}\).*/\1/p' | head -n 1)
	[ -n "$d" ] || fail "the git scope has no policy sha256"
	j --dry-run --json
	[ "$rc" -eq 0 ] || fail "json: exit $rc"
	jq -e --arg d "$d" --arg ca "$CA" '.broker.git_scope.policy_sha256 == $d and (.broker.https_hosts | keys) == ["fixture"]
	  and .broker.https_hosts.fixture.port == 8443 and .broker.https_hosts.fixture.ca_file == $ca
	  and .broker.ssh_hosts == {}' "$T/out" >/dev/null || fail "plan json: $(jq .broker "$T/out")"
	! grep -q "CANARY-HTTPS-PASSWORD" "$T/out" || fail "the JSON plan shows the credential"
}
case_https_remote_other_context() {
	map '.repositories.repo.git_remotes = ["https://127.0.0.1:9443/org/r.git"]'
	refused 'git_remotes\[0\] "https://127.0.0.1:9443/org/r.git": its host and port are not an HTTPS host of context "personal" \(contexts.personal.https_hosts\)'
}
case_https_remote_unapproved_port() {
	map '.repositories.repo.git_remotes = ["https://127.0.0.1/repo.git"]'
	refused 'git_remotes\[0\] "https://127.0.0.1/repo.git": its host and port are not an HTTPS host of context "personal"'
}
case_https_plain_http() {
	map '.repositories.repo.git_remotes = ["http://127.0.0.1:8443/repo.git"]'
	refused 'git_remotes\[0\]: an https://HOST\[:PORT\]/PATH URL, an ssh://\[USER@\]ALIAS/PATH URL or an absolute path'
}
case_https_userinfo() {
	for u in "https://jigtest@127.0.0.1:8443/repo.git" "https://jigtest:pw@127.0.0.1:8443/repo.git"; do
		map ".repositories.repo.git_remotes = [\"$u\"]"
		refused 'git_remotes\[0\]: an https://HOST\[:PORT\]/PATH URL'
	done
}
# A host beyond 127.0.0.1 is reached through jig's CONNECT relay (decision
# 310, replacing 292's refusal): the launch's checks pass and the Plan
# lists it as any host.
case_https_remote_host() {
	map '.contexts.personal.https_hosts.fixture.host = "git.example.com" | .repositories.repo.git_remotes = ["https://git.example.com:8443/r.git"]'
	j --dry-run
	[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$T/err")"
	grep -Eq "^  https host +fixture at git.example.com:8443 \\(CA $CA, credential $CRED\\)$" "$T/out" || fail "the plan lacks the remote HTTPS host: $(cat "$T/out")"
}
case_https_ca_writable() {
	chmod 666 "$T/home/.jig-tls/ca.pem"
	map
	refused "the CA file of HTTPS host fixture, $CA: writable by others \\(chmod go-w\\); refused"
}
case_https_ca_link() {
	runuser -u "$USER_NAME" -- ln -s "$CA" "$T/home/.jig-tls/ca-link.pem"
	map ".contexts.personal.https_hosts.fixture.ca_file = \"$H/.jig-tls/ca-link.pem\""
	refused "the CA file of HTTPS host fixture, $H/.jig-tls/ca-link.pem: not a regular file \\(a link is never followed\\); refused"
}
case_https_ca_foreign() {
	chown root: "$T/home/.jig-tls/ca.pem"
	map
	refused "the CA file of HTTPS host fixture, $CA: not yours; refused"
}
case_https_ca_inside_repository() {
	cp "$T/home/.jig-tls/ca.pem" "$T/repo/ca.pem" && chown "$USER_NAME:" "$T/repo/ca.pem"
	map ".contexts.personal.https_hosts.fixture.ca_file = \"$T/repo/ca.pem\""
	refused "the CA file $T/repo/ca.pem is inside the mapped repository \"repo\""
}
case_https_credential_readable() {
	chmod 640 "$T/home/.jig-tls/credential"
	map
	refused "the credential file of HTTPS host fixture, $CRED: readable or writable by others \\(chmod 600\\); refused"
}

[ $# -eq 1 ] || { echo "usage: $0 CASE" >&2; exit 2; }
"case_$1"
