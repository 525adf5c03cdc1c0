#!/usr/bin/env python3
"""Generates corpus.jsonl, the tokenizer golden corpus (deterministic).

Each line is {"name": ..., "text": ...} or, for invalid UTF-8, {"name": ...,
"base64": ...}; "long": true marks the ~100 KB lines. Run from the module root:
    python3 testdata/tokenizer/corpus/generate.py
then regenerate the golden IDs with `node scripts/golden-tokenizer.js`.
Realistic tool outputs are snapshotted from testdata/outputs at generation time.
"""
import base64, glob, json, os, random

rng = random.Random(20251122)
items = []

def add(name, text, long=False):
    d = {"name": name, "text": text}
    if long:
        d["long"] = True
    items.append(d)

def addb(name, raw):
    items.append({"name": name, "base64": base64.b64encode(raw).decode()})

# --- hand-written cases -------------------------------------------------------
cases = {
 "empty": "",
 "space": " ",
 "hello": "Hello world!",
 "shell-sed": "sed -i 's/^#\\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config && sshd -t && systemctl reload sshd",
 "shell-pipe": "grep -E '^\\s*(auth|account)\\s+required' /etc/pam.d/* | awk '{print $1}' | sort -u 2>/dev/null || true",
 "apt-install": "Reading package lists... Done\nBuilding dependency tree... Done\nReading state information... Done\nThe following NEW packages will be installed:\n  aide aide-common\n0 upgraded, 2 newly installed, 0 to remove and 0 not upgraded.\nNeed to get 187 kB of archives.\nAfter this operation, 612 kB of additional disk space will be used.\n",
 "dpkg-lock": "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 1234 (apt-get)\nN: Be aware that removing the lock file is not a solution and may break your system.\nE: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?",
 "systemctl-status": "● sshd.service - OpenBSD Secure Shell server\n     Loaded: loaded (/lib/systemd/system/ssh.service; enabled; vendor preset: enabled)\n     Active: active (running) since Sat 2025-11-22 07:46:01 UTC; 3h 2min ago\n   Main PID: 812 (sshd)\n      Tasks: 1 (limit: 4615)\n     Memory: 5.9M\n        CPU: 1.204s\n     CGroup: /system.slice/ssh.service\n             └─812 \"sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups\"",
 "journalctl": "Nov 22 07:46:01 host sshd[812]: Server listening on 0.0.0.0 port 22.\nNov 22 07:46:01 host sshd[812]: Server listening on :: port 22.\nNov 22 08:01:13 host sshd[1999]: Accepted publickey for root from 10.0.0.5 port 51514 ssh2: ED25519 SHA256:Qm9vdHN0cmFwcGVkIGtleSBmb3IgdGVzdHM",
 "aide": "AIDE found differences between database and filesystem!!\nStart timestamp: 2025-11-22 08:00:00 +0000 (AIDE 0.18.6)\n\nSummary:\n  Total number of entries:\t45873\n  Added entries:\t\t0\n  Removed entries:\t\t0\n  Changed entries:\t\t1\n\n---------------------------------------------------\nChanged entries:\n---------------------------------------------------\n\nf   ...    .C... : /etc/ssh/sshd_config\n",
 "sshd-t": "/etc/ssh/sshd_config line 42: Bad configuration option: PermitRootLgin\n/etc/ssh/sshd_config: terminating, 1 bad configuration options",
 "json-tool-args": "{\"name\": \"run_shell\", \"arguments\": {\"command\": \"sysctl -w net.ipv4.conf.all.send_redirects=0\", \"timeout\": 30}}",
 "json-nested": "{\"tool_calls\":[{\"id\":\"call_0\",\"type\":\"function\",\"function\":{\"name\":\"run\",\"arguments\":\"{\\\"cmd\\\":\\\"echo \\\\\\\"hi\\\\\\\"\\\"}\"}}]}",
 "ansi": "\x1b[1;31mERROR\x1b[0m: failed\r\n\x1b[32m✓\x1b[0m passed \x1b[2K\x1b[1G50%\x1b[?25h",
 "crlf": "line one\r\nline two\r\n\r\n  indented\r\n\tTabbed\r\n",
 "tabs": "key\tvalue\t\tother\t\t\t\n\t\t\tdeep",
 "spaces-long": "a" + " " * 40 + "b" + " " * 17 + "\n" + " " * 9,
 "dashes": "-----\n=====\n#####\n*****\n_____\n~~~~~\n" + "-" * 80 + "\n" + "=" * 77,
 "punct-runs": "!!! ??? ... ;;; ::: ,,, ''' \"\"\" ``` ((( ))) [[[ ]]] {{{ }}} <<< >>> /// \\\\\\ ||| &&& $$$ %%% ^^^",
 "nfd-accents": "Cafe\u0301 re\u0301sume\u0301 nai\u0308ve Pok\u00e9mon A\u030a \u1e9b\u0323",
 "nfc-accents": "Café résumé naïve Ångström",
 "cjk": "中文测试：系统加固。日本語のテキスト、カタカナ。한국어 텍스트입니다。",
 "emoji": "Done ✅ 🚀 🔥 👍🏽 🇺🇸 🏳️‍🌈 👨‍👩‍👧‍👦 🧑🏿‍💻 ❤️",
 "special-in-text": "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nhello<|endoftext|>",
 "special-llama": "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
 "special-broken": "<|im_start <|im_end|| <|im_start|><|im_start|> <|endoftext|x <|begin_of_text <|eot_id|>>",
 "tool-call": "<tool_call>\n{\"name\": \"run_shell\", \"arguments\": {\"command\": \"chmod 0600 /etc/ssh/sshd_config\"}}\n</tool_call>",
 "tool-response": "<tool_response>\nexit status 0\nstdout:\n\nstderr:\n\n</tool_response>",
 "fffd": "bad \ufffd char \ufffd\ufffd\ufffd end",
 "digits": "0 12 345 6789 01234 567890 1234567890123 3.14159 1,000,000 0x7fffffff 192.168.0.1 2025-11-22T08:00:00Z",
 "digits-unicode": "٠١٢٣٤٥ ۰۱۲ ०१२३ ½ ¾ ² ³ ⅫⅩ ①②③ 𝟘𝟙𝟚",
 "contractions": "I'm you're we've they'll he'd it's don't I'M YOU'RE WE'VE THEY'LL HE'D IT'S 'S 'LL 'Ll 'lL 'Re 'rE 'Ve 'D 'T 'M",
 "contraction-longs": "it'ſ 'ſ 'ſſ 'K 'K 'x ''s '''ll ' s 's's",
 "apostrophes": "'hello' 'world 'a 'b ' ' '' 'Ş 'İ 'é '1 '  ''",
 "unicode-spaces": "a\u00a0b\u2000c\u2001d\u2002e\u2003f\u2009g\u200ah\u202fi\u205fj\u3000k\u1680l\u0085m\u2028n\u2029o\u000bp\u000cq\u200bz\ufeffy",
 "unicode-spaces-runs": "x \u00a0 \u3000\u3000 y\u00a0\u00a0\u00a0\n\u2003\u2003z \u0085\u0085 w\t\u00a0\r\n",
 "newlines": "\n\n\na\n \n  \n\t\n\r\r\r\n\n x \n",
 "trailing-spaces": "end with spaces   ",
 "leading-spaces": "   start with spaces",
 "only-newlines": "\n\n\n\n",
 "only-crlf": "\r\n\r\n",
 "mixed-scripts": "Ελληνικά русский עברית العربية हिन्दी ไทย ქართული Հայերեն ᏣᎳᎩ",
 "turkish": "İstanbul ıi İI ǅ ǈ ß ẞ ﬁ ﬀ",
 "combining": "e\u0301\u0302\u0303 a\u20dd 1\u20e3 \u0301start x\u0300\u0300\u0300",
 "math": "∀x ∈ ℝ: x² ≥ 0 ⇒ √x ∑ ∫ ≈ ≠ ± × ÷ ∞ ∂ ∇ ⊂ ⊆ ∪ ∩",
 "currency": "$100 €200 £300 ¥400 ₹500 ₿0.01 ¢5",
 "path": "/usr/lib/x86_64-linux-gnu/libssl.so.3 C:\\Windows\\System32\\drivers\\etc\\hosts ~/.ssh/authorized_keys",
 "url": "https://example.com/path?query=1&other=two#frag http://[::1]:8080/v1/models",
 "base64-short": "SGVsbG8sIFdvcmxkIQ==\nQUlERSBmb3VuZCBkaWZmZXJlbmNlcw==",
 "hex": "deadbeef DEADBEEF 0123456789abcdef sha256:aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4",
 "yaml": "rules:\n  - id: sshd_disable_root_login\n    severity: high\n    check: |\n      grep -qi '^PermitRootLogin no' /etc/ssh/sshd_config\n",
 "go-code": "func (t *Tokenizer) Count(text string) int {\n\treturn len(t.Encode(text))\n}\n",
 "python-code": "def f(x):\n    if x > 0:\n        return x ** 2\n    return -x  # comment\n",
 "controls": "\x00\x01\x02\x07\x08\x1f\x7f nul and bell",
 "c1-controls": "\u0080\u0081\u009f\u00ad soft hyphen",
 "private-use": "\ue000\uf8ff\U000f0000 \U0010fffd",
 "astral": "𝐀𝐁𝐂 𝔸𝔹 𓀀𓀁 😀😁 𠀀𠀁 🀄",
 "letter-after-punct": ".hello ,world ;x :y !z ?w (a )b [c ]d {e }f -g _h",
 "letter-after-ws": "\thello \u00a0world \u3000日本 \u2003x",
 "newline-then-letters": "\nhello\r\nworld\n\n\nfoo",
 "space-digit": " 1 22 333 4444 55555 666666",
 "space-punct-newline": " ...\n !!!\r\n ???\n\n\n ---\r\r",
 "single-chars": "a",
 "single-punct": ".",
 "single-newline": "\n",
 "single-tab": "\t",
 "single-quote": "'",
 "quote-end": "don'",
 "ending-apostrophe-s": "James'",
 "html": "<div class=\"x\">Hello &amp; <b>bye</b></div><!-- c --><br/>",
 "markdown": "# Title\n\n- item **bold** _it_ `code`\n\n```bash\necho hi\n```\n| a | b |\n|---|---|\n",
 "ipv6": "fe80::1ff:fe23:4567:890a%eth0 2001:db8::/32",
 "sysctl": "net.ipv4.conf.all.accept_redirects = 0\nkernel.randomize_va_space = 2\nfs.suid_dumpable = 0",
 "permissions": "-rw-r--r-- 1 root root 3.2K Nov 22 08:00 sshd_config\ndrwx------ 2 root root 4096 Nov 22 07:59 .ssh",
 "oscap": "Title\tEnsure SSH root login is disabled\nRule\txccdf_org.ssgproject.content_rule_sshd_disable_root_login\nResult\tfail",
 "zwj-alone": "\u200d\u200c\u200d",
 "bom": "\ufeffBOM at start",
 "variation-selectors": "☺️ ☺︎ ✌🏻 ⌚️",
 "hangul-jamo": "\u1100\u1161\u11a8 \u1112\u1161\u11ab",
 "im-start-nfd": "<|im_start|>e\u0301<|im_end|>\u0301",
}
for k, v in cases.items():
    add(k, v)

