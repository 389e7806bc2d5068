#!/usr/bin/env python3
"""mockllm.py: a scripted mock LLM server (OpenAI and Anthropic protocols) for egg's tests.

Usage: mockllm.py --script FILE [--log FILE] [--port-file FILE]

It listens on 127.0.0.1 on an ephemeral port, prints the port on stdout,
and answers each request with the first unconsumed script entry whose
`match` strings all occur in the request (entries without `match` fit any
request). It records every request (path, headers, body) as one JSON line in
the log. The script is a JSON array or JSON lines; each entry is an object:

  reply: "text"            reply text (or reply_file: path relative to the script)
  wrap: "python"           put the reply in a ```python fenced block
  finish_reason: "stop"    or "length" (a reply cut off by the output limit)
  usage: {"prompt_tokens": N, "completion_tokens": N}
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

When nothing fits, it answers 500 "mock: no script entry fits this request".
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


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script: Script
    log_path: str | None
    log_lock = threading.Lock()

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
        if fault == "malformed":
            self._send(200, b'{"choices": [{"message": {"content": "unterminated')
            return
        if fault == "html":
            page = b"<html><head><title>502 Bad Gateway</title></head><body>bad gateway</body></html>"
            self._send(int(e.get("status", 502)), page, ctype="text/html")
            return
        content = self.script.reply_text(e)
        finish = e.get("finish_reason", "stop")
        usage = e.get("usage", {"prompt_tokens": max(1, len(text) // 4),
                                "completion_tokens": max(1, len(content) // 4)})
        model = req.get("model", "mock")
        if anthropic:
            stop = {"stop": "end_turn", "length": "max_tokens"}.get(finish, finish)
            payload = {"id": "msg_mock", "type": "message", "role": "assistant", "model": model,
                       "content": [{"type": "text", "text": content}], "stop_reason": stop,
                       "usage": {"input_tokens": usage["prompt_tokens"],
                                 "output_tokens": usage["completion_tokens"]}}
        else:
            choices = [] if fault == "empty_choices" else [
                {"index": 0, "message": {"role": "assistant", "content": content},
                 "finish_reason": finish}]
            payload = {"id": "chatcmpl-mock", "object": "chat.completion", "model": model,
                       "choices": choices, "usage": {**usage, "total_tokens": sum(usage.values())}}
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--log")
    ap.add_argument("--port-file")
    args = ap.parse_args()
    Handler.script = Script(args.script)
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
