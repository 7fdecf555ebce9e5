"""Retail orders and returns: customers, products, orders, order items, payments, refunds.

The domain's data: its tables and the seed that fills them (the tools are in `retail_tools.py`).
"""

from __future__ import annotations

import datetime as dt
import random

from faker import Faker
from sqlalchemy import Boolean, CheckConstraint, Date, ForeignKey, Integer, String, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

TODAY = dt.date(2025, 3, 14)
STATUSES = ("pending", "paid", "shipped", "delivered", "cancelled")
TIERS = ("standard", "gold", "platinum")
CATEGORIES = ("electronics", "kitchen", "garden", "toys", "books", "apparel")
METHODS = ("card", "paypal", "gift_card")


class RetailBase(DeclarativeBase):
    pass


class Customer(RetailBase):
    __tablename__ = "customers"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(120))
    email: Mapped[str] = mapped_column(String(200), unique=True)
    phone: Mapped[str] = mapped_column(String(40))
    city: Mapped[str] = mapped_column(String(80))
    tier: Mapped[str] = mapped_column(String(20))
    joined_on: Mapped[dt.date] = mapped_column(Date)
    __table_args__ = (CheckConstraint("tier in ('standard','gold','platinum')"),)


class Product(RetailBase):
    __tablename__ = "products"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    sku: Mapped[str] = mapped_column(String(20), unique=True)
    name: Mapped[str] = mapped_column(String(120))
    category: Mapped[str] = mapped_column(String(40))
    price_cents: Mapped[int] = mapped_column(Integer)
    stock: Mapped[int] = mapped_column(Integer)
    active: Mapped[bool] = mapped_column(Boolean)
    __table_args__ = (CheckConstraint("price_cents > 0"), CheckConstraint("stock >= 0"))


class Order(RetailBase):
    __tablename__ = "orders"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    customer_id: Mapped[int] = mapped_column(ForeignKey("customers.id"))
    status: Mapped[str] = mapped_column(String(20))
    placed_on: Mapped[dt.date] = mapped_column(Date)
    total_cents: Mapped[int] = mapped_column(Integer)
    __table_args__ = (CheckConstraint("total_cents >= 0"),)


class OrderItem(RetailBase):
    __tablename__ = "order_items"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    order_id: Mapped[int] = mapped_column(ForeignKey("orders.id"))
    product_id: Mapped[int] = mapped_column(ForeignKey("products.id"))
    quantity: Mapped[int] = mapped_column(Integer)
    unit_price_cents: Mapped[int] = mapped_column(Integer)
    __table_args__ = (CheckConstraint("quantity > 0"),)


class Payment(RetailBase):
    __tablename__ = "payments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    order_id: Mapped[int] = mapped_column(ForeignKey("orders.id"))
    amount_cents: Mapped[int] = mapped_column(Integer)
    method: Mapped[str] = mapped_column(String(20))
    paid_on: Mapped[dt.date] = mapped_column(Date)


class Refund(RetailBase):
    __tablename__ = "refunds"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    order_id: Mapped[int] = mapped_column(ForeignKey("orders.id"))
    amount_cents: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(500))
    refunded_on: Mapped[dt.date] = mapped_column(Date)
    __table_args__ = (CheckConstraint("amount_cents > 0"),)


# --- seed ---------------------------------------------------------------------------------------

NOUNS = {"electronics": ["Headphones", "Charger", "Speaker", "Keyboard", "Mouse", "Webcam", "Router"],
         "kitchen": ["Kettle", "Blender", "Skillet", "Knife Set", "Toaster", "Cutting Board"],
         "garden": ["Hose", "Trowel", "Planter", "Pruner", "Sprinkler", "Rake"],
         "toys": ["Puzzle", "Robot Kit", "Board Game", "Kite", "Plush Bear"],
         "books": ["Cookbook", "Atlas", "Novel", "Field Guide", "Sketchbook"],
         "apparel": ["Rain Jacket", "Beanie", "Hoodie", "Scarf", "Sneakers", "Gloves"]}
ADJ = ["Classic", "Compact", "Deluxe", "Eco", "Pro", "Mini", "Ultra", "Travel", "Smart", "Vintage"]


def seed(s: Session, seed_value: int) -> None:
    fake = Faker("en_US")
    fake.seed_instance(seed_value)
    rng = random.Random(seed_value)
    emails: set[str] = set()
    for i in range(1, 61):
        name = fake.unique.name()
        email = f"{name.lower().replace(' ', '.').replace('..', '.')}@{rng.choice(['example.com', 'mail.test'])}"
        while email in emails:
            email = f"{rng.randint(2, 99)}{email}"
        emails.add(email)
        s.add(Customer(id=i, name=name, email=email, phone=fake.numerify("555-###-####"), city=fake.city(),
                       tier=rng.choices(TIERS, weights=[6, 3, 1])[0],
                       joined_on=TODAY - dt.timedelta(days=rng.randint(30, 1500))))
    names: set[str] = set()
    for i in range(1, 81):
        cat = CATEGORIES[(i - 1) % len(CATEGORIES)]
        name = f"{rng.choice(ADJ)} {rng.choice(NOUNS[cat])}"
        while name in names:
            name = f"{rng.choice(ADJ)} {name}"
        names.add(name)
        stock = rng.randint(0, 9) if i % 4 == 0 else rng.randint(10, 200)
        s.add(Product(id=i, sku=f"SKU-{1000 + i * 7}", name=name, category=cat,
                      price_cents=rng.randint(5, 300) * 100 + rng.choice([0, 49, 99]), stock=stock,
                      active=rng.random() > 0.08))
    s.flush()
    products = list(s.scalars(select(Product)))
    item_id = pay_id = refund_id = 0
    for oid in range(1, 181):
        status = rng.choices(STATUSES, weights=[3, 3, 3, 6, 1])[0]
        placed = TODAY - dt.timedelta(days=rng.randint(1, 200))
        order = Order(id=oid, customer_id=rng.randint(1, 60), status=status, placed_on=placed, total_cents=0)
        s.add(order)
        total = 0
        for p in rng.sample(products, rng.randint(1, 4)):
            item_id += 1
            q = rng.randint(1, 3)
            s.add(OrderItem(id=item_id, order_id=oid, product_id=p.id, quantity=q, unit_price_cents=p.price_cents))
            total += q * p.price_cents
        order.total_cents = total
        if status in ("paid", "shipped", "delivered"):
            pay_id += 1
            s.add(Payment(id=pay_id, order_id=oid, amount_cents=total, method=rng.choice(METHODS),
                          paid_on=placed + dt.timedelta(days=rng.randint(0, 2))))
            if status == "delivered" and rng.random() < 0.12:
                refund_id += 1
                s.add(Refund(id=refund_id, order_id=oid, amount_cents=max(100, total // rng.choice([2, 4, 5])),
                             reason=rng.choice(["damaged item", "late delivery", "wrong size"]),
                             refunded_on=placed + dt.timedelta(days=rng.randint(5, 20))))
