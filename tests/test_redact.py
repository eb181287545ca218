"""Redaction by name (split into words) and by the shape of the value."""

from __future__ import annotations

import pytest

from regrow._redact import MASK, is_secret_name, redact_text


@pytest.mark.parametrize("name", ["api_key", "X-Api-Key", "Authorization", "authToken", "password", "DB_PASSWORD",
                                  "client_secret", "session_id", "access_key", "privateKey", "cookie"])
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["author", "tokenizer", "max_tokens", "token_count", "keyboard", "passenger",
                                  "authority_level", "monkey", "secretary"])
def test_ordinary_names(name):
    assert not is_secret_name(name)


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-abcdefghijklmnopqrstuvwxyz123456",
        "sk-ant-api03-abcdefghijklmnopqrstuvwx",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "AKIAABCDEFGHIJKLMNOP",
        "AIzaSyAabcdefghijklmnopqrstuvwxyz012345",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "xoxb-1234567890-abcdefghij",
    ],
)
def test_secret_shaped_values(secret):
    assert secret not in redact_text(f"call failed with {secret} attached")


def test_assignments_and_urls():
    text = redact_text("password=hunter2 user=bob url=postgres://bob:s3cret@db/x {'api_key': 'abc123'}")
    assert "hunter2" not in text and "s3cret" not in text and "abc123" not in text
    assert "user=bob" in text and "postgres://bob:" in text and MASK in text


def test_bearer_keeps_the_scheme_word():
    assert redact_text("Authorization: Bearer abcdefghijklmnop") .count("abcdefghijklmnop") == 0


def test_a_value_masked_by_its_shape_is_not_masked_twice():
    assert redact_text('api_key="sk-abcdefghijklmnopqrstuv"') == 'api_key="[REDACTED]"'


def test_redaction_is_linear_in_long_identifier_runs():
    long = "a" * 20000
    assert redact_text(long) == long  # quadratic backtracking took seconds on runs like this
    assert redact_text(long + " password=hunter2").endswith("password=[REDACTED]")


def test_query_strings_quoted_values_with_spaces_and_comparisons():
    """Seen by a red-team helper: a query string's password (``user=bob&`` swallowed it), only the first word of a
    quoted value (``'SSWS 00QC…'``), and a comparison in code shown as ``password =[REDACTED] 'x'``."""
    assert redact_text("user=bob&password=BODYPW-plain-2222&x=1") == f"user=bob&password={MASK}&x=1"
    assert redact_text("/status?api_key=00QCjAl4MlV&verb=1") == f"/status?api_key={MASK}&verb=1"
    assert redact_text("{'Authorization': 'SSWS 00QCabc'}") == f"{{'Authorization': '{MASK}'}}"
    assert redact_text('password = "correct horse battery staple"') == f'password = "{MASK}"'
    assert redact_text("assert password == 'x', 'wrong'") == "assert password == 'x', 'wrong'"


@pytest.mark.parametrize("name", ["session_key", "signing_key", "encryption_key", "master_key", "license_key"])
def test_lowercase_key_names_are_secret_as_their_upper_case_forms_are(name):
    assert is_secret_name(name) and is_secret_name(name.upper())


def test_a_password_in_a_url_s_query_is_masked():
    """``postgresql://app@host/db?password=…`` was printed whole (its scheme read as a key named postgresql)."""
    url = "postgresql://app@127.0.0.1:5432/db?password=Hunter2SuperSecret&sslmode=disable"
    assert redact_text(url) == f"postgresql://app@127.0.0.1:5432/db?password={MASK}&sslmode=disable"
    from regrow._stores._postgres import PostgresStore

    assert "Hunter2SuperSecret" not in PostgresStore(url, lazy=True).location
