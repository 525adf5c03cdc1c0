#!/usr/bin/env node
// Adds the real HuggingFace token count to every golden chat render.
//
// Usage (from the repository root, after `python3 scripts/render-chat.py` and
// `npm ci --prefix scripts`):
//
//     node scripts/count-chat.js
//
// For each family it gunzips the embedded served/models/<family>/tokenizer.json.gz
// to a temporary directory, loads it with @anush008/tokenizers (the Rust
// `tokenizers` crate as a Node addon) and encodes testdata/chat/<family>.golden.jsonl's
// "text" with addSpecialTokens false, which is how vLLM tokenizes a rendered chat
// prompt (add_special_tokens=False is the chat completion default). The count is
// stored as "tokens" in the same line; everything else is left as it was.
//
// With --serve FAMILY it tokenizes texts read from standard input instead, for
// the tests that count prompts with this reference (see serve below).
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");
const zlib = require("zlib");
const { Tokenizer } = require("@anush008/tokenizers");

const root = path.resolve(__dirname, "..");
const families = ["qwen2.5", "qwen3"];

async function countFamily(family, tmp) {
  const gz = fs.readFileSync(path.join(root, "served", "models", family, "tokenizer.json.gz"));
  const tokFile = path.join(tmp, family + ".tokenizer.json");
  fs.writeFileSync(tokFile, zlib.gunzipSync(gz));
  const tok = Tokenizer.fromFile(tokFile);

  const goldenPath = path.join(root, "testdata", "chat", family + ".golden.jsonl");
  const lines = fs.readFileSync(goldenPath, "utf8").split("\n").filter((l) => l !== "");
  const out = [];
  for (const line of lines) {
    const g = JSON.parse(line);
    const enc = await tok.encode(g.text, null, { addSpecialTokens: false });
    g.tokens = enc.getIds().length;
    out.push(JSON.stringify({ id: g.id, text: g.text, tokens: g.tokens }));
  }
  fs.writeFileSync(goldenPath, out.join("\n") + "\n");
  return out.length;
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "count-chat-"));
  try {
    for (const family of families) {
      const n = await countFamily(family, tmp);
      console.log(`${family}: counted ${n} renders`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

// serve tokenizes texts for a test in one long-lived process: it reads lines
// {"text": ...} from standard input and writes {"ids": [...]} (encoded with
// addSpecialTokens false, as above) or {"error": ...} for each, in order.
async function serve(family) {
  const json = zlib.gunzipSync(fs.readFileSync(path.join(root, "served", "models", family, "tokenizer.json.gz")));
  const tok = Tokenizer.fromString(json.toString("utf8"));
  const rl = require("readline").createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    let out;
    try {
      const enc = await tok.encode(JSON.parse(line).text, null, { addSpecialTokens: false });
      out = { ids: Array.from(enc.getIds()) };
    } catch (err) {
      out = { error: String(err && err.message ? err.message : err) };
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  }
}

const args = process.argv.slice(2);
let run;
if (args.length === 2 && args[0] === "--serve" && families.includes(args[1])) {
  run = serve(args[1]);
} else if (args.length === 0) {
  run = main();
} else {
  run = Promise.reject(new Error(`usage: count-chat.js [--serve ${families.join("|")}]`));
}
run.catch((err) => {
  console.error(`count-chat: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
