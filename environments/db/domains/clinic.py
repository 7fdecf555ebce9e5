"""Clinic scheduling (Korean data, Faker `ko_KR`): departments, doctors, patients, appointments,
prescriptions, invoices. Amounts are whole won."""

from __future__ import annotations

import datetime as dt
import random

from faker import Faker
from sqlalchemy import CheckConstraint, Date, DateTime, ForeignKey, Integer, String, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from environments.db.core import LIMIT, Domain, P, Tool, add, answer_tools, get_or_404, listing, row_dict, search
from envhub.errors import AgentError

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


def _appointment(s: Session, appointment_id: int) -> Appointment:
    return get_or_404(s, Appointment, appointment_id, "appointment")


def search_patients(s: Session, limit: int = 20, **f: object) -> dict:
    rows, total = search(s, Patient, f, text_cols=("name", "phone", "address"), limit=limit)
    return listing(rows, total, "patients")


def get_patient(s: Session, patient_id: int) -> dict:
    p = get_or_404(s, Patient, patient_id, "patient")
    appts = s.scalars(select(Appointment).where(Appointment.patient_id == p.id).order_by(Appointment.starts_at)).all()
    return {**row_dict(p), "appointments": [row_dict(a) for a in appts]}


def update_patient(s: Session, patient_id: int, **changes: object) -> dict:
    p = get_or_404(s, Patient, patient_id, "patient")
    if not changes:
        raise AgentError("nothing to update: give phone and/or address")
    for k, v in changes.items():
        setattr(p, k, v)
    return row_dict(p)


def search_doctors(s: Session, limit: int = 20, **f: object) -> dict:
    rows, total = search(s, Doctor, f, text_cols=("name",), limit=limit)
    return listing(rows, total, "doctors")


def list_departments(s: Session) -> dict:
    return {"departments": [row_dict(d) for d in s.scalars(select(Department).order_by(Department.id))]}


def list_appointments(s: Session, doctor_id: int | None = None, patient_id: int | None = None,
                      date: dt.date | None = None, status: str | None = None, limit: int = 50) -> dict:
    q = select(Appointment)
    if doctor_id is not None:
        q = q.where(Appointment.doctor_id == doctor_id)
    if patient_id is not None:
        q = q.where(Appointment.patient_id == patient_id)
    if status is not None:
        q = q.where(Appointment.status == status)
    rows = [a for a in s.scalars(q.order_by(Appointment.starts_at, Appointment.id))
            if date is None or a.starts_at.date() == date]
    return {"appointments": [row_dict(a) for a in rows[:limit]], "count": min(limit, len(rows)), "total": len(rows)}


def _check_slot(s: Session, doctor: Doctor, patient_id: int, start: dt.datetime, end: dt.datetime,
                ignore: int | None = None) -> None:
    if start < NOW:
        raise AgentError("appointments cannot be booked in the past")
    if start.weekday() >= 5:
        raise AgentError("the clinic is closed on weekends")
    if start.hour < doctor.starts_hour or end > dt.datetime.combine(start.date(), dt.time(doctor.ends_hour)):
        raise AgentError(f"doctor {doctor.id} works {doctor.starts_hour:02d}:00-{doctor.ends_hour:02d}:00")
    for a in s.scalars(select(Appointment).where(Appointment.status == "booked", Appointment.id != (ignore or 0))):
        if a.starts_at < end and start < a.ends_at:
            if a.doctor_id == doctor.id:
                raise AgentError(f"doctor {doctor.id} already has appointment {a.id} at {a.starts_at:%H:%M}")
            if a.patient_id == patient_id:
                raise AgentError(f"patient {patient_id} already has appointment {a.id} at {a.starts_at:%H:%M}")


def book_appointment(s: Session, patient_id: int, doctor_id: int, starts_at: dt.datetime, minutes: int = 30) -> dict:
    get_or_404(s, Patient, patient_id, "patient")
    doctor = get_or_404(s, Doctor, doctor_id, "doctor")
    end = starts_at + dt.timedelta(minutes=minutes)
    _check_slot(s, doctor, patient_id, starts_at, end)
    return row_dict(add(s, Appointment(patient_id=patient_id, doctor_id=doctor.id, starts_at=starts_at, ends_at=end,
                                       status="booked")))


def reschedule_appointment(s: Session, appointment_id: int, starts_at: dt.datetime) -> dict:
    a = _appointment(s, appointment_id)
    if a.status != "booked":
        raise AgentError(f"appointment {a.id} is {a.status}; only booked appointments can be moved")
    end = starts_at + (a.ends_at - a.starts_at)
    _check_slot(s, get_or_404(s, Doctor, a.doctor_id, "doctor"), a.patient_id, starts_at, end, ignore=a.id)
    a.starts_at, a.ends_at = starts_at, end
    return row_dict(a)


def cancel_appointment(s: Session, appointment_id: int) -> dict:
    a = _appointment(s, appointment_id)
    if a.status != "booked":
        raise AgentError(f"appointment {a.id} is {a.status}; only booked appointments can be cancelled")
    a.status = "cancelled"
    return row_dict(a)


def complete_appointment(s: Session, appointment_id: int, fee: int) -> dict:
    a = _appointment(s, appointment_id)
    if a.status != "booked":
        raise AgentError(f"appointment {a.id} is {a.status}; only booked appointments can be completed")
    if a.starts_at.date() > TODAY:
        raise AgentError(f"appointment {a.id} is on {a.starts_at.date()}, in the future")
    a.status = "completed"
    inv = add(s, Invoice(appointment_id=a.id, amount_won=fee, paid_won=0, status="unpaid"))
    return {**row_dict(a), "invoice": row_dict(inv)}


