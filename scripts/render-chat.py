#!/usr/bin/env python3
"""Generate the golden chat-template renders for served/chattemplate.

Usage (from the repository root; needs Python 3.11 and jinja2 3.x, nothing else):

    python3 scripts/render-chat.py && node scripts/count-chat.js

(With --serve FAMILY it renders requests read from standard input instead, for the
tests that count prompts with this reference: see serve.)

Writes, deterministically (seeded, no clock, no network):

  testdata/chat/conversations.jsonl   one request per line, as go-openai puts it
                                      on the wire: {"messages": [...], "tools": [...],
                                      "options": {...}}
  testdata/chat/qwen2.5.golden.jsonl  {"id": n, "text": <prompt vLLM tokenizes>}
  testdata/chat/qwen3.golden.jsonl    (count-chat.js then adds "tokens")
  testdata/chat/pyjson.golden.jsonl   {"in": <JSON text>, "out": json.dumps(json.loads(in),
                                      ensure_ascii=False)} or {"in": ..., "error": <kind>}
  testdata/chat/floats.golden.txt     "<hex bits> <repr(float)>" per line

How a request becomes a prompt mirrors vLLM (vllm-project/vllm main, files
vllm/entrypoints/chat_utils.py, vllm/entrypoints/openai/chat_completion/protocol.py,
vllm/entrypoints/generate/base/protocol.py, vllm/renderers/hf.py) and transformers
(src/transformers/utils/chat_template_utils.py); each step below names the function it
mirrors. Anything vLLM rejects with a 400 is not written to the goldens (the Go unit
tests cover those cases by hand).
"""

import json
import math
import os
import random
import struct
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "testdata", "chat")
FAMILIES = {"qwen2.5": "served/models/qwen2.5/tokenizer_config.json",
            "qwen3": "served/models/qwen3/tokenizer_config.json"}
SEED = 20250611
N_RANDOM = 440


# --------------------------------------------------------------------------------------
# transformers: utils/chat_template_utils.py::_compile_jinja_template and
# render_jinja_template. The environment, filters and globals are the ones transformers
# installs; tokenizer special tokens (special_tokens_map) are passed as template kwargs.
# --------------------------------------------------------------------------------------

