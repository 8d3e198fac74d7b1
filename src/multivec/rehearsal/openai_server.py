"""A deterministic OpenAI-compatible chat server on 127.0.0.1 for the rehearsal's LLM client.

It implements ``POST /v1/chat/completions`` (the one endpoint ``multivec.subencoder.data.llm_client.ChatClient``
calls) with the Python standard library, and answers the two prompts the pipeline sends:

- the App. A.1 segmentation prompt (``SEGMENTATION_PROMPT``): the sentence after its last ``Sentence:``
  is split at commas, semicolons and " and " into claims, answered as ``1. ...`` lines as GPT-3.5 does
  (``parse_claims`` reads them); a sentence with nothing to split is one claim;
- the C-STS word prompt (``multivec.subencoder.evaluation.csts.WORD_PROMPT``, recognised by its ``Condition:`` line):
  the sentence's first two words of four letters or more, comma-separated.

Replies depend only on the prompt. ``GET /v1/models`` lists the requested model names; anything else is
404, a body that is not a chat request 400 (with the reason). ``python -m multivec.rehearsal.openai_server
--port N`` serves until killed, printing ``listening on http://127.0.0.1:N/v1`` once it accepts requests;
``serve_in_thread(port)`` does the same inside a test.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOST = "127.0.0.1"
DEFAULT_PORT = 18721  # config/rehearsal.yaml: subencoder.llm.base_url
_SPLIT = re.compile(r",\s+(?:and\s+)?|;\s+|\s+and\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")


def segmentation_reply(sentence: str) -> str:
    """Numbered claims of ``sentence``: its parts between commas, semicolons and " and "."""
    parts = [p.strip(" .") for p in _SPLIT.split(sentence.strip()) if len(p.split()) >= 2]
    claims = parts or [sentence.strip(" .")]
    return "\n".join(f"{i}. {claim}." for i, claim in enumerate(claims, start=1))


def reply_for(prompt: str) -> str:
    """The deterministic reply to one user prompt (module docstring)."""
    if "\nCondition:" in prompt:
        sentence = prompt.split("Sentence:", 1)[1].split("\nCondition:", 1)[0]
        return ", ".join(_WORD.findall(sentence)[:2])
    if "Sentence:" not in prompt:
        return ""
    sentence = prompt.rsplit("Sentence:", 1)[1].split("\n\nClaims:", 1)[0]
    return segmentation_reply(sentence)


class _Handler(BaseHTTPRequestHandler):
    server_version = "multivec-rehearsal-openai/1"

    def log_message(self, format, *args):  # quiet: a rehearsal sends thousands of requests
        pass

    def _send(self, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.rstrip("/") == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": "gpt-3.5-turbo", "object": "model"},
                                                        {"id": "gpt-4", "object": "model"}]})
        else:
            self._send(404, {"error": {"message": f"no route GET {self.path}"}})

    def do_POST(self):
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route POST {self.path}"}})
            return
        try:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode("utf-8"))
            prompt = next(m["content"] for m in reversed(request["messages"]) if m["role"] == "user")
            model = request["model"]
        except (ValueError, KeyError, TypeError, StopIteration) as err:
            self._send(400, {"error": {"message": f"not a chat completion request: {err!r}"}})
            return
        content = reply_for(prompt)
        self._send(200, {"id": "chatcmpl-rehearsal", "object": "chat.completion", "model": model,
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": content}}],
                         "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(content.split()),
                                   "total_tokens": len(prompt.split()) + len(content.split())}})


def make_server(port: int = DEFAULT_PORT) -> ThreadingHTTPServer:
    """A bound server on 127.0.0.1:``port`` (0: any free port); ``server.server_address[1]`` is the port."""
    return ThreadingHTTPServer((HOST, port), _Handler)


def serve_in_thread(port: int = DEFAULT_PORT) -> ThreadingHTTPServer:
    """Start a server in a daemon thread; stop it with ``server.shutdown(); server.server_close()``."""
    server = make_server(port)
    threading.Thread(target=server.serve_forever, name="rehearsal-openai", daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m multivec.rehearsal.openai_server",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port on {HOST} (default {DEFAULT_PORT})")
    args = parser.parse_args(argv)
    server = make_server(args.port)
    print(f"listening on http://{HOST}:{server.server_address[1]}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
