"""The retail domain's tools, the rules a refusal may name, its policy and the `Domain` itself
(its tables and seed data are in `retail.py`)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from envhub.errors import AgentError
from environments.db.core import (
    LIMIT,
    MAX_TEXT,
    Domain,
    P,
    Tool,
    add,
    answer_tools,
    get_or_404,
    listing,
    money,
    row_dict,
    search,
)
from environments.db.domains.retail import (
    CATEGORIES,
    METHODS,
    STATUSES,
    TIERS,
    TODAY,
    Customer,
    Order,
    OrderItem,
    Payment,
    Product,
    Refund,
    RetailBase,
    seed,
)

# --- rules and tools ----------------------------------------------------------------------------

def paid_cents(s: Session, order_id: int) -> int:
    return int(s.scalar(select(func.coalesce(func.sum(Payment.amount_cents), 0)).where(
        Payment.order_id == order_id)) or 0)


def refunded_cents(s: Session, order_id: int) -> int:
    return int(s.scalar(select(func.coalesce(func.sum(Refund.amount_cents), 0)).where(
        Refund.order_id == order_id)) or 0)


def _customer(s: Session, customer_id: int) -> Customer:
    return get_or_404(s, Customer, customer_id, "customer")


def _order(s: Session, order_id: int) -> Order:
    return get_or_404(s, Order, order_id, "order")


def search_customers(s: Session, limit: int = 20, **f: object) -> dict:
    rows, total = search(s, Customer, f, text_cols=("name", "email", "city"), limit=limit)
    return listing(rows, total, "customers")


def get_customer(s: Session, customer_id: int) -> dict:
    c = _customer(s, customer_id)
    orders = s.scalars(select(Order).where(Order.customer_id == c.id).order_by(Order.id)).all()
    return {**row_dict(c), "orders": [{"id": o.id, "status": o.status, "total": money(o.total_cents)} for o in orders]}


def update_customer(s: Session, customer_id: int, **changes: object) -> dict:
    c = _customer(s, customer_id)
    if not changes:
        raise AgentError("nothing to update: give at least one of email, phone, city, tier")
    email = changes.get("email")
    if email is not None:
        if "@" not in str(email) or " " in str(email) or str(email).startswith("@") or "." not in str(email)[-5:]:
            raise AgentError(f"invalid email address {email!r}")
        clash = s.scalar(select(Customer.id).where(func.lower(Customer.email) == str(email).lower(),
                                                   Customer.id != c.id))
        if clash:
            raise AgentError(f"email {email} is already used by customer {clash}")
    for k, v in changes.items():
        setattr(c, k, v)
    return row_dict(c)


def delete_customer(s: Session, customer_id: int) -> dict:
    c = _customer(s, customer_id)
    n = s.scalar(select(func.count()).select_from(Order).where(Order.customer_id == c.id))
    if n:
        raise AgentError(f"customer {c.id} has {n} orders and cannot be deleted; order history must be kept")
    s.delete(c)
    return {"deleted": customer_id}


def search_products(s: Session, limit: int = 20, max_stock: int | None = None, **f: object) -> dict:
    rows, total = search(s, Product, f, text_cols=("name",), limit=1000)
    if max_stock is not None:
        rows = [r for r in rows if r.stock <= max_stock]
        total = len(rows)
    return listing(rows[:limit], total, "products")


def get_product(s: Session, product_id: int) -> dict:
    return row_dict(get_or_404(s, Product, product_id, "product"))


def update_product(s: Session, product_id: int, **changes: object) -> dict:
    p = get_or_404(s, Product, product_id, "product")
    if not changes:
        raise AgentError("nothing to update: give at least one of price, stock, active")
    if "price" in changes:
        p.price_cents = int(changes.pop("price"))  # type: ignore[call-overload]
        if p.price_cents <= 0:
            raise AgentError("price must be greater than 0")
    for k, v in changes.items():
        setattr(p, k, v)
    return row_dict(p)


def search_orders(s: Session, limit: int = 20, **f: object) -> dict:
    rows, total = search(s, Order, f, limit=limit)
    return listing(rows, total, "orders")


def get_order(s: Session, order_id: int) -> dict:
    o = _order(s, order_id)
    items = s.scalars(select(OrderItem).where(OrderItem.order_id == o.id).order_by(OrderItem.id)).all()
    pays = s.scalars(select(Payment).where(Payment.order_id == o.id).order_by(Payment.id)).all()
    refunds = s.scalars(select(Refund).where(Refund.order_id == o.id).order_by(Refund.id)).all()
    paid, refunded = paid_cents(s, o.id), refunded_cents(s, o.id)
    return {**row_dict(o), "items": [row_dict(i) for i in items], "payments": [row_dict(p) for p in pays],
            "refunds": [row_dict(r) for r in refunds], "paid": money(paid), "refunded": money(refunded),
            "refundable": money(paid - refunded)}


def create_order(s: Session, customer_id: int, items: list[dict]) -> dict:
    _customer(s, customer_id)
    order = add(s, Order(customer_id=customer_id, status="pending", placed_on=TODAY, total_cents=0))
    seen: set[int] = set()
    total = 0
    for it in items:
        p = get_or_404(s, Product, it["product_id"], "product")
        if p.id in seen:
            raise AgentError(f"product {p.id} is listed twice; give one line per product")
        seen.add(p.id)
        if not p.active:
            raise AgentError(f"product {p.id} ({p.name}) is discontinued and cannot be ordered")
        if it["quantity"] > p.stock:
            raise AgentError(f"insufficient stock for product {p.id}: {p.stock} available, {it['quantity']} requested")
        p.stock -= it["quantity"]
        add(s, OrderItem(order_id=order.id, product_id=p.id, quantity=it["quantity"], unit_price_cents=p.price_cents))
        total += it["quantity"] * p.price_cents
    order.total_cents = total
    return get_order(s, order.id)


def pay_order(s: Session, order_id: int, method: str) -> dict:
    o = _order(s, order_id)
    if o.status != "pending":
        raise AgentError(f"order {o.id} is {o.status}; only pending orders can be paid")
    add(s, Payment(order_id=o.id, amount_cents=o.total_cents, method=method, paid_on=TODAY))
    o.status = "paid"
    return get_order(s, o.id)


def ship_order(s: Session, order_id: int) -> dict:
    o = _order(s, order_id)
    if o.status != "paid":
        raise AgentError(f"order {o.id} is {o.status}; only paid orders can be shipped")
    o.status = "shipped"
    return row_dict(o)


def mark_delivered(s: Session, order_id: int) -> dict:
    o = _order(s, order_id)
    if o.status != "shipped":
        raise AgentError(f"order {o.id} is {o.status}; only shipped orders can be marked delivered")
    o.status = "delivered"
    return row_dict(o)


def cancel_order(s: Session, order_id: int) -> dict:
    o = _order(s, order_id)
    if o.status not in ("pending", "paid"):
        raise AgentError(f"order {o.id} is {o.status}; only pending or paid orders can be cancelled")
    for it in s.scalars(select(OrderItem).where(OrderItem.order_id == o.id)):
        get_or_404(s, Product, it.product_id, "product").stock += it.quantity
    remaining = paid_cents(s, o.id) - refunded_cents(s, o.id)
    if remaining > 0:
        add(s, Refund(order_id=o.id, amount_cents=remaining, reason="order cancelled", refunded_on=TODAY))
    o.status = "cancelled"
    return get_order(s, o.id)


def refund_order(s: Session, order_id: int, amount: int, reason: str) -> dict:
    o = _order(s, order_id)
    if o.status not in ("paid", "shipped", "delivered"):
        raise AgentError(f"order {o.id} is {o.status}; nothing was paid that could be refunded")
    available = paid_cents(s, o.id) - refunded_cents(s, o.id)
    if amount > available:
        raise AgentError(f"refund of {money(amount)} exceeds the refundable amount of {money(available)} "
                         f"for order {o.id}")
    add(s, Refund(order_id=o.id, amount_cents=amount, reason=reason, refunded_on=TODAY))
    return get_order(s, o.id)


CID = P("integer", "Customer id.", minimum=1)
OID = P("integer", "Order id.", minimum=1)
PID = P("integer", "Product id.", minimum=1)

RULES = {
    "refund_over_paid": "refunds never exceed what was paid; figure: the amount still refundable",
    "order_not_cancellable": "only pending or paid orders can be cancelled; figure: the order's status",
    "customer_has_orders": "customers with order history are never deleted; figure: how many orders they have",
    "product_inactive": "discontinued products cannot be ordered; figure: the product's id",
}

TOOLS = [
    Tool("search_customers", "Find customers; text filters match substrings, case-insensitively.",
         {"name": P("string", required=False), "email": P("string", required=False),
          "city": P("string", required=False), "tier": P("string", required=False, enum=TIERS), "limit": LIMIT},
         search_customers),
    Tool("get_customer", "A customer with their orders.", {"customer_id": CID}, get_customer),
    Tool("update_customer", "Change a customer's contact details or loyalty tier.",
         {"customer_id": CID, "email": P("string", required=False), "phone": P("string", required=False, max_len=40),
          "city": P("string", required=False, max_len=80), "tier": P("string", required=False, enum=TIERS)},
         update_customer, writes=True),
    Tool("delete_customer", "Delete a customer who has never ordered.", {"customer_id": CID}, delete_customer,
         writes=True),
    Tool("search_products", "Find products by name, category, active flag or a stock ceiling.",
         {"name": P("string", required=False), "category": P("string", required=False, enum=CATEGORIES),
          "active": P("boolean", required=False),
          "max_stock": P("integer", "Only products with at most this many in stock.", required=False, minimum=0),
          "limit": LIMIT}, search_products),
    Tool("get_product", "One product.", {"product_id": PID}, get_product),
    Tool("update_product", "Change a product's price, stock level or active flag.",
         {"product_id": PID, "price": P("money", "New unit price in dollars.", required=False, minimum=0.01),
          "stock": P("integer", required=False, minimum=0, maximum=100000), "active": P("boolean", required=False)},
         update_product, writes=True),
    Tool("search_orders", "Find orders by customer and/or status.",
         {"customer_id": P("integer", required=False, minimum=1),
          "status": P("string", required=False, enum=STATUSES), "limit": LIMIT}, search_orders),
    Tool("get_order", "An order with its items, payments, refunds and the refundable amount.", {"order_id": OID},
         get_order),
    Tool("create_order", "Place a pending order for a customer; reserves stock.",
         {"customer_id": CID, "items": P("array", "Order lines.", items={
             "product_id": PID, "quantity": P("integer", minimum=1, maximum=100)}, max_items=20)},
         create_order, writes=True),
    Tool("pay_order", "Take payment of the full total of a pending order.",
         {"order_id": OID, "method": P("string", enum=METHODS)}, pay_order, writes=True),
    Tool("ship_order", "Mark a paid order as shipped.", {"order_id": OID}, ship_order, writes=True),
    Tool("mark_delivered", "Mark a shipped order as delivered.", {"order_id": OID}, mark_delivered, writes=True),
    Tool("cancel_order", "Cancel a pending or paid order: restocks its items and refunds what was paid.",
         {"order_id": OID}, cancel_order, writes=True),
    Tool("refund_order", "Refund part or all of what was paid for an order (never more than was paid).",
         {"order_id": OID, "amount": P("money", "Amount in dollars.", minimum=0.01),
          "reason": P("string", max_len=MAX_TEXT // 4)}, refund_order, writes=True),
    *answer_tools(RULES),
]

POLICY = ("Policy: refunds never exceed what was paid for an order; only pending or paid orders can be cancelled; "
          "customers with order history are never deleted; discontinued (inactive) products cannot be ordered.")

DOMAIN = Domain(name="retail", title="Retail orders and returns", language="en", base=RetailBase, seed=seed,
                tools=TOOLS, today=TODAY, policy=POLICY)
