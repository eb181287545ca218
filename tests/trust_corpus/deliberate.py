"""Deliberate failures: functions whose ``raise`` or ``assert`` on a given input is the point.

Validation, business rules, abstract methods, preconditions, exception translation. With no
oracle (no ``verify=``, ``tests=`` or ``record=``) regrow must never "fix" any of these: the
failing call is the function doing its job. Each case names the function, a call that raises
(``bad_args``, with the exception type ``exc`` it raises), and valid calls with their results
(``good``; empty only for functions that raise on every input, such as an abstract method).

This module is loaded fresh for each test (see ``tests/test_trust_corpus.py``), so every name
here — the functions, the exception classes, ``CASES`` — belongs to one load of it.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from collections.abc import Callable
from typing import Any


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    func: Callable[..., Any]
    bad_args: tuple[Any, ...]
    exc: type[BaseException]
    good: list[tuple[tuple[Any, ...], Any]]


# -- the user's own exception types ------------------------------------------------------------
class LedgerError(Exception):
    pass


class InsufficientFunds(Exception):
    pass


class ConfigError(Exception):
    pass


class SettingsError(ValueError):
    pass


class TransferError(Exception):
    pass


class InvalidCoupon(Exception):
    pass


class OutOfStock(LookupError):
    pass


class UnknownStatus(LookupError):
    pass


class RateLimited(Exception):
    pass


class CurrencyMismatch(TypeError):
    pass


class ValidationError(ValueError):
    pass


# -- validation and business rules --------------------------------------------------------------
def order_total(order):
    if order.get("qty", 0) <= 0:
        raise ValueError("quantity must be positive")
    return order["qty"] * order["price"]


def withdraw(balance, amount):
    if amount > balance:
        raise InsufficientFunds(f"cannot withdraw {amount} from {balance}")
    return balance - amount


def post_ledger(entries):
    raise LedgerError("unbalanced")


def transfer(accounts, src, dst, amount):
    if src == dst:
        raise TransferError("source and destination are the same account")
    moved = dict(accounts)
    moved[src] -= amount
    moved[dst] += amount
    return moved


def set_age(person, age):
    if not 0 <= age <= 150:
        raise ValueError(f"age out of range: {age}")
    return {**person, "age": age}


COUPONS = {"SAVE10": {"off": 10, "min": 50}, "HALF": {"off": 50, "min": 200}}


def apply_coupon(total, code):
    if code not in COUPONS:
        raise InvalidCoupon(f"unknown coupon {code!r}")
    coupon = COUPONS[code]
    if total < coupon["min"]:
        raise InvalidCoupon(f"{code} needs an order of at least {coupon['min']}")
    return total - coupon["off"]


def split_shares(total, holders):
    if holders == 0:
        raise ZeroDivisionError("no shareholders to split between")
    return total // holders


def require_admin(user):
    if "admin" not in user.get("roles", ()):
        raise PermissionError(f"{user.get('name', '?')} is not an admin")
    return f"welcome, {user['name']}"


def check_rate(calls, limit):
    if calls >= limit:
        raise RateLimited(f"{calls} calls, limit {limit}")
    return limit - calls


def legacy_total(items):
    raise RuntimeError("legacy_total was removed; use order_total")


def upload_stream(chunks):
    raise NotImplementedError("streaming upload is not supported yet")


# -- type and lookup checks ---------------------------------------------------------------------
def scale(vector, factor):
    if not isinstance(factor, (int, float)):
        raise TypeError(f"factor must be a number, not {type(factor).__name__}")
    return [x * factor for x in vector]


def require_setting(config, key):
    if key not in config:
        raise KeyError(f"missing setting {key!r}")
    return config[key]


def find_user(users, uid):
    for user in users:
        if user["id"] == uid:
            return user["name"]
    raise LookupError(f"no user with id {uid}")


def checked_port(port):
    if not isinstance(port, int) or isinstance(port, bool):
        raise TypeError("port must be an int")
    if not 0 < port < 65536:
        raise ValueError(f"port out of range: {port}")
    return port


def parse_bool(text):
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    elif value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"not a boolean: {text!r}")


STATUS = {200: "OK", 404: "Not Found", 500: "Internal Server Error"}


def status_text(code):
    try:
        return STATUS[code]
    except KeyError:
        raise UnknownStatus(code) from None


# -- raises in loops and elif chains ------------------------------------------------------------
def checked_sum(items):
    total = 0
    for i, item in enumerate(items):
        if item < 0:
            raise ValueError(f"item {i} is negative: {item}")
        total += item
    return total


def matrix_width(rows):
    width = len(rows[0])
    for row in rows:
        if len(row) != width:
            raise ValueError("ragged matrix: rows differ in length")
    return width


EU = frozenset({"FR", "DE", "IT", "ES", "NL"})


def shipping_zone(country):
    if country in EU:
        return "eu"
    elif country == "US":
        return "us"
    elif country in ("CA", "MX"):
        return "north-america"
    else:
        raise ValueError(f"we do not ship to {country}")


def grade(score):
    if score < 0 or score > 100:
        raise ValueError(f"score must be within 0..100, got {score}")
    elif score >= 90:
        return "A"
    elif score >= 75:
        return "B"
    elif score >= 50:
        return "C"
    return "F"


def timeout_for(operation):
    match operation:
        case "read":
            return 5
        case "write":
            return 30
        case "backup":
            return 3600
        case _:
            raise ValueError(f"unknown operation {operation!r}")


# -- assert preconditions -----------------------------------------------------------------------
def isqrt_checked(n):
    assert n >= 0, "n must be non-negative"
    return math.isqrt(n)


def take(xs, n):
    assert isinstance(n, int) and n >= 0, "n must be a non-negative int"
    return xs[:n]


def bisect_sorted(xs, x):
    assert all(a <= b for a, b in itertools.pairwise(xs)), "input must be sorted"
    lo, hi = 0, len(xs)
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def mean_of_readings(readings):
    for reading in readings:
        assert reading is not None, "a sensor reading is missing"
    return sum(readings) / len(readings)


# -- a raise in a helper of the same module -----------------------------------------------------
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$")


def _reject(message):
    raise ValidationError(message)


def normalize_email(address):
    address = address.strip().lower()
    if not _EMAIL.match(address):
        _reject(f"not an email address: {address!r}")
    return address


def _check_sku(sku):
    if not re.fullmatch(r"[A-Z]{3}-\d{4}", sku):
        raise ValidationError(f"bad SKU {sku!r}")


def sku_family(sku):
    _check_sku(sku)
    return sku[:3]


# -- exception translation (``raise ... from exc``) ---------------------------------------------
def config_int(text):
    try:
        return int(text)
    except ValueError as exc:
        raise ConfigError(f"not an integer: {text!r}") from exc


def load_setting(raw):
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"setting is not valid JSON: {exc.msg}") from exc
    return data["value"] if isinstance(data, dict) else data


# -- methods: abstract-method style, rules on objects -------------------------------------------
class Shape:
    def area(self):
        raise NotImplementedError

    def describe(self):
        return f"{type(self).__name__} of area {self.area()}"


class Square(Shape):
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side * self.side


class Exporter:
    def export(self, rows):
        raise NotImplementedError(f"{type(self).__name__} must implement export()")


@dataclasses.dataclass(frozen=True)
class Money:
    amount: int
    currency: str

    def plus(self, other):
        if self.currency != other.currency:
            raise CurrencyMismatch(f"cannot add {other.currency} to {self.currency}")
        return Money(self.amount + other.amount, self.currency)


class Inventory:
    def __init__(self, stock):
        self.stock = dict(stock)

    def remaining_after(self, sku, qty):
        available = self.stock.get(sku, 0)
        if available < qty:
            raise OutOfStock(f"only {available} of {sku} left")
        return available - qty


class Header:
    @staticmethod
    def parse(line):
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"malformed header line {line!r}")
        return name.strip().lower(), value.strip()


_stock = Inventory({"apple": 3, "pear": 0})

CASES: list[Case] = [
    Case("order_total", order_total, ({"qty": 0, "price": 2.5},), ValueError,
         [(({"qty": 2, "price": 2.5},), 5.0), (({"qty": 3, "price": 4},), 12)]),
    Case("withdraw", withdraw, (100, 150), InsufficientFunds, [((100, 30), 70), ((50, 50), 0)]),
    Case("post_ledger", post_ledger, ([("cash", 10), ("sales", -5)],), LedgerError, []),
    Case("transfer", transfer, ({"a": 10, "b": 5}, "a", "a", 3), TransferError,
         [(({"a": 10, "b": 5}, "a", "b", 3), {"a": 7, "b": 8}), (({"a": 1, "b": 0}, "b", "a", 1), {"a": 2, "b": -1})]),
    Case("set_age", set_age, ({"name": "Ann"}, -1), ValueError,
         [(({"name": "Ann"}, 30), {"name": "Ann", "age": 30}), (({}, 0), {"age": 0})]),
    Case("apply_coupon", apply_coupon, (30, "SAVE10"), InvalidCoupon,
         [((60, "SAVE10"), 50), ((250, "HALF"), 200)]),
    Case("split_shares", split_shares, (100, 0), ZeroDivisionError, [((100, 3), 33), ((10, 5), 2)]),
    Case("require_admin", require_admin, ({"name": "bob", "roles": ["user"]},), PermissionError,
         [(({"name": "ann", "roles": ["admin"]},), "welcome, ann"),
          (({"name": "cy", "roles": ["user", "admin"]},), "welcome, cy")]),
    Case("check_rate", check_rate, (10, 10), RateLimited, [((3, 10), 7), ((0, 1), 1)]),
    Case("legacy_total", legacy_total, ([1, 2],), RuntimeError, []),
    Case("upload_stream", upload_stream, ([b"ab"],), NotImplementedError, []),
    Case("scale", scale, ([1, 2], "3"), TypeError, [(([1, 2], 3), [3, 6]), (([0.5], 2.0), [1.0])]),
    Case("require_setting", require_setting, ({"host": "db"}, "port"), KeyError,
         [(({"host": "db"}, "host"), "db"), (({"port": 5432}, "port"), 5432)]),
    Case("find_user", find_user, ([{"id": 1, "name": "ann"}], 7), LookupError,
         [(([{"id": 1, "name": "ann"}, {"id": 2, "name": "bo"}], 2), "bo"), (([{"id": 1, "name": "ann"}], 1), "ann")]),
    Case("checked_port", checked_port, ("8080",), TypeError, [((8080,), 8080), ((1,), 1)]),
    Case("parse_bool", parse_bool, ("maybe",), ValueError, [((" Yes ",), True), (("off",), False)]),
    Case("status_text", status_text, (418,), UnknownStatus, [((200,), "OK"), ((404,), "Not Found")]),
    Case("checked_sum", checked_sum, ([3, -1, 4],), ValueError, [(([3, 1, 4],), 8), (([],), 0)]),
    Case("matrix_width", matrix_width, ([[1, 2], [3]],), ValueError, [(([[1, 2], [3, 4]],), 2), (([[1]],), 1)]),
    Case("shipping_zone", shipping_zone, ("BR",), ValueError,
         [(("FR",), "eu"), (("US",), "us"), (("MX",), "north-america")]),
    Case("grade", grade, (101,), ValueError, [((95,), "A"), ((80,), "B"), ((10,), "F")]),
    Case("timeout_for", timeout_for, ("delete",), ValueError, [(("read",), 5), (("backup",), 3600)]),
    Case("isqrt_checked", isqrt_checked, (-4,), AssertionError, [((16,), 4), ((10,), 3)]),
    Case("take", take, ([1, 2, 3], -1), AssertionError, [(([1, 2, 3], 2), [1, 2]), (([1], 0), [])]),
    Case("bisect_sorted", bisect_sorted, ([3, 1, 2], 2), AssertionError, [(([1, 2, 3], 2), 1), (([1, 3, 5], 4), 2)]),
    Case("mean_of_readings", mean_of_readings, ([1.0, None, 3.0],), AssertionError,
         [(([1.0, 3.0],), 2.0), (([4],), 4.0)]),
    Case("normalize_email", normalize_email, ("not-an-email",), ValidationError,
         [((" Ann@Example.COM ",), "ann@example.com"), (("bo@x.org",), "bo@x.org")]),
    Case("sku_family", sku_family, ("abc-12",), ValidationError, [(("ABC-1234",), "ABC"), (("XYZ-0001",), "XYZ")]),
    Case("config_int", config_int, ("ten",), ConfigError, [(("10",), 10), ((" -3 ",), -3)]),
    Case("load_setting", load_setting, ("{value: 1}",), SettingsError,
         [(('{"value": 1}',), 1), (("[1, 2]",), [1, 2])]),
    Case("Shape.area", Shape.area, (Shape(),), NotImplementedError, []),
    Case("Exporter.export", Exporter.export, (Exporter(), [{"a": 1}]), NotImplementedError, []),
    Case("Money.plus", Money.plus, (Money(5, "EUR"), Money(3, "USD")), CurrencyMismatch,
         [((Money(5, "EUR"), Money(3, "EUR")), Money(8, "EUR")),
          ((Money(0, "USD"), Money(1, "USD")), Money(1, "USD"))]),
    Case("Inventory.remaining_after", Inventory.remaining_after, (_stock, "pear", 1), OutOfStock,
         [((_stock, "apple", 2), 1), ((_stock, "apple", 3), 0)]),
    Case("Header.parse", Header.parse, ("no colon here",), ValueError,
         [(("Host: example.com",), ("host", "example.com")), (("X-Id:7",), ("x-id", "7"))]),
]
