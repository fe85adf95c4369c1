/* jig modules list | verify */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../snapshot/identity.h"
#include "../snapshot/loader.h"
#include "commands.h"

static json_t *module_json(const struct jig_manifest_module *mm)
{
	char sha[JIG_SHA256_HEX], abi[16];
	jig_hex(mm->file->sha256, JIG_SHA256_LEN, sha);
	snprintf(abi, sizeof(abi), "%u.%u", mm->abi_major, mm->abi_minor);
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:s}", "name", mm->name, "kind",
			 jig_kind_name(mm->kind), "abi", abi, "platform", mm->platform, "path",
			 mm->file->path, "size", (json_int_t)mm->file->size, "sha256", sha);
}

static void print_header(const struct jig_snapshot *s)
{
	char sha[JIG_SHA256_HEX];
	jig_hex(s->manifest_sha256, JIG_SHA256_LEN, sha);
	printf("snapshot %s  sequence %llu  %s\n", s->m.id, (unsigned long long)s->m.sequence,
	       s->dirpath);
	printf("manifest sha256 %s\n", sha);
	printf("signed by key %s%s\n", s->keyid,
	       s->anchor->development ? " (DEVELOPMENT key: a local build, not a distributor's)" : "");
}

int jig_cmd_modules_list(int json)
{
	struct jig_snapshot s;
	int r = jig_cli_open_snapshot(&s, json);
	if (r)
		return r;
	if (json) {
		json_t *mods = json_array();
		for (size_t i = 0; i < s.m.nmodules; i++)
			json_array_append_new(mods, module_json(&s.m.modules[i]));
		json_t *doc = json_pack("{s:s,s:o,s:o}", "schema", JIG_MODULES_SCHEMA, "snapshot",
					jig_cli_snapshot_json(&s), "modules", mods);
		jig_cli_print_json(doc);
		json_decref(doc);
	} else {
		print_header(&s);
		for (size_t i = 0; i < s.m.nmodules; i++) {
			const struct jig_manifest_module *mm = &s.m.modules[i];
			char sha[JIG_SHA256_HEX];
			jig_hex(mm->file->sha256, JIG_SHA256_LEN, sha);
			printf("  %-16s %-8s abi %u.%u  %s  sha256 %s\n", mm->name, jig_kind_name(mm->kind),
			       mm->abi_major, mm->abi_minor, mm->platform, sha);
		}
	}
	jig_snapshot_close(&s);
	return 0;
}

int jig_cmd_modules_verify(int json, const char *verification)
{
	struct jig_error e = {0};
	struct jig_verifier v;
	if (jig_verifier_init(&v, verification, JIG_VERIFY_STRICT, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	struct jig_snapshot s;
	int r = jig_cli_open_snapshot(&s, json);
	if (r)
		return r;
	int status = 0;
	json_t *mods = json_array();
	json_t *files_err = NULL;
	int vr = jig_snapshot_verify_all(&s, &v, &e);
	jig_cli_verification_note(&v);
	jig_verifier_finish(&v);
	if (vr < 0) {
		status = e.code;
		files_err = json_string(e.msg);
		if (!json)
			fprintf(stderr, "jig: %s\n", e.msg);
	}
	if (!json)
		print_header(&s);
	const char **paths = calloc(s.m.nmodules + 1, sizeof(*paths));
	if (!paths) {
		json_decref(mods);
		json_decref(files_err);
		jig_snapshot_close(&s);
		jig_err(&e, JIG_E_INTERNAL, "out of memory");
		jig_cli_fail(json, &e);
		return JIG_E_INTERNAL;
	}
	for (size_t i = 0; i < s.m.nmodules; i++) {
		const struct jig_manifest_module *mm = &s.m.modules[i];
		struct jig_module_handle h;
		struct jig_error me = {0};
		json_t *mj = module_json(mm);
		char sha[JIG_SHA256_HEX];
		jig_hex(mm->file->sha256, JIG_SHA256_LEN, sha);
		paths[i] = mm->file->path;
		if (jig_module_load(&s, mm->name, 0, &h, &me) == 0) {
			json_object_set_new(mj, "verified", json_true());
			json_object_set_new(mj, "version", json_string(h.desc->version ? h.desc->version : ""));
			if (!json) {
				printf("  ok      %-16s %-8s abi %u.%u  version ", mm->name, jig_kind_name(mm->kind),
				       mm->abi_major, mm->abi_minor);
				jig_text_put(stdout, h.desc->version ? h.desc->version : "?");
				printf("  sha256 %s  key %s%s\n", sha, s.keyid, s.anchor->development ? " (development)" : "");
			}
			jig_module_unload(&h);
		} else {
			status = me.code;
			json_object_set_new(mj, "verified", json_false());
			json_object_set_new(mj, "error", json_string(me.msg));
			if (!json) {
				printf("  REFUSED %-16s %-8s sha256 %s\n", mm->name, jig_kind_name(mm->kind), sha);
				fprintf(stderr, "jig: %s\n", me.msg);
			}
		}
		json_array_append_new(mods, mj);
	}
	char ident[JIG_SHA256_HEX] = "";
	if (jig_launch_identity(&s, paths, s.m.nmodules, ident, &e) < 0 && !status)
		status = e.code;
	free(paths);
	if (json) {
		json_t *doc = json_pack("{s:s,s:b,s:o,s:o,s:s,s:o,s:o}", "schema", JIG_MODULES_VERIFY_SCHEMA,
					"verified", status == 0, "snapshot", jig_cli_snapshot_json(&s),
					"modules", mods, "launch_identity", ident, "files_error",
					files_err ? files_err : json_null(), "verification", jig_verifier_json(&v));
		jig_cli_print_json(doc);
		json_decref(doc);
	} else {
		json_decref(mods);
		json_decref(files_err);
		printf("launch identity (all modules) %s\n", ident);
		printf(status ? "snapshot REFUSED\n" : "snapshot verified\n");
	}
	jig_snapshot_close(&s);
	return status;
}
