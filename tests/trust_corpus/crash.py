"""Crash bugs: a Python operation raises on an edge input (an empty list, a zero, a missing key,
``None``, an empty string) the author did not think of.

Each can be fixed by one small edit — a guard widened, a comparison made inclusive, a sibling
method, the right variable checked, a dead line dropped — that keeps every result the original
returned. With no oracle regrow may fix these, but only with such a fix: ``returning`` lists
calls where the original returns, chosen so that a fix which merely silences the crash
(``sum(xs) + len(xs)`` for ``sum(xs) / len(xs)``, ``a * b`` for ``a // b``) gives a different
result on some of them. ``exc`` is what the failing call ``bad_args`` raises.

This module is loaded fresh for each test (see ``tests/test_trust_corpus.py``).
"""

from __future__ import annotations

import dataclasses
import datetime
import itertools
import re
from collections.abc import Callable
from typing import Any


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    func: Callable[..., Any]
    bad_args: tuple[Any, ...]
    exc: type[BaseException]
    returning: list[tuple[Any, ...]]


def average(xs):
    if xs is None:
        return 0.0
    return sum(xs) / len(xs)


def first_word(text):
    words = text.split()
    if not text:
        return ""
    return words[0]


def safe_ratio(a, b):
    if b is None:
        return None
    return a / b


def last_or_default(xs, default=None):
    if xs is None:
        return default
    return xs[-1]


def split_evenly(total, people):
    if people < 0:
        return 0
    return total // people


def pages_needed(items, per_page):
    if per_page is None:
        per_page = 10
    return -(-items // per_page)


def percent_done(done, total):
    if not done:
        return 0.0
    return round(100 * done / total, 1)


def sample_variance(xs):
    if len(xs) < 1:
        return 0.0
    mean = sum(xs) / len(xs)
    return sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)


def rescale(xs):
    lo, hi = min(xs), max(xs)
    span = hi - lo
    if span < 0:
        return [0.0 for _ in xs]
    return [(x - lo) / span for x in xs]


def growth_rates(values):
    rates = []
    for prev, cur in itertools.pairwise(values):
        if prev is None:
            rates.append(None)
            continue
        rates.append(round((cur - prev) / prev, 3))
    return rates


def rotate(xs, k):
    if len(xs) == 1:
        return list(xs)
    k = k % len(xs)
    return xs[k:] + xs[:k]


def item_at(xs, i, default=None):
    if i <= len(xs):
        return xs[i]
    return default


_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def weekday_name(n):
    if n < 0 or n > len(_DAYS):
        return "?"
    return _DAYS[n]


def peak_indices(xs):
    peaks = []
    for i in range(1, len(xs)):
        if xs[i] > xs[i - 1] and xs[i] > xs[i + 1]:
            peaks.append(i)
    return peaks


def count_leading(text, ch):
    i = 0
    while i <= len(text) and text[i] == ch:
        i += 1
    return i


def summarize(orders):
    count = len(orders)
    biggest = orders[0]["total"]  # noqa: F841 - left over from an earlier version
    total = sum(o["total"] for o in orders)
    return {"count": count, "total": total}


def tax_rate(rates, region):
    if region is None:
        return rates["default"]
    return rates[region]


_SUFFIXES = {1: "st", 2: "nd", 3: "rd"}


def ordinal(n):
    digit = n % 10
    if digit > 3 or 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{_SUFFIXES[digit]}"


def discounted_price(prices, discounts, sku):
    price = prices[sku]
    if sku in prices:
        return round(price * (1 - discounts[sku]), 2)
    return price


def untag(tags, tag):
    tags = set(tags)
    tags.remove(tag)
    return sorted(tags)


def normalize_tag(tag):
    if tag == "":
        return None
    return tag.strip().lower()


def city_of(customer):
    address = customer.get("address")
    if customer is None:
        return "unknown"
    return address["city"].title()


_VERSION = re.compile(r"v?(\d+)\.(\d+)")


def major_version(tag):
    match = _VERSION.match(tag)
    if not tag:
        return None
    return int(match.group(1))


def add_tax(amount, rate=None):
    if rate == 0:
        return amount
    return round(amount * (1 + rate), 2)


def word_count(text):
    if len(text) == 0:
        return 0
    return len(text.split())


def join_tags(tags, sep=", "):
    if tags == []:
        return ""
    return sep.join(sorted(tags))


def parse_quantity(field):
    if field is None:
        return 0
    return int(field.strip())


def parse_port(value, default=8080):
    value = value.strip()
    if not value.isalnum():
        return default
    return int(value)


def parse_date(text):
    if text is None:
        return None
    return datetime.datetime.strptime(text, "%Y-%m-%d").date()


def chunks(xs, size):
    if size < 0:
        size = len(xs)
    return [xs[i : i + size] for i in range(0, len(xs), size)]


RATES = {"default": 0.2, "de": 0.19, "fr": 0.2, "lu": 0.17}

