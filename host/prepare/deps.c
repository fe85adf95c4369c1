/* A Flow's package.json and bun.lock, checked at review before anything is
 * fetched: the manifest's root declarations, then the lock's sources,
 * integrities and closure. */
#include "prepare/deps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "prepare/semver.h"
#include "util/cleanup.h"
#include "util/credential.h"
#include "util/crypto.h"
#include "util/fileio.h"
#include "util/json.h"

/* The sections whose packages an install would fetch. */
static const char *const sections[] = {"dependencies", "devDependencies", "optionalDependencies", "peerDependencies", NULL};
/* Scripts a package manager runs for the root package while installing. */
static const char *const lifecycle[] = {"preinstall", "install",    "postinstall", "preprepare", "prepare",
					"postprepare", "prepublish", "prepack",	   "postpack",	 "dependencies", NULL};
/* Root keys that could bring a package from elsewhere or run it. */
static const char *const refused_root[][2] = {
	{"trustedDependencies", "jig never runs package scripts, so no dependency is trusted to"},
	{"workspaces", "a Flow is one package; workspaces are not supported"},
	{"bundledDependencies", "bundled dependencies are not prepared from the lock"},
	{"bundleDependencies", "bundled dependencies are not prepared from the lock"},
};

#define refuse(e, ...) jig_err(e, JIG_E_USAGE, __VA_ARGS__)

/* What every refusal of a lock that does not match its manifest says. */
#define UPDATE_LOCK                                                                                                   \
	"update bun.lock with the pinned Bun: jig lock FLOW (bun install --lockfile-only in the installer scope, against the " \
	"operator's registry)"

/* This host as the pinned Bun sees it (its os, cpu and libc), and the
 * names it knows (Bun's install/npm.zig). */
static const char *const os_names[] = {"aix", "darwin", "freebsd", "linux", "openbsd", "sunos", "win32", "android", NULL};
static const char *const cpu_names[] = {"arm", "arm64", "ia32", "mips", "mipsel", "ppc", "ppc64", "s390", "s390x", "x32", "x64", NULL};
static const char *const libc_names[] = {"glibc", "musl", NULL};
#if defined(__x86_64__)
#define HOST_CPU "x64"
#elif defined(__aarch64__)
#define HOST_CPU "arm64"
#else
#define HOST_CPU "" /* no package is for it */
#endif
static const struct {
	const char *key, *host;
	const char *const *names;
} platform[] = {{"os", "linux", os_names}, {"cpu", HOST_CPU, cpu_names}, {"libc", "glibc", libc_names}};

void jig_deps_strip_trailing_commas(char *buf, size_t *len)
{
	size_t o = 0, n = *len;
	bool str = false;
	for (size_t i = 0; i < n; i++) {
		char c = buf[i];
		if (str) {
			if (c == '\\' && i + 1 < n) {
				buf[o++] = c;
				c = buf[++i];
			} else if (c == '"') {
				str = false;
			}
		} else if (c == '"') {
			str = true;
		} else if (c == ',') {
			size_t j = i + 1;
			while (j < n && (buf[j] == ' ' || buf[j] == '\t' || buf[j] == '\n' || buf[j] == '\r'))
				j++;
			if (j < n && (buf[j] == '}' || buf[j] == ']'))
				continue;
		}
		buf[o++] = c;
	}
	*len = o;
}

/* The line of the first comment (a slash followed by a slash or a star,
 * outside strings) in buf, or 0 if there is none. */
static size_t comment_line(const char *buf, size_t n)
{
	size_t line = 1;
	bool str = false;
	for (size_t i = 0; i < n; i++) {
		char c = buf[i];
		if (c == '\n')
			line++;
		if (str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				str = false;
		} else if (c == '"') {
			str = true;
		} else if (c == '/' && i + 1 < n && (buf[i + 1] == '/' || buf[i + 1] == '*')) {
			return line;
		}
	}
	return 0;
}

/* An npm package name: optionally "@scope/", then lowercase letters,
 * digits and "-._~", at most 214 bytes, not starting with '.' or '_'. */
static bool name_ok(const char *s)
{
	size_t n = strlen(s);
	const char *p = s;
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789-._~";
	if (n == 0 || n > 214)
		return false;
	if (*p == '@') {
		size_t k = strspn(p + 1, chars);
		if (k == 0 || p[1 + k] != '/' || p[1] == '.' || p[1] == '_')
			return false;
		p += k + 2;
	}
	return *p && *p != '.' && *p != '_' && strspn(p, chars) == strlen(p);
}

