"""Logistics and shipments: warehouses, carriers, vehicles, shipments, tracking events.

The domain's data: its tables and the seed that fills them (the tools are in `logistics_tools.py`).
"""

from __future__ import annotations

import datetime as dt
import random

from faker import Faker
from sqlalchemy import Boolean, CheckConstraint, DateTime, ForeignKey, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

NOW = dt.datetime(2025, 3, 14, 12, 0)
TODAY = NOW.date()
STATUSES = ("created", "in_transit", "delivered", "cancelled")
MAX_WEIGHT_G = 30_000


class LogisticsBase(DeclarativeBase):
    pass


class Warehouse(LogisticsBase):
    __tablename__ = "warehouses"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    code: Mapped[str] = mapped_column(String(10), unique=True)
    city: Mapped[str] = mapped_column(String(80))


class Carrier(LogisticsBase):
    __tablename__ = "carriers"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(80), unique=True)
    active: Mapped[bool] = mapped_column(Boolean)


class Vehicle(LogisticsBase):
    __tablename__ = "vehicles"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    carrier_id: Mapped[int] = mapped_column(ForeignKey("carriers.id"))
    plate: Mapped[str] = mapped_column(String(12), unique=True)
    capacity_kg: Mapped[int] = mapped_column(Integer)


class Shipment(LogisticsBase):
    __tablename__ = "shipments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    tracking_no: Mapped[str] = mapped_column(String(16), unique=True)
    origin_id: Mapped[int] = mapped_column(ForeignKey("warehouses.id"))
    carrier_id: Mapped[int | None] = mapped_column(ForeignKey("carriers.id"), nullable=True)
    recipient: Mapped[str] = mapped_column(String(120))
    destination_city: Mapped[str] = mapped_column(String(80))
    weight_g: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20))
    shipped_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    delivered_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    __table_args__ = (CheckConstraint("weight_g > 0"),
                      CheckConstraint("delivered_at is null or (shipped_at is not null and delivered_at >= shipped_at)"))


class TrackingEvent(LogisticsBase):
    __tablename__ = "tracking_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    shipment_id: Mapped[int] = mapped_column(ForeignKey("shipments.id"))
    at: Mapped[dt.datetime] = mapped_column(DateTime)
    status: Mapped[str] = mapped_column(String(20))
    note: Mapped[str] = mapped_column(String(200))


def seed(s: Session, seed_value: int) -> None:
    fake = Faker("en_US")
    fake.seed_instance(seed_value + 4)
    rng = random.Random(seed_value + 4)
    cities = [fake.unique.city() for _ in range(12)]
    for i, code in enumerate(("NORTH", "SOUTH", "EAST", "WEST"), 1):
        s.add(Warehouse(id=i, code=f"WH-{code}", city=cities[i - 1]))
    vid = 0
    carrier_names = ("Swift Freight", "BlueLine Couriers", "Parcel Pilots", "Harbor Express", "Meridian Haul")
    for i, name in enumerate(carrier_names, 1):
        s.add(Carrier(id=i, name=name, active=i != 5))
        for _ in range(3):
            vid += 1
            s.add(Vehicle(id=vid, carrier_id=i,
                          plate=f"{rng.choice('ABCDEFGH')}{rng.randint(100, 999)}-{rng.randint(10, 99)}",
                          capacity_kg=rng.choice([500, 1200, 3500])))
    ev = 0
    for sid in range(1, 241):
        status = rng.choices(STATUSES, weights=[4, 5, 8, 1])[0]
        carrier = rng.randint(1, 4) if status != "created" or rng.random() < 0.4 else None
        shipped = NOW - dt.timedelta(hours=rng.randint(6, 240)) if status in ("in_transit", "delivered") else None
        delivered = shipped + dt.timedelta(hours=rng.randint(4, 72)) if status == "delivered" and shipped else None
        if delivered and delivered > NOW:
            delivered = NOW - dt.timedelta(hours=1)
        if delivered and shipped and delivered < shipped:
            delivered = shipped + dt.timedelta(hours=1)
        sh = Shipment(id=sid, tracking_no=f"TRK{700000 + sid * 13}", origin_id=rng.randint(1, 4), carrier_id=carrier,
                      recipient=fake.name(), destination_city=rng.choice(cities[4:]),
                      weight_g=rng.randint(200, 25_000), status=status, shipped_at=shipped, delivered_at=delivered)
        s.add(sh)
        for st, at in (("created", (shipped or NOW) - dt.timedelta(hours=3)), ("in_transit", shipped),
                       ("delivered", delivered)):
            if at is not None:
                ev += 1
                s.add(TrackingEvent(id=ev, shipment_id=sid, at=at, status=st, note=""))
