"""Task intents for the HR and payroll domain."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from environments.db.core import money
from environments.db.domains.hr import TODAY, Department, Employee, LeaveRequest, Shift
from environments.db.intents import Ctx, Draft, call, grounds, items, listed, refuse, scalar


def _active(c: Ctx) -> list[Employee]:
    return list(c.s.scalars(select(Employee).where(Employee.status == "active").order_by(Employee.id)))


def _free_slot(c: Ctx, e: Employee) -> tuple[dt.datetime, dt.datetime]:
    taken = list(c.s.scalars(select(Shift).where(Shift.employee_id == e.id)))
    for _ in range(50):
        day = TODAY + dt.timedelta(days=c.rng.randint(1, 14))
        start = dt.datetime.combine(day, dt.time(c.pick([7, 10, 13, 16])))
        end = start + dt.timedelta(hours=c.pick([4, 6, 8]))
        if not any(t.starts_at < end and start < t.ends_at for t in taken):
            return start, end
    raise LookupError("no free slot")


def raise_salary(c: Ctx) -> Draft:
    e = c.pick(_active(c))
    pct = c.pick([3, 5, 8, 10, 12])
    new = round(e.salary_cents * (100 + pct) / 100 / 100) * 100
    prompt = c.say(f"Give {e.name} a raise to ${money(new)} per year.",
                   f"{e.name}'s annual salary goes up to ${money(new)} after the review. Update it.",
                   f"Set the yearly salary of employee #{e.id} ({e.name}) to ${money(new)}.")
    return Draft("raise-salary", f"Raise for {e.name}", prompt,
                 [call("update_employee", employee_id=e.id, salary=new / 100)], "write")


def move_department(c: Ctx) -> Draft:
    e = c.pick(_active(c))
    dept = c.pick([d for d in c.s.scalars(select(Department).order_by(Department.id)) if d.id != e.department_id])
    title = c.pick(["Analyst", "Coordinator", "Specialist"])
    prompt = c.say(f"{e.name} moves to the {dept.name} department as {dept.name} {title}. Update their record.",
                   f"Transfer employee {e.name} to {dept.name}; their new title is '{dept.name} {title}'.")
    return Draft("move-department", f"Move {e.name} to {dept.name}", prompt,
                 [call("list_departments"),
                  call("update_employee", employee_id=e.id, department_id=dept.id, title=f"{dept.name} {title}")],
                 "write", difficulty="medium")


def schedule_shift(c: Ctx) -> Draft:
    e = c.pick(_active(c))
    start, end = _free_slot(c, e)
    role = c.pick(["front desk", "floor", "on-call", "inventory"])
    prompt = c.say(f"Schedule {e.name} for a {role} shift on {start:%Y-%m-%d} from {start:%H:%M} to {end:%H:%M}.",
                   f"Add a {role} shift for employee #{e.id} on {start:%Y-%m-%d}, {start:%H:%M}-{end:%H:%M}.")
    return Draft("schedule-shift", f"Shift for {e.name}", prompt,
                 [call("list_shifts", employee_id=e.id),
                  call("create_shift", employee_id=e.id, starts_at=f"{start:%Y-%m-%dT%H:%M}",
                       ends_at=f"{end:%Y-%m-%dT%H:%M}", role=role)], "write", difficulty="medium")


def drop_shift(c: Ctx) -> Draft:
    # One or two shifts of different people: one shift id among the ~200 future ones, the same ids
    # on every database, let a memorised `delete_shift` fit one task in a hundred (issue #38).
    future = [x for x in c.s.scalars(select(Shift).order_by(Shift.id)) if x.starts_at.date() > TODAY]
    first = c.pick(future)
    picked = [first]
    if c.rng.random() < 0.5:
        picked.append(c.pick([x for x in future if x.employee_id != first.employee_id]))
    picked.sort(key=lambda x: x.id)
    who = [(c.s.get(Employee, sh.employee_id), sh) for sh in picked]
    if len(who) == 1:
        (e, sh), = who
        prompt = c.say(f"Cancel {e.name}'s shift that starts {sh.starts_at:%Y-%m-%d %H:%M}.",
                       f"{e.name} can't make the {sh.starts_at:%Y-%m-%d} shift starting at {sh.starts_at:%H:%M}; "
                       "remove it from the schedule.")
    else:
        names = listed([f"{e.name}'s shift starting {sh.starts_at:%Y-%m-%d %H:%M}" for e, sh in who])
        prompt = c.say(f"Cancel {names}.", f"Two people called off; remove from the schedule {names}.")
    return Draft("cancel-shift", "Cancel " + " and ".join(f"a shift of {e.name}" for e, _ in who), prompt,
                 [a for e, sh in who for a in (call("list_shifts", employee_id=e.id),
                                                call("delete_shift", shift_id=sh.id))], "write")


def approve(c: Ctx) -> Draft:
    # Two or three requests at once: a database has a dozen approvable requests whose ids (1 to
    # ~26) every database shares, so one memorised `approve_leave` call fit many tasks (issue #38).
    fits = [x for x in c.s.scalars(select(LeaveRequest).where(LeaveRequest.status == "pending")
                                   .order_by(LeaveRequest.id))
            if x.days <= c.s.get(Employee, x.employee_id).leave_balance]
    k = c.pick([2, 3])
    if len(fits) < k:
        raise LookupError("too few approvable leave requests")
    chosen = sorted(c.rng.sample(fits, k), key=lambda x: x.id)
    who = [(c.s.get(Employee, lr.employee_id), lr) for lr in chosen]
    names = listed([f"{e.name} (starting {lr.start_date})" for e, lr in who])
    prompt = c.say(f"Approve the pending leave requests of {names}.",
                   f"HR signed off on these leave requests; approve each one: {names}.")
    return Draft("approve-leave", f"Approve {k} leave requests", prompt,
                 [a for e, lr in who for a in (call("list_leave_requests", employee_id=e.id, status="pending"),
                                                call("approve_leave", request_id=lr.id))],
                 "write", difficulty="medium", tags=["multi-entity"])


def terminate(c: Ctx) -> Draft:
    # The leaver's next shift goes to a colleague first: termination alone is one call on one of
    # ~74 employees, the same ids on every database (issue #38); the hand-over is a drawn pair.
    start = dt.datetime.combine(TODAY, dt.time(0))
    active = _active(c)
    upcoming = {x.id: sorted((s for s in c.s.scalars(select(Shift).where(Shift.employee_id == x.id))
                              if s.starts_at >= start), key=lambda s: (s.starts_at, s.id)) for x in active}
    e = c.pick([x for x in active if upcoming[x.id]])
    sh = upcoming[e.id][0]
    free = [x for x in active if x.id != e.id and x.department_id == e.department_id
            and not any(t.starts_at < sh.ends_at and sh.starts_at < t.ends_at
                        for t in c.s.scalars(select(Shift).where(Shift.employee_id == x.id)))]
    other = c.pick(free)
    when = f"{sh.starts_at:%Y-%m-%d} {sh.starts_at:%H:%M}-{sh.ends_at:%H:%M}"
    prompt = c.say(f"{e.name} has resigned effective today. First give their next shift ({when}, {sh.role}) to "
                   f"{other.name}, same times and role, then process the termination.",
                   f"Terminate employee #{e.id} ({e.name}); today is their last day. {other.name} takes over their "
                   f"{sh.role} shift of {when}: schedule it for them before the termination removes it.")
    return Draft("terminate", f"Terminate {e.name}, shift to {other.name}", prompt,
                 [call("list_shifts", employee_id=e.id),
                  call("create_shift", employee_id=other.id, starts_at=f"{sh.starts_at:%Y-%m-%dT%H:%M}",
                       ends_at=f"{sh.ends_at:%Y-%m-%dT%H:%M}", role=sh.role),
                  call("terminate_employee", employee_id=e.id)], "write",
                 difficulty="medium", tags=["multi-entity"])


def payroll_run(c: Ctx) -> Draft | None:
    # The period is drawn over two years and only staff already hired by its end are paid: a
    # department's staff list repeats across databases, so with the department alone a memorised
    # call list fit one task in twenty (issue #38). Every database already has 2025-02's payslips.
    dept = c.pick(list(c.s.scalars(select(Department).order_by(Department.id))))
    year, month = c.pick([(y, m) for y in (2023, 2024, 2025) for m in range(1, 13)
                          if (2023, 3) <= (y, m) <= (2025, 3) and (y, m) != (2025, 2)])
    period = f"{year}-{month:02d}"
    end = dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)
    staff = [e for e in _active(c) if e.department_id == dept.id and e.hired_on <= end]
    if len(staff) < 12:
        return None
    unpaid = staff.pop(c.rng.randrange(len(staff)))  # named in the prompt: this database's own people
    name = end.strftime("%B %Y")
    prompt = c.say(f"The {name} payroll was never run for {dept.name}. Issue a {period} payslip to every active "
                   f"employee of that department who was already on staff then (hired on or before {end}), except "
                   f"{unpaid.name}, who was on unpaid leave that month.",
                   f"Catch-up payroll for {period}: issue a payslip for that period to each active {dept.name} "
                   f"employee hired by {end}; later hires get none, and neither does {unpaid.name} (unpaid leave).")
    return Draft("payroll-run", f"{name} payroll for {dept.name}", prompt,
                 [call("search_employees", department_id=dept.id, status="active", limit=100)]
                 + [call("issue_payslip", employee_id=e.id, period=period) for e in staff], "write",
                 difficulty="hard", tags=["long"])


def ask_dept_payroll(c: Ctx) -> Draft:
    # Not the headcount (10 to 19 on every database, so a constant earns it) nor a whole department's
    # salaries (round thousands, so two databases' departments often sum alike): the salaries of the
    # staff hired since a drawn date, which puts a date in the prompt and a drawn subset in the sum.
    dept = c.pick(list(c.s.scalars(select(Department).order_by(Department.id))))
    staff = sorted((e for e in _active(c) if e.department_id == dept.id), key=lambda e: (e.hired_on, e.id))
    if len(staff) < 3:
        raise LookupError(f"too few active staff in {dept.name}")
    since = staff[c.rng.randint(1, len(staff) - 2)].hired_on
    total = sum(e.salary_cents for e in staff if e.hired_on >= since)
    prompt = c.say(f"What is the combined annual salary of the active {dept.name} employees hired on or after {since}?",
                   f"Budget check: add up the yearly salaries of the active {dept.name} staff who joined on {since} "
                   "or later, and report the total.")
    return Draft("ask-dept-payroll", f"Annual payroll of {dept.name} hires since {since}", prompt,
                 [call("list_departments"), call("search_employees", department_id=dept.id, status="active", limit=100),
                  call("submit_answer", answer=money(total))], "read", answer=scalar(money(total)),
                 difficulty="medium")


def ask_hire_date(c: Ctx) -> Draft:
    e = c.pick(_active(c))
    prompt = c.say(f"When did {e.name} join the company? Give the hire date (YYYY-MM-DD).",
                   f"Look up {e.name}'s hire date for their service anniversary card.")
    return Draft("ask-hire-date", f"Hire date of {e.name}", prompt,
                 [call("search_employees", name=e.name), call("submit_answer", answer=e.hired_on.isoformat())],
                 "read", answer=scalar(e.hired_on.isoformat()))


def ask_longest_serving(c: Ctx) -> Draft | None:
    dept = c.pick(list(c.s.scalars(select(Department).order_by(Department.id))))
    staff = sorted((e for e in _active(c) if e.department_id == dept.id), key=lambda e: e.hired_on)
    if len(staff) < 2 or staff[0].hired_on == staff[1].hired_on:
        return None
    prompt = c.say(f"Who is the longest-serving active employee in {dept.name}?",
                   f"Among active {dept.name} staff, who was hired first? Give their name.")
    return Draft("ask-longest-serving", f"Longest-serving in {dept.name}", prompt,
                 [call("list_departments"), call("search_employees", department_id=dept.id, status="active", limit=100),
                  call("submit_answer", answer=staff[0].name)], "read", answer=scalar(staff[0].name, staff[0].id),
                 difficulty="medium")


def ask_salary(c: Ctx) -> Draft:
    e = c.pick(_active(c))
    prompt = c.say(f"What is {e.name}'s annual salary?", f"Look up the yearly salary of {e.name}.")
    return Draft("ask-salary", f"Salary of {e.name}", prompt,
                 [call("search_employees", name=e.name), call("submit_answer", answer=money(e.salary_cents))], "read",
                 answer=scalar(money(e.salary_cents)))


def ask_on_shift(c: Ctx) -> Draft | None:
    day = TODAY + dt.timedelta(days=c.rng.randint(0, 8))
    role = c.pick(["front desk", "on-call", "inventory", "floor"])
    names = sorted({c.s.get(Employee, s.employee_id).name for s in c.s.scalars(select(Shift).where(Shift.role == role))
                    if s.starts_at.date() == day})
    if not 1 <= len(names) <= 6:
        return None
    prompt = c.say(f"Who works a {role} shift on {day}? List their names.",
                   f"List everyone scheduled for {role} duty on {day}.")
    return Draft("ask-on-shift", f"{role} shifts on {day}", prompt,
                 [call("list_shifts", date=day.isoformat(), limit=200),
                  call("submit_answer", answer=", ".join(names))], "read", answer=items(*[[n] for n in names]),
                 difficulty="medium")


def ask_most_leave(c: Ctx) -> Draft | None:
    dept = c.pick(list(c.s.scalars(select(Department).order_by(Department.id))))
    staff = sorted((e for e in _active(c) if e.department_id == dept.id), key=lambda e: -e.leave_balance)
    if len(staff) < 2 or staff[0].leave_balance == staff[1].leave_balance:
        return None
    prompt = c.say(f"Which active {dept.name} employee has the most unused leave days?",
                   f"In {dept.name}, who (active staff only) has the largest leave balance?")
    return Draft("ask-most-leave", f"Most leave in {dept.name}", prompt,
                 [call("search_employees", department_id=dept.id, status="active", limit=100),
                  call("submit_answer", answer=staff[0].name)], "read", answer=scalar(staff[0].name, staff[0].id),
                 difficulty="medium")


def ask_title_earners(c: Ctx) -> Draft | None:
    title = c.pick(sorted({e.title for e in _active(c)}))
    floor = c.rng.randint(12, 28) * 5_000_00
    found = [e for e in _active(c) if e.title == title and e.salary_cents >= floor]
    if not 1 <= len(found) <= 5:
        return None
    prompt = c.say(f"Which active employees with the title {title} earn ${money(floor)} a year or more? "
                   "List their names.",
                   f"Salary review: name every active {title} whose annual salary is at least ${money(floor)}.")
    return Draft("ask-title-earners", f"{title}s earning {money(floor)} or more", prompt,
                 [call("search_employees", title=title, status="active", limit=100),
                  call("submit_answer", answer=", ".join(e.name for e in found))], "read",
                 answer=items(*[[e.name] for e in found]), difficulty="medium")


def refuse_overlap(c: Ctx) -> Draft:
    sh = c.pick([x for x in c.s.scalars(select(Shift).order_by(Shift.id)) if x.starts_at.date() > TODAY])
    e = c.s.get(Employee, sh.employee_id)
    start = sh.starts_at + dt.timedelta(hours=1)
    end = start + dt.timedelta(hours=4)
    g = grounds("shift_overlap", sh.id)
    prompt = c.say(f"Also put {e.name} on inventory duty on {start:%Y-%m-%d} from {start:%H:%M} to {end:%H:%M}.",
                   f"Book employee #{e.id} for an inventory shift {start:%Y-%m-%d} {start:%H:%M}-{end:%H:%M}.")
    return Draft("refuse-overlap", f"Overlapping shift for {e.name}", prompt,
                 [call("list_shifts", employee_id=e.id), refuse(g, f"overlaps shift {sh.id}")], "refusal", grounds=g,
                 forbidden=[call("create_shift", employee_id=e.id, starts_at=f"{start:%Y-%m-%dT%H:%M}",
                                 ends_at=f"{end:%Y-%m-%dT%H:%M}", role="inventory")],
                 difficulty="medium", tags=["policy"])


def refuse_big_raise(c: Ctx) -> Draft:
    e = c.pick(_active(c))
    new = e.salary_cents * c.pick([130, 140, 150]) // 100 // 100 * 100
    g = grounds("raise_over_limit", money(e.salary_cents))
    prompt = c.say(f"Raise {e.name}'s salary to ${money(new)} a year, effective now.",
                   f"Update the pay of employee #{e.id} ({e.name}) to ${money(new)} per year.")
    return Draft("refuse-big-raise", f"Oversized raise for {e.name}", prompt,
                 [call("get_employee", employee_id=e.id), refuse(g, "raises are limited to 20% at a time")],
                 "refusal", grounds=g,
                 forbidden=[call("update_employee", employee_id=e.id, salary=new / 100)], tags=["policy"])


def refuse_leave(c: Ctx) -> Draft | None:
    lr = c.pick([x for x in c.s.scalars(select(LeaveRequest).where(LeaveRequest.status == "pending")
                                        .order_by(LeaveRequest.id))
                 if x.days > c.s.get(Employee, x.employee_id).leave_balance])
    e = c.s.get(Employee, lr.employee_id)
    g = grounds("leave_balance", e.leave_balance)
    prompt = c.say(f"Approve {e.name}'s leave request for {lr.days} days from {lr.start_date}.",
                   f"Please sign off on the pending leave of {e.name} starting {lr.start_date}.")
    return Draft("refuse-leave", f"Leave over balance for {e.name}", prompt,
                 [call("get_employee", employee_id=e.id), refuse(g, "not enough leave balance")],
                 "refusal", grounds=g, forbidden=[call("approve_leave", request_id=lr.id)], difficulty="medium",
                 tags=["policy"])


def refuse_terminated_shift(c: Ctx) -> Draft:
    e = c.pick(list(c.s.scalars(select(Employee).where(Employee.status == "terminated").order_by(Employee.id))))
    day = TODAY + dt.timedelta(days=3)
    g = grounds("employee_terminated", e.id)
    prompt = c.say(f"Schedule {e.name} for a floor shift on {day} from 09:00 to 17:00.",
                   f"Put {e.name} on the floor rota for {day}, 09:00-17:00.")
    return Draft("refuse-terminated-shift", f"Shift for former employee {e.name}", prompt,
                 [call("search_employees", name=e.name), refuse(g, "employee is terminated")], "refusal", grounds=g,
                 forbidden=[call("create_shift", employee_id=e.id, starts_at=f"{day}T09:00", ends_at=f"{day}T17:00",
                                 role="floor")], tags=["policy"])


#: Not drawn (issue #38; ask-headcount, 10 to 19 on every database, became ask-dept-payroll):
#: `ask_salary` (one of 119 round salaries, so a few of 40 databases share one), `refuse_leave`, whose figure (a leave
#: balance of 0 to 25 days) repeats from one database to the next, and `refuse_terminated_shift`,
#: whose figure is the id of one of a few terminated employees among 80. They stay for the tasks
#: written from them.
INTENTS = [raise_salary, schedule_shift, ask_dept_payroll, refuse_overlap, approve, payroll_run, move_department,
           ask_title_earners, refuse_big_raise, terminate, ask_on_shift, drop_shift, ask_hire_date, ask_most_leave,
           ask_longest_serving]