/* A registry specifier: a version, range or tag, or "npm:NAME@RANGE". No
 * git, GitHub shorthand, file, link, workspace, portal, catalog, URL or
 * tarball path ("x.tgz" would pass as a tag: a package manager reads it
 * as a file). */
static bool spec_ok(const char *s)
{
	static const char range[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.^~<>=| *+-";
	static const char *const tarball[] = {".tgz", ".tar", ".tar.gz", NULL};
	size_t n = strlen(s);
	for (size_t i = 0; tarball[i]; i++)
		if (n >= strlen(tarball[i]) && strcasecmp(s + n - strlen(tarball[i]), tarball[i]) == 0)
			return false;
	if (strncmp(s, "npm:", 4) == 0) {
		const char *at = strrchr(s + 4, '@');
		if (!at || at == s + 4)
			return false;
		char name[216];
		if ((size_t)(at - (s + 4)) >= sizeof(name))
			return false;
		memcpy(name, s + 4, (size_t)(at - (s + 4)));
		name[at - (s + 4)] = '\0';
		return name_ok(name) && strspn(at + 1, range) == strlen(at + 1);
	}
	return strlen(s) <= 256 && strspn(s, range) == strlen(s);
}

/* The package a dependency named dep with registry specifier spec
 * installs: dep, or NAME of "npm:NAME@RANGE". */
static void spec_target(const char *dep, const char *spec, char *name, size_t cap)
{
	if (strncmp(spec, "npm:", 4) == 0)
		snprintf(name, cap, "%.*s", (int)(strrchr(spec + 4, '@') - (spec + 4)), spec + 4);
	else
		snprintf(name, cap, "%s", dep);
}

/* A lock key, the install path: npm names joined by '/' ("a", "@s/a",
 * "a/b", "@s/a/@t/b"), bounded in length and depth. last gets the last
 * name. */
static bool key_ok(const char *key, char last[216])
{
	size_t depth = 0;
	if (strlen(key) > JIG_DEPS_KEY_MAX)
		return false;
	for (const char *p = key;;) {
		const char *end = strchrnul(p, '/');
		if (*p == '@' && *end == '/')
			end = strchrnul(end + 1, '/');
		if ((size_t)(end - p) >= 216 || ++depth > JIG_DEPS_MAX_DEPTH)
			return false;
		memcpy(last, p, (size_t)(end - p));
		last[end - p] = '\0';
		if (!name_ok(last))
			return false;
		if (!*end)
			return true;
		p = end + 1;
	}
}

/* "1.2.3", "1.2.3-beta.1", "1.2.3+build": the one version a lock pins. */
static bool version_ok(const char *v)
{
	for (int part = 0; part < 3; part++) {
		size_t d = strspn(v, "0123456789");
		if (d == 0 || d > 16 || (d > 1 && v[0] == '0'))
			return false;
		v += d;
		if (part < 2 && *v++ != '.')
			return false;
	}
	return *v == '\0' || ((*v == '-' || *v == '+') &&
			      strspn(v + 1, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-+") == strlen(v + 1) &&
			      v[1]);
}

/* "sha512-" and the base64 of 64 bytes. */
static bool integrity_ok(const char *s)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	return strncmp(s, "sha512-", 7) == 0 && strlen(s) == 7 + 88 && strspn(s + 7, b64) == 86 && strcmp(s + 93, "==") == 0;
}

/* Whether a package's os, cpu or libc value v (platform[which].key; a
 * string or an array of strings, absent: any) admits this host, as the
 * pinned Bun decides (install/npm.zig, Negatable): "name" adds, "!name"
 * removes, "any" adds all, "none" or only unknown names admit nothing;
 * with removals only, all but those. A libc that admits nothing is no
 * constraint (Bun's default libc). */
static bool platform_admits(json_t *v, size_t which)
{
	bool added = false, host_added = false, removed = false, host_removed = false, wildcard = false, unknown = false;
	size_t n = json_is_array(v) ? json_array_size(v) : v ? 1 : 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_is_array(v) ? json_array_get(v, i) : v);
		bool neg, known = false;
		if (!s || !*s)
			continue;
		if (strcmp(s, "any") == 0) {
			wildcard = true;
			continue;
		}
		if (strcmp(s, "none") == 0) {
			unknown = true;
			continue;
		}
		neg = s[0] == '!';
		for (size_t k = 0; platform[which].names[k]; k++)
			known |= strcmp(s + neg, platform[which].names[k]) == 0;
		if (!known) {
			unknown |= !neg;
			continue;
		}
		bool host = strcmp(s + neg, platform[which].host) == 0;
		if (neg)
			removed = true, host_removed |= host;
		else
			added = true, host_added |= host;
	}
	if (!wildcard && !added && !removed)
		return !unknown || strcmp(platform[which].key, "libc") == 0;
	if (!wildcard && !added)
		return !host_removed;
	return (wildcard || host_added) && !host_removed;
}

