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


def test_derive_makes_the_plain_variations_first_and_the_texts_after_them() -> None:
    plain = derive([Call(("ab", 3), {})])
    with_texts = derive([Call(("ab", 3), {})], texts=["--"])
    assert with_texts[: len(plain)] == plain  # the plain ones are the same, in the same order
    assert [call.args for call in with_texts[len(plain):]] == [("--ab", 3), ("a--b", 3), ("ab--", 3)]
    assert derive([Call(("ab", 3), {})], limit=len(plain), texts=["--"]) == plain  # a limit cuts the texts first
