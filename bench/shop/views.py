"""The shop's requests, each a function doing what its view would, through the ORM only,
plus the application's own work on the result (totals in Decimal, the JSON response):

    login        Customer.objects.get(email__iexact=...)       UPPER(email::text) = UPPER(%s)
    catalogue    a page of products by name (a slice), then one product by its key
    place_order  in a transaction: the order, its lines with bulk_create (UNNEST when two or
                 more), each product's stock decreased with F()
    fulfil       in a transaction: the oldest new order, FOR UPDATE SKIP LOCKED, shipped
    history      a customer's last 10 orders with their lines (prefetch_related)

`handle` runs one as a request would, between Django's request_started and
request_finished housekeeping (close_old_connections), and returns the response body.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import close_old_connections, transaction
from django.db.models import F, Prefetch
from django.utils import timezone

from shop.seed import email_for
from shop.shopapp.models import Customer, Order, OrderLine, Product

PAGE = 20  # products a catalogue page
BROWSED_PAGES = 25  # shoppers look at the first pages
CENT = Decimal("0.01")


@dataclass
class Shop:
    """What a worker knows of the shop: its random generator and how many rows there are."""

    rng: random.Random
    customers: int
    products: int

    @classmethod
    def open(cls, rng: random.Random) -> Shop:
        return cls(rng=rng, customers=Customer.objects.count(), products=Product.objects.count())

    def customer(self) -> int:
        return self.rng.randint(1, self.customers)

    def product(self) -> int:
        return self.rng.randint(1, self.products)


def _product(product: Product) -> dict[str, Any]:
    return {
        "id": product.pk,
        "name": product.name,
        "price": str(product.price),
        "available": product.stock > 0,
    }


def login(shop: Shop) -> dict[str, Any]:
    """The login form: the customer by the email typed, in whatever case."""
    email = email_for(shop.customer()).lower()
    customer = Customer.objects.get(email__iexact=email)
    return {"id": customer.pk, "name": customer.name, "email": customer.email}


def catalogue(shop: Shop) -> dict[str, Any]:
    """A page of the catalogue, then one product's page."""
    page = shop.rng.randrange(min(BROWSED_PAGES, -(-shop.products // PAGE)))
    products = Product.objects.order_by("name")[page * PAGE : (page + 1) * PAGE]
    product = Product.objects.get(pk=shop.product())
    return {
        "page": page + 1,
        "products": [_product(item) for item in products],
        "product": _product(product),
    }


def place_order(shop: Shop) -> dict[str, Any]:
    """Checkout: the cart's products and prices, then the order, its lines and the stock."""
    rng = shop.rng
    count = min(rng.randint(1, 5), shop.products)
    cart = {pk: rng.randint(1, 3) for pk in rng.sample(range(1, shop.products + 1), count)}
    products = Product.objects.in_bulk(list(cart))
    with transaction.atomic():
        order = Order.objects.create(customer_id=shop.customer(), status=Order.Status.NEW)
        lines = OrderLine.objects.bulk_create(
            [
                OrderLine(order=order, product_id=pk, quantity=quantity, price=products[pk].price)
                for pk, quantity in sorted(cart.items())
            ]
        )
        for pk, quantity in sorted(cart.items()):  # in key order: no deadlock between carts
            Product.objects.filter(pk=pk).update(stock=F("stock") - quantity)
    total = sum((line.price * line.quantity for line in lines), Decimal(0))
    return {
        "order": order.pk,
        "created_at": order.created_at.isoformat(),
        "lines": [
            {"product": products[line.product_id].name, "quantity": line.quantity} for line in lines
        ],
        "total": str(total.quantize(CENT)),
    }


def fulfil(shop: Shop) -> dict[str, Any]:
    """The warehouse: the oldest order still new that no one else holds, shipped."""
    with transaction.atomic():
        order = (
            Order.objects.filter(status=Order.Status.NEW)
            .order_by("created_at")
            .select_for_update(skip_locked=True)
            .first()
        )
        if order is None:
            return {"shipped": None}
        order.status = Order.Status.SHIPPED
        order.save()
    waited = timezone.now() - order.created_at
    return {
        "shipped": order.pk,
        "customer": order.customer_id,
        "waited_h": round(waited.total_seconds() / 3600, 2),
    }


def history(shop: Shop) -> dict[str, Any]:
    """A customer's last 10 orders, each with its lines and its total."""
    orders = (
        Order.objects.filter(customer_id=shop.customer())
        .order_by("-created_at")
        .prefetch_related(Prefetch("lines", queryset=OrderLine.objects.select_related("product")))[
            :10
        ]
    )
    result = []
    for order in orders:
        lines = list(order.lines.all())
        total = sum((line.price * line.quantity for line in lines), Decimal(0))
        result.append(
            {
                "order": order.pk,
                "status": order.get_status_display(),
                "created_at": order.created_at.isoformat(),
                "lines": [
                    {"product": line.product.name, "quantity": line.quantity} for line in lines
                ],
                "total": str(total.quantize(CENT)),
            }
        )
    return {"orders": result, "spent": str(sum((Decimal(o["total"]) for o in result), Decimal(0)))}


# each request and its weight in the mix
REQUESTS: dict[str, tuple[Callable[[Shop], dict[str, Any]], int]] = {
    "login": (login, 30),
    "catalogue": (catalogue, 30),
    "place_order": (place_order, 15),
    "fulfil": (fulfil, 10),
    "history": (history, 15),
}


def handle(kind: str, shop: Shop) -> str:
    """One request of that kind, as Django's request cycle runs it: the response body."""
    close_old_connections()  # request_started
    try:
        return json.dumps(REQUESTS[kind][0](shop), default=str)
    finally:
        close_old_connections()  # request_finished
