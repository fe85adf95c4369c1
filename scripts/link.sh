#!/bin/sh
# link.sh PREFIX: puts a jig installed in PREFIX on every user's PATH,
# MANPATH and completion, as locally installed software is (decision 270):
# symbolic links in /usr/local, which Debian's login PATH (/etc/profile),
# man-db (/etc/manpath.config), bash-completion (XDG_DATA_DIRS's default)
# and zsh (its site-functions) already search. Nothing else is changed:
# no shell start-up file, no variable. jig finds its snapshot from its own
# executable (/proc/self/exe, the link resolved), so the link runs PREFIX's.
# Run as root by scripts/setup.sh; PREFIX=/usr/local needs no links.
set -eu
prefix=${1:?usage: link.sh PREFIX}
local=/usr/local
[ "$prefix" != "$local" ] || exit 0
[ -x "$prefix/bin/jig" ] || { echo "link.sh: no jig in $prefix/bin" >&2; exit 1; }
for f in bin/jig share/man/man1/jig.1.gz share/bash-completion/completions/jig share/zsh/site-functions/_jig; do
	[ -e "$prefix/$f" ] || { echo "link.sh: $prefix/$f is missing (cmake --install installs it)" >&2; exit 1; }
	mkdir -p "$local/$(dirname "$f")"
	# A link there (an earlier set-up's) is replaced; a file is not ours.
	if [ -e "$local/$f" ] && [ ! -L "$local/$f" ]; then
		echo "link.sh: $local/$f exists and is not a link; left as it is" >&2
		exit 1
	fi
	ln -sfn "$prefix/$f" "$local/$f"
done
echo "== linked jig, its man page and completions into $local (bin, share/man, share/bash-completion, share/zsh)"
