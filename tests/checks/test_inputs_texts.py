"""The engine's guard inputs made from the function's own short texts (issue 24): a string argument with
each of them put in at its first places and at its end."""

from __future__ import annotations

from regrow._checks._inputs import Call, derive
from regrow._checks._widen import constant_texts, inserted


def labelled(label: str) -> str:
    """A docstring, a name and a long message are no texts to put in; "--", "@" and ", " are."""
    if label.startswith("--") or "@" in label:
        raise ValueError("a leading double hyphen or an at sign is not allowed here")

    def joined(parts: list[str]) -> str:
        return ", ".join(parts)

    return joined([label, "name", "--"])


def test_constant_texts_are_the_function_s_short_strings_that_are_not_names_nested_code_included() -> None:
    assert constant_texts(labelled.__code__) == ("--", "@", ", ")


def test_each_text_goes_in_at_the_first_places_and_at_the_end() -> None:
    assert list(inserted("abcdef", ["--"])) == ["--abcdef", "a--bcdef", "ab--cdef", "abc--def", "abcdef--"]
    assert list(inserted("", ["@"])) == ["@"]
    assert list(inserted(7, ["@"])) == []


def test_derive_makes_the_plain_variations_first_the_texts_after_them_and_pairs_last() -> None:
    single = [("b", 3), ("a", 3), ("ab", 4), ("ab", 2)]
    texts = [("--ab", 3), ("a--b", 3), ("ab--", 3)]
    pairs = [("b", 4), ("b", 2), ("a", 4), ("a", 2)]
    assert [call.args for call in derive([Call(("ab", 3), {})])] == single + pairs
    assert [call.args for call in derive([Call(("ab", 3), {})], texts=["--"])] == single + texts + pairs
    cut = derive([Call(("ab", 3), {})], limit=len(single) + len(texts), texts=["--"])
    assert [call.args for call in cut] == single + texts  # a limit cuts the pairs first

class Flags:
    """A receiver whose state is two numbers in ``__slots__``."""

    __slots__ = ("n", "val")

    def __init__(self, val: int, n: int) -> None:
        self.val, self.n = val, n

    def __repr__(self) -> str:
        return f"Flags({self.val}, {self.n})"


def test_derive_varies_an_object_s_number_fields_and_two_arguments_at_once() -> None:
    made = [call.shown() for call in derive([Call((Flags(2, 2), 0), {})])]
    # each number field ±1 (slots too), the other argument ±1, then both at once
    assert made[:4] == ["Flags(2, 3), 0", "Flags(2, 1), 0", "Flags(3, 2), 0", "Flags(1, 2), 0"]
    assert "Flags(2, 2), 1" in made and "Flags(3, 2), 1" in made and "Flags(2, 1), -1" in made


class Order:
    """A class with the default repr (``<…Order object at 0x7f…>``)."""

    def __init__(self, qty: int, price: float, note: str = "") -> None:
        self.qty, self.price, self.note = qty, price, note


def test_a_call_shows_an_object_with_a_default_repr_by_its_state_not_its_address() -> None:
    """An ambiguity's separating input read ``f(<test_inputs_texts.Order object at 0x7f3a…>)`` before: nothing a
    reader could act on, and different every run."""
    shown = Call((Order(2, 3.5), Flags(1, 2)), {"other": Order(1, 0.5)}).shown()
    assert shown == "Order(note='', price=3.5, qty=2), Flags(1, 2), other=Order(note='', price=0.5, qty=1)"
    masked = Call((Order(1, 1.0, note="sk-live-0123456789abcdef0123456789abcdef"),), {}).shown()
    assert "0123456789abcdef0123456789" not in masked and " at 0x" not in masked  # credentials still masked
