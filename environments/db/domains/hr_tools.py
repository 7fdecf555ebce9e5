"""The hr domain's tools, the rules a refusal may name, its policy and the `Domain` itself
(its tables and seed data are in `hr.py`)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session

from envhub.errors import AgentError
from environments.db.core import LIMIT, Domain, P, Tool, add, answer_tools, get_or_404, listing, money, row_dict, search
from environments.db.domains.hr import (
    MAX_RAISE,
    MAX_SHIFT_H,
    ROLES,
    TODAY,
    Department,
    Employee,
    HrBase,
    LeaveRequest,
    Payslip,
    Shift,
    seed,
)


def _employee(s: Session, employee_id: int) -> Employee:
    return get_or_404(s, Employee, employee_id, "employee")


def _active(e: Employee) -> None:
    if e.status != "active":
        raise AgentError(f"employee {e.id} is {e.status}")


def search_employees(s: Session, limit: int = 20, **f: object) -> dict:
    rows, total = search(s, Employee, f, text_cols=("name", "title", "email"), limit=limit)
    return listing(rows, total, "employees")


def get_employee(s: Session, employee_id: int) -> dict:
    e = _employee(s, employee_id)
    shifts = s.scalars(select(Shift).where(Shift.employee_id == e.id).order_by(Shift.starts_at)).all()
    leaves = s.scalars(select(LeaveRequest).where(LeaveRequest.employee_id == e.id).order_by(LeaveRequest.id)).all()
    return {**row_dict(e), "shifts": [row_dict(x) for x in shifts], "leave_requests": [row_dict(x) for x in leaves]}


def update_employee(s: Session, employee_id: int, **changes: object) -> dict:
    e = _employee(s, employee_id)
    if not changes:
        raise AgentError("nothing to update: give at least one of title, salary, department_id")
    _active(e)
    if "salary" in changes:
        new = int(changes.pop("salary"))  # type: ignore[call-overload]
        if abs(new - e.salary_cents) > e.salary_cents * MAX_RAISE:
            raise AgentError(f"salary changes are limited to 20% at a time (current {money(e.salary_cents)})")
        e.salary_cents = new
    if "department_id" in changes:
        get_or_404(s, Department, int(changes["department_id"]), "department")  # type: ignore[call-overload]
    for k, v in changes.items():
        setattr(e, k, v)
    return row_dict(e)


def terminate_employee(s: Session, employee_id: int) -> dict:
    e = _employee(s, employee_id)
    _active(e)
    e.status = "terminated"
    start = dt.datetime.combine(TODAY, dt.time(0))
    removed = 0
    for sh in s.scalars(select(Shift).where(Shift.employee_id == e.id, Shift.starts_at >= start)):
        s.delete(sh)
        removed += 1
    for lr in s.scalars(select(LeaveRequest).where(LeaveRequest.employee_id == e.id,
                                                   LeaveRequest.status == "pending")):
        lr.status = "rejected"
    return {**row_dict(e), "future_shifts_removed": removed}


def list_departments(s: Session) -> dict:
    return {"departments": [row_dict(d) for d in s.scalars(select(Department).order_by(Department.id))]}


def list_shifts(s: Session, employee_id: int | None = None, date: dt.date | None = None, limit: int = 50) -> dict:
    q = select(Shift)
    if employee_id is not None:
        q = q.where(Shift.employee_id == employee_id)
    rows = [r for r in s.scalars(q.order_by(Shift.starts_at, Shift.id)) if date is None or r.starts_at.date() == date]
    return {"shifts": [row_dict(r) for r in rows[:limit]], "count": min(len(rows), limit), "total": len(rows)}


def create_shift(s: Session, employee_id: int, starts_at: dt.datetime, ends_at: dt.datetime, role: str) -> dict:
    e = _employee(s, employee_id)
    _active(e)
    if ends_at <= starts_at:
        raise AgentError("a shift must end after it starts")
    if ends_at - starts_at > dt.timedelta(hours=MAX_SHIFT_H):
        raise AgentError(f"a shift cannot be longer than {MAX_SHIFT_H} hours")
    if starts_at.date() < TODAY:
        raise AgentError("shifts cannot be scheduled in the past")
    for other in s.scalars(select(Shift).where(Shift.employee_id == e.id)):
        if other.starts_at < ends_at and starts_at < other.ends_at:
            raise AgentError(f"overlaps shift {other.id} ({other.starts_at:%Y-%m-%d %H:%M}-{other.ends_at:%H:%M})")
    return row_dict(add(s, Shift(employee_id=e.id, starts_at=starts_at, ends_at=ends_at, role=role)))


def delete_shift(s: Session, shift_id: int) -> dict:
    sh = get_or_404(s, Shift, shift_id, "shift")
    if sh.starts_at.date() < TODAY:
        raise AgentError(f"shift {sh.id} is in the past and is kept for payroll")
    s.delete(sh)
    return {"deleted": shift_id}


def list_leave_requests(s: Session, limit: int = 20, **f: object) -> dict:
    rows, total = search(s, LeaveRequest, f, limit=limit)
    return listing(rows, total, "leave_requests")


def decide_leave(s: Session, request_id: int, approve: bool) -> dict:
    lr = get_or_404(s, LeaveRequest, request_id, "leave request")
    if lr.status != "pending":
        raise AgentError(f"leave request {lr.id} is already {lr.status}")
    e = _employee(s, lr.employee_id)
    if approve:
        if lr.days > e.leave_balance:
            raise AgentError(f"employee {e.id} has {e.leave_balance} leave days left; {lr.days} requested")
        e.leave_balance -= lr.days
    lr.status = "approved" if approve else "rejected"
    return {**row_dict(lr), "leave_balance": e.leave_balance}


def issue_payslip(s: Session, employee_id: int, period: str) -> dict:
    e = _employee(s, employee_id)
    _active(e)
    try:
        year, month = (int(x) for x in period.split("-"))
        dt.date(year, month, 1)
    except ValueError:
        raise AgentError(f"invalid period {period!r}; use YYYY-MM") from None
    if (year, month) > (TODAY.year, TODAY.month):
        raise AgentError("payslips cannot be issued for a future period")
    if s.scalar(select(Payslip.id).where(Payslip.employee_id == e.id, Payslip.period == period)):
        raise AgentError(f"employee {e.id} already has a payslip for {period}")
    return row_dict(add(s, Payslip(employee_id=e.id, period=period, gross_cents=e.salary_cents // 12,
                                   issued_on=TODAY)))


EID = P("integer", "Employee id.", minimum=1)

RULES = {
    "shift_overlap": "the shift would overlap another of the employee's shifts; figure: the id of that shift",
    "shift_too_long": "shifts last at most 12 hours; figure: the requested length in hours",
    "raise_over_limit": "salaries change by at most 20% at a time; figure: the current salary",
    "leave_balance": "leave is approved only within the leave balance; figure: the balance in days",
    "employee_terminated": "terminated employees get no shifts, raises or payslips; figure: the employee's id",
}

TOOLS = [
    Tool("search_employees", "Find employees by name, title, email, department or status.",
         {"name": P("string", required=False), "title": P("string", required=False),
          "email": P("string", required=False), "department_id": P("integer", required=False, minimum=1),
          "status": P("string", required=False, enum=("active", "terminated")), "limit": LIMIT}, search_employees),
    Tool("get_employee", "An employee with their shifts and leave requests.", {"employee_id": EID}, get_employee),
    Tool("update_employee", "Change an active employee's title, annual salary (at most 20% at a time) or department.",
         {"employee_id": EID, "title": P("string", required=False, max_len=80),
          "salary": P("money", "Annual salary in dollars.", required=False, minimum=1),
          "department_id": P("integer", required=False, minimum=1)}, update_employee, writes=True),
    Tool("terminate_employee", "Terminate an employee: removes their future shifts and rejects pending leave.",
         {"employee_id": EID}, terminate_employee, writes=True),
    Tool("list_departments", "All departments.", {}, list_departments),
    Tool("list_shifts", "Shifts, optionally of one employee and/or on one date.",
         {"employee_id": P("integer", required=False, minimum=1), "date": P("date", required=False),
          "limit": P("integer", required=False, minimum=1, maximum=200)}, list_shifts),
    Tool("create_shift", "Schedule a shift (no overlap with the employee's other shifts, at most 12 hours).",
         {"employee_id": EID, "starts_at": P("datetime"), "ends_at": P("datetime"),
          "role": P("string", enum=ROLES)}, create_shift, writes=True),
    Tool("delete_shift", "Remove a future shift.", {"shift_id": P("integer", minimum=1)}, delete_shift, writes=True),
    Tool("list_leave_requests", "Leave requests by employee and/or status.",
         {"employee_id": P("integer", required=False, minimum=1),
          "status": P("string", required=False, enum=("pending", "approved", "rejected")), "limit": LIMIT},
         list_leave_requests),
    Tool("approve_leave", "Approve a pending leave request (deducts the days from the balance).",
         {"request_id": P("integer", minimum=1)}, lambda s, request_id: decide_leave(s, request_id, True),
         writes=True),
    Tool("reject_leave", "Reject a pending leave request.", {"request_id": P("integer", minimum=1)},
         lambda s, request_id: decide_leave(s, request_id, False), writes=True),
    Tool("issue_payslip", "Issue the monthly payslip (annual salary / 12) for a period YYYY-MM.",
         {"employee_id": EID, "period": P("string", max_len=7)}, issue_payslip, writes=True),
    *answer_tools(RULES),
]

POLICY = ("Policy: shifts never overlap for one employee and last at most 12 hours; salaries change by at most 20% "
          "at a time; leave is approved only within the employee's leave balance; terminated employees get no "
          "shifts, raises or payslips.")

DOMAIN = Domain(name="hr", title="HR and payroll", language="en", base=HrBase, seed=seed, tools=TOOLS,
                today=TODAY, policy=POLICY)
