"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for the judge tests.

Started in a thread by the tests; every request is recorded.  Faults are
injected from a queue (``server.faults``) or per prompt (``server.prompt_faults``):

``429`` / ``500`` / ``503`` / ``400`` / ``401``
    that HTTP status (``("429", seconds)`` adds a ``Retry-After`` header);
``"malformed"``
    status 200 with a body that is not JSON;
``"nocontent"``
    valid JSON without ``choices``;
``"truncated"``
    a body cut off before its ``Content-Length``;
``("slow", seconds)``
    the right answer after a delay;
``("hold", event)``
    wait (at most 20 s) for ``event``, then answer 503;
``("redirect", status, url)``
    that 3xx status with ``Location: url``;
``("trickle", seconds)``
    the right answer, one byte every ``seconds`` (status line and headers too);
``("big", nbytes, with_length)``
    status 200 and ``nbytes`` of body, with or without a ``Content-Length``
    (without one the connection is closed after the body);
``"echo_auth"``
    status 401 whose body echoes the request's ``Authorization`` header.

``usage`` is the ``usage`` object of every answer (default OpenAI-shaped, one prompt and one
completion token); set it to another object (an Anthropic shape), to ``None`` to send none, or to a
callable ``usage(prompt, body)``.

``in_flight`` counts the requests being handled; a request leaves it *before*
its reply is written, so a client that sends its next request as soon as it
reads a reply never sees more requests in flight than it has workers.
``rendezvous = n`` makes the first requests wait (at most 20 s) until ``n``
are in flight at once, so a concurrency test does not depend on timing.

Every handler's wait is bounded, so the server always stops by itself.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional


def default_answer(prompt: str, body: Dict[str, Any]) -> str:
    return "answer to: " + prompt


class ChatServer:
    def __init__(self, answer: Callable[[str, Dict[str, Any]], str] = default_answer) -> None:
        self.answer = answer
        self.usage: Any = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        self.faults: List[Any] = []
        self.prompt_faults: Dict[str, List[Any]] = {}
        self.requests: List[Dict[str, Any]] = []
        self.completed: List[str] = []  # prompts answered with 200 + content
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.hold_after: Optional[int] = None  # answer this many, then hold every later request
        self.release = threading.Event()
        self.held = 0
        self.rendezvous: Optional[int] = None  # wait until this many requests are in flight at once
        self.met = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def handle(self) -> None:
                try:
                    super().handle()
                except (ConnectionResetError, BrokenPipeError):
                    pass  # the client hung up (a deadline, a size cap): nothing to report

            def _leave(self) -> None:
                """Leave ``in_flight`` once, before the reply goes out (see the module docstring)."""
                if getattr(self, "_counted", False):
                    self._counted = False
                    with server.lock:
                        server.in_flight -= 1

            def _send(self, status: int, payload: bytes, headers: Optional[Dict[str, str]] = None) -> None:
                self._leave()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length).decode("utf-8"))
                prompt = body["messages"][-1]["content"]
                with server.lock:
                    server.requests.append(
                        {
                            "path": self.path,
                            "body": body,
                            "prompt": prompt,
                            "auth": self.headers.get("Authorization"),
                        }
                    )
                    fault = None
                    pf = server.prompt_faults.get(prompt)
                    if pf:
                        fault = pf.pop(0)
                    elif server.faults:
                        fault = server.faults.pop(0)
                    elif server.hold_after is not None and len(server.completed) >= server.hold_after:
                        fault = ("hold", server.release)
                    server.in_flight += 1
                    self._counted = True
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    if server.rendezvous is not None and server.in_flight >= server.rendezvous:
                        server.met.set()
                    wait = server.rendezvous is not None and not server.met.is_set()
                if wait:
                    server.met.wait(20)
                try:
                    self._handle(fault, prompt, body)
                finally:
                    self._leave()

            def _handle(self, fault: Any, prompt: str, body: Dict[str, Any]) -> None:
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, b'{"error": "not found"}')
                    return
                kind = fault[0] if isinstance(fault, tuple) else fault
                if kind in ("429", "500", "503", "400", "401"):
                    headers = {"Retry-After": str(fault[1])} if isinstance(fault, tuple) else None
                    self._send(int(kind), json.dumps({"error": {"message": "injected " + kind}}).encode(), headers)
                    return
                if kind == "malformed":
                    self._send(200, b'{"choices": [ this is not json')
                    return
                if kind == "truncated":  # promise more bytes than are sent, then hang up
                    self._leave()
                    try:
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", "500")
                        self.end_headers()
                        self.wfile.write(b'{"choices": [')
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    self.close_connection = True
                    return
                if kind == "redirect":
                    self._send(int(fault[1]), b"{}", {"Location": fault[2]})
                    return
                if kind == "echo_auth":
                    echo = "unauthorized; you sent Authorization: " + str(self.headers.get("Authorization"))
                    self._send(401, json.dumps({"error": {"message": echo}}).encode())
                    return
                if kind == "big":
                    self._big(fault[1], fault[2])
                    return
                if kind == "trickle":
                    self._leave()
                    raw = self._reply_bytes(200, self._answer_payload(prompt, body))
                    try:
                        for i in range(len(raw)):
                            self.wfile.write(raw[i : i + 1])
                            self.wfile.flush()
                            time.sleep(fault[1])
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    self.close_connection = True
                    return
                if kind == "nocontent":
                    self._send(200, b'{"object": "chat.completion"}')
                    return
                if kind == "slow":
                    time.sleep(fault[1])
                if kind == "hold":
                    with server.lock:
                        server.held += 1
                    fault[1].wait(20)
                    self._send(503, b'{"error": "released"}')
                    return
                payload = self._answer_payload(prompt, body)
                with server.lock:
                    server.completed.append(prompt)
                self._send(200, payload)

            def _reply_bytes(self, status: int, payload: bytes) -> bytes:
                head = (
                    f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
                )
                return head.encode("ascii") + payload

            def _big(self, nbytes: int, with_length: bool) -> None:
                self._leave()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    if with_length:
                        self.send_header("Content-Length", str(nbytes))
                    else:
                        self.send_header("Connection", "close")
                    self.end_headers()
                    block = b" " * 65536
                    left = nbytes
                    while left > 0:
                        self.wfile.write(block[: min(left, len(block))])
                        left -= len(block)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

            def _answer_payload(self, prompt: str, body: Dict[str, Any]) -> bytes:
                answer = server.answer(prompt, body)
                payload = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", ""),
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer}}
                    ],
                }
                usage = server.usage(prompt, body) if callable(server.usage) else server.usage
                if usage is not None:
                    payload["usage"] = usage
                return json.dumps(payload).encode("utf-8")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> "ChatServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)

    def wait_for(self, predicate: Callable[["ChatServer"], bool], timeout: float = 20.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if predicate(self):
                    return True
            time.sleep(0.01)
        return False


class Sleeps:
    """A stand-in for ``time.sleep`` that records the requested waits."""

    def __init__(self):
        self.calls = []

    def __call__(self, secs):
        self.calls.append(secs)
