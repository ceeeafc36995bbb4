"""The app's configuration: the label `shopapp` names its tables."""

from django.apps import AppConfig


class ShopConfig(AppConfig):
    name = "shop.shopapp"
    label = "shopapp"
    default_auto_field = "django.db.models.BigAutoField"