bool jig_deps_platform_admits(const char *key, json_t *value)
{
	for (size_t w = 0; w < sizeof(platform) / sizeof(platform[0]); w++)
		if (strcmp(key, platform[w].key) == 0)
			return platform_admits(value, w);
	return false;
}

/* A lock entry's os, cpu and libc: absent, a string, or an array of at
 * most 32 strings, each at most 64 bytes. */
static bool platform_ok(json_t *meta)
{
	for (size_t w = 0; w < sizeof(platform) / sizeof(platform[0]); w++) {
		json_t *v = json_object_get(meta, platform[w].key);
		size_t n = json_is_array(v) ? json_array_size(v) : 1;
		if (!v)
			continue;
		if ((!json_is_string(v) && !json_is_array(v)) || n > 32)
			return false;
		for (size_t i = 0; i < n; i++) {
			json_t *x = json_is_array(v) ? json_array_get(v, i) : v;
			if (!json_is_string(x) || json_string_length(x) > 64)
				return false;
		}
	}
	return true;
}

/* A tarball URL in a lock: printable ASCII, no space or quote, bounded;
 * whether it is the configured registry's own (scheme, host, port and
 * path) is jig_deps_check_registry's question, whose refusal names the
 * configured registry. */
static bool url_ok(const char *u)
{
	if (strlen(u) > JIG_DEPS_URL_MAX)
		return false;
	for (const char *c = u; *c; c++)
		if (*c <= ' ' || *c >= 0x7f || *c == '"' || *c == '\\')
			return false;
	return true;
}

/* The range a manifest specifier asks for: itself, or RANGE of
 * "npm:NAME@RANGE". */
static const char *spec_range(const char *spec)
{
	return strncmp(spec, "npm:", 4) == 0 ? strrchr(spec + 4, '@') + 1 : spec;
}

/* overrides (or resolutions): {selector: registry specifier}. */
static int check_overrides(json_t *o, const char *file, const char *key, const char *verb, struct jig_error *e)
{
	const char *k;
	json_t *v;
	if (o && !json_is_object(o))
		return refuse(e, "%s: %s must be an object of name: registry version", file, key);
	json_object_foreach(o, k, v)
		if (!json_is_string(v) || !spec_ok(json_string_value(v)))
			return refuse(e, "%s: %s.%.64s: only a registry version may %s", file, key, k, verb);
	return 0;
}

static int check_root(json_t *m, const char *what, bool *declared, struct jig_error *e)
{
	*declared = false;
	for (size_t i = 0; sections[i]; i++)
		*declared |= json_object_size(json_object_get(m, sections[i])) > 0;
	if (!*declared) /* nothing will be installed: nothing of it can run */
		return 0;
	/* Root declarations first, then the sources. */
	for (size_t i = 0; i < sizeof(refused_root) / sizeof(refused_root[0]); i++)
		if (json_object_get(m, refused_root[i][0]))
			return refuse(e, "%s: %s: %s; remove it", what, refused_root[i][0], refused_root[i][1]);
	json_t *scripts = json_object_get(m, "scripts");
	for (size_t i = 0; lifecycle[i]; i++)
		if (json_object_get(scripts, lifecycle[i]))
			return refuse(e, "%s: scripts.%s would run while installing; jig never runs package scripts (remove it)", what,
				      lifecycle[i]);
	for (size_t i = 0; sections[i]; i++) {
		json_t *sec = json_object_get(m, sections[i]);
		const char *k;
		json_t *v;
		if (sec && !json_is_object(sec))
			return refuse(e, "%s: %s must be an object of name: version range", what, sections[i]);
		json_object_foreach(sec, k, v) {
			if (!name_ok(k))
				return refuse(e, "%s: %s: \"%.64s\" is not an npm package name", what, sections[i], k);
			if (!json_is_string(v) || !spec_ok(json_string_value(v)))
				return refuse(e,
					      "%s: %s.%s: \"%.80s\" is not a registry version; git, GitHub, file, link, workspace and URL sources are not allowed",
					      what, sections[i], k, json_is_string(v) ? json_string_value(v) : "(not a string)");
			if (!jig_semver_range_ok(spec_range(json_string_value(v))))
				return refuse(e,
					      "%s: %s.%s: \"%.80s\" is not a version range jig can read (a version, ^, ~, 1.x, *, comparators, a hyphen range or ||); jig never guesses what a tag such as latest means: write the version or range instead",
					      what, sections[i], k, json_string_value(v));
		}
	}
	int r = check_overrides(json_object_get(m, "overrides"), what, "overrides", "override", e);
	return r ? r : check_overrides(json_object_get(m, "resolutions"), what, "resolutions", "resolve", e);
}

