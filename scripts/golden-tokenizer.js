#!/usr/bin/env node
// Writes testdata/tokenizer/golden/<name>.json.gz: the token IDs that the real
// HuggingFace tokenizers library (Rust, tokenizers 0.22.2, as the Node addon
// @anush008/tokenizers@0.6.0) gives for every item of
// testdata/tokenizer/corpus/corpus.jsonl, with encode(text, null,
// {addSpecialTokens: false}), and the decode(ids, false) text wherever it
// differs from the input (always for byte items). Items given as base64 bytes are decoded with
// TextDecoder (one U+FFFD per maximal invalid subpart) first.
//
// Usage (from anywhere): cd scripts && npm ci && cd .. &&
//   scripts/fetch-tokenizers.sh && node scripts/golden-tokenizer.js
// Tokenizers: qwen3 and qwen2.5 from served/models, llama3 and llama3.1 from
// $NIGHTSHIFT_TOKENIZERS_DIR or .cache/tokenizers, and the synthetic variants
// of testdata/tokenizer/variants.json.
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const crypto = require('crypto');
const { Tokenizer } = require('@anush008/tokenizers');

const root = path.resolve(__dirname, '..');
const tokDir = process.env.NIGHTSHIFT_TOKENIZERS_DIR || path.join(root, '.cache', 'tokenizers');
const corpusPath = path.join(root, 'testdata/tokenizer/corpus/corpus.jsonl');
const outDir = path.join(root, 'testdata/tokenizer/golden');
const reference = 'HF tokenizers 0.22.2 (Rust) via npm @anush008/tokenizers@0.6.0';

function readTokenizerJSON(name) {
  if (name === 'qwen3' || name === 'qwen2.5') {
    return zlib.gunzipSync(fs.readFileSync(path.join(root, 'served/models', name, 'tokenizer.json.gz'))).toString('utf8');
  }
  const p = path.join(tokDir, name, 'tokenizer.json');
  if (!fs.existsSync(p)) {
    throw new Error(`missing ${p}: run scripts/fetch-tokenizers.sh`);
  }
  return fs.readFileSync(p, 'utf8');
}

function applyVariant(base, v) {
  const j = JSON.parse(base);
  for (const [k, val] of Object.entries(v.set || {})) j[k] = val;
  Object.assign(j.model, v.model || {});
  j.added_tokens = j.added_tokens.concat(v.append_added_tokens || []);
  return JSON.stringify(j);
}

async function main() {
  const corpusRaw = fs.readFileSync(corpusPath);
  const corpusSHA = crypto.createHash('sha256').update(corpusRaw).digest('hex');
  // ignoreBOM: keep a leading U+FEFF, as Rust's from_utf8_lossy does.
  const dec = new TextDecoder('utf-8', { ignoreBOM: true });
  const items = corpusRaw.toString('utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  const texts = items.map((it) => (it.base64 !== undefined ? dec.decode(Buffer.from(it.base64, 'base64')) : it.text));
  const specs = ['qwen3', 'qwen2.5', 'llama3', 'llama3.1'].map((n) => ({ name: n, json: () => readTokenizerJSON(n) }));
  const variants = JSON.parse(fs.readFileSync(path.join(root, 'testdata/tokenizer/variants.json'), 'utf8')).variants;
  for (const v of variants) specs.push({ name: v.name, json: () => applyVariant(readTokenizerJSON(v.base), v) });
  fs.mkdirSync(outDir, { recursive: true });
  for (const spec of specs) {
    const tok = Tokenizer.fromString(spec.json());
    const ids = [];
    const decoded = {};
    for (let i = 0; i < texts.length; i++) {
      const enc = await tok.encode(texts[i], null, { addSpecialTokens: false });
      const got = Array.from(enc.getIds());
      ids.push(got);
      const back = await tok.decode(got, false);
      // Always for byte items: the Go side cannot compare with the raw bytes.
      if (back !== texts[i] || items[i].base64 !== undefined) decoded[i] = back;
    }
    const doc = { tokenizer: spec.name, reference, corpus_sha256: corpusSHA, ids, decoded };
    const out = path.join(outDir, spec.name + '.json.gz');
    fs.writeFileSync(out, zlib.gzipSync(Buffer.from(JSON.stringify(doc) + '\n'), { level: 9 }));
    console.log(`${spec.name}: ${ids.reduce((a, x) => a + x.length, 0)} tokens over ${texts.length} items -> ${path.relative(root, out)}`);
  }
}

main().catch((e) => { console.error('golden-tokenizer: ' + (e && e.stack || e)); process.exit(1); });
