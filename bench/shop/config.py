"""Django's settings for the shop, configured in code from a libpq DSN given at run time
(`host=... dbname=...` or `postgresql://...`): PostgreSQL through psycopg 3, persistent
connections (CONN_MAX_AGE), times in UTC (USE_TZ), no migrations, no web server."""

from __future__ import annotations

import getpass
import os
from typing import Any

import django
from django.conf import settings
from psycopg.conninfo import conninfo_to_dict

# libpq keywords that Django's settings name; every other one goes to OPTIONS as it is
_NAMED = {"dbname": "NAME", "user": "USER", "password": "PASSWORD", "host": "HOST", "port": "PORT"}


def database(dsn: str) -> dict[str, Any]:
    """DATABASES["default"] for a DSN (psycopg's parser: a bad DSN raises ProgrammingError)."""
    params = {key: str(value) for key, value in conninfo_to_dict(dsn).items()}
    entry: dict[str, Any] = {"ENGINE": "django.db.backends.postgresql"}
    for keyword, name in _NAMED.items():
        entry[name] = params.pop(keyword, "")
    if not entry["NAME"]:  # libpq's default database, which Django does not apply itself
        entry["NAME"] = os.environ.get("PGDATABASE") or entry["USER"] or getpass.getuser()
    entry["OPTIONS"] = params
    entry["CONN_MAX_AGE"] = None  # persistent: one connection a worker, kept open
    entry["CONN_HEALTH_CHECKS"] = False
    entry["ATOMIC_REQUESTS"] = False
    return entry


def setup(dsn: str) -> None:
    """Configure Django for the shop on that database; once a process."""
    if settings.configured:
        return
    settings.configure(
        DEBUG=False,  # True would keep every query in memory
        INSTALLED_APPS=["shop.shopapp"],
        DATABASES={"default": database(dsn)},
        USE_TZ=True,
        TIME_ZONE="UTC",
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        LOGGING_CONFIG=None,
    )
    django.setup()