/* The package at install path key that a dependency named dep of the
 * package at from resolves to: node_modules lookup, nearest first. */
static json_t *resolve(json_t *packages, const char *from, const char *dep, char *found, size_t cap)
{
	char path[JIG_DEPS_KEY_MAX + 1];
	snprintf(path, sizeof(path), "%s", from); /* from is a checked key */
	for (;;) {
		if ((size_t)snprintf(found, cap, "%s%s%s", path, *path ? "/" : "", dep) < cap &&
		    json_object_get(packages, found))
			return json_object_get(packages, found);
		if (!*path)
			return NULL;
		/* Up one package: drop the last name (two segments if scoped). */
		char *slash = strrchr(path, '/');
		if (!slash) {
			path[0] = '\0';
			continue;
		}
		*slash = '\0';
		char *prev = strrchr(path, '/');
		char *seg = prev ? prev + 1 : path;
		if (*seg == '@')
			*(prev ? prev : path) = '\0';
	}
}

/* The name a lock entry installs ("name@version"), split. */
static int split_spec(const char *spec, char *name, size_t ncap, const char **version)
{
	const char *at = strrchr(spec, '@');
	if (!at || at == spec || (size_t)(at - spec) >= ncap)
		return -1;
	memcpy(name, spec, (size_t)(at - spec));
	name[at - spec] = '\0';
	*version = at + 1;
	return 0;
}

static int check_entry(const char *key, json_t *ent, json_t *out, size_t *edges, size_t *urls, struct jig_error *e)
{
	char name[216], last[216];
	const char *version;
	json_t *spec = json_array_get(ent, 0), *reg = json_array_get(ent, 1), *meta = json_array_get(ent, 2),
	       *integ = json_array_get(ent, 3);
	if (!key_ok(key, last))
		return refuse(e,
			      "bun.lock: packages.%.120s: the key is not a node_modules path of npm package names (\"a\", \"@s/a\", \"a/b\"; at most %d names and %d bytes)",
			      key, JIG_DEPS_MAX_DEPTH, JIG_DEPS_KEY_MAX);
	if (!json_is_array(ent) || json_array_size(ent) != 4 || !json_is_string(spec) || !json_is_string(reg) ||
	    !json_is_object(meta) || !json_is_string(integ))
		return refuse(e, "bun.lock: packages.%.120s: not a registry package [name@version, registry, {...}, integrity]%s",
			      key, json_is_array(ent) && json_array_size(ent) < 4 ? "; git, GitHub, file, link and URL sources are not allowed" : "");
	if (split_spec(json_string_value(spec), name, sizeof(name), &version) < 0 || !name_ok(name))
		return refuse(e, "bun.lock: packages.%.120s: \"%.120s\" is not name@version", key, json_string_value(spec));
	if (!version_ok(version))
		return refuse(e,
			      "bun.lock: packages.%.120s: \"%.120s\" is not a registry version; git, GitHub, file, link, workspace and URL sources are not allowed",
			      key, json_string_value(spec));
	if (json_string_length(reg) != 0 && !url_ok(json_string_value(reg)))
		return refuse(e,
			      "bun.lock: packages.%.120s: from \"%.120s\", not a URL; only the configured registry is allowed (\"\", or its own tarball URL for the package)",
			      key, json_string_value(reg));
	if (!platform_ok(meta))
		return refuse(e, "bun.lock: packages.%.120s: os, cpu and libc must each be a string or an array of at most 32 strings", key);
	if (!integrity_ok(json_string_value(integ)))
		return refuse(e, "bun.lock: packages.%.120s: needs a sha512 integrity (\"sha512-\" and 88 base64 characters)", key);
	const char *k;
	json_t *v;
	size_t n = 0;
	for (size_t i = 0; sections[i]; i++) {
		json_t *sec = json_object_get(meta, sections[i]);
		if (sec && !json_is_object(sec))
			return refuse(e, "bun.lock: packages.%.120s: %s must be an object of name: version range", key, sections[i]);
		n += json_object_size(sec);
		if (n > JIG_DEPS_MAX_DEPS)
			return refuse(e, "bun.lock: packages.%.120s: more than %d dependencies", key, JIG_DEPS_MAX_DEPS);
		*edges += json_object_size(sec);
		if (*edges > JIG_DEPS_MAX_EDGES)
			return refuse(e, "bun.lock: packages.%.120s: the lock's packages declare more than %d dependencies in all", key,
				      JIG_DEPS_MAX_EDGES);
		json_object_foreach(sec, k, v) {
			if (!name_ok(k))
				return refuse(e, "bun.lock: packages.%.120s: %s: \"%.64s\" is not an npm package name", key, sections[i], k);
			if (!json_is_string(v) || !spec_ok(json_string_value(v)))
				return refuse(e, "bun.lock: packages.%.120s: %s.%.64s is not a registry version", key, sections[i], k);
		}
	}
	json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:O}", "path", key, "name", name, "version", version, "integrity", integ));
	if (json_string_length(reg)) {
		json_object_set(json_array_get(out, json_array_size(out) - 1), "url", reg);
		(*urls)++;
	}
	return 0;
}

