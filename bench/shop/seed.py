"""The shop's tables, made without migration files (schema_editor), and its data: about
20,000 customers, 2,000 products and 50,000 orders of 1 to 5 lines a scale unit, drawn from
a seeded random generator (the same seed, the same data), then ANALYZE. Dropping the tables
first makes `prepare` idempotent."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.db import connection, transaction
from django.utils import timezone

from shop.shopapp.models import Customer, Order, OrderLine, Product

MODELS = (Customer, Product, Order, OrderLine)  # in the order their foreign keys need
CUSTOMERS = 20_000
PRODUCTS = 2_000
ORDERS = 50_000
NEW_SHARE = 0.04  # the newest orders are still to be shipped
BATCH = 2_000

# fmt: off
FIRST = ("anna", "ben", "chloe", "david", "emma", "felix", "grace", "hugo", "iris", "jonas",
         "karin", "leo", "mia", "noah", "olga", "paul")
LAST = ("meyer", "smith", "garcia", "novak", "rossi", "dubois", "jansen", "kowalski", "larsen",
        "silva", "tanaka", "weber")
DOMAINS = ("example.com", "mail.test", "shop.test", "post.test")
ADJECTIVES = ("blue", "small", "large", "wooden", "steel", "green", "classic", "light", "heavy",
              "soft", "red", "compact")
NOUNS = ("chair", "lamp", "mug", "table", "kettle", "shelf", "pan", "clock", "rug", "basket",
         "bottle", "vase", "stool", "towel")
# fmt: on


def email_for(number: int) -> str:
    """Customer `number`'s email (1-based), in mixed case as typed: Anna.Weber21@Mail.test."""
    first = FIRST[number % len(FIRST)]
    last = LAST[(number // len(FIRST)) % len(LAST)]
    domain = DOMAINS[number % len(DOMAINS)]
    return f"{first.title()}.{last.title()}{number}@{domain.capitalize()}"


def name_for(number: int) -> str:
    """Customer `number`'s name."""
    first = FIRST[number % len(FIRST)]
    last = LAST[(number // len(FIRST)) % len(LAST)]
    return f"{first.title()} {last.title()}"


@dataclass(frozen=True)
class Seeded:
    customers: int
    products: int
    orders: int
    order_lines: int


def create_tables() -> None:
    """Drop the shop's tables if they are there, then create them as migrate would."""
    existing = set(connection.introspection.table_names())
    with connection.schema_editor() as editor:
        for model in reversed(MODELS):
            if model._meta.db_table in existing:
                editor.delete_model(model)
        for model in MODELS:
            editor.create_model(model)


def _batches(count: int) -> Iterator[range]:
    for start in range(0, count, BATCH):
        yield range(start, min(start + BATCH, count))


def prepare(scale: float = 1.0, seed: int = 1) -> Seeded:
    """Create and fill the tables; `scale` multiplies every row count."""
    rng = random.Random(seed)
    customers = max(1, round(CUSTOMERS * scale))
    products = max(5, round(PRODUCTS * scale))
    orders = max(1, round(ORDERS * scale))
    create_tables()
    now = timezone.now()
    lines = 0
    with transaction.atomic():
        for batch in _batches(customers):
            Customer.objects.bulk_create(
                [Customer(email=email_for(i + 1), name=name_for(i + 1)) for i in batch]
            )
        prices: list[Decimal] = []
        rows = []
        for i in range(products):
            price = Decimal(rng.randint(199, 19_999)) / 100
            prices.append(price)
            name = f"{rng.choice(ADJECTIVES).title()} {rng.choice(NOUNS)} {i + 1}"
            rows.append(Product(name=name, price=price, stock=rng.randint(1_000, 100_000)))
        Product.objects.bulk_create(rows, batch_size=BATCH)
        # a year of orders, oldest first (so ids follow time, as they would have)
        ages = sorted((rng.uniform(0, 365 * 86_400) for _ in range(orders)), reverse=True)
        first_new = round(orders * (1 - NEW_SHARE))
        for batch in _batches(orders):
            made = Order.objects.bulk_create(
                [
                    Order(
                        customer_id=rng.randint(1, customers),
                        status=(
                            Order.Status.NEW
                            if i >= first_new
                            else Order.Status.CANCELLED
                            if rng.random() < 0.03
                            else Order.Status.SHIPPED
                        ),
                        created_at=now - timedelta(seconds=ages[i]),
                    )
                    for i in batch
                ]
            )
            order_lines = [
                OrderLine(
                    order_id=order.pk,
                    product_id=product,
                    quantity=rng.randint(1, 3),
                    price=prices[product - 1],
                )
                for order in made
                for product in rng.sample(range(1, products + 1), rng.randint(1, 5))
            ]
            OrderLine.objects.bulk_create(order_lines, batch_size=BATCH)
            lines += len(order_lines)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE " + ", ".join(model._meta.db_table for model in MODELS))
    return Seeded(customers=customers, products=products, orders=orders, order_lines=lines)
