/* Where a text holds a credential (util/credential.h). */
#include "util/credential.h"

#include <stdbool.h>
#include <string.h>

static bool authority_char(char c)
{
	return c > ' ' && c < 0x7f && !strchr("/?#\"\\", c);
}

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

size_t jig_credential_line(const char *buf, size_t n, const char **what)
{
	static const char *const settings[] = {"_authToken", "_auth", "_password", NULL};
	size_t line = 1;
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			line++;
			continue;
		}
		if (i + 3 <= n && memcmp(buf + i, "://", 3) == 0) {
			size_t j = i + 3;
			while (j < n && authority_char(buf[j]) && buf[j] != '@')
				j++;
			if (j < n && buf[j] == '@') {
				*what = "a URL with a user name or password (scheme://user:password@host)";
				return line;
			}
		}
		for (size_t k = 0; settings[k]; k++) {
			size_t l = strlen(settings[k]);
			if (i + l <= n && memcmp(buf + i, settings[k], l) == 0 && (i == 0 || !word_char(buf[i - 1])) &&
			    (i + l == n || !word_char(buf[i + l]))) {
				*what = "an npm credential setting (_authToken, _auth or _password)";
				return line;
			}
		}
	}
	return 0;
}
