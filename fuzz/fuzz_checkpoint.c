/* Run Checkpoint (issue 18): a Flow's checkpoint message as the
 * coordinator checks and encodes it, then the encoding read back as a
 * packet's checkpoint.json is (the digest must match the bytes). */
#include <jansson.h>

#include "effects/checkpoint.h"
#include "fuzz.h"
#include "util/fileio.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	json_t *m = json_loadb((const char *)d, n, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(m)) {
		json_decref(m);
		return 0;
	}
	char why[256];
	size_t len;
	char *buf = jig_checkpoint_encode(m, 1, &len, why, sizeof(why));
	json_decref(m);
	if (!buf)
		return 0;
	fuzz_put(JIG_CHECKPOINT_FILE, buf, len);
	int dir = open(fuzz_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	jig_remove_tree(dir, "stage");
	mkdirat(dir, "stage", 0700);
	int stage = openat(dir, "stage", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	json_t *part = NULL;
	struct jig_error e = {0};
	if (jig_checkpoint_publish(dir, stage, &part, &e) < 0 || json_integer_value(json_object_get(part, "save")) != 1 ||
	    (size_t)json_integer_value(json_object_get(part, "bytes")) != len)
		abort(); /* what the coordinator accepted must publish as it is */
	json_decref(part);
	free(buf);
	close(stage);
	close(dir);
	return 0;
}
