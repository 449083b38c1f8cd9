#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Print "NAME PAGE" for every function a section-3 page describes besides its own name: the
# names before "\-" in the page's NAME section. make install writes a ".so" link NAME.3 for
# each, so "man herd_finalize" shows herd_init(3): the page is the one source of its names.
# Usage: config/herd_man_links.sh PAGE.3...
for page in "$@"; do
    base=$(basename "$page" .3)
    sed -n '/^\.SH NAME/,/^\.SH /{/^\.SH/d;p;}' "$page" | tr '\n' ' ' | sed 's/\\-.*//' |
        tr ',' '\n' | sed 's/^ *//; s/ *$//' | grep -v '^$' | while read -r name; do
        [ "$name" = "$base" ] || echo "$name $base"
    done
done
