"""The load of the live-service benchmark (benchmarks/live.py): a paced, bounded stream of GET requests.

``schedule(n, ...)`` is the request list, the same for every app in a run: healthy quantities first (a
warm-up), then a mix in which every ``bad_every``-th request is a quantity typed with "pcs" — each one
a distinct input (``'1000 pcs'``, ``'1001PCS'``, ...) of the one injected bug. ``run(urls, requests,
rate, threads)`` sends request ``i`` at ``start + i / rate`` to each URL in turn (the app without regrow
and the app with it, served at the same time) from a pool of threads, a new loopback connection each
(after an application error a server may close a kept-alive one), and records when it was sent, how
long it took and whether the answer was the right one.
"""

from __future__ import annotations

import dataclasses
import statistics
import threading
import time

import httpx


@dataclasses.dataclass(frozen=True)
class Request:
    text: str  # the quantity as typed
    expected: int  # what a correct parse_qty answers
    bad: bool  # whether the injected bug makes it raise


@dataclasses.dataclass
class Sample:
    sent: float  # wall clock (time.time), comparable with the server's event log
    late: float  # seconds after its scheduled time that it was sent
    latency: float  # seconds from sending to the whole answer
    status: int  # HTTP status (0: no answer)
    right: bool  # a 200 with the expected number
    header: str  # X-Regrow, if any


def schedule(count: int, warmup: int, bad_every: int) -> list[Request]:
    """``count`` requests: ``warmup`` healthy ones, then every ``bad_every``-th one a distinct bad input."""
    requests = []
    for i in range(count):
        n = 1000 + i
        if i >= warmup and (i - warmup) % bad_every == 0:
            requests.append(Request(f"{n} pcs" if i % 2 else f"{n}PCS", n, True))
        elif i % 3 == 0:
            requests.append(Request(f"{n:,}", n, False))
        elif i % 3 == 1:
            requests.append(Request(f" {n} ", n, False))
        else:
            requests.append(Request(str(n), n, False))
    return requests


def run(urls: list[str], requests: list[Request], rate: float, threads: int) -> list[list[Sample]]:
    """Send ``requests`` to each of ``urls`` at ``rate`` per second per URL, interleaved (request ``i`` goes
    to each URL in turn, ``1 / (rate * len(urls))`` apart, the first one alternating, so drift in the
    machine's load hits them alike), from ``threads`` threads; a list of samples per URL, in order."""
    width = len(urls)
    samples: list[list[Sample | None]] = [[None] * len(requests) for _ in urls]
    counter = iter(range(len(requests) * width))
    lock = threading.Lock()
    start = time.monotonic() + 0.2

    def worker() -> None:
        with httpx.Client(timeout=30, limits=httpx.Limits(max_keepalive_connections=0)) as client:
            while True:
                with lock:
                    job = next(counter, None)
                if job is None:
                    return
                i, turn = divmod(job, width)
                which = (turn + i) % width  # who goes first alternates: neither app always follows the other
                due = start + job / (rate * width)
                pause = due - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                samples[which][i] = _one(client, urls[which], requests[i], due)

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return [[s for s in per_url if s is not None] for per_url in samples]


def _one(client: httpx.Client, url: str, request: Request, due: float) -> Sample:
    sent, began = time.time(), time.monotonic()
    try:
        response = client.get(url + "/qty", params={"text": request.text})
        status, body, header = response.status_code, response.text, response.headers.get("x-regrow", "")
    except httpx.HTTPError:
        status, body, header = 0, "", ""
    latency = time.monotonic() - began
    return Sample(sent, max(0.0, began - due), latency, status, status == 200 and body == str(request.expected),
                  header)


def summary(samples: list[Sample]) -> dict[str, float | int]:
    """Count, p50/p99 latency (ms), error rate (not a 200) and wrong-answer rate (not the right number)."""
    if not samples:
        return {"requests": 0}
    latencies = sorted(s.latency for s in samples)
    return {
        "requests": len(samples),
        "p50_ms": round(1000 * statistics.median(latencies), 2),
        "p99_ms": round(1000 * _quantile(latencies, 0.99), 2),
        "error_rate": round(sum(s.status != 200 for s in samples) / len(samples), 4),
        "wrong_rate": round(sum(not s.right for s in samples) / len(samples), 4),
        "late_p99_ms": round(1000 * _quantile(sorted(s.late for s in samples), 0.99), 2),
    }


def _quantile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
