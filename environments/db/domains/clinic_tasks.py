"""Task intents for the clinic domain; prompts are in Korean."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from environments.db.domains.clinic import (
    DRUGS,
    NOW,
    TODAY,
    Appointment,
    Department,
    Doctor,
    Invoice,
    Patient,
    Prescription,
)
from environments.db.intents import Ctx, Draft, call, grounds, items, refuse, scalar

#: A day of the week as a refusal may name it (Monday first, as `date.weekday()` counts).
WEEKDAY_NAMES = [
    ("월요일", "월", "monday", "mon"),
    ("화요일", "화", "tuesday", "tue"),
    ("수요일", "수", "wednesday", "wed"),
    ("목요일", "목", "thursday", "thu"),
    ("금요일", "금", "friday", "fri"),
    ("토요일", "토", "saturday", "sat"),
    ("일요일", "일", "sunday", "sun"),
]

def _patients(c: Ctx) -> list[Patient]:
    return list(c.s.scalars(select(Patient).order_by(Patient.id)))


def _doctors(c: Ctx) -> list[Doctor]:
    return list(c.s.scalars(select(Doctor).order_by(Doctor.id)))


def _appts(c: Ctx, status: str) -> list[Appointment]:
    return list(c.s.scalars(select(Appointment).where(Appointment.status == status).order_by(Appointment.id)))


def _free(c: Ctx, d: Doctor, patient_id: int) -> dt.datetime:
    booked = _appts(c, "booked")
    for _ in range(80):
        day = TODAY + dt.timedelta(days=c.rng.randint(3, 12))
        if day.weekday() >= 5:
            continue
        start = dt.datetime.combine(day, dt.time(c.rng.randint(d.starts_hour, d.ends_hour - 1), c.pick([0, 30])))
        end = start + dt.timedelta(minutes=30)
        if all(not (a.starts_at < end and start < a.ends_at and (a.doctor_id == d.id or a.patient_id == patient_id))
               for a in booked):
            return start
    raise LookupError("no free slot")


def update_phone(c: Ctx) -> Draft:
    p = c.pick(_patients(c))
    phone = f"010-{c.rng.randint(1000, 9999)}-{c.rng.randint(1000, 9999)}"
    prompt = c.say(f"{p.name} 환자(생년월일 {p.birth_date})의 연락처가 {phone}(으)로 바뀌었습니다. 환자 정보를 수정해 주세요.",
                   f"환자 {p.name}님의 전화번호를 {phone}(으)로 변경해 주세요.")
    return Draft("update-phone", f"{p.name} 연락처 변경", prompt,
                 [call("search_patients", name=p.name), call("update_patient", patient_id=p.id, phone=phone)], "write")


def book(c: Ctx) -> Draft:
    p = c.pick(_patients(c))
    d = c.pick(_doctors(c))
    start = _free(c, d, p.id)
    dept = c.s.get(Department, d.department_id)
    prompt = c.say(f"{p.name} 환자(환자번호 {p.id})를 {dept.name} {d.name} 선생님께 {start:%Y-%m-%d %H:%M}에 30분 진료로 "
                   "예약해 주세요.",
                   f"{start:%m월 %d일 %H시 %M분}에 {d.name} 의사(의사번호 {d.id})에게 환자번호 {p.id} {p.name}님 예약을 "
                   "잡아 주세요. 2025년이고 진료 시간은 30분입니다.")
    return Draft("book-appointment", f"{p.name} 진료 예약", prompt,
                 [call("list_appointments", doctor_id=d.id, date=start.date().isoformat()),
                  call("book_appointment", patient_id=p.id, doctor_id=d.id, starts_at=f"{start:%Y-%m-%dT%H:%M}",
                       minutes=30)], "write", difficulty="medium")


def cancel(c: Ctx) -> Draft:
    a = c.pick(_appts(c, "booked"))
    p, d = c.s.get(Patient, a.patient_id), c.s.get(Doctor, a.doctor_id)
    prompt = c.say(f"{p.name} 환자가 {a.starts_at:%Y-%m-%d %H:%M} {d.name} 선생님 진료 예약을 취소하고 싶어 합니다. 처리해 주세요.",
                   f"예약번호 {a.id}번({p.name} 환자) 진료를 취소해 주세요.")
    return Draft("cancel-appointment", f"예약 {a.id} 취소", prompt,
                 [call("list_appointments", patient_id=p.id, status="booked"),
                  call("cancel_appointment", appointment_id=a.id)], "write")


def reschedule(c: Ctx) -> Draft:
    a = c.pick([x for x in _appts(c, "booked") if x.starts_at.date() > TODAY])
    d = c.s.get(Doctor, a.doctor_id)
    start = _free(c, d, a.patient_id)
    prompt = c.say(f"예약번호 {a.id}번 진료를 {start:%Y-%m-%d %H:%M}(으)로 옮겨 주세요.",
                   f"{c.s.get(Patient, a.patient_id).name} 환자의 {a.starts_at:%m월 %d일} 예약(번호 {a.id})을 "
                   f"{start:%Y-%m-%d %H:%M}(으)로 변경해 주세요.")
    return Draft("reschedule", f"예약 {a.id} 변경", prompt,
                 [call("reschedule_appointment", appointment_id=a.id, starts_at=f"{start:%Y-%m-%dT%H:%M}")], "write",
                 difficulty="medium")


def complete_and_prescribe(c: Ctx) -> Draft | None:
    today = [a for a in _appts(c, "booked") if a.starts_at.date() == TODAY]
    a = c.pick(today)
    fee = c.pick([15000, 22000, 35000])
    drug, days = c.pick(DRUGS), c.pick([3, 5, 7])
    dosage = "1일 3회 1정"
    p = c.s.get(Patient, a.patient_id)
    prompt = c.say(f"오늘 {p.name} 환자의 진료(예약번호 {a.id})가 끝났습니다. 진료비 {fee}원으로 완료 처리하고 {drug}을(를) "
                   f"{dosage}, {days}일분 처방해 주세요.",
                   f"예약 {a.id}번을 완료로 처리(진료비 {fee}원)한 뒤 {drug} {days}일분({dosage}) 처방을 등록해 주세요.")
    return Draft("complete-and-prescribe", f"예약 {a.id} 완료 및 처방", prompt,
                 [call("complete_appointment", appointment_id=a.id, fee=fee),
                  call("add_prescription", appointment_id=a.id, drug=drug, dosage=dosage, days=days)], "write",
                 difficulty="medium", tags=["multi-entity"])


def pay(c: Ctx) -> Draft:
    inv = c.pick([i for i in c.s.scalars(select(Invoice).where(Invoice.status == "unpaid").order_by(Invoice.id))])
    due = inv.amount_won - inv.paid_won
    p = c.s.get(Patient, c.s.get(Appointment, inv.appointment_id).patient_id)
    prompt = c.say(f"{p.name} 환자가 청구서 {inv.id}번의 남은 금액 {due}원을 모두 냈습니다. 수납 처리해 주세요.",
                   f"청구서 번호 {inv.id}에 {due}원 수납을 기록해 주세요.")
    return Draft("pay-invoice", f"청구서 {inv.id} 수납", prompt,
                 [call("get_invoice", invoice_id=inv.id), call("pay_invoice", invoice_id=inv.id, amount=due)], "write")


def cancel_doctor_day(c: Ctx) -> Draft | None:
    d = c.pick(_doctors(c))
    days = sorted({a.starts_at.date() for a in _appts(c, "booked") if a.doctor_id == d.id and a.starts_at.date() > TODAY})
    # A drawn stretch of the doctor's booked days: always the first ten made one doctor's list of
    # appointment ids nearly the same on every database (a memorised call list fit, issue #38).
    k = c.rng.randint(7, 12)
    start = c.rng.randint(0, max(0, len(days) - k))
    span = days[start:start + k]
    if not span:
        return None
    targets = [a for a in _appts(c, "booked") if a.doctor_id == d.id and a.starts_at.date() in span]
    if len(targets) < 15:
        return None
    prompt = c.say(f"{d.name} 선생님(의사번호 {d.id})이 {span[0]}부터 {span[-1]}까지 학회에 참석합니다. 이 기간의 "
                   "예약(booked 상태)을 모두 취소해 주세요.",
                   f"의사번호 {d.id} {d.name} 선생님의 {span[0]} ~ {span[-1]} 예약을 전부 취소 처리해 주세요.")
    return Draft("cancel-doctor-leave", f"{d.name} 학회 기간 예약 취소", prompt,
                 [call("list_appointments", doctor_id=d.id, status="booked", limit=200)]
                 + [call("cancel_appointment", appointment_id=a.id) for a in targets], "write",
                 difficulty="hard", tags=["long"])


def ask_count(c: Ctx) -> Draft:
    d = c.pick(_doctors(c))
    day = c.pick(sorted({a.starts_at.date() for a in _appts(c, "booked") if a.doctor_id == d.id}))
    n = len([a for a in _appts(c, "booked") if a.doctor_id == d.id and a.starts_at.date() == day])
    prompt = c.say(f"{day}에 {d.name} 선생님(의사번호 {d.id})의 예약(booked)은 몇 건인가요?",
                   f"의사번호 {d.id}번 선생님의 {day} 예약 건수를 알려 주세요. 숫자만 답하세요.")
    return Draft("ask-booked-count", f"{d.name} {day} 예약 수", prompt,
                 [call("list_appointments", doctor_id=d.id, date=day.isoformat(), status="booked"),
                  call("submit_answer", answer=str(n))], "read", answer=scalar(n, f"{n}건"))


def ask_due(c: Ctx) -> Draft:
    inv = c.pick(list(c.s.scalars(select(Invoice).where(Invoice.status == "unpaid").order_by(Invoice.id))))
    due = inv.amount_won - inv.paid_won
    prompt = c.say(f"청구서 {inv.id}번의 미수금은 얼마인가요? 금액(원)만 답하세요.",
                   f"청구서 번호 {inv.id}에 아직 남아 있는 금액을 알려 주세요.")
    return Draft("ask-due", f"청구서 {inv.id} 잔액", prompt,
                 [call("get_invoice", invoice_id=inv.id), call("submit_answer", answer=str(due))], "read",
                 answer=scalar(due))


def ask_prescribed(c: Ctx) -> Draft | None:
    p = c.pick(_patients(c))
    drugs = sorted({rx.drug for rx in c.s.scalars(select(Prescription)) if c.s.get(
        Appointment, rx.appointment_id).patient_id == p.id})
    if not 1 <= len(drugs) <= 4:
        return None
    prompt = c.say(f"{p.name} 환자(환자번호 {p.id})가 지금까지 처방받은 약을 모두 알려 주세요.",
                   f"환자번호 {p.id}번에게 처방된 약 이름을 쉼표로 구분해 답해 주세요.")
    return Draft("ask-prescriptions", f"{p.name} 처방 약", prompt,
                 [call("get_patient", patient_id=p.id), call("submit_answer", answer=", ".join(drugs))], "read",
                 answer=items(*[[x] for x in drugs]), difficulty="medium")


def ask_doctor_of(c: Ctx) -> Draft:
    a = c.pick([x for x in _appts(c, "booked") if x.starts_at > NOW])
    p, d = c.s.get(Patient, a.patient_id), c.s.get(Doctor, a.doctor_id)
    prompt = c.say(f"{p.name} 환자의 {a.starts_at:%Y-%m-%d %H:%M} 예약 담당 의사는 누구인가요?",
                   f"예약번호 {a.id}번의 담당 의사 이름을 알려 주세요.")
    return Draft("ask-doctor", f"예약 {a.id} 담당 의사", prompt,
                 [call("list_appointments", patient_id=p.id), call("search_doctors", name=d.name),
                  call("submit_answer", answer=d.name)], "read", answer=scalar(d.name, d.id))


def refuse_weekend(c: Ctx) -> Draft:
    p = c.pick(_patients(c))
    d = c.pick(_doctors(c))
    day = TODAY + dt.timedelta(days=c.pick([1, 2, 8, 9]))  # Saturdays and Sundays
    start = dt.datetime.combine(day, dt.time(d.starts_hour + 1))
    g = grounds("outside_hours", *WEEKDAY_NAMES[day.weekday()])
    prompt = c.say(f"{p.name} 환자를 {start:%Y-%m-%d %H:%M}에 {d.name} 선생님께 예약해 주세요.",
                   f"환자번호 {p.id}번을 의사번호 {d.id}번에게 {start:%Y-%m-%d %H:%M} 진료로 잡아 주세요.")
    return Draft("refuse-weekend", f"주말 예약 {p.name}", prompt,
                 [call("search_doctors", name=d.name), refuse(g, "주말에는 진료하지 않습니다")], "refusal", grounds=g,
                 forbidden=[call("book_appointment", patient_id=p.id, doctor_id=d.id,
                                 starts_at=f"{start:%Y-%m-%dT%H:%M}")], tags=["policy"])


def refuse_double_book(c: Ctx) -> Draft:
    a = c.pick([x for x in _appts(c, "booked") if x.starts_at.date() > TODAY])
    d = c.s.get(Doctor, a.doctor_id)
    p = c.pick([x for x in _patients(c) if x.id != a.patient_id])
    g = grounds("time_conflict", a.id)
    prompt = c.say(f"{p.name} 환자를 {d.name} 선생님께 {a.starts_at:%Y-%m-%d %H:%M}에 예약해 주세요. 다른 시간은 안 된답니다.",
                   f"환자번호 {p.id}번을 {a.starts_at:%Y-%m-%d %H:%M}에 의사번호 {d.id}번으로 예약해 주세요 (그 시간만 가능).")
    return Draft("refuse-double-book", f"중복 예약 {d.name}", prompt,
                 [call("list_appointments", doctor_id=d.id, date=a.starts_at.date().isoformat()),
                  refuse(g, "해당 시간에 이미 예약이 있습니다")], "refusal", grounds=g,
                 forbidden=[call("book_appointment", patient_id=p.id, doctor_id=d.id,
                                 starts_at=f"{a.starts_at:%Y-%m-%dT%H:%M}")], difficulty="medium", tags=["policy"])


def refuse_overpay(c: Ctx) -> Draft:
    inv = c.pick(list(c.s.scalars(select(Invoice).where(Invoice.status == "unpaid").order_by(Invoice.id))))
    over = inv.amount_won - inv.paid_won + c.pick([5000, 10000])
    g = grounds("over_balance", inv.amount_won - inv.paid_won)
    prompt = c.say(f"청구서 {inv.id}번에 {over}원 수납을 기록해 주세요.",
                   f"환자가 청구서 번호 {inv.id}에 대해 {over}원을 냈다고 합니다. 그대로 수납 처리해 주세요.")
    return Draft("refuse-overpay", f"청구서 {inv.id} 초과 수납", prompt,
                 [call("get_invoice", invoice_id=inv.id), refuse(g, "청구 잔액을 초과합니다")], "refusal", grounds=g,
                 forbidden=[call("pay_invoice", invoice_id=inv.id, amount=over)], tags=["policy"])


def _overlaps(a: Appointment, start: dt.datetime, end: dt.datetime) -> bool:
    return a.starts_at < end and start < a.ends_at


def _booked_by_day(c: Ctx) -> dict[dt.date, list[Appointment]]:
    out: dict[dt.date, list[Appointment]] = {}
    for a in _appts(c, "booked"):
        out.setdefault(a.starts_at.date(), []).append(a)
    return out


def ask_booked_patients(c: Ctx) -> Draft | None:
    # Not how many (1 to 3 on every doctor's day, so a constant earns it): who.
    d = c.pick(_doctors(c))
    day = c.pick(sorted({a.starts_at.date() for a in _appts(c, "booked") if a.doctor_id == d.id}))
    appts = [a for a in _appts(c, "booked") if a.doctor_id == d.id and a.starts_at.date() == day]
    names = sorted({c.s.get(Patient, a.patient_id).name for a in appts})
    if len(names) != len(appts):
        return None
    prompt = c.say(f"{day}에 {d.name} 선생님(의사번호 {d.id})께 예약(booked)된 환자는 누구인가요? "
                   "이름을 모두 알려 주세요.",
                   f"의사번호 {d.id}번 선생님의 {day} 예약 환자 명단을 쉼표로 구분해 알려 주세요.")
    return Draft("ask-booked-patients", f"{d.name} {day} 예약 환자", prompt,
                 [call("list_appointments", doctor_id=d.id, date=day.isoformat(), status="booked")]
                 + [call("get_patient", patient_id=a.patient_id) for a in appts]
                 + [call("submit_answer", answer=", ".join(names))], "read", answer=items(*[[n] for n in names]),
                 difficulty="medium", tags=["multi-entity"])


def ask_unpaid_invoices(c: Ctx) -> Draft:
    # Not one invoice's balance (a handful of fee levels, so a constant earns it): which invoices.
    unpaid: dict[int, list[Invoice]] = {}
    for inv in c.s.scalars(select(Invoice).where(Invoice.status == "unpaid").order_by(Invoice.id)):
        unpaid.setdefault(c.s.get(Appointment, inv.appointment_id).patient_id, []).append(inv)
    p = c.s.get(Patient, c.pick(sorted(unpaid)))
    done = [a for a in c.s.scalars(select(Appointment).where(Appointment.patient_id == p.id,
                                                             Appointment.status == "completed")
                                   .order_by(Appointment.starts_at, Appointment.id))]
    ids = [str(i.id) for i in unpaid[p.id]]
    prompt = c.say(f"{p.name} 환자(환자번호 {p.id})의 청구서 중 아직 다 수납되지 않은 것은 어느 것인가요? "
                   "청구서 번호를 알려 주세요.",
                   f"환자번호 {p.id}번 {p.name}님의 미납 청구서 번호를 모두 알려 주세요.")
    return Draft("ask-unpaid-invoices", f"{p.name} 미납 청구서", prompt,
                 [call("get_patient", patient_id=p.id)]
                 + [call("list_invoices", appointment_id=a.id) for a in done]
                 + [call("submit_answer", answer=", ".join(ids))], "read", answer=items(*[[i] for i in ids]),
                 difficulty="hard", tags=["multi-entity"])


def ask_booked_phone(c: Ctx) -> Draft:
    a = c.pick([x for x in _appts(c, "booked") if x.starts_at > NOW])
    p, d = c.s.get(Patient, a.patient_id), c.s.get(Doctor, a.doctor_id)
    prompt = c.say(f"{a.starts_at:%Y-%m-%d %H:%M}에 {d.name} 선생님(의사번호 {d.id})께 예약된 환자에게 "
                   "연락해야 합니다. 그 환자의 전화번호는 무엇인가요?",
                   f"의사번호 {d.id}번 선생님의 {a.starts_at:%Y-%m-%d %H:%M} 예약 환자 연락처(전화번호)를 알려 주세요.")
    return Draft("ask-booked-phone", f"{d.name} {a.starts_at:%m-%d %H:%M} 예약 환자 연락처", prompt,
                 [call("list_appointments", doctor_id=d.id, date=a.starts_at.date().isoformat(), status="booked"),
                  call("get_patient", patient_id=p.id), call("submit_answer", answer=p.phone)], "read",
                 answer=scalar(p.phone), difficulty="medium", tags=["multi-entity"])


def ask_patient_doctors(c: Ctx) -> Draft | None:
    p = c.pick(_patients(c))
    seen = sorted({c.s.get(Doctor, a.doctor_id).name for a in c.s.scalars(
        select(Appointment).where(Appointment.patient_id == p.id, Appointment.status == "completed"))})
    if not 1 <= len(seen) <= 5:
        return None
    prompt = c.say(f"{p.name} 환자(환자번호 {p.id})가 진료를 마친(completed) 적이 있는 의사 선생님은 누구인가요? "
                   "이름을 모두 알려 주세요.",
                   f"환자번호 {p.id}번의 완료된 진료를 맡았던 의사 이름을 쉼표로 구분해 답해 주세요.")
    return Draft("ask-patient-doctors", f"{p.name} 진료 의사", prompt,
                 [call("list_appointments", patient_id=p.id, status="completed"), call("search_doctors", limit=20),
                  call("submit_answer", answer=", ".join(seen))], "read", answer=items(*[[n] for n in seen]),
                 difficulty="medium", tags=["multi-entity"])


def refuse_patient_conflict(c: Ctx) -> Draft:
    # The patient, not the doctor, is taken at that time: the figure is the patient's appointment.
    by_day = _booked_by_day(c)
    future = [a for a in _appts(c, "booked") if a.starts_at.date() > TODAY]
    c.rng.shuffle(future)
    doctors = _doctors(c)
    for a in future:  # the first appointment (in a drawn order) another doctor could take instead
        options = []
        for d in doctors:
            if d.id == a.doctor_id or not d.starts_hour <= a.starts_at.hour < d.ends_hour \
                    or a.ends_at > dt.datetime.combine(a.starts_at.date(), dt.time(d.ends_hour)):
                continue
            clash = [x for x in by_day[a.starts_at.date()] if _overlaps(x, a.starts_at, a.ends_at)
                     and (x.doctor_id == d.id or x.patient_id == a.patient_id)]
            if [x.id for x in clash] == [a.id]:
                options.append(d)
        if options:
            d = c.pick(options)
            break
    else:
        raise LookupError("no appointment another doctor is free for")
    p = c.s.get(Patient, a.patient_id)
    g = grounds("time_conflict", a.id)
    prompt = c.say(f"{p.name} 환자(환자번호 {p.id})를 {a.starts_at:%Y-%m-%d %H:%M}에 "
                   f"{d.name} 선생님(의사번호 {d.id})께 예약해 주세요.",
                   f"환자번호 {p.id}번을 의사번호 {d.id}번에게 {a.starts_at:%Y-%m-%d %H:%M} 진료로 잡아 주세요.")
    return Draft("refuse-patient-conflict", f"{p.name} 환자 중복 예약", prompt,
                 [call("list_appointments", patient_id=p.id, status="booked"),
                  refuse(g, "환자에게 같은 시간에 다른 예약이 있습니다")], "refusal", grounds=g,
                 forbidden=[call("book_appointment", patient_id=p.id, doctor_id=d.id,
                                 starts_at=f"{a.starts_at:%Y-%m-%dT%H:%M}")], difficulty="medium", tags=["policy"])


def refuse_reschedule_conflict(c: Ctx) -> Draft:
    booked = _appts(c, "booked")
    by_day = _booked_by_day(c)
    future = [a for a in booked if a.starts_at > NOW]
    c.rng.shuffle(future)
    for a in future:  # the first appointment (in a drawn order) with a slot of its doctor's to clash with
        options = []
        for b in booked:
            if b.id == a.id or b.doctor_id != a.doctor_id or b.starts_at.date() <= TODAY:
                continue
            end = b.starts_at + (a.ends_at - a.starts_at)
            clash = [x for x in by_day[b.starts_at.date()] if x.id != a.id and _overlaps(x, b.starts_at, end)
                     and (x.doctor_id == a.doctor_id or x.patient_id == a.patient_id)]
            if [x.id for x in clash] == [b.id]:
                options.append(b)
        if options:
            b = c.pick(options)
            break
    else:
        raise LookupError("no booked slot to move an appointment onto")
    d = c.s.get(Doctor, a.doctor_id)
    g = grounds("time_conflict", b.id)
    prompt = c.say(f"예약번호 {a.id}번 진료를 {b.starts_at:%Y-%m-%d %H:%M}(으)로 옮겨 주세요.",
                   f"{c.s.get(Patient, a.patient_id).name} 환자의 {d.name} 선생님 예약(번호 {a.id})을 "
                   f"{b.starts_at:%Y-%m-%d %H:%M}(으)로 변경해 주세요.")
    return Draft("refuse-reschedule-conflict", f"예약 {a.id} 변경 시간 중복", prompt,
                 [call("list_appointments", doctor_id=d.id, date=b.starts_at.date().isoformat(), status="booked"),
                  refuse(g, "그 시간에 이미 다른 예약이 있습니다")], "refusal", grounds=g,
                 forbidden=[call("reschedule_appointment", appointment_id=a.id,
                                 starts_at=f"{b.starts_at:%Y-%m-%dT%H:%M}")], difficulty="medium", tags=["policy"])


#: Not drawn (issue #38): `ask_count`, `ask_due` and `ask_prescribed`, whose answers (1 to 3
#: appointments, a few fee levels, seven drugs) repeat from one database to the next, and
#: `refuse_weekend` and `refuse_overpay`, whose figures (a weekday, a fee level) do too. They stay
#: for the tasks written from them.
INTENTS = [update_phone, book, ask_booked_patients, refuse_patient_conflict, cancel, cancel_doctor_day, pay,
           ask_unpaid_invoices, refuse_double_book, reschedule, ask_booked_phone, complete_and_prescribe,
           refuse_reschedule_conflict, ask_doctor_of, ask_patient_doctors]