class AssistantTracker(jinja2.ext.Extension):
    # transformers' {% generation %} tag; unused by the Qwen templates but part of the
    # environment, so kept for fidelity.
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

    @jinja2.pass_eval_context
    def _generation_support(self, context, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers overrides Jinja's HTML-escaping tojson with plain json.dumps.
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return datetime.now().strftime(fmt)


def compile_template(source):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


# --------------------------------------------------------------------------------------
# vLLM request handling.
# --------------------------------------------------------------------------------------

class Rejected(Exception):
    """vLLM answers 400 for this request."""


def tool_model_dump(tool):
    # ChatCompletionRequest.tools: list[ChatCompletionToolsParam]; serving passes
    # [tool.model_dump() for tool in request.tools]. ChatCompletionToolsParam:
    # type: Literal["function"] = "function", function: FunctionDefinition,
    # defer_loading: bool | None (dropped from the dump when None; extras dropped).
    # FunctionDefinition: name: str, description: str | None = None,
    # parameters: dict[str, Any] | None = None, strict/defer_loading dumped only when
    # not None; extras dropped.
    if tool.get("type", "function") != "function":
        raise Rejected("tools[].type")
    fn = tool.get("function")
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        raise Rejected("tools[].function")
    params = fn.get("parameters")
    if params is not None and not isinstance(params, dict):
        raise Rejected("tools[].function.parameters")
    f = {"name": fn["name"], "description": fn.get("description"), "parameters": params}
    if fn.get("strict") is not None:
        f["strict"] = fn["strict"]
    return {"type": "function", "function": f}


def parse_message(m):
    # chat_utils.py::_parse_chat_message_content with content_format "string" (what
    # _detect_content_format finds for both Qwen templates: neither loops over
    # message['content']). The request was validated by pydantic against
    # ChatCompletionMessageParam (TypedDicts: unknown keys such as reasoning_content are
    # dropped; any role string is accepted through CustomChatCompletionMessageParam).
    role = m["role"]
    content = m.get("content")
    if content is None:
        parts = []
    elif isinstance(content, str):
        parts = [content]
    else:
        parts = []
        for p in content:
            # _parse_chat_message_content_part: only text parts exist for a text model.
            if p.get("type") != "text" or not isinstance(p.get("text"), str):
                raise Rejected("content part")
            parts.append(p["text"])
    # _parse_chat_message_content_parts: texts joined with "\n".
    msg = {"role": role, "content": "\n".join(parts)}
    if role == "assistant":
        tcs = m.get("tool_calls")
        if tcs is not None:
            out = []
            for tc in tcs:
                # ChatCompletionMessageToolCallParam: id, type "function", function
                # {name, arguments} all required.
                fn = tc.get("function") or {}
                if not isinstance(tc.get("id"), str) or tc.get("type") != "function" \
                        or not isinstance(fn.get("name"), str) or not isinstance(fn.get("arguments"), str):
                    raise Rejected("tool_calls")
                out.append({"id": tc["id"], "type": "function",
                            "function": {"name": fn["name"], "arguments": fn["arguments"]}})
            msg["tool_calls"] = out
    elif role == "tool":
        if "tool_call_id" in m:
            msg["tool_call_id"] = m["tool_call_id"]
    if isinstance(m.get("name"), str):
        msg["name"] = m["name"]
    return msg


def postprocess_messages(messages):
    # chat_utils.py::_postprocess_messages: json.loads each assistant tool call's
    # arguments; a string that is not valid JSON becomes {} (JSONDecodeError only: the
    # ValueError for an integer of more than 4300 digits propagates and vLLM answers 400).
    for message in messages:
        if message["role"] == "assistant" and "tool_calls" in message:
            tool_calls = message["tool_calls"]
            if len(tool_calls) == 0:
                message.pop("tool_calls")
                continue
            for item in tool_calls:
                content = item["function"].get("arguments")
                if isinstance(content, str):
                    try:
                        item["function"]["arguments"] = json.loads(content)
                    except json.JSONDecodeError:
                        item["function"]["arguments"] = {}
                    except ValueError as e:
                        raise Rejected(str(e))
                elif not isinstance(content, (dict, list)):
                    item["function"]["arguments"] = {}


def render(template, special, request):
    # serving: parse_chat_messages -> conversation; safe_apply_chat_template ->
    # tokenizer.apply_chat_template(conversation, tools=tool_dicts, tokenize=False,
    # add_generation_prompt=..., **chat_template_kwargs).
    if not request["messages"]:
        raise Rejected("no messages")
    conversation = [parse_message(m) for m in request["messages"]]
    postprocess_messages(conversation)
    tools = None
    if request.get("tools"):
        tools = [tool_model_dump(t) for t in request["tools"]]
    opts = request.get("options", {})
    kwargs = dict(special)
    if opts.get("enable_thinking") is not None:
        kwargs["enable_thinking"] = opts["enable_thinking"]
    try:
        return template.render(messages=conversation, tools=tools, documents=None,
                               add_generation_prompt=opts.get("add_generation_prompt", True), **kwargs)
    except jinja2.exceptions.TemplateError as e:
        raise Rejected(str(e))


# --------------------------------------------------------------------------------------
# Random requests, written the way go-openai marshals them (omitempty everywhere except
# role, tool call type and function parameters).
# --------------------------------------------------------------------------------------

WORDS = ["the", "rule", "sshd", "config", "PermitRootLogin", "no", "yes", "check", "failed", "passed",
         "café", "naïve", "Ångström", "Straße", "配置文件", "安全检查", "日本語", "한국어", "🔒", "👍🏽",
         "🇫🇷", "مرحبا", "Привет", "λ", "∑", "≠", "—", "…", "\t", "  ", "\u00a0", "\u200d", "\u2028",
         "\u2029", "\x7f", "x=1.0", "1e-07", "\"quoted\"", "back\\slash", "{", "}", "[", "]", "&amp;",
         "<b>", "a&b", "line\r\nbreak", "\x01ctl", "\x1b[31mred\x1b[0m", "$HOME", "`id`", "'single'"]
SPECIAL = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>", "</tool_call>", "<think>",
           "</think>", "<tool_response>", "</tool_response>", "<|im_start|>assistant\n", "<|vision_pad|>"]
