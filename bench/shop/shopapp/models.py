"""The shop's models, as a Django developer would write them, indexes included and lacking:
the email is looked up case-insensitively with no index for it, and the orders are queued by
status and time with no index on either (the foreign keys get Django's own indexes)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class Customer(models.Model):
    email = models.CharField(max_length=254)  # looked up with email__iexact, not unique
    name = models.CharField(max_length=100)

    def __str__(self) -> str:
        return self.email


class Product(models.Model):
    name = models.CharField(max_length=200)
    price = models.DecimalField(max_digits=10, decimal_places=2)
    stock = models.IntegerField(default=0)

    def __str__(self) -> str:
        return self.name


class Order(models.Model):
    class Status(models.TextChoices):
        NEW = "new"
        SHIPPED = "shipped"
        CANCELLED = "cancelled"

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="orders")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.NEW)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"order {self.pk} ({self.status})"


class OrderLine(models.Model):
    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="lines")
    product = models.ForeignKey(Product, on_delete=models.PROTECT, related_name="+")
    quantity = models.SmallIntegerField()
    price = models.DecimalField(max_digits=10, decimal_places=2)  # the price when ordered

    def __str__(self) -> str:
        return f"{self.quantity} x {self.product_id}"
