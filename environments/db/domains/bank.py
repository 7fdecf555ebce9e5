"""Retail banking: customers, accounts, transactions, cards, loans.

The domain's data: its tables and the seed that fills them (the tools are in `bank_tools.py`).
"""

from __future__ import annotations

import datetime as dt
import random

from faker import Faker
from sqlalchemy import Boolean, CheckConstraint, Date, ForeignKey, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

TODAY = dt.date(2025, 3, 14)
KINDS = ("checking", "savings")
ACCOUNT_STATUS = ("open", "frozen", "closed")
MAX_CARD_LIMIT = 500_000  # cents


class BankBase(DeclarativeBase):
    pass


class Customer(BankBase):
    __tablename__ = "customers"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(120))
    email: Mapped[str] = mapped_column(String(200))
    phone: Mapped[str] = mapped_column(String(40))
    city: Mapped[str] = mapped_column(String(80))
    kyc_verified: Mapped[bool] = mapped_column(Boolean)


class Account(BankBase):
    __tablename__ = "accounts"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    number: Mapped[str] = mapped_column(String(20), unique=True)
    customer_id: Mapped[int] = mapped_column(ForeignKey("customers.id"))
    kind: Mapped[str] = mapped_column(String(20))
    balance_cents: Mapped[int] = mapped_column(Integer)
    overdraft_cents: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20))
    opened_on: Mapped[dt.date] = mapped_column(Date)
    __table_args__ = (CheckConstraint("balance_cents + overdraft_cents >= 0"),
                      CheckConstraint("status in ('open','frozen','closed')"))


class Transaction(BankBase):
    __tablename__ = "transactions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    kind: Mapped[str] = mapped_column(String(20))
    amount_cents: Mapped[int] = mapped_column(Integer)
    memo: Mapped[str] = mapped_column(String(200))
    posted_on: Mapped[dt.date] = mapped_column(Date)
    counterparty_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id"), nullable=True)
    __table_args__ = (CheckConstraint("amount_cents > 0"),)


class Card(BankBase):
    __tablename__ = "cards"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    last4: Mapped[str] = mapped_column(String(4))
    status: Mapped[str] = mapped_column(String(20))
    daily_limit_cents: Mapped[int] = mapped_column(Integer)


class Loan(BankBase):
    __tablename__ = "loans"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    customer_id: Mapped[int] = mapped_column(ForeignKey("customers.id"))
    principal_cents: Mapped[int] = mapped_column(Integer)
    outstanding_cents: Mapped[int] = mapped_column(Integer)
    rate_bp: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20))
    __table_args__ = (CheckConstraint("outstanding_cents >= 0"),)


def seed(s: Session, seed_value: int) -> None:
    fake = Faker("en_US")
    fake.seed_instance(seed_value + 1)
    rng = random.Random(seed_value + 1)
    acc_id = tx_id = card_id = loan_id = 0
    for cid in range(1, 51):
        name = fake.unique.name()
        s.add(Customer(id=cid, name=name, email=f"{name.split()[0].lower()}{cid}@bank-mail.test",
                       phone=fake.numerify("555-###-####"), city=fake.city(), kyc_verified=rng.random() > 0.15))
        for kind in (["checking", "savings"] if rng.random() < 0.7 else ["checking"]):
            acc_id += 1
            status = rng.choices(ACCOUNT_STATUS, weights=[16, 2, 1])[0]
            balance = 0 if status == "closed" else rng.randint(0, 2_500_000)
            s.add(Account(id=acc_id, number=f"ACC-{100000 + acc_id * 37}", customer_id=cid, kind=kind,
                          balance_cents=balance, overdraft_cents=50_000 if kind == "checking" else 0, status=status,
                          opened_on=TODAY - dt.timedelta(days=rng.randint(60, 3000))))
            for _ in range(rng.randint(2, 6) if status != "closed" else 0):
                tx_id += 1
                s.add(Transaction(id=tx_id, account_id=acc_id, kind=rng.choice(["deposit", "withdrawal", "fee"]),
                                  amount_cents=rng.randint(500, 90_000), memo=rng.choice(["payroll", "atm", "grocery",
                                                                                          "rent", "monthly fee"]),
                                  posted_on=TODAY - dt.timedelta(days=rng.randint(1, 90)), counterparty_id=None))
            if kind == "checking" and status != "closed":
                card_id += 1
                s.add(Card(id=card_id, account_id=acc_id, last4=f"{rng.randint(0, 9999):04d}",
                           status=rng.choices(["active", "blocked"], weights=[9, 1])[0],
                           daily_limit_cents=rng.choice([100_000, 200_000, 300_000])))
        if rng.random() < 0.5:
            loan_id += 1
            principal = rng.randint(20, 300) * 100_000 // 10
            s.add(Loan(id=loan_id, customer_id=cid, principal_cents=principal,
                       outstanding_cents=principal * rng.randint(10, 95) // 100, rate_bp=rng.choice([450, 599, 725]),
                       status="active"))