CASES: list[Case] = [
    Case("average", average, ([],), ZeroDivisionError, [([2, 4],), ([1, 2, 3],), ([5],), ([-1, 1, 6],), (None,)]),
    Case("first_word", first_word, ("   ",), IndexError,
         [("hello world",), ("  lead",), ("",), ("one",), ("a b c",)]),
    Case("safe_ratio", safe_ratio, (1, 0), ZeroDivisionError, [(6, 3), (1, 4), (-9, 3), (5, 2), (0, 7), (2, None)]),
    Case("last_or_default", last_or_default, ([],), IndexError,
         [([1, 2, 3],), (["a"],), ([0, 9],), (None,), (None, "x"), ([[1], [2]],)]),
    Case("split_evenly", split_evenly, (10, 0), ZeroDivisionError,
         [(10, 2), (10, 3), (7, -4), (9, 10), (100, 7), (1, 1)]),
    Case("pages_needed", pages_needed, (5, 0), ZeroDivisionError,
         [(25, 10), (1, 10), (0, 5), (30, None), (7, 2), (9, 3), (9, -4), (1, 1)]),
    Case("percent_done", percent_done, (3, 0), ZeroDivisionError, [(1, 4), (0, 5), (2, 3), (5, 5), (0, 0), (3, 8)]),
    Case("sample_variance", sample_variance, ([5],), ZeroDivisionError,
         [([1, 3],), ([2, 4, 6],), ([],), ([1, 1, 1, 1],), ([0, 10],)]),
    Case("rescale", rescale, ([3, 3],), ZeroDivisionError,
         [([0, 10],), ([1, 2, 3],), ([4, 2],), ([5, 0, 10],), ([-2, 2],)]),
    Case("growth_rates", growth_rates, ([0, 5],), ZeroDivisionError,
         [([1, 2],), ([2, 3, 6],), ([None, 4, 2],), ([4, 2],), ([10],), ([-2, 2],)]),
    Case("rotate", rotate, ([], 2), ZeroDivisionError,
         [([1, 2, 3], 1), ([1, 2, 3], 4), ([1, 2, 3], -1), ([5], 3), ([1, 2], 0), (["a", "b", "c", "d"], 2)]),
    Case("item_at", item_at, ([1, 2, 3], 3), IndexError,
         [([1, 2, 3], 0), ([1, 2, 3], 2), ([1, 2, 3], 5), (["a"], 0), ([], 1), ([1, 2], -1)]),
    Case("weekday_name", weekday_name, (7,), IndexError, [(0,), (6,), (3,), (-1,), (9,), (8,)]),
    Case("peak_indices", peak_indices, ([1, 2, 3],), IndexError,
         [([1, 3, 2],), ([5, 1, 4, 2],), ([3, 2, 1],), ([1, 3, 1, 3, 1],), ([],), ([7],), ([1, 2, 3, 1],),
          ([2, 4, 6, 5],)]),
    Case("count_leading", count_leading, ("aaa", "a"), IndexError,
         [("aab", "a"), ("xyz", "a"), ("  x", " "), ("aaab", "a"), ("ab", "b")]),
    Case("summarize", summarize, ([],), IndexError,
         [([{"total": 5}],), ([{"total": 2}, {"total": 3}],), ([{"total": 0}, {"total": -1}, {"total": 4}],),
          ([{"total": 10.5}],)]),
    Case("tax_rate", tax_rate, (RATES, ""), KeyError, [(RATES, "de"), (RATES, "fr"), (RATES, None), (RATES, "lu")]),
    Case("ordinal", ordinal, (30,), KeyError, [(1,), (2,), (3,), (4,), (11,), (22,), (101,), (113,)]),
    Case("discounted_price", discounted_price, ({"a": 10.0, "b": 4.0}, {"a": 0.1}, "b"), KeyError,
         [({"a": 10.0, "b": 4.0}, {"a": 0.1, "b": 0.5}, "a"), ({"a": 10.0, "b": 4.0}, {"a": 0.1, "b": 0.5}, "b"),
          ({"x": 3.0}, {"x": 0.0}, "x"), ({"y": 8.0}, {"y": 0.25}, "y")]),
    Case("untag", untag, (["a", "b"], "c"), KeyError,
         [(["a", "b"], "a"), (["x", "y", "z"], "z"), (["a"], "a"), (["b", "a", "c"], "b")]),
    Case("normalize_tag", normalize_tag, (None,), AttributeError,
         [(" Foo ",), ("BAR",), ("",), ("x y",), ("  ",)]),
    Case("city_of", city_of, ({"name": "ann"},), TypeError,
         [({"address": {"city": "paris"}},), ({"address": {"city": "new york"}, "name": "x"},),
          ({"address": {"city": "OSLO"}},), ({"address": {"city": "rome", "zip": "00100"}},)]),
    Case("major_version", major_version, ("latest",), AttributeError,
         [("v1.2",), ("10.4.1",), ("2.0",), ("",), ("v3.14-beta",)]),
    Case("add_tax", add_tax, (10.0,), TypeError, [(100, 0.2), (10, 0), (50, 0.1), (80, 0.25), (3, 1)]),
    Case("word_count", word_count, (None,), TypeError, [("a b c",), ("",), ("one",), ("  two  words ",)]),
    Case("join_tags", join_tags, (None,), TypeError, [(["b", "a"],), ([],), (["x"],), (["c", "a"], "|")]),
    Case("parse_quantity", parse_quantity, ("",), ValueError, [("3",), (" 12 ",), ("-4",), (None,), ("007",)]),
    Case("parse_port", parse_port, ("80a",), ValueError, [("8080",), (" 443 ",), ("",), ("-",), ("0",), ("-1",)]),
    Case("parse_date", parse_date, ("",), ValueError, [("2024-01-31",), ("1999-12-01",), (None,), ("2000-02-29",)]),
    Case("chunks", chunks, ([1, 2, 3], 0), ValueError,
         [([1, 2, 3, 4], 2), ([1, 2, 3], 2), ([1, 2], 5), ([1, 2, 3], -1), ([], 3)]),
]
