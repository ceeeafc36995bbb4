"""A small web shop written as a Django developer would write it, used as a library (no web
server): the real client of bench/shop_load.py, whose SQL is the ORM's, not a benchmark's.

    shop.setup(dsn)            Django configured in code for that PostgreSQL (config.py)
    shop.seed.prepare(...)     the tables created and filled (seed.py)
    shop.views.handle(...)     one request, as a view would do it (views.py)

`shop.seed` and `shop.views` import the models, so they are imported after `setup`.
"""

from shop.config import setup

__all__ = ["setup"]
