"""The shop's Django app: its models (tables shopapp_customer, shopapp_product,
shopapp_order and shopapp_orderline)."""
