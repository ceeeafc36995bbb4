"""Passwords never leave the process: DSN forms and free text."""

from pgopt.redact import Redactor, redact_dsn


def test_url_password_is_masked() -> None:
    assert redact_dsn("postgresql://bob:s3cret@db:5432/app") == "postgresql://bob:***@db:5432/app"


def test_url_without_password_is_unchanged() -> None:
    assert redact_dsn("postgresql://bob@db/app") == "postgresql://bob@db/app"


def test_url_query_password_is_masked() -> None:
    out = redact_dsn("postgresql://db/app?user=bob&password=s3cret&sslmode=require")
    assert "s3cret" not in out and "sslmode=require" in out


def test_keyword_password_is_masked_quoted_or_not() -> None:
    assert redact_dsn("host=db password=s3cret user=bob") == "host=db password=*** user=bob"
    assert "s3 cret" not in redact_dsn("host=db password='s3 cret' user=bob")


def test_redactor_scrubs_known_secrets_from_any_text() -> None:
    r = Redactor()
    r.add("hunter2")
    r.add(None)
    assert r("FATAL: password authentication failed (hunter2)") == (
        "FATAL: password authentication failed (***)"
    )