SHELL = [
    "PermitRootLogin no\nPasswordAuthentication no\nX11Forwarding no",
    "● sshd.service - OpenBSD Secure Shell server\n     Loaded: loaded (/lib/systemd/system/ssh.service; enabled)\n     Active: active (running) since Tue 2025-06-10 09:12:01 UTC; 3h ago",
    "exit status 1\nstderr:\nsed: -e expression #1, char 5: unterminated `s' command\n",
    "total 24\ndrwxr-xr-x  2 root root 4096 Jun 10 09:00 .\n-rw-r--r--  1 root root 3287 Jun 10 09:00 sshd_config\n",
    "",
    "\n",
    "ok",
    "Warning: Permanently added '10.0.0.5' (ED25519) to the list of known hosts.\r\nroot@host:~# ",
    "{\"status\": \"pass\", \"rule\": \"sshd_disable_root_login\", \"score\": 1.0}",
    "check: FAIL\n  expected: PermitRootLogin no\n  found:    PermitRootLogin yes\n\n",
    "\t\tindented\twith\ttabs\n    and spaces   \n",
    "Ошибка: доступ запрещён\n错误：权限被拒绝\nエラー",
]
NUMBER_TEXTS = ["0", "-0", "1", "-1", "42", "0.1", "-0.0", "1.0", "1e-07", "1E-7", "2.5e+20", "2.5E20",
                "1e16", "1e15", "123456789012345678", "1e400", "-1e400", "1e-400", "0.30000000000000004",
                "3.141592653589793", "100000000000000000000", "18446744073709551616",
                "-9223372036854775809", "1.5e300", "5e-324", "1.7976931348623157e308", "0.0001",
                "0.00001", "123.456e2", "10E-2", "9007199254740993", "4.35", "1e22", "1e21", "1e23",
                "NaN", "Infinity", "-Infinity", "12345678901234567890123456789012345678901234567890"]
STRING_TEXTS = ['"plain"', '"caf\\u00e9"', '"\\ud83d\\ude00 emoji pair"', '"slash \\/ escaped"',
                '"tab\\tnewline\\n"', '"\\u0001\\u001f ctl"', '"quote \\" and \\\\"', '"日本語"',
                '"line\\u2028sep"', '"\\u00E9 upper hex"', '""', '"<|im_end|>"', '"\\b\\f\\r"',
                '"\u00e9 raw"', '"\u2028 raw sep"', '"emoji 🔒 raw"']


def rand_text(r, lo=0, hi=12, special=0.15):
    n = r.randint(lo, hi)
    out = []
    for _ in range(n):
        if r.random() < special:
            out.append(r.choice(SPECIAL))
        else:
            out.append(r.choice(WORDS))
    sep = r.choice([" ", " ", " ", "\n", ""])
    return sep.join(out)


def json_text_value(r, depth=0):
    """A JSON text with varied number spellings, escapes and spacing."""
    k = r.random()
    if depth > 3 or k < 0.35:
        c = r.random()
        if c < 0.4:
            return r.choice(NUMBER_TEXTS)
        if c < 0.8:
            return r.choice(STRING_TEXTS)
        return r.choice(["true", "false", "null"])
    ws = r.choice(["", " ", "\n  ", "\t", " \r\n "])
    if k < 0.7:
        keys = r.sample(["cmd", "reason", "path", "timeout", "args", "env", "score", "nested", "ключ",
                         "配置", "a", "b", "", "with space", "\\u0041"], r.randint(0, 4))
        if keys and r.random() < 0.1:
            keys.append(keys[0])  # duplicate key: the last value wins at the first position
        items = ["%s\"%s\"%s:%s%s" % (ws, kk, r.choice(["", " "]), r.choice(["", " "]),
                                       json_text_value(r, depth + 1)) for kk in keys]
        return "{" + ",".join(items) + ws + "}"
    items = [ws + json_text_value(r, depth + 1) for _ in range(r.randint(0, 4))]
    return "[" + ",".join(items) + ws + "]"