/* Every dependency of root (a workspace) and of every package resolves;
 * every package is reached. Marks in seen. */
static int closure(json_t *packages, json_t *root, json_t *seen, struct jig_error *e)
{
	/* A work list of install paths. */
	json_t *todo = json_array();
	int r = 0;
	json_array_append_new(todo, json_string(""));
	for (size_t t = 0; r == 0 && t < json_array_size(todo); t++) {
		const char *from = json_string_value(json_array_get(todo, t));
		json_t *decl = *from ? json_array_get(json_object_get(packages, from), 2) : root;
		for (size_t i = 0; r == 0 && sections[i]; i++) {
			/* A published package's devDependencies are not installed. */
			if (*from && strcmp(sections[i], "devDependencies") == 0)
				continue;
			const char *dep;
			json_t *v;
			json_object_foreach(json_object_get(decl, sections[i]), dep, v) {
				char found[JIG_DEPS_KEY_MAX + 216 + 2], want[216], name[216];
				const char *version;
				json_t *ent = resolve(packages, from, dep, found, sizeof(found));
				if (!ent) {
					/* Optional and peer dependencies may be absent. */
					if (strcmp(sections[i], "optionalDependencies") == 0 || strcmp(sections[i], "peerDependencies") == 0)
						continue;
					r = refuse(e, "bun.lock does not resolve %s%.120s's dependency %.120s; " UPDATE_LOCK,
						   *from ? "package " : "", *from ? from : "the manifest", dep);
					break;
				}
				/* The key's package is the one asked for: the dependency's
				 * own name, or its npm: alias target. */
				spec_target(dep, json_string_value(v), want, sizeof(want));
				split_spec(json_string_value(json_array_get(ent, 0)), name, sizeof(name), &version);
				if (strcmp(name, want) != 0) {
					r = refuse(e, "bun.lock: packages.%.120s is %.120s, but %s%.120s's dependency %.120s (%.120s) asks for %.120s",
						   found, json_string_value(json_array_get(ent, 0)), *from ? "package " : "",
						   *from ? from : "the manifest", dep, json_string_value(v), want);
					break;
				}
				/* The manifest's own ranges hold for what the lock pins. */
				enum jig_semver_result sr = *from ? JIG_SEMVER_YES : jig_semver_satisfies(version, spec_range(json_string_value(v)));
				if (sr != JIG_SEMVER_YES) {
					if (sr == JIG_SEMVER_NO)
						r = refuse(e, "bun.lock locks %.120s at %.64s, outside package.json's range \"%.80s\" (%s.%.120s); " UPDATE_LOCK,
							   found, version, json_string_value(v), sections[i], dep);
					else if (sr == JIG_SEMVER_VERSION)
						r = refuse(e, "bun.lock: packages.%.120s: \"%.64s\" is not a semver version", found, version);
					else
						r = refuse(e, "bun.lock: %s.%.120s: \"%.80s\" is not a version range jig can read", sections[i], dep,
							   json_string_value(v));
					break;
				}
				if (!json_object_get(seen, found)) {
					json_object_set_new(seen, found, json_true());
					json_array_append_new(todo, json_string(found));
				}
			}
		}
	}
	json_decref(todo);
	return r;
}

