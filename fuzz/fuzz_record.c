/* A saved packet's record.json, as jig inspect reads and prints it. */
#include <jansson.h>

#include "fuzz.h"
#include "packet/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	fuzz_put("record.json", d, n);
	int fd = open(fuzz_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	json_t *rec = NULL;
	struct jig_error e = {0};
	if (jig_record_load(fd, "packet", &rec, &e) == 0) {
		FILE *out = fopen("/dev/null", "w"); /* issue 35: the tree, units */
		if (out) {
			jig_record_print(out, "packet", rec);
			fclose(out);
		}
		json_decref(rec);
	}
	close(fd);
	return 0;
}