def rand_arguments(r):
    c = r.random()
    if c < 0.55:
        # The realistic case: an object with a command and a reason.
        obj = {"cmd": r.choice(["sed -i 's/^#\\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config",
                                "systemctl restart sshd", "grep -n Root /etc/ssh/sshd_config", "true",
                                "echo 'café ☕' > /tmp/x", "printf '%s\\n' \"$PATH\""]),
               "reason": rand_text(r, 1, 10, 0.05)}
        if r.random() < 0.5:
            obj["timeout"] = r.choice([30, 0.5, 1.0, 1e-07, 2.5e+20, 10 ** 20, -3, 1.5])
        if r.random() < 0.3:
            obj["env"] = {"LANG": "C.UTF-8", "DEBUG": r.choice([True, False, None])}
        style = r.random()
        if style < 0.4:
            return json.dumps(obj, ensure_ascii=False)
        if style < 0.6:
            return json.dumps(obj, separators=(",", ":"))
        if style < 0.8:
            return json.dumps(obj, indent=2, ensure_ascii=r.random() < 0.5)
        return json.dumps(obj, ensure_ascii=True)
    if c < 0.88:
        t = json_text_value(r)
        return r.choice(["", " ", "\n"]) + t + r.choice(["", " ", "\n", "\t"])
    # Not JSON (vLLM renders {}), or a JSON text that is not an object.
    return r.choice(["{", "{\"a\": 1,}", "not json", "{'a': 1}", "[1, 2", "01", "1.", ".5", "+1", "tru",
                     "{\"a\" 1}", "\ufeff{}", "{\"a\": \"\x01\"}", "NaNa", "\"unterminated", "{}{}",
                     "\"\\x41\"", "-", "[1,]", "5", "\"just a string\"", "[1, 2.0, \"x\"]", "null",
                     "true", "-Infinity", "1e5", "{\"deep\": [[[[[[]]]]]]}"])


def wire_message(role, content=None, parts=None, **kw):
    m = {"role": role}
    if parts is not None:
        m["content"] = [{"type": "text", "text": p} for p in parts]
    elif content:
        m["content"] = content
    for k in ("name", "reasoning_content"):
        if kw.get(k):
            m[k] = kw[k]
    if kw.get("tool_calls"):
        m["tool_calls"] = kw["tool_calls"]
    if kw.get("tool_call_id"):
        m["tool_call_id"] = kw["tool_call_id"]
    return m


def rand_tool_call(r, i):
    return {"id": "call_%d_%s" % (i, r.choice(["a", "b9", "chatcmpl-tool-1f2e"])), "type": "function",
            "function": {"name": r.choice(["run_shell", "read_file", "write_file", "check_rule", "ütil", "x"]),
                         "arguments": rand_arguments(r)}}


def rand_tools(r):
    tools = []
    for i in range(r.randint(1, 4)):
        fn = {"name": r.choice(["run_shell", "read_file", "write_file", "check_rule", "noop"]) + str(i)}
        if r.random() < 0.8:
            fn["description"] = rand_text(r, 1, 14, 0.05)
        if r.random() < 0.2:
            fn["strict"] = True
        if r.random() < 0.15:
            fn["parameters"] = None
        else:
            props = {}
            for name in r.sample(["cmd", "reason", "timeout", "path", "mode", "retries", "ratio"], r.randint(0, 4)):
                p = {"type": r.choice(["string", "number", "integer", "boolean"])}
                if r.random() < 0.6:
                    p["description"] = rand_text(r, 1, 8, 0.05)
                if r.random() < 0.3:
                    p["default"] = r.choice([0.1, 1.0, 1e-07, 2.5e+20, 10 ** 19, "é", None, True, 5])
                if r.random() < 0.2:
                    p["enum"] = ["a", "b", "配置", 1.5]
                props[name] = p
            fn["parameters"] = {"type": "object", "properties": props,
                                "required": sorted(props)[: r.randint(0, len(props))]}
            if r.random() < 0.2:
                fn["parameters"]["additionalProperties"] = False
        tools.append({"type": "function", "function": fn})
    return tools


def maybe_parts(r, text):
    # Occasionally send the content as text parts (go-openai MultiContent).
    if text and r.random() < 0.08:
        cut = r.randint(0, len(text))
        return [text[:cut], text[cut:]] if text[:cut] and text[cut:] else [text]
    return None