# Special tokens of each family, alone and glued to text.
for tok in ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>", "</tool_call>",
            "<|fim_prefix|>", "<|vision_pad|>", "<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>",
            "<|start_header_id|>", "<|reserved_special_token_5|>", "<|finetune_right_pad_id|>", "<|python_tag|>"]:
    add("special-alone " + tok, tok)
    add("special-glued " + tok, "x" + tok + "y " + tok + tok + " " + tok + "\n")

# Tool outputs snapshotted from testdata/outputs (sorted, deterministic).
for path in sorted(glob.glob("testdata/outputs/*.txt")):
    with open(path, encoding="utf-8", errors="replace") as f:
        add("outputs/" + os.path.basename(path), f.read())
for path in ["docs/DEVELOPING.md", "served/models/PROVENANCE.md"]:
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            add(path, f.read())

# A chat prompt with many special tokens.
turns = []
for i in range(40):
    turns.append("<|im_start|>user\nRun check %d for rule sshd_%d.<|im_end|>\n<|im_start|>assistant\n<think>\nThe rule needs 'PermitRootLogin no'.\n</think>\n\n<tool_call>\n{\"name\": \"run\", \"arguments\": {\"command\": \"grep -n PermitRootLogin /etc/ssh/sshd_config\"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n%d:PermitRootLogin yes\n</tool_response><|im_end|>\n" % (i, i, 30 + i))
