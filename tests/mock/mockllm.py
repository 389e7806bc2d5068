#!/usr/bin/env python3
"""mockllm.py: a scripted mock LLM server (OpenAI and Anthropic protocols) for egg's tests.

Usage: mockllm.py --script FILE [--log FILE] [--port-file FILE]
                  [--reasoning-models REGEX] [--max-output N]
                  [--prompt-cache] [--cache-min-tokens N] [--no-thinking-models REGEX]
                  [--api-key KEY]

It listens on 127.0.0.1 on an ephemeral port, prints the port on stdout,
and answers each request with the first unconsumed script entry whose
`match` strings all occur in the request (entries without `match` fit any
request). It records every request (path, headers, body) as one JSON line in
the log. The script is a JSON array or JSON lines; each entry is an object:

  reply: "text"            reply text (or reply_file: path relative to the script)
  wrap: "python"           put the reply in a ```python fenced block
  finish_reason: "stop"    or "length" (a reply cut off by the output limit)
  usage: {"prompt_tokens": N, "completion_tokens": N}
  cached_tokens: N, reasoning_tokens: N   reported as the providers do (OpenAI's
                           prompt_tokens_details / completion_tokens_details;
                           Anthropic's cache_read_input_tokens)
  stream_seconds: S        a streamed reply's chunks spread over S seconds
  status: 429, retry_after: "2", body: "..."   an HTTP error
  fault: "drop"            close the connection without replying
         "stall"           send nothing for `seconds` (default 30)
         "stall_mid"       send headers and half the body, then stall
         "malformed"       200 with a body that is not JSON
         "html"            an HTML error page (status default 502)
         "empty_choices"   200 with an empty choices list
  echo_auth: true          with status: put the received credentials into the error
                           message (a careless server), for the secret-leak test
  delay: seconds           wait before answering (concurrency tests)
  match: ["a", "b"]        only for requests containing all these strings
  repeat: true             never consumed (a default answer)
         "stream_cut"      (streamed) half the events, then the connection closes

When nothing fits, it answers 500 "mock: no script entry fits this request".

Requests are checked as the real APIs check them, before any script entry
is taken, with their real error bodies: on /chat/completions, a model whose
name matches --reasoning-models (default: OpenAI's gpt-5*, o1*, o3*, o4*)
refuses `max_tokens` (unsupported_parameter) and any temperature but 1
(unsupported_value), and other models refuse `reasoning_effort`; on
/v1/messages, `max_tokens` is required, OpenAI's fields are extra inputs and
the temperature must lie in [0, 1]. With --max-output N an output limit over
N is refused as each provider words it. A request with "stream": true gets
server-sent events in the provider's form (OpenAI's usage chunk only when
stream_options.include_usage asks for it).

Anthropic's extended thinking is checked as documented: `thinking` is
{"type": "enabled", "budget_tokens": N} with 1024 <= N < max_tokens, no
temperature but 1 beside it, and a model matching --no-thinking-models
(default: the claude-3-5 and claude-3 families) refuses it; a reply to a
request with thinking opens with a thinking block (streamed as
thinking_delta and signature_delta events) before its text. `cache_control`
must be {"type": "ephemeral"} (a "ttl" of 5m or 1h allowed), on at most 4
blocks.

With --api-key KEY every request must carry that key (OpenAI's Authorization:
Bearer, Anthropic's x-api-key), else it is refused with 401 and the
provider's own error body, before anything else. GET .../models lists one
model (both APIs answer it for free), under the same key; GETs are logged
to the log's name with .get appended, so that the log counts only POSTs.

With --prompt-cache the server keeps a prompt cache as the providers do,
counting 4 characters a token. Anthropic: the request up to a block marked
with cache_control is the cached prefix; one at least the model's least
cacheable length long is read from the cache when an earlier request wrote
it (cache_read_input_tokens), else written (cache_creation_input_tokens).
That length is the documented one (1024 tokens; 2048 for claude-3-haiku and
claude-3-5-haiku; 4096 for claude-haiku-4-5 and claude-opus-4-5), or
--cache-min-tokens N for every model (a server that caches shorter prefixes
than the provider does). OpenAI (automatic): a prompt of at least that many
tokens (1024) reads the longest prefix it shares with an earlier prompt, in
steps of 128 tokens (prompt_tokens_details.cached_tokens). An entry's own
usage or cached_tokens wins over the cache.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    def __init__(self, path: str):
        self.dir = os.path.dirname(os.path.abspath(path))
        text = open(path).read().strip()
        if text.startswith("["):
            self.entries = json.loads(text)
        else:
            self.entries = [json.loads(line) for line in text.splitlines() if line.strip()]
        self.used = [False] * len(self.entries)
        self.lock = threading.Lock()

    def take(self, request_text: str) -> dict | None:
        with self.lock:
            for i, e in enumerate(self.entries):
                if self.used[i]:
                    continue
                if all(m in request_text for m in e.get("match", [])):
                    if not e.get("repeat"):
                        self.used[i] = True
                    return e
        return None

    def reply_text(self, e: dict) -> str:
        if "reply_file" in e:
            with open(os.path.join(self.dir, e["reply_file"])) as f:
                text = f.read()
        else:
            text = e.get("reply", "")
        if e.get("wrap"):
            text = f"```{e['wrap']}\n{text}\n```\n"
        return text


OPENAI_FIELDS = {"model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "stream",
                 "stream_options", "reasoning_effort", "stop", "n", "seed", "response_format", "tools", "user"}
ANTHROPIC_FIELDS = {"model", "messages", "system", "max_tokens", "temperature", "top_p", "top_k", "stream",
                    "stop_sequences", "metadata", "tools", "tool_choice", "thinking"}


def openai_error(message: str, param: str | None, code: str | None) -> dict:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def anthropic_error(message: str) -> dict:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def cache_marks(req: dict) -> list:
    """Every cache_control in an Anthropic request's system and messages."""
    marks = []
    system = req.get("system")
    for b in system if isinstance(system, list) else []:
        if isinstance(b, dict) and "cache_control" in b:
            marks.append(b["cache_control"])
    for m in req.get("messages", []):
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and "cache_control" in b:
                marks.append(b["cache_control"])
    return marks


