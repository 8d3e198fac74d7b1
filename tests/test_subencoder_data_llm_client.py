"""The cached chat client (subencoder/data/llm_client.py) against a fake OpenAI-compatible server on 127.0.0.1."""
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from multivec.subencoder.data.llm_client import ChatClient, LLMError, parse_claims, segmentation_prompt

# The papers' text lies beside the data mirror (<mirror>/../papers), as in this project's shared folder.
PAPER_PATH = Path(os.environ.get("MULTIVEC_DATA_MIRROR", "")).parent / "papers" / "subsentence_encoder_chen_2023.txt"


class FakeServer:
    """Answers /chat/completions from a script of (status, delay_s, body) entries, one per request."""

    def __init__(self, script):
        self.script, self.requests = list(script), []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, body, self.headers.get("Authorization")))
                status, delay, reply = outer.script.pop(0) if outer.script else (500, 0, "script exhausted")
                time.sleep(delay)
                payload = reply if isinstance(reply, str) else json.dumps(reply)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(payload.encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def completion(text):
    return {"choices": [{"message": {"role": "assistant", "content": text}}]}


@pytest.fixture
def server_factory():
    servers = []

    def make(script):
        servers.append(FakeServer(script))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def client(server, tmp_path, **kw):
    return ChatClient(base_url=server.url, model="gpt-3.5-turbo", cache_dir=tmp_path / "cache", api_key="k",
                      backoff_s=0.01, **kw)


def test_reply_is_cached_by_model_and_prompt_and_replayed_offline(server_factory, tmp_path):
    server = server_factory([(200, 0, completion("1. A is B.\n2. B is C."))])
    c = client(server, tmp_path)
    assert c.segment("A is B, which is C.") == ["A is B.", "B is C."]
    path, body, auth = server.requests[0]
    assert path == "/v1/chat/completions" and auth == "Bearer k"
    assert body["model"] == "gpt-3.5-turbo" and body["messages"][0]["content"] == segmentation_prompt("A is B, which is C.")
    assert c.segment("A is B, which is C.") == ["A is B.", "B is C."]  # from the cache: no second request
    assert len(server.requests) == 1 and c.stats.cache_hits == 1
    offline = ChatClient(base_url="http://127.0.0.1:9/none", model="gpt-3.5-turbo", cache_dir=tmp_path / "cache",
                         offline=True)
    assert offline.segment("A is B, which is C.") == ["A is B.", "B is C."]
    with pytest.raises(LLMError, match="offline replay: no cached reply"):
        offline.segment("Another sentence.")
    assert c.cache_path("x") != ChatClient(base_url="", model="gpt-4", cache_dir=tmp_path / "cache").cache_path("x")


def test_429_is_retried(server_factory, tmp_path):
    server = server_factory([(429, 0, {"error": "rate limited"}), (429, 0, {"error": "rate limited"}),
                             (200, 0, completion("1. It rains."))])
    c = client(server, tmp_path)
    assert c.segment("It rains.") == ["It rains."]
    assert len(server.requests) == 3 and c.stats.retries == 2


def test_timeout_is_retried_then_gives_up(server_factory, tmp_path):
    server = server_factory([(200, 1.0, completion("1. late")), (200, 0, completion("1. On time."))])
    c = client(server, tmp_path, timeout_s=0.3)
    assert c.segment("On time.") == ["On time."] and c.stats.retries == 1
    server = server_factory([(200, 1.0, completion("1. late"))] * 2)
    c = client(server, tmp_path / "other", timeout_s=0.2, max_retries=1)
    with pytest.raises(LLMError, match="no reply after 2 attempts .*timeout"):
        c.complete("slow")


def test_malformed_and_empty_generations_are_counted_and_dropped(server_factory, tmp_path):
    server = server_factory([(200, 0, completion("Sure! Here are some claims but no list.")),
                             (200, 0, completion("")),
                             (200, 0, completion("2. starts at two\n3. and goes on"))])
    c = client(server, tmp_path)
    assert c.segment("one.") is None and c.segment("two.") is None and c.segment("three.") is None
    assert c.stats.malformed == 2 and c.stats.empty == 1


def test_a_reply_that_is_not_a_chat_completion_or_a_client_error_fails_clearly(server_factory, tmp_path):
    server = server_factory([(200, 0, "<html>not json</html>"), (401, 0, {"error": "bad key"})])
    c = client(server, tmp_path)
    with pytest.raises(LLMError, match="not a chat completion"):
        c.complete("x")
    with pytest.raises(LLMError, match="HTTP 401"):
        c.complete("y")
    assert not list((tmp_path / "cache").rglob("*.json"))  # failures are never cached


def test_parse_claims():
    assert parse_claims("Claims:\n\n1. A.\n2) B.\n\nThat is all.") == ["A.", "B."]
    assert parse_claims("   ") is None and parse_claims(None) is None and parse_claims("1. A\n3. C") is None


def test_prompt_is_the_papers_appendix_a1_verbatim():
    if not PAPER_PATH.is_file():
        pytest.skip(f"paper text not found at {PAPER_PATH}")
    with open(PAPER_PATH, encoding="utf-8") as handle:
        paper = handle.read()
    start = paper.index("Given the following sentence, tell me what claims")
    end = paper.index("Sentence: (*input sentence*)")
    assert paper[start:end] == segmentation_prompt("X").split("Sentence: X")[0]