add("chat-prompt", "".join(turns))

# --- random strings over a tricky alphabet ----------------------------------------
alphabet = list("aAzZ09 '\t\n\r.-_=/\\\"{}[]<>|!?:;,") + ["sS", "'s", "'S", "'ll", "'LL", "'re", "'ve", "'d", "'t", "'m", "'ſ",
    "\u00a0", "\u3000", "\u2003", "\u0085", "\u000b", "\u000c", "\u2028", "é", "e\u0301", "ñ", "ß", "İ", "中", "日本", "한",
    "٣", "½", "²", "Ⅻ", "😀", "👨‍👩‍👧", "🏽", "\u200d", "\ufeff", "\ufffd", "<|im_start|>", "<|im_end|>", "<think>",
    "<|endoftext|>", "<|begin_of_text|>", "<|eot_id|>", "<|im_", "|>", "  ", "    ", "\r\n", "\n\n", "123", "4567",
    "Ελ", "ру", "ع", "ह", "ไ", "\u0301", "$", "€", "\x1b[0m", "\x00", "\x7f", "\u0080", "\ue000", "𝐀"]
for i in range(400):
    n = rng.choice([1, 2, 3, 5, 8, 13, 21, 40, 80, 200])
    add("random-%03d" % i, "".join(rng.choice(alphabet) for _ in range(n)))