/* Which packages the pinned Bun skips on this host (it neither fetches
 * nor installs them): those whose os or cpu does not admit this host,
 * those whose libc does not when only optional dependencies reach them
 * (the pinned Bun installs them otherwise), and those reached only
 * through skipped ones. Marks each in d->packages with "skipped": "os",
 * "cpu", "libc" or "dependents". The lock is closed already. */
static void platform_skips(json_t *packages, json_t *root, struct jig_deps *d)
{
	json_t *state = json_object(); /* key: true installed, or the reason it is skipped */
	json_t *todo = json_array();
	json_array_append_new(todo, json_string(""));
	for (size_t t = 0; t < json_array_size(todo); t++) {
		const char *from = json_string_value(json_array_get(todo, t));
		json_t *decl = *from ? json_array_get(json_object_get(packages, from), 2) : root;
		for (size_t i = 0; sections[i]; i++) {
			if (*from && strcmp(sections[i], "devDependencies") == 0)
				continue;
			bool optional = strcmp(sections[i], "optionalDependencies") == 0;
			const char *dep;
			json_t *v;
			json_object_foreach(json_object_get(decl, sections[i]), dep, v) {
				char found[JIG_DEPS_KEY_MAX + 216 + 2];
				json_t *ent = resolve(packages, from, dep, found, sizeof(found));
				json_t *st = json_object_get(state, found), *meta = json_array_get(ent, 2);
				if (!ent || json_is_true(st))
					continue;
				const char *why = NULL;
				for (size_t w = 0; !why && w < sizeof(platform) / sizeof(platform[0]); w++)
					if ((optional || strcmp(platform[w].key, "libc") != 0) &&
					    !platform_admits(json_object_get(meta, platform[w].key), w))
						why = platform[w].key;
				if (why) {
					if (!st)
						json_object_set_new(state, found, json_string(why));
					continue;
				}
				json_object_set_new(state, found, json_true());
				json_array_append_new(todo, json_string(found));
			}
		}
	}
	size_t i;
	json_t *pk;
	json_array_foreach(d->packages, i, pk) {
		json_t *st = json_object_get(state, json_string_value(json_object_get(pk, "path")));
		if (!json_is_true(st)) {
			json_object_set_new(pk, "skipped", json_string(st ? json_string_value(st) : "dependents"));
			d->n_skipped++;
		}
	}
	json_decref(todo);
	json_decref(state);
}

/* Every patch is for a package the lock holds, at the version it holds: a
 * patch for anything else would be silently unused. */
static int check_patch_targets(struct jig_deps *d, struct jig_error *e)
{
	size_t i, k;
	json_t *pp, *pk;
	json_array_foreach(d->patches, i, pp) {
		const char *spec = json_string_value(json_object_get(pp, "spec"));
		char name[216];
		const char *version;
		if (split_spec(spec, name, sizeof(name), &version) < 0 || !name_ok(name) || !version_ok(version))
			return refuse(e, "package.json: patchedDependencies.%.120s: not name@version (what bun patch writes)", spec);
		const char *other = NULL;
		bool found = false;
		json_array_foreach(d->packages, k, pk) {
			if (strcmp(json_string_value(json_object_get(pk, "name")), name) != 0)
				continue;
			other = json_string_value(json_object_get(pk, "version"));
			found |= strcmp(other, version) == 0;
		}
		if (found)
			continue;
		if (other)
			return refuse(e,
				      "package.json: patchedDependencies.%.120s: bun.lock has %.120s at %.64s, not %.64s, so the patch would be silently unused; patch the locked version (bun patch) or " UPDATE_LOCK,
				      spec, name, other, version);
		return refuse(e,
			      "package.json: patchedDependencies.%.120s: bun.lock has no package %.120s, so the patch would be silently unused; remove the patch, or add the dependency and " UPDATE_LOCK,
			      spec, name);
	}
	return 0;
}

void jig_deps_tarball_url(const char *registry, const char *name, const char *version, char *out, size_t cap)
{
	size_t rl = strlen(registry);
	const char *slash = strchr(name, '/');
	snprintf(out, cap, "%s%s%s/-/%s-%s.tgz", registry, rl && registry[rl - 1] == '/' ? "" : "/", name, slash ? slash + 1 : name,
		 version);
}

