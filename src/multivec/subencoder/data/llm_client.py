"""Cached OpenAI-compatible chat client and the App. A.1 segmentation prompt (Chen et al. 2023).

§3.3 step 1 / App. A.1: gpt-3.5-turbo segments a seed share of the sentences into propositions
with a one-shot prompt (``SEGMENTATION_PROMPT``, verbatim from the paper; the input sentence
replaces ``(input sentence)``). Every reply is cached on disk under the sha256 of
(model, prompt), so a rerun costs nothing and ``offline=True`` replays the cache without any
network access. HTTP 429 and 5xx replies and timeouts are retried with exponential back-off;
anything else fails with the URL and status. Replies are parsed into numbered claims;
malformed or empty generations are counted (``ClientStats``) and dropped, as the paper does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

# App. A.1, verbatim (the paper's typographic apostrophe included).
SEGMENTATION_PROMPT = (
    "Given the following sentence, tell me what claims they are making. Please split the sentence as much as "
    "possible, but do not include information not in the sentence.\n\n"
    "Sentence: The Andy Warhol Museum in his hometown, Pittsburgh, Pennsylvania, contains an extensive permanent "
    "collection of art.\n\n"
    "Claims:\n\n"
    "1. The Andy Warhol Museum is in Pittsburgh.\n"
    "2. Andy Warhol\u2019s hometown is in Pittsburgh.\n"
    "3. Pittsburgh is in Pennsylvania.\n"
    "4. The Andy Warhol Museum contains an extensive permanent collection of art.\n\n"
    "Sentence: {sentence}\n\n"
    "Claims:\n"
)

API_KEY_ENV = "OPENAI_API_KEY"


class LLMError(RuntimeError):
    """The chat API could not give a reply (after retries), or offline replay has none cached."""


def segmentation_prompt(sentence: str) -> str:
    return SEGMENTATION_PROMPT.format(sentence=sentence.strip())


_CLAIM = re.compile(r"^\s*(\d+)[.)]\s*(.+?)\s*$")


def parse_claims(text: str | None) -> list[str] | None:
    """The numbered claims of a reply (``1. ...``), or ``None`` when the reply is malformed or
    empty: no numbered line, or numbers that do not run 1, 2, 3, ..."""
    if not text or not text.strip():
        return None
    claims, numbers = [], []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _CLAIM.match(line)
        if match is None:
            if claims:  # trailing chatter after the list ends it
                break
            continue
        numbers.append(int(match.group(1)))
        claims.append(match.group(2))
    if not claims or numbers != list(range(1, len(claims) + 1)):
        return None
    return claims


@dataclass
class ClientStats:
    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    malformed: int = 0
    empty: int = 0
    missing_offline: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class ChatClient:
    """A chat-completions client with an on-disk cache.

    ``base_url`` is the API root (``https://api.openai.com/v1`` or any compatible server);
    the key comes from ``api_key`` or ``$OPENAI_API_KEY``. ``offline=True`` never opens a
    connection: a prompt not in the cache raises ``LLMError``.
    """

    base_url: str
    model: str
    cache_dir: str | os.PathLike
    api_key: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 5
    backoff_s: float = 1.0
    temperature: float = 0.0
    max_tokens: int = 512
    offline: bool = False
    stats: ClientStats = field(default_factory=ClientStats)

    def cache_path(self, prompt: str) -> Path:
        key = hashlib.sha256(json.dumps([self.model, prompt], ensure_ascii=False).encode("utf-8")).hexdigest()
        return Path(self.cache_dir) / key[:2] / f"{key}.json"

    def complete(self, prompt: str) -> str:
        """The reply's text for one user prompt, from the cache or the API."""
        path = self.cache_path(prompt)
        if path.is_file():
            self.stats.cache_hits += 1
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)["reply"]
        if self.offline:
            self.stats.missing_offline += 1
            raise LLMError(f"offline replay: no cached reply for model {self.model!r} in {self.cache_dir} "
                           f"(cache file {path.name}); run once with the API reachable or offline: false")
        reply = self._request(prompt)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump({"model": self.model, "prompt": prompt, "reply": reply}, handle, ensure_ascii=False)
        os.replace(tmp, path)
        return reply

    def _request(self, prompt: str) -> str:
        url = self.base_url.rstrip("/") + "/chat/completions"
        body = json.dumps({"model": self.model, "messages": [{"role": "user", "content": prompt}],
                           "temperature": self.temperature, "max_tokens": self.max_tokens}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        key = self.api_key or os.environ.get(API_KEY_ENV)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        last = "no attempt"
        for attempt in range(self.max_retries + 1):
            if attempt:
                self.stats.retries += 1
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            self.stats.requests += 1
            request = urllib.request.Request(url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    payload = response.read().decode("utf-8")
            except urllib.error.HTTPError as err:
                last = f"HTTP {err.code}"
                if err.code == 429 or err.code >= 500:
                    continue
                raise LLMError(f"{url}: HTTP {err.code} {err.reason}") from None
            except (TimeoutError, urllib.error.URLError) as err:
                last = f"timeout/connection error ({getattr(err, 'reason', err)})"
                continue
            try:
                return json.loads(payload)["choices"][0]["message"]["content"] or ""
            except (json.JSONDecodeError, KeyError, IndexError, TypeError):
                raise LLMError(f"{url}: reply is not a chat completion: {payload[:200]!r}") from None
        raise LLMError(f"{url}: no reply after {self.max_retries + 1} attempts (last: {last})")

    def segment(self, sentence: str) -> list[str] | None:
        """App. A.1 claims for one sentence, or ``None`` for a malformed or empty generation
        (counted in ``stats``)."""
        reply = self.complete(segmentation_prompt(sentence))
        claims = parse_claims(reply)
        if claims is None:
            if reply.strip():
                self.stats.malformed += 1
            else:
                self.stats.empty += 1
        return claims


def client_from_config(settings: dict) -> ChatClient:
    """A client from the ``subencoder.llm`` config block (base_url, model, cache_dir, offline, ...)."""
    for key in ("base_url", "model", "cache_dir"):
        if not settings.get(key):
            raise ValueError(f"config subencoder.llm.{key} is required for the LLM segmenter")
    return ChatClient(base_url=settings["base_url"], model=settings["model"], cache_dir=settings["cache_dir"],
                      timeout_s=float(settings.get("timeout_s", 60)), max_retries=int(settings.get("max_retries", 5)),
                      offline=bool(settings.get("offline", False)))
