"""HR and payroll: departments, employees, shifts, leave requests, payslips.

The domain's data: its tables and the seed that fills them (the tools are in `hr_tools.py`).
"""

from __future__ import annotations

import datetime as dt
import random

from faker import Faker
from sqlalchemy import CheckConstraint, Date, DateTime, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

TODAY = dt.date(2025, 3, 14)
DEPARTMENTS = ("Operations", "Engineering", "Sales", "Support")
TITLES = {"Operations": ["Warehouse Associate", "Shift Lead", "Logistics Planner"],
          "Engineering": ["Software Engineer", "QA Analyst", "Site Reliability Engineer"],
          "Sales": ["Account Executive", "Sales Associate", "Sales Manager"],
          "Support": ["Support Agent", "Support Specialist", "Team Lead"]}
ROLES = ("front desk", "floor", "on-call", "inventory")
MAX_SHIFT_H = 12
MAX_RAISE = 0.20


class HrBase(DeclarativeBase):
    pass


class Department(HrBase):
    __tablename__ = "departments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(80), unique=True)
    budget_cents: Mapped[int] = mapped_column(Integer)


class Employee(HrBase):
    __tablename__ = "employees"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(120))
    email: Mapped[str] = mapped_column(String(200), unique=True)
    department_id: Mapped[int] = mapped_column(ForeignKey("departments.id"))
    title: Mapped[str] = mapped_column(String(80))
    salary_cents: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20))
    hired_on: Mapped[dt.date] = mapped_column(Date)
    leave_balance: Mapped[int] = mapped_column(Integer)
    __table_args__ = (CheckConstraint("salary_cents > 0"), CheckConstraint("leave_balance >= 0"))


class Shift(HrBase):
    __tablename__ = "shifts"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    employee_id: Mapped[int] = mapped_column(ForeignKey("employees.id"))
    starts_at: Mapped[dt.datetime] = mapped_column(DateTime)
    ends_at: Mapped[dt.datetime] = mapped_column(DateTime)
    role: Mapped[str] = mapped_column(String(40))
    __table_args__ = (CheckConstraint("ends_at > starts_at"),)


class LeaveRequest(HrBase):
    __tablename__ = "leave_requests"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    employee_id: Mapped[int] = mapped_column(ForeignKey("employees.id"))
    start_date: Mapped[dt.date] = mapped_column(Date)
    days: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20))
    __table_args__ = (CheckConstraint("days > 0"),)


class Payslip(HrBase):
    __tablename__ = "payslips"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    employee_id: Mapped[int] = mapped_column(ForeignKey("employees.id"))
    period: Mapped[str] = mapped_column(String(7))
    gross_cents: Mapped[int] = mapped_column(Integer)
    issued_on: Mapped[dt.date] = mapped_column(Date)
    __table_args__ = (UniqueConstraint("employee_id", "period"),)


def seed(s: Session, seed_value: int) -> None:
    fake = Faker("en_US")
    fake.seed_instance(seed_value + 2)
    rng = random.Random(seed_value + 2)
    for i, name in enumerate(DEPARTMENTS, 1):
        s.add(Department(id=i, name=name, budget_cents=rng.randint(20, 60) * 10_000_000))
    shift_id = leave_id = slip_id = 0
    for eid in range(1, 81):
        name = fake.unique.name()
        dept = (eid - 1) % len(DEPARTMENTS) + 1
        status = "terminated" if rng.random() < 0.07 else "active"
        salary = rng.randint(42, 160) * 1_000_00
        s.add(Employee(id=eid, name=name, email=f"{name.lower().replace(' ', '.')}@corp.test", department_id=dept,
                       title=rng.choice(TITLES[DEPARTMENTS[dept - 1]]), salary_cents=salary, status=status,
                       hired_on=TODAY - dt.timedelta(days=rng.randint(40, 4000)), leave_balance=rng.randint(0, 25)))
        if status != "active":
            continue
        for d in rng.sample(range(-3, 10), 4):
            shift_id += 1
            start = dt.datetime.combine(TODAY + dt.timedelta(days=d), dt.time(rng.choice([6, 8, 9, 14])))
            s.add(Shift(id=shift_id, employee_id=eid, starts_at=start,
                        ends_at=start + dt.timedelta(hours=rng.choice([4, 6, 8])), role=rng.choice(ROLES)))
        if rng.random() < 0.35:
            leave_id += 1
            s.add(LeaveRequest(id=leave_id, employee_id=eid, start_date=TODAY + dt.timedelta(days=rng.randint(10, 60)),
                               days=rng.randint(1, 12), status=rng.choices(["pending", "approved", "rejected"],
                                                                           weights=[5, 3, 1])[0]))
        slip_id += 1
        s.add(Payslip(id=slip_id, employee_id=eid, period="2025-02", gross_cents=salary // 12,
                      issued_on=dt.date(2025, 2, 28)))