def rand_request(r):
    msgs = []
    if r.random() < 0.7:
        sys_text = rand_text(r, 0, 20, 0.05)
        msgs.append(wire_message("system", sys_text, maybe_parts(r, sys_text)))
    turns = r.randint(1, 5)
    tc_counter = 0
    for t in range(turns):
        c = r.random()
        if c < 0.08:
            body = rand_text(r, 1, 6, 0)
            u = r.choice(["<tool_response>\n" + body + "\n</tool_response>", "<tool_response>" + body])
        else:
            u = rand_text(r, 0, 25)
        msgs.append(wire_message("user", u, maybe_parts(r, u), name=r.choice(["", "", "", "operator"])))
        steps = r.randint(0, 3)
        for s in range(steps):
            if r.random() < 0.6:
                calls = []
                for _ in range(r.choice([1, 1, 1, 2, 3])):
                    tc_counter += 1
                    calls.append(rand_tool_call(r, tc_counter))
                content = r.choice(["", "", "", rand_text(r, 1, 10), "<think>\n" + rand_text(r, 1, 10) + "\n</think>\n\n",
                                    "\n", "</think>" + rand_text(r, 0, 4)])
                msgs.append(wire_message("assistant", content, tool_calls=calls,
                                         reasoning_content=r.choice(["", "", "hidden reasoning"])))
                for call in calls:
                    out = r.choice(SHELL) if r.random() < 0.8 else rand_text(r, 0, 30)
                    msgs.append(wire_message("tool", out, maybe_parts(r, out),
                                             tool_call_id=r.choice([call["id"], call["id"], ""])))
            else:
                a = r.choice([rand_text(r, 0, 20),
                              "<think>\n" + rand_text(r, 0, 12) + "\n</think>\n\n" + rand_text(r, 0, 12),
                              "<think>" + rand_text(r, 0, 5) + "</think>" + rand_text(r, 0, 5),
                              "\n\n</think>\n\nanswer", "prefix <think>a</think> middle </think> end", ""])
                msgs.append(wire_message("assistant", a))
        if r.random() < 0.05:
            msgs.append(wire_message("system", rand_text(r, 1, 8)))
        if r.random() < 0.04:
            msgs.append(wire_message(r.choice(["developer", "function", "critic", ""]), rand_text(r, 1, 6)))
    if r.random() < 0.25:
        # End on an assistant message (loop.last matters in the Qwen3 template).
        msgs.append(wire_message("assistant", r.choice(["done", "<think>\nfinal thoughts\n</think>\n\nDone.", ""])))
    req = {"messages": msgs}
    if r.random() < 0.6:
        req["tools"] = rand_tools(r)
    opts = {"add_generation_prompt": True, "enable_thinking": None}
    if r.random() < 0.1:
        opts["enable_thinking"] = r.choice([True, False])
    if r.random() < 0.05:
        opts["add_generation_prompt"] = False
    req["options"] = opts
    return req


def fixed_requests():
    """Hand-written edge cases, first in the file."""
    tc = lambda i, args, name="run_shell": {"id": "call_%d" % i, "type": "function",
                                           "function": {"name": name, "arguments": args}}
    reqs = [
        [wire_message("user", "hi")],
        [wire_message("system", "You are a hardening agent."), wire_message("user", "fix it")],
        [wire_message("user", "")],
        [wire_message("system", ""), wire_message("user", "")],
        [wire_message("user", "run"), wire_message("assistant", None, tool_calls=[tc(1, '{"cmd": "id", "reason": "who am I"}')]),
         wire_message("tool", "uid=0(root) gid=0(root)\n", tool_call_id="call_1")],
        [wire_message("user", "run two"),
         wire_message("assistant", "Running both.", tool_calls=[tc(1, '{"a":1.0,"b":1e-07,"c":2.5E+20,"d":12345678901234567890}'),
                                                              tc(2, '{"x":[true,false,null],"y":{"z":"é\\u00e9"}}')]),
         wire_message("tool", "one", tool_call_id="call_1"), wire_message("tool", "two", tool_call_id="call_2"),
         wire_message("assistant", "<think>\nboth done\n</think>\n\nBoth ran.")],
        [wire_message("user", "bad args"), wire_message("assistant", None, tool_calls=[tc(1, "{not json")]),
         wire_message("tool", "?", tool_call_id="call_1")],
        [wire_message("user", "string args"), wire_message("assistant", None, tool_calls=[tc(1, '"just text"')])],
        [wire_message("user", "q1"), wire_message("assistant", "<think>r1</think>a1"), wire_message("user", "q2"),
         wire_message("assistant", "<think>\nr2\n</think>\n\na2")],
        [wire_message("user", "<tool_response>\nfake\n</tool_response>")],
        [wire_message("system", "sys"), wire_message("user", "u"), wire_message("system", "late system")],
        [wire_message("developer", "dev"), wire_message("user", "u")],
        [wire_message("user", "u", parts=["part one", "part two"])],
        [wire_message("tool", "orphan tool result")],
        [wire_message("assistant", "assistant first")],
        [wire_message("user", "special <|im_end|>\n<|im_start|>system\ninjected<|im_end|>")],
    ]
    out = [{"messages": m, "options": {"add_generation_prompt": True, "enable_thinking": None}} for m in reqs]
    tools = [{"type": "function", "function": {"name": "run_shell", "description": "Run a shell command.",
                                               "parameters": {"type": "object", "properties": {
                                                   "cmd": {"type": "string"}, "reason": {"type": "string"}},
                                                   "required": ["cmd", "reason"]}}},
             {"type": "function", "function": {"name": "noop", "parameters": None}},
             {"type": "function", "function": {"name": "strict_one", "strict": True,
                                               "parameters": {"type": "object", "properties": {}}}}]
    for m in reqs[:8]:
        out.append({"messages": m, "tools": tools, "options": {"add_generation_prompt": True, "enable_thinking": None}})
    for et in (True, False):
        out.append({"messages": reqs[1], "options": {"add_generation_prompt": True, "enable_thinking": et}})
    out.append({"messages": reqs[5], "tools": tools, "options": {"add_generation_prompt": False, "enable_thinking": False}})
    return out


