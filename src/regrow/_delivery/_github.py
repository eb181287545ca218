"""The GitHub REST API, for the few calls delivery makes: pull requests, issues, comments.

httpx does the HTTP; a ``transport`` may be given (tests use a loopback server instead). The
token is read from the environment variable the configuration names, never from a file. Errors
say what GitHub said: a refused token (401), a rate limit (403/429; waited out when it resets
within ``max_wait`` seconds), a validation error (422), a server error (5xx, retried with backoff).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from .._errors import RegrowError

DEFAULT_API = "https://api.github.com"


class GitHubError(RegrowError):
    """A GitHub API call failed; ``status`` is the HTTP status (0 when none came back)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class RateLimited(GitHubError):
    """GitHub's rate limit is spent until ``reset`` (seconds since the epoch)."""

    def __init__(self, message: str, reset: float) -> None:
        super().__init__(message, 403)
        self.reset = reset


class Unprocessable(GitHubError):
    """GitHub refused the request's content (422); ``errors`` is what it listed."""

    def __init__(self, message: str, errors: list[Any]) -> None:
        super().__init__(message, 422)
        self.errors = errors


@dataclasses.dataclass(frozen=True)
class GitHubConfig:
    """Where delivery talks to: the repository ``owner/name``, the API's URL, and the name of the
    environment variable that holds the token."""

    repo: str
    api_url: str = DEFAULT_API
    token_env: str = "GITHUB_TOKEN"

    def token(self) -> str:
        token = os.environ.get(self.token_env, "").strip()
        if not token:
            raise GitHubError(f"no GitHub token: the environment variable {self.token_env} is not set")
        return token


class GitHub:
    """A client for one repository."""

    def __init__(self, config: GitHubConfig, *, transport: Any = None, retries: int = 3, backoff: float = 0.5,
                 max_wait: float = 60.0, sleep: Callable[[float], None] = time.sleep) -> None:
        import httpx

        if config.repo.count("/") != 1 or not all(config.repo.split("/")):
            raise GitHubError(f"the repository must be owner/name, not {config.repo!r}")
        self.config = config
        self.retries, self.backoff, self.max_wait, self.sleep = retries, backoff, max_wait, sleep
        self._client = httpx.Client(
            base_url=config.api_url.rstrip("/"), transport=transport, timeout=30.0, follow_redirects=True,
            headers={"Authorization": f"Bearer {config.token()}", "Accept": "application/vnd.github+json",
                     "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "regrow"})

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> GitHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the calls --------------------------------------------------------------------------
    def pulls(self, head: str, state: str = "all") -> list[dict[str, Any]]:
        """Pull requests from the branch ``head`` of this repository."""
        owner = self.config.repo.split("/")[0]
        return list(self._pages(f"/repos/{self.config.repo}/pulls", {"head": f"{owner}:{head}", "state": state}))

    def create_pull(self, head: str, base: str, title: str, body: str, draft: bool = True) -> dict[str, Any]:
        return self._json("POST", f"/repos/{self.config.repo}/pulls",
                          {"head": head, "base": base, "title": title, "body": body, "draft": draft})

    def open_issues(self) -> Iterator[dict[str, Any]]:
        """Every open issue (pull requests left out), page by page."""
        for issue in self._pages(f"/repos/{self.config.repo}/issues", {"state": "open"}):
            if "pull_request" not in issue:
                yield issue

    def create_issue(self, title: str, body: str) -> dict[str, Any]:
        return self._json("POST", f"/repos/{self.config.repo}/issues", {"title": title, "body": body})

    def comment(self, number: int, body: str) -> dict[str, Any]:
        return self._json("POST", f"/repos/{self.config.repo}/issues/{number}/comments", {"body": body})

    # -- HTTP -------------------------------------------------------------------------------
    def _pages(self, path: str, params: dict[str, str]) -> Iterator[dict[str, Any]]:
        url: str | None = path
        query: dict[str, str] | None = {**params, "per_page": "100"}
        while url is not None:
            response = self._send("GET", url, params=query)
            items = response.json()
            if not isinstance(items, list):
                raise GitHubError(f"GET {path} did not return a list", response.status_code)
            yield from (item for item in items if isinstance(item, dict))
            url = response.links.get("next", {}).get("url")
            query = None  # the next link carries the query

    def _json(self, method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        data = self._send(method, path, json=body).json()
        if not isinstance(data, dict):
            raise GitHubError(f"{method} {path} did not return an object")
        return data

    def _send(self, method: str, url: str, **kwargs: Any) -> Any:
        import httpx

        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._client.request(method, url, **kwargs)
            except httpx.TransportError as exc:
                if attempt >= self.retries:
                    raise GitHubError(f"{method} {url}: GitHub could not be reached ({exc})") from exc
                self.sleep(self.backoff * 2 ** (attempt - 1))
                continue
            if response.status_code < 400:
                return response
            wait = self._wait(response, attempt)
            if wait is None:
                raise _error(method, url, response)
            self.sleep(wait)

    def _wait(self, response: Any, attempt: int) -> float | None:
        """How long to wait before trying again, or ``None`` to give up with the error."""
        status = response.status_code
        if attempt >= self.retries + 1:
            return None
        if status >= 500 and attempt < self.retries:
            return float(self.backoff * 2 ** (attempt - 1))
        limited = _limit_reset(response)
        if limited is not None:
            wait = max(0.0, limited - time.time()) + 0.1
            return wait if wait <= self.max_wait else None
        return None


def _limit_reset(response: Any) -> float | None:
    """When a 403/429 is a rate limit: the time it resets (from Retry-After or X-RateLimit-Reset)."""
    if response.status_code not in (403, 429):
        return None
    headers = response.headers
    retry_after = headers.get("retry-after")
    if retry_after is not None and retry_after.strip().isdigit():
        return time.time() + int(retry_after)
    if headers.get("x-ratelimit-remaining") == "0" and (headers.get("x-ratelimit-reset") or "").isdigit():
        return float(headers["x-ratelimit-reset"])
    return None


def _error(method: str, url: str, response: Any) -> GitHubError:
    status = response.status_code
    try:
        data = response.json()
    except ValueError:
        data = {}
    said = data.get("message", response.text[:200]) if isinstance(data, dict) else response.text[:200]
    where = f"{method} {url.split('?', maxsplit=1)[0]}"
    if status == 401:
        return GitHubError(f"{where}: GitHub refused the token (401: {said})", status)
    reset = _limit_reset(response)
    if reset is not None:
        when = time.strftime("%H:%M:%S UTC", time.gmtime(reset))
        return RateLimited(f"{where}: GitHub's rate limit is spent until {when} ({status}: {said})", reset)
    if status == 422:
        errors = data.get("errors", []) if isinstance(data, dict) else []
        detail = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors)
        return Unprocessable(f"{where}: GitHub refused it (422: {said}{': ' + detail if detail else ''})",
                             errors if isinstance(errors, list) else [])
    return GitHubError(f"{where}: GitHub answered {status}: {said}", status)
