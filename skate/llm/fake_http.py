"""The fake server's HTTP side (:mod:`skate.llm.fake_server`, whose docstring says how it
answers): its listener, and the request handler that reads each request (chat completions,
Anthropic's Messages API, Gemini's ``generateContent``, embeddings, the model list), admits it (the
key, the model), counts it and writes the reply in its wire format, what a fake model plays asked
of the server (:meth:`~skate.llm.fake_server.FakeLLMServer.play`: a :class:`Played`, or a
:class:`Failure` to send)."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from skate.embedders import HashingEmbedder
from skate.llm.fake_wire import (
    GEMINI_PATH,
    Thought,
    from_anthropic,
    from_gemini,
    openai_refusal,
    to_anthropic,
    to_gemini,
)


@dataclass
class Failure:
    """A reply that is no completion: its status, body and headers."""

    status: int
    body: bytes
    headers: dict[str, str] | None = None


@dataclass
class Played:
    """What a fake model wrote for one request, before a wire format renders it."""

    thoughts: list[Thought]  # per choice: its content, and its thinking where returned apart
    seed: int
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int  # what the model wrote, thinking included
    counted_thinking: int  # of those, the thinking a server with a reasoning parser counts apart (0: none)
    logprobs: list[Any] | None
    stop_met: list[str | None]  # per choice, the stop sequence it ended at (None: it did not)


class _Listener(ThreadingHTTPServer):
    # The standard library listens with a backlog of 5: with dozens of connections opened at once
    # (64 requests in flight), those beyond it wait for the client's SYN to be sent again (a second
    # or more), a stall no real provider's listener causes.
    request_queue_size = 512
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # a connection cut by stop() (a killed server) or by the client: nothing to report
        super().handle_error(request, client_address)


def handler_for(server: Any) -> type[BaseHTTPRequestHandler]:
    """The request handler class of ``server`` (a :class:`~skate.llm.fake_server.FakeLLMServer`:
    its models, faults, options and counts)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def setup(self) -> None:
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with server._lock:
                server._connections.add(self.connection)

        def finish(self) -> None:
            with server._lock:
                server._connections.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _authorized(self, given: str | None = None) -> bool:
            """False (after answering 401) when the server wants a key this request lacks
            (``given``: the key a wire format sends in a header of its own, else the bearer token)."""
            if (
                server.api_key is None
                or self.headers.get("Authorization", "") == f"Bearer {server.api_key}"
                or (given is not None and given == server.api_key)
            ):
                return True
            with server._lock:
                server.stats.unauthorized += 1
            self._send(
                401,
                json.dumps(
                    {
                        "error": {
                            "message": "Incorrect API key provided.",
                            "type": "invalid_request_error",
                            "param": None,
                            "code": "invalid_api_key",
                        }
                    }
                ).encode(),
            )
            return False

        def _admitted(self, name: str) -> bool:
            """False (after answering 401 or 404) when the key is wrong or the model unknown."""
            if not self._authorized():
                return False
            if server.serves(name):
                return True
            with server._lock:
                server.stats.unknown_model += 1
            self._send(
                404,
                json.dumps(
                    {
                        "error": {
                            "message": f"The model `{name}` does not exist or you do not have access to it.",
                            "type": "invalid_request_error",
                            "param": "model",
                            "code": "model_not_found",
                        }
                    }
                ).encode(),
            )
            return False

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                with server._lock:
                    server.stats.model_lists += 1
                if not self._authorized():
                    return
                data = [
                    {"id": m, "object": "model", "created": 0, "owned_by": "skate-fake"}
                    for m in server.brain.models
                    if m != "*"
                ]
                self._send(200, json.dumps({"object": "list", "data": data}).encode())
            else:
                self._send(404, b'{"error": {"message": "not found"}}')

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            try:
                body = json.loads(self.rfile.read(length))
            except ValueError:
                self._send(400, b'{"error": {"message": "body is not JSON"}}')
                return
            if self.path.rstrip("/") == "/v1/embeddings":
                self._embeddings(body)
                return
            if self.path.rstrip("/").endswith("/messages"):  # Anthropic's Messages API
                self._anthropic(body)
                return
            gemini = GEMINI_PATH.match(self.path.split("?", 1)[0])
            if gemini is not None:
                self._gemini(gemini.group(1), body)
                return
            if self.path.rstrip("/") != "/v1/chat/completions":
                with server._lock:
                    server.stats.not_found += 1
                self._send(404, b'{"error": {"message": "unknown path"}}')
                return
            name = str(body.get("model", ""))
            with self._counted(name):
                if self._admitted(name):
                    self._complete(body, name)

        @contextlib.contextmanager
        def _counted(self, name: str) -> Any:
            """A completion request of any wire format: counted, and in flight for the block."""
            with server._lock:
                st = server.stats
                st.requests += 1
                st.in_flight += 1
                st.max_in_flight = max(st.max_in_flight, st.in_flight)
                st.by_model[name] = st.by_model.get(name, 0) + 1
            try:
                yield
            finally:
                with server._lock:
                    server.stats.in_flight -= 1

        def _embeddings(self, body: dict[str, Any]) -> None:
            """``POST /v1/embeddings``: a deterministic vector per input text, the hashing
            embedder's (``dimensions`` wide, 256 by default); the key, ``strict`` and the
            model's ``rate_limit``, ``server_error``/``down`` and ``malformed`` faults apply as
            for chat requests. Counted in ``stats.embedding_requests`` / ``embedded_texts``."""
            name = str(body.get("model", ""))
            texts = body.get("input")
            texts = [texts] if isinstance(texts, str) else texts
            with server._lock:
                server.stats.embedding_requests += 1
            if not self._admitted(name):
                return
            if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
                self._send(400, b'{"error": {"message": "input must be a string or a list of strings"}}')
                return
            fault = server._pick_fault(name)
            if fault:
                with server._lock:
                    server.stats.by_fault[fault] = server.stats.by_fault.get(fault, 0) + 1
            if fault == "rate_limit":
                self._send(429, b'{"error": {"message": "slow down"}}', {"Retry-After": f"{server.retry_after_s:g}"})
                return
            if fault in ("server_error", "down"):
                self._send(500, b'{"error": {"message": "internal error"}}')
                return
            if fault == "malformed":
                self._send(200, b'{"data": [ this is not json')
                return
            vectors = HashingEmbedder(dim=int(body.get("dimensions") or 256)).embed(texts)
            tokens = sum(len(t) for t in texts) // 4 + len(texts)
            with server._lock:
                server.stats.embedded_texts += len(texts)
            out = {
                "object": "list",
                "model": name,
                "data": [
                    {"object": "embedding", "index": i, "embedding": [round(float(x), 7) for x in v]}
                    for i, v in enumerate(vectors)
                ],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
            self._send(200, json.dumps(out).encode())

        def _complete(self, body: dict[str, Any], name: str) -> None:
            """``POST /v1/chat/completions``."""
            fault = self._begin(body, name)
            model = server.brain.model(name)
            if model.rules == "openai_reasoning":
                refused = openai_refusal(body)
                if refused is not None:
                    with server._lock:
                        server.stats.refused_param += 1
                    self._send(refused[0], json.dumps(refused[1]).encode())
                    return
            played = server.play(body, name, fault)
            if isinstance(played, Failure):
                self._send(played.status, played.body, played.headers)
                return
            style = model.thinking
            choices = []
            for i, t in enumerate(played.thoughts):
                message: dict[str, Any] = {"role": "assistant", "content": t.content}
                if t.thinking is not None and style in ("reasoning_content", "reasoning"):
                    message[style] = t.thinking
                choices.append(
                    {
                        "index": i,
                        "finish_reason": t.finish,
                        "message": message,
                        **({"logprobs": {"content": played.logprobs[i]}} if played.logprobs else {}),
                    }
                )
            completion = played.completion_tokens
            usage: dict[str, Any] = {
                "prompt_tokens": played.prompt_tokens,
                "prompt_tokens_details": {"cached_tokens": played.cached_tokens},
                "completion_tokens": completion,
                "total_tokens": played.prompt_tokens + completion,
            }
            if played.counted_thinking:
                usage["completion_tokens_details"] = {"reasoning_tokens": played.counted_thinking}
            out = {
                "id": f"fake-{played.seed}",
                "object": "chat.completion",
                "created": 0,
                "model": name,
                "choices": choices,
                "usage": usage,
            }
            try:
                self._send(200, json.dumps(out).encode())
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout) before the slow reply

        def _begin(self, body: dict[str, Any], name: str) -> str | None:
            """The request's fault, and the request logged."""
            fault = server._pick_fault(name)
            n, seed = int(body.get("n") or 1), body.get("seed")
            with server._lock:
                server.log.append(
                    {
                        "model": name,
                        "n": n,
                        "seed": seed,
                        "fault": fault,
                        "temperature": body.get("temperature"),
                        "max_tokens": body.get("max_tokens"),
                        "fields": sorted(body),
                        "body": {k: v for k, v in body.items() if k != "messages"},
                        "headers": {k.lower(): v for k, v in self.headers.items() if k.lower().startswith("x-")},
                    }
                )
                if fault:
                    server.stats.by_fault[fault] = server.stats.by_fault.get(fault, 0) + 1
            return fault

        def _anthropic(self, body: dict[str, Any]) -> None:
            """``POST /v1/messages``: Anthropic's Messages API, extended thinking included."""
            name = str(body.get("model", ""))
            with self._counted(name):
                with server._lock:
                    server.stats.anthropic += 1
                if not self._authorized(self.headers.get("x-api-key")):
                    return
                chat, refused = from_anthropic(body)
                fault = self._begin(chat, name)
                if refused is not None:
                    with server._lock:
                        server.stats.refused_param += 1
                    self._send(refused[0], json.dumps(refused[1]).encode())
                    return
                played = server.play(chat, name, fault, thinking_style="reasoning_content")
                if isinstance(played, Failure):
                    self._send(played.status, played.body, played.headers)
                    return
                t = played.thoughts[0]
                stop = played.stop_met[0]
                out = to_anthropic(name, t, played.prompt_tokens, stop)
                self._send(200, json.dumps(out).encode())

        def _gemini(self, name: str, body: dict[str, Any]) -> None:
            """``POST .../models/<name>:generateContent``: Gemini's API, thoughts included."""
            with self._counted(name):
                with server._lock:
                    server.stats.gemini += 1
                if not self._authorized(self.headers.get("x-goog-api-key")):
                    return
                chat = from_gemini(name, body)
                fault = self._begin(chat, name)
                played = server.play(chat, name, fault, thinking_style="reasoning")
                if isinstance(played, Failure):
                    self._send(played.status, played.body, played.headers)
                    return
                out = to_gemini(name, played.thoughts, played.prompt_tokens, bool(chat.get("include_thoughts")))
                self._send(200, json.dumps(out).encode())

    return Handler