# Random ASCII-ish words and whitespace, as in prose and logs.
words = ["the", "The", "THE", "sshd", "config", "root", "login", "PermitRootLogin", "no", "yes", "failed", "error:",
         "E:", "W:", "OK", "[", "]", "(", ")", "/etc/ssh", "systemctl", "restart", "0", "1", "42", "2025", "-", "--", "==", "#"]
for i in range(100):
    n = rng.randint(5, 120)
    out = []
    for _ in range(n):
        out.append(rng.choice(words))
        out.append(rng.choice([" ", " ", " ", "  ", "\n", "\t", ", ", ". ", "\r\n", "   \n"]))
    add("words-%03d" % i, "".join(out))

# --- invalid UTF-8 (fed as bytes; the reference decodes them with TextDecoder) ----
invalid = [
    b"\xff", b"abc\xffdef", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf0\x9f\x98",
    b"\xf0\x9f\x98 x", b"\xe2\x82", b"\xe2\x82\xe2\x82\xac", b"\x80\x80\x80", b"\xc3", b"\xc3(", b"\xf8\x88\x80\x80\x80",
    b"ok \xfe\xfe ok", b"\xef\xbb\xbf\xff", b"<|im_start|>\xff<|im_end|>", b"\xe0\xa0", b"\xf1\x80\x80", b"\xf0\x90\x80\xc3\xa9",
]
for i, raw in enumerate(invalid):
    addb("invalid-%02d" % i, raw)
for i in range(20):
    raw = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    addb("random-bytes-%02d" % i, raw)

# --- ~100 KB lines ---------------------------------------------------------------
K = 100 * 1024
log = []
while sum(len(x) for x in log) < K:
    log.append("Nov 22 08:%02d:%02d host kernel: [%d.%06d] audit: type=1400 apparmor=\"DENIED\" operation=\"open\" profile=\"/usr/sbin/sshd\" name=\"/etc/shadow\" pid=%d comm=\"sshd\" requested_mask=\"r\" denied_mask=\"r\" fsuid=0 ouid=0 " % (rng.randrange(60), rng.randrange(60), rng.randrange(99999), rng.randrange(999999), rng.randrange(99999)))
add("long-log-line", "".join(log)[:K], long=True)
add("long-base64", base64.b64encode(bytes(rng.randrange(256) for _ in range(K * 3 // 4))).decode(), long=True)
add("long-spaces", " " * K, long=True)
add("long-spaces-then-word", " " * K + "word", long=True)
mixed = []
pieces = ["héllo ", "日本語", "   ", "\t", "\n", "----", "12345", "<|im_start|>", "😀", "'s ", "x", "e\u0301", "\u00a0"]
while sum(len(x) for x in mixed) < K:
    mixed.append(rng.choice(pieces))
add("long-mixed", "".join(mixed), long=True)
add("long-letters", "a" * K, long=True)
add("long-digits", "7" * K, long=True)
add("long-punct", "=-" * (K // 2), long=True)

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.jsonl")
with open(out, "w", encoding="utf-8") as f:
    for it in items:
        f.write(json.dumps(it, ensure_ascii=False) + "\n")
print("wrote %d items to %s" % (len(items), out))