def add_prescription(s: Session, appointment_id: int, drug: str, dosage: str, days: int) -> dict:
    a = _appointment(s, appointment_id)
    if a.status != "completed":
        raise AgentError(f"appointment {a.id} is {a.status}; prescriptions need a completed appointment")
    return row_dict(add(s, Prescription(appointment_id=a.id, drug=drug, dosage=dosage, days=days)))


def get_invoice(s: Session, invoice_id: int) -> dict:
    return row_dict(get_or_404(s, Invoice, invoice_id, "invoice"))


def list_invoices(s: Session, limit: int = 20, **f: object) -> dict:
    rows, total = search(s, Invoice, f, limit=limit)
    return listing(rows, total, "invoices")


def pay_invoice(s: Session, invoice_id: int, amount: int) -> dict:
    inv = get_or_404(s, Invoice, invoice_id, "invoice")
    due = inv.amount_won - inv.paid_won
    if due == 0:
        raise AgentError(f"invoice {inv.id} is already paid in full")
    if amount > due:
        raise AgentError(f"payment of {amount} won exceeds the {due} won due on invoice {inv.id}")
    inv.paid_won += amount
    inv.status = "paid" if inv.paid_won == inv.amount_won else "unpaid"
    return row_dict(inv)


AP = P("integer", "Appointment id.", minimum=1)

RULES = {
    "outside_hours": "진료 시간 밖(주말 포함)의 예약; figure: 요청한 날의 요일",
    "time_conflict": "의사나 환자의 예약이 그 시간에 겹침; figure: 이미 있는 예약의 번호(id)",
    "not_booked": "예약 상태(booked)가 아닌 진료는 취소·변경 불가; figure: 그 진료의 상태",
    "not_completed": "완료되지 않은 진료에는 처방 불가; figure: 그 진료의 상태",
    "over_balance": "수납액이 청구 잔액을 넘음; figure: 남은 청구 잔액",
}

TOOLS = [
    Tool("search_patients", "Find patients by name, phone or address (substring match).",
         {"name": P("string", required=False, max_len=40), "phone": P("string", required=False, max_len=20),
          "address": P("string", required=False), "limit": LIMIT}, search_patients),
    Tool("get_patient", "A patient with their appointments.", {"patient_id": P("integer", minimum=1)}, get_patient),
    Tool("update_patient", "Change a patient's phone or address.",
         {"patient_id": P("integer", minimum=1), "phone": P("string", required=False, max_len=20),
          "address": P("string", required=False)}, update_patient, writes=True),
    Tool("list_departments", "All departments.", {}, list_departments),
    Tool("search_doctors", "Find doctors by name or department.",
         {"name": P("string", required=False, max_len=40), "department_id": P("integer", required=False, minimum=1),
          "limit": LIMIT}, search_doctors),
    Tool("list_appointments", "Appointments by doctor, patient, date and/or status.",
         {"doctor_id": P("integer", required=False, minimum=1), "patient_id": P("integer", required=False, minimum=1),
          "date": P("date", required=False),
          "status": P("string", required=False, enum=("booked", "completed", "cancelled", "no_show")),
          "limit": P("integer", required=False, minimum=1, maximum=200)}, list_appointments),
    Tool("book_appointment", "Book an appointment within the doctor's hours, on a weekday, with no overlaps.",
         {"patient_id": P("integer", minimum=1), "doctor_id": P("integer", minimum=1), "starts_at": P("datetime"),
          "minutes": P("integer", required=False, minimum=10, maximum=120)}, book_appointment, writes=True),
    Tool("reschedule_appointment", "Move a booked appointment to a new start time.",
         {"appointment_id": AP, "starts_at": P("datetime")}, reschedule_appointment, writes=True),
    Tool("cancel_appointment", "Cancel a booked appointment.", {"appointment_id": AP}, cancel_appointment,
         writes=True),
    Tool("complete_appointment", "Mark a booked appointment (today or earlier) completed and invoice the fee.",
         {"appointment_id": AP, "fee": P("integer", "Fee in won.", minimum=1000, maximum=10_000_000)},
         complete_appointment, writes=True),
    Tool("add_prescription", "Prescribe a drug for a completed appointment.",
         {"appointment_id": AP, "drug": P("string", max_len=80), "dosage": P("string", max_len=80),
          "days": P("integer", minimum=1, maximum=90)}, add_prescription, writes=True),
    Tool("get_invoice", "One invoice.", {"invoice_id": P("integer", minimum=1)}, get_invoice),
    Tool("list_invoices", "Invoices by appointment or status.",
         {"appointment_id": P("integer", required=False, minimum=1),
          "status": P("string", required=False, enum=("paid", "unpaid")), "limit": LIMIT}, list_invoices),
    Tool("pay_invoice", "Record a payment in won (never more than is due).",
         {"invoice_id": P("integer", minimum=1), "amount": P("integer", "Won.", minimum=1, maximum=10_000_000)},
         pay_invoice, writes=True),
    *answer_tools(RULES),
]

POLICY = ("정책: 진료 예약은 평일 의사 진료 시간 안에서만 가능하며 의사와 환자 모두 시간이 겹치면 안 됩니다. "
          "예약 상태(booked)인 진료만 취소·변경할 수 있습니다. 처방은 완료된 진료에만 가능합니다. "
          "수납액은 청구 잔액을 넘을 수 없습니다. 오늘은 2025-03-14(금)입니다.")

DOMAIN = Domain(name="clinic", title="Clinic scheduling (Korean)", language="ko", base=ClinicBase, seed=seed,
                tools=TOOLS, today=TODAY, policy=POLICY)
