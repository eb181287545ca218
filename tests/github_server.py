"""A loopback stand-in for the GitHub REST endpoints delivery uses, with GitHub's errors on demand.

Endpoints: ``GET/POST /repos/{o}/{r}/pulls`` (``head``/``state`` filters; 422 for a second pull
request from one branch), ``GET/POST /repos/{o}/{r}/issues`` (paginated with ``Link`` headers, pull
requests listed among issues as GitHub does), ``POST /repos/{o}/{r}/issues/{n}/comments``. A request
without the token gets 401. ``fail(...)`` queues an error for the next matching requests: 403 with
the rate-limit headers, 422, 5xx, anything.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclasses.dataclass
class Failure:
    method: str
    pattern: str
    status: int
    headers: dict[str, str]
    body: dict[str, Any]
    times: int


class GitHubServer:
    def __init__(self, repo: str = "acme/shop", token: str = "ghs_loopbacktoken", page_size: int = 30) -> None:
        self.repo, self.token, self.page_size = repo, token, page_size
        self.pulls: list[dict[str, Any]] = []
        self.issues: list[dict[str, Any]] = []  # issues and pull requests share numbers, as on GitHub
        self.comments: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str]] = []
        self.failures: list[Failure] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.handle(self, "GET")

            def do_POST(self) -> None:
                server.handle(self, "POST")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> GitHubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def fail(self, method: str, pattern: str, status: int, *, headers: dict[str, str] | None = None,
             message: str = "", times: int = 1, errors: list[Any] | None = None) -> None:
        body: dict[str, Any] = {"message": message or f"error {status}"}
        if errors is not None:
            body["errors"] = errors
        self.failures.append(Failure(method, pattern, status, headers or {}, body, times))

    def rate_limit(self, method: str, pattern: str, reset_in: float) -> None:
        reset = str(int(time.time() + reset_in) + 1)
        self.fail(method, pattern, 403, message="API rate limit exceeded",
                  headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset})

    def add_issue(self, title: str, body: str) -> dict[str, Any]:
        with self.lock:
            return self._new_issue({"title": title, "body": body})

    # -- the handler ------------------------------------------------------------------------
    def handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        url = urlsplit(request.path)
        length = int(request.headers.get("Content-Length") or 0)
        payload = json.loads(request.rfile.read(length) or b"{}") if method == "POST" else {}
        with self.lock:
            self.requests.append((method, request.path))
            status, body, headers = self._route(method, url.path, parse_qs(url.query), payload,
                                                request.headers.get("Authorization", ""))
        data = json.dumps(body).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            request.send_header(name, value)
        request.end_headers()
        request.wfile.write(data)

    def _route(self, method: str, path: str, query: dict[str, list[str]], payload: dict[str, Any],
               auth: str) -> tuple[int, Any, dict[str, str]]:
        if auth != f"Bearer {self.token}":
            return 401, {"message": "Bad credentials"}, {}
        for failure in self.failures:
            if failure.times > 0 and failure.method == method and re.search(failure.pattern, path):
                failure.times -= 1
                return failure.status, failure.body, failure.headers
        base = f"/repos/{self.repo}"
        if path == f"{base}/pulls":
            return self._pulls(method, query, payload)
        if path == f"{base}/issues":
            if method == "POST":
                return 201, self._new_issue(payload), {}
            return self._page([i for i in self.issues if i["state"] == "open"], query, path)
        found = re.fullmatch(rf"{base}/issues/(\d+)/comments", path)
        if found and method == "POST":
            comment = {"id": len(self.comments) + 1, "issue": int(found.group(1)), "body": payload["body"]}
            self.comments.append(comment)
            return 201, comment, {}
        return 404, {"message": "Not Found"}, {}

    def _pulls(self, method: str, query: dict[str, list[str]],
               payload: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        if method == "GET":
            head = query.get("head", [""])[0].split(":")[-1]
            state = query.get("state", ["open"])[0]
            return 200, [p for p in self.pulls if (not head or p["head"]["ref"] == head)
                         and (state == "all" or p["state"] == state)], {}
        if any(p["head"]["ref"] == payload["head"] and p["state"] == "open" for p in self.pulls):
            return 422, {"message": "Validation Failed", "errors": [
                {"resource": "PullRequest", "code": "custom",
                 "message": f"A pull request already exists for {self.repo.split('/')[0]}:{payload['head']}."}]}, {}
        issue = self._new_issue({"title": payload["title"], "body": payload["body"]}, pull=True)
        pull = {"number": issue["number"], "state": "open", "draft": bool(payload.get("draft")),
                "title": payload["title"], "body": payload["body"], "head": {"ref": payload["head"]},
                "base": {"ref": payload["base"]}, "html_url": f"https://github.test/{self.repo}/pull/{issue['number']}"}
        self.pulls.append(pull)
        return 201, pull, {}

    def _new_issue(self, payload: dict[str, Any], pull: bool = False) -> dict[str, Any]:
        number = len(self.issues) + 1
        issue: dict[str, Any] = {"number": number, "state": "open", "title": payload["title"],
                                 "body": payload.get("body", ""),
                                 "html_url": f"https://github.test/{self.repo}/issues/{number}"}
        if pull:
            issue["pull_request"] = {"url": f"{self.url}/repos/{self.repo}/pulls/{number}"}
        self.issues.append(issue)
        return issue

    def _page(self, items: list[dict[str, Any]], query: dict[str, list[str]],
              path: str) -> tuple[int, Any, dict[str, str]]:
        size = min(int(query.get("per_page", [str(self.page_size)])[0]), self.page_size)
        page = int(query.get("page", ["1"])[0])
        chunk = items[(page - 1) * size : page * size]
        headers = {}
        if page * size < len(items):
            headers["Link"] = f'<{self.url}{path}?state=open&per_page={size}&page={page + 1}>; rel="next"'
        return 200, chunk, headers