int jig_deps_check_registry(const struct jig_deps *d, const char *flow, const char *registry, struct jig_error *e)
{
	size_t i;
	json_t *pk;
	json_array_foreach(d->packages, i, pk) {
		const char *url = json_string_value(json_object_get(pk, "url"));
		char want[JIG_DEPS_URL_MAX + 2048];
		if (!url)
			continue;
		jig_deps_tarball_url(registry, json_string_value(json_object_get(pk, "name")),
				     json_string_value(json_object_get(pk, "version")), want, sizeof(want));
		if (strcmp(url, want) != 0)
			return refuse(e,
				      "flow %s: bun.lock: packages.%.120s: its tarball \"%.200s\" is not the configured registry's (%.200s); only the configured registry is allowed, at exactly %.300s",
				      flow, json_string_value(json_object_get(pk, "path")), url, registry, want);
	}
	return 0;
}

static bool same_object(json_t *a, json_t *b)
{
	if (!a || !json_object_size(a))
		return !b || !json_object_size(b);
	return json_equal(a, b);
}

static int check_lock(int pkgfd, json_t *manifest, struct jig_deps *d, struct jig_error *e)
{
	jig_autofree char *buf = NULL;
	size_t len;
	struct jig_error ignored = {0};
	if (jig_read_file_at(pkgfd, JIG_DEPS_LOCK, JIG_DEPS_LOCK_MAX, JIG_DEPS_LOCK, &buf, &len, NULL, &ignored) < 0) {
		if (faccessat(pkgfd, JIG_DEPS_LOCK, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			return refuse(e, "%s", ignored.msg);
		return refuse(e,
			      "package.json declares dependencies but there is no bun.lock; resolving them needs jig review --allow-resolution-network (dependency-selected requests from this host), or commit the bun.lock jig lock writes with the pinned Bun");
	}
	const char *cred;
	size_t cline = jig_credential_line(buf, len, &cred);
	if (cline)
		return refuse(e,
			      "bun.lock: line %zu: %s; a credential never belongs in a lock (jig keeps, prints and retains locks); remove it and give the registry's credentials to the operator's configuration instead",
			      cline, cred);
	size_t comment = comment_line(buf, len);
	jig_deps_strip_trailing_commas(buf, &len);
	json_t *lock = NULL;
	int r = jig_json_parse_object(buf, len, JIG_DEPS_LOCK, &lock, e);
	if (r && comment)
		return refuse(e,
			      "bun.lock: line %zu: a comment; comments are not allowed: jig reads bun.lock exactly as the pinned Bun writes it (JSON with trailing commas, no comments), so that what it checks is what the installer reads; remove the comment or " UPDATE_LOCK,
			      comment);
	if (r)
		return r;
	static const char *const keys[] = {"lockfileVersion", "configVersion", "workspaces", "packages", "patchedDependencies",
					   "overrides", NULL};
	json_t *ver = json_object_get(lock, "lockfileVersion"), *ws = json_object_get(lock, "workspaces");
	json_t *packages = json_object_get(lock, "packages"), *root = json_object_get(ws, "");
	json_t *seen = json_object();
	const char *k;
	json_t *v;
	if ((r = jig_json_only_keys(lock, keys, JIG_DEPS_LOCK, e)))
		goto out;
	if (!json_is_integer(ver) || json_integer_value(ver) < 1 || json_integer_value(ver) > 2) {
		r = refuse(e, "bun.lock: lockfileVersion must be 1 or 2 (the pinned Bun's text lock)");
		goto out;
	}
	if (!json_is_object(ws) || json_object_size(ws) != 1 || !json_is_object(root)) {
		r = refuse(e, "bun.lock: workspaces must hold exactly the root package (\"\")");
		goto out;
	}
	if (packages && (!json_is_object(packages) || json_object_size(packages) > JIG_DEPS_MAX_PACKAGES)) {
		r = refuse(e, "bun.lock: packages must be an object of at most %d packages", JIG_DEPS_MAX_PACKAGES);
		goto out;
	}
	/* The lock's root declares exactly what the manifest does. */
	for (size_t i = 0; sections[i]; i++)
		if (!same_object(json_object_get(manifest, sections[i]), json_object_get(root, sections[i]))) {
			r = refuse(e, "bun.lock: its %s differ from package.json's; " UPDATE_LOCK,
				   sections[i]);
			goto out;
		}
	if (!same_object(json_object_get(manifest, "patchedDependencies"), json_object_get(lock, "patchedDependencies"))) {
		r = refuse(e, "bun.lock: its patchedDependencies differ from package.json's");
		goto out;
	}
	if ((r = check_overrides(json_object_get(lock, "overrides"), JIG_DEPS_LOCK, "overrides", "override", e)))
		goto out;
	d->packages = json_array();
	size_t edges = 0;
	json_object_foreach(packages, k, v)
		if ((r = check_entry(k, v, d->packages, &edges, &d->n_urls, e)))
			goto out;
	if ((r = closure(packages, root, seen, e)))
		goto out;
	json_object_foreach(packages, k, v)
		if (!json_object_get(seen, k)) {
			r = refuse(e, "bun.lock: package %.120s is not reached from package.json's dependencies; the lock does not belong to this manifest",
				   k);
			goto out;
		}
	d->n_packages = json_object_size(packages);
	platform_skips(packages, root, d);
	d->locked = true;
out:
	json_decref(seen);
	json_decref(lock);
	return r;
}

/* patchedDependencies: {"name@version": "relative/path.patch"}, bounded,
 * each a regular file inside the package. */
static int check_patches(int pkgfd, json_t *m, struct jig_deps *d, struct jig_error *e)
{
	json_t *p = json_object_get(m, "patchedDependencies");
	const char *k;
	json_t *v;
	if (p && (!json_is_object(p) || json_object_size(p) > JIG_DEPS_MAX_PATCHES))
		return refuse(e, "package.json: patchedDependencies must be an object of at most %d patches", JIG_DEPS_MAX_PATCHES);
	json_object_foreach(p, k, v) {
		const char *path = json_string_value(v);
		if (!path || !jig_path_is_normal_relative(path))
			return refuse(e, "package.json: patchedDependencies.%.120s: the patch must be a file inside the package", k);
		jig_autofree char *buf = NULL;
		size_t len;
		if (jig_read_file_at(pkgfd, path, JIG_DEPS_PATCH_MAX, path, &buf, &len, NULL, e) < 0)
			return refuse(e, "package.json: patchedDependencies.%.120s: %s (a regular file of at most %u bytes)", k, e->msg,
				      JIG_DEPS_PATCH_MAX);
		unsigned char sum[JIG_SHA256_LEN];
		char hex[JIG_SHA256_HEX];
		jig_sha256(buf, len, sum);
		jig_hex(sum, JIG_SHA256_LEN, hex);
		if (!d->patches)
			d->patches = json_array();
		json_array_append_new(d->patches, json_pack("{s:s,s:s,s:s}", "spec", k, "path", path, "sha256", hex));
		d->n_patches++;
	}
	return 0;
}

static int check(int pkgfd, const char *flow, bool unlocked_ok, struct jig_deps *d, struct jig_error *e)
{
	memset(d, 0, sizeof(*d));
	jig_autofree char *buf = NULL;
	size_t len;
	struct jig_error ignored = {0};
	if (jig_read_file_at(pkgfd, JIG_DEPS_MANIFEST, JIG_DEPS_MANIFEST_MAX, JIG_DEPS_MANIFEST, &buf, &len, NULL, &ignored) < 0) {
		if (faccessat(pkgfd, JIG_DEPS_MANIFEST, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			return refuse(e, "flow %s: %.900s", flow, ignored.msg);
		return 0; /* no manifest: nothing to prepare */
	}
	const char *cred;
	size_t cline = jig_credential_line(buf, len, &cred);
	if (cline)
		return refuse(e, "flow %s: package.json: line %zu: %s; a credential never belongs in a manifest; remove it", flow,
			      cline, cred);
	json_t *m = NULL;
	char what[300];
	snprintf(what, sizeof(what), "flow %s: package.json", flow);
	int r = jig_json_parse_object(buf, len, JIG_DEPS_MANIFEST, &m, e);
	if (!r && !(r = check_root(m, what, &d->declared, e)) && d->declared && !(r = check_patches(pkgfd, m, d, e)) &&
	    !(unlocked_ok && faccessat(pkgfd, JIG_DEPS_LOCK, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT))
		d->locked = (r = check_lock(pkgfd, m, d, e)) == 0 && (r = check_patch_targets(d, e)) == 0;
	if (r && strncmp(e->msg, "flow ", 5) != 0)
		r = jig_err_prefix(e, JIG_E_USAGE, "flow %s: ", flow);
	json_decref(m);
	if (r)
		jig_deps_free(d);
	return r;
}

int jig_deps_check(int pkgfd, const char *flow, struct jig_deps *d, struct jig_error *e)
{
	return check(pkgfd, flow, false, d, e);
}

int jig_deps_check_unlocked(int pkgfd, const char *flow, struct jig_deps *d, struct jig_error *e)
{
	return check(pkgfd, flow, true, d, e);
}

void jig_deps_free(struct jig_deps *d)
{
	json_decref(d->packages);
	json_decref(d->patches);
	memset(d, 0, sizeof(*d));
}