def thinking_refusal(req: dict, no_thinking: re.Pattern) -> dict | None:
    th = req["thinking"]
    if not isinstance(th, dict) or th.get("type") not in ("enabled", "disabled"):
        return anthropic_error("thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled'")
    if th["type"] == "disabled":
        return None
    if no_thinking.search(str(req.get("model", ""))):
        return anthropic_error(f"'{req.get('model')}' does not support thinking.")
    budget = th.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        return anthropic_error("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
    if req.get("max_tokens", 0) <= budget:
        return anthropic_error("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                               "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking")
    if req.get("temperature") is not None and req["temperature"] != 1:
        return anthropic_error("`temperature` may only be set to 1 when thinking is enabled. Please consult our "
                               "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking")
    return None


def refusal(req: dict, anthropic: bool, reasoning: re.Pattern, max_output: int | None,
            no_thinking: re.Pattern = re.compile(r"^claude-3-(5|opus|haiku)")) -> dict | None:
    """The error body a real API would answer this request with, or None."""
    model = str(req.get("model", ""))
    if anthropic:
        for k in req:
            if k not in ANTHROPIC_FIELDS:
                return anthropic_error(f"{k}: Extra inputs are not permitted")
        if "max_tokens" not in req:
            return anthropic_error("max_tokens: Field required")
        t = req.get("temperature")
        if t is not None and not 0 <= t <= 1:
            return anthropic_error("temperature: Input should be less than or equal to 1")
        marks = cache_marks(req)
        if len(marks) > 4:
            return anthropic_error(f"A maximum of 4 blocks with cache_control may be provided. Found {len(marks)}.")
        for c in marks:
            if not isinstance(c, dict) or c.get("type") != "ephemeral" or c.get("ttl", "5m") not in ("5m", "1h") \
                    or set(c) - {"type", "ttl"}:
                return anthropic_error("system.0.cache_control: Input tag does not match the expected tag: 'ephemeral'")
        if "thinking" in req:
            why = thinking_refusal(req, no_thinking)
            if why:
                return why
        if max_output and req["max_tokens"] > max_output:
            return anthropic_error(f"max_tokens: {req['max_tokens']} > {max_output}, which is the maximum "
                                   f"allowed number of output tokens for {model}")
        return None
    for k in req:
        if k not in OPENAI_FIELDS:
            return openai_error(f"Unrecognized request argument supplied: {k}", None, None)
    if reasoning.search(model):
        if "max_tokens" in req:
            return openai_error("Unsupported parameter: 'max_tokens' is not supported with this model. "
                                "Use 'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter")
        t = req.get("temperature")
        if t is not None and t != 1:
            return openai_error(f"Unsupported value: 'temperature' does not support {t} with this model. Only "
                                "the default (1) value is supported.", "temperature", "unsupported_value")
    elif "reasoning_effort" in req:
        return openai_error("Unrecognized request argument supplied: reasoning_effort", None, None)
    field = "max_completion_tokens" if "max_completion_tokens" in req else "max_tokens"
    if max_output and req.get(field, 0) > max_output:
        return openai_error(f"{field} is too large: {req[field]}. This model supports at most {max_output} "
                            f"completion tokens, whereas you provided {req[field]}.", field, "invalid_value")
    return None


def usage_of(e: dict, text: str, content: str) -> dict:
    """The entry's usage in OpenAI's form, with the details the entry gives."""
    u = dict(e.get("usage", {"prompt_tokens": max(1, len(text) // 4),
                             "completion_tokens": max(1, len(content) // 4)}))
    u["total_tokens"] = u["prompt_tokens"] + u["completion_tokens"]
    if "cached_tokens" in e:
        u["prompt_tokens_details"] = {"cached_tokens": e["cached_tokens"]}
    if "reasoning_tokens" in e:
        u["completion_tokens_details"] = {"reasoning_tokens": e["reasoning_tokens"]}
    return u


def anthropic_usage(u: dict) -> dict:
    cached = u.get("prompt_tokens_details", {}).get("cached_tokens", 0)
    written = u.get("cache_creation_input_tokens", 0)
    out = {"input_tokens": u["prompt_tokens"] - cached - written, "output_tokens": u["completion_tokens"]}
    if cached:
        out["cache_read_input_tokens"] = cached
    if written:
        out["cache_creation_input_tokens"] = written
    return out


def least_cacheable(model: str) -> int:
    """The shortest prefix the provider's cache keeps for `model`, as documented."""
    if re.match(r"claude-(haiku-4-5|opus-4-5)", model):
        return 4096
    if re.match(r"claude-3(-5)?-haiku", model):
        return 2048
    return 1024


class PromptCache:
    """The providers' prompt caches, 4 characters a token (see the module's doc)."""

    def __init__(self, min_tokens: int | None):
        self.forced_min = min_tokens
        self.prefixes: set[str] = set()    # Anthropic: the marked prefixes written
        self.prompts: list[str] = []       # OpenAI: every prompt seen
        self.lock = threading.Lock()

    def anthropic(self, req: dict) -> tuple[int, int]:
        """(tokens read, tokens written) for the request's last marked prefix."""
        parts, prefix = [], None
        system = req.get("system")
        for b in system if isinstance(system, list) else [{"text": system or ""}]:
            parts.append(b.get("text", ""))
            if "cache_control" in b:
                prefix = "".join(parts)
        for m in req.get("messages", []):
            content = m.get("content")
            for b in content if isinstance(content, list) else [{"text": content or ""}]:
                parts.append(b.get("text", ""))
                if isinstance(b, dict) and "cache_control" in b:
                    prefix = "".join(parts)
        if prefix is None or len(prefix) // 4 < self.min_tokens(req):
            return 0, 0
        with self.lock:
            if prefix in self.prefixes:
                return len(prefix) // 4, 0
            self.prefixes.add(prefix)
        return 0, len(prefix) // 4

    def openai(self, req: dict) -> int:
        """Tokens read: the longest prefix shared with an earlier prompt, in steps of 128."""
        text = "".join(str(m.get("content", "")) for m in req.get("messages", []))
        best = 0
        with self.lock:
            for old in self.prompts:
                n = len(os.path.commonprefix([old, text]))
                best = max(best, n)
            self.prompts.append(text)
        tokens = best // 4 // 128 * 128
        least = self.min_tokens(req)
        return tokens if len(text) // 4 >= least and tokens >= least else 0

    def min_tokens(self, req: dict) -> int:
        return self.forced_min if self.forced_min is not None else least_cacheable(str(req.get("model", "")))


# What the mock "thinks" before its text: never part of the reply's text.
THOUGHT = "MOCK-THINKING: the request asks for a kernel; reasoning about it first."


def thinks(req: dict) -> bool:
    return (req.get("thinking") or {}).get("type") == "enabled"


def pieces(content: str, n: int = 24) -> list[str]:
    step = max(1, -(-len(content) // n))
    return [content[i:i + step] for i in range(0, len(content), step)] or [""]


def stream_events(anthropic: bool, req: dict, content: str, finish: str, usage: dict, model: str,
                  fault: str | None) -> list[bytes]:
    """The reply as the provider streams it, one server-sent event a list item."""
    def ev(obj: dict, name: str | None = None) -> bytes:
        head = f"event: {name}\n" if name else ""
        return (head + "data: " + json.dumps(obj) + "\n\n").encode()
    out = []
    if anthropic:
        au = anthropic_usage(usage)
        out.append(ev({"type": "message_start", "message": {
            "id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "usage": {**{k: v for k, v in au.items() if k != "output_tokens"},
                                           "output_tokens": 1}}}, "message_start"))
        at = 0
        if thinks(req):
            out.append(ev({"type": "content_block_start", "index": 0,
                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
                          "content_block_start"))
            for p in pieces(THOUGHT, 3):
                out.append(ev({"type": "content_block_delta", "index": 0,
                               "delta": {"type": "thinking_delta", "thinking": p}}, "content_block_delta"))
            out.append(ev({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "signature_delta", "signature": "c2lnbmF0dXJl"}}, "content_block_delta"))
            out.append(ev({"type": "content_block_stop", "index": 0}, "content_block_stop"))
            at = 1
        out.append(ev({"type": "content_block_start", "index": at, "content_block": {"type": "text", "text": ""}},
                      "content_block_start"))
        out.append(ev({"type": "ping"}, "ping"))
        for p in pieces(content):
            out.append(ev({"type": "content_block_delta", "index": at,
                           "delta": {"type": "text_delta", "text": p}}, "content_block_delta"))
        out.append(ev({"type": "content_block_stop", "index": at}, "content_block_stop"))
        stop = {"stop": "end_turn", "length": "max_tokens"}.get(finish, finish)
        out.append(ev({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                       "usage": {"output_tokens": au["output_tokens"]}}, "message_delta"))
        out.append(ev({"type": "message_stop"}, "message_stop"))
        return out
    base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "model": model}
    if fault == "empty_choices":
        out.append(ev({**base, "choices": []}))
    else:
        out.append(ev({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                            "finish_reason": None}]}))
        for p in pieces(content):
            out.append(ev({**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}))
        out.append(ev({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
    if (req.get("stream_options") or {}).get("include_usage"):
        out.append(ev({**base, "choices": [], "usage": usage}))
    out.append(b"data: [DONE]\n\n")
    return out


def auth_refusal(headers, anthropic: bool, key: str | None) -> dict | None:
    """The 401 body the provider answers for missing or wrong credentials, or None."""
    if key is None:
        return None
    bearer = headers.get("Authorization") or ""
    got = bearer[7:] if bearer.startswith("Bearer ") else headers.get("x-api-key") or ""
    if got == key:
        return None
    if anthropic:
        return {"type": "error", "error": {"type": "authentication_error",
                                           "message": "invalid x-api-key" if got else "x-api-key header is required"}}
    if not got:
        return openai_error("You didn't provide an API key. You need to provide your API key in an Authorization "
                            "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", None, None)
    return openai_error("Incorrect API key provided. You can find your API key at "
                        "https://platform.openai.com/account/api-keys.", None, "invalid_api_key")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script: Script
    log_path: str | None
    log_lock = threading.Lock()
    reasoning: re.Pattern
    no_thinking: re.Pattern
    max_output: int | None = None
    cache: PromptCache | None = None
    api_key: str | None = None

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json",
              headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_GET(self) -> None:
        anthropic = "anthropic-version" in self.headers
        if self.log_path:
            with self.log_lock, open(self.log_path + ".get", "a") as f:
                f.write(json.dumps({"path": self.path, "headers": dict(self.headers.items()),
                                    "time": time.time()}) + "\n")
        if not self.path.rstrip("/").endswith("/models"):
            self._send(404, json.dumps({"error": {"message": f"mock: no GET {self.path}"}}).encode())
            return
        refused = auth_refusal(self.headers, anthropic, self.api_key)
        if refused is not None:
            self._send(401, json.dumps(refused).encode())
            return
        self._send(200, json.dumps({"data": [{"id": "mock-model", "type": "model"}], "has_more": False}).encode())

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n).decode("utf-8", "replace")
        if self.log_path:
            with self.log_lock, open(self.log_path, "a") as f:
                f.write(json.dumps({"path": self.path, "headers": dict(self.headers.items()),
                                    "body": raw, "time": time.time()}) + "\n")
        try:
            req = json.loads(raw)
        except ValueError:
            self._send(400, json.dumps({"error": {"message": "mock: request is not JSON"}}).encode())
            return
        text = json.dumps(req.get("messages", [])) + json.dumps(req.get("system", ""))
        anthropic = self.path.rstrip("/").endswith("/v1/messages")
        refused = auth_refusal(self.headers, anthropic, self.api_key)
        if refused is not None:
            self._send(401, json.dumps(refused).encode())
            return
        refused = refusal(req, anthropic, self.reasoning, self.max_output, self.no_thinking)
        if refused is not None:
            self._send(400, json.dumps(refused).encode())
            return
        e = self.script.take(text)
        if e is None:
            # Name the request (its role line and the candidate it is about),
            # so that a test failing here says which call the script lacked.
            said = ", ".join(dict.fromkeys(re.findall(r"Role: [^.\\]{0,60}|seed \d+ of \d+", text)))
            self._send(500, json.dumps({"error": {"message": "mock: no script entry fits this request"
                                                  + (f" ({said})" if said else "")}}).encode())
            return
        if e.get("delay"):
            time.sleep(float(e["delay"]))
        fault = e.get("fault")
        if fault == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
            return
        if fault == "stall":
            time.sleep(float(e.get("seconds", 30)))
            self.close_connection = True
            return
        if "status" in e and fault != "html":
            headers = {"Retry-After": str(e["retry_after"])} if "retry_after" in e else {}
            message = e.get("message", f"mock error {e['status']}")
            if e.get("echo_auth"):
                creds = self.headers.get("Authorization") or self.headers.get("x-api-key") or ""
                message += f" (you sent: {creds})"
            body = e.get("body", json.dumps({"error": {"message": message}}))
            self._send(int(e["status"]), body.encode(), headers=headers)
            return
        if fault == "malformed" and not req.get("stream"):
            self._send(200, b'{"choices": [{"message": {"content": "unterminated')
            return
        if fault == "html":
            page = b"<html><head><title>502 Bad Gateway</title></head><body>bad gateway</body></html>"
            self._send(int(e.get("status", 502)), page, ctype="text/html")
            return
        content = self.script.reply_text(e)
        finish = e.get("finish_reason", "stop")
        usage = usage_of(e, text, content)
        if self.cache and "usage" not in e and "cached_tokens" not in e:
            if anthropic:
                read, written = self.cache.anthropic(req)
                if read:
                    usage["prompt_tokens_details"] = {"cached_tokens": read}
                if written:
                    usage["cache_creation_input_tokens"] = written
            else:
                read = self.cache.openai(req)
                if read:
                    usage["prompt_tokens_details"] = {"cached_tokens": read}
        model = req.get("model", "mock")
        if req.get("stream"):
            self._stream(stream_events(anthropic, req, content, finish, usage, model, fault), e, fault)
            return
        if anthropic:
            stop = {"stop": "end_turn", "length": "max_tokens"}.get(finish, finish)
            blocks = [{"type": "text", "text": content}]
            if thinks(req):
                blocks.insert(0, {"type": "thinking", "thinking": THOUGHT, "signature": "c2lnbmF0dXJl"})
            payload = {"id": "msg_mock", "type": "message", "role": "assistant", "model": model,
                       "content": blocks, "stop_reason": stop, "usage": anthropic_usage(usage)}
        else:
            choices = [] if fault == "empty_choices" else [
                {"index": 0, "message": {"role": "assistant", "content": content},
                 "finish_reason": finish}]
            payload = {"id": "chatcmpl-mock", "object": "chat.completion", "model": model,
                       "choices": choices, "usage": usage}
        body = json.dumps(payload).encode()
        if fault == "stall_mid":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            time.sleep(float(e.get("seconds", 30)))
            self.close_connection = True
            return
        self._send(200, body)

    def _stream(self, events: list[bytes], e: dict, fault: str | None) -> None:
        """Server-sent events until the connection closes (no length), spread
        over stream_seconds; the stream faults cut or stall it halfway."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        gap = float(e.get("stream_seconds", 0)) / max(1, len(events) - 1)
        half = len(events) // 2
        for i, chunk in enumerate(events):
            if fault in ("stall_mid", "stream_cut") and i == half:
                if fault == "stall_mid":
                    time.sleep(float(e.get("seconds", 30)))
                return
            if fault == "malformed" and i == half:
                chunk = b'data: {"choices": [{"delta": {"content": "unterminated\n\n'
            try:
                self.wfile.write(chunk)
                self.wfile.flush()
            except OSError:
                return
            if gap and i < len(events) - 1:
                time.sleep(gap)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--log")
    ap.add_argument("--port-file")
    ap.add_argument("--reasoning-models", default=r"^(gpt-5|o[134])",
                    help="model names (a regex) refused max_tokens and temperature as OpenAI's reasoning models")
    ap.add_argument("--max-output", type=int, help="refuse an output limit above N tokens")
    ap.add_argument("--prompt-cache", action="store_true", help="keep a prompt cache as the providers do")
    ap.add_argument("--cache-min-tokens", type=int,
                    help="the least prefix the cache keeps, for every model (default: each model's documented one)")
    ap.add_argument("--no-thinking-models", default=r"^claude-3-(5|opus|haiku)",
                    help="Anthropic model names (a regex) that refuse extended thinking")
    ap.add_argument("--api-key", help="refuse a request without this key (401, as the provider words it)")
    args = ap.parse_args()
    Handler.api_key = args.api_key
    Handler.no_thinking = re.compile(args.no_thinking_models)
    if args.prompt_cache:
        Handler.cache = PromptCache(args.cache_min_tokens)
    Handler.script = Script(args.script)
    Handler.reasoning = re.compile(args.reasoning_models)
    Handler.max_output = args.max_output
    Handler.log_path = args.log
    # A listen backlog for bursts of concurrent clients: with the default of 5,
    # connections beyond it wait for a SYN retry (1 s), which hid a client
    # that ignored its concurrency limit.
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(f"{port}\n")
        os.replace(args.port_file + ".tmp", args.port_file)
    print(port, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
