/* A Project Command's result: its stdout and stderr (the command's own
 * bytes, untrusted) kept by the collector in pieces as they come, the
 * first JIG_COMMAND_RETAIN of each, and its end; then the evidence and the
 * Flow's reply (effects/command.c). The input: a control byte (the end:
 * exited, signaled, crashed, timeout or oom; the piece size), then stdout
 * NUL stderr. The reply must be a JSON object whose base64 decodes to the
 * kept prefix and whose counts are the totals. */
#include <jansson.h>
#include <nettle/base64.h>

#include "effects/command.h"
#include "fuzz.h"
#include "util/limits.h"

static void feed(struct jig_command_stream *s, const char *d, size_t n, size_t piece)
{
	for (size_t off = 0; off < n; off += piece)
		jig_command_keep(s, (const unsigned char *)d + off, n - off < piece ? n - off : piece);
}

static void check(json_t *reply, const char *key, const char *d, size_t n)
{
	char k[32];
	snprintf(k, sizeof(k), "%s_base64", key);
	const char *b = json_string_value(json_object_get(reply, k));
	size_t kept = n < JIG_COMMAND_RETAIN ? n : JIG_COMMAND_RETAIN, bl = b ? strlen(b) : 0;
	unsigned char *out = malloc(BASE64_DECODE_LENGTH(bl) + 1);
	size_t ol = BASE64_DECODE_LENGTH(bl);
	struct base64_decode_ctx ctx;
	base64_decode_init(&ctx);
	if (!b || !out || !base64_decode_update(&ctx, &ol, out, bl, b) || !base64_decode_final(&ctx) || ol != kept ||
	    memcmp(out, d, kept) != 0)
		abort();
	free(out);
	snprintf(k, sizeof(k), "%s_bytes", key);
	if (json_integer_value(json_object_get(reply, k)) != (json_int_t)n)
		abort();
	snprintf(k, sizeof(k), "%s_truncated", key);
	if (json_is_true(json_object_get(reply, k)) != (n > JIG_COMMAND_RETAIN))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n < 1 || n > 4 * JIG_COMMAND_RETAIN) /* past the cap, more bytes only count */
		return 0;
	static const uint32_t ends[] = {JIG_SCOPE_EXITED, JIG_SCOPE_SIGNALED, JIG_SCOPE_CRASHED, JIG_SCOPE_TIMEOUT, JIG_SCOPE_OOM};
	struct jig_scope_result res = {.outcome = ends[d[0] % 5], .exit_status = d[0] >> 4, .signal = d[0] % 5 ? d[0] % 32 : 0,
				       .wall_ms = n, .memory_peak_bytes = 4096, .cleanup_confirmed = 1, .held_fd = -1};
	size_t piece = 1 + (size_t)(d[0] >> 3) * 4093;
	const char *o, *e;
	size_t on, en;
	fuzz_split(d + 1, n - 1, &o, &on, &e, &en);
	struct jig_command_stream out[2] = {{.fd = -1, .kept = malloc(JIG_COMMAND_RETAIN)},
					    {.fd = -1, .kept = malloc(JIG_COMMAND_RETAIN)}};
	if (!out[0].kept || !out[1].kept)
		abort();
	feed(&out[0], o, on, piece);
	feed(&out[1], e, en, piece);
	json_t *ev = json_object();
	jig_command_measure(ev, &res, out, true);
	json_t *reply = jig_command_reply(ev, &res, out);
	char *s = json_dumps(reply, JSON_COMPACT);
	if (!json_is_object(reply) || !s)
		abort();
	check(reply, "stdout", o, on);
	check(reply, "stderr", e, en);
	free(s);
	json_decref(reply);
	json_decref(ev);
	free(out[0].kept);
	free(out[1].kept);
	return 0;
}