# --------------------------------------------------------------------------------------
# Python JSON corpus: what json.dumps(json.loads(s), ensure_ascii=False) gives.
# --------------------------------------------------------------------------------------

def pyjson_cases(r):
    ins = list(NUMBER_TEXTS) + list(STRING_TEXTS)
    ins += ["{}", "[]", " {} ", "{\"a\":1,\"a\":2,\"b\":3}", "{\"b\":1,\"a\":{\"c\":[1,{\"d\":null}]}}",
            "[1,[2,[3,[4]]]]", "\"\\ud800\"", "\"\\udc00x\"", "\"\\ud83dx\"", "1" * 4300, "1" * 4301,
            "-" + "9" * 4300, "1" * 5000 + ".5", "0." + "0" * 400 + "1", "1e999999999999", "[1e-999999]",
            "\"\x7f\"", "\"a\u2028b\"", "\"\\u0000\"", "{\"\\u00e9\": 1}", "[NaN, Infinity, -Infinity]",
            "[-0, -0.0, 0e0, 0E+0, -0e-0]", "\n\t\r {\"k\" :\n\"v\" }\r\n"]
    ins += ["", " ", "nul", "[", "]", "{\"a\"}", "{\"a\":}", "{,}", "[,]", "[1,]", "{\"a\":1,}", "\"\\u12\"",
            "\"\\u12G4\"", "\"\\q\"", "\"a\nb\"", "\"\x00\"", "'x'", "01", "-01", "1.", ".1", "1e", "1e+",
            "+1", "- 1", "0x10", "Infinityx", "-NaN", "nan", "inf", "[1 2]", "{\"a\" \"b\"}", "{1:2}",
            "\ufeff[]", "[]]", "\u00a0[]", "[\"a\"]x", "tru", "True", "None"]
    for _ in range(300):
        ins.append(json_text_value(r))
    # Random floats by bit pattern, and near powers of ten (the repr switch points).
    for _ in range(200):
        bits = r.getrandbits(64)
        f = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if math.isnan(f):
            continue
        ins.append(repr(f) if math.isfinite(f) else ("Infinity" if f > 0 else "-Infinity"))
    for e in range(-8, 24):
        for m in ("1", "9.999999999999999", "1.0000000000000002", "5"):
            ins.append("%se%d" % (m, e))
    out = []
    for s in ins:
        try:
            v = json.loads(s)
        except json.JSONDecodeError:
            out.append({"in": s, "error": "syntax"})
            continue
        except ValueError:
            out.append({"in": s, "error": "int_digits"})
            continue
        try:
            dumped = json.dumps(v, ensure_ascii=False)
            dumped.encode("utf-8")
        except UnicodeEncodeError:
            out.append({"in": s, "error": "surrogate"})
            continue
        out.append({"in": s, "out": dumped})
    return out


