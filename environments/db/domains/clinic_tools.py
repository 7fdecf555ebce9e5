"""The clinic domain's tools, the rules a refusal may name, its policy and the `Domain` itself
(its tables and seed data are in `clinic.py`)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session

from envhub.errors import AgentError
from environments.db.core import LIMIT, Domain, P, Tool, add, answer_tools, get_or_404, listing, row_dict, search
from environments.db.domains.clinic import (
    NOW,
    TODAY,
    Appointment,
    ClinicBase,
    Department,
    Doctor,
    Invoice,
    Patient,
    Prescription,
    seed,
)


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
