"""Clinic scheduling (Korean data, Faker `ko_KR`): departments, doctors, patients, appointments,
prescriptions, invoices. Amounts are whole won.

The domain's data: its tables and the seed that fills them (the tools are in `clinic_tools.py`).
"""

from __future__ import annotations

import datetime as dt
import random

from faker import Faker
from sqlalchemy import CheckConstraint, Date, DateTime, ForeignKey, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

TODAY = dt.date(2025, 3, 14)
NOW = dt.datetime(2025, 3, 14, 8, 0)
DEPTS = ("내과", "정형외과", "소아청소년과", "피부과", "이비인후과")
DRUGS = ("아목시실린", "이부프로펜", "아세트아미노펜", "세티리진", "오메프라졸", "메트포르민", "로라타딘")


class ClinicBase(DeclarativeBase):
    pass


class Department(ClinicBase):
    __tablename__ = "departments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(40), unique=True)


class Doctor(ClinicBase):
    __tablename__ = "doctors"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(40))
    department_id: Mapped[int] = mapped_column(ForeignKey("departments.id"))
    room: Mapped[str] = mapped_column(String(10))
    starts_hour: Mapped[int] = mapped_column(Integer)
    ends_hour: Mapped[int] = mapped_column(Integer)


class Patient(ClinicBase):
    __tablename__ = "patients"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(40))
    phone: Mapped[str] = mapped_column(String(20))
    birth_date: Mapped[dt.date] = mapped_column(Date)
    address: Mapped[str] = mapped_column(String(200))


class Appointment(ClinicBase):
    __tablename__ = "appointments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    patient_id: Mapped[int] = mapped_column(ForeignKey("patients.id"))
    doctor_id: Mapped[int] = mapped_column(ForeignKey("doctors.id"))
    starts_at: Mapped[dt.datetime] = mapped_column(DateTime)
    ends_at: Mapped[dt.datetime] = mapped_column(DateTime)
    status: Mapped[str] = mapped_column(String(20))
    __table_args__ = (CheckConstraint("ends_at > starts_at"),)


class Prescription(ClinicBase):
    __tablename__ = "prescriptions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    appointment_id: Mapped[int] = mapped_column(ForeignKey("appointments.id"))
    drug: Mapped[str] = mapped_column(String(80))
    dosage: Mapped[str] = mapped_column(String(80))
    days: Mapped[int] = mapped_column(Integer)
    __table_args__ = (CheckConstraint("days > 0 and days <= 90"),)


class Invoice(ClinicBase):
    __tablename__ = "invoices"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    appointment_id: Mapped[int] = mapped_column(ForeignKey("appointments.id"), unique=True)
    amount_won: Mapped[int] = mapped_column(Integer)
    paid_won: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20))
    __table_args__ = (CheckConstraint("paid_won >= 0 and paid_won <= amount_won"),)


def seed(s: Session, seed_value: int) -> None:
    fake = Faker("ko_KR")
    fake.seed_instance(seed_value + 3)
    rng = random.Random(seed_value + 3)
    for i, name in enumerate(DEPTS, 1):
        s.add(Department(id=i, name=name))
    doctors = []
    for i in range(1, 16):
        start = rng.choice([8, 9, 10])
        d = Doctor(id=i, name=fake.unique.name(), department_id=(i - 1) % len(DEPTS) + 1, room=f"{rng.randint(1, 5)}0{i % 10}",
                   starts_hour=start, ends_hour=start + rng.choice([8, 9]))
        s.add(d)
        doctors.append(d)
    for i in range(1, 91):
        s.add(Patient(id=i, name=fake.unique.name(), phone=fake.numerify("010-####-####"),
                      birth_date=fake.date_between(dt.date(1940, 1, 1), dt.date(2020, 12, 31)),
                      address=fake.address().replace("\n", " ")[:200]))
    appt = rx = inv = 0
    for d in doctors:
        for day_off in range(-10, 12):
            day = TODAY + dt.timedelta(days=day_off)
            if day.weekday() >= 5:
                continue
            for hour in rng.sample(range(d.starts_hour, d.ends_hour), 3):
                appt += 1
                start = dt.datetime.combine(day, dt.time(hour, rng.choice([0, 30])))
                past = start < NOW
                status = rng.choices(["completed", "cancelled", "no_show"], weights=[8, 1, 1])[0] if past else \
                    rng.choices(["booked", "cancelled"], weights=[9, 1])[0]
                s.add(Appointment(id=appt, patient_id=rng.randint(1, 90), doctor_id=d.id, starts_at=start,
                                  ends_at=start + dt.timedelta(minutes=30), status=status))
                if status == "completed":
                    inv += 1
                    amount = rng.choice([15_000, 22_000, 35_000, 48_000])
                    paid = rng.choice([amount, amount, 0, amount // 2])
                    s.add(Invoice(id=inv, appointment_id=appt, amount_won=amount, paid_won=paid,
                                  status="paid" if paid == amount else "unpaid"))
                    if rng.random() < 0.5:
                        rx += 1
                        s.add(Prescription(id=rx, appointment_id=appt, drug=rng.choice(DRUGS),
                                           dosage=rng.choice(["1일 3회 1정", "1일 2회 1정", "1일 1회 1정"]),
                                           days=rng.choice([3, 5, 7, 14])))