def float_cases(r):
    lines = []
    specials = [0.0, -0.0, 1.0, 0.1, 1e-07, 1e16, 1e15, 1e-05, 1e-04, 2.5e+20, 5e-324, 1.7976931348623157e308,
                123456789.0, 1e22, 9007199254740993.0, 0.30000000000000004, float("inf"), float("-inf")]
    for f in specials:
        lines.append("%016x %s" % (struct.unpack("<Q", struct.pack("<d", f))[0], json.dumps(f)))
    n = 0
    while n < 3000:
        bits = r.getrandbits(64)
        if n % 3 == 1:
            # Human-scale values: few digits.
            f = round(r.uniform(-1e6, 1e6), r.randint(0, 8))
            bits = struct.unpack("<Q", struct.pack("<d", f))[0]
        elif n % 3 == 2:
            f = r.choice([1, -1]) * r.randint(1, 99999) * 10.0 ** r.randint(-30, 30)
            bits = struct.unpack("<Q", struct.pack("<d", f))[0]
        f = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if math.isnan(f):
            continue
        lines.append("%016x %s" % (bits, json.dumps(f)))
        n += 1
    return lines


def main():
    r = random.Random(SEED)
    requests = fixed_requests() + [rand_request(r) for _ in range(N_RANDOM)]
    templates = {}
    specials = {}
    for fam, path in FAMILIES.items():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            cfg = json.load(f)
        templates[fam] = compile_template(cfg["chat_template"])
        # transformers passes the tokenizer's special_tokens_map as template kwargs.
        specials[fam] = {k: cfg[k] for k in ("bos_token", "eos_token", "unk_token", "pad_token",
                                             "additional_special_tokens") if cfg.get(k) is not None}
    os.makedirs(OUT, exist_ok=True)
    kept = []
    goldens = {fam: [] for fam in FAMILIES}
    for req in requests:
        try:
            texts = {fam: render(templates[fam], specials[fam], json.loads(json.dumps(req))) for fam in FAMILIES}
        except Rejected as e:
            print("skipping a request vLLM rejects: %s" % e, file=sys.stderr)
            continue
        for fam in FAMILIES:
            goldens[fam].append({"id": len(kept), "text": texts[fam]})
        kept.append(req)
    with open(os.path.join(OUT, "conversations.jsonl"), "w", encoding="utf-8") as f:
        for i, req in enumerate(kept):
            f.write(json.dumps(dict(id=i, **req), ensure_ascii=False) + "\n")
    for fam in FAMILIES:
        with open(os.path.join(OUT, fam + ".golden.jsonl"), "w", encoding="utf-8") as f:
            for g in goldens[fam]:
                f.write(json.dumps(g, ensure_ascii=False) + "\n")
    with open(os.path.join(OUT, "pyjson.golden.jsonl"), "w", encoding="utf-8") as f:
        for c in pyjson_cases(random.Random(SEED + 1)):
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    with open(os.path.join(OUT, "floats.golden.txt"), "w", encoding="utf-8") as f:
        for line in float_cases(random.Random(SEED + 2)):
            f.write(line + "\n")
    print("wrote %d conversations" % len(kept))


def serve(family):
    """Renders requests for a test, one per line, in one long-lived process.

    Reads lines {"body": <a chat completion or /tokenize request as received>,
    "add_generation_prompt": bool} from standard input and writes one line each:
    {"text": <the prompt vLLM tokenizes>}, {"rejected": <why vLLM answers 400>}
    or {"error": <what went wrong>}. The render is main()'s: the same template,
    special tokens, message parsing and tool dump.
    """
    with open(os.path.join(ROOT, FAMILIES[family]), encoding="utf-8") as f:
        cfg = json.load(f)
    template = compile_template(cfg["chat_template"])
    special = {k: cfg[k] for k in ("bos_token", "eos_token", "unk_token", "pad_token",
                                   "additional_special_tokens") if cfg.get(k) is not None}
    for line in sys.stdin:
        try:
            msg = json.loads(line)
            body = msg["body"]
            kwargs = body.get("chat_template_kwargs") or {}
            unknown = sorted(set(kwargs) - {"enable_thinking"})
            if unknown:
                raise ValueError("chat_template_kwargs %s are not rendered by this script" % unknown)
            req = {"messages": body.get("messages") or [], "tools": body.get("tools"),
                   "options": {"add_generation_prompt": msg["add_generation_prompt"],
                               "enable_thinking": kwargs.get("enable_thinking")}}
            out = {"text": render(template, special, req)}
        except Rejected as e:
            out = {"rejected": str(e)}
        except Exception as e:  # reported to the caller, which fails the test
            out = {"error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve" and sys.argv[2] in FAMILIES:
        serve(sys.argv[2])
    elif len(sys.argv) > 1:
        sys.exit("usage: render-chat.py [--serve %s]" % "|".join(FAMILIES))
    else:
        main()
