#!/usr/bin/env bash
# Copies the files git would commit in the current checkout, changes not yet committed included, into DEST (usage:
# copy-checkout.sh DEST). Never node_modules, dist or .tools, even where they are symbolic links (a worktree sharing
# another's): an install into the copy would write through a copied link into the folder it points to.
set -euo pipefail
dest="${1:?usage: copy-checkout.sh DEST}"
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' file; do
    case "$file" in node_modules | node_modules/* | dist | dist/* | .dist-* | .tools | .tools/*) continue ;; esac
    if [[ -e $file ]]; then printf '%s\0' "$file"; fi # a file deleted but not yet committed is skipped
  done |
  tar --null --files-from=- -cf - | tar -xf - -C "$dest"
